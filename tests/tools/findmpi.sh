#!/bin/bash
# CMake's FindMPI recognises the build-tree wrappers (it asks them with
# -showme:compile / -showme:link) and a project built with MPI::MPI_C runs.
# Usage: findmpi.sh <dir with mpicc, mpicxx> <tests/tools source dir> <work dir> [mpiexec]
set -euo pipefail
bindir=$1 srcdir=$2 work=$3 mpiexec=${4:-}
rm -rf "$work" && mkdir -p "$work"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
# FindMPI keeps only -l, -L and -Wl flags: a sanitizer build's programs need
# the sanitizer runtimes linked explicitly, as a user would add them.
san=$(grep -oE -- '-fsanitize=[^ ]+' <<<"$("$bindir/mpicc" -showme:link)" || true)
set -x
cmake -S "$srcdir/findmpi" -B "$work" "${gen[@]}" -DHELLO_DIR="$srcdir" -DCMAKE_EXE_LINKER_FLAGS="$san" \
    -DMPI_C_COMPILER="$bindir/mpicc" -DMPI_CXX_COMPILER="$bindir/mpicxx" -DMPIEXEC_EXECUTABLE="${mpiexec:-/bin/false}"
grep -E '^MPI_C_VERSION:|^MPI_C_LIB_NAMES:' "$work/CMakeCache.txt" || true
grep -q '^MPI_C_LIB_NAMES:STRING=tern$' "$work/CMakeCache.txt"
cmake --build "$work"
if [ -n "$mpiexec" ]; then
    timeout 60 "$mpiexec" -n 2 "$work/hello_c"
    timeout 60 "$mpiexec" -n 2 "$work/hello_cxx"
else
    timeout 60 "$work/hello_c"
fi
