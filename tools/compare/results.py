"""The benchmarks of the comparison and the figures of a run (compare.py).

What each benchmark measures (METRIC: its figure, unit and direction), the
implementations' names, and Results: raw[impl][key][size][metric], one
value per round, with the medians the report reads (over rounds, each
figure's best round, or the runs of one VM mode: modes.py), filled from a
benchmark's JSON output (parse_json, file_doc) or from a saved
results.json.
"""
import json
import statistics

import modes
import peers


IMPLS = peers.IMPLS
LABEL = dict(peers.LABEL)
P2P = ["latency", "bw", "bw_distinct", "bibw", "bibw_distinct", "mbw_mr", "multi_lat"]
# Benchmarks that are another's program with options: bw and bibw with a
# send and a receive buffer per message of the window (cache-cold, as in
# applications), beside the OSU-style figure that reuses one buffer.
# One-sided benchmarks (bench/rma_driver.c).
RMA = ["put_lat", "get_lat", "put_bw", "get_bw", "put_bibw", "acc_lat", "get_acc_lat", "fop_lat", "cas_lat"]
# MPI_THREAD_MULTIPLE (bench/mt_driver.c): latency and message rate with 1, 2
# and 4 threads per rank, each thread on a communicator of its own, and all
# threads on one communicator with a tag each (the _shared variants). Run at
# 2 ranks unbound, so that the threads may use every core.
MT = ["latency_mt", "latency_mt_shared", "mr_mt", "mr_mt_shared"]
MT_THREADS = [1, 2, 4]
VARIANT = {"bw_distinct": ("bw", ["--distinct-buffers"]), "bibw_distinct": ("bibw", ["--distinct-buffers"]),
           "latency_mt_shared": ("latency_mt", ["--shared-comm"]), "mr_mt_shared": ("mr_mt", ["--shared-comm"])}
COLL = ["barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "gather", "scatter",
        "reduce_scatter"]
# benchmark -> (metric key, unit, higher is better)
METRIC = {"latency": ("latency_us", "us", False), "multi_lat": ("latency_us", "us", False),
          "bw": ("bw_mbs", "MB/s", True), "bibw": ("bibw_mbs", "MB/s", True),
          "bw_distinct": ("bw_mbs", "MB/s", True), "bibw_distinct": ("bibw_mbs", "MB/s", True),
          "mbw_mr": ("bw_mbs", "MB/s", True)}
for _m in MT:
    METRIC[_m] = ("latency_us_t1", "us", False) if _m.startswith("latency") else ("msg_rate_t1", "msg/s", True)
for _c in COLL:
    METRIC[_c] = ("latency_us", "us", False)
for _r in RMA:
    METRIC[_r] = {"put_bw": ("bw_mbs", "MB/s", True), "get_bw": ("bw_mbs", "MB/s", True),
                  "put_bibw": ("bibw_mbs", "MB/s", True)}.get(_r, ("latency_us", "us", False))
# Run when the ranks outnumber the cores (--oversub-impls): MPICH's waiting
# ranks, 4.0.2's and 5.0.2's, spin without yielding (a barrier of 4 ranks
# on 2 cores takes ~8 ms).
OVERSUB_IMPLS = ["tern", "openmpi", "openmpi5", "impi"]
INIT_RANKS = [2, 8, 32]
LAUNCH_RANKS = 8
# Tern with every rank on the network transport (libfabric, its TCP provider here), so that
# start-up pays connection set-up: each under its own name in the results.
TERN_OFI = {"tern_ofi_all": "all", "tern_ofi_lazy": "lazy"}
LABEL.update({"tern_ofi_all": "Tern ofi, connect all", "tern_ofi_lazy": "Tern ofi, connect lazy"})
INIT_COLUMNS = ["tern", "tern_ofi_all", "tern_ofi_lazy"] + IMPLS[1:]
# Inter-host benchmarks (one rank per namespace), stored as inter_<name>.
INTER = ["latency", "bw", "bibw"]


