#!/usr/bin/env python3
"""Tests of the conformance harness (tools/conformance) without the external
suites: testlist reading, outcomes decided like MPICH's runtests, the time
limit and the cleanup of leftover processes, the expected-list gate and its
rewrite, build-failure reasons, the Fortran probes, merged reruns and the
report's side-by-side totals."""
import os
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "conformance"))
import classify  # noqa: E402
import conformance  # noqa: E402
import expected  # noqa: E402
import io_clients  # noqa: E402
import json  # noqa: E402
import mpich_suite  # noqa: E402
import report  # noqa: E402
import runner  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}")


def test_read_tests():
    with tempfile.TemporaryDirectory() as tree:
        os.makedirs(os.path.join(tree, "coll", "sub"))
        with open(os.path.join(tree, "coll", "testlist"), "w") as f:
            f.write("# comment\nallred 4 arg=-count=10\nallred 4 arg=-count=100\n"
                    "allred 4 arg=-count=10\nbcast\nsub\n"
                    "ext 2 strict=false\nslow 3 timeLimit=300 resultTest=TestStatus\n")
        with open(os.path.join(tree, "coll", "sub", "testlist"), "w") as f:
            f.write("inner 2 env=A=1\n")
        tests, _ = mpich_suite.read_tests(tree, ["coll", "absent"])
        keys = [(t.key, t.np) for t in tests]
        check(keys == [("coll/allred -count=10", 4), ("coll/allred -count=100", 4),
                       ("coll/allred -count=10 #2", 4), ("coll/bcast", 2),
                       ("coll/sub/inner A=1", 2), ("coll/ext", 2), ("coll/slow", 3)],
              f"testlist entries, keys and default rank count: {keys}")
        by = {t.key: t for t in tests}
        check(by["coll/sub/inner A=1"].dir == "coll/sub" and by["coll/sub/inner A=1"].top() == "coll",
              "a sub-testlist's tests run in their directory and count for the top one")
        check(by["coll/ext"].skip is not None, "strict=false tests are skipped")
        check(by["coll/slow"].time_limit == "300" and by["coll/slow"].result_test == "TestStatus",
              "timeLimit and resultTest are read")


def test_judge():
    t = mpich_suite.Test("d", "p", 2, {})
    r = runner.Result
    check(mpich_suite._judge(t, r(0, " No Errors\n", 1, False))[0], "No Errors and exit 0 passes")
    ok, why = mpich_suite._judge(t, r(0, "warning: x\n No Errors\n", 1, False))
    check(not ok and why == "warning: x", f"any other output fails, naming its line: {why}")
    check(not mpich_suite._judge(t, r(1, " No Errors\n", 1, False))[0], "a non-zero exit fails")
    ok, why = mpich_suite._judge(t, r(1, "mpiexec: rank 0 called MPI_Abort with code 1\n"
                                         "MPI_THREAD_MULTIPLE not supported\n", 1, False))
    check(why == "MPI_THREAD_MULTIPLE not supported",
          f"the reason is the test's own line, not the launcher's: {why}")
    check(not mpich_suite._judge(t, r(0, "", 1, False))[0], "no output fails")
    ok, why = mpich_suite._judge(t, r(-9, " No Errors\n", 60, True))
    check(not ok and why.startswith("timeout"), "a killed test is a timeout")
    ts = mpich_suite.Test("d", "p", 2, {"resultTest": "TestStatus"})
    check(mpich_suite._judge(ts, r(1, "error text\n", 1, False))[0], "TestStatus wants non-zero")
    check(not mpich_suite._judge(ts, r(0, "", 1, False))[0], "TestStatus fails on exit 0")


def test_run_timeout_and_cleanup():
    with tempfile.TemporaryDirectory() as d:
        pidfile = os.path.join(d, "pid")
        # a child that leaves the parent's session, as a rank might
        script = (f"setsid sh -c 'echo $$ > {pidfile}; exec sleep 60' & sleep 0.5; "
                  "echo started; sleep 60")
        t0 = time.monotonic()
        res = runner.run(["sh", "-c", script], d, 2)
        check(res.timed_out and time.monotonic() - t0 < 15, "a hang becomes a timeout")
        check("started" in res.output, "the output before the timeout is kept")
        pid = int(open(pidfile).read())
        time.sleep(0.3)
        alive = os.path.exists(f"/proc/{pid}") and \
            open(f"/proc/{pid}/stat").read().split()[2] != "Z"
        check(not alive, "a leftover process outside the session is killed")
        res = runner.run(["sh", "-c", "echo hi; exit 3"], d, 10)
        check(res.rc == 3 and res.output == "hi\n" and not res.timed_out, "exit status and output")


