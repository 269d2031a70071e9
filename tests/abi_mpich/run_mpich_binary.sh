#!/bin/bash
# Builds a test program with Debian's MPICH compiler (mpicc.mpich: MPICH's
# mpi.h, linked with -lmpich, no Tern header or wrapper; for a .f90 source
# mpifort.mpich: MPICH's module mpi or mpi_f08, linked with -lmpichfort -lmpich) and
# runs it on Tern: mpiexec --abi mpich puts Tern's libmpich.so.12 and
# libmpichfort.so.12 first in the ranks' LD_LIBRARY_PATH. A .cc source is
# built with mpicxx.mpich: a program using MPI:: also needs MPICH's own
# libmpichcxx.so.12 (which runs over Tern's libmpich.so.12), one calling
# the C procedures only must not. The program checks its results and that
# the libmpich.so.12 it loaded is Tern's (/proc/self/maps).
# Usage: run_mpich_binary.sh MPIEXEC TERN_LIBDIR NP SOURCE [compiler args...]
# Exit 77 (skipped) without mpicc.mpich (mpifort.mpich, mpicxx.mpich).
set -euo pipefail
mpiexec=$1 libdir=$2 np=$3 src=$4
shift 4
cc=mpicc.mpich sonames=libmpich.so.12
case $src in
*.f90) cc=mpifort.mpich sonames=libmpichfort.so.12 ;;
*.cc) cc=mpicxx.mpich
      grep -q 'MPI::' "$src" && sonames="$sonames libmpichcxx.so.12" ;;
esac
command -v $cc >/dev/null || { echo "SKIP: no $cc (apt install libmpich-dev)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
exe=$work/$(basename "${src%.*}")
$cc -O1 -o "$exe" "$src" "$@"
# What the binary asks for is MPICH's libraries, by their sonames.
for so in $sonames; do
    readelf -d "$exe" | grep -q "NEEDED.*\[$so\]" || { echo "FAIL: $exe needs no $so"; exit 1; }
done
if [ "$cc" = mpicxx.mpich ] && [ "$sonames" = libmpich.so.12 ] &&
   readelf -d "$exe" | grep -q 'NEEDED.*libmpichcxx'; then
    echo "FAIL: $exe calls no MPI:: procedure but needs libmpichcxx.so.12"; exit 1
fi
"$mpiexec" --abi mpich -n "$np" "$exe" "$(realpath "$libdir")" "$work"
