"""MPI-IO in the comparison (compare.py --benchmarks io).

tern-bench io (bench/bench_io.c, which uses only the MPI API) built with each
implementation's mpicc and run in the same interleaved rounds as the rest,
at --io-ranks (default 2 and 4), all writing and reading files in one
directory (--io-dir): MPICH's ROMIO and Open MPI's OMPIO on the same file
system as Tern. Patterns: block3d (a 3-D array through subarray views,
write_all/read_all), rows (independent row writes at offsets), segments
(IOR's layout, independent) and segments_coll (the same, _at_all). Each
run checks every element it read back (a wrong byte exits 2).

The implementations are the compare tool's (peers.py): Debian's MPICH and
Open MPI, and from PyPI MPICH 5.0.2, Open MPI 5.0.11 and Intel MPI 2021.13
(each with its own ROMIO or OMPIO), launched unbound.

Beside them, once per round and rank count, the machine's own limits:
io_devlimit (as many processes as ranks pwrite the same bytes per rank in
4 MB pieces into one file, then fsync) and io_readlimit (the same processes
pread them back from the page cache), filed as "posix", the plain loop no
library can beat by more than its noise.

IOR (github hpc/ior; --ior-src, default the conformance cache's
build-conformance/src/ior) is built with each implementation's mpicc and
run with its MPIIO backend, independent and with -c (collective), beside
the others; the best iteration's write and read bandwidth (its summary's Max) is
filed in GB/s.
"""
import os
import re
import shutil

import peers

NAME = "io"
# key -> (tern-bench io arguments, access mode)
PATTERNS = {"block3d": (["-p", "block3d"], "collective"),
            "rows": (["-p", "rows"], "independent"),
            "segments": (["-p", "segments"], "independent"),
            "segments_coll": (["-p", "segments", "-c"], "collective")}
IOR_MODES = {"ior": [], "ior_coll": ["-c"]}
METRICS = [("write_gbs", "write"), ("read_gbs", "read")]
ORDER = peers.IMPLS
# The plain POSIX loops' figures (tools/compare/io_devlimit.c, io_readlimit.c).
LIMIT = "posix"
LIMIT_LABEL = "plain POSIX loop"
# Targets (issue 25): collective at least 1.2x the best peer, independent
# at least equal.
BOUND = {"collective": 1.2, "independent": 1.0}


def toolchains(base):
    """base (peers.toolchains, the implementations that built) with
    io_launch: every launcher unbound (I/O does not care for binding, and
    4 ranks oversubscribe 2 cores)."""
    return {impl: dict(tc, io_launch=tc["launch"] + tc["unbound"]) for impl, tc in base.items()}


def key(name, n):
    return f"io_{name}_np{n}"


def build(run, log, repo, impl, tc, outdir):
    """tern-bench io with impl's mpicc; its path or None."""
    os.makedirs(outdir, exist_ok=True)
    exe = os.path.join(outdir, "io")
    rc, out, err = run([tc["mpicc"], "-O2", "-o", exe, os.path.join(repo, "bench", "bench_io.c")], 300,
                       env=peers.env(tc))
    if rc != 0:
        log(f"io: {impl}: tern-bench io did not build: {err[-500:]}")
        return None
    return exe


