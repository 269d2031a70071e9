#!/bin/sh
# mpiexec's multi-host mode without a network: a stand-in remote-start
# command runs each "host"'s proxy here (exporting FAKE_HOST=<host>), so
# placement, hostfiles, stdio, exit codes and lost hosts are checked on any
# machine. tests/netns does the same over real ssh between namespaces.
#
# Usage: multihost_local_test.sh MPIEXEC SPAWN_HOSTS [MPI_PROGRAM CONNECT]
# (SPAWN_HOSTS: tests/netns/spawn_hosts; MPI_PROGRAM and CONNECT (tests/spawn's
# connect) are given with libfabric, which ranks on two "hosts" need; then
# spawn and the name service over them are run too.)
set -u
mpiexec=$1
spawn_hosts=$2
prog=${3:-}
connect=${4:-}
dir=$(mktemp -d /tmp/tern-multihost-XXXXXX)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/launch" <<'SH'
#!/bin/sh
# <launch> HOST COMMAND: "dead" hosts fail as ssh does when it cannot connect.
host=$1
shift
case $host in dead*) echo "ssh: connect to host $host: No route to host" >&2; exit 255;; esac
FAKE_HOST=$host exec sh -c "$*"
SH
chmod +x "$dir/launch"
failures=0
fail() { echo "multihost_local_test: FAILED: $*"; failures=$((failures + 1)); }
where='echo "rank $PMI_RANK of $PMI_SIZE on $FAKE_HOST"'

# Hostfile with slots and a comment: blocks of 3 and 1.
printf 'hA:3   # three slots\n\nhB:1\n' > "$dir/hosts"
"$mpiexec" --launcher "$dir/launch" --hostfile "$dir/hosts" -n 4 sh -c "$where" > "$dir/out" 2>&1 ||
    fail "hostfile job exited $?: $(cat "$dir/out")"
for r in 0 1 2; do grep -q "rank $r of 4 on hA" "$dir/out" || fail "rank $r not on hA: $(cat "$dir/out")"; done
grep -q "rank 3 of 4 on hB" "$dir/out" || fail "rank 3 not on hB: $(cat "$dir/out")"

# -ppn over a host list, output tagged with world ranks.
"$mpiexec" --launcher "$dir/launch" --hosts hA,hB,hC -ppn 2 -n 6 --tag-output sh -c "$where" \
    > "$dir/out" 2>&1 || fail "-ppn job exited $?"
for r in 0 1; do grep -q "^\[$r\] rank $r of 6 on hA" "$dir/out" || fail "-ppn: rank $r: $(cat "$dir/out")"; done
for r in 4 5; do grep -q "^\[$r\] rank $r of 6 on hC" "$dir/out" || fail "-ppn: rank $r: $(cat "$dir/out")"; done

# Too many ranks for -ppn: refused before anything starts.
"$mpiexec" --launcher "$dir/launch" --hosts hA,hB -ppn 1 -n 3 true > "$dir/out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "does not fit" "$dir/out" || fail "-n 3 on 2 hosts x -ppn 1 gave exit $rc: $(cat "$dir/out")"

# stdin reaches rank 0 through its host's proxy.
out=$(echo "from stdin" | "$mpiexec" --launcher "$dir/launch" --hosts hA,hB -n 2 \
    sh -c '[ "$PMI_RANK" = 0 ] && cat; true')
[ "$out" = "from stdin" ] || fail "stdin to rank 0 gave '$out'"

# A rank's exit code on the second host is the job's, with mpiexec's message.
"$mpiexec" --launcher "$dir/launch" --hosts hA,hB -n 4 \
    sh -c '[ "$PMI_RANK" = 3 ] && exit 7; sleep 20' > "$dir/out" 2>&1
rc=$?
[ $rc -eq 7 ] && grep -q "rank 3 .*exited with code 7" "$dir/out" || fail "failing rank gave exit $rc: $(cat "$dir/out")"

# A host that cannot be reached ends the job, naming it.
start=$(date +%s)
"$mpiexec" --launcher "$dir/launch" --hosts hA,dead1 -n 4 sleep 20 > "$dir/out" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "lost host dead1 (ranks 2-3)" "$dir/out" || fail "unreachable host gave exit $rc: $(cat "$dir/out")"
[ $(($(date +%s) - start)) -lt 15 ] || fail "the job with an unreachable host took too long to end"

# An MPI program whose ranks sit on two "hosts" (shm inside, ofi across).
if [ -n "$prog" ]; then
    FI_PROVIDER=tcp "$mpiexec" --launcher "$dir/launch" --hosts hA,hB -n 4 "$prog" > "$dir/out" 2>&1 ||
        fail "$(basename "$prog") over two hosts exited $?: $(cat "$dir/out")"
fi
# MPI_UNIVERSE_SIZE: the hostfile's slots (3 + 2), or -n without slots.
printf 'hA:3\nhB:2\n' > "$dir/slots"
"$mpiexec" --launcher "$dir/launch" --hostfile "$dir/slots" -n 2 "$spawn_hosts" universe 5 \
    > "$dir/out" 2>&1 && grep -q "test universe_size ok" "$dir/out" ||
    fail "universe size from hostfile slots: $(cat "$dir/out")"
"$mpiexec" --launcher "$dir/launch" --hosts hA,hB -n 3 "$spawn_hosts" universe 3 \
    > "$dir/out" 2>&1 && grep -q "test universe_size ok" "$dir/out" ||
    fail "universe size without slots: $(cat "$dir/out")"

# Spawn over the two "hosts" (FAKE_HOST tells the children's host).
if [ -n "$prog" ]; then
    FI_PROVIDER=tcp "$mpiexec" --launcher "$dir/launch" --hosts hA,hB -n 2 \
        "$spawn_hosts" parent hA hB > "$dir/out" 2>&1
    rc=$?
    [ $rc -eq 0 ] || fail "spawn over two hosts exited $rc: $(cat "$dir/out")"
    for t in spawn_spread spawn_host spawn_multiple_hosts spawn_hostfile spawn_remote_missing; do
        grep -q "test $t ok" "$dir/out" || { fail "spawn over two hosts (exit $rc): $(cat "$dir/out")"; break; }
    done
fi
# A host without ranks gets its proxy at the first spawn placed there; one
# that cannot be reached fails that spawn only.
if [ -n "$prog" ]; then
    FI_PROVIDER=tcp "$mpiexec" --launcher "$dir/launch" --hosts hA,hB -n 1 \
        "$spawn_hosts" lazy hA hB > "$dir/out" 2>&1
    rc=$?
    [ $rc -eq 0 ] && grep -q "test spawn_spread_without_ranks ok" "$dir/out" ||
        fail "spawn onto a host without ranks (exit $rc): $(cat "$dir/out")"
fi
"$mpiexec" --launcher "$dir/launch" --hosts hA,dead1 -n 1 "$spawn_hosts" unreachable hA dead1 \
    > "$dir/out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "test spawn_unreachable_host ok" "$dir/out" ||
    fail "spawn onto an unreachable host (exit $rc): $(cat "$dir/out")"
# One name service for the run: published on hA, looked up on hB.
if [ -n "$connect" ]; then
    FI_PROVIDER=tcp "$mpiexec" --launcher "$dir/launch" --hosts hA,hB -n 4 "$connect" publish \
        > "$dir/out" 2>&1
    rc=$?
    [ $rc -eq 0 ] && grep -q "test publish ok" "$dir/out" ||
        fail "publish/lookup across hosts (exit $rc): $(cat "$dir/out")"
fi
[ $failures -eq 0 ] && echo "multihost_local_test: all passed"
exit $((failures > 0))
