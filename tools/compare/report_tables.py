"""The report's figures and tables (compare.py): number and size
formats, the best peer of a figure and Tern's ratio to it, a benchmark's
table by size, and the targets tables by the medians, by each
implementation's best round and within each VM mode (modes.py).
"""

import modes
from results import IMPLS, LABEL


def fmt(v, unit=""):
    if v is None:
        return "n/a"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 100:
        return f"{v:.1f}"
    return f"{v:.2f}"


def size_label(s):
    s = int(s)
    if s >= 1 << 20 and s % (1 << 20) == 0:
        return f"{s >> 20} MB"
    if s >= 1024 and s % 1024 == 0:
        return f"{s >> 10} KB"
    return f"{s} B"


def best_peer(res, key, size, metric, higher):
    """(value, impl) of the best peer that has this figure, or (None, None)."""
    vals = [(res.median(p, key, size, metric), p) for p in IMPLS if p != "tern"]
    vals = [(v, p) for v, p in vals if v is not None]
    if not vals:
        return None, None
    return (max if higher else min)(vals)


class BestPeer(float):
    """The best peer's figure, knowing whose it is (the targets table
    names it)."""

    def __new__(cls, value, impl):
        self = super().__new__(cls, value)
        self.impl = impl
        return self


def fmt_best(b, unit=""):
    """A best peer's figure with its name when known."""
    return fmt(b, unit) + (f" ({LABEL.get(b.impl, b.impl)})" if getattr(b, "impl", None) else "")


def ratio(t, b):
    return t / b if t is not None and b else None


def table(res, key, metric, unit, higher):
    cols = res.columns(key)
    lines = [f"| size | {' | '.join(LABEL[i] + ' (' + unit + ')' for i in cols)} | Tern / best peer |",
             "|---:|" + "---:|" * (len(cols) + 1)]
    for s in res.sizes(key):
        t = res.median("tern", key, s, metric)
        b, _ = best_peer(res, key, s, metric, higher)
        r = ratio(t, b)
        cells = [fmt(res.median(i, key, s, metric), unit) for i in cols]
        lines.append(f"| {size_label(s)} | {' | '.join(cells)} | {f'{r:.2f}' if r else 'n/a'} |")
    return "\n".join(lines)


def rows_by(res, rows_of, stat):
    """rows_of(res) with res.stat set to stat."""
    res.stat = stat
    try:
        return rows_of(res)
    finally:
        res.stat = "median"


def mode_cell(row):
    """One mode's column: the ratio and the peer best in that mode, or
    which side drew no run of it."""
    _, t, b, r = row[:4]
    if r:
        return f"{r:.2f} ({LABEL.get(b.impl, b.impl)})" if getattr(b, "impl", None) else f"{r:.2f}"
    if t is not None and b is None:
        return "Tern only"
    if t is None and b is not None:
        return "peers only"
    return "not drawn"


def paired_met(by_mode, medians_met):
    """The met column of a run with mode probes: met in every mode that
    Tern and a peer both drew, naming the modes without a pair."""
    paired = [m for m, row in by_mode.items() if row[3]]
    unpaired = [m for m in by_mode if m not in paired]
    if not paired:
        return f"unpaired; medians: {medians_met}"
    met = [m for m in paired if by_mode[m][5]]
    if len(met) < len(paired):
        return f"{' and '.join(met)} only" if met else "no"
    return "yes" + (f" ({' and '.join(unpaired)} unpaired)" if unpaired else "")


def targets_table(res, rows_of, paired=True):
    """The lines of a targets table for rows_of(res) (rows of (description,
    Tern, best peer, ratio, bound, met, unit)), by the medians, again with
    every figure taken from its implementation's best round and, when the
    run probed the VM's mode (modes.py), within each mode: Tern's median
    over its runs of that mode against the best peer's over theirs. Met:
    by the modes where there are probes, else by the medians. paired=False:
    no mode columns (runs that are never probed, e.g. inter-host)."""
    best = rows_by(res, rows_of, "best")
    mode_list = res.split.modes() if res.split.count and paired else []
    by_mode = {m: rows_by(res, rows_of, m) for m in mode_list}
    L = ["| target | Tern | best peer | Tern / best peer | best rounds: Tern / best peer | " +
         "".join(f"{m} mode: Tern / best peer | " for m in mode_list) + "required | met |",
         "|---|---:|---:|---:|---:|" + "---:|" * len(mode_list) + "---|---|"]
    for n, ((desc, t, b, r, bound, met, unit), bst) in enumerate(zip(rows_by(res, rows_of, "median"), best)):
        rb, metb = bst[3], bst[5]
        medians_met = "yes" if met else ("best rounds only" if metb else ("no" if r else "n/a"))
        rows = {m: by_mode[m][n] for m in mode_list}
        L.append(f"| {desc} | {fmt(t, unit)} | {fmt_best(b, unit)} | {f'{r:.2f}' if r else 'n/a'} | "
                 f"{f'{rb:.2f}' if rb else 'n/a'} | " + "".join(f"{mode_cell(row)} | " for row in rows.values()) +
                 f"{bound} | {paired_met(rows, medians_met) if mode_list else medians_met} |")
    return L


def targets_text(res):
    """What the targets table's columns and its met column mean here."""
    text = ("Medians over rounds, as every table below; \"best rounds\" takes each implementation's "
            "best round instead (lowest time, highest rate). The VM flips between a fast and a slow mode "
            "for every MPI (docs/performance.md, \"Noise\"), so a median can set one library's fast draws "
            "against another's slow ones. ")
    if not res.split.count:
        return text + ("These results have no mode probes: nothing is paired. Met: \"yes\" by the medians; "
                       "\"best rounds only\" when only the best rounds meet it.\n")
    counts = {}
    for impl in res.probes:
        for key in res.probes[impl]:
            for t in modes.tags(res.split, res.probes, impl, key):
                counts[t] = counts.get(t, 0) + 1
    drawn = ", ".join(f"{m} {counts[m]}" for m in (modes.FAST, modes.SLOW, modes.ONE, modes.MIXED) if counts.get(m))
    return text + (f"Every benchmark run sits between two mode probes (`memlimits --probe`): "
                   f"{res.split.describe()}; runs per mode: {drawn} (mixed: the probes disagreed, paired with "
                   "nothing). Each mode's column sets Tern's median over its runs of that mode against the "
                   "best peer's over theirs (named: the best may differ by mode); \"Tern only\" / \"peers "
                   "only\" / \"not drawn\": no pair in that mode. Met: met in every mode that Tern and a peer "
                   "both drew (\"fast only\": met there, not in the other; the unpaired modes named); a row "
                   "without tagged runs (start-up and launch are not probed) says \"unpaired\" and goes by the "
                   "medians.\n")
