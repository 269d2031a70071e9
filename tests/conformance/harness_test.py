#!/usr/bin/env python3
"""Tests of the conformance harness (tools/conformance) without the external
suites: testlist reading, outcomes decided like MPICH's runtests, the time
limit and the cleanup of leftover processes, the expected-list gate and its
rewrite, and build-failure reasons."""
import os
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools", "conformance"))
import classify  # noqa: E402
import expected  # noqa: E402
import mpich_suite  # noqa: E402
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


for fn in (test_read_tests, test_judge, test_run_timeout_and_cleanup, test_expected_gate,
           test_classify):
    fn()
print("conformance harness:", "FAILED" if failures else "all checks passed")
sys.exit(1 if failures else 0)
