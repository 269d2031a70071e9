#!/bin/sh
# Two "hosts" on one machine: two network namespaces joined by a veth pair,
# each with its own sshd. mpiexec runs in the first and starts one proxy per
# host over ssh (--hosts A,B); the ranks use shm inside a host and the ofi
# transport (libfabric tcp) across the veth link. Runs each MPI program given
# with 2 hosts x 2 ranks, then checks that a rank failing on the second host
# ends the job with its exit code and mpiexec's message, and that losing the
# second host (its proxy killed) ends the job naming that host.
#
# Usage: netns_test.sh MPIEXEC PROGRAM...
# NETNS_EXTRA_ENV adds VAR=VAL words to the ranks' environment (e.g.
# TERN_LOG_LEVEL=2); NETNS_VERBOSE=1 shows the output of passing programs.
# Needs root, `ip netns` and sshd; exits 77 (skipped) when this machine
# cannot create network namespaces or has no sshd, saying which.
set -u
mpiexec=$1
shift

skip() { echo "netns_test: SKIPPED: $*"; exit 77; }
# The two hosts come from the script the compare tool shares.
hosts_sh=$(dirname "$0")/../../scripts/netns-hosts.sh
dir=$(mktemp -d /tmp/tern-netns-test-XXXXXX)
NETNS_DIR=
cleanup() {
    [ -n "$NETNS_DIR" ] && sh "$hosts_sh" down "$NETNS_DIR"
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
sh "$hosts_sh" up > "$dir/hosts" 2> "$dir/hosts.err"
rc=$?
[ $rc -eq 77 ] && skip "$(cat "$dir/hosts.err")"
[ $rc -eq 0 ] || { echo "netns_test: setting up the two hosts failed:"; cat "$dir/hosts.err"; exit 1; }
. "$dir/hosts"
ipa=$NETNS_IPA
ipb=$NETNS_IPB
launcher=$NETNS_SSH_CMD

failures=0
run() {
    "$NETNS_ON_A" env ${NETNS_EXTRA_ENV:-} timeout 120 "$mpiexec" --launcher "$launcher" \
        --hosts "$ipa,$ipb" -ppn 2 -n 4 "$@"
}
for prog in "$@"; do
    if run "$prog" > "$dir/out" 2>&1; then
        echo "netns_test: $(basename "$prog"): 2 hosts x 2 ranks ok"
        [ -n "${NETNS_VERBOSE:-}" ] && cat "$dir/out"
    else
        echo "netns_test: $(basename "$prog"): FAILED (exit $?):"
        cat "$dir/out"
        failures=$((failures + 1))
    fi
done

# Ranks really ran in both namespaces (host blocks: 0-1 on A, 2-3 on B).
run sh -c 'echo "rank $PMI_RANK $(ip -o -4 addr show scope global | awk "{print \$4}")"' \
    > "$dir/where" 2>&1
for r in 0 1; do grep -q "rank $r $ipa/24" "$dir/where" || { echo "netns_test: rank $r not on host A:"; cat "$dir/where"; failures=$((failures + 1)); }; done
for r in 2 3; do grep -q "rank $r $ipb/24" "$dir/where" || { echo "netns_test: rank $r not on host B:"; cat "$dir/where"; failures=$((failures + 1)); }; done

# A rank failing on host B ends the job with its code and a message.
run sh -c '[ "$PMI_RANK" = 3 ] && exit 9; sleep 30' > "$dir/fail" 2>&1
rc=$?
if [ $rc -ne 9 ] || ! grep -q "rank 3 .*exited with code 9" "$dir/fail"; then
    echo "netns_test: a failing rank on host B gave exit $rc (expected 9):"
    cat "$dir/fail"
    failures=$((failures + 1))
fi
# Host B lost (its proxy killed): the job ends, naming the host.
run sh -c '[ "$PMI_RANK" = 2 ] && kill -9 $PPID; sleep 30' > "$dir/lost" 2>&1
rc=$?
if [ $rc -eq 0 ] || ! grep -q "lost host $ipb (ranks 2-3)" "$dir/lost"; then
    echo "netns_test: losing host B gave exit $rc and no 'lost host' message:"
    cat "$dir/lost"
    failures=$((failures + 1))
fi
[ $failures -eq 0 ] && echo "netns_test: all passed"
exit $((failures > 0))
