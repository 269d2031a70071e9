#!/usr/bin/env python3
"""Checks the compare tool's report without running any MPI: --from-results
on a results.json of before the PyPI peers (Tern, Open MPI and MPICH
only, no "impls" in its meta) and on one with all six implementations.
Exits 0 when every check holds (python3 tools/compare/test_compare.py)."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peers  # noqa: E402

FAILED = []


def check(cond, what):
    if not cond:
        FAILED.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def results(impls, meta_extra):
    """A results.json: latency at 8 B and 4 KB, barrier, init at 2 ranks;
    each implementation's figures scaled by its place in the list."""
    raw = {}
    for n, impl in enumerate(impls):
        f = 1.0 + n / 10
        raw[impl] = {"latency": {"8": {"latency_us": [0.2 * f]}, "4096": {"latency_us": [0.9 / f]}},
                     "barrier": {"0": {"latency_us": [0.5 * f]}},
                     "init_np2": {"0": {"init_ms": [30 * f], "init_finalize_ms": [35 * f]}}}
    meta = {"date": "2026-11-29", "git": "test", "load_before": 0, "load_after": 0, "duration_s": 1,
            "rounds": 3, "quick": False, "ranks": 2, "launch_reps": 10, "coll_ranks": [], "halo_ranks": 4,
            "oversub_impls": ["tern", "openmpi"], "command": "test"}
    meta.update(meta_extra)
    return {"meta": meta, "library": {i: f"{i} library" for i in impls}, "limits": None, "limits_runs": [],
            "raw": raw, "failures": [], "inter_host": {"status": "off", "reason": "left out", "na": {}}}


def report(tmp, name, doc):
    path = os.path.join(tmp, f"{name}.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    out = os.path.join(tmp, name)
    p = subprocess.run([sys.executable, os.path.join(HERE, "compare.py"), "--from-results", path, "--out", out],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"{name}: --from-results exit {p.returncode}: {p.stderr[-500:]}")
    with open(os.path.join(out, "report.md")) as f:
        return f.read()


def main():
    with tempfile.TemporaryDirectory() as tmp:
        # Before the PyPI peers: three implementations, no "impls" or "benchmarks" in meta.
        old = report(tmp, "old", results(["tern", "openmpi", "mpich"], {}))
        lat = old.split("### latency", 1)[1].split("\n\n")[1]
        header = lat.splitlines()[0]
        check(all(peers.LABEL[i] in header for i in ("tern", "openmpi", "mpich")), "old: Debian peers' columns")
        check(not any(peers.LABEL[i] in header for i in ("mpich5", "openmpi5", "impi")),
              "old: no columns for peers that did not run")
        check("| point-to-point | ran | ran | ran |" in old, "old: what ran, three columns")
        check("threads" not in old.split("## What each", 1)[1].split("## Targets")[0],
              "old: kinds nobody ran are left out")
        # All six; Intel MPI best at 4 KB (largest factor divides), Open MPI best at 8 B.
        new = report(tmp, "new", results(peers.IMPLS, {"impls": peers.IMPLS, "left_out": {},
                                                       "benchmarks": ["latency", "barrier", "init"]}))
        header = new.split("### latency", 1)[1].split("\n\n")[1].splitlines()[0]
        check(all(peers.LABEL[i] in header for i in peers.IMPLS), "new: six columns")
        check(f"({peers.LABEL['impi']})" in new.split("| latency 4 KB |", 1)[1].splitlines()[0],
              "new: targets name the best peer (Intel MPI at 4 KB)")
        check(f"({peers.LABEL['openmpi']})" in new.split("| latency 0-64 B", 1)[1].splitlines()[0],
              "new: targets name the best peer (Open MPI at 8 B)")
        for i in peers.IMPLS:
            check(f"{peers.LABEL[i]}: {i} library" in new, f"new: library line names {i}")
        # A peer left out: a line saying why, its column gone.
        doc = results(["tern", "openmpi", "mpich", "openmpi5", "mpich5"],
                      {"impls": peers.IMPLS, "left_out": {"impi": "impi-rt==2021.13.1 not installable"},
                       "benchmarks": ["latency", "barrier", "init"]})
        part = report(tmp, "part", doc)
        check("- Intel MPI 2021.13: not run at all: impi-rt==2021.13.1 not installable" in part,
              "part: the left-out peer's reason")
        check("Intel MPI 2021.13: not run" in part.split("Libraries", 1)[1].splitlines()[0],
              "part: library line says not run")
        # The VM's modes: Tern's median 8 B latency above 0.8x the best
        # peer's, its best round below; the best rounds' column says so.
        doc = results(["tern", "openmpi"], {})
        doc["raw"]["tern"]["latency"]["8"]["latency_us"] = [0.1, 0.3, 0.3]
        doc["raw"]["openmpi"]["latency"]["8"]["latency_us"] = [0.2, 0.25, 0.3]
        modes = report(tmp, "modes", doc).split("| latency 0-64 B", 1)[1].splitlines()[0]
        check("| 1.20 | 0.50 | <= 0.8 | best rounds only |" in modes,
              f"modes: median 1.20, best rounds 0.50, met by best rounds only: {modes}")
    if FAILED:
        print(f"test_compare: {len(FAILED)} check(s) failed", file=sys.stderr)
        return 1
    print("test_compare: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