def build_ior(run, log, impl, tc, src, scratch, jobs):
    """IOR from src, configured with impl's mpicc, in scratch/ior/<impl>;
    the path of its binary or None (reason logged)."""
    bdir = os.path.join(scratch, "ior", impl)
    exe = os.path.join(bdir, "src", "ior")
    stamp = os.path.join(bdir, ".compare-built")
    if os.path.exists(exe) and os.path.exists(stamp):
        return exe
    shutil.rmtree(bdir, ignore_errors=True)
    shutil.copytree(src, bdir, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    env = dict(os.environ, **(tc.get("env") or {}))
    for cmd in (["./bootstrap"], ["./configure", f"CC={tc['mpicc']}", f"MPICC={tc['mpicc']}"],
                ["make", f"-j{jobs}"]):
        rc, out, err = run(cmd, 1200, env=env, cwd=bdir)
        if rc != 0:
            log(f"io: IOR for {impl}: {' '.join(cmd)} failed: {(err or out)[-500:]}")
            return None
    open(stamp, "w").close()
    return exe


def _env(tc):
    return peers.env(tc)


def run_limits(run, log, res, limits, n, mb, reps, args):
    """The machine's write and read limits for n processes of mb MB each
    (best of reps runs, as the benchmarks' figures are), filed under LIMIT
    for the "limit" key of rank count n."""
    got = {}
    path = os.path.join(args.io_dir, "posix-limit.dat")
    for m, tool in (("write_gbs", "devlimit"), ("read_gbs", "readlimit")):
        exe = limits.get(tool)
        if not exe:
            continue
        rc, out, err = run([exe, path, str(n), mb, "4096", reps], args.timeout)
        runs = [float(x) for x in re.findall(r"pieces: ([0-9.]+) GB/s", out or "")]
        if rc != 0 or not runs:
            res.failures.append(f"{LIMIT_LABEL} {tool}, {n} processes: exit {rc}\n{(err or out or '')[-500:]}")
            log(f"  {tool}, {n} processes: FAILED")
            continue
        got[m] = max(runs)
    res.raw.setdefault(LIMIT, {})
    for m, v in got.items():
        res.add(LIMIT, key("limit", n), 0, m, v)


def run_round(run, log, res, label, impls, tcs, exes, iors, args, quick, limits=None):
    """One round: every pattern and IOR mode at every rank count, the
    implementations in the round's order (impls), then the machine's
    limits (limits: {"devlimit": exe, "readlimit": exe})."""
    mb = "4" if quick else str(args.io_size)
    reps = "1" if quick else str(args.io_reps)
    os.makedirs(args.io_dir, exist_ok=True)
    for n in args.io_ranks:
        if limits:
            log(f"  io limits, {n} processes: {LIMIT_LABEL}")
            run_limits(run, log, res, limits, n, mb, reps, args)
        for name, (pargs, _) in PATTERNS.items():
            for impl in impls:
                if impl not in exes:
                    continue
                cmd = tcs[impl]["io_launch"] + ["-n", str(n), exes[impl]] + pargs + \
                    ["-s", mb, "-r", reps, "-d", args.io_dir, "--json"]
                log(f"  io {name}, {n} ranks: {label(impl)}")
                _file(run, log, res, label, impl, key(name, n), cmd, args.timeout, _env(tcs[impl]),
                      _parse_bench)
        for name, mode in IOR_MODES.items():
            for impl in impls:
                if impl not in iors:
                    continue
                # Every rank a block of -b per segment, -s segments, in
                # transfers of -t; -e: fsync after the write (as tern-bench
                # io syncs); the same bytes per rank as tern-bench io.
                b = "1m" if quick else "16m"
                segs = "2" if quick else str(max(1, int(args.io_size) // 16))
                cmd = tcs[impl]["io_launch"] + ["-n", str(n), iors[impl], "-a", "MPIIO", "-w", "-r", "-e",
                                                "-i", reps, "-b", b, "-t", "4m" if not quick else "256k",
                                                "-s", segs, "-o", os.path.join(args.io_dir, f"ior-{impl}.dat")] \
                    + mode
                log(f"  {name}, {n} ranks: {label(impl)}")
                _file(run, log, res, label, impl, key(name, n), cmd, args.timeout, _env(tcs[impl]),
                      _parse_ior)


def _parse_bench(out):
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{") and '"benchmark": "io"' in line:
            import json
            doc = json.loads(line)
            return {"write_gbs": doc["write_gbs"], "read_gbs": doc["read_gbs"]}
    return None


def _parse_ior(out):
    """Max(MiB) of the write and read rows of IOR's "Summary of all tests"
    (MiB/s, the best iteration), in GB/s."""
    got = {}
    summary = out.split("Summary of all tests:", 1)
    if len(summary) < 2 or re.search(r"\b(ERROR|Incorrect data)\b", out):
        return None
    for line in summary[1].splitlines():
        f = line.split()
        if len(f) > 1 and f[0] in ("write", "read"):
            got[f"{f[0]}_gbs"] = float(f[1]) * 1.048576 / 1e3
    return got if len(got) == 2 else None


def _file(run, log, res, label, impl, k, cmd, timeout, env, parse):
    rc, out, err = run(cmd, timeout, env=env)
    got = parse(out) if rc == 0 else None
    if not got:
        why = "timed out" if rc is None else f"exit {rc}"
        res.failures.append(f"{label(impl)} {k}: {why}: {' '.join(cmd)}\n{(err or out)[-1500:]}")
        log(f"  {label(impl)} {k}: FAILED ({why})")
        return
    for m, v in got.items():
        res.add(impl, k, 0, m, v)


def section(res, label, fmt, args_ranks, meta):
    """The report's section: per rank count, a table of write and read
    bandwidth (GB/s, median over rounds) per pattern and implementation,
    with Tern / best peer."""
    impls = [i for i in ORDER if any(k.startswith("io_") for k in res.raw.get(i, {}))]
    L = ["## Parallel I/O (MPI-IO: ROMIO in MPICH and Intel MPI, OMPIO in Open MPI)\n"]
    if "tern" not in impls:
        return "\n".join(L + ["(not run)\n"])
    L.append(f"`tern-bench io` (bench/bench_io.c) built with each implementation's mpicc, "
             f"{meta.get('io_size', '?')} MB per rank, best of {meta.get('io_reps', '?')} repetitions "
             f"per run, median over rounds; every MPI writes and reads files in the same directory "
             f"(`{meta.get('io_dir', '?')}`), ranks unbound; written data is synced (`MPI_File_sync`), reads "
             "come from the page cache. IOR: `ior -a MPIIO -w -r -e -b 16m -t 4m` with as many 16 MB "
             "segments as make the same bytes per rank, `-c` for collective. GB/s, higher is better. "
             "Targets (issue 25): collective at least 1.2x the best peer, independent at least 1.0x.\n")
    for n in args_ranks:
        rows = [(name, PATTERNS[name][1]) for name in PATTERNS] + [(name, "collective" if m else "independent")
                                                                  for name, m in IOR_MODES.items()]
        rows = [(nm, mode) for nm, mode in rows if res.raw["tern"].get(key(nm, n))]
        if not rows:
            continue
        L.append(f"### {n} ranks\n")
        L.append("| pattern | | " + " | ".join(label(i) for i in impls) + " | Tern / best peer | target |")
        L.append("|---|---|" + "---:|" * (len(impls) + 2))
        for nm, mode in rows:
            for m, what in METRICS:
                vals = {i: res.median(i, key(nm, n), 0, m) for i in impls}
                peers = [v for i, v in vals.items() if i != "tern" and v]
                best = max(peers) if peers else None
                r = vals["tern"] / best if vals["tern"] and best else None
                met = "n/a" if r is None else ("yes" if r >= BOUND[mode] else "no")
                L.append(f"| {nm} ({mode}) | {what} | " + " | ".join(fmt(vals[i]) for i in impls) +
                         f" | {f'{r:.2f}' if r else 'n/a'} | >= {BOUND[mode]}: {met} |")
        L.append("")
        L += limit_lines(res, fmt, n, rows)
    return "\n".join(L)


def limit_lines(res, fmt, n, rows):
    """Rank count n's limits and every row's distance to them: Tern's and
    the best peer's bandwidth as a share of the plain POSIX loop's."""
    lim = {m: res.median(LIMIT, key("limit", n), 0, m) for m, _ in METRICS}
    if not any(lim.values()):
        return []
    L = [f"The machine at {n} processes ({LIMIT_LABEL}, `tools/compare/io_devlimit.c` and `io_readlimit.c`: "
         f"{n} processes `pwrite` the same bytes per rank in 4 MB pieces into one file and `fsync`, then "
         f"`pread` them back from the page cache; best of the same repetitions, median over rounds): "
         f"write {fmt(lim['write_gbs'])} GB/s, read {fmt(lim['read_gbs'])} GB/s. Each row as a share of it "
         "(Tern / best peer):\n",
         "| pattern | write | read |", "|---|---:|---:|"]
    impls = [i for i in ORDER if any(k.startswith("io_") for k in res.raw.get(i, {}))]

    def share(nm, m):
        if not lim[m]:
            return "n/a"
        t = res.median("tern", key(nm, n), 0, m)
        peers = [v for v in (res.median(i, key(nm, n), 0, m) for i in impls if i != "tern") if v]
        return (f"{t / lim[m]:.2f}" if t else "n/a") + " / " + (f"{max(peers) / lim[m]:.2f}" if peers else "n/a")
    for nm, mode in rows:
        L.append(f"| {nm} ({mode}) | {share(nm, 'write_gbs')} | {share(nm, 'read_gbs')} |")
    L.append("")
    return L
