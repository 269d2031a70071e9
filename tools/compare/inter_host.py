"""The inter-host section of the comparison (compare.py): two network
namespaces joined by a veth pair, an sshd in each
(scripts/netns-hosts.sh), each MPI over TCP with one rank a host; the
kernel's TCP floor on the same link (tcp_pingpong.c); the section's
targets and tables in the report.
"""
import os
import shlex
import signal
import statistics
import subprocess
import threading
import time

import peers
from results import INTER, LABEL, METRIC, RMA, file_doc, parse_json
from runner import REPO, log, run
from report_tables import BestPeer, best_peer, ratio, size_label, table, targets_table


HOSTS_SH = os.path.join(REPO, "scripts", "netns-hosts.sh")


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
