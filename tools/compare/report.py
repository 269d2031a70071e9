"""The comparison's report (compare.py): report.md with the issues'
targets, this machine's limits, each section's tables and the plots;
the generated section of docs/performance.md (--update-doc).
"""
import os
import platform
import shutil
import sys

import halo
import iobench
from results import (COLL, IMPLS, INIT_COLUMNS, INIT_RANKS, INTER, LABEL, LAUNCH_RANKS,
                     METRIC, MT, MT_THREADS, OVERSUB_IMPLS, P2P, RMA, coll_key)
from runner import log
from report_tables import BestPeer, best_peer, fmt, ratio, size_label, table, targets_table, targets_text
from inter_host import inter_section, inter_targets


def targets(res):
    """(description, Tern, best peer, worst ratio, bound, met) per target of the issue."""
    rows = []

    def worst(key, metric, sizes, higher):
        rs = []
        for s in sizes:
            t = res.median("tern", key, s, metric)
            b, p = best_peer(res, key, s, metric, higher)
            r = ratio(t, b)
            if r is None:
                # No ratio; what there is says which side lacks figures.
                return None, None, t, (BestPeer(b, p) if b is not None else None)
            rs.append((r, s, t, BestPeer(b, p)))
        if not rs:
            return None, None, None, None
        r, s, t, b = (min if higher else max)(rs, key=lambda x: x[0])
        return r, s, t, b

    lat_small = [s for s in res.sizes("latency") if s <= 64]
    r, s, t, b = worst("latency", "latency_us", lat_small, False)
    rows.append(("latency 0-64 B (worst size" + (f": {size_label(s)})" if s is not None else ")"), t, b, r, "<= 0.8", r is not None and r <= 0.8, "us"))
    r, s, t, b = worst("latency", "latency_us", [4096] if 4096 in res.sizes("latency") else [], False)
    rows.append(("latency 4 KB", t, b, r, "<= 0.8", r is not None and r <= 0.8, "us"))
    for key, metric in (("bw", "bw_mbs"), ("bibw", "bibw_mbs")):
        big = [s for s in res.sizes(key) if 256 << 10 <= s <= 4 << 20]
        r, s, t, b = worst(key, metric, big, True)
        rows.append((f"{key} 256 KB-4 MB (worst size" + (f": {size_label(s)})" if s is not None else ")"), t, b, r, ">= 1.2", r is not None and r >= 1.2, "MB/s"))
    rows += rma_targets(res, worst)
    rows += coll_targets(res, worst)
    rows += mt_targets(res, worst)
    big = [s for s in res.sizes("bw_distinct") if 1 << 20 <= s <= 4 << 20]
    if big:
        r, s, t, b = worst("bw_distinct", "bw_mbs", big, True)
        rows.append(("bw, distinct buffers, 1-4 MB (worst size" + (f": {size_label(s)})" if s is not None else ")"), t, b, r, ">= 1.2", r is not None and r >= 1.2, "MB/s"))
    for n in INIT_RANKS:
        r, s, t, b = worst(f"init_np{n}", "init_finalize_ms", [0], False)
        rows.append((f"MPI_Init+MPI_Finalize, {n} ranks (ms)", t, b, r, "<= 0.5", r is not None and r <= 0.5, "ms"))
    r, s, t, b = worst(f"launch_np{LAUNCH_RANKS}", "wall_ms", [0], False)
    rows.append((f"mpiexec -n {LAUNCH_RANKS} trivial, wall clock (ms)", t, b, r, "<= 1.0", r is not None and r <= 1.0, "ms"))
    if res.inter["status"] == "ran":
        rows += inter_targets(res)
    return rows


# Issue 17's collective targets: 8 B and 64 KB (barrier: its one row), at
# most 0.8x the best peer with ranks one per core, at most 1.0x
# oversubscribed; multi_lat at most 1.0x at every size.
COLL_TARGET_SIZES = [8, 64 << 10]


