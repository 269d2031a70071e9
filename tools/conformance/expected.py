"""The expected-failure list (tests/conformance/expected-failures.txt):
one line per test that fails with Tern today, `suite | test | ranks |
reason`. The CI subset fails on a failure not listed and on a listed test
that now passes, so the list only shrinks and never hides a regression."""
import os

HEADER = """\
# Tests of the external suites that fail with Tern today, one a line:
#   suite | test | ranks | reason
# suite: mpich (MPICH 4.0.2's test/mpi: directory/program and its arguments)
#     or mpi4py (4.1.2: module.Class.test, or "module (the whole module)")
#     or an MPI-IO client: hdf5 (testpar program), pnetcdf (directory/program
#     of make ptest), ior (a run of IOR_RUNS in tools/conformance/io_clients.py).
# reason: a chapter not implemented yet, with its issue (rma #13,
#     topo/MPI-4 #14, Fortran #15, io, spawn/dynamic processes, MPI_T tools,
#     threads, part...), a named test defect, or for now "Tern defect: <what>".
#     "unclassified: ..." entries were written by --update-expected and wait
#     for a human. "flaky: ..." entries pass in some runs (too slow for the
#     time limit on a loaded machine): the gate accepts them either way.
# scripts/run-conformance.sh --ci fails on any failure not listed here and on
# any listed test that passes; --update-expected rewrites this file from a run.
"""


def load(path):
    """{(suite, test, ranks): reason}"""
    entries = {}
    if not os.path.isfile(path):
        return entries
    for n, line in enumerate(open(path), 1):
        line = line.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) < 4 or not parts[2].isdigit():
            raise SystemExit(f"{path}:{n}: expected 'suite | test | ranks | reason', got: {line}")
        entries[(parts[0], parts[1], int(parts[2]))] = "|".join(parts[3:]).strip()
    return entries


def save(path, entries):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(HEADER)
        for (suite, test, ranks), reason in sorted(entries.items()):
            f.write(f"{suite} | {test} | {ranks} | {reason}\n")


def outcomes(mpich, mpi4py, clients=None):
    """{(suite, test, ranks): (ran, passed, first error line)} for one
    implementation's results; a test that was skipped is not included.
    clients: the I/O clients' records (suite hdf5, pnetcdf or ior)."""
    out = {}
    for r in (clients or {}).values():
        if r["status"] != "skipped":
            out[(r["suite"], r["test"], r["np"])] = (True, r["status"] == "passed",
                                                     r.get("reason", ""))
    for r in mpich.values():
        if r["status"] == "skipped":
            continue
        out[("mpich", r["test"], r["np"])] = (True, r["status"] == "passed", r.get("reason", ""))
    for r in mpi4py.values():
        for tid, st in r.get("cases", {}).items():
            if st[0] == "skipped":
                continue
            out[("mpi4py", tid, r["np"])] = (True, st[0] == "passed", st[1])
        whole = f"{r['test']} (the whole module)"
        out[("mpi4py", whole, r["np"])] = (True, True, "")
        for tid, msg in r.get("fails", []):
            out[("mpi4py", tid, r["np"])] = (True, False, msg)
    return out


def in_scope(key, mpich, mpi4py, clients=None):
    """Whether the run covered this entry's test (its directory or module)."""
    suite, test, ranks = key
    if suite not in ("mpich", "mpi4py"):
        return any(r["suite"] == suite and r["test"] == test and r["np"] == ranks
                   for r in (clients or {}).values())
    if suite == "mpich":
        return any(r["test"] == test and r["np"] == ranks for r in mpich.values())
    mod = test.split(".")[0].split(" ")[0]
    return any(r["test"] == mod and r["np"] == ranks for r in mpi4py.values())


def compare(entries, outs, mpich, mpi4py, clients=None):
    """(new failures, listed tests that now pass), both sorted lists of
    (key, detail)."""
    new = [(k, v[2]) for k, v in outs.items() if not v[1] and k not in entries]
    fixed = [(k, entries[k]) for k, v in outs.items()
             if v[1] and k in entries and not entries[k].startswith("flaky")]
    return sorted(new), sorted(fixed)


def update(entries, outs, mpich, mpi4py, classify=None, clients=None):
    """Entries rewritten from this run: tests the run covered keep their
    reason while they fail, leave when they pass, and new failures come in
    as unclassified (or with the reason `classify(first error line)` gives,
    for programs that miss a procedure of a chapter not implemented yet);
    entries outside the run stay."""
    result = {k: v for k, v in entries.items()
              if not in_scope(k, mpich, mpi4py, clients) or v.startswith("flaky")}
    for k, (ran, passed, why) in outs.items():
        if passed:
            continue
        why = " ".join((why or "no output").split()).replace("|", "/")
        known = classify(why) if classify else None
        result[k] = entries.get(k) or known or f"unclassified: {why[:160]}"
    # a listed test that the run covered but that has no outcome now (a
    # module that crashed before reporting) keeps its entry
    for k, v in entries.items():
        if in_scope(k, mpich, mpi4py, clients) and k not in outs:
            result[k] = v
    return result
