#!/bin/bash
# Builds Tern and runs its tests three times: a normal build (RelWithDebInfo)
# in build/ (with the tests labelled bigmem: messages over 2 GiB, ~4.3 GB of
# memory, a few minutes each), a Release build in build-release/ (-O3 -DNDEBUG: the optimiser
# sees more, so -Werror catches more), a Debug build that is only compiled
# (build-debug/), then a build with AddressSanitizer and
# UndefinedBehaviorSanitizer in build-asan/ (these two without bigmem), then ThreadSanitizer on
# the tests that run threads (build-tsan/: tests/threads, and a few
# point-to-point and collective tests with the progress thread on, and the
# I/O tests of the I/O worker and the collective buffering pipeline), then the libFuzzer targets for
# 30 s each (scripts/run-fuzz.sh, build-fuzz/), then the conformance CI subset
# (scripts/run-conformance.sh --ci against the normal build, installed into
# build-conformance/tern-ci; docs/conformance.md).
# The exit status is non-zero when any ctest run, the fuzzing or the
# conformance gate failed.
#
# Environment: TERN_TEST_JOBS (ctest -j, default 2), TERN_BUILD_JOBS (build
# parallelism, default: the number of cores), CTEST_ARGS (extra ctest
# arguments, e.g. "-R tools_"), TERN_SKIP_RELEASE=1 (no Release build),
# TERN_SKIP_DEBUG=1 (no Debug build),
# TERN_SKIP_ASAN=1 (no sanitizer build), TERN_SKIP_TSAN=1 (no ThreadSanitizer
# build), TERN_SKIP_FUZZ=1 (no fuzzing;
# TERN_FUZZ_SECONDS: seconds per fuzz target), TERN_SKIP_CONFORMANCE=1 (no
# conformance subset).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${TERN_TEST_JOBS:-2}
build_jobs=${TERN_BUILD_JOBS:-$(nproc)}
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
read -r -a ctest_args <<<"${CTEST_ARGS:-}"

status=0
t0=$(date +%s)
# Each phase's line carries the seconds since the start, so a CI log shows
# where its minutes go.
say() { echo "=== [$(( $(date +%s) - t0 )) s] $*"; }
# What failed, repeated at the very end: a CI report shows only the log's
# tail, and the conformance phase's output comes after every ctest run's.
failures=()
note_failed() { # <phase> <build dir>: the ctest run's failed tests
    local log=$2/Testing/Temporary/LastTestsFailed.log
    if [ -s "$log" ]; then
        failures+=("$1: $(cut -d: -f2- "$log" | tr '\n' ' ')")
    else
        failures+=("$1: failed (no test list)")
    fi
}
run() { # <build dir> <build type> <extra ctest args> <cmake options...>
    local dir=$1 type=$2
    local -a extra
    read -r -a extra <<<"$3"
    shift 3
    say "configure and build $dir ($type $*)"
    cmake -S . -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE="$type" "$@"
    cmake --build "$dir" -j "$build_jobs"
    say "test $dir"
    local rc=0
    (cd "$dir" && ctest --output-on-failure --no-tests=error -j "$jobs" "${extra[@]}" "${ctest_args[@]}") || rc=$?
    say "$dir: ctest exit status $rc"
    [ $rc -eq 0 ] || { status=$rc; note_failed "$dir" "$dir"; }
}

run build RelWithDebInfo ""
if [ "${TERN_SKIP_RELEASE:-0}" != 1 ]; then
    # Not here (the normal and sanitizer builds run them): the ofi suites
    # rerun over the rxm provider, the network-namespace launches and the
    # tree's own checks (tools_*), which do not depend on the build type;
    # about 2 minutes of a 2-core CI.
    run build-release Release "-LE bigmem -E ^(ofi_rxm_|netns_|tools_)"
