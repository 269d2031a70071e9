#!/bin/sh
# Usage: bench_rma_modes.sh <mpiexec> <tern-bench-NAME> <NAME>
# Runs one one-sided benchmark at tiny sizes under every synchronisation it
# takes (-s) and every window flavour (-w): each run must exit 0 with its
# data validated; a synchronisation it does not take must be refused (exit 1).
set -u
mpiexec=$1 prog=$2 name=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
for s in lock flush lock_all fence pscw; do
    for w in create allocate dynamic; do
        "$mpiexec" -n 2 "$prog" -m 1:2K -i 3 -x 1 -W 3 -s $s -w $w >"$out" 2>&1
        rc=$?
        if [ "$name" = put_bibw ] && [ $s != fence ] && [ $s != pscw ]; then
            if [ $rc -ne 1 ] || ! grep -q "unsupported synchronisation '$s'" "$out"; then
                echo "FAIL: $name -s $s -w $w: exit $rc, expected the refusal"; cat "$out"; status=1
            fi
            continue
        fi
        if [ $rc -ne 0 ] || ! grep -q '^# validation: .* all correct$' "$out" ||
            ! grep -q "^# Synchronization: $s, window: MPI_Win_" "$out"; then
            echo "FAIL: $name -s $s -w $w: exit $rc"; cat "$out"; status=1
        else
            echo "ok: $name -s $s -w $w: $(grep '^# validation' "$out")"
        fi
    done
done
exit $status
