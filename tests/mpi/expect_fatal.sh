#!/bin/sh
# Usage: expect_fatal.sh <mpiexec> <np> <regex> <program> [args...]
# Passes when the job exits non-zero within 45 s, its output does not contain
# ERRFATAL-NOT-FATAL, and the output matches <regex> (grep -E).
mpiexec=$1 np=$2 regex=$3
shift 3
out=$(timeout 45 "$mpiexec" -n "$np" "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -eq 0 ]; then
    echo "expect_fatal: FAIL: the job exited 0; expected a non-zero exit"
    exit 1
fi
if [ "$rc" -eq 124 ]; then
    echo "expect_fatal: FAIL: the job was still running after 45 s (not torn down)"
    exit 1
fi
if printf '%s\n' "$out" | grep -q ERRFATAL-NOT-FATAL; then
    echo "expect_fatal: FAIL: the error was not fatal"
    exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then
    echo "expect_fatal: FAIL: the output does not match '$regex'"
    exit 1
fi
echo "expect_fatal: ok (exit status $rc)"
exit 0