def higher_is_better(metric):
    """Rates and bandwidths are better high; times (_us, _ms) low."""
    return any(w in metric for w in ("bw", "mbs", "gbs", "rate"))


def coll_key(c, n, base_ranks):
    """A collective's results key: its name at the run's --ranks, name_npN
    at the extra rank counts of --coll-ranks."""
    return c if n == base_ranks else f"{c}_np{n}"


def parse_json(stdout):
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                pass
    return None


class Results:
    """raw[impl][key][size][metric] = [value per round]."""

    def __init__(self):
        self.raw = {i: {} for i in IMPLS + list(TERN_OFI)}
        self.library = {}
        self.failures = []
        # status "ran", "skipped" or "off"; reason; na: {impl: why it has no figures}
        self.inter = {"status": "off", "reason": "not run", "na": {}}
        # --ranks and the extra rank counts of --coll-ranks
        self.ranks, self.coll_ranks = 2, []
        # the implementations asked for (--impls), and {impl: why} of those
        # that could not run at all (not installed, no compiler)
        self.impls, self.left_out = list(IMPLS), {}
        # probes[impl][key] = [[before_ns, after_ns] per run] (modes.py);
        # probe_exe: memlimits, None where it did not build (no probes)
        self.probes, self.probe_exe = {}, None
        self.split = modes.Split({})

    def set_ranks(self, ranks, coll_ranks):
        self.ranks, self.coll_ranks = ranks, [n for n in coll_ranks if n != ranks]
        for c in COLL:
            for n in self.coll_ranks:
                METRIC[coll_key(c, n, ranks)] = METRIC[c]

    def add(self, impl, key, size, metric, value):
        self.raw[impl].setdefault(key, {}).setdefault(str(size), {}).setdefault(metric, []).append(value)

    # What median() gives: "median" over rounds, or each figure's "best"
    # round (the lowest time, the highest rate), or the median over the
    # runs of one mode (modes.FAST, SLOW or ONE: the runs its probes
    # tagged so). The VM under this machine flips between a fast and a
    # slow mode for every MPI, sometimes from one run to the next, so a
    # median of three compares mode draws; the targets table shows all.
    stat = "median"

    def median(self, impl, key, size, metric):
        vals = self.raw.get(impl, {}).get(key, {}).get(str(size), {}).get(metric)
        if not vals:
            return None
        if self.stat == "best":
            return (max if higher_is_better(metric) else min)(vals)
        if self.stat != "median":
            tags = modes.tags(self.split, self.probes, impl, key)
            # Tags and figures line up only when every run filed both.
            vals = [v for v, t in zip(vals, tags) if t == self.stat] if len(tags) == len(vals) else []
            if not vals:
                return None
        return statistics.median(vals)

    def sizes(self, key):
        s = set()
        for impl in IMPLS:
            s.update(int(x) for x in self.raw[impl].get(key, {}))
        return sorted(s)

    def columns(self, *keys):
        """The implementations with figures under any of keys (all keys
        when none given); Tern always."""
        return [i for i in IMPLS if i == "tern" or any(self.raw.get(i, {}).get(k) for k in keys)
                or (not keys and self.raw.get(i))]


# tern-bench init's figures outside its results rows (first message per peer).
INIT_EXTRA = ["first_message_us_max", "first_message_us_mean", "warm_message_us_max", "warm_message_us_mean"]


def file_doc(res, impl, key, doc):
    """Files one benchmark's JSON figures under impl/key."""
    if impl in IMPLS:
        res.library[impl] = doc.get("library", "?")
    for row in doc["results"]:
        for m, v in row.items():
            if m not in ("size", "iterations"):
                res.add(impl, key, row["size"], m, v)
    for m in INIT_EXTRA:
        if m in doc:
            res.add(impl, key, 0, m, doc[m])
