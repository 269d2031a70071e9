#!/bin/sh
# Multi-rail ofi across two "hosts": two network namespaces joined by TWO
# veth pairs on two subnets (scripts/netns-hosts.sh up --two-links), and
# TERN_OFI_RAILS naming both subnets (libfabric's tcp provider calls each
# subnet a fabric), so each rank opens one endpoint per link.
#
#  1. P2P_SIZES and COLL_CHECK run with 2 hosts x 2 ranks over ofi only
#     (TERN_TRANSPORTS=self,ofi), connections made at MPI_Init (all) and on
#     first use (lazy): the rails' addresses travel in one PMI value per rank.
#  2. Proof that large messages are striped: P2P_SIZES with 2 hosts x 1 rank
#     (one pair, so its small messages all take one rail) moves ~60 MB of
#     rendezvous data; the bytes each link carried (tx_bytes of both of its
#     veth ends) must each be at least 8 MB and a quarter of the total.
#  3. Control: the same run with striping off (TERN_OFI_STRIPE_MIN above every
#     message) must FAIL that check, so the check can tell the difference.
#
# Usage: netns_rails_test.sh MPIEXEC P2P_SIZES COLL_CHECK
# Needs root, `ip netns` and sshd; exits 77 (skipped) when this machine
# cannot create network namespaces or has no sshd, saying which.
set -u
mpiexec=$1
p2p_sizes=$2
coll_check=$3

skip() { echo "netns_rails_test: SKIPPED: $*"; exit 77; }
hosts_sh=$(dirname "$0")/../../scripts/netns-hosts.sh
dir=$(mktemp -d /tmp/tern-netns-rails-XXXXXX)
NETNS_DIR=
cleanup() {
    [ -n "$NETNS_DIR" ] && sh "$hosts_sh" down "$NETNS_DIR"
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
sh "$hosts_sh" up --two-links > "$dir/hosts" 2> "$dir/hosts.err"
rc=$?
[ $rc -eq 77 ] && skip "$(cat "$dir/hosts.err")"
[ $rc -eq 0 ] || { echo "netns_rails_test: setting up the two hosts failed:"; cat "$dir/hosts.err"; exit 1; }
. "$dir/hosts"
rails=$NETNS_NET1,$NETNS_NET2

failures=0
# run PPN NP ENV-WORDS... -- PROGRAM: one job over both rails.
run() {
    ppn=$1 np=$2
    shift 2
    envs=
    while [ "$1" != -- ]; do envs="$envs $1"; shift; done
    shift
    # shellcheck disable=SC2086 # envs are VAR=VAL words
    "$NETNS_ON_A" env TERN_TRANSPORTS=self,ofi TERN_OFI_RAILS="$rails" $envs \
        timeout 120 "$mpiexec" --launcher "$NETNS_SSH_CMD" --hosts "$NETNS_IPA,$NETNS_IPB" \
        -ppn "$ppn" -n "$np" "$@"
}
check() {
    what=$1
    shift
    if "$@" > "$dir/out" 2>&1; then
        echo "netns_rails_test: $what: ok"
    else
        echo "netns_rails_test: $what: FAILED (exit $?):"
        cat "$dir/out"
        failures=$((failures + 1))
    fi
}

# 1. Functional runs, 2 hosts x 2 ranks.
for mode in all lazy; do
    check "p2p_sizes, 2 hosts x 2 ranks, 2 rails, TERN_CONNECT=$mode" \
        run 2 4 TERN_CONNECT=$mode -- "$p2p_sizes"
    check "coll_check, 2 hosts x 2 ranks, 2 rails, TERN_CONNECT=$mode" \
        run 2 4 TERN_CONNECT=$mode -- "$coll_check"
done

# Bytes sent so far through each end of each link.
tx() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/tx_bytes"; }
link_bytes() {
    echo $(($(tx "$NETNS_A" "$1") + $(tx "$NETNS_B" "$2")))
}
# measure ENV-WORDS...: runs p2p_sizes 2 hosts x 1 rank, sets d1 and d2
# (bytes each link carried meanwhile) and striped (1 when both carried a
# substantial share).
measure() {
    b1=$(link_bytes "$NETNS_IFA" "$NETNS_IFB")
    b2=$(link_bytes "$NETNS_IFA2" "$NETNS_IFB2")
    run 1 2 "$@" -- "$p2p_sizes" > "$dir/out" 2>&1 || return 1
    d1=$(($(link_bytes "$NETNS_IFA" "$NETNS_IFB") - b1))
    d2=$(($(link_bytes "$NETNS_IFA2" "$NETNS_IFB2") - b2))
    total=$((d1 + d2))
    striped=0
    min=8388608
    [ $d1 -ge $min ] && [ $d2 -ge $min ] && [ $((4 * d1)) -ge $total ] && [ $((4 * d2)) -ge $total ] &&
        striped=1
    return 0
}

# 2. Both links carry the large messages.
if ! measure TERN_CONNECT=all; then
    echo "netns_rails_test: p2p_sizes, 2 hosts x 1 rank: FAILED:"
    cat "$dir/out"
    failures=$((failures + 1))
elif [ $striped = 1 ]; then
    echo "netns_rails_test: striped: link 1 carried $d1 bytes, link 2 $d2 bytes: ok"
else
    echo "netns_rails_test: NOT striped: link 1 carried $d1 bytes, link 2 $d2 bytes" \
        "(each must carry >= 8 MB and >= 1/4 of the total)"
    failures=$((failures + 1))
fi

# 3. Control: without striping the same check must see one idle link.
if ! measure TERN_CONNECT=all TERN_OFI_STRIPE_MIN=1g; then
    echo "netns_rails_test: control run (striping off): FAILED:"
    cat "$dir/out"
    failures=$((failures + 1))
elif [ $striped = 0 ]; then
    echo "netns_rails_test: control, striping off: link 1 $d1 bytes, link 2 $d2 bytes, check says not striped: ok"
else
    echo "netns_rails_test: control run with striping off still passed the striping check" \
        "(link 1 $d1 bytes, link 2 $d2 bytes): the check proves nothing"
    failures=$((failures + 1))
fi

[ $failures -eq 0 ] && echo "netns_rails_test: all passed"
exit $((failures > 0))
