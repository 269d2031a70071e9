"""Runs test suites nobody here wrote against Tern (and, with --peers,
against Debian's MPICH 4.0.2 and Open MPI 4.1.4 on the same tests) and
writes docs/conformance.md. Called by scripts/run-conformance.sh; see
docs/conformance.md for the options."""
import argparse
import datetime
import gzip
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import classify  # noqa: E402
import expected  # noqa: E402
import io_clients  # noqa: E402
import mpi4py_suite  # noqa: E402
import mpich_suite  # noqa: E402
import report  # noqa: E402
import runner  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ALL_DIRS = ["attr", "basic", "coll", "comm", "datatype", "errhan", "group", "info", "init",
            "mpi_t", "pt2pt", "part", "rma", "spawn", "topo", "io", "threads", "errors", "impls",
            "f77", "f90", "f08", "ft"]
CI_DIRS = ["pt2pt", "part", "coll", "comm", "group", "datatype", "init", "errhan", "attr",
           "info", "spawn", "rma", "f77", "f90", "basic", "util", "ft"]
# mpi_f08: every directory but io (not implemented; 22 programs that
# fail to build cost CI a minute); f08's programs build slowly (the
# module is large), about 3 minutes on 2 cores.
CI_DIRS += [f"f08/{d}" for d in ("attr", "pt2pt", "coll", "datatype", "comm", "rma", "subarray",
                        "topo", "ext", "info", "init", "misc", "spawn", "timer", "profile")]
