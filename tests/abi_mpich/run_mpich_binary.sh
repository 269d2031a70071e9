#!/bin/bash
# Builds a test program with Debian's MPICH compiler (mpicc.mpich: MPICH's
# mpi.h, linked with -lmpich, no Tern header or wrapper) and runs it on
# Tern: mpiexec --abi mpich puts Tern's libmpich.so.12 first in the ranks'
# LD_LIBRARY_PATH. The program checks its results and that the
# libmpich.so.12 it loaded is Tern's (/proc/self/maps).
# Usage: run_mpich_binary.sh MPIEXEC TERN_LIBDIR NP SOURCE [compiler args...]
# Exit 77 (skipped) without mpicc.mpich.
set -euo pipefail
mpiexec=$1 libdir=$2 np=$3 src=$4
shift 4
command -v mpicc.mpich >/dev/null || { echo "SKIP: no mpicc.mpich (apt install libmpich-dev)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
exe=$work/$(basename "$src" .c)
mpicc.mpich -O1 -o "$exe" "$src" "$@"
# What the binary asks for is MPICH's library, by its soname.
readelf -d "$exe" | grep -q 'NEEDED.*\[libmpich.so.12\]' || { echo "FAIL: $exe needs no libmpich.so.12"; exit 1; }
"$mpiexec" --abi mpich -n "$np" "$exe" "$libdir" "$work"
