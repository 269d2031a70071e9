"""Building and running the benchmarks of the comparison (compare.py).

Tern built from this checkout, each implementation's build of bench/, the
tools beside this file (memlimits, tcp_pingpong, the I/O limits); one
benchmark run between two mode probes (modes.py) with its figures filed
in the Results (results.py), start-up by the launcher's wall clock, and
this machine's memcpy and cache-line limits.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

import peers
from results import COLL, LABEL, LAUNCH_RANKS, MT, RMA, VARIANT, file_doc, parse_json


REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))


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


def build_tern(scratch, jobs):
    """Build of this checkout as the README installs it (the project's default
    type, RelWithDebInfo: -O2), installed into scratch; returns the prefix.
    Not Release (-O3): a loop that GCC vectorizes at -O3 alone looked fast in
    the report and was scalar in every installation (docs/performance.md,
    row `putinline`)."""
    bdir, prefix = os.path.join(scratch, "tern-build"), os.path.join(scratch, "tern-install")
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    steps = [["cmake", "-S", REPO, "-B", bdir, *gen, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
              "-DTERN_WERROR=OFF", "-DTERN_SANITIZE=OFF", f"-DCMAKE_INSTALL_PREFIX={prefix}"],
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