# Tests of the CI directories left out of the CI subset (the full run keeps
# them): too slow for a 2-core CI machine, by test key (program and args).
CI_SKIP = {
    "rma/large_acc_flush_local": "37.5 GB of accumulates; 13 s of CPU, 43-69 s on 2 loaded "
                                 "cores",
    "rma/rma_contig -iter=10000": "10,000 iterations of every contiguous RMA pattern (37-47 s "
                                  "on 2 loaded cores); rma_contig -iter=10 runs in CI",
}
# The MPI-IO clients' CI subset (io_clients.py): PnetCDF directories whose
# make ptest runs at 4 ranks in CI; the full run takes every directory
# make ptest visits, every testpar program of HDF5 and IOR where its source
# is present.
CI_CLIENTS = {"pnetcdf": ["test/cdf_format", "test/header", "examples/tutorial"]}
PEERS = {
    # name: (label, compiler wrappers' suffix, mpiexec command)
    "mpich": ("MPICH 4.0.2", ".mpich", ["mpiexec.mpich"]),
    "openmpi": ("Open MPI 4.1.4", ".openmpi",
                ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"]),
}

# Tern's other faces: the suite built with another implementation's
# compiler, run on Tern. tern-mpich: Debian's mpicc.mpich (MPICH's mpi.h,
# no Tern header or wrapper), run by Tern's mpiexec --abi mpich on Tern's
# libmpich.so.12 (docs/design.md, "The MPICH ABI face"); its f77 and f90
# programs (mpif77.mpich, mpifort.mpich) on Tern's libmpichfort.so.12, f08
# too (MPICH's module mpi_f08: its specific procedures and its modules'
# names, docs/design.md). tern-abi: mpi4py built with
# MPI4PY_BUILD_MPIABI=1 by Tern's mpicc_abi (the MPI-5.0 standard ABI's
# mpi.h), run on Tern's libmpi_abi.so.1 (docs/design.md, "The standard
# ABI"); it runs mpi4py's suite only (MPICH's is the MPICH face's).
FACES = {
    # name: (label, compiler wrappers' suffix, mpiexec arguments after Tern's mpiexec)
    "tern-mpich": ("Tern via libmpich.so.12 (built with mpicc.mpich)", ".mpich",
                   ["--abi", "mpich"]),
    "tern-abi": ("Tern via libmpi_abi.so.1 (mpi4py built with MPI4PY_BUILD_MPIABI=1)", "_abi",
                 []),
}
# The suites each face runs: MPICH's test suite, mpi4py's.
FACE_SUITES = {"tern-mpich": ("mpich",), "tern-abi": ("mpi4py",)}
# The faces the CI gate runs with --faces. tern-abi (a second mpi4py
# build and its modules, about 2.5 minutes) runs in full runs only, to
# keep CI under 60 minutes on 2 cores; in CI the standard ABI is checked
# by ctest's abi_* tests.
CI_FACES = ("tern-mpich",)
# Directories a face does not run (none now: f08 joined on 2026-11-29).
FACE_NO_DIRS = ()
# Tests a face fails by its nature (docs/design.md, "The MPICH ABI face"),
# by test key, with why: the face's CI gate does not count them.
FACE_EXPECTED = {
    "tern-mpich": {
        "comm/cmsplit_type .": "MPICH 4.0's MPIX_COMM_TYPE_NEIGHBORHOOD is 4, MPI-4.1's "
                               "MPI_COMM_TYPE_RESOURCE_GUIDED (Tern's) too",
    },
    "tern-abi": {},
}
# The CI subset of a face: the directories of CI_DIRS that cover its
# translations (status, handles, datatypes, error classes, attributes).
# Not f77 and f90: built with mpif77/mpifort.mpich and run they take more
# than 10 minutes on 2 cores; ctest's abi_mpich_fort covers libmpichfort's
# translations in seconds, and the full run takes the directories.
FACE_CI_DIRS = ["pt2pt", "coll", "datatype", "errhan", "attr", "comm", "rma", "basic"]


# The harness library (dtpools) calls MPI_Type_hvector/hindexed, removed in
# MPI-3.0; Open MPI still exports them but hides their declarations unless
# asked, and without them no test would build.
# Its mpif.h declares no interfaces yet gfortran 10+ refuses one routine
# called with buffers of different types in one file unless told.
CONFIGURE_EXTRA = {"openmpi": ["CPPFLAGS=-DOMPI_OMIT_MPI1_COMPAT_DECLS=0",
                               "FFLAGS=-fallow-argument-mismatch",
                               "FCFLAGS=-fallow-argument-mismatch"]}


log = runner.log


def parse_args(argv):
    p = argparse.ArgumentParser(prog="scripts/run-conformance.sh", description=__doc__)
    p.add_argument("--ci", action="store_true",
                   help="the CI subset; fail on a failure not in the expected list and on a "
                        "listed test that passes")
    p.add_argument("--peers", action="store_true",
                   help="also run MPICH 4.0.2 and Open MPI 4.1.4 (Debian) on the same tests")
    p.add_argument("--faces", action="store_true",
                   help="also run Tern's ABI faces: tern-mpich, MPICH's test suite built with "
                        "Debian's mpicc.mpich and run on Tern's libmpich.so.12 (with --ci, "
                        "its CI directories; it fails on a test that passes with Tern's mpi.h "
                        "and fails on the face), and tern-abi, mpi4py's suite built with "
                        "MPI4PY_BUILD_MPIABI=1 by Tern's mpicc_abi on libmpi_abi.so.1 (not "
                        "with --ci)")
    p.add_argument("--impls", help="implementations to run, comma-separated, of tern, mpich, "
                                   "openmpi, tern-mpich (Tern's MPICH ABI face: the suite "
                                   "built with mpicc.mpich, run on Tern's libmpich.so.12), "
                                   "tern-abi (mpi4py built for the standard ABI, on "
                                   "libmpi_abi.so.1) "
                                   "(default: tern; with --peers tern, mpich, openmpi)")
    p.add_argument("--report-with", default="",
                   help="implementations whose last saved results join the report without "
                        "running again; NAME:ci takes those of its last --ci run "
                        "(with --impls none: only write the report)")
    p.add_argument("--only-failing-in", metavar="RESULTS",
                   help="run only the MPICH tests that built but failed, and the mpi4py "
                        "modules with failures, in these saved results (e.g. "
                        "build-conformance/results/tern.json): a quick peer check of Tern's "
                        "failures")
    p.add_argument("--merge", action="store_true",
                   help="merge this run's results into the implementation's saved results "
                        "(its tests replace the saved ones; the rest stay): reruns of a "
                        "directory or of timeouts, or a peer's f08 run, without a full run; "
                        "without it a run of chosen --dirs/--modules/--clients is a check "
                        "that saves nothing over the full results)")
    p.add_argument("--rerun-timeouts", action="store_true",
                   help="run only the MPICH tests and mpi4py modules that timed out in the "
                        "implementation's saved results, and merge (implies --merge)")
    p.add_argument("--dirs", help="MPICH test directories, comma-separated (default: all)")
    p.add_argument("--modules", help="mpi4py test modules, comma-separated (default: all)")
    p.add_argument("--max-ranks", type=int, default=0,
                   help="only the MPICH tests at most this many ranks (default: all; 8 with --ci)")
    p.add_argument("--jobs", type=int, default=2, help="tests run at once and make -j (default 2)")
    p.add_argument("--timeout", type=int,
                   help="seconds per MPICH test without a timeLimit (default 60; 45 with --ci)")
    p.add_argument("--max-timeout", type=int, default=180,
                   help="cap on a test's timeLimit, seconds (default 180)")
    p.add_argument("--module-timeout", type=int, default=300,
                   help="seconds per mpi4py module run (default 300)")
    p.add_argument("--prefix", help="an installed Tern to test (default: build and install "
                                    "this tree into build-conformance/tern)")
    p.add_argument("--no-mpich", action="store_true", help="skip MPICH's test suite")
    p.add_argument("--no-mpi4py", action="store_true", help="skip mpi4py's tests")
    p.add_argument("--clients",
                   help="MPI-IO clients, comma-separated, of hdf5, pnetcdf, ior (default: "
                        "all for Tern, ior where its source is; with --ci the CI subset; "
                        "the peers run them only when asked)")
    p.add_argument("--no-clients", action="store_true", help="skip the MPI-IO clients")
    p.add_argument("--pnetcdf-dirs",
                   help="PnetCDF test directories, comma-separated (e.g. test/testcases; "
                        "default: every directory make ptest visits)")
    p.add_argument("--hdf5-tests", help="HDF5 testpar programs, comma-separated (default: "
                                        "all)")
    p.add_argument("--ior-src", help="an IOR checkout (github hpc/ior; default: "
                                     "<cache>/src/ior when present)")
    p.add_argument("--client-timeout", type=int, default=600,
                   help="seconds per client test program (default 600)")
    p.add_argument("--update-expected", action="store_true",
                   help="rewrite the expected-failure list from this run")
    p.add_argument("--expected", default=os.path.join(ROOT, "tests", "conformance",
                                                      "expected-failures.txt"))
    p.add_argument("--output", help="the report (default: docs/conformance.md; "
                                    "build-conformance/ci-report.md with --ci)")
    p.add_argument("--cache", default=os.path.join(ROOT, "build-conformance"),
                   help="downloads, builds and results (default build-conformance/)")
    args = p.parse_args(argv)
    # Builds and tests run in other directories: a relative cache would
    # point somewhere else there.
    args.cache = os.path.abspath(args.cache)
    return args


def build_tern(cache, jobs):
    bdir = os.path.join(cache, "tern-build")
    prefix = os.path.join(cache, "tern")
    gen = ["-G", "Ninja"] if subprocess.run(["sh", "-c", "command -v ninja"],
                                            stdout=subprocess.DEVNULL).returncode == 0 else []
    log(f"building Tern in {bdir}, installing into {prefix}")
    subprocess.run(["cmake", "-S", ROOT, "-B", bdir] + gen +
                   ["-DCMAKE_BUILD_TYPE=RelWithDebInfo", f"-DCMAKE_INSTALL_PREFIX={prefix}"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", bdir, "-j", str(jobs)], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--install", bdir], check=True, stdout=subprocess.DEVNULL)
    return prefix


def peer_prefix(cache, name):
    """A prefix whose bin/ holds the compiler wrappers (mpicc, mpicxx,
    mpif77, mpifort) and mpiexec of a Debian peer (what MPICH's configure
    --with-mpi wants)."""
    label, suffix, mpiexec = PEERS[name]
    prefix = os.path.join(cache, "peers", name)
    os.makedirs(os.path.join(prefix, "bin"), exist_ok=True)
    for tool in ("mpicc", "mpicxx", "mpif77", "mpifort"):
        path = os.path.join(prefix, "bin", tool)
        if not os.path.lexists(path):
            os.symlink(f"/usr/bin/{tool}{suffix}", path)
    script = os.path.join(prefix, "bin", "mpiexec")
    with open(script, "w") as f:
        f.write("#!/bin/sh\n")
        if name == "openmpi":
            # no CMA (ptrace) in containers
            f.write("export OMPI_MCA_btl_vader_single_copy_mechanism=none\n")
        f.write(f"exec {' '.join(mpiexec)} \"$@\"\n")
    os.chmod(script, 0o755)
    return prefix


def face_prefix(cache, name, tern_prefix):
    """A prefix whose bin/ holds the other implementation's compiler
    wrappers and an mpiexec that is Tern's with the face's arguments."""
    label, suffix, args = FACES[name]
    prefix = os.path.join(cache, "faces", name)
    os.makedirs(os.path.join(prefix, "bin"), exist_ok=True)
    tools = ("mpicc", "mpicxx", "mpif77", "mpifort")
    if suffix == "_abi":  # Tern's own ABI wrappers (C and C++ only)
        tools = ("mpicc", "mpicxx")
    for tool in tools:
        path = os.path.join(prefix, "bin", tool)
        target = os.path.join(tern_prefix, "bin", tool + suffix) if suffix == "_abi" else \
            f"/usr/bin/{tool}{suffix}"
        if os.path.islink(path) and os.readlink(path) != target:
            os.unlink(path)
        if not os.path.lexists(path):
            os.symlink(target, path)
    script = os.path.join(prefix, "bin", "mpiexec")
    with open(script, "w") as f:
        f.write("#!/bin/sh\n")
        f.write(f"exec {os.path.join(tern_prefix, 'bin', 'mpiexec')} {' '.join(args)} \"$@\"\n")
    os.chmod(script, 0o755)
    return prefix


def face_regressions(tern, face, expected):
    """[(test, ranks)] that passed with Tern's own mpi.h and failed on the
    face, in results of the same run, but the face's expected ones."""
    passed = {(r["test"], r["np"]) for r in tern["mpich"].values() if r["status"] == "passed"}
    out = [(r["test"], r["np"]) for r in face["mpich"].values()
           if r["status"] == "failed" and (r["test"], r["np"]) in passed and
           r["test"] not in expected]
    # mpi4py: a test case that passed natively and failed or erred on the face
    for key, r in face["mpi4py"].items():
        native = tern["mpi4py"].get(key, {}).get("cases", {})
        for tid, (st, _) in r.get("cases", {}).items():
            if st in ("failed", "error") and native.get(tid, ["?"])[0] == "passed" and \
                    tid not in expected:
                out.append((tid, r["np"]))
    return sorted(out)


def tern_commit():
    r = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"],
                       stdout=subprocess.PIPE, text=True)
    # changes to the harness and the docs do not change what is tested
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no",
                            "--", ".", ":!tools/conformance", ":!tests/conformance", ":!docs",
                            ":!scripts", ":!README.md"],
                           stdout=subprocess.PIPE, text=True).stdout.strip()
    return r.stdout.strip() + (" (with uncommitted changes)" if dirty else "")


