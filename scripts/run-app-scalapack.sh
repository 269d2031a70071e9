#!/bin/bash
# A real Fortran application against Tern and its peers: ScaLAPACK 2.2.1's
# own test programs (xslu, xdlu, xdqr, xdllt...: each factors and solves
# with its TESTING/*.dat input and checks the residuals itself), built with
# each implementation's own wrappers, each in its own build directory:
#   tern     the build tree's mpicc/mpifort, run with its mpiexec
#   mpich    Debian's mpicc.mpich/mpifort.mpich, run with mpiexec.mpich
#   openmpi  Debian's mpicc.openmpi/mpifort.openmpi, run with
#            mpirun.openmpi --oversubscribe (4 ranks on fewer cores)
# and run at 4 ranks. Without --time: every program once per
# implementation, printing what passed and failed. With --time: N rounds,
# each running every program once with every implementation in turn
# (round-robin: program 1 with tern, mpich, openmpi, then program 2...),
# so a slow phase of the machine hits all alike; prints each program's wall
# time per round and, at the end, each program's median per implementation.
# Exits 1 if any program failed with any implementation.
#
#   scripts/run-app-scalapack.sh                      # all three, pass counts
#   scripts/run-app-scalapack.sh --impl tern          # one (or --impls tern,mpich)
#   scripts/run-app-scalapack.sh --time --rounds 5    # per-program wall times
#   scripts/run-app-scalapack.sh --tests "xdlu xdqr" --np 4
#   scripts/run-app-scalapack.sh --build-only
#   scripts/run-app-scalapack.sh --time --timeout 60   # a run over 60 s counts as failed
#       (4 ranks on 2 cores: MPICH's waiting ranks spin, xdlu takes minutes)
#
# Source: SCALAPACK_SRC=<unpacked tree or .tar.gz>, else
# /work/cache/scalapack/scalapack-2.2.1 when it is there, else Debian's
# source package (apt-get source; needs a deb-src entry, see
# tools/conformance/mpich_suite.py). Builds are cached in
# build-app-scalapack/build-<impl> (SCALAPACK_CACHE=dir; never committed);
# the library alone is about 2,600 compile steps per implementation.
# Needs gfortran, cmake, ninja, BLAS/LAPACK (libblas-dev/liblapack-dev or
# libopenblas-dev), Debian's mpich/libmpich-dev and
# openmpi-bin/libopenmpi-dev (scripts/setup-deps.sh) and Tern built in
# build/ (TERN_BUILD=dir to use another). Do not trust timings on a loaded
# machine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${SCALAPACK_CACHE:-$root/build-app-scalapack}
tern_build=${TERN_BUILD:-$root/build}
rounds=1
time_mode=0
np=4
run_timeout=600
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
    --impls|--impl) impls=${2//,/ }; shift 2 ;;
    --time) time_mode=1; [ "$rounds" -gt 1 ] || rounds=3; shift ;;
    --tests) tests=$2; shift 2 ;;
    --timeout) run_timeout=$2; shift 2 ;;
    --build-only) rounds=0; shift ;;
    -h|--help) sed -n '2,39p' "$0"; exit 0 ;;
    *) echo "run-app-scalapack: unknown option $1" >&2; exit 2 ;;
    esac
done
mkdir -p "$cache"
version=2.2.1

# --- the source -------------------------------------------------------------
src=$cache/scalapack-$version
if [ ! -f "$src/CMakeLists.txt" ]; then
    if [ -z "${SCALAPACK_SRC:-}" ] && [ -f /work/cache/scalapack/scalapack-$version/CMakeLists.txt ]; then
        SCALAPACK_SRC=/work/cache/scalapack/scalapack-$version
    fi
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
    mpich) echo "mpicc.mpich mpifort.mpich mpiexec.mpich" ;;
    openmpi) echo "mpicc.openmpi mpifort.openmpi mpirun.openmpi" ;;
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
    # As root, Open MPI's launcher wants to be told; 4 ranks on 2 cores
    # need --oversubscribe.
    if [ "$impl" = openmpi ]; then
        extra=(--oversubscribe)
        [ "$(id -u)" -ne 0 ] || extra+=(--allow-run-as-root)
    fi
    if ! (cd "$cache/build-$impl/TESTING" &&
          timeout "$run_timeout" "$mpiexec" "${extra[@]}" -n "$np" "$exe") >"$log" 2>&1; then
        return 1
    fi
    grep -Eq '^ *[1-9][0-9]* tests completed and passed residual checks' "$log" &&
        grep -Eq '^ *0 tests completed and failed residual checks' "$log"
}
status=0
declare -A pass fail failed_names times
for impl in $impls; do pass[$impl]=0; fail[$impl]=0; failed_names[$impl]=""; done
if [ "$time_mode" -eq 0 ]; then
    for ((r = 1; r <= rounds; r++)); do
        for impl in $impls; do
            p=0 f=0 names=""
            for t in $tests; do
                if run_one "$impl" "$t"; then p=$((p + 1)); else f=$((f + 1)); names="$names $t"; fi
            done
            printf 'round %d %-8s passed %2d failed %2d%s\n' "$r" "$impl" "$p" "$f" \
                "${names:+  (failed:$names)}"
            pass[$impl]=$p fail[$impl]=$f failed_names[$impl]=$names
            [ "$f" -eq 0 ] || status=1
        done
    done
else
    # Round-robin: each program with every implementation in turn.
    for ((r = 1; r <= rounds; r++)); do
        for t in $tests; do
            line=$(printf 'round %d %-8s' "$r" "$t")
            for impl in $impls; do
                start=$(date +%s.%N)
                if run_one "$impl" "$t"; then ok=""; else
                    ok=" FAILED"; status=1
                    [ "$r" -gt 1 ] || { fail[$impl]=$((fail[$impl] + 1)); failed_names[$impl]="${failed_names[$impl]} $t"; }
                fi
                end=$(date +%s.%N)
                w=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
                times[$impl,$t]="${times[$impl,$t]:-} $w"
                line="$line  $impl $w s$ok"
            done
            echo "$line"
        done
    done
    for impl in $impls; do pass[$impl]=$(($(wc -w <<<"$tests") - fail[$impl])); done
    median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
    echo "median wall time per program, seconds ($np ranks, $rounds rounds):"
    printf '  %-8s' program; for impl in $impls; do printf ' %9s' "$impl"; done; echo
    for t in $tests; do
        printf '  %-8s' "$t"
        for impl in $impls; do printf ' %9s' "$(median "${times[$impl,$t]}")"; done
        echo
    done
fi
if [ "$rounds" -gt 0 ]; then
    echo "summary ($np ranks; logs in $cache/run-*.log):"
    for impl in $impls; do
        printf '  %-8s passed %2d of %2d%s\n' "$impl" "${pass[$impl]}" \
            "$((pass[$impl] + fail[$impl]))" "${failed_names[$impl]:+ (failed:${failed_names[$impl]})}"
    done
fi
exit $status