def test_expected_gate():
    mpich = {"a|2": {"suite": "mpich", "dir": "coll", "test": "coll/a", "np": 2,
                     "status": "failed", "reason": "boom"},
             "b|2": {"suite": "mpich", "dir": "coll", "test": "coll/b", "np": 2,
                     "status": "passed", "reason": ""},
             "c|4": {"suite": "mpich", "dir": "coll", "test": "coll/c", "np": 4,
                     "status": "failed", "reason": "bad"}}
    m4py = {"test_x|1": {"suite": "mpi4py", "test": "test_x", "np": 1,
                         "cases": {"test_x.T.t1": ["passed", ""], "test_x.T.t2": ["failed", "E"]},
                         "fails": [("test_x.T.t2", "E")]}}
    entries = {("mpich", "coll/b", 2): "Tern defect: b",
               ("mpich", "coll/c", 4): "rma #13",
               ("mpich", "pt2pt/z", 2): "outside this run",
               ("mpi4py", "test_x.T.t1", 1): "Tern defect: t1"}
    outs = expected.outcomes(mpich, m4py)
    new, fixed = expected.compare(entries, outs, mpich, m4py)
    check([k for k, _ in new] == [("mpi4py", "test_x.T.t2", 1), ("mpich", "coll/a", 2)],
          f"failures not listed are reported: {new}")
    check([k for k, _ in fixed] == [("mpi4py", "test_x.T.t1", 1), ("mpich", "coll/b", 2)],
          f"listed tests that pass are reported: {fixed}")
    flaky = dict(entries)
    flaky[("mpich", "coll/b", 2)] = "flaky: slow"
    check(expected.compare(flaky, outs, mpich, m4py)[1] == [(("mpi4py", "test_x.T.t1", 1),
                                                               "Tern defect: t1")],
          "a flaky entry that passes is accepted")
    upd = expected.update(entries, outs, mpich, m4py,
                          lambda why: "chapter" if why == "E" else None)
    check(upd == {("mpich", "coll/a", 2): "unclassified: boom",
                  ("mpich", "coll/c", 4): "rma #13",
                  ("mpich", "pt2pt/z", 2): "outside this run",
                  ("mpi4py", "test_x.T.t2", 1): "chapter"},
          f"update keeps reasons, drops passing tests, keeps other directories: {upd}")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "x", "expected.txt")
        expected.save(path, upd)
        check(expected.load(path) == upd, "the list reads back what was written")


def test_classify():
    missing = {"MPI_Win_create": 12, "MPI_Add_error_class": 9, "MPI_Send_c": 3}
    r = classify.reason
    check(r("does not build: undefined reference to MPI_Win_create", missing).startswith("rma #13"),
          "a one-sided procedure is rma #13")
    check(r("does not build: x.c:1:2: error: ‘MPI_LOCK_SHARED’ undeclared", missing)
          .startswith("rma #13"), "a one-sided constant is rma #13")
    check(r("does not build: undefined reference to MPI_Add_error_class", missing)
          == "Tern defect: MPI_Add_error_class not implemented",
          "a missing procedure of a started chapter is a Tern defect")
    check(r("does not build: undefined reference to MPI_Comm_spawn", missing)
          .startswith("spawn/"), "spawn")
    check(r("NotImplementedError (MPI_Win_create)", missing).startswith("rma #13"),
          "mpi4py's NotImplementedError names the missing procedure")
    check(r("Unexpected error code", missing) is None, "runtime failures stay unclassified")


