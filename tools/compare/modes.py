"""The VM's modes, and each benchmark run's (docs/performance.md, "Noise").

The reference 2-vCPU KVM guest flips between a fast and a slow mode for
every MPI alike, sometimes from one benchmark run to the next, so a median
over rounds can set one library's fast draws against another's slow ones.
The compare tool runs `memlimits --probe` (the one-way time of a cache
line between cores 0 and 1, a few ms) right before and right after every
benchmark run and files the two figures beside the run's results
(results.json "probes":
{impl: {key: [[before_ns, after_ns] per run]}}). Here each run gets its tag:

- the split: Otsu's threshold on the logarithms of all the run's probe
  figures (the cut that maximises the variance between the two classes),
  so the threshold comes from this machine's own distribution, not from a
  number of this VM; the classes are two modes only when their geometric
  means are at least MODE_RATIO apart, otherwise every run is in ONE mode
  (smaller differences, e.g. this guest's 40 / 50 / 60 ns fast sub-modes,
  leave a benchmark's figures alike);
- a run is FAST or SLOW when both its probes fall on that side of the
  threshold, MIXED when they disagree (the mode flipped during the run: it
  pairs with nothing); with one probe missing the other decides.

Results without probes (reports of before these) have no tags: the targets
table then pairs nothing and says so.
"""
import math
import statistics

FAST, SLOW, ONE, MIXED = "fast", "slow", "one", "mixed"
# Two classes of probe figures are two modes when their geometric means are
# at least this factor apart (the fast and slow modes here: ~4x).
MODE_RATIO = 2.0


def otsu(values):
    """(threshold, low class geometric mean, high class geometric mean) of
    Otsu's split of log(values), or None with fewer than two distinct values."""
    logs = sorted(math.log(v) for v in values if v and v > 0)
    if len(logs) < 2 or logs[0] == logs[-1]:
        return None
    best = None
    for k in range(1, len(logs)):
        if logs[k] == logs[k - 1]:
            continue
        lo, hi = logs[:k], logs[k:]
        m0, m1 = statistics.fmean(lo), statistics.fmean(hi)
        between = len(lo) * len(hi) * (m1 - m0) ** 2
        if best is None or between > best[0]:
            best = (between, (logs[k - 1] + logs[k]) / 2, m0, m1)
    _, cut, m0, m1 = best
    return math.exp(cut), math.exp(m0), math.exp(m1)


class Split:
    """The modes of one run of the tool, from all its probe figures."""

    def __init__(self, probes):
        values = [v for keys in probes.values() for runs in keys.values() for run in runs for v in run if v]
        self.count = len(values)
        self.threshold = self.fast_ns = self.slow_ns = None
        found = otsu(values)
        if found and found[2] >= MODE_RATIO * found[1]:
            self.threshold, self.fast_ns, self.slow_ns = found
        elif values:
            self.fast_ns = statistics.median(values)

    @property
    def bimodal(self):
        return self.threshold is not None

    def modes(self):
        """The modes runs can be paired in: fast and slow, or the one."""
        return [FAST, SLOW] if self.bimodal else [ONE]

    def tag(self, run):
        """A run's mode from its [before_ns, after_ns] (either may be None)."""
        seen = [v for v in run if v]
        if not seen:
            return None
        if not self.bimodal:
            return ONE
        sides = {FAST if v < self.threshold else SLOW for v in seen}
        return sides.pop() if len(sides) == 1 else MIXED

    def describe(self):
        """One sentence for the report."""
        if not self.count:
            return "no mode probes in these results: nothing is paired"
        if not self.bimodal:
            return (f"{self.count} probe figures, one mode (median {self.fast_ns:.0f} ns; no two classes "
                    f"{MODE_RATIO:g}x apart): every run is paired with every other")
        return (f"{self.count} probe figures in two modes: fast about {self.fast_ns:.0f} ns, slow about "
                f"{self.slow_ns:.0f} ns, split at {self.threshold:.0f} ns (Otsu's threshold on their logarithms)")


def tags(split, probes, impl, key):
    """The tag of each run of impl's key, in the order of its figures (None
    for a run without probes)."""
    return [split.tag(run) for run in probes.get(impl, {}).get(key, [])]
