#!/bin/sh
# A window's target killed while an origin's RDMA write to it is in flight
# (rma_dead_target.c, over the network transport: the caller sets
# TERN_TRANSPORTS and friends). Asserts:
#  - the job ends (within 60 s; it takes about 2 here) with rank 1's status
#    (137: killed by signal 9) and mpiexec's message naming rank 1 (with
#    "fatal", rank 0's MPI_Abort may come first: then its status);
#  - rank 0's flush / unlock / fence returned within mpiexec's grace (TERN_MPIEXEC_KILL_GRACE_MS)
#    (rank 0 ignores SIGTERM; a call still waiting is SIGKILLed then and
#    prints nothing): "rma_dead_target: ok", the error naming rank 1, rank 0
#    finalized; with "fatal", its error handler's message naming the call
#    and rank 1;
#  - no process of the job is left.
# Usage: rma_dead_target_test.sh <mpiexec> <rma_dead_target> <mode> [allocate|fatal]
set -u
MPIEXEC=$1 PROG_SRC=$2
shift 2
MODE=$1
# The default (fatal) error handler, or MPI_ERRORS_RETURN.
case "$*" in *fatal*) FATAL=1 ;; *) FATAL=0 ;; esac
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-rma-dead-XXXXXX")
# A unique program name, so pgrep finds this test's processes only.
PROG=$WORK/rmadead_$$
cp "$PROG_SRC" "$PROG"
trap 'pkill -KILL -f "$PROG" 2>/dev/null; rm -rf "$WORK"' EXIT
fail() { echo "FAIL [$*]"; echo "--- output:"; cat "$WORK/out"; exit 1; }

start=$(date +%s)
timeout -k 5 60 "$MPIEXEC" -n 2 "$PROG" "$@" >"$WORK/out" 2>&1 </dev/null
rc=$?
elapsed=$(( $(date +%s) - start ))
cat "$WORK/out"
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || [ "$elapsed" -lt 60 ] || fail "the job was still running after 60 s"
grep -Eq "(put|get) .* to rank 1: rc 0" "$WORK/out" || fail "rank 0's put or get was not issued"
# Under the default handler rank 0's fatal error may reach mpiexec before
# rank 1's death does (the provider reports the reset connection at once):
# then the job's status is rank 0's abort code and mpiexec names rank 0's
# MPI_Abort, whose message names rank 1 (checked below). Otherwise the
# status is rank 1's SIGKILL and mpiexec names rank 1.
if [ "$FATAL" -eq 1 ] && grep -Eq "mpiexec: rank 0 called MPI_Abort" "$WORK/out"; then
    [ "$rc" -ne 0 ] || fail "exit status 0 after rank 0's MPI_Abort"
else
    [ "$rc" -eq 137 ] || fail "exit status $rc, expected 137 (rank 1's SIGKILL)"
    grep -Eq "mpiexec: rank 1 \(pid [0-9]+\) killed by signal 9" "$WORK/out" ||
        fail "mpiexec did not name rank 1"
fi
grep -q "rma_dead_target: FAIL" "$WORK/out" && fail "rank 0 saw no error naming rank 1"
grep -q "ERRFATAL-NOT-FATAL" "$WORK/out" && fail "the error was not fatal"
if [ "$FATAL" -eq 1 ]; then
    grep -Eiq "MPI_Win_(flush|unlock|fence): .*rank 1" "$WORK/out" ||
        fail "no fatal error naming the call and rank 1 (the call hung until mpiexec killed rank 0?)"
else
    grep -q "rma_dead_target: ok" "$WORK/out" ||
        fail "rank 0 did not finish: its $MODE hung until mpiexec killed it"
fi
i=0
while pgrep -f "$PROG" >/dev/null; do
    i=$((i + 1))
    [ $i -gt 100 ] && fail "processes left: $(pgrep -af "$PROG" | tr '\n' ';')"
    sleep 0.01
done
echo "rma_dead_target_test: ok ($MODE $*: exit status $rc, ${elapsed} s)"
