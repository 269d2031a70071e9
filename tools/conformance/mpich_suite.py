"""MPICH 4.0.2's test suite (test/mpi of Debian's source package): fetch,
configure against one implementation, build per program, run the testlists.

Only the files named `testlist` are read (what `runtests` reads by default
minus testlist.dtp, long datatype-pool sweeps, and testlist.cvar, MPICH
algorithm variants selected through MPIR_CVAR_* variables that other
implementations ignore). Outcomes follow runtests: a test passes when it
exits 0 and prints " No Errors" and nothing else (resultTest=TestStatus or
TestErrFatal: when it exits non-zero; TestStatusNoErrors: both).
"""
import concurrent.futures
import glob
import hashlib
import os
import re
import shutil
import subprocess
import threading

import runner

VERSION = "4.0.2"
DEB_SRC = """Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""
# Fortran: f77, f90 and f08 are built with the implementation's mpif77 and
# mpifort (f08 needs the mpi_f08 module: see FORTRAN_PROBES). C++: the C++
# bindings left the standard in MPI-3.0. perf: timing tests, meaningless on
# a shared 2-core machine. strictmpi: MPICH's extensions (MPIX_) are not
# tested. rma is on: the harness library every test links (util/mtest.c)
# calls MPI_Win_* and MPI_Alloc_mem, and the tests that use its window
# helpers (rma/fkeyvalwin, rma/winname, ...) build only with it.
CONFIGURE_ARGS = ["--enable-fortran=all", "--disable-cxx", "--disable-perftest",
                  "--enable-strictmpi", "--enable-romio", "--enable-threads=multiple"]
# Each Fortran directory needs its module or include file; where the
# implementation's compiler cannot build this probe, the directory's programs
# count as not built with this reason, without a make per program.
FORTRAN_PROBES = {
    "f77": ("mpif77", "probe.f", "      program p\n      include 'mpif.h'\n"
            "      integer ierr\n      call mpi_init(ierr)\n      end\n",
            "mpif77 cannot build a program that includes mpif.h"),
    "f90": ("mpifort", "probe.f90", "program p\nuse mpi\ninteger ierr\n"
            "call mpi_init(ierr)\nend program\n",
            "mpifort cannot build a program that uses the mpi module"),
    "f08": ("mpifort", "probe.f90", "program p\nuse mpi_f08\ncall mpi_init()\nend program\n",
            "no mpi_f08 module (mpifort cannot build a program that uses mpi_f08)"),
}
# Directories whose tests share file names in their working directory
# (io, errors/io and the Fortran ones, f77/io, f90/io, f08/io, errors/f77/io...:
# every test of f77/io writes iotest.txt): their tests run one at a time.


def serial_dir(d):
    return d == "io" or d.endswith("/io")

# A testlist's MPICH setting that has a Tern knob of the same meaning is
# passed to that knob too (the peers ignore TERN_*): errors/spawn's
# connect_timeout tests shorten MPICH's connect timeout this way.
TERN_EQUIVALENTS = {
    "MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT": "TERN_PORT_CONNECT_TIMEOUT",
    # ft: fault tolerance on (Tern's mpiexec sets it for -disable-auto-cleanup).
    "MPIR_CVAR_ENABLE_FT": "TERN_FT",
}
# Directories whose tests are non-strict only because they use MPICH's
# MPIX_ interface that Tern implements too: ft (User-Level Failure
# Mitigation; its mpiexecarg -disable-auto-cleanup is mpiexec --ft).
MPIX_DIRS = {"ft"}

log = runner.log


def fetch(cache):
    """Returns the pristine test/mpi tree, fetching Debian's source package
    through apt when it is not cached."""
    src = os.path.join(cache, "src", f"mpich-{VERSION}", "test", "mpi")
    if os.path.isfile(os.path.join(src, "configure")):
        return src
    dl = os.path.join(cache, "downloads")
    os.makedirs(dl, exist_ok=True)
    tarball = os.path.join(dl, f"mpich_{VERSION}.orig.tar.xz")
    if not os.path.isfile(tarball):
        _apt_source(dl)
    log(f"unpacking test/mpi from {tarball}")
    os.makedirs(os.path.join(cache, "src"), exist_ok=True)
    subprocess.run(["tar", "-xJf", tarball, "-C", os.path.join(cache, "src"),
                    f"mpich-{VERSION}/test/mpi"], check=True)
    return src


def _has_deb_src():
    for f in glob.glob("/etc/apt/sources.list.d/*") + ["/etc/apt/sources.list"]:
        try:
            with open(f) as fh:
                text = fh.read()
        except OSError:
            continue
        if re.search(r"^\s*(deb-src\s|Types:.*deb-src)", text, re.M):
            return True
    return False


def _apt_source(dl):
    sudo = [] if os.getuid() == 0 else ["sudo"]
    if not _has_deb_src():
        log("adding a deb-src entry (/etc/apt/sources.list.d/deb-src.sources)")
        subprocess.run(sudo + ["tee", "/etc/apt/sources.list.d/deb-src.sources"],
                       input=DEB_SRC.encode(), stdout=subprocess.DEVNULL, check=True)
        subprocess.run(sudo + ["apt-get", "update", "-q"], check=True)
    cmd = ["apt-get", "source", "--download-only", f"mpich={VERSION}-3"]
    log(f"fetching MPICH's source package: {' '.join(cmd)}")
    if subprocess.run(cmd, cwd=dl).returncode != 0:
        subprocess.run(sudo + ["apt-get", "update", "-q"], check=True)
        subprocess.run(cmd, cwd=dl, check=True)


def configure(src, tree, prefix, logdir, extra=()):
    """Copies the pristine tree to `tree` and configures it against the MPI
    installed in prefix (prefix/bin/mpicc...), once per (prefix, arguments)."""
    args = [f"--with-mpi={prefix}"] + CONFIGURE_ARGS + list(extra)
    stamp_text = "\n".join(args + [_tool_id(prefix), F08_PATCH[1]]) + "\n"
    stamp = os.path.join(tree, ".conformance-configured")
    if os.path.isfile(stamp) and open(stamp).read() == stamp_text:
        return True
    if os.path.isdir(tree):
        shutil.rmtree(tree)
    shutil.copytree(src, tree, symlinks=True)
    _patch_f08(tree)
    logf = os.path.join(logdir, "configure.log")
    log(f"configuring {tree} ({' '.join(args)})")
    with open(logf, "w") as out:
        rc = subprocess.run(["./configure"] + args, cwd=tree, stdout=out,
                            stderr=subprocess.STDOUT).returncode
    if rc != 0:
        log(f"configure failed, see {logf}")
        return False
    with open(stamp, "w") as f:
        f.write(stamp_text)
    return True


# 4.0.2's configure turns the f08 directory (and the harness library
# libmtest_f08 every f08 test links) on only when the suite is built inside
# MPICH itself ("FIXME if $FROM_MPICH is no, we should test build an MPI F08
# program"); against an installed MPI every f08 test would fail to link.
# Here the f08 probe (FORTRAN_PROBES) does that test build instead.
F08_PATCH = ('if test "$enable_f08" = "yes" -a "$FROM_MPICH" = "yes" ; then',
             'if test "$enable_f08" = "yes" ; then')


def _patch_f08(tree):
    path = os.path.join(tree, "configure")
    with open(path) as f:
        text = f.read()
    if F08_PATCH[0] not in text:
        raise SystemExit(f"conformance: {path}: the f08 condition to patch is not there")
    with open(path, "w") as f:
        f.write(text.replace(F08_PATCH[0], F08_PATCH[1]))


def _tool_id(prefix):
    """Identifies the compiler wrapper and the MPI's interface (mpi.h,
    mpif.h, the Fortran modules), so another MPI, or a changed interface
    of this one, means reconfiguring: make does not see a changed header
    or module, and programs compiled against the old one then fail to
    link (or, worse, run with stale constants)."""
    h = hashlib.sha1(os.path.realpath(os.path.join(prefix, "bin", "mpicc")).encode())
    inc = os.path.join(prefix, "include")
    if os.path.isdir(inc):
        for name in sorted(os.listdir(inc)):
            if name in ("mpi.h", "mpif.h") or name.endswith(".mod"):
                with open(os.path.join(inc, name), "rb") as f:
                    h.update(name.encode() + b"\0" + f.read())
    return h.hexdigest()


class Test:
    def __init__(self, dirname, name, np, opts):
        self.dir = dirname
        self.name = name
        self.np = np
        self.args = opts.get("arg", [])
        self.envs = opts.get("env", [])
        self.mpiexecargs = opts.get("mpiexecarg", [])
        self.time_limit = opts.get("timeLimit")
        self.result_test = opts.get("resultTest")
        self.skip = None
        if opts.get("strict", "").lower() == "false" and dirname.split("/")[0] not in MPIX_DIRS:
            self.skip = "non-strict test (uses MPICH extensions)"
        elif opts.get("mpix", "").lower() == "true":
            self.skip = "tests MPIX extensions"
        words = [a.lstrip() for a in self.args] + self.envs
        self.key = f"{dirname}/{name}" + ("" if not words else " " + " ".join(words))

    def top(self):
        return self.dir.split("/")[0]


def read_tests(tree, dirs):
    """The tests of the top-level directories `dirs` (in testlist order),
    following directory entries into sub-testlists."""
    tests, prebuild = [], []
    seen = {}
    def walk(rel):
        path = os.path.join(tree, rel, "testlist")
        if not os.path.isfile(path):
            return
        for line in open(path, errors="replace"):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.match(r"^!([^:]*):(.*)$", line)
            if m:
                prebuild.append((os.path.join(rel, m.group(1)), m.group(2).strip()))
                continue
            words = line.split()
            if os.path.isdir(os.path.join(tree, rel, words[0])) and len(words) == 1:
                walk(os.path.join(rel, words[0]) if rel else words[0])
                continue
            np = int(words[1]) if len(words) > 1 and words[1].isdigit() else 2
            opts = {}
            for w in words[2:]:
                if "=" not in w:
                    continue
                k, v = w.split("=", 1)
                if k in ("arg", "env", "mpiexecarg"):
                    opts.setdefault(k, []).append(v)
                else:
                    opts[k] = v
            d, name = rel, words[0]
            if "/" in name:
                sub, name = name.rsplit("/", 1)
                d = os.path.join(rel, sub)
            t = Test(d, name, np, opts)
            n = seen.get((t.key, np), 0) + 1
            seen[(t.key, np)] = n
            if n > 1:
                t.key += f" #{n}"
            tests.append(t)
    for d in dirs:
        walk(d)
    return tests, prebuild


def _first_build_error(text):
    m = re.search(r"undefined reference to `([^']+)'", text)
    if m:
        return f"undefined reference to {m.group(1)}"
    for line in text.splitlines():
        if re.search(r"\berror\b", line, re.I):
            line = re.sub(r"^\S*/", "", line.strip())
            return line[:200]
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1][:200] if lines else "no output"


def fortran_gaps(prefix, dirs, logdir):
    """{Fortran top directory: why its programs cannot build} for the
    directories in dirs whose FORTRAN_PROBES program the implementation in
    prefix does not build."""
    gaps = {}
    work = os.path.join(logdir, "fortran-probe")
    for d in dirs:
        if d not in FORTRAN_PROBES:
            continue
        tool, fname, text, why = FORTRAN_PROBES[d]
        os.makedirs(os.path.join(work, d), exist_ok=True)
        with open(os.path.join(work, d, fname), "w") as f:
            f.write(text)
        try:
            r = subprocess.run([os.path.join(prefix, "bin", tool), fname, "-o", "probe"],
                               cwd=os.path.join(work, d), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=300)
            ok = r.returncode == 0
            out = r.stdout.decode("utf-8", "replace")
        except (OSError, subprocess.TimeoutExpired) as e:
            ok, out = False, str(e)
        if not ok:
            gaps[d] = "does not build: " + why
            with open(os.path.join(logdir, f"build-{d}-probe.log"), "w") as f:
                f.write(out)
    return gaps


def build(tree, tests, prebuild, jobs, logdir, gaps=None):
    """Builds every test program, one make per directory then one make per
    program that did not build (for its error). Returns {(dir, name): reason}
    for the programs that do not build; those of a top directory in gaps
    (fortran_gaps) are not tried."""
    gaps = gaps or {}
    for sub in ("dtpools", "util"):
        # -k: util also holds the Fortran harness libraries (libmtest_f08
        # cannot build without the mpi_f08 module; the others still must)
        with open(os.path.join(logdir, f"build-{sub}.log"), "w") as out:
            subprocess.run(["make", "-k", "-j", str(jobs)], cwd=os.path.join(tree, sub),
                           stdout=out, stderr=subprocess.STDOUT)
    for d, target in prebuild:
        subprocess.run(["make", target], cwd=os.path.join(tree, d),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    by_dir = {}
    for t in tests:
        if t.skip is None:
            by_dir.setdefault(t.dir, [])
            if t.name not in by_dir[t.dir]:
                by_dir[t.dir].append(t.name)
    failed = {}
    for t in tests:
        if t.skip is None and t.top() in gaps:
            failed[(t.dir, t.name)] = gaps[t.top()]
    for d, progs in by_dir.items():
        if d.split("/")[0] in gaps:
            continue
        cwd = os.path.join(tree, d)
        log(f"building {d} ({len(progs)} programs)")
        name = d.replace("/", "_")
        with open(os.path.join(logdir, f"build-{name}.log"), "w") as out:
            subprocess.run(["make", "-k", "-j", str(jobs)] + progs, cwd=cwd,
                           stdout=out, stderr=subprocess.STDOUT, timeout=3600)
        for p in progs:
            if os.access(os.path.join(cwd, p), os.X_OK):
                continue
            r = subprocess.run(["make", p], cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=600)
            text = r.stdout.decode("utf-8", "replace")
            if r.returncode == 0 and os.access(os.path.join(cwd, p), os.X_OK):
                continue
            with open(os.path.join(logdir, f"build-{name}-{p}.log"), "w") as out:
                out.write(text)
            failed[(d, p)] = "does not build: " + _first_build_error(text)
    return failed


LAUNCHER_LINE = re.compile(r"^\s*(mpiexec[:@ ]|\[mpiexec@|tern\[rank \d+\] error: fatal error: "
                          r"MPI_Abort|=+\s*$|-+\s*$|\[\w+:\d+\] )")


def _judge(test, r):
    """(passed, reason) the way runtests decides."""
    lines = r.output.splitlines()
    if r.timed_out:
        return False, f"timeout after {r.seconds:.0f} s"
    rt = test.result_test
    if rt in ("TestStatus", "TestErrFatal"):
        if r.rc == 0:
            return False, "exited 0 but the test requires a non-zero status"
        return True, ""
    noerr = any(re.match(r"^\s*No [Ee]rrors\s*$", l) for l in lines)
    bad = [l for l in lines if not re.match(r"^\s*(No [Ee]rrors|Test Passed)\s*$", l)]
    if test.top() in MPIX_DIRS:
        # ft: the deaths the tests cause are the launcher's to report
        # ("mpiexec: rank 1 ... exited with code 1; the others go on").
        bad = [l for l in bad if not LAUNCHER_LINE.match(l)]
    # the test's own words, before the launcher's ("mpiexec: rank 0 called
    # MPI_Abort...") which often arrive first
    own = [l.strip() for l in bad if l.strip() and not LAUNCHER_LINE.match(l)]
    first = own[0] if own else next((l.strip() for l in bad if l.strip()), "")
    if rt == "TestStatusNoErrors":
        if r.rc == 0:
            return False, "exited 0 but the test requires a non-zero status"
        if bad or not noerr:
            return False, first or "no \"No Errors\" line"
        return True, ""
    if bad:
        return False, first or f"unexpected blank output (exit status {r.rc})"
    if not noerr:
        return False, f"exit status {r.rc}, no output" if r.rc else "no \"No Errors\" line"
    if r.rc != 0:
        return False, f"printed No Errors but exit status {r.rc}"
    return True, ""


def run_tests(tree, tests, build_failed, mpiexec, jobs, timeout, max_timeout,
              logdir, extra_env=None, progress=None):
    """Runs the tests; returns {test.key + np: outcome dict}."""
    results = {}
    base = runner.shm_baseline()
    locks = {d: threading.Lock() for d in {t.dir for t in tests} if serial_dir(d)}
    env = dict(os.environ)
    env.update(extra_env or {})
    outdir = os.path.join(logdir, "out")
    os.makedirs(outdir, exist_ok=True)
    done = [0]
    todo = [t for t in tests]

    def one(t):
        res = {"suite": "mpich", "dir": t.top(), "test": t.key, "np": t.np}
        if t.skip:
            res.update(status="skipped", reason=t.skip)
            return res
        if (t.dir, t.name) in build_failed:
            res.update(status="failed", built=False, reason=build_failed[(t.dir, t.name)])
            return res
        limit = timeout
        if t.time_limit and t.time_limit.isdigit():
            limit = int(t.time_limit)
        limit = min(max(limit, 1), max_timeout)
        cmd = [mpiexec, "-n", str(t.np)] + t.mpiexecargs + ["./" + t.name] + t.args
        e = dict(env)
        e["MPIEXEC_TIMEOUT"] = str(limit)
        for kv in t.envs:
            if "=" in kv:
                k, v = kv.split("=", 1)
                e[k] = v
                if k in TERN_EQUIVALENTS:
                    e[TERN_EQUIVALENTS[k]] = v
        lock = locks.get(t.dir)
        if lock:
            lock.acquire()
        try:
            # MPIEXEC_TIMEOUT asks mpiexec to end the job at the limit (Hydra and
            # Open MPI's mpirun do; init/timeout tests it); the runner kills later
            r = runner.run(cmd, os.path.join(tree, t.dir), limit + 5, env=e, shm_base=base)
        finally:
            if lock:
                lock.release()
        ok, why = _judge(t, r)
        res.update(status="passed" if ok else "failed", built=True, reason=why,
                   seconds=round(r.seconds, 1))
        if not ok:
            fname = re.sub(r"[^A-Za-z0-9_.=-]+", "_", f"{t.key}-{t.np}")[:150]
            with open(os.path.join(outdir, fname + ".txt"), "w") as f:
                f.write(f"$ {' '.join(cmd)}\n# exit {r.rc}, {r.seconds:.1f} s\n{r.output}")
        return res

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for res in pool.map(one, todo):
            results[f"{res['test']}|{res['np']}"] = res
            done[0] += 1
            if progress and (done[0] % 25 == 0 or done[0] == len(todo)):
                progress(f"{done[0]}/{len(todo)} tests run")
    return results
