#!/bin/sh
# mpicc_abi, mpicc -mpi-abi, mpicxx_abi: a program built for the MPI-5.0
# ABI (its <mpi.h> is mpi_abi.h, it links libmpi_abi.so.1 only) runs.
# Usage: abi_wrappers.sh BINDIR MPIEXEC TESTS_DIR
set -eu
bin=$1 mpiexec=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin/mpicc_abi" -I"$src" -o "$tmp/a" "$src/abi_p2p.c"
"$bin/mpicc" -mpi-abi -I"$src" -o "$tmp/b" "$src/abi_dtype.c"
for exe in a b; do
    if readelf -d "$tmp/$exe" | grep NEEDED | grep -q 'libtern'; then
        echo "FAIL: $exe links libtern"; exit 1
    fi
    readelf -d "$tmp/$exe" | grep NEEDED | grep -q 'libmpi_abi.so.1' ||
        { echo "FAIL: $exe does not need libmpi_abi.so.1"; exit 1; }
done
"$mpiexec" -n 2 "$tmp/a" | grep -q "test abi_p2p ok"
"$mpiexec" -n 2 "$tmp/b" | grep -q "test abi_dtype ok"
# C++: the ABI header in a C++ program; plain mpicc still gets libtern's mpi.h.
"$bin/mpicxx_abi" -x c++ -I"$src" -o "$tmp/c" "$src/abi_attr.c"
"$mpiexec" -n 2 "$tmp/c" | grep -q "test abi_attr ok"
if "$bin/mpicc" -I"$src" -c -o "$tmp/d.o" "$src/abi_p2p.c" 2>/dev/null; then
    echo "FAIL: plain mpicc compiled an ABI test (abi_test.h must reject libtern's mpi.h)"
    exit 1
fi
if "$bin/mpifort" -mpi-abi -o "$tmp/f" /dev/null 2>/dev/null; then
    echo "FAIL: mpifort -mpi-abi accepted"; exit 1
fi
echo "ok: mpicc_abi, mpicc -mpi-abi, mpicxx_abi"
