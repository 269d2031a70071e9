#!/bin/sh
# MPI_Comm_spawn over two "hosts" (two network namespaces, an sshd in each,
# from scripts/netns-hosts.sh): a 2-rank job, one rank per host, runs
# spawn_hosts' parent tests (children placed per host, spawn_multiple, a
# program missing on the remote host), a 1-rank job spawns onto the host
# that runs none of its ranks, then, when PYTHON is given (a venv
# whose mpi4py is built against Tern), mpi4py's MPIPoolExecutor over both
# hosts. After each run nothing but the sshds may be left in the namespaces.
#
# Usage: netns_spawn_test.sh MPIEXEC SPAWN_HOSTS [PYTHON]
# Exits 77 (skipped) where the namespaces cannot be made, as netns_test.sh.
set -u
mpiexec=$1
spawn_hosts=$2
python=${3:-}

skip() { echo "netns_spawn_test: SKIPPED: $*"; exit 77; }
hosts_sh=$(dirname "$0")/../../scripts/netns-hosts.sh
dir=$(mktemp -d /tmp/tern-netns-spawn-XXXXXX)
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
[ $rc -eq 0 ] || { echo "netns_spawn_test: setting up the two hosts failed:"; cat "$dir/hosts.err"; exit 1; }
. "$dir/hosts"
ipa=$NETNS_IPA
ipb=$NETNS_IPB

failures=0
fail() { echo "netns_spawn_test: FAILED: $*"; failures=$((failures + 1)); }
run() {
    "$NETNS_ON_A" env ${NETNS_EXTRA_ENV:-} timeout 120 "$mpiexec" --launcher "$NETNS_SSH_CMD" \
        --hosts "$ipa,$ipb" -n 2 "$@"
}
# Processes left in a namespace other than its sshd (by pid: the two share
# one pid namespace, so /proc shows both).
leftovers() {
    for ns in "$NETNS_A" "$NETNS_B"; do
        for pid in $(ip netns pids "$ns" 2>/dev/null); do
            case " $(cat "$NETNS_DIR"/sshd-*.pid 2>/dev/null | tr '\n' ' ') " in *" $pid "*) continue ;; esac
            cmd=$(tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null)
            case $cmd in *sshd*) continue ;; esac
            [ -n "$cmd" ] && echo "$ns: $pid $cmd"
        done
    done
}
settled() {
    for i in 1 2 3 4 5 6 7 8 9 10; do
        [ -z "$(leftovers)" ] && return 0
        sleep 0.5
    done
    return 1
}

run "$spawn_hosts" parent "$ipa" "$ipb" > "$dir/out" 2>&1
rc=$?
[ $rc -eq 0 ] || { fail "spawn_hosts exited $rc"; cat "$dir/out"; }
for t in spawn_spread spawn_host spawn_multiple_hosts spawn_hostfile spawn_remote_missing; do
    grep -q "test $t ok" "$dir/out" || { fail "spawn_hosts (exit $rc): $t"; cat "$dir/out"; break; }
done
grep -q "test spawn_remote_missing ok" "$dir/out" && [ $rc -eq 0 ] &&
    echo "netns_spawn_test: spawn over two hosts ok"
settled || fail "left running after the spawn tests: $(leftovers)"

# Host B without ranks of the first job: its proxy starts for the spawn.
"$NETNS_ON_A" env ${NETNS_EXTRA_ENV:-} timeout 120 "$mpiexec" --launcher "$NETNS_SSH_CMD" \
    --hosts "$ipa,$ipb" -n 1 "$spawn_hosts" lazy "$ipa" "$ipb" > "$dir/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "test spawn_spread_without_ranks ok" "$dir/out"; then
    echo "netns_spawn_test: spawn onto a host without ranks ok"
else
    fail "spawn onto a host without ranks (exit $rc):"
    cat "$dir/out"
fi
settled || fail "left running after the spawn onto a host without ranks: $(leftovers)"

if [ -n "$python" ]; then
    # The workers load the libtern next to this mpiexec (ssh does not carry
    # the environment: -x passes it).
    lib=$(cd "$(dirname "$mpiexec")/../../src" 2>/dev/null && pwd)
    LD_LIBRARY_PATH=${lib:-}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
        run -x LD_LIBRARY_PATH "$python" "$(dirname "$0")/pool_hosts.py" > "$dir/pool" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q "pool_hosts ok" "$dir/pool"; then
        echo "netns_spawn_test: MPIPoolExecutor over two hosts ok"
    else
        fail "MPIPoolExecutor over two hosts (exit $rc):"
        cat "$dir/pool"
    fi
    settled || fail "left running after the pool: $(leftovers)"
fi
[ $failures -eq 0 ] && echo "netns_spawn_test: all passed"
exit $((failures > 0))
