"""Real MPI-IO clients against one implementation: Parallel HDF5 1.10.8's
testpar programs and PnetCDF 1.12.3's parallel tests (both from Debian
bookworm's source packages, through apt, like MPICH's suite), and IOR
(github hpc/ior, where its source is present: it is not packaged) with
its MPIIO backend and data verification.

Each client is configured with the implementation's mpicc into
<cache>/io-clients/<impl>/ once per (arguments, compiler wrapper and
mpi.h) and reused; every test program runs with the implementation's
mpiexec under a time limit. Results are one record per test, like an
MPICH test's: {"suite", "dir", "test", "np", "status", "reason",
"seconds"}, keyed "<suite>/<test>|<np>".
"""
import os
import re
import shutil
import subprocess
import time

import mpich_suite
import runner

HDF5 = {"package": "hdf5", "deb": "1.10.8+repack1-1", "dir": "hdf5-1.10.8+repack1",
        "orig": "hdf5_1.10.8+repack1.orig.tar.gz"}
PNETCDF = {"package": "pnetcdf", "deb": "1.12.3-1", "dir": "pnetcdf-1.12.3",
           "orig": "pnetcdf_1.12.3.orig.tar.xz"}
SUITES = ("hdf5", "pnetcdf", "ior")
LABELS = {"hdf5": "Parallel HDF5 1.10.8 (testpar)", "pnetcdf": "PnetCDF 1.12.3 (make ptest)",
          "ior": "IOR (MPIIO backend)"}

# The library and testpar only: no tools, high-level library, Fortran,
# C++ or Java (testpar needs none of them); static only (libtool builds
# each object once).
HDF5_CONFIGURE = ["--enable-parallel", "--disable-shared", "--enable-static",
                  "--disable-fortran", "--disable-cxx", "--disable-java", "--disable-hl",
                  "--disable-tools", "--enable-tests"]
# testpar's programs in the order of its CMakeLists.txt (H5P_TESTS, then
# testphdf5), each at 4 ranks (CMake runs them at MPIEXEC_MAX_NUMPROCS).
# t_pflush1 writes two files and exits without closing one (its exit
# status is always 1: it passes when it printed PASSED), then t_pflush2
# checks them; t_prestart reopens the file t_pshutdown left. All run in
# one directory, in this order, one at a time.
HDF5_TESTS = ["t_mpi", "t_bigio", "t_cache", "t_cache_image", "t_pflush1", "t_pflush2",
              "t_pread", "t_pshutdown", "t_prestart", "t_init_term", "t_shapesame",
              "t_filters_parallel", "testphdf5"]
HDF5_NP = 4
# The C library and its C tests only: PnetCDF's Fortran and C++ APIs are
# the implementation's mpif77/mpicxx's business, not MPI-IO's.
PNETCDF_CONFIGURE = ["--disable-fortran", "--disable-cxx"]
PNETCDF_NP = 4

# IOR runs: (name, ranks, arguments after `ior -a MPIIO`). -w -r -W -R -e:
# write, read back, verify what was written (read after write) and what is
# read, fsync after the write; -C: another rank reads back (IOR refuses it
# with random offsets). Not run: --mpiio.useStridedDatatype with
# --mpiio.useFileView, whose verification fails with MPICH 4.0.2 too (an
# IOR defect).
IOR_COMMON = ["-w", "-r", "-W", "-R", "-e", "-i", "2"]
IOR_RUNS = []
for _np in (2, 4):
    IOR_RUNS += [
        (f"independent np={_np}", _np, ["-C", "-b", "4m", "-t", "256k", "-s", "4"]),
        (f"collective np={_np}", _np, ["-c", "-C", "-b", "4m", "-t", "256k", "-s", "4"]),
        (f"collective file view np={_np}", _np,
         ["-c", "-C", "--mpiio.useFileView", "-b", "30000", "-t", "10000", "-s", "5"]),
        (f"independent file view np={_np}", _np,
         ["-C", "--mpiio.useFileView", "-b", "30000", "-t", "10000", "-s", "5"]),
        (f"collective strided datatype np={_np}", _np,
         ["-c", "-C", "--mpiio.useStridedDatatype", "-b", "1m", "-t", "64k", "-s", "2"]),
        (f"file per process np={_np}", _np, ["-F", "-C", "-b", "1m", "-t", "64k", "-s", "2"]),
        (f"random offsets np={_np}", _np,
         ["-z", "--random-offset-seed=7", "-b", "1m", "-t", "64k", "-s", "2"]),
        (f"preallocate and fsync np={_np}", _np,
         ["-C", "--mpiio.preallocate", "-Y", "-b", "1m", "-t", "64k", "-s", "2"]),
    ]