def coll_targets(res, worst):
    rows = []
    cores = os.cpu_count() or 1
    for n in [res.ranks] + res.coll_ranks:
        bound = 0.8 if n <= cores else 1.0
        for c in COLL:
            key = coll_key(c, n, res.ranks)
            have = res.sizes(key)
            if not have:
                continue
            sizes = have if c == "barrier" else [s for s in COLL_TARGET_SIZES if s in have]
            r, s, t, b = worst(key, "latency_us", sizes, False)
            what = f"{c}, {n} ranks" + ("" if n <= cores else " oversubscribed")
            what += "" if c == "barrier" else ", 8 B and 64 KB" + (f" (worst: {size_label(s)})" if s is not None else "")
            rows.append((what, t, b, r, f"<= {bound}", r is not None and r <= bound, "us"))
    if res.sizes("multi_lat"):
        r, s, t, b = worst("multi_lat", "latency_us", res.sizes("multi_lat"), False)
        rows.append(("multi_lat, every size" + (f" (worst: {size_label(s)})" if s is not None else ""),
                     t, b, r, "<= 1.0", r is not None and r <= 1.0, "us"))
    return rows


def rma_targets(res, worst):
    """One node, one-sided (issue 13): rows only for the benchmarks that ran."""
    rows = []
    for key, sizes, bound, higher, what in (
            ("put_lat", lambda s: s <= 4096, 0.5, False, "put latency 1 B-4 KB"),
            ("get_lat", lambda s: s <= 4096, 0.5, False, "get latency 1 B-4 KB"),
            ("put_bw", lambda s: 64 << 10 <= s <= 4 << 20, 1.2, True, "put bw 64 KB-4 MB"),
            ("get_bw", lambda s: 64 << 10 <= s <= 4 << 20, 1.2, True, "get bw 64 KB-4 MB"),
            ("fop_lat", lambda s: True, 0.5, False, "fetch_and_op latency"),
            ("cas_lat", lambda s: True, 0.5, False, "compare_and_swap latency")):
        if not res.sizes(key):
            continue
        metric, unit, _ = METRIC[key]
        r, s, t, b = worst(key, metric, [s for s in res.sizes(key) if sizes(s)], higher)
        met = r is not None and (r >= bound if higher else r <= bound)
        rows.append((what + (f" (worst size: {size_label(s)})" if s is not None else ""), t, b, r,
                     f"{'>=' if higher else '<='} {bound}", met, unit))
    return rows


def mt_targets(res, worst):
    """Issue 29: with 1, 2 and 4 threads per rank, 8 B, Tern at least as fast as
    the best peer (latency at most 1.0x, message rate at least 1.0x)."""
    rows = []
    for key in MT:
        if 8 not in res.sizes(key):
            continue
        base, unit, higher = METRIC[key]
        for n in MT_THREADS:
            metric = base[:-1] + str(n)
            # Rows by the figures there are, whatever res.stat selects.
            if not res.raw["tern"].get(key, {}).get("8", {}).get(metric):
                continue
            r, s, t, b = worst(key, metric, [8], higher)
            met = r is not None and (r >= 1.0 if higher else r <= 1.0)
            rows.append((f"{key}, {n} thread{'s' if n > 1 else ''} per rank, 8 B", t, b, r,
                         f"{'>=' if higher else '<='} 1.0", met, unit))
    return rows


