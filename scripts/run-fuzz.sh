#!/bin/bash
# Builds the libFuzzer targets (tests/fuzz, -DTERN_FUZZ=ON, clang) in
# build-fuzz/ and runs each for TERN_FUZZ_SECONDS (default 30) from its seed
# corpus tests/fuzz/corpus/<target>/ (copied: the checked-in seeds are not
# changed; new inputs stay in build-fuzz/corpus/<target>/).
# Exits 1 on the first target that crashes, leaks or breaks an invariant,
# printing the reproducer's path and the command that replays it; 2 when
# clang cannot build fuzzers (run scripts/setup-deps.sh).
#
# Environment: TERN_FUZZ_SECONDS, TERN_FUZZ_TARGETS (default: all four),
# TERN_BUILD_JOBS (default: the number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${TERN_FUZZ_SECONDS:-30}
targets=${TERN_FUZZ_TARGETS:-"fuzz_pmi_wire fuzz_hosts fuzz_knobs fuzz_args"}
build_jobs=${TERN_BUILD_JOBS:-$(nproc)}
dir=build-fuzz

cc=${TERN_FUZZ_CC:-clang}
if ! command -v "$cc" >/dev/null ||
    ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
    "$cc" -x c -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null; then
    echo "run-fuzz: $cc cannot build libFuzzer targets (scripts/setup-deps.sh installs clang" \
         "and libclang-rt-dev; TERN_SKIP_FUZZ=1 skips fuzzing in run-tests.sh)" >&2
    exit 2
fi
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
echo "=== configure and build $dir (libFuzzer, ASan, UBSan)"
CC=$cc cmake -S . -B "$dir" "${gen[@]}" -DTERN_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$dir" -j "$build_jobs"

# Leaks count as failures; one report is enough.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in $targets; do
    seeds=tests/fuzz/corpus/$t
    work=$dir/corpus/$t
    artifacts=$dir/artifacts/$t
    mkdir -p "$work" "$artifacts"
    rm -f "$artifacts"/*
    echo "=== $t: ${secs} s from $(ls "$seeds" | wc -l) seeds"
    log=$dir/$t.log
    rc=0
    # stdout and stderr of the target (mpiexec's messages, --help) are closed:
    # libFuzzer and the sanitizers still report on their own copy of it.
    "$dir/tests/fuzz/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$artifacts/" \
        "$work" "$seeds" >"$log" 2>&1 || rc=$?
    grep -a -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done )' "$log" || true
    repro=$(ls "$artifacts" 2>/dev/null | head -1)
    if [ $rc -ne 0 ] || [ -n "$repro" ]; then
        echo "run-fuzz: $t FAILED (exit status $rc); the end of its log ($log):"
        tail -40 "$log"
        if [ -n "$repro" ]; then
            echo "run-fuzz: reproducer: $artifacts/$repro"
            echo "run-fuzz: replay with: $dir/tests/fuzz/$t $artifacts/$repro"
            echo "run-fuzz: once fixed, add it to $seeds/ as a regression"
        fi
        status=1
        break
    fi
done
[ $status -eq 0 ] && echo "=== run-fuzz: every target ran ${secs} s without a failure"
exit $status
