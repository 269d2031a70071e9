#!/bin/sh
# ULFM under mpiexec --ft: ulfm_test.sh <case> <shm|ofi> <mpiexec> <ulfm_prog>
# Runs ulfm_prog <case> on 4 ranks and asserts: no survivor reported a
# broken promise (FAIL), every survivor reported, all report the same
# failed group and the same shrunk communicator (its world ranks in their
# old order), the job's exit status (non-zero when a rank died), mpiexec
# named the death and kept the others, no process and no /dev/shm file of
# the job left, no file of the file cases left, no error printed by a
# survivor. wait_kill: the script kills a rank while the others wait
# in a barrier and prints the time from the kill to the last survivor's
# error (TERN_ULFM_LIMIT_MS, default 5000). Exits 0 pass, 1 fail, 77 skip.
set -u
CASE=$1
TR=$2
MPIEXEC=$3
PROG_SRC=$4
NP=4
LIMIT=${TERN_ULFM_LIMIT_MS:-5000}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-ulfm-XXXXXX")
PROG=$WORK/ulfmprog_$$_$(date +%s%N | tail -c 7)
cp "$PROG_SRC" "$PROG"
OUT=$WORK/out
ERR=$WORK/err
: >"$OUT"
: >"$ERR"
BG=
cleanup() {
    [ -n "$BG" ] && kill -KILL "$BG" 2>/dev/null
    pkill -KILL -f "$PROG" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
    echo "FAIL [$CASE $TR]: $*"
    echo "--- stdout:"; head -40 "$OUT"
    echo "--- stderr:"; head -40 "$ERR"
    exit 1
}
now_ms() { date +%s%3N; }

if [ "$TR" = ofi ]; then
    export TERN_TRANSPORTS=ofi
    # The provider must run here: a plain job first.
    if ! MPIEXEC_TIMEOUT=30 "$MPIEXEC" -n 2 "$PROG" none >/dev/null 2>"$WORK/probe"; then
        grep -qi "no ofi\|provider\|fi_getinfo" "$WORK/probe" && { echo "skip: ofi unavailable"; exit 77; }
    fi
fi

# Expected outcome per case: failed world ranks, exit status.
case $CASE in
coll_before | coll_during | coll_after | shrink | wait_kill | win | file | file_read | inter) FAILED=3 RC_WANT=137 ;;
agree | iagree) FAILED=0 RC_WANT=137 ;;
two_killed) FAILED=1,2 RC_WANT=137 ;;
coll_first) FAILED=1 RC_WANT=137 ;;
anysource) FAILED=1 RC_WANT=137 ;;
revoke | win_revoke | file_revoke) FAILED= RC_WANT=0 ;;
abort_sub) FAILED=0,1 RC_WANT=3 ;;
*) fail "unknown case" ;;
esac
MEMBERS=$(seq 0 $((NP - 1)) | grep -vxE "$(echo "${FAILED:-none}" | tr ',' '|')" | paste -sd,)
N_SURV=$(echo "$MEMBERS" | tr ',' '\n' | grep -c .)

MPIEXEC_TIMEOUT=60 "$MPIEXEC" --ft -n $NP "$PROG" "$CASE" "$WORK" >"$OUT" 2>"$ERR" </dev/null &
BG=$!
job=$BG
if [ "$CASE" = wait_kill ]; then
    i=0
    while [ "$(grep -c '^ready ' "$OUT")" -lt $NP ]; do
        i=$((i + 1))
        [ $i -gt 1500 ] && fail "waited 15 s for the ranks"
        sleep 0.01
    done
    sleep 0.3 # every survivor is inside the barrier
    pid=$(sed -n 's/^pid 3 //p' "$OUT")
    [ -n "$pid" ] || fail "no pid for rank 3"
    T0=$(now_ms)
    kill -KILL "$pid" || fail "rank 3 was gone before the kill"
fi
wait "$BG"
RC=$?
BG=
grep -q '^FAIL' "$OUT" && fail "a survivor reported a broken promise"
[ "$RC" -eq 124 ] && fail "the job hung (MPIEXEC_TIMEOUT)"
[ "$RC" -eq "$RC_WANT" ] || fail "exit status $RC, expected $RC_WANT"
[ "$(grep -c '^survivor ' "$OUT")" -eq "$N_SURV" ] || fail "expected $N_SURV survivor lines"
want="failed=[$FAILED] members=$MEMBERS"
n=$(grep '^survivor ' "$OUT" | grep -c -F " $want ")
[ "$n" -eq "$N_SURV" ] || fail "not every survivor reports '$want'"
# Everything after the rank is the same on every survivor (sum, flag).
[ "$(grep '^survivor ' "$OUT" | cut -d' ' -f3- | sort -u | wc -l)" -eq 1 ] ||
    fail "the survivors disagree"
if [ -n "$FAILED" ]; then
    grep -q "the others go on (--ft)" "$ERR" || fail "mpiexec did not report the death"
fi
# Under MPI_ERRORS_RETURN a survivor prints nothing of its own: the errors
# are the program's to report.
grep -q "^tern\[rank [0-9]*\] error:" "$ERR" && fail "a survivor printed an error"

if [ "$CASE" = wait_kill ]; then
    last=$(sed -n 's/^errortime [0-9]* //p' "$OUT" | sort -n | tail -1)
    [ -n "$last" ] || fail "no error times"
    ms=$((last - T0))
    echo "ulfm_test wait_kill ($TR): every survivor's error within $ms ms of the kill"
    [ "$ms" -le "$LIMIT" ] || fail "$ms ms from the kill to the last survivor's error, limit $LIMIT"
fi
i=0
while pgrep -f "$PROG" >/dev/null; do
    i=$((i + 1))
    [ $i -gt 100 ] && fail "processes left: $(pgrep -af "$PROG" | tr '\n' ';')"
    sleep 0.01
done
left=$(ls /dev/shm 2>/dev/null | grep "^tern-tern-$job-")
[ -z "$left" ] || fail "left in /dev/shm: $left"
left=$(ls "$WORK" | grep "^ulfm-file")
[ -z "$left" ] || fail "files left: $left"
echo "ulfm_test $CASE ($TR): pass"
exit 0