fi
if [ "${TERN_SKIP_DEBUG:-0}" != 1 ]; then
    # Built, not tested: -Werror holds in every build type, and at -O0 GCC's
    # format and bounds warnings see different ranges (about a minute).
    say "configure and build build-debug (Debug, no tests)"
    rc=0
    cmake -S . -B build-debug "${gen[@]}" -DCMAKE_BUILD_TYPE=Debug >/dev/null &&
        cmake --build build-debug -j "$build_jobs" || rc=$?
    say "build-debug: exit status $rc"
    [ $rc -eq 0 ] || { status=$rc; failures+=("build-debug: build failed"); }
fi
if [ "${TERN_SKIP_ASAN:-0}" != 1 ]; then
    # Leak checking stays on; halt on the first sanitizer report; an allocation
    # too big returns NULL (tests check MPI_ERR_NO_MEM) instead of aborting.
    export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:halt_on_error=1:allocator_may_return_null=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
    export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp}
    run build-asan RelWithDebInfo "-LE bigmem" -DTERN_SANITIZE=ON
fi
if [ "${TERN_SKIP_TSAN:-0}" != 1 ]; then
    # Only the targets these tests need: the whole tree under TSan would
    # cost CI minutes for tests that run one thread.
    say "configure and build build-tsan (ThreadSanitizer)"
    # io_*: the I/O worker (nonblocking and split collective accesses) and
    # the collective buffering pipeline's thread.
    tsan_targets=(mpiexec threads_mt threads_mt4 spawn_mt p2p_nonblocking p2p_probe coll_check mpit_vars
                  io_async io_basic io_coll io_coll_async)
    tsan_tests='^(threads_mt.*|spawn_mt_np1|spawn_mt_np2|p2p_nonblocking_np2|p2p_probe_np2|coll_check_np2|coll_check_np3|mpit_vars_threads_np2|io_async_np2|io_basic_np2|io_coll_np2|io_coll_async_np2)$'
    rc=0
    cmake -S . -B build-tsan "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTERN_TSAN=ON &&
        cmake --build build-tsan -j "$build_jobs" --target "${tsan_targets[@]}" || rc=$?
    if [ $rc -eq 0 ]; then
        # A race report fails the test (exitcode 66); suppressions only for
        # libraries we do not own (tests/tsan.supp says why each is there).
        # The point-to-point and collective tests run with the progress
        # thread, the one other thread in a single-threaded program.
        (cd build-tsan &&
            TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=$PWD/../tests/tsan.supp" \
            TERN_ASYNC_PROGRESS=on \
            ctest --output-on-failure --no-tests=error -j "$jobs" -R "$tsan_tests") || rc=$?
    fi
    say "build-tsan: exit status $rc"
    [ $rc -eq 0 ] || { status=$rc; note_failed build-tsan build-tsan; }
fi
if [ "${TERN_SKIP_FUZZ:-0}" != 1 ]; then
    # Its own sanitizer settings (leaks are failures there).
    rc=0
    env -u ASAN_OPTIONS -u UBSAN_OPTIONS -u LSAN_OPTIONS scripts/run-fuzz.sh || rc=$?
    say "fuzzing: exit status $rc"
    [ $rc -eq 0 ] || { status=$rc; failures+=("fuzzing: exit status $rc"); }
fi
if [ "${TERN_SKIP_CONFORMANCE:-0}" != 1 ]; then
    say "conformance CI subset (scripts/run-conformance.sh --ci)"
    cmake --install build --prefix "$PWD/build-conformance/tern-ci" >/dev/null
    rc=0
    # With Debian's MPICH there, the MPICH ABI face too (--faces: the CI
    # directories built with mpicc.mpich, run on Tern's libmpich.so.12).
    faces=()
    command -v mpicc.mpich >/dev/null && faces=(--faces)
    scripts/run-conformance.sh --ci "${faces[@]}" --jobs "$jobs" --prefix build-conformance/tern-ci || rc=$?
    say "conformance: exit status $rc"
    [ $rc -eq 0 ] || { status=$rc; failures+=("conformance: exit status $rc (build-conformance/ci-report.md)"); }
fi
for f in "${failures[@]}"; do say "FAILED $f"; done
exit $status
