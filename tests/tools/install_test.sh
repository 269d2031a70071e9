#!/bin/bash
# Installs the build into a temporary prefix and uses the installation as a
# user would: checks the layout, builds with the installed mpicc/mpicxx and
# with pkg-config (and, with the Fortran bindings, mpifort and tern-fort.pc),
# runs the result, and checks libtern's exported symbols.
# Usage: install_test.sh <build dir> <tests/tools source dir> <work dir> [with-mpiexec]
set -euo pipefail
build=$1 srcdir=$2 work=$3 with_mpiexec=${4:-}
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; exit 1; }

fail=0
want=(bin/mpicc bin/mpicxx bin/tern-info include/mpi.h lib/libtern.so lib/pkgconfig/tern.pc)
# The MPICH ABI face (docs/design.md, "The MPICH ABI face").
want+=(lib/libmpich.so.12 lib/libmpi.so.12)
if [ -n "$with_mpiexec" ]; then
    want+=(bin/mpiexec bin/mpirun)
fi
# The Fortran bindings, when the build has them.
fortran=
if [ -x "$build/bin/mpifort" ]; then
    fortran=yes
    want+=(bin/mpifort bin/mpif90 bin/mpif77 include/mpif.h include/mpi.mod lib/libmpifort.so
           lib/libmpichfort.so.12
           lib/pkgconfig/tern-fort.pc)
fi
# The man pages, when the build makes them (a Python with pympistandard).
manpages=
if [ -d "$build/man/man3" ]; then
    manpages=yes
    want+=(share/man/man3/MPI_Send.3 share/man/man3/MPI_Send_c.3 share/man/man1/tern-info.1)
fi
for f in "${want[@]}"; do
    if [ -e "$prefix/$f" ]; then echo "ok: installed $f"; else echo "FAIL: $f not installed"; fail=1; fi
done
ls "$prefix"/lib/libtern.so.* >/dev/null || { echo "FAIL: no versioned libtern.so.*"; fail=1; }
[ $fail = 0 ] || { echo "installed files:"; (cd "$prefix" && find . -type f -o -type l | sort); exit 1; }

# The installed wrapper must point into the prefix, not the build tree.
show=$("$prefix/bin/mpicc" -show)
echo "installed mpicc -show: $show"
real_prefix=$(cd "$prefix" && pwd -P)
[[ $show == *"-I$real_prefix/include"* && $show == *"-L$real_prefix/lib"* ]] || { echo "FAIL: wrong paths"; exit 1; }
for tok in $show; do
    case $tok in
    -I*|-L*|-Wl,-rpath,*)
        [[ $tok == *"$real_prefix/"* ]] || { echo "FAIL: installed mpicc refers to $tok outside the prefix"; exit 1; } ;;
    esac
done

# A copy of the prefix elsewhere works too (the wrappers are relocatable).
cp -a "$prefix" "$work/moved"
moved=$(cd "$work/moved" && pwd -P)
[[ $("$work/moved/bin/mpicc" -show) == *"-I$moved/include"* ]] || { echo "FAIL: not relocatable"; exit 1; }
# Through a symbolic link, as with update-alternatives.
ln -s "$prefix/bin/mpicc" "$work/mpicc-link"
[[ $("$work/mpicc-link" -show) == *"-I$real_prefix/include"* ]] || { echo "FAIL: symlinked mpicc"; exit 1; }

cd "$work"
set -x
"$prefix/bin/mpicc" -Wall -Werror -o hello_c "$srcdir/hello_mpi.c"
"$prefix/bin/mpicxx" -Wall -Werror -o hello_cxx "$srcdir/hello_mpi.cc"
# shellcheck disable=SC2046
cc -Wall -Werror -o hello_pc "$srcdir/hello_mpi.c" \
    $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs tern)
# The programs load the installed library, not the build tree's.
ldd ./hello_c | grep libtern
# (grep without -q: with pipefail, -q stopping early makes a long ldd
# listing, libfabric's dependencies included, die of SIGPIPE.)
ldd ./hello_c | grep "$real_prefix/lib/libtern.so" >/dev/null || { set +x; echo "FAIL: hello_c does not load the installed libtern"; exit 1; }
progs=(hello_c hello_cxx hello_pc)
if [ -n "$fortran" ]; then
    "$prefix/bin/mpifort" -o hello_f "$srcdir/../fortran/hello_mpi.f90"
    # shellcheck disable=SC2046
    gfortran -o hello_fpc "$srcdir/../fortran/hello_mpi.f90" \
        $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs tern-fort)
    ldd ./hello_f | grep "$real_prefix/lib/libmpifort.so" >/dev/null || { set +x; echo "FAIL: hello_f does not load the installed libmpifort"; exit 1; }
    progs+=(hello_f hello_fpc)
fi
for prog in "${progs[@]}"; do
    if [ -n "$with_mpiexec" ]; then
        timeout 60 "$prefix/bin/mpiexec" -n 2 "./$prog"
    else
        timeout 60 "./$prog"
    fi
done
"$prefix/bin/tern-info" --version
if [ -n "$manpages" ] && command -v man >/dev/null; then
    MANWIDTH=200 man -M "$prefix/share/man" MPI_Send | grep -F "int MPI_Send(const void *buf"
fi
set +x
"$(dirname "$0")/check_exports.sh" "$prefix/lib/libtern.so" "$srcdir/../../src/mpi/gen/exports.txt"
