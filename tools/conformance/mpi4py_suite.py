"""mpi4py 4.1.2's test suite: the sdist from PyPI, built with one
implementation's mpicc into its own venv, then `mpiexec -n N python
test/main.py --xml DIR <module>` once per test module (a crash or a hang
in one module cannot hide the others). Outcomes come from the JUnit XML
each rank writes (unittest-xml-reporting); a test counts as failed or in
error when it did so on any rank.
"""
import glob
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import runner

VERSION = "4.1.2"
# pip packages the build and the runs need (wheels).
TOOLS = ["cython>=3.0,<3.4", "setuptools>=61", "wheel", "unittest-xml-reporting==4.0.0"]
# The modules for the features of the CI subset (pt2pt, part, coll, comm,
# group, datatype, init, errhan, attr, info, spawn, rma).
CI_MODULES = [
    "test_p2p_buf", "test_p2p_obj", "test_p2p_buf_matched", "test_p2p_obj_matched",
    "test_p2p_buf_part",
    "test_cco_buf", "test_cco_obj", "test_cco_nb_buf", "test_cco_vec", "test_cco_nb_vec",
    "test_comm", "test_group", "test_datatype", "test_environ", "test_errhandler",
    "test_errorcode", "test_exceptions", "test_attributes", "test_info", "test_status",
    "test_request", "test_op", "test_pack", "test_spawn", "test_dynproc",
    "test_win", "test_rma", "test_rma_nb",
]


log = runner.log


def venv(cache, impl):
    """The venv mpi4py is built into, with the build and test tools."""
    path = os.path.join(cache, f"venv-{impl}")
    py = os.path.join(path, "bin", "python")
    stamp = os.path.join(path, ".tools")
    if not (os.path.isfile(stamp) and open(stamp).read() == repr(TOOLS)):
        subprocess.run(["python3", "-m", "venv", path], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q"] + TOOLS, check=True)
        with open(stamp, "w") as f:
            f.write(repr(TOOLS))
    return py


def fetch(cache, py):
    """The unpacked sdist (downloaded with pip once)."""
    dl = os.path.join(cache, "downloads")
    os.makedirs(dl, exist_ok=True)
    sdist = os.path.join(dl, f"mpi4py-{VERSION}.tar.gz")
    src = os.path.join(cache, "src", f"mpi4py-{VERSION}")
    if os.path.isfile(os.path.join(src, "test", "main.py")):
        return sdist, src
    if not os.path.isfile(sdist):
        log(f"fetching mpi4py {VERSION}'s sdist with pip")
        subprocess.run([py, "-m", "pip", "download", "-q", "--no-deps",
                        "--no-build-isolation", "--no-binary", "mpi4py", "-d", dl,
                        f"mpi4py=={VERSION}"], check=True)
    os.makedirs(os.path.join(cache, "src"), exist_ok=True)
    subprocess.run(["tar", "-xzf", sdist, "-C", os.path.join(cache, "src")], check=True)
    return sdist, src


def build(py, sdist, impl, prefix, logdir):
    """mpi4py built by prefix/bin/mpicc into py's venv; returns py, or None
    (with the reason in logdir/mpi4py-build.log) when it does not build."""
    venv = os.path.dirname(os.path.dirname(py))
    # absolute: pip builds in a directory of its own, where a relative
    # path would miss and mpi4py would take the first mpicc on PATH
    mpicc = os.path.join(os.path.abspath(prefix), "bin", "mpicc")
    stamp = os.path.join(venv, ".mpi4py-built")
    want = f"{VERSION} {os.path.realpath(mpicc)} {_mtime(prefix)}\n"
    if os.path.isfile(stamp) and open(stamp).read() == want:
        return py
    logf = os.path.join(logdir, "mpi4py-build.log")
    log(f"building mpi4py {VERSION} with {mpicc} into {venv}")
    with open(logf, "w") as out:
        # -O0: the bindings' speed does not matter here, a 2-core CI's time does
        env = dict(os.environ, MPICC=mpicc, CFLAGS="-O0 -g0")
        if impl == "tern-abi":
            # the MPI-5.0 standard ABI: mpicc is Tern's mpicc_abi
            env["MPI4PY_BUILD_MPIABI"] = "1"
        rc = subprocess.run([py, "-m", "pip", "install", "-v", "--no-build-isolation",
                             "--no-deps", "--force-reinstall", "--no-cache-dir", sdist],
                            env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        log(f"mpi4py does not build with {impl}, see {logf}")
        return None
    wrong = _foreign_mpi(venv, mpicc)
    if wrong:
        raise SystemExit(f"conformance: mpi4py in {venv} was built against {wrong}, "
                         f"not the library of {mpicc}")
    with open(stamp, "w") as f:
        f.write(want)
    return py


def _real_tree(mpicc):
    """The installation the wrapper really belongs to (a face's prefix
    holds links to Tern's wrappers)."""
    return os.path.dirname(os.path.dirname(os.path.realpath(mpicc)))


def _foreign_mpi(venv, mpicc):
    """An MPI library mpi4py's extension loads from outside the tested
    implementation's tree (its real lib/ directory), or None."""
    real = _real_tree(mpicc)
    for ext in glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", "mpi4py",
                                      "MPI*.so")):
        out = subprocess.run(["ldd", ext], capture_output=True, text=True).stdout
        for line in out.splitlines():
            name, _, where = line.strip().partition(" => ")
            if not re.match(r"lib(mpi|tern)", name):
                continue
            path = os.path.realpath(where.split(" (")[0])
            if not path.startswith(real + os.sep):
                return path
    return None


