#!/bin/sh
# Runs tests/ofi/regcache.c twice and checks rank 0's registration cache
# counters (TERN_OFI_REGCACHE_STATS=1, set by CMake with the transport):
#  1. the cache on (default size): hits >= 9 (case a: 10 sends from one
#     buffer) and invalidated >= 3 (one each for munmap, free, DONTNEED);
#     on tcp the received bytes would be right even from a stale
#     registration, so these counters are the proof of invalidation;
#  2. TERN_OFI_REGCACHE=0: hits 0 (every send registers afresh);
#  3. TERN_OFI_REGCACHE=1: buffers take turns in a one-entry cache, so
#     entries are evicted (and unwatched) while the bytes stay right.
# Exits 77 (skipped) when userfaultfd is unavailable here.
# Usage: regcache_test.sh MPIEXEC REGCACHE_PROGRAM
set -u
mpiexec=$1
prog=$2
out=$(mktemp /tmp/tern-regcache-XXXXXX)
trap 'rm -f "$out"' EXIT

"$prog" --probe
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "regcache_test: probe failed ($rc)"; exit 1; }

# run NAME [VAR=value...]: runs the program; sets hits, misses,
# invalidated, evicted from rank 0's line.
run() {
    name=$1
    shift
    env -u TERN_OFI_REGCACHE "$@" "$mpiexec" -n 2 "$prog" > "$out" 2>&1
    rc=$?
    cat "$out"
    [ $rc -eq 0 ] || { echo "regcache_test: FAILED: $name run exited $rc"; exit 1; }
    line=$(grep 'tern\[rank 0\]: ofi regcache:' "$out")
    [ -n "$line" ] || { echo "regcache_test: FAILED: no stats line from rank 0 ($name)"; exit 1; }
    hits=$(echo "$line" | sed -n 's/.*hits \([0-9]*\),.*/\1/p')
    misses=$(echo "$line" | sed -n 's/.*misses \([0-9]*\),.*/\1/p')
    invalidated=$(echo "$line" | sed -n 's/.*invalidated \([0-9]*\),.*/\1/p')
    evicted=$(echo "$line" | sed -n 's/.*evicted \([0-9]*\).*/\1/p')
}

run cached
[ "$hits" -ge 9 ] || { echo "regcache_test: FAILED: $hits hits, expected >= 9"; exit 1; }
[ "$invalidated" -ge 3 ] ||
    { echo "regcache_test: FAILED: $invalidated invalidated, expected >= 3"; exit 1; }

run uncached TERN_OFI_REGCACHE=0
[ "$hits" -eq 0 ] || { echo "regcache_test: FAILED: $hits hits with TERN_OFI_REGCACHE=0"; exit 1; }
[ "$misses" -ge 14 ] ||
    { echo "regcache_test: FAILED: $misses misses with TERN_OFI_REGCACHE=0, expected >= 14"; exit 1; }

run evicting TERN_OFI_REGCACHE=1
[ "$evicted" -ge 1 ] ||
    { echo "regcache_test: FAILED: $evicted evicted with TERN_OFI_REGCACHE=1, expected >= 1"; exit 1; }
echo "regcache_test: ok"
