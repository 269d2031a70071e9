#!/bin/sh
# Usage: ofi_preload.sh <mpiexec> <libfabric_load program>
# TERN_OFI_PRELOAD is honoured: a job on the ofi transport (TERN_TRANSPORTS=
# self,ofi, 2 ranks) loads libfabric from the preload thread with 1 (the
# default: each rank's info line says so) and in the ofi transport with 0 (no
# such line); either way the job runs and libfabric is mapped. A library that
# cannot be loaded still fails MPI_Init with the report naming it (the
# first rank to fail ends the job, so at least one such line), preloaded or
# not.
mpiexec=$1 prog=$2
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
line='ofi: libfabric loaded by the preload thread'

# run <expected count of the line> <VAR=value>...
run() {
    want=$1
    shift
    env TERN_TRANSPORTS=self,ofi FI_PROVIDER=tcp TERN_LOG_LEVEL=2 TERN_TEST_EXPECT_LIBFABRIC=1 \
        "$@" timeout 60 "$mpiexec" -n 2 "$prog" >"$out" 2>&1
    rc=$?
    got=$(grep -c "$line" "$out")
    if [ "$rc" -ne 0 ]; then
        echo "FAIL: $*: exit status $rc"; fail=1; sed 's/^/    /' "$out"
    elif [ "$got" -ne "$want" ]; then
        echo "FAIL: $*: $got lines '$line', expected $want"; fail=1; sed 's/^/    /' "$out"
    else
        echo "ok: $*: $got lines '$line'"
    fi
}

run 2 TERN_OFI_PRELOAD=1
run 2
run 0 TERN_OFI_PRELOAD=0

for v in 0 1; do
    env TERN_TRANSPORTS=self,ofi TERN_OFI_LIBRARY=/nonexistent/libfabric.so.1 TERN_OFI_PRELOAD=$v \
        timeout 60 "$mpiexec" -n 2 "$prog" >"$out" 2>&1
    rc=$?
    got=$(grep -c "ofi: cannot load libfabric (TERN_OFI_LIBRARY=/nonexistent/libfabric.so.1)" "$out")
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || [ "$got" -lt 1 ]; then
        echo "FAIL: TERN_OFI_PRELOAD=$v, no library: exit status $rc, $got reports, expected a failed start and one"
        fail=1; sed 's/^/    /' "$out"
    else
        echo "ok: TERN_OFI_PRELOAD=$v, no library: exit status $rc, $got reports"
    fi
done
exit $fail