# record.sh's line before each call's output in LOG.out
SEPARATOR = "=== conformance: record.sh call "
RECORD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "record.sh")


log = runner.log


def _apt_source(dl, pkg):
    """Downloads Debian's source package pkg (a dict above) into dl."""
    sudo = [] if os.getuid() == 0 else ["sudo"]
    if not mpich_suite._has_deb_src():
        log("adding a deb-src entry (/etc/apt/sources.list.d/deb-src.sources)")
        subprocess.run(sudo + ["tee", "/etc/apt/sources.list.d/deb-src.sources"],
                       input=mpich_suite.DEB_SRC.encode(), stdout=subprocess.DEVNULL,
                       check=True)
        subprocess.run(sudo + ["apt-get", "update", "-q"], check=True)
    cmd = ["apt-get", "source", "--download-only", f"{pkg['package']}={pkg['deb']}"]
    log(f"fetching {pkg['package']}'s source package: {' '.join(cmd)}")
    if subprocess.run(cmd, cwd=dl).returncode != 0:
        subprocess.run(sudo + ["apt-get", "update", "-q"], check=True)
        subprocess.run(cmd, cwd=dl, check=True)


def _ensure_tools(tools):
    """Installs the Debian packages that give the named commands (as root or
    with sudo) when a command is missing, unless TERN_CONFORMANCE_NO_INSTALL=1."""
    missing = [pkg for cmd, pkg in tools if shutil.which(cmd) is None]
    if not missing or os.environ.get("TERN_CONFORMANCE_NO_INSTALL") == "1":
        return
    sudo = [] if os.getuid() == 0 else ["sudo"]
    log(f"installing {' '.join(missing)}")
    subprocess.run(sudo + ["apt-get", "update", "-q"], check=True)
    subprocess.run(sudo + ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install",
                           "-y", "-q", "--no-install-recommends"] + missing, check=True)


