#!/usr/bin/env python3
"""Start-up scale on one host: `tern-bench init --memory` at 2-128 ranks
(oversubscribed) for Tern (shm; ofi with TERN_CONNECT=all and lazy) and the
peers (MPICH, Open MPI), with Tern's start-up profile (TERN_INIT_PROFILE=1).

Prints markdown tables: per-rank memory (RSS, PSS and their parts, after
MPI_Init and after the first exchange with every peer) with its growth per
added rank, Tern's deterministic start-up counts per step (PMI operations
and bytes on rank 0), and MPI_Init times, which on a loaded machine are
noise. docs/scale.md explains the figures and models larger jobs from them.

usage: tools/compare/scale.py --build BUILD_DIR [--ranks 2,4,...] [--impls tern,...]
       [--json OUT.json]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RANKS = [2, 4, 8, 16, 32, 64, 128]
IMPLS = ["tern", "tern-ofi-all", "tern-ofi-lazy", "mpich", "openmpi"]
LABEL = {"tern": "Tern (shm)", "tern-ofi-all": "Tern ofi, all", "tern-ofi-lazy": "Tern ofi, lazy",
         "mpich": "MPICH", "openmpi": "Open MPI"}
TIMEOUT_S = 600


def build_peer(mpicc, out):
    srcs = [os.path.join(REPO, "bench", f) for f in ("harness.c", "bench_init.c", "proc_memory.c")]
    subprocess.run([mpicc, "-O2", "-o", out, *srcs], check=True)
    return out


def command(impl, n, build, exes):
    if impl.startswith("tern"):
        env = {"TERN_INIT_PROFILE": "1"}
        if impl != "tern":
            env.update(TERN_TRANSPORTS="self,ofi", TERN_CONNECT=impl.rsplit("-", 1)[1])
        return [os.path.join(build, "tools", "mpiexec", "mpiexec"), "-n", str(n),
                os.path.join(build, "bench", "tern-bench-init"), "--json", "--memory"], env
    if impl == "mpich":
        return ["mpiexec.mpich", "-n", str(n), "-bind-to", "none", exes["mpich"], "--json", "--memory"], {}
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    return ["mpirun.openmpi", *root, "--oversubscribe", "--bind-to", "none", "-n", str(n), exes["openmpi"],
            "--json", "--memory"], {}


def parse_profile(stderr):
    """Rank 0's TERN_INIT_PROFILE lines: {step: {ms, puts, gets, fences, other, put_b, get_b}}."""
    steps = {}
    for line in stderr.splitlines():
        if not line.startswith("tern init-profile: "):
            continue
        words = line[len("tern init-profile: "):].rsplit(None, 7)
        if len(words) != 8 or words[0] == "step":
            continue
        try:
            nums = [float(w) for w in words[1:]]
        except ValueError:
            continue
        steps[words[0].strip()] = dict(zip(["ms", "puts", "gets", "fences", "other", "put_b", "get_b"], nums))
    return steps


def run_one(impl, n, build, exes):
    cmd, extra = command(impl, n, build, exes)
    env = dict(os.environ, **extra)
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {TIMEOUT_S} s"}
    res = None
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            try:
                res = json.loads(line)
            except ValueError:
                pass
    if p.returncode != 0 or res is None:
        return {"error": f"exit {p.returncode}: {(p.stderr or p.stdout)[-400:]}"}
    res["profile"] = parse_profile(p.stderr)
    return res


def mib(kb):
    return f"{kb / 1024:.1f}"


def memory_tables(data, impls, ranks):
    out = []
    for point, what in (("after_init", "after MPI_Init"), ("after_exchange", "after the first exchange with every peer")):
        out.append(f"\n#### Memory per rank {what} (MiB, mean over ranks)\n")
        out.append("RSS / PSS; growth: PSS added per added rank since the previous row (KiB).\n")
        out.append("| ranks | " + " | ".join(LABEL[i] + " RSS / PSS (growth)" for i in impls) + " |")
        out.append("|---" * (len(impls) + 1) + "|")
        prev = {}
        for n in ranks:
            cells = []
            for i in impls:
                r = data.get(i, {}).get(str(n))
                if not r or "memory" not in r:
                    cells.append("-" if not r else "failed")
                    continue
                m = r["memory"][point]
                rss, pss = m["rss_kb"]["mean"], m["pss_kb"]["mean"]
                grow = ""
                if i in prev:
                    pn, ppss = prev[i]
                    grow = f" ({(pss - ppss) / (n - pn):+.0f})"
                prev[i] = (n, pss)
                cells.append(f"{mib(rss)} / {mib(pss)}{grow}")
            out.append(f"| {n} | " + " | ".join(cells) + " |")
    out.append("\n#### Parts of each rank's memory after the first exchange (KiB, mean over ranks)\n")
    fields = ["segment_size_kb", "segment_rss_kb", "segment_pss_kb", "shared_pss_kb", "files_pss_kb",
              "anon_rss_kb", "malloc_kb"]
    out.append("| implementation | ranks | " + " | ".join(f.replace("_kb", "") for f in fields) + " |")
    out.append("|---" * (len(fields) + 2) + "|")
    for i in impls:
        for n in ranks:
            r = data.get(i, {}).get(str(n))
            if not r or "memory" not in r:
                continue
            m = r["memory"]["after_exchange"]
            out.append(f"| {LABEL[i]} | {n} | " + " | ".join(f"{m[f]['mean']:.0f}" for f in fields) + " |")
    return out