def _failing(path):
    """({(test key, ranks)} of MPICH tests that built and failed, {mpi4py
    modules with a failure}) in saved results."""
    with open(path) as f:
        data = json.load(f)
    tests = {(r["test"], r["np"]) for r in data["mpich"].values()
             if r["status"] == "failed" and r.get("built", True)}
    mods = {r["test"] for r in data["mpi4py"].values() if r.get("fails")}
    return tests, mods


# The results behind docs/conformance.md, kept in the repository (gzip'ed
# JSON), so that a later session on a fresh machine can rerun one directory
# or one peer with --merge, or rewrite the page with --report-with, instead
# of running every implementation again.
KEPT = os.path.join(ROOT, "tests", "conformance", "results")


def _results_path(args, impl):
    """The implementation's saved results in the cache; on a fresh cache the
    copy kept in the repository is brought there first (not for --ci)."""
    path = os.path.join(args.cache, "results", f"{impl}{'-ci' if args.ci else ''}.json")
    kept = os.path.join(KEPT, f"{impl}.json.gz")
    if not args.ci and not os.path.isfile(path) and os.path.isfile(kept):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with gzip.open(kept, "rt") as f, open(path, "w") as out:
            out.write(f.read())
        log(f"{impl}: saved results taken from {os.path.relpath(kept, ROOT)}")
    return path