def fetch(cache, pkg):
    """The pristine source tree of a Debian source package, under
    <cache>/src/ (the upstream tarball: Debian's patches change its
    packaging, not testpar or PnetCDF's tests)."""
    src = os.path.join(cache, "src", pkg["dir"])
    stamp = os.path.join(src, ".conformance-unpacked")
    if os.path.isfile(stamp):
        return src
    dl = os.path.join(cache, "downloads")
    os.makedirs(dl, exist_ok=True)
    tarball = os.path.join(dl, pkg["orig"])
    if not os.path.isfile(tarball):
        _apt_source(dl, pkg)
    log(f"unpacking {tarball}")
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(os.path.join(cache, "src"), exist_ok=True)
    subprocess.run(["tar", "-xf", tarball, "-C", os.path.join(cache, "src")], check=True)
    if pkg is PNETCDF:
        # GitHub's tarball: no configure script (Debian's build runs autoreconf)
        _ensure_tools([("autoreconf", "autoconf"), ("automake", "automake"),
                       ("libtoolize", "libtool"), ("m4", "m4")])
        log(f"autoreconf -fi in {src}")
        subprocess.run(["autoreconf", "-fi"], cwd=src, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    open(stamp, "w").close()
    return src


def _configure(src, bdir, prefix, args, logf):
    """Configures src in bdir with the implementation's mpicc, once per
    (arguments, wrapper and interface)."""
    mpicc = os.path.join(prefix, "bin", "mpicc")
    full = [f"CC={mpicc}", f"MPICC={mpicc}"] + args
    stamp_text = "\n".join(full + [mpich_suite._tool_id(prefix)]) + "\n"
    stamp = os.path.join(bdir, ".conformance-configured")
    if os.path.isfile(stamp) and open(stamp).read() == stamp_text:
        return True
    shutil.rmtree(bdir, ignore_errors=True)
    os.makedirs(bdir)
    log(f"configuring {bdir} ({' '.join(args)})")
    with open(logf, "w") as out:
        rc = subprocess.run([os.path.join(src, "configure")] + full, cwd=bdir, stdout=out,
                            stderr=subprocess.STDOUT).returncode
    if rc != 0:
        log(f"configure failed, see {logf}")
        return False
    with open(stamp, "w") as f:
        f.write(stamp_text)
    return True


def _make(cwd, targets, jobs, logf, keep_going=False):
    with open(logf, "a") as out:
        return subprocess.run(["make", "-j", str(jobs)] + (["-k"] if keep_going else [])
                              + targets, cwd=cwd, stdout=out,
                              stderr=subprocess.STDOUT).returncode


def _record(suite, test, np, ok, reason, seconds):
    return {"suite": suite, "dir": suite, "test": test, "np": np,
            "status": "passed" if ok else "failed", "reason": "" if ok else reason,
            "seconds": round(seconds, 1)}


def _first_error(text):
    for pat in (r"(?im)^.*\b(fail(ed|ure)?|error|mismatch|incorrect|abort)\b.*$",):
        m = re.search(pat, text)
        if m:
            return " ".join(m.group(0).split())[:200]
    lines = [l for l in text.splitlines() if l.strip()]
    return " ".join(lines[-1].split())[:200] if lines else "no output"


def _save_output(logdir, name, cmd, r):
    outdir = os.path.join(logdir, "out")
    os.makedirs(outdir, exist_ok=True)
    fname = re.sub(r"[^A-Za-z0-9_.=-]+", "_", name)[:150]
    with open(os.path.join(outdir, fname + ".txt"), "w") as f:
        f.write(f"$ {' '.join(cmd)}\n# exit {r.rc}, {r.seconds:.1f} s\n{r.output}")


# ---------------------------------------------------------------- HDF5

def run_hdf5(cache, impl, prefix, tests, jobs, timeout, logdir, progress=log):
    """Builds HDF5's library, libh5test and the testpar programs in tests,
    runs them; returns the records."""
    src = fetch(cache, HDF5)
    bdir = os.path.join(cache, "io-clients", impl, "hdf5")
    logf = os.path.join(logdir, "hdf5-build.log")
    results = {}
    if not _configure(src, bdir, prefix, HDF5_CONFIGURE, os.path.join(logdir,
                                                                      "hdf5-configure.log")):
        for t in tests:
            results[f"hdf5/{t}|{HDF5_NP}"] = _record("hdf5", t, HDF5_NP, False,
                                                    "does not build: configure failed", 0)
        return results
    t0 = time.time()
    open(logf, "w").close()
    rc = _make(os.path.join(bdir, "src"), [], jobs, logf)
    if rc == 0:
        rc = _make(os.path.join(bdir, "test"), ["libh5test.la"], jobs, logf)
    if rc == 0:
        _make(os.path.join(bdir, "testpar"), tests, jobs, logf, keep_going=True)
    progress(f"hdf5: built in {time.time() - t0:.0f} s (log {logf})")
    tdir = os.path.join(bdir, "testpar")
    # leftovers of an earlier run (t_pflush2 and t_prestart read what the
    # program before them wrote)
    for name in os.listdir(tdir):
        if name.endswith(".h5"):
            os.unlink(os.path.join(tdir, name))
    mpiexec = os.path.join(prefix, "bin", "mpiexec")
    env = dict(os.environ, HDF5_ALARM_SECONDS=str(timeout), srcdir=tdir)
    base = runner.shm_baseline()
    for t in tests:
        key = f"hdf5/{t}|{HDF5_NP}"
        if not os.access(os.path.join(tdir, t), os.X_OK):
            results[key] = _record("hdf5", t, HDF5_NP, False,
                                   "does not build (see hdf5-build.log)", 0)
            continue
        cmd = [mpiexec, "-n", str(HDF5_NP), "./" + t]
        r = runner.run(cmd, tdir, timeout, env=dict(env, MPIEXEC_TIMEOUT=str(timeout)),
                       shm_base=base)
        if r.timed_out:
            ok, why = False, f"timeout after {r.seconds:.0f} s"
        elif t == "t_pflush1":
            # always exits 1 (it leaves without MPI_Finalize on purpose)
            ok = "PASSED" in r.output and "*** ERROR ***" not in r.output
            why = "" if ok else _first_error(r.output)
        else:
            ok = r.rc == 0
            why = "" if ok else f"exit status {r.rc}: {_first_error(r.output)}"
        results[key] = _record("hdf5", t, HDF5_NP, ok, why, r.seconds)
        if not ok:
            _save_output(logdir, f"hdf5-{t}-{HDF5_NP}", cmd, r)
        progress(f"hdf5: {t} {'passed' if ok else 'FAILED: ' + why} ({r.seconds:.0f} s)")
    return results


# ------------------------------------------------------------- PnetCDF

def _make_var(cwd, var):
    """The value of a variable of the Makefile in cwd."""
    r = subprocess.run(["make", "-s", "--no-print-directory", "-f", "Makefile", "-f", "-",
                        "conformance-print-var"], cwd=cwd,
                       input=f"conformance-print-var:\n\t@echo $({var})\n",
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return r.stdout.split()


def pnetcdf_dirs(src, bdir):
    """The directories `make ptest` visits (the configured SUBDIRS of test,
    examples and benchmarks) that have a parallel_run.sh."""
    return [os.path.join(top, sub) for top in ("test", "examples", "benchmarks")
            for sub in _make_var(os.path.join(bdir, top), "SUBDIRS")
            if os.path.isfile(os.path.join(src, top, sub, "parallel_run.sh"))]


def run_pnetcdf(cache, impl, prefix, dirs, jobs, timeout, logdir, progress=log):
    """Builds PnetCDF's library and the test programs of dirs (None: every
    directory `make ptest` visits), runs each directory's `make ptest` (its
    parallel_run.sh, 4 ranks) with every mpiexec and validator call
    recorded by record.sh; returns one record per program."""
    src = fetch(cache, PNETCDF)
    bdir = os.path.join(cache, "io-clients", impl, "pnetcdf")
    results = {}
    if not _configure(src, bdir, prefix, PNETCDF_CONFIGURE,
                      os.path.join(logdir, "pnetcdf-configure.log")):
        results[f"pnetcdf/configure|{PNETCDF_NP}"] = _record(
            "pnetcdf", "configure", PNETCDF_NP, False, "does not build: configure failed", 0)
        return results
    logf = os.path.join(logdir, "pnetcdf-build.log")
    open(logf, "w").close()
    t0 = time.time()
    if _make(bdir, [], jobs, logf) != 0:
        results[f"pnetcdf/library|{PNETCDF_NP}"] = _record(
            "pnetcdf", "library", PNETCDF_NP, False, "does not build (see pnetcdf-build.log)", 0)
        return results
    if dirs is None:
        dirs = pnetcdf_dirs(src, bdir)
    for d in dirs:
        _make(os.path.join(bdir, d), ["tests"], jobs, logf, keep_going=True)
    progress(f"pnetcdf: built in {time.time() - t0:.0f} s (log {logf})")
    results.update(run_pnetcdf_dirs(bdir, dirs, os.path.join(prefix, "bin", "mpiexec"),
                                    timeout, logdir, progress))
    return results


def run_pnetcdf_dirs(bdir, dirs, mpiexec, timeout, logdir, progress=log):
    """Runs make ptest in each of dirs of a built PnetCDF tree."""
    results = {}
    os.makedirs(logdir, exist_ok=True)
    for d in dirs:
        cwd = os.path.join(bdir, d)
        rec = os.path.join(logdir, "pnetcdf-" + d.replace("/", "_") + ".calls")
        for f in (rec, rec + ".out"):
            if os.path.exists(f):
                os.unlink(f)
        limit = str(timeout)
        cmd = ["make", "-s", "ptest", f"TESTMPIRUN={RECORD} {rec} {limit} {mpiexec} -n NP",
               f"TESTSEQRUN={RECORD} {rec} {limit}"]
        t1 = time.time()
        # the whole directory's limit: its programs' limits, summed
        r = runner.run(cmd, cwd, timeout * 40)
        calls = []
        if os.path.isfile(rec):
            for line in open(rec):
                rc, _, what = line.rstrip("\n").partition("\t")
                calls.append((int(rc) if rc.lstrip("-").isdigit() else 1, what.split()))
        outputs = open(rec + ".out", errors="replace").read().split(SEPARATOR) \
            if os.path.isfile(rec + ".out") else []
        tests = []  # [program, ranks, ok, reason]
        for i, (rc, argv) in enumerate(calls):
            out = outputs[i + 1] if i + 1 < len(outputs) else ""
            prog = next((a for a in argv if a.startswith("./")), None)
            if os.path.basename(argv[0]) == "mpiexec" and prog:
                np = int(argv[argv.index("-n") + 1]) if "-n" in argv else PNETCDF_NP
                why = ""
                if rc == 124 or rc == 137:
                    why = f"timeout after {timeout} s"
                elif rc != 0:
                    why = f"exit status {rc}: {_first_error(out.split(chr(10), 1)[-1])}"
                tests.append([prog[2:], np, rc == 0, why])
            elif tests:
                # the validator (or ncmpidiff) checks a program's file: the
                # program the file is named after, else the last one
                base = os.path.basename(argv[-1])
                named = [t for t in tests if base == t[0] or base.startswith(t[0] + ".")]
                t = max(named, key=lambda t: len(t[0])) if named else tests[-1]
                if rc != 0 and t[2]:
                    t[2] = False
                    t[3] = (f"{os.path.basename(argv[0])} rejects its file {base}: "
                            f"{_first_error(out.split(chr(10), 1)[-1])}")
        seen = {}
        for prog, np, ok, why in tests:
            name = f"{d}/{prog}"
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                name += f" #{seen[name]}"
            results[f"pnetcdf/{name}|{np}"] = _record("pnetcdf", name, np, ok, why, 0)
        if r.rc != 0 and not tests:
            # nothing ran: a program did not build, or the script failed
            why = _first_error(r.output)
            results[f"pnetcdf/{d}|{PNETCDF_NP}"] = _record("pnetcdf", d, PNETCDF_NP, False,
                                                          f"make ptest failed: {why}", 0)
            _save_output(logdir, f"pnetcdf-{d}", cmd, r)
        failed = [t for t in tests if not t[2]]
        if failed:
            _save_output(logdir, f"pnetcdf-{d}", cmd, r)
        progress(f"pnetcdf: {d}: {len(tests) - len(failed)} of {len(tests)} programs passed "
                 f"({time.time() - t1:.0f} s)")
    return results


# ----------------------------------------------------------------- IOR

def run_ior(cache, impl, prefix, ior_src, jobs, timeout, logdir, progress=log):
    """Builds IOR from a checkout (ior_src) with the implementation's mpicc
    and runs IOR_RUNS; every run verifies the data it wrote and read."""
    bdir = os.path.join(cache, "io-clients", impl, "ior")
    stamp = os.path.join(bdir, ".conformance-configured")
    mpicc = os.path.join(prefix, "bin", "mpicc")
    head = subprocess.run(["git", "-C", ior_src, "rev-parse", "HEAD"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True).stdout.strip()
    stamp_text = f"{head}\n{mpich_suite._tool_id(prefix)}\n"
    logf = os.path.join(logdir, "ior-build.log")
    results = {}
    if not (os.path.isfile(stamp) and open(stamp).read() == stamp_text):
        _ensure_tools([("autoreconf", "autoconf"), ("automake", "automake"),
                       ("libtoolize", "libtool"), ("m4", "m4")])
        shutil.rmtree(bdir, ignore_errors=True)
        shutil.copytree(ior_src, bdir, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        with open(logf, "w") as out:
            ok = subprocess.run(["./bootstrap"], cwd=bdir, stdout=out,
                                stderr=subprocess.STDOUT).returncode == 0 and \
                subprocess.run(["./configure", f"CC={mpicc}", f"MPICC={mpicc}"], cwd=bdir,
                               stdout=out, stderr=subprocess.STDOUT).returncode == 0
        if not ok:
            results[f"ior/build|1"] = _record("ior", "build", 1, False,
                                             "does not configure (see ior-build.log)", 0)
            return results
        with open(stamp, "w") as f:
            f.write(stamp_text)
    if _make(bdir, [], jobs, logf) != 0:
        results[f"ior/build|1"] = _record("ior", "build", 1, False,
                                         "does not build (see ior-build.log)", 0)
        return results
    mpiexec = os.path.join(prefix, "bin", "mpiexec")
    work = os.path.join(bdir, "run")
    os.makedirs(work, exist_ok=True)
    base = runner.shm_baseline()
    for name, np, args in IOR_RUNS:
        cmd = [mpiexec, "-n", str(np), os.path.join(bdir, "src", "ior"), "-a", "MPIIO"] + \
            IOR_COMMON + args + ["-o", os.path.join(work, "ior.dat")]
        r = runner.run(cmd, work, timeout, env=dict(os.environ, MPIEXEC_TIMEOUT=str(timeout)),
                       shm_base=base)
        bad = [l for l in r.output.splitlines()
               if re.search(r"\b(ERROR|WARNING|Incorrect data)\b", l)]
        ok = r.rc == 0 and not bad and not r.timed_out
        why = "" if ok else (f"timeout after {r.seconds:.0f} s" if r.timed_out else
                             " ".join((bad[0] if bad else f"exit status {r.rc}").split())[:200])
        results[f"ior/{name}|{np}"] = _record("ior", name, np, ok, why, r.seconds)
        if not ok:
            _save_output(logdir, f"ior-{name}", cmd, r)
        progress(f"ior: {name} {'passed' if ok else 'FAILED: ' + why} ({r.seconds:.0f} s)")
    shutil.rmtree(work, ignore_errors=True)
    return results
