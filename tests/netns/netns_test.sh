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
[ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces"
command -v ip >/dev/null || skip "no ip(8) (iproute2)"
sshd=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$sshd" ] || skip "no sshd (Debian: openssh-server)"
command -v ssh >/dev/null || skip "no ssh client"

id=$$
nsa=tern-$id-a
nsb=tern-$id-b
net=$((id % 200 + 20))
ipa=10.$net.77.1
ipb=10.$net.77.2
dir=$(mktemp -d /tmp/tern-netns-XXXXXX)

cleanup() {
    for ns in a b; do
        [ -f "$dir/sshd-$ns.pid" ] && kill "$(cat "$dir/sshd-$ns.pid")" 2>/dev/null
    done
    ip netns del "$nsa" 2>/dev/null
    ip netns del "$nsb" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM

ip netns add "$nsa" 2>/dev/null || skip "cannot create a network namespace (no CAP_SYS_ADMIN/NET_ADMIN here)"
ip netns add "$nsb" || exit 1
ip link add "tn$id-a" type veth peer name "tn$id-b" || skip "cannot create veth pairs"
ip link set "tn$id-a" netns "$nsa" && ip link set "tn$id-b" netns "$nsb" || exit 1
ip -n "$nsa" addr add "$ipa/24" dev "tn$id-a" && ip -n "$nsb" addr add "$ipb/24" dev "tn$id-b" || exit 1
for ns in "$nsa" "$nsb"; do
    ip -n "$ns" link set lo up
done
ip -n "$nsa" link set "tn$id-a" up && ip -n "$nsb" link set "tn$id-b" up || exit 1

# Keys and an sshd per namespace, all inside $dir.
ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key" || exit 1
ssh-keygen -q -t ed25519 -N '' -f "$dir/id" || exit 1
cp "$dir/id.pub" "$dir/authorized_keys"
chmod 600 "$dir/authorized_keys"
mkdir -p /run/sshd
for ns in a b; do
    ip=$ipa
    [ $ns = b ] && ip=$ipb
    cat > "$dir/sshd-$ns.conf" <<CONF
ListenAddress $ip
Port 22
HostKey $dir/host_key
PidFile $dir/sshd-$ns.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AcceptEnv *
CONF
    ip netns exec "tern-$id-$ns" "$sshd" -f "$dir/sshd-$ns.conf" || skip "sshd does not start here"
done
launcher="ssh -x -F none -i $dir/id -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout=5"
for i in 1 2 3 4 5 6 7 8 9 10; do
    ip netns exec "$nsa" $launcher "$ipb" true 2>/dev/null && break
    sleep 0.3
done

failures=0
run() {
    ip netns exec "$nsa" env FI_PROVIDER=tcp ${NETNS_EXTRA_ENV:-} timeout 120 "$mpiexec" --launcher "$launcher" \
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
