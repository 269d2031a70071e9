#!/bin/sh
# Usage: bench_corrupt.sh <mpiexec> <tern-bench-program>...
# With --corrupt every benchmark sends one wrong byte per message: each must
# exit non-zero and say that validation failed (so a broken MPI cannot post a
# good number).
set -u
mpiexec=$1
shift
err=$(mktemp)
trap 'rm -f "$err"' EXIT
status=0
for prog in "$@"; do
    name=${prog##*/tern-bench-}
    case $name in mbw_mr | multi_lat) np=4 ;; *) np=2 ;; esac
    "$mpiexec" -n $np "$prog" -m 4:64 -i 2 -x 0 -W 2 --corrupt >/dev/null 2>"$err"
    rc=$?
    if [ $rc -eq 0 ]; then
        echo "FAIL: $name --corrupt exited 0"
        status=1
    elif ! grep -q "tern-bench $name: rank [0-9]*: validation failed" "$err"; then
        echo "FAIL: $name --corrupt exited $rc without the validation message:"
        cat "$err"
        status=1
    else
        echo "ok: $name --corrupt exited $rc: $(grep -m1 'validation failed' "$err")"
    fi
done
exit $status