def _partial(args):
    """Whether this run tests a chosen subset without --merge: its results
    then go to results/<impl>-partial.json and its report beside them, and
    neither replaces the full saved results, the kept copy nor
    docs/conformance.md (a one-directory check would otherwise drop every
    other directory from the page)."""
    subset = (args.dirs or args.modules or args.only_failing_in or args.no_mpich or
              args.no_mpi4py or args.clients or args.no_clients or args.hdf5_tests or
              args.pnetcdf_dirs or args.max_ranks)
    return bool(subset) and not (args.ci or args.merge or args.rerun_timeouts)


def _keep(results):
    """Writes the results behind a docs/conformance.md into KEPT."""
    os.makedirs(KEPT, exist_ok=True)
    for impl, data in results.items():
        # mtime=0: the same results give the same bytes (no diff churn).
        with open(os.path.join(KEPT, f"{impl}.json.gz"), "wb") as raw, \
                gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(json.dumps(data, indent=0, sort_keys=True).encode())
    log(f"results kept in {os.path.relpath(KEPT, ROOT)}: {', '.join(sorted(results))}")


def _timed_out(path):
    """({(test key, ranks)} of MPICH tests, {mpi4py modules}) that timed out
    in saved results."""
    with open(path) as f:
        data = json.load(f)
    tests = {(r["test"], r["np"]) for r in data["mpich"].values()
             if r["status"] == "failed" and r.get("reason", "").startswith("timeout")}
    mods = {r["test"] for r in data["mpi4py"].values()
            if any("whole module" in t and m.startswith("timeout") for t, m in r.get("fails", []))}
    return tests, mods


