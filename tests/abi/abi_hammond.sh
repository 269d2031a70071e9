#!/bin/sh
# github jeffhammond/mpi-abi-tests, never committed: its MPI programs built by
# Tern's mpicc_abi (against mpi_abi.h, linked with libmpi_abi.so.1) and run
# with Tern's mpiexec. The checkout is $TERN_MPI_ABI_TESTS when set, else
# cloned (depth 1) into a temporary directory; without either the test is
# skipped (exit 77).
#
# Of its programs, the ones that call MPI apply (its Makefile's "mpi" set):
#   type_size, thread-case, name-mangling, print-compile-time-constants;
# c2f2c calls MPI_Type_c2f/f2c, which the C ABI leaves out (neither the
# Forum's reference header nor MPICH's mpi_abi.h declares them), and the
# others ("nompi", "xfail") compare C layouts without an MPI library.
# Usage: abi_hammond.sh BINDIR MPIEXEC
set -eu
bin=$1 mpiexec=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=${TERN_MPI_ABI_TESTS:-}
if [ -z "$src" ]; then
    if timeout 60 git clone -q --depth 1 https://github.com/jeffhammond/mpi-abi-tests \
            "$tmp/src" 2>/dev/null; then
        src=$tmp/src
    else
        echo "SKIP: no mpi-abi-tests checkout (set TERN_MPI_ABI_TESTS, or allow git clone)"
        exit 77
    fi
fi
[ -f "$src/type_size.c" ] || { echo "SKIP: $src is not an mpi-abi-tests checkout"; exit 77; }
echo "mpi-abi-tests at $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo "$src")"
fail=0
for p in type_size thread-case name-mangling print-compile-time-constants; do
    if ! "$bin/mpicc_abi" -g -Os -Wall -Wextra -o "$tmp/$p" "$src/$p.c" 2>"$tmp/$p.cc"; then
        echo "FAIL: $p does not build:"; cat "$tmp/$p.cc"; fail=1; continue
    fi
done
[ $fail = 0 ] || exit 1
# Each run's output checked against what the ABI fixes.
"$mpiexec" -n 2 "$tmp/type_size" 1000 >"$tmp/out1"
[ "$(grep -c '^junk=8000$' "$tmp/out1")" = 2 ] ||
    { echo "FAIL: type_size (MPI_LONG_LONG_INT is 8 bytes):"; cat "$tmp/out1"; fail=1; }
"$mpiexec" -n 2 "$tmp/thread-case" >"$tmp/out2"
[ "$(grep -cE '^(SERIALIZED|MULTIPLE)$' "$tmp/out2")" = 2 ] ||
    { echo "FAIL: thread-case (SERIALIZED asked):"; cat "$tmp/out2"; fail=1; }
"$mpiexec" -n 2 "$tmp/name-mangling" || { echo "FAIL: name-mangling"; fail=1; }
"$tmp/print-compile-time-constants" >"$tmp/out3"
for want in MPI_VERSION=5 MPI_SUBVERSION=0 MPI_MAX_PROCESSOR_NAME=256 \
            MPI_MAX_LIBRARY_VERSION_STRING=8192 MPI_MAX_ERROR_STRING=512 \
            MPI_MAX_DATAREP_STRING=128 MPI_MAX_INFO_KEY=256 MPI_MAX_INFO_VAL=1024 \
            MPI_MAX_OBJECT_NAME=128 MPI_MAX_PORT_NAME=1024 MPI_MAX_STRINGTAG_LEN=1024 \
            MPI_MAX_PSET_NAME_LEN=1024; do
    grep -qx "$want" "$tmp/out3" ||
        { echo "FAIL: print-compile-time-constants: no $want"; fail=1; }
done
[ $fail = 0 ] || exit 1
echo "ok: mpi-abi-tests: 4 of 4 programs that apply built and passed (c2f2c not in the C ABI)"
