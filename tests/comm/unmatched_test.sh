#!/bin/sh
# Usage: unmatched_test.sh <mpiexec> <unmatched program> <case>
# Runs tests/comm/unmatched.c at 2 ranks and checks the report of messages
# nobody received on its stderr (the program checks its return codes):
#   warn     default knob, lost messages: warnings at MPI_Comm_free (the
#            named duplicate: tags 7 and 8, 40 and 3 bytes) and MPI_Finalize
#            (MPI_COMM_WORLD: tag 9), none for the message received
#   error    TERN_UNMATCHED=error: the same lines as errors
#   off      TERN_UNMATCHED=off: nothing printed
#   clean    every message received: nothing printed
#   session  a session's communicator: reported at MPI_Session_finalize
mpiexec=$1 prog=$2 case=$3
fail() {
    echo "unmatched_test $case: FAIL: $*"
    exit 1
}
run() {
    out=$(timeout 60 "$mpiexec" -n 2 "$@" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    [ "$rc" -eq 0 ] || fail "the job exited $rc"
    printf '%s\n' "$out" | grep -q "unmatched: ok" || fail "the program's checks failed"
}
has() {
    printf '%s\n' "$out" | grep -Fq -- "$1" || fail "no line with: $1"
}
hasnt() {
    if printf '%s\n' "$out" | grep -Fq -- "$1"; then fail "a line with: $1"; fi
}
lost_lines() {
    kind=$1
    has "tern[rank 1] $kind: MPI_Comm_free: 2 messages that arrived on lost.comm (0x"
    has "unmatched message on lost.comm: source rank 0, tag 7, 40 bytes"
    has "unmatched message on lost.comm: source rank 0, tag 8, 3 bytes"
    has "tern[rank 1] $kind: MPI_Finalize: 1 message that arrived on MPI_COMM_WORLD (0x"
    has "unmatched message on MPI_COMM_WORLD: source rank 0, tag 9, 8 bytes"
    hasnt "tag 5,"
    hasnt "rank 0] $kind: MPI_"
}
case $case in
    warn) run "$prog" lost; lost_lines warning; hasnt "error: MPI_" ;;
    error) TERN_UNMATCHED=error run "$prog" lost; lost_lines error; hasnt "warning: MPI_" ;;
    off) TERN_UNMATCHED=off run "$prog" lost; hasnt "never received"; hasnt "unmatched message" ;;
    clean) run "$prog" clean; hasnt "never received"; hasnt "unmatched message" ;;
    session)
        run "$prog" session
        has "tern[rank 1] warning: MPI_Session_finalize: 1 message that arrived on communicator 0x"
        has "unmatched message on the communicator: source rank 0, tag 11, 4 bytes"
        ;;
    *) fail "unknown case" ;;
esac
echo "unmatched_test $case: ok"
