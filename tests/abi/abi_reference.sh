#!/bin/sh
# Checks against software Tern did not write (tests/abi/CMakeLists.txt):
#   abi_reference.sh header CC TERN_MPI_ABI_H
#       include/mpi_abi.h against the reference headers found
#       (check_header.py): $TERN_ABI_REFERENCE (the Forum's mpi-abi-stubs
#       mpi.h) and MPICH 5.0.2's mpi_abi.h;
#   abi_reference.sh mpich MPIEXEC LIBMPI_ABI_DIR TESTS_DIR
#       abi_p2p.c and abi_coll.c compiled by MPICH's mpicc_abi, run with
#       Tern's mpiexec on Tern's libmpi_abi.so.1 (LD_LIBRARY_PATH).
# MPICH is found from $TERN_MPICH_ABI_PREFIX or mpicc_abi on PATH
# (python3 -m venv v && v/bin/pip install mpich==5.0.2) or the repository's
# .venv-mpich (scripts/setup-deps.sh). Exit 77 (skipped)
# with a message when no reference is there.
set -eu
mode=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
mpicc_abi=
# scripts/setup-deps.sh installs MPICH 5.0.2 into the repository's .venv-mpich.
if [ -z "${TERN_MPICH_ABI_PREFIX:-}" ] && [ -x "$here/../../.venv-mpich/bin/mpicc_abi" ]; then
    TERN_MPICH_ABI_PREFIX=$(cd "$here/../../.venv-mpich" && pwd)
fi
if [ -n "${TERN_MPICH_ABI_PREFIX:-}" ] && [ -x "$TERN_MPICH_ABI_PREFIX/bin/mpicc_abi" ]; then
    mpicc_abi=$TERN_MPICH_ABI_PREFIX/bin/mpicc_abi
elif command -v mpicc_abi >/dev/null 2>&1; then
    mpicc_abi=$(command -v mpicc_abi)
fi

case $mode in
header)
    cc=$1 tern_h=$2 n=0 rc=0
    for ref in "${TERN_ABI_REFERENCE:-}" \
               "${mpicc_abi:+$(dirname "$mpicc_abi")/../include/mpi_abi.h}"; do
        [ -n "$ref" ] && [ -f "$ref" ] || continue
        echo "== $ref"
        python3 "$here/check_header.py" --cc "$cc" "$ref" "$tern_h" || rc=1
        n=$((n + 1))
    done
    if [ "$n" = 0 ]; then
        echo "SKIP: no reference ABI header (set TERN_ABI_REFERENCE to mpi-abi-stubs' mpi.h, or" \
             "TERN_MPICH_ABI_PREFIX to a pip install of mpich==5.0.2)"
        exit 77
    fi
    exit $rc ;;
mpich)
    mpiexec=$1 libdir=$2 src=$3
    if [ -z "$mpicc_abi" ]; then
        echo "SKIP: MPICH's mpicc_abi not found (pip install mpich==5.0.2 and set" \
             "TERN_MPICH_ABI_PREFIX, or put its bin/ on PATH)"
        exit 77
    fi
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    for t in abi_p2p abi_coll; do
        "$mpicc_abi" -I"$src" -o "$tmp/$t" "$src/$t.c"
        lib=$(LD_LIBRARY_PATH=$libdir ldd "$tmp/$t" | awk '/libmpi_abi/ {print $3}')
        case $lib in
        "$libdir"/*) ;;
        *) echo "FAIL: $t loads $lib, not Tern's libmpi_abi in $libdir"; exit 1 ;;
        esac
        for np in 1 2; do
            out=$(LD_LIBRARY_PATH=$libdir "$mpiexec" -n $np "$tmp/$t" 2>&1) || {
                echo "$out"; echo "FAIL: $t (built by $mpicc_abi) on $np ranks"; exit 1; }
            echo "$out" | grep -q "test $t ok" || { echo "$out"; echo "FAIL: $t np $np"; exit 1; }
            echo "$t (MPICH's mpicc_abi) on Tern, $np ranks: ok"
        done
    done ;;
*)
    echo "usage: abi_reference.sh header|mpich ..." >&2
    exit 2 ;;
esac