def _merge(path, new):
    """The saved results at path with new's tests and modules in place of
    theirs; new's run is noted under "reruns"."""
    with open(path) as f:
        old = json.load(f)
    old["mpich"].update(new["mpich"])
    old["mpi4py"].update(new["mpi4py"])
    old.setdefault("clients", {}).update(new.get("clients", {}))
    old["dirs"] = old["dirs"] + [d for d in new["dirs"] if d not in old["dirs"]]
    if old["modules"] is None:  # an MPICH-only run merged with an mpi4py run
        old["modules"] = new["modules"]
    old["notes"] = old["notes"] + [n for n in new["notes"] if n not in old["notes"]]
    what = f"{len(new['mpich'])} MPICH tests, {len(new['mpi4py'])} mpi4py module runs"
    old.setdefault("reruns", []).append({"command": new["command"], "date": new["date"],
                                         "commit": new["commit"], "what": what,
                                         "seconds": new["seconds"]})
    return old


def run_impl(args, impl, prefix, dirs, mods):
    """Both suites against one implementation; results are also saved as
    JSON under the cache (results/<impl>.json)."""
    logdir = os.path.join(args.cache, "logs", impl)
    shutil.rmtree(os.path.join(logdir, "out"), ignore_errors=True)
    os.makedirs(os.path.join(logdir, "out"), exist_ok=True)
    mpiexec = os.path.join(prefix, "bin", "mpiexec")
    started = time.time()
    mpich, m4py, notes = {}, {}, []
    if dirs:
        src = mpich_suite.fetch(args.cache)
        tree = os.path.join(args.cache, "mpich-tests", impl)
        if mpich_suite.configure(src, tree, prefix, logdir, CONFIGURE_EXTRA.get(impl, ())):
            tests, prebuild = mpich_suite.read_tests(tree, dirs)
            if args.max_ranks:
                tests = [t for t in tests if t.np <= args.max_ranks]
            if args.ci:
                tests = [t for t in tests if t.key not in CI_SKIP]
            if args.only_failing_in:
                keep = _failing(args.only_failing_in)[0]
                tests = [t for t in tests if (t.key, t.np) in keep]
            if args.rerun_timeouts:
                keep = _timed_out(_results_path(args, impl))[0]
                tests = [t for t in tests if (t.key, t.np) in keep]
            gaps = mpich_suite.fortran_gaps(prefix, dirs, logdir)
            for d, why in sorted(gaps.items()):
                log(f"{impl}: {d}: {why}")
            failed = mpich_suite.build(tree, tests, prebuild, args.jobs, logdir, gaps)
            log(f"{impl}: {len(tests)} MPICH tests, {len(failed)} programs do not build")
            mpich = mpich_suite.run_tests(tree, tests, failed, mpiexec, args.jobs, args.timeout,
                                          args.max_timeout, logdir,
                                          progress=lambda m: log(f"{impl}: {m}"))
        else:
            notes.append(f"MPICH's test suite does not configure with {impl}")
    if mods is not None:
        py = mpi4py_suite.venv(args.cache, impl)
        sdist, src = mpi4py_suite.fetch(args.cache, py)
        py = mpi4py_suite.build(py, sdist, impl, prefix, logdir)
        if py:
            names = mpi4py_suite.modules(src, mods)
            if args.only_failing_in:
                names = [m for m in names if m in _failing(args.only_failing_in)[1]]
            if args.rerun_timeouts:
                names = [m for m in names if m in _timed_out(_results_path(args, impl))[1]]
            m4py = mpi4py_suite.run_all(py, src, names, [1, 2],
                                        mpiexec, args.module_timeout, logdir,
                                        progress=lambda m: log(f"{impl}: {m}"))
        else:
            notes.append(f"mpi4py does not build with {impl}")
    clients = {}
    for suite in args.client_list if impl == "tern" or args.clients else []:
        progress = lambda m: log(f"{impl}: {m}")  # noqa: E731
        if suite == "hdf5":
            clients.update(io_clients.run_hdf5(args.cache, impl, prefix, args.hdf5_list,
                                               args.jobs, args.client_timeout, logdir,
                                               progress))
        elif suite == "pnetcdf":
            clients.update(io_clients.run_pnetcdf(args.cache, impl, prefix, args.pnetcdf_list,
                                                  args.jobs, args.client_timeout, logdir,
                                                  progress))
        elif suite == "ior":
            if args.ior_src and os.path.isdir(args.ior_src):
                clients.update(io_clients.run_ior(args.cache, impl, prefix, args.ior_src,
                                                  args.jobs, args.client_timeout, logdir,
                                                  progress))
            else:
                notes.append("IOR not run (no source: --ior-src)")
    data = {"impl": impl, "dirs": dirs, "modules": mods, "mpich": mpich, "mpi4py": m4py,
            "clients": clients,
            "notes": notes, "seconds": round(time.time() - started), "commit": tern_commit(),
            "only_failing_in": os.path.basename(args.only_failing_in or ""),
            "command": "scripts/run-conformance.sh " + " ".join(sys.argv[1:]),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    os.makedirs(os.path.join(args.cache, "results"), exist_ok=True)
    path = os.path.join(args.cache, "results", f"{impl}-partial.json") if _partial(args) \
        else _results_path(args, impl)
    if (args.merge or args.rerun_timeouts) and os.path.isfile(path):
        data = _merge(path, data)
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
    return data


def main(argv):
    args = parse_args(argv)
    if args.timeout is None:
        args.timeout = 45 if args.ci else 60
    if args.ci and not args.max_ranks:
        args.max_ranks = 8  # the project's tests run 1-8 ranks on 2 cores
    t0 = time.time()
    os.makedirs(args.cache, exist_ok=True)
    if args.dirs:
        dirs = [d for d in args.dirs.split(",") if d]
    else:
        dirs = CI_DIRS if args.ci else ALL_DIRS
    dirs = [] if args.no_mpich else dirs
    if args.modules:
        mods = [m for m in args.modules.split(",") if m]
    else:
        mods = mpi4py_suite.CI_MODULES if args.ci else []
    mods = None if args.no_mpi4py else mods
    if args.clients:
        args.client_list = [c for c in args.clients.split(",") if c]
    else:
        args.client_list = list(CI_CLIENTS) if args.ci else list(io_clients.SUITES)
    if args.no_clients:
        args.client_list = []
    for c in args.client_list:
        if c not in io_clients.SUITES:
            raise SystemExit(f"conformance: unknown client {c!r}")
    args.pnetcdf_list = [d for d in args.pnetcdf_dirs.split(",") if d] if args.pnetcdf_dirs \
        else CI_CLIENTS.get("pnetcdf") if args.ci else None
    args.hdf5_list = [t for t in args.hdf5_tests.split(",") if t] if args.hdf5_tests \
        else CI_CLIENTS.get("hdf5", io_clients.HDF5_TESTS) if args.ci else io_clients.HDF5_TESTS
    if not args.ior_src and os.path.isdir(os.path.join(args.cache, "src", "ior")):
        args.ior_src = os.path.join(args.cache, "src", "ior")
    impls = args.impls.split(",") if args.impls else \
        (["tern"] + list(PEERS) if args.peers else ["tern"])
    if args.faces and not args.impls:
        impls += list(CI_FACES if args.ci else FACES)
    impls = [] if impls == ["none"] else impls
    saved = {}
    for item in (i for i in args.report_with.split(",") if i):
        name, _, kind = item.partition(":")
        saved[name] = "-ci" if kind == "ci" or (not kind and args.ci) else ""
    for i in impls + list(saved):
        if i != "tern" and i not in PEERS and i not in FACES:
            raise SystemExit(f"conformance: unknown implementation {i!r}")
    prefix = None
    if "tern" in impls or any(f in impls for f in FACES):
        prefix = os.path.abspath(args.prefix) if args.prefix else build_tern(args.cache, args.jobs)
    elif args.prefix:
        prefix = os.path.abspath(args.prefix)

    results = {}
    for name in ["tern"] + list(PEERS) + list(FACES):
        if name in FACES and name in impls:
            face_dirs = [d for d in dirs if d.split("/")[0] not in FACE_NO_DIRS and
                         (not args.ci or args.dirs or d in FACE_CI_DIRS)]
            suites = FACE_SUITES[name]
            results[name] = run_impl(args, name, face_prefix(args.cache, name, prefix),
                                     face_dirs if "mpich" in suites else [],
                                     mods if "mpi4py" in suites else None)
        elif name in impls:
            where = prefix if name == "tern" else peer_prefix(args.cache, name)
            results[name] = run_impl(args, name, where, dirs, mods)
        elif name in saved:
            path = _results_path(args, name) if not saved[name] else \
                os.path.join(args.cache, "results", f"{name}{saved[name]}.json")
            with open(path) as f:
                results[name] = json.load(f)
    if "tern" not in results:
        log("Tern not run: no report and no gate")
        return 0

    tern = results["tern"]
    entries = expected.load(args.expected)
    outs = expected.outcomes(tern["mpich"], tern["mpi4py"], tern.get("clients"))
    new, fixed = expected.compare(entries, outs, tern["mpich"], tern["mpi4py"],
                                  tern.get("clients"))
    if args.update_expected:
        missing = classify.missing_procedures(os.path.join(prefix, "bin", "tern-info")) \
            if prefix else {}
        entries = expected.update(entries, outs, tern["mpich"], tern["mpi4py"],
                                  lambda why: classify.reason(why, missing),
                                  tern.get("clients"))
        expected.save(args.expected, entries)
        log(f"wrote {args.expected} ({len(entries)} entries)")
    output = args.output or (os.path.join(args.cache, "ci-report.md") if args.ci else
                             os.path.join(args.cache, "partial-report.md") if _partial(args)
                             else os.path.join(ROOT, "docs", "conformance.md"))
    command = "scripts/run-conformance.sh " + " ".join(argv)
    report.write(output, command.strip(), tern_commit(), results, entries,
                 {**PEERS, **FACES}, time.time() - t0)
    log(f"wrote {output} after {time.time() - t0:.0f} s")
    if not args.ci and not _partial(args):
        _keep(results)

    if not args.ci:
        return 0
    for k, why in new:
        print(f"conformance: NEW FAILURE {k[0]} | {k[1]} | {k[2]} | {why}")
    for k, why in fixed:
        print(f"conformance: NOW PASSES (remove it from the expected list) {k[0]} | {k[1]} | "
              f"{k[2]} | {why}")
    # A face passes what Tern's own mpi.h passes.
    regressions = {f: face_regressions(tern, results[f], FACE_EXPECTED.get(f, {}))
                   for f in FACES if f in results}
    for f, tests in regressions.items():
        for t, np_ in tests:
            print(f"conformance: FACE FAILURE {f}: {t} ({np_} ranks) passes with Tern's mpi.h")
    if new or fixed or any(regressions.values()):
        log(f"CI subset: {len(new)} failures not in {args.expected}, "
            f"{len(fixed)} listed tests that pass, "
            f"{sum(len(v) for v in regressions.values())} face failures")
        return 1
    log("CI subset: every failure is expected and every listed test still fails")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
