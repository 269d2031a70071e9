#!/bin/bash
# A real Fortran application against Tern and its peers: ScaLAPACK 2.2.1's
# own test programs (xslu, xdlu, xdqr, xdllt...: each factors and solves
# with its TESTING/*.dat input and checks the residuals itself), built with
# each implementation's own wrappers (Tern's build-tree mpicc/mpifort,
# Debian's mpicc.mpich/mpif90.mpich and mpicc.openmpi/mpif90.openmpi) and
# run at 4 ranks with each, interleaved over N rounds (as run-compare.sh).
# Prints, per implementation, the programs that passed and failed and the
# wall time of each round; exits 1 if any program failed with any of them.
#
#   scripts/run-app-scalapack.sh                 # 3 rounds, all programs
#   scripts/run-app-scalapack.sh --rounds 5
#   scripts/run-app-scalapack.sh --impls tern    # just Tern (tern,mpich,openmpi)
#   scripts/run-app-scalapack.sh --tests "xdlu xdqr"   --np 4
#
# Source: Debian's source package (apt-get source; needs a deb-src entry,
# see tools/conformance/mpich_suite.py), or SCALAPACK_SRC=<unpacked tree or
# .tar.gz> when the archive has none. Builds and sources are cached in
# build-app-scalapack/ (never committed). Needs gfortran, cmake, ninja,
# BLAS/LAPACK (libblas-dev/liblapack-dev or libopenblas-dev), Debian's
# mpich/libmpich-dev and openmpi-bin/libopenmpi-dev (scripts/setup-deps.sh)
# and Tern built in build/ (TERN_BUILD=dir to use another).
# Do not trust timings on a loaded machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${SCALAPACK_CACHE:-$root/build-app-scalapack}
tern_build=${TERN_BUILD:-$root/build}
rounds=3
np=4
impls="tern mpich openmpi"
# The LU, Cholesky, QR and inverse drivers in four precisions and the
# banded/tridiagonal solvers in double: the programs ScaLAPACK's own CTest
# runs at 4 ranks, minus the eigenvalue drivers (minutes each here).
tests="xslu xdlu xclu xzlu xsllt xdllt xcllt xzllt xsqr xdqr xcqr xzqr xsinv xdinv
       xddblu xddtlu xdgblu xdpbllt xdptllt"
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --impls) impls=${2//,/ }; shift 2 ;;
    --tests) tests=$2; shift 2 ;;
    --build-only) rounds=0; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "run-app-scalapack: unknown option $1" >&2; exit 2 ;;
    esac
done
mkdir -p "$cache"
version=2.2.1

# --- the source -------------------------------------------------------------
src=$cache/scalapack-$version
if [ ! -f "$src/CMakeLists.txt" ]; then
    if [ -n "${SCALAPACK_SRC:-}" ]; then
        if [ -d "$SCALAPACK_SRC" ]; then
            cp -a "$SCALAPACK_SRC" "$src"
        else
            mkdir -p "$src" && tar -xzf "$SCALAPACK_SRC" -C "$src" --strip-components=1
        fi
    else
        (cd "$cache" && apt-get source --download-only "scalapack=$version-2") ||
            { echo "run-app-scalapack: no source package (set SCALAPACK_SRC)" >&2; exit 1; }
        mkdir -p "$src"
        tar -xzf "$cache/scalapack_$version.orig.tar.gz" -C "$src" --strip-components=1
    fi
fi

