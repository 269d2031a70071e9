#!/bin/bash
# Single-threaded instruction counts of point-to-point and small
# collectives (issue 29's "Done means"; docs/performance.md, "Instruction
# counts"): tools/icount/icount.c built with the build tree's mpicc, 2 ranks
# on this host, rank 0 under callgrind collecting inside bench_loop only,
# rank 1 natively, both with TERN_PROGRESS_SPIN=0 (a waiting rank yields).
# Prints, per path and procedure, the inclusive instructions per call (per
# message or request for the rate path), and those of the idle waits under
# bench_loop (tern_progress_idle: waiting for the peer, which depends on
# timing, not code). Each figure is the run with the fewest idle
# instructions of RUNS. --base LIBDIR runs the same program on another
# libtern as well (LD_LIBRARY_PATH, e.g. an older tree's build/src) and
# prints both and the difference.
# Usage: scripts/icount.sh [--build DIR] [--base LIBDIR] [--runs N] [PATH...]
#   PATH: pingpong rate allreduce allgather alltoall bcast reduce gather
#   scatter barrier (default all). Needs valgrind.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build base= runs=2
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --base) base=$(cd "$2" && pwd); shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "icount: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
build=$(cd "$build" && pwd)
paths=${*:-pingpong rate allreduce allgather alltoall bcast reduce gather scatter barrier}
command -v valgrind > /dev/null || { echo "icount: needs valgrind" >&2; exit 2; }
work=$(mktemp -d)
trap '[ -n "${ICOUNT_KEEP:-}" ] || rm -rf "$work"' EXIT
"$build/bin/mpicc" -O2 -g -o "$work/icount" "$root/tools/icount/icount.c"

# measure <lib dir or ""> <path> <run>: callgrind's inclusive counts.
measure() {
    local tag=${1:+base}
    local out=$work/cg.$2.$3.${tag:-now}
    TERN_PROGRESS_SPIN=0 LD_LIBRARY_PATH=${1:-${LD_LIBRARY_PATH:-}} \
        "$build/tools/mpiexec/mpiexec" -n 2 sh -c '
        if [ "$PMI_RANK" = 0 ]; then
            exec valgrind -q --tool=callgrind --callgrind-out-file='"$out"' \
                --toggle-collect=bench_loop "$@"
        fi
        exec "$@"' icount "$work/icount" "$2" > /dev/null
    callgrind_annotate --inclusive=yes --auto=no "$out" > "$out.txt"
}

for p in $paths; do
    for r in $(seq "$runs"); do
        measure "" "$p" "$r"
        [ -z "$base" ] || measure "$base" "$p" "$r"
    done
done
python3 - "$work" "$base" $paths <<'PY'
import glob, re, sys
work, base, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
# callgrind_annotate splits a function's inclusive count by the file each
# part came from (inlined headers; the entry point's own file may show
# twice, by an absolute and a relative path); the whole is the largest.
line = re.compile(r"^\s*([\d,]+) \([^)]*\)\s+\S*?:(\S+)")
def counts(txt):
    whole = {}
    for l in open(txt):
        m = line.match(l)
        if m:
            n, fn = int(m.group(1).replace(",", "")), m.group(2)
            whole[fn] = max(whole.get(fn, 0), n)
    procs = {fn[1:]: n for fn, n in whole.items() if fn.startswith("PMPI_")}
    return procs, whole.get("tern_progress_idle", 0), whole.get("bench_loop", 0)
# The iterations and the window are icount.c's: 1,000 calls, the rate path
# 300 windows of 64.
def per_call(path, procs, loop):
    if path == "pingpong":
        return {"round trip": loop / 1000, "MPI_Send": procs.get("MPI_Send", 0) / 1000,
                "MPI_Recv": procs.get("MPI_Recv", 0) / 1000}
    if path == "rate":
        m = 300 * 64
        return {"MPI_Isend, a message": procs.get("MPI_Isend", 0) / m,
                "MPI_Waitall, a request": procs.get("MPI_Waitall", 0) / m}
    name = "MPI_" + path.capitalize()
    return {name: procs.get(name, 0) / 1000}
def best(path, tag):
    runs_seen = []
    for f in glob.glob(f"{work}/cg.{path}.*.{tag}.txt"):
        procs, idle, loop = counts(f)
        runs_seen.append((idle, per_call(path, procs, loop)))
    return min(runs_seen, key=lambda t: t[0])
head = "| path, 8 B, 2 ranks (rank 0) | instructions a call | idle an iteration |"
if base:
    head += " base | base idle | difference |"
print(head)
print("|" + "---|" * (head.count("|") - 1))
for p in paths:
    iters = 300 if p == "rate" else 1000
    idle, now = best(p, "now")
    if base:
        bidle, then = best(p, "base")
    for k, v in now.items():
        row = f"| {p}: {k} | {v:,.1f} | {idle / iters:,.1f} |"
        if base:
            b = then.get(k, 0)
            row += f" {b:,.1f} | {bidle / iters:,.1f} | {v - b:+,.1f} |"
        print(row)
PY
