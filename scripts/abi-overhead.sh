#!/bin/bash
# The instruction cost of a call through the standard ABI's layer
# (libmpi_abi) against the same call into libtern (docs/performance.md,
# "The standard ABI's overhead"): tests/abi/abi_overhead.c built with the
# build tree's mpicc and mpicc_abi, 2 ranks, rank 0 under callgrind
# collecting in the bench_ functions only, the other rank natively. Prints,
# per procedure and run, the calls and the inclusive instructions per call
# less the idle waits under it (tern_progress_idle: time spent waiting for
# the peer, not work), and the idle waits counted.
# Usage: scripts/abi-overhead.sh [BUILD_DIR [RUNS]]   (default: build, 3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
runs=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/bin/mpicc" -O2 -g -o "$work/libtern" "$root/tests/abi/abi_overhead.c"
"$build/bin/mpicc_abi" -O2 -g -o "$work/libmpi_abi" "$root/tests/abi/abi_overhead.c"
procs="MPI_Send MPI_Recv MPI_Isend MPI_Wait MPI_Allreduce MPI_Wtime"
for r in $(seq "$runs"); do
    for v in libtern libmpi_abi; do
        out=$work/cg.$v.$r
        TERN_PROGRESS_SPIN=0 "$build/tools/mpiexec/mpiexec" -n 2 sh -c '
            if [ "$PMI_RANK" = 0 ]; then
                exec valgrind -q --tool=callgrind --callgrind-out-file='"$out"' \
                    --toggle-collect="bench_*" \
                    --separate-callers=12 '"$work/$v"'
            fi
            exec '"$work/$v" >/dev/null
        python3 - "$out" "$v" "$r" $procs <<'EOF'
import re, sys
path, variant, run, procs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
# callgrind's format: fn=(id) context (a function and, by
# --separate-callers, its callers joined by '), cost lines, and
# calls=N followed by the inclusive cost of those calls to cfn. A call
# counts for a procedure when it comes from outside every procedure (the
# program's own call; PMPI_X is the same procedure as MPI_X); an idle
# wait counts for the procedure in its caller chain.
names, incl, calls, idle = {}, {}, {}, {}
fn = cfn = None
pending = None
def name(tok):
    m = re.match(r"\((\d+)\)(?: (.*))?", tok)
    if m.group(2):
        names[m.group(1)] = m.group(2)
    return names[m.group(1)]
def chain(ctx):
    return [re.sub(r"^PMPI_", "MPI_", f) for f in ctx.split("'")]
for line in open(path):
    line = line.rstrip("\n")
    if line.startswith("fn="):
        fn = name(line[3:])
    elif line.startswith("cfn="):
        cfn = name(line[4:])
    elif line.startswith("calls="):
        pending = int(line[6:].split()[0])
    elif pending is not None and line and (line[0].isdigit() or line[0] in "+-*"):
        cost = int(line.split()[1])
        caller, callee = chain(fn), chain(cfn)[0]
        inside = [p for p in procs if p in caller]
        if callee in procs and not inside:
            calls[callee] = calls.get(callee, 0) + pending
            incl[callee] = incl.get(callee, 0) + cost
        elif callee == "tern_progress_idle" and inside:
            idle[inside[0]] = idle.get(inside[0], 0) + cost
        pending = None
for p in procs:
    n = calls.get(p, 0)
    if n:
        print(f"{variant} run {run}: {p}: {n} calls, "
              f"{(incl[p] - idle.get(p, 0)) / n:.0f} instructions per call "
              f"(idle waits {idle.get(p, 0) / n:.0f} per call, subtracted)")
EOF
    done
done