def plots(res, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing (apt install python3-matplotlib): no plots")
        return []
    made = []
    for key in P2P + RMA + COLL + [f"inter_{n}" for n in INTER + RMA]:
        metric, unit, higher = METRIC[key.replace("inter_", "")]
        sizes = [s for s in res.sizes(key) if s > 0]
        if len(sizes) < 2:
            continue
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for impl in IMPLS:
            pts = [(s, res.median(impl, key, s, metric)) for s in sizes]
            pts = [(s, v) for s, v in pts if v]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3, label=LABEL[impl])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel(("bandwidth" if higher else "latency") + f" ({unit})")
        ax.set_title(f"{key} (median over rounds)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        name = f"{key}.png"
        fig.savefig(os.path.join(outdir, name), dpi=100)
        plt.close(fig)
        made.append(name)
    return made


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def write_report(res, limits, args, meta, outdir, pngs):
    L = []
    L.append("# Tern vs Open MPI, MPICH and Intel MPI: side-by-side benchmarks\n")
    if args.quick:
        L.append("> **Quick mode: tiny sizes and iteration counts. This checks the tool end to end; "
                 "its figures are not measurements.**\n")
    if args.rounds < 3:
        L.append(f"> **Only {args.rounds} round(s): medians need at least 3 to shrug off one noisy run.**\n")
    load = meta["load_before"], meta["load_after"]
    if max(load) > 0.5 * (os.cpu_count() or 1):
        L.append(f"> **Noisy machine: load average {load[0]:.2f} before, {load[1]:.2f} after, on "
                 f"{os.cpu_count()} cores. Only a quiet machine gives figures worth comparing.**\n")
    L.append(f"Generated by `scripts/run-compare.sh` on {meta['date']} ({meta['duration_s']:.0f} s). "
             f"Machine: {machine()}. Tern {meta['git']}. Command: `{meta.get('command', '?')}`.\n")
    L.append("Libraries (`MPI_Get_library_version`, first line): " + "; ".join(
        f"{LABEL[i]}: " + ((res.library[i].strip().splitlines() or ['?'])[0] if i in res.library
                            else 'n/a' if res.raw.get(i) else 'not run')
        for i in IMPLS if i in res.library or i in res.impls) + ".\n")
    L.append(f"Method: the same `bench/` sources built with each implementation's `mpicc -O2`; "
             f"{args.rounds} rounds, and within each round every benchmark runs once per implementation, "
             f"in an order rotated from round to round; each figure is the median over rounds. "
             + (f"Point-to-point and collectives: {args.ranks} ranks bound one per core "
                f"(Tern and Open MPI `--bind-to core`, MPICH `-bind-to core`, Intel MPI "
                f"`-genv I_MPI_PIN_PROCESSOR_LIST allcores`). " if args.ranks <= (os.cpu_count() or 1) else
                f"Point-to-point and collectives: {args.ranks} ranks on {os.cpu_count()} cores, unbound and "
                f"oversubscribed (`--oversubscribe` for Open MPI). ")
             + f"Start-up: ranks unbound, oversubscribed above "
             f"{os.cpu_count()} cores. Each run checks the data it received.\n")

    L.append(ran_section(res, args, meta))
    L.append("## Targets\n")
    L.append(targets_text(res))
    L += targets_table(res, targets)
    L.append("")

    L.append("## This machine's limits, and Tern's distance to them\n")
    if limits:
        mc = limits.get("memcpy_gbs", {})
        L.append("| memcpy, one thread | " + " | ".join(size_label(s) for s in mc) + " |")
        L.append("|---|" + "---:|" * len(mc))
        L.append("| GB/s | " + " | ".join(f"{v:.1f}" for v in mc.values()) + " |\n")
        cl = limits.get("cacheline_ns")
        if cl:
            L.append(f"Cross-core cache-line transfer, one way (flag ping-pong, cores 0 and 1): median "
                     f"{cl:.0f} ns, best {limits.get('cacheline_ns_min', cl):.0f} ns.\n")
        t1 = res.median("tern", "latency", min(res.sizes("latency") or [0]), "latency_us")
        if cl and t1:
            L.append(f"- Tern's smallest-message latency, {t1 * 1e3:.0f} ns, is {t1 * 1e3 / cl:.2f} cache-line "
                     f"transfers (a one-way message needs at least one).")
        for s in (65536, 1 << 20, 4 << 20):
            t = res.median("tern", "bw", s, "bw_mbs")
            m = mc.get(str(s))
            if t and m:
                L.append(f"- Tern's bandwidth at {size_label(s)}: {t / 1e3:.1f} GB/s, {100 * t / 1e3 / m:.0f}% of "
                         f"memcpy at that size ({m:.1f} GB/s; a single-copy transfer can approach 100%, "
                         f"a copy in and out of a shared buffer about 50%).")
        L.append("")
    else:
        L.append("(memlimits did not run)\n")

    L.append(f"## Point-to-point ({args.ranks} ranks)\n")
    for key in P2P:
        if res.sizes(key):
            metric, unit, higher = METRIC[key]
            L.append(f"### {key} ({'higher' if higher else 'lower'} is better)\n")
            L.append(table(res, key, metric, unit, higher) + "\n")
    key = "mbw_mr"
    if res.sizes(key):
        L.append("### mbw_mr message rate (messages/s, higher is better)\n")
        L.append(table(res, key, "msg_rate", "msg/s", True) + "\n")

    L.append(mt_section(res, args))

    if any(res.sizes(k) for k in RMA):
        L.append(f"## One-sided ({args.ranks} ranks; ranks 0 and 1 share the window)\n")
        L.append(f"Synchronisation `-s {getattr(args, 'rma_sync', None) or 'default'}`, window "
                 f"`-w {getattr(args, 'rma_win', None) or 'allocate'}` (default: flush, put_bibw pscw; "
                 "see bench/rma_driver.h).\n")
        for key in RMA:
            if res.sizes(key):
                metric, unit, higher = METRIC[key]
                L.append(f"### {key} ({'higher' if higher else 'lower'} is better)\n")
                L.append(table(res, key, metric, unit, higher) + "\n")
    L.append("## Start-up\n")
    cols = res.columns(*[f"init_np{n}" for n in INIT_RANKS], f"launch_np{LAUNCH_RANKS}")
    L.append("| figure | " + " | ".join(LABEL[i] for i in cols) + " | Tern / best peer |")
    L.append("|---|" + "---:|" * (len(cols) + 1))
    for n in INIT_RANKS:
        for metric, what in (("init_ms", "MPI_Init"), ("init_finalize_ms", "MPI_Init+MPI_Finalize")):
            key = f"init_np{n}"
            vals = [res.median(i, key, 0, metric) for i in cols]
            b, _ = best_peer(res, key, 0, metric, False)
            r = ratio(vals[0], b)
            L.append(f"| {what}, {n} ranks, max over ranks (ms) | " + " | ".join(fmt(v) for v in vals) +
                     f" | {f'{r:.2f}' if r else 'n/a'} |")
    key = f"launch_np{LAUNCH_RANKS}"
    vals = [res.median(i, key, 0, "wall_ms") for i in cols]
    b, _ = best_peer(res, key, 0, "wall_ms", False)
    r = ratio(vals[0], b)
    L.append(f"| `mpiexec -n {LAUNCH_RANKS}` trivial program, wall clock (ms, median of {args.launch_reps}) | " +
             " | ".join(fmt(v) for v in vals) + f" | {f'{r:.2f}' if r else 'n/a'} |\n")
    L.append(init_table(res))

    L.append(f"## Collectives ({args.ranks} ranks, average latency over ranks)\n")
    missing = [c for c in COLL if not res.raw["tern"].get(c)]
    if missing:
        L.append(f"Tern: not available yet (did not build or run): {', '.join(missing)}.\n")
    for key in COLL:
        if res.sizes(key):
            metric, unit, higher = METRIC[key]
            L.append(f"### {key}\n")
            L.append(table(res, key, metric, unit, higher) + "\n")

    for n in res.coll_ranks:
        keys = [c for c in COLL if res.sizes(coll_key(c, n, res.ranks))]
        if not keys:
            continue
        ran = [LABEL[i] for i in IMPLS if any(res.raw[i].get(coll_key(c, n, res.ranks)) for c in keys)]
        L.append(f"## Collectives ({n} ranks, average latency over ranks)\n")
        if n > (os.cpu_count() or 1):
            L.append(f"{n} ranks on {os.cpu_count()} cores, unbound and oversubscribed (`--oversubscribe` "
                     f"for Open MPI); run for {', '.join(ran)} (`--oversub-impls`: an MPI whose waiting ranks "
                     "spin without yielding takes minutes per benchmark here).\n")
        for c in keys:
            L.append(f"### {c}, {n} ranks\n")
            L.append(table(res, coll_key(c, n, res.ranks), "latency_us", "us", False) + "\n")

    L.append(halo.section(res, table, args.halo_ranks))
    L.append(iobench.section(res, lambda i: LABEL[i], fmt, getattr(args, "io_ranks", []), meta))
    L.append(inter_section(res, args))

    if pngs:
        L.append("## Plots\n")
        for p in pngs:
            L.append(f"![{p[:-4]}]({p})\n")
    if res.failures:
        L.append("## Failed runs\n")
        for f in res.failures:
            L.append("```\n" + f.strip() + "\n```\n")
    text = "\n".join(L)
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write(text)
    return text


def ran_kinds(res, meta):
    """(kind, keys asked, reason for an implementation without any, or
    None) per benchmark kind of this run."""
    cores = os.cpu_count() or 1
    oversub = meta.get("oversub_impls") or OVERSUB_IMPLS
    wanted = meta.get("benchmarks")
    # Results of before this table do not say what was asked: what gave figures.
    have = {k for i in IMPLS for k in res.raw.get(i, {})}
    asked = (lambda b: b in wanted) if wanted else \
        (lambda b: any(k == b or k.startswith(b + "_") for k in have))
    kinds = [("point-to-point", [k for k in P2P if asked(k)], None),
             ("threads", [k for k in MT if asked(k)], None),
             ("one-sided", [k for k in RMA if asked(k)], None)]
    for n in [res.ranks] + res.coll_ranks:
        over = n > cores
        kinds.append((f"collectives, {n} ranks" + (" (oversubscribed)" if over else ""),
                      [coll_key(c, n, res.ranks) for c in COLL if asked(c)],
                      (lambda i: f"{n} ranks on {cores} cores and not in --oversub-impls "
                                 "(its waiting ranks spin without yielding)" if i not in oversub else None)
                      if over else None))
    hr = meta.get("halo_ranks", halo.RANKS)
    kinds.append((f"halo, {hr} ranks", [halo.key(d) for d in halo.DIMS] if asked(halo.NAME) else [],
                  (lambda i: f"{hr} ranks on {cores} cores and not in --oversub-impls" if i not in oversub else None)
                  if hr > cores else None))
    kinds.append(("start-up (init)", [f"init_np{n}" for n in INIT_RANKS] if asked("init") else [], None))
    kinds.append(("launch", [f"launch_np{LAUNCH_RANKS}"] if asked("launch") else [], None))
    io_keys = sorted({k for i in IMPLS for k in res.raw.get(i, {}) if k.startswith("io_")})
    kinds.append(("I/O", io_keys if asked(iobench.NAME) else [], None))
    inter_keys = sorted({k for i in IMPLS for k in res.raw.get(i, {}) if k.startswith("inter_")})
    inter = res.inter

    def inter_why(i):
        if inter.get("status") != "ran":
            return f"not run: {inter.get('reason', '?')}"
        if i in inter.get("na", {}):
            why = " ".join(inter["na"][i].split())
            return why if why.startswith("not run") else f"failed across the namespaces: {why[:200]}"
        return None
    kinds.append(("inter-host", inter_keys or (["inter_latency"] if inter.get("status") == "ran" else []),
                  inter_why))
    return kinds


def ran_section(res, args, meta):
    """Which benchmarks each implementation ran, and why not where it did
    not."""
    impls = [i for i in IMPLS if i in res.impls or res.raw.get(i)]
    L = ["## What each implementation ran\n",
         "ran: every benchmark of the kind asked for; k of m: those that gave figures; "
         "the reasons for the others below the table.\n",
         "| benchmarks | " + " | ".join(LABEL[i] for i in impls) + " |",
         "|---|" + "---|" * len(impls)]
    notes = []
    for kind, keys, why in ran_kinds(res, meta):
        if not keys:
            continue
        cells = []
        for i in impls:
            got = [k for k in keys if res.raw.get(i, {}).get(k)]
            if len(got) == len(keys):
                cells.append("ran")
                continue
            if i in res.left_out:
                cells.append("not run")
                continue
            reason = why(i) if why else None
            if not got and reason:
                cells.append("not run")
                notes.append(f"- {LABEL[i]}, {kind}: {reason if reason.startswith('not run') else 'not run: ' + reason}")
                continue
            cells.append(f"{len(got)} of {len(keys)}" if got else "not run")
            failed = [k for k in keys if k not in got and any(f.startswith(f"{LABEL[i]} {k}:") for f in res.failures)]
            absent = [k for k in keys if k not in got and k not in failed]
            if failed:
                notes.append(f"- {LABEL[i]}, {kind}: failed (see Failed runs): {', '.join(failed)}")
            if absent:
                notes.append(f"- {LABEL[i]}, {kind}: not run (did not build, or no figures): {', '.join(absent)}")
        L.append(f"| {kind} | " + " | ".join(cells) + " |")
    for i, why in res.left_out.items():
        notes.insert(0, f"- {LABEL[i]}: not run at all: {why}")
    L.append("")
    if notes:
        L += notes + [""]
    return "\n".join(L)


def mt_section(res, args):
    """MPI_THREAD_MULTIPLE: per benchmark, one table per thread count."""
    if not any(res.sizes(k) for k in MT):
        return ""
    L = ["## Threads (MPI_THREAD_MULTIPLE, 2 ranks unbound)\n",
         "Thread t of rank 0 pairs with thread t of rank 1 (bench/mt_driver.h): `latency_mt` ping-pongs "
         "(one-way latency averaged over the threads), `mr_mt` streams windows of 64 messages (messages "
         "per second of all the threads together). Each thread on a communicator of its own "
         "(`MPI_Comm_dup`), or with `_shared` all on one communicator with a tag each.\n"]
    for key in MT:
        if not res.sizes(key):
            continue
        base, unit, higher = METRIC[key]
        for n in MT_THREADS:
            metric = base[:-1] + str(n)
            if any(res.median(i, key, s, metric) is not None for i in res.columns(key) for s in res.sizes(key)):
                L.append(f"### {key}, {n} thread{'s' if n > 1 else ''} per rank "
                         f"({'higher' if higher else 'lower'} is better)\n")
                L.append(table(res, key, metric, unit, higher) + "\n")
    return "\n".join(L)


def init_table(res):
    """Start-up with connection set-up: Tern on libfabric (all / lazy)
    beside Tern's default and the peers' defaults."""
    L = ["### Start-up with network connections\n",
         "`tern-bench init` on one host, unbound. \"Tern ofi\" runs every rank over libfabric "
         "(`TERN_TRANSPORTS=self,ofi`: the provider Tern picks for TCP, `net`), so MPI_Init pays the connection set-up "
         "(`TERN_CONNECT=all`) or each first message does (`TERN_CONNECT=lazy`); Tern default and the "
         "peers use shared memory inside a host. First message: the first `MPI_Sendrecv` with each peer "
         "(rank + k / rank - k), max and mean over all ordered pairs; warm: the same exchange again.\n"]
    cols = [c for c in INIT_COLUMNS if any(res.raw.get(c, {}).get(f"init_np{n}") for n in INIT_RANKS)]
    if not cols:
        return "\n".join(L + ["(not run)\n"])
    L.append("| ranks | figure | " + " | ".join(LABEL[c] for c in cols) + " | ofi all / best peer | ofi lazy / best peer |")
    L.append("|---:|---|" + "---:|" * (len(cols) + 2))
    figures = [("init_ms", "MPI_Init, max over ranks (ms)"),
               ("init_finalize_ms", "MPI_Init+MPI_Finalize, max (ms)"),
               ("first_message_us_max", "first message, max (us)"),
               ("first_message_us_mean", "first message, mean (us)"),
               ("warm_message_us_mean", "warm message, mean (us)")]
    for n in INIT_RANKS:
        key = f"init_np{n}"
        for metric, what in figures:
            b, _ = best_peer(res, key, 0, metric, False)
            rs = [ratio(res.median(c, key, 0, metric), b) for c in ("tern_ofi_all", "tern_ofi_lazy")]
            L.append(f"| {n} | {what} | " + " | ".join(fmt(res.median(c, key, 0, metric)) for c in cols) + " | " +
                     " | ".join(f"{r:.2f}" if r else "n/a" for r in rs) + " |")
    L.append("")
    return "\n".join(L)


BEGIN, END = "<!-- compare-report:begin -->", "<!-- compare-report:end -->"


def update_doc(doc, text, outdir, pngs):
    """Replaces the generated section of doc with the report; the plots go to
    <doc dir>/performance/ and the links are rewritten to point there."""
    with open(doc) as f:
        cur = f.read()
    if BEGIN not in cur or END not in cur:
        sys.exit(f"compare: {doc} has no {BEGIN} ... {END} section")
    imgdir = os.path.join(os.path.dirname(os.path.abspath(doc)), "performance")
    os.makedirs(imgdir, exist_ok=True)
    for p in pngs:
        shutil.copy(os.path.join(outdir, p), os.path.join(imgdir, p))
        text = text.replace(f"]({p})", f"](performance/{p})")
    # The report's headings go two levels down, under the document's own.
    text = "\n".join("##" + line if line.startswith("#") else line for line in text.splitlines())
    head, rest = cur.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(doc, "w") as f:
        f.write(head + BEGIN + "\n" + text.strip() + "\n" + END + tail)
    log(f"updated {doc} (plots in {imgdir})")