def profile_tables(data, impls, ranks):
    out = ["\n#### Tern's start-up steps: PMI operations of rank 0 (deterministic)\n",
           "puts / gets / fences, bytes put / got (keys and values), per step with any.\n"]
    for i in [x for x in impls if x.startswith("tern")]:
        out.append(f"\n{LABEL[i]}:\n")
        out.append("| ranks | step | puts | gets | fences | other | put B | get B |")
        out.append("|---|---|---|---|---|---|---|---|")
        for n in ranks:
            prof = data.get(i, {}).get(str(n), {}).get("profile", {})
            for step, v in prof.items():
                if step != "total" and not any(v[k] for k in ("puts", "gets", "fences", "other")):
                    continue
                out.append(f"| {n} | {step} | {v['puts']:.0f} | {v['gets']:.0f} | {v['fences']:.0f} | "
                           f"{v['other']:.0f} | {v['put_b']:.0f} | {v['get_b']:.0f} |")
    return out


def time_tables(data, impls, ranks):
    out = ["\n#### Times (loaded 2-core machine: noise, not results)\n",
           "MPI_Init max over ranks (ms); for Tern, rank 0's slowest steps from the profile.\n",
           "| ranks | " + " | ".join(LABEL[i] for i in impls) + " | Tern steps (shm / ofi all / ofi lazy, ms) |",
           "|---" * (len(impls) + 2) + "|"]
    for n in ranks:
        cells = []
        for i in impls:
            r = data.get(i, {}).get(str(n))
            cells.append(f"{r['results'][0]['init_ms']:.1f}" if r and "results" in r else "-")
        steps = []
        for i in [x for x in impls if x.startswith("tern")]:
            prof = data.get(i, {}).get(str(n), {}).get("profile", {})
            top = sorted(((v["ms"], s) for s, v in prof.items() if s != "total"), reverse=True)[:2]
            steps.append(", ".join(f"{s} {ms:.0f}" for ms, s in top) or "-")
        out.append(f"| {n} | " + " | ".join(cells) + " | " + " / ".join(steps) + " |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="Tern build directory (with bench/tern-bench-init)")
    ap.add_argument("--ranks", default=",".join(map(str, RANKS)))
    ap.add_argument("--impls", default=",".join(IMPLS))
    ap.add_argument("--json", help="also write the raw results here")
    args = ap.parse_args()
    ranks = [int(x) for x in args.ranks.split(",")]
    impls = [x for x in args.impls.split(",") if x]
    build = os.path.abspath(args.build)
    tmp = tempfile.mkdtemp(prefix="tern-scale-")
    exes = {}
    for impl, mpicc in (("mpich", "mpicc.mpich"), ("openmpi", "mpicc.openmpi")):
        if impl in impls:
            if not shutil.which(mpicc):
                sys.exit(f"scale: {mpicc} not found")
            exes[impl] = build_peer(mpicc, os.path.join(tmp, f"init-{impl}"))
    data = {}
    for n in ranks:
        for i in impls:
            print(f"scale: {LABEL[i]}, {n} ranks", file=sys.stderr, flush=True)
            data.setdefault(i, {})[str(n)] = r = run_one(i, n, build, exes)
            if "error" in r:
                print(f"scale:   {r['error']}", file=sys.stderr)
            if args.json:
                with open(args.json, "w") as f:
                    json.dump(data, f, indent=1)
    print("\n".join(memory_tables(data, impls, ranks) + profile_tables(data, impls, ranks)
                    + time_tables(data, impls, ranks)))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