# --- one build per implementation --------------------------------------------
wrappers() { # impl -> "CC FC MPIEXEC"
    case $1 in
    tern) echo "$tern_build/bin/mpicc $tern_build/bin/mpifort $tern_build/tools/mpiexec/mpiexec" ;;
    mpich) echo "mpicc.mpich mpif90.mpich mpiexec.mpich" ;;
    openmpi) echo "mpicc.openmpi mpif90.openmpi mpiexec.openmpi" ;;
    *) echo "run-app-scalapack: unknown implementation $1" >&2; exit 2 ;;
    esac
}
for impl in $impls; do
    read -r cc fc _ <<<"$(wrappers "$impl")"
    b=$cache/build-$impl
    if [ ! -f "$b/build.ninja" ]; then
        # gfortran 10+ refuses BLACS's untyped buffers without
        # -fallow-argument-mismatch; gcc 12 its implicit declarations.
        cmake -S "$src" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release \
            -DCMAKE_C_COMPILER="$cc" -DCMAKE_Fortran_COMPILER="$fc" \
            -DCMAKE_C_FLAGS="-O2 -Wno-implicit-function-declaration -Wno-implicit-int" \
            -DCMAKE_Fortran_FLAGS="-O2 -fallow-argument-mismatch -std=legacy" \
            -DCMAKE_C_FLAGS_RELEASE="" -DCMAKE_Fortran_FLAGS_RELEASE="" \
            -DBUILD_SHARED_LIBS=OFF -DSCALAPACK_BUILD_TESTS=ON >"$cache/configure-$impl.log" 2>&1 ||
            { echo "run-app-scalapack: configure with $impl failed ($cache/configure-$impl.log)" >&2; exit 1; }
    fi
    echo "run-app-scalapack: building with $impl ($b)"
    # shellcheck disable=SC2086
    cmake --build "$b" -j "${JOBS:-2}" --target $tests >"$cache/build-$impl.log" 2>&1 ||
        { echo "run-app-scalapack: build with $impl failed ($cache/build-$impl.log)" >&2; exit 1; }
done

# --- the runs ------------------------------------------------------------------
# A program passes when it exits 0 and its closing count says so: some
# tests "completed and passed residual checks", 0 "failed residual checks".
run_one() { # impl test -> 0 pass, 1 fail
    local impl=$1 t=$2 exe log
    read -r _ _ mpiexec <<<"$(wrappers "$impl")"
    exe=$cache/build-$impl/TESTING/$t
    log=$cache/run-$impl-$t.log
    local extra=()
    [ "$impl" = openmpi ] && extra=(--oversubscribe)
    if ! (cd "$cache/build-$impl/TESTING" &&
          timeout 600 "$mpiexec" "${extra[@]}" -n "$np" "$exe") >"$log" 2>&1; then
        return 1
    fi
    grep -Eq '^ *[1-9][0-9]* tests completed and passed residual checks' "$log" &&
        grep -Eq '^ *0 tests completed and failed residual checks' "$log"
}
status=0
declare -A pass fail wall failed_names
for ((r = 1; r <= rounds; r++)); do
    for impl in $impls; do
        start=$(date +%s.%N)
        p=0 f=0 names=""
        for t in $tests; do
            if run_one "$impl" "$t"; then p=$((p + 1)); else f=$((f + 1)); names="$names $t"; fi
        done
        end=$(date +%s.%N)
        w=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
        printf 'round %d %-8s passed %2d failed %2d wall %8.2f s%s\n' "$r" "$impl" "$p" "$f" "$w" \
            "${names:+  (failed:$names)}"
        pass[$impl]=$p
        fail[$impl]=$f
        wall[$impl]="${wall[$impl]:-} $w"
        failed_names[$impl]=$names
        [ "$f" -eq 0 ] || status=1
    done
done
if [ "$rounds" -gt 0 ]; then
    echo "summary ($np ranks, $rounds rounds; logs in $cache/run-*.log):"
    for impl in $impls; do
        med=$(tr ' ' '\n' <<<"${wall[$impl]}" | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
        printf '  %-8s passed %2d of %2d, median wall %8.2f s%s\n' "$impl" "${pass[$impl]}" \
            "$((pass[$impl] + fail[$impl]))" "$med" "${failed_names[$impl]:+ (failed:${failed_names[$impl]})}"
    done
fi
exit $status