def test_fortran_gaps():
    """A directory whose probe does not build is a gap with its reason;
    one whose probe builds is not; C directories are never probed."""
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "bin"))
        # a compiler that knows mpif.h and `use mpi` but not `use mpi_f08`
        for tool in ("mpif77", "mpifort"):
            path = os.path.join(d, "bin", tool)
            with open(path, "w") as f:
                f.write("#!/bin/sh\n! grep -q mpi_f08 \"$1\"\n")
            os.chmod(path, 0o755)
        gaps = mpich_suite.fortran_gaps(d, ["pt2pt", "f77", "f90", "f08"], d)
        check(set(gaps) == {"f08"}, f"only f08 is a gap: {gaps}")
        check("no mpi_f08 module" in gaps.get("f08", ""), "the f08 gap names the module")
        check(classify.reason(gaps.get("f08", ""), {}).startswith("Fortran: the mpi_f08"),
              "an f08 gap is classified")


def test_patch_f08():
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "configure"), "w") as f:
            f.write("x\n" + mpich_suite.F08_PATCH[0] + "\n   f08dir=f08\n")
        mpich_suite._patch_f08(d)
        text = open(os.path.join(d, "configure")).read()
        check(mpich_suite.F08_PATCH[1] in text and "FROM_MPICH" not in text,
              "configure enables f08 against an installed MPI")


def test_merge_and_timeouts():
    """--merge: the new run's tests replace the saved ones, the rest stay;
    --rerun-timeouts picks what timed out."""
    def res(status, reason=""):
        return {"suite": "mpich", "dir": "rma", "test": "rma/a", "np": 2, "status": status,
                "built": True, "reason": reason}
    saved = {"impl": "tern", "dirs": ["rma"], "modules": None, "notes": [], "command": "c0",
             "mpich": {"rma/a|2": res("failed", "timeout after 60 s"),
                       "rma/b|2": dict(res("failed", "wrong"), test="rma/b")},
             "mpi4py": {}}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "tern.json")
        with open(path, "w") as f:
            json.dump(saved, f)
        tests, mods = conformance._timed_out(path)
        check(tests == {("rma/a", 2)} and not mods, f"only the timeout is rerun: {tests}")
        new = {"dirs": ["rma", "f77"], "modules": [], "notes": [], "command": "c1",
               "date": "now", "commit": "x", "seconds": 60,
               "mpich": {"rma/a|2": res("passed")},
               "mpi4py": {"test_win|1": {"test": "test_win", "np": 1}}}
        merged = conformance._merge(path, new)
        check(merged["mpich"]["rma/a|2"]["status"] == "passed", "the rerun replaces the test")
        check(merged["mpich"]["rma/b|2"]["reason"] == "wrong", "the others stay")
        check(merged["dirs"] == ["rma", "f77"] and merged["modules"] == [],
              "directories and modules join")
        check(merged["command"] == "c0" and merged["reruns"][0]["command"] == "c1",
              "the first run stays the page's; the rerun is noted")


