#!/bin/sh
# tern-bench <name> [options]: runs the benchmark tern-bench-<name> installed
# next to this script, e.g. `mpiexec -n 2 tern-bench latency -m 1:4K`.
# `tern-bench --list` prints the benchmarks present; `mpiexec -n N tern-bench
# tune -o FILE` writes a collective tuning table (bench_tune.c).
dir=$(dirname "$0")
case "${1:-}" in
"" | -h | --help)
    echo "usage: tern-bench <name> [options]   (tern-bench <name> --help for the options)"
    echo "       tern-bench --list"
    echo "       tern-bench tune -o FILE   (a collective tuning table for TERN_COLL_TUNING_FILE)"
    exit 0 ;;
--list)
    for f in "$dir"/tern-bench-*; do [ -x "$f" ] && echo "${f##*/tern-bench-}"; done
    exit 0 ;;
esac
name=$1
shift
[ -x "$dir/tern-bench-$name" ] || { echo "tern-bench: no benchmark '$name' (try --list)" >&2; exit 1; }
exec "$dir/tern-bench-$name" "$@"
