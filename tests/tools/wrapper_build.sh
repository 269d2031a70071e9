#!/bin/bash
# Builds hello_mpi.c with mpicc and hello_mpi.cc with mpicxx (separate
# compile and link steps, and one-step), then runs them: under mpiexec with
# two ranks when an mpiexec is given, else as singletons.
# Usage: wrapper_build.sh <dir with mpicc, mpicxx> <tests/tools source dir> <work dir> [mpiexec]
set -euo pipefail
bindir=$1 srcdir=$2 work=$3 mpiexec=${4:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work"
set -x
"$bindir/mpicc" -Wall -Wextra -Werror -o hello_c "$srcdir/hello_mpi.c"
"$bindir/mpicc" -Wall -Wextra -Werror -c -o hello_c.o "$srcdir/hello_mpi.c"
"$bindir/mpicc" -o hello_c2 hello_c.o
"$bindir/mpicxx" -Wall -Wextra -Werror -o hello_cxx "$srcdir/hello_mpi.cc"
"$bindir/mpicxx" -Wall -Werror -c -o /dev/null -x c++ "$srcdir/hello_mpi.c"
for prog in hello_c hello_c2 hello_cxx; do
    if [ -n "$mpiexec" ]; then
        out=$(timeout 60 "$mpiexec" -n 2 "./$prog")
        echo "$out"
        [ "$(grep -c 'of 2' <<<"$out")" = 2 ]
    else
        timeout 60 "./$prog"
    fi
done
