#!/bin/bash
# CMake's FindMPI recognises the build tree's mpifort (it asks it with
# -showme:compile / -showme:link), finds mpif.h and module mpi, and a
# project linked with MPI::MPI_Fortran runs.
# Usage: findmpi_fortran.sh <dir with mpifort> <tests/fortran source dir> <work dir> [mpiexec]
set -euo pipefail
bindir=$1 srcdir=$2 work=$3 mpiexec=${4:-}
rm -rf "$work" && mkdir -p "$work"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
san=$(grep -oE -- '-fsanitize=[^ ]+' <<<"$("$bindir/mpifort" -showme:link)" || true)
set -x
cmake -S "$srcdir/findmpi" -B "$work" "${gen[@]}" -DHELLO_DIR="$srcdir" \
    -DCMAKE_EXE_LINKER_FLAGS="$san" -DMPI_Fortran_COMPILER="$bindir/mpifort" \
    -DMPIEXEC_EXECUTABLE="${mpiexec:-/bin/false}"
grep -E '^MPI_Fortran_LIB_NAMES:|^MPI_Fortran_HAVE' "$work/CMakeCache.txt" || true
grep -q '^MPI_Fortran_LIB_NAMES:STRING=mpifort;tern$' "$work/CMakeCache.txt"
cmake --build "$work"
timeout 60 "${mpiexec:-env}" ${mpiexec:+-n 2} "$work/hello_f"