def _mtime(prefix):
    """When the implementation's library last changed (rebuild mpi4py then)."""
    libs = glob.glob(os.path.join(prefix, "lib*", "libtern.so*"))
    # a face's prefix holds links to Tern's wrappers: Tern's own libraries
    real = _real_tree(os.path.join(prefix, "bin", "mpicc"))
    libs += glob.glob(os.path.join(real, "lib*", "libmpi_abi.so*"))
    return int(max((os.path.getmtime(p) for p in libs), default=0))


def modules(src, wanted):
    names = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(src, "test", "test_*.py")))
    return [m for m in names if m in wanted] if wanted else names


def _parse_xml(xmldir):
    """{test id: (status, message)} over every rank's XML files; a test's
    worst outcome on any rank wins."""
    rank_order = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
    out = {}
    for f in glob.glob(os.path.join(xmldir, "*.xml")):
        try:
            root = ET.parse(f).getroot()
        except ET.ParseError:
            continue
        for tc in root.iter("testcase"):
            tid = f"{tc.get('classname')}.{tc.get('name')}"
            status, msg = "passed", ""
            for child in tc:
                if child.tag in ("failure", "error"):
                    status = "failed" if child.tag == "failure" else "error"
                    msg = _failure_text(child)
                    break
                if child.tag == "skipped":
                    status, msg = "skipped", (child.get("message") or "").strip()
            old = out.get(tid)
            if old is None or rank_order[status] > rank_order[old[0]]:
                out[tid] = (status, msg)
    return out


def _failure_text(el):
    """"Type: message (MPI_Call)": the exception and the innermost MPI call
    of its traceback (NotImplementedError alone does not say what is
    missing)."""
    kind = el.get("type") or el.tag
    kind = kind.rsplit(".", 1)[-1]
    lines = (el.get("message") or "").strip().splitlines()
    text = f"{kind}: {lines[0]}" if lines and lines[0] else kind
    calls = re.findall(r"\b(MPI_[A-Za-z0-9_]+)\(", el.text or "")
    if calls:
        text += f" ({calls[-1]})"
    return text[:300]


def run_module(py, src, mod, np, mpiexec, timeout, logdir):
    """One module at np ranks: a result dict with counts and failure lines."""
    xmldir = os.path.join(logdir, "xml", f"{mod}-{np}")
    shutil.rmtree(xmldir, ignore_errors=True)
    os.makedirs(xmldir)
    cmd = [mpiexec, "-n", str(np), py, os.path.join(src, "test", "main.py"),
           "--no-builddir", "--xml", xmldir, mod]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    r = runner.run(cmd, src, timeout, env=env, shm_base=runner.shm_baseline())
    tests = _parse_xml(xmldir)
    counts = {"tests": len(tests), "passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    fails = []
    for tid, (status, msg) in sorted(tests.items()):
        counts["errors" if status == "error" else status] += 1
        if status in ("failed", "error"):
            fails.append((tid, msg))
    res = dict(counts, suite="mpi4py", dir=mod, test=mod, np=np, fails=fails,
               cases={k: list(v) for k, v in tests.items()})
    problem = None
    if r.timed_out:
        problem = f"timeout after {r.seconds:.0f} s"
    elif r.rc != 0 and not fails:
        lines = [l for l in r.output.splitlines() if l.strip()]
        problem = f"exit status {r.rc}: " + (_first_error(lines) or "no output")
    if problem:
        res["errors"] += 1
        res["fails"] = fails + [(f"{mod} (the whole module)", problem)]
    res["status"] = "passed" if not res["fails"] else "failed"
    if res["fails"]:
        with open(os.path.join(logdir, "out", f"mpi4py-{mod}-{np}.txt"), "w") as f:
            f.write(f"$ {' '.join(cmd)}\n# exit {r.rc}, {r.seconds:.1f} s\n{r.output}")
    return res


def _first_error(lines):
    for l in lines:
        if re.search(r"error|abort|fatal|signal|Traceback", l, re.I):
            return l.strip()[:200]
    return lines[-1].strip()[:200] if lines else ""


def run_all(py, src, mods, nps, mpiexec, timeout, logdir, progress=None):
    os.makedirs(os.path.join(logdir, "out"), exist_ok=True)
    results = {}
    for np in nps:
        for i, m in enumerate(mods):
            res = run_module(py, src, m, np, mpiexec, timeout, logdir)
            results[f"{m}|{np}"] = res
            if progress:
                progress(f"mpi4py {m} -n {np}: {res['passed']}/{res['tests']} passed"
                         + (f", {res['fails'][-1][1]}" if res["fails"] and "whole module" in res["fails"][-1][0] else ""))
    return results