def test_pnetcdf_ptest():
    """A directory's make ptest run through record.sh: one record per
    program, the validator's verdict joined to the program whose file it
    checked, a failing program not stopping the script."""
    with tempfile.TemporaryDirectory() as d:
        w = os.path.join(d, "test", "t")
        os.makedirs(w)
        mpiexec = os.path.join(d, "mpiexec")
        with open(mpiexec, "w") as f:
            # "runs" ./prog FILE: writes FILE; ./bad exits 3, ./corrupt writes junk
            f.write('#!/bin/sh\nshift 2\ncase "$1" in ./bad) echo "oops: bad failed"; exit 3;; '
                    './corrupt) echo junk > "$2";; *) echo good > "$2";; esac\n'
                    'echo "*** TESTING $1 ------ pass"\n')
        validator = os.path.join(d, "validate")
        with open(validator, "w") as f:
            f.write('#!/bin/sh\ngrep -q good "$2"\n')
        os.chmod(mpiexec, 0o755)
        os.chmod(validator, 0o755)
        with open(os.path.join(w, "parallel_run.sh"), "w") as f:
            f.write("#!/bin/sh\nset -e\nMPIRUN=`echo ${TESTMPIRUN} | sed -e \"s/NP/$1/g\"`\n"
                    "for i in ${check_PROGRAMS}; do ${MPIRUN} ./$i ./$i.nc; done\n"
                    f"for i in ${{check_PROGRAMS}}; do ${{TESTSEQRUN}} {validator} -q ./$i.nc; done\n")
        os.chmod(os.path.join(w, "parallel_run.sh"), 0o755)
        with open(os.path.join(w, "Makefile"), "w") as f:
            f.write("check_PROGRAMS = ok bad corrupt ok2\nptest:\n\texport TESTMPIRUN=\"$(TESTMPIRUN)\"; "
                    "export TESTSEQRUN=\"$(TESTSEQRUN)\"; export check_PROGRAMS=\"$(check_PROGRAMS)\"; "
                    "./parallel_run.sh 4\n")
        res = io_clients.run_pnetcdf_dirs(d, ["test/t"], mpiexec, 20, os.path.join(d, "logs"),
                                          progress=lambda m: None)
        got = {k: (v["status"], v["reason"][:30]) for k, v in res.items()}
        check(set(got) == {f"pnetcdf/test/t/{p}|4" for p in ("ok", "bad", "corrupt", "ok2")},
              f"one record per program: {got}")
        check(got.get("pnetcdf/test/t/ok|4", ("",))[0] == "passed" and
              got.get("pnetcdf/test/t/ok2|4", ("",))[0] == "passed", f"passing programs: {got}")
        check(got.get("pnetcdf/test/t/bad|4", ("", ""))[1].startswith("exit status 3: oops"),
              f"a failing program's status and first error line: {got}")
        check(got.get("pnetcdf/test/t/corrupt|4", ("", ""))[1].startswith("validate rejects"),
              f"the validator's verdict goes to the file's program: {got}")
    clients = {"x": {"suite": "pnetcdf", "dir": "pnetcdf", "test": "test/t/bad", "np": 4,
                     "status": "failed", "reason": "boom"},
               "y": {"suite": "hdf5", "dir": "hdf5", "test": "t_mpi", "np": 4,
                     "status": "passed", "reason": ""}}
    entries = {("hdf5", "t_mpi", 4): "Tern defect: x", ("hdf5", "t_cache", 4): "elsewhere"}
    outs = expected.outcomes({}, {}, clients)
    new, fixed = expected.compare(entries, outs, {}, {}, clients)
    check([k for k, _ in new] == [("pnetcdf", "test/t/bad", 4)] and
          [k for k, _ in fixed] == [("hdf5", "t_mpi", 4)], f"the gate sees clients: {new} {fixed}")
    upd = expected.update(entries, outs, {}, {}, None, clients)
    check(upd == {("pnetcdf", "test/t/bad", 4): "unclassified: boom",
                  ("hdf5", "t_cache", 4): "elsewhere"}, f"update with clients: {upd}")


def test_summary():
    def r(top, status, built=True):
        return {"dir": top, "status": status, "built": built}
    results = {"tern": {"mpich": {"1": r("pt2pt", "passed"), "2": r("pt2pt", "failed", False),
                                  "3": r("rma", "passed"), "4": r("pt2pt", "skipped")},
                        "mpi4py": {"m|1": {"tests": 5, "passed": 3, "skipped": 1}}}}
    rows = "\n".join(report._summary(results, ["tern"], {"tern": "Tern"}))
    check("| 1 passed of 2 (1 built) |" in rows, f"required directories counted: {rows}")
    check("| 2 passed of 3 (2 built) |" in rows, "all directories counted")
    check("3 passed of 4 run (1 skipped)" in rows, "mpi4py counted")


def test_partial_runs_keep_nothing():
    def a(*argv):
        return conformance.parse_args(list(argv))
    check(not conformance._partial(a()), "a full run saves and keeps its results")
    check(conformance._partial(a("--dirs", "io")), "one directory's run is a check")
    check(conformance._partial(a("--no-mpich", "--modules", "test_io")), "so is one module's")
    check(not conformance._partial(a("--dirs", "io", "--merge")), "--merge saves it merged")
    check(not conformance._partial(a("--ci")), "--ci has results of its own")


for fn in (test_read_tests, test_judge, test_run_timeout_and_cleanup, test_expected_gate,
           test_classify, test_fortran_gaps, test_patch_f08, test_merge_and_timeouts,
           test_summary, test_pnetcdf_ptest, test_partial_runs_keep_nothing):
    fn()
print("conformance harness:", "FAILED" if failures else "all checks passed")
sys.exit(1 if failures else 0)
