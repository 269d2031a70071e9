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
import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

import halo
import iobench
import modes
import peers

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))

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
HOSTS_SH = os.path.join(REPO, "scripts", "netns-hosts.sh")


def higher_is_better(metric):
    """Rates and bandwidths are better high; times (_us, _ms) low."""
    return any(w in metric for w in ("bw", "mbs", "gbs", "rate"))


def log(msg):
    print(f"[compare {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def run(cmd, timeout, env=None, cwd=None):
    """Runs cmd; returns (rc, stdout, stderr); rc None on timeout."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        # The partial output comes back as bytes, whatever text= says.
        dec = lambda b: (b.decode(errors="replace") if isinstance(b, bytes) else b) or ""
        return None, dec(e.stdout), dec(e.stderr)
    except OSError as e:
        return 127, "", str(e)


# ---------------------------------------------------------------- build

def build_tern(scratch, jobs):
    """Release build of this checkout, installed into scratch; returns the prefix."""
    bdir, prefix = os.path.join(scratch, "tern-build"), os.path.join(scratch, "tern-install")
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    steps = [["cmake", "-S", REPO, "-B", bdir, *gen, "-DCMAKE_BUILD_TYPE=Release", "-DTERN_WERROR=OFF",
              "-DTERN_SANITIZE=OFF", f"-DCMAKE_INSTALL_PREFIX={prefix}"],
             ["cmake", "--build", bdir, "-j", str(jobs)],
             ["cmake", "--install", bdir]]
    for cmd in steps:
        log(" ".join(cmd))
        rc, out, err = run(cmd, 1800)
        if rc != 0:
            sys.exit(f"compare: building Tern failed ({' '.join(cmd)}):\n{out[-3000:]}\n{err[-3000:]}")
    return prefix


def build_benchmarks(impl, tc, outdir, names):
    """Compiles every benchmark with this implementation's mpicc; returns
    {name: path} of those that built (a Tern without a collective lacks it)."""
    os.makedirs(outdir, exist_ok=True)
    bench = os.path.join(REPO, "bench")
    built, failed = {}, []
    for name in names + ["trivial"]:
        if name in VARIANT:
            continue
        if name == "trivial":
            srcs = [os.path.join(HERE, "trivial.c")]
        else:
            srcs = [os.path.join(bench, "harness.c"), os.path.join(bench, f"bench_{name}.c")]
            if name in COLL:
                srcs.append(os.path.join(bench, "coll_driver.c"))
            elif name in RMA:
                srcs.append(os.path.join(bench, "rma_driver.c"))
            elif name == "init":
                srcs.append(os.path.join(bench, "proc_memory.c"))
            elif name in MT:
                srcs.append(os.path.join(bench, "mt_driver.c"))
        exe = os.path.join(outdir, name)
        rc, out, err = run([tc["mpicc"], "-O2", "-o", exe, *srcs] + (["-pthread"] if name in MT else []), 300,
                           env=peers.env(tc))
        if rc == 0:
            built[name] = exe
        else:
            failed.append(name)
    for name, (base, _) in VARIANT.items():
        if name in names and base in built:
            built[name] = built[base]
    if failed:
        log(f"{LABEL[impl]}: not built (missing functions or compiler): {' '.join(failed)}")
    return built


# ---------------------------------------------------------------- running

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


def run_json(res, impl, key, cmd, timeout, env=None):
    """Runs one benchmark command and files its figures under impl/key;
    returns None, or why it failed (also logged in res.failures)."""
    rc, out, err = run(cmd, timeout, env=env)
    doc = parse_json(out) if rc == 0 else None
    if not doc:
        why = "timed out" if rc is None else f"exit {rc}"
        detail = f"{why}: {' '.join(cmd)}\n{(err or out)[-1500:]}"
        res.failures.append(f"{LABEL[impl]} {key}: {detail}")
        log(f"  {LABEL[impl]} {key}: FAILED ({why})")
        return detail
    file_doc(res, impl, key, doc)
    return None


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


def run_bench(res, impl, tc, exe, key, np, args, bound, timeout, env=None):
    """One benchmark run between two mode probes (modes.py), whose
    figures are filed beside its results when it succeeds."""
    cmd = tc["launch"] + ["-n", str(np)] + (tc["bind"] if bound else tc["unbound"]) + [exe] + args + ["--json"]
    before = probe_mode(res)
    failed = run_json(res, impl, key, cmd, timeout, env or peers.env(tc))
    if not failed and res.probe_exe:
        res.probes.setdefault(impl, {}).setdefault(key, []).append([before, probe_mode(res)])
    return failed


def probe_mode(res):
    """The cache-line time of `memlimits --probe` (ns), or None."""
    if not res.probe_exe:
        return None
    rc, out, _ = run([res.probe_exe, "--probe"], 30)
    doc = parse_json(out) if rc == 0 else None
    return doc.get("cacheline_ns") if doc else None


def tern_ofi_env(connect):
    """Every rank on libfabric (self for itself), connecting as asked."""
    return dict(os.environ, TERN_TRANSPORTS="self,ofi", TERN_CONNECT=connect)


# ---------------------------------------------------------------- inter-host

class Hosts:
    """Two network namespaces joined by a veth pair, an sshd in each
    (scripts/netns-hosts.sh). Torn down by close(), which main calls from a
    finally clause (SIGTERM and SIGINT end main through it too)."""

    def __init__(self):
        self.vars, self.reason = None, None
        if not os.path.exists(HOSTS_SH):
            self.reason = f"{HOSTS_SH} missing"
            return
        # Not run(): on a timeout or an exception here `up` gets SIGTERM,
        # whose trap undoes its partial set-up (SIGKILL would leak it).
        p = subprocess.Popen(["sh", HOSTS_SH, "up"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = p.communicate(timeout=120)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            p.terminate()
            out, err = p.communicate()
            rc, err = None, "timed out after 120 s; " + err
        except BaseException:
            p.terminate()
            p.communicate()
            raise
        for line in out.splitlines():
            if "=" in line:
                k, v = line.split("=", 1)
                self.vars = self.vars or {}
                self.vars[k] = shlex.split(v)[0] if v else ""
        if rc != 0:
            # A partial set-up undoes itself; this only covers a timeout.
            self.close()
            msg = " ".join((err or out).split()) or f"exit {rc}"
            self.reason = msg.replace("netns-hosts: cannot set up: ", "") if rc == 77 else f"set-up failed: {msg}"

    def reap(self):
        """Ends whatever a run left in the namespaces (all started by this
        tool), by pid, sparing the two listening sshds."""
        keep = set()
        for side in "ab":
            try:
                with open(os.path.join(self.vars["NETNS_DIR"], f"sshd-{side}.pid")) as f:
                    keep.add(int(f.read().strip()))
            except (OSError, ValueError):
                pass
        for sig in (signal.SIGTERM, signal.SIGKILL):
            left = False
            for ns in (self.vars["NETNS_A"], self.vars["NETNS_B"]):
                rc, out, _ = run(["ip", "netns", "pids", ns], 30)
                for pid in (int(x) for x in out.split() if x.isdigit()):
                    if pid not in keep:
                        try:
                            os.kill(pid, sig)
                            left = True
                        except OSError:
                            pass
            if not left:
                return
            time.sleep(0.5)

    def tcp_floor(self, exe, timeout):
        """The kernel's TCP floor on this link: tcp_pingpong.c served on host
        B, driven from host A. {size: one-way us} or None."""
        v = self.vars
        port = str(20000 + os.getpid() % 20000)
        server = subprocess.Popen([v["NETNS_ON_B"], exe, "-s", port], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            rc, out, err = run([v["NETNS_ON_A"], exe, "-c", v["NETNS_IPB"], port], timeout)
        finally:
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        doc = parse_json(out) if rc == 0 else None
        if not doc:
            log(f"  tcp floor: failed (exit {rc}): {err[-300:]}")
            return None
        return {int(k): v for k, v in doc["latency_us"].items()}

    def close(self):
        if self.vars and self.vars.get("NETNS_DIR"):
            run(["sh", HOSTS_SH, "down", self.vars["NETNS_DIR"]], 60)
            self.vars = None

    def command(self, impl, tc, exe, args):
        """The launcher command that runs exe with one rank on each host,
        each implementation over TCP; started on host A."""
        v = self.vars
        hosts = f"{v['NETNS_IPA']},{v['NETNS_IPB']}"
        on_a = [v["NETNS_ON_A"]]
        if impl == "tern":
            # Tern's mpiexec finds its way back over ssh when the launcher
            # is an ssh command line (not a wrapper script).
            return on_a + [tc["launch"][0], "--launcher", v["NETNS_SSH_CMD"],
                           "--hosts", hosts, "-ppn", "1", "-n", "2", exe] + args + ["--json"]
        if impl in ("openmpi", "openmpi5"):
            # Open MPI 5's launcher is PRRTE's: its agent is a PRRTE parameter.
            agent = ["--mca", "plm_rsh_agent"] if impl == "openmpi" else ["--prtemca", "plm_ssh_agent"]
            return on_a + tc["launch"] + agent + [v["NETNS_SSH"], "--host", hosts, "-n", "2",
                                                  "--map-by", "node", "--bind-to", "none",
                                                  "--mca", "pml", "ob1", "--mca", "btl", "tcp,self",
                                                  exe] + args + ["--json"]
        # Hydra (MPICH 4 and 5, Intel MPI). -iface: the proxies reach mpiexec
        # on the veth address, not through the host name. -ppn 1: Intel's
        # Hydra would fill the first host first.
        hydra = on_a + tc["launch"] + ["-launcher", "ssh", "-launcher-exec", v["NETNS_SSH"], "-hosts", hosts,
                                       "-ppn", "1", "-n", "2", "-iface", v["NETNS_IFA"]]
        if impl == "impi":
            # Intel MPI over libfabric's tcp provider (its own copy, found by
            # FI_PROVIDER_PATH, which Hydra passes on with the environment).
            return hydra + ["-genv", "I_MPI_PIN", "0", "-genv", "FI_PROVIDER", "tcp", exe] + args + ["--json"]
        # MPICH 4.0.2 (Debian) and 5.0.2 (PyPI) are ch4:ucx: UCX would see one
        # machine (same boot id) and use shared memory between the
        # namespaces; real hosts cannot.
        return hydra + ["-bind-to", "none", "-genv", "UCX_TLS", "self,tcp", exe] + args + ["--json"]


INTER_EXIT_GRACE = 30


def run_watch(cmd, timeout, grace, env=None):
    """Runs cmd (in env, None: inherited); once it has printed its JSON
    results it gets `grace` more seconds to exit, then it is killed. Returns
    (rc, stdout, stderr, hung): rc None when killed, hung when killed after
    printing its results."""
    def drain(f, acc):
        try:
            acc.extend(f)
        except (OSError, ValueError):      # closed under it when the run is cut short
            pass

    with open(os.devnull) as null, \
            subprocess.Popen(cmd, stdin=null, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env) as p:
        outs, errs = [], []
        readers = [threading.Thread(target=drain, args=(f, acc), daemon=True)
                   for f, acc in ((p.stdout, outs), (p.stderr, errs))]
        for t in readers:
            t.start()
        try:
            deadline, printed = time.time() + timeout, False
            while p.poll() is None and time.time() < deadline:
                if not printed and parse_json("".join(outs)):
                    printed, deadline = True, min(deadline, time.time() + grace)
                time.sleep(0.1)
            rc = p.poll()
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        for t in readers:
            t.join(5)
        return rc, "".join(outs), "".join(errs), rc is None and printed


def run_inter(res, hosts, impl, tc, exe, name, args, timeout):
    key = f"inter_{name}"
    cmd = hosts.command(impl, tc, exe, args)
    rc, out, err, hung = run_watch(cmd, timeout, INTER_EXIT_GRACE, peers.env(tc))
    if rc != 0:
        hosts.reap()        # ranks or proxies left behind would load the next run
    doc = parse_json(out)
    if rc == 0 or hung:
        if doc:
            file_doc(res, impl, key, doc)
        if hung:
            # Its figures were printed (and its data checked) before the
            # hang; they are kept, and the report says how often it hung.
            res.inter.setdefault("hung", {}).setdefault(impl, []).append(key)
            log(f"  {LABEL[impl]} {key}: results printed, then no exit in {INTER_EXIT_GRACE} s: killed")
            if impl == "tern":
                res.failures.append(f"Tern {key}: no exit within {INTER_EXIT_GRACE} s of printing its results: "
                                    f"{' '.join(cmd)}\n{err[-1500:]}")
        if doc:
            return
    why = "timed out" if rc is None else f"exit {rc}"
    detail = f"{why}: {' '.join(cmd)}\n{(err or out)[-1500:]}"
    log(f"  {LABEL[impl]} {key}: FAILED ({why})")
    if impl == "tern":
        res.failures.append(f"{LABEL[impl]} {key}: {detail}")
    else:
        # A peer that cannot run across the namespaces is reported n/a with
        # the reason, not as a broken run of the tool.
        res.inter["na"][impl] = f"{key}: {detail}"


def time_launch(res, impl, tc, exe, reps, timeout):
    """Median wall clock (ms) of `mpiexec -n 8 trivial` over reps runs."""
    cmd = tc["launch"] + ["-n", str(LAUNCH_RANKS)] + tc["unbound"] + [exe]
    walls = []
    for _ in range(reps):
        t0 = time.perf_counter()
        rc, out, err = run(cmd, timeout, env=peers.env(tc))
        t = (time.perf_counter() - t0) * 1e3
        if rc != 0:
            res.failures.append(f"{LABEL[impl]} launch: exit {rc}: {' '.join(cmd)}\n{err[-1500:]}")
            return
        walls.append(t)
    res.add(impl, f"launch_np{LAUNCH_RANKS}", 0, "wall_ms", statistics.median(walls))


def build_tool(scratch, name):
    """Builds tools/compare/<name>.c into scratch (again only when the source
    is newer, as scratch outlives a run); its path, or None."""
    exe, src = os.path.join(scratch, name), os.path.join(HERE, f"{name}.c")
    if os.path.exists(exe) and os.path.getmtime(exe) >= os.path.getmtime(src):
        return exe
    rc, out, err = run(["cc", "-O2", "-pthread", "-o", exe, src], 120)
    if rc != 0:
        log(f"{name} did not build: {err[-500:]}")
        return None
    return exe


def measure_limits(scratch, quick):
    exe = build_tool(scratch, "memlimits")
    if not exe:
        return None
    rc, out, err = run([exe] + (["--quick"] if quick else []), 300)
    return parse_json(out) if rc == 0 else None


# ---------------------------------------------------------------- report

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


def coll_key(c, n, base_ranks):
    """A collective's results key: its name at the run's --ranks, name_npN
    at the extra rank counts of --coll-ranks."""
    return c if n == base_ranks else f"{c}_np{n}"


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


def git_rev():
    rc, out, _ = run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], 30)
    rc2, dirty, _ = run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"], 30)
    return (out.strip() if rc == 0 else "?") + (" (with uncommitted changes)" if rc2 == 0 and dirty.strip() else "")


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


def inter_targets(res):
    """Inter-host targets: (description, Tern, best peer, worst ratio, bound, met, unit)."""
    rows = []
    for key, metric, sizes, bound, higher, what in (
            ("inter_latency", "latency_us", lambda s: s <= 64, 0.8, False, "latency 1-64 B"),
            ("inter_bw", "bw_mbs", lambda s: 256 << 10 <= s <= 4 << 20, 1.0, True, "bw 256 KB-4 MB"),
            ("inter_bibw", "bibw_mbs", lambda s: 256 << 10 <= s <= 4 << 20, 1.0, True, "bibw 256 KB-4 MB")):
        rs = []
        for s in [s for s in res.sizes(key) if sizes(s)]:
            t = res.median("tern", key, s, metric)
            b, p = best_peer(res, key, s, metric, higher)
            rs.append((ratio(t, b), s, t, BestPeer(b, p) if b is not None else None))
        if rs and all(r[0] is not None for r in rs):
            r, s, t, b = (min if higher else max)(rs, key=lambda x: x[0])
            met = r >= bound if higher else r <= bound
            rows.append((f"inter-host {what} (worst size: {size_label(s)})", t, b, r,
                         f"{'>=' if higher else '<='} {bound}", met, "MB/s" if higher else "us"))
        else:
            rows.append((f"inter-host {what}", None, None, None, f"{'>=' if higher else '<='} {bound}", False, ""))
    return rows


def floor_text(res):
    """The kernel TCP floor beside each MPI's inter-host latency."""
    # Sizes are ints when measured, strings when read back from results.json.
    runs = [{int(k): v for k, v in r.items()} for r in res.inter.get("floor_runs") or []]
    if not runs:
        return "Kernel TCP floor: not measured (tcp_pingpong did not run).\n"
    sizes = sorted(set.intersection(*(set(r) for r in runs)))
    floor = {sz: statistics.median(r[sz] for r in runs) for sz in sizes}
    L = ["Kernel TCP floor on the same link (`tools/compare/tcp_pingpong.c`: one TCP connection, "
         "TCP_NODELAY, both ends busy-polling non-blocking `recv`, one `send` per message; no library "
         "over the kernel's TCP stack can go below it; median of rounds, one-way):\n",
         "| size | TCP floor (us) | " + " | ".join(LABEL[i] for i in res.columns("inter_latency")) + " |",
         "|---:|---:|" + "---:|" * len(res.columns("inter_latency"))]
    for sz in sizes:
        cells = []
        for impl in res.columns("inter_latency"):
            v = res.median(impl, "inter_latency", sz, "latency_us")
            cells.append(f"{v:.2f} ({v / floor[sz]:.2f}x)" if v else "n/a")
        L.append(f"| {size_label(sz)} | {floor[sz]:.2f} | " + " | ".join(cells) + " |")
    return "\n".join(L) + "\n"


def inter_section(res, args):
    inter = res.inter
    L = ["## Inter-host (two network namespaces, one rank each)\n"]
    if inter["status"] != "ran":
        L.append(f"Skipped: {inter['reason']}.\n")
        return "\n".join(L)
    L.append("Two \"hosts\" on this machine: network namespaces joined by a veth pair, each with its own sshd "
             "and host name (`scripts/netns-hosts.sh`); the launcher runs on host A and starts the rank on host B "
             "over ssh; one rank per host, unbound (the two hosts share the cores). Each MPI goes over TCP: Tern "
             "its ofi transport on libfabric (provider net: TCP; `mpiexec --hosts A,B -ppn 1`), Open MPI `--mca pml ob1 "
             "--mca btl tcp,self` (`mpirun --host A,B`, ssh agent), MPICH 4 and 5 UCX with `UCX_TLS=self,tcp` "
             "(`mpiexec -hosts A,B -launcher ssh -iface <veth>`; left to itself UCX sees one machine and uses "
             "shared memory between the namespaces), Intel MPI libfabric's tcp provider (`FI_PROVIDER=tcp`, "
             "the same Hydra options). The veth link is a kernel loopback: these figures measure "
             "each library's TCP path and software overhead, not a wire.\n")
    for impl, why in inter["na"].items():
        L.append(f"- {LABEL[impl]}: n/a, it did not run across the namespaces: `{' '.join(why.split())[:600]}`")
    for impl, keys in inter.get("hung", {}).items():
        L.append(f"- {LABEL[impl]}: {len(keys)} run(s) printed their checked results and then did not exit "
                 f"within {INTER_EXIT_GRACE} s ({', '.join(sorted(set(keys)))}); killed, figures kept." +
                 (" Seen with MPICH 4.0.2 over UCX tcp: one rank spinning in MPI_Finalize, the other blocked "
                  "on its PMI socket." if impl == "mpich" else ""))
    if inter["na"] or inter.get("hung"):
        L.append("")
    # Inter-host runs are not probed: the namespaces' ranks are not bound.
    L += targets_table(res, inter_targets, paired=False)
    L.append("")
    L.append(floor_text(res))
    for name in INTER + RMA:
        key = f"inter_{name}"
        if res.sizes(key):
            metric, unit, higher = METRIC[name]
            L.append(f"### inter-host {name} ({'higher' if higher else 'lower'} is better)\n")
            L.append(table(res, key, metric, unit, higher) + "\n")
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


# ---------------------------------------------------------------- main

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
    ap.add_argument("--tern-prefix", help="use this Tern installation instead of building one (Release) from the checkout")
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
