"""Writes the conformance report (docs/conformance.md) from the results of
one run: per MPICH directory and per mpi4py module and rank count, the
counts for Tern and (when they ran) the peers, then every failing Tern test
with its reason."""
import os

CLIENT_LABELS = {"hdf5": "Parallel HDF5 1.10.8 (testpar)",
                 "pnetcdf": "PnetCDF 1.12.3 (make ptest)",
                 "ior": "IOR (MPIIO backend, data verified)"}

DOC_INTRO = """\
Tern against test suites nobody here wrote: the C tests of MPICH 4.0.2
(`test/mpi` of Debian bookworm's source package `mpich` 4.0.2-3) and the
tests of mpi4py 4.1.2 (its sdist from PyPI), and real MPI-IO clients:
Parallel HDF5 1.10.8's and PnetCDF 1.12.3's parallel tests (Debian
bookworm's source packages) and IOR. With `--peers` the same tests
run against Debian's MPICH 4.0.2 and Open MPI 4.1.4, so that a test failing
everywhere is told apart from a Tern defect.
With `--faces` MPICH's tests also run as a binary built for MPICH would:
compiled with Debian's `mpicc.mpich` (no Tern header or wrapper) and run by
`mpiexec --abi mpich` on Tern's `libmpich.so.12` (column "Tern via
libmpich.so.12"; docs/design.md, "The MPICH ABI face"), and mpi4py's tests
run built for the MPI-5.0 standard ABI: `MPI4PY_BUILD_MPIABI=1` with Tern's
`mpicc_abi`, on Tern's `libmpi_abi.so.1` (column "Tern via
libmpi_abi.so.1"; docs/design.md, "The standard ABI").

How to run it, its options, what is counted and the CI gate:
[the end of this page](#how-this-page-is-made).
"""

DOC_HOWTO = """\
## How this page is made

```
scripts/run-conformance.sh                  # everything, Tern only; writes this page
scripts/run-conformance.sh --peers          # also MPICH 4.0.2 and Open MPI 4.1.4
scripts/run-conformance.sh --ci             # the CI subset and its gate
scripts/run-conformance.sh --faces          # also the suite built with mpicc.mpich on libmpich.so.12
scripts/run-conformance.sh --dirs coll,pt2pt --modules test_comm
# the peers on Tern's run-time failures only, then one page with all three:
scripts/run-conformance.sh --impls mpich,openmpi --only-failing-in build-conformance/results/tern.json
scripts/run-conformance.sh --impls none --report-with tern,mpich,openmpi
# the peers in full, once (in parallel if you like), then Tern with their results:
scripts/run-conformance.sh --impls mpich & scripts/run-conformance.sh --impls openmpi
scripts/run-conformance.sh --update-expected --report-with mpich,openmpi
scripts/run-conformance.sh --help           # every option
```

Options: `--ci` (the CI subset below; the report goes to
`build-conformance/ci-report.md` and the exit status is the gate's),
`--peers`, `--dirs a,b,c` (MPICH test directories), `--modules a,b`
(mpi4py test modules), `--max-ranks N`, `--jobs N` (tests at once and
`make -j`, default 2), `--timeout S` (per MPICH test without a `timeLimit`,
default 60, 45 with `--ci`; `--max-timeout` caps a `timeLimit`, default 180),
`--module-timeout S` (per mpi4py module run, default 300), `--impls a,b`
(which of tern, mpich, openmpi to run; `--impls mpich` runs a peer over
everything without building or waiting for Tern: the peers' results do
not depend on Tern's code, so their runs can be made once and reused),
`--report-with a,b:ci` (add the
saved results of earlier runs to the report; `--impls none` only writes
it), `--only-failing-in RESULTS` (run only the tests that failed with Tern
in saved results: the quick way to ask the peers about Tern's failures),
`--prefix DIR`
(test an installed Tern instead of building this tree into
`build-conformance/tern`), `--no-mpich`, `--no-mpi4py`, `--clients a,b`
(MPI-IO clients, of hdf5, pnetcdf, ior; the peers run them only when
this names them), `--no-clients`, `--hdf5-tests a,b` (testpar programs),
`--pnetcdf-dirs a,b` (e.g. `test/testcases`), `--ior-src DIR` (an IOR
checkout; default `build-conformance/src/ior` when present),
`--client-timeout S` (per client program, default 600), `--update-expected`
(rewrite `tests/conformance/expected-failures.txt` from this run: listed
tests keep their reason while they fail and leave when they pass, new
failures come in as `unclassified: <first error line>` for a human to
classify), `--output FILE`.

Everything is cached under `build-conformance/` (gitignored) and reused:
Debian's source package (through `apt-get source --download-only`; the
script adds a `deb-src` entry when there is none), the mpi4py sdist
(through pip), the configured and built test trees (one per
implementation), the venvs with mpi4py built by each implementation's
`mpicc` (Cython and unittest-xml-reporting from pip), the logs
(`logs/<impl>/`: configure, build, and the output of every failing test in
`out/`) and the results (`results/<impl>.json`). The results behind this
page are also kept in the repository, `tests/conformance/results/<impl>.json.gz`
(written by every run but `--ci` and a subset's run): on a fresh machine
`--merge`, `--rerun-timeouts` and `--report-with` start from them, so one
directory or one peer can be rerun and merged without running everything
again. A run of chosen directories, modules or clients without `--merge`
is a check: its results go to `results/<impl>-partial.json` and its report
to `partial-report.md` in the cache (or `--output`), and leave the saved
results, the kept copy and this page as they were.

**MPICH's suite.** `test/mpi` is configured with `--with-mpi=<prefix>`
(Tern's `mpicc`, `mpicxx`, `mpif77`, `mpifort`, `mpiexec`; for a peer
Debian's `mpicc.mpich`... or `mpicc.openmpi`...), `--enable-fortran=all`
(the f77, f90 and f08 directories, built with the implementation's
`mpif77` and `mpifort`; before building, a probe program per directory
checks that `mpif.h`, the `mpi` module and the `mpi_f08` module work, and
where one does not every program of that directory counts as not built
with the probe's reason, e.g. "no mpi_f08 module"), RMA on (the harness
library `util/mtest.c` then uses `MPI_Win_*` and `MPI_Alloc_mem`; the rma
tests that use its window helpers need it), `--disable-cxx` (the C++
bindings left the standard in MPI-3.0), `--disable-perftest`, `--enable-strictmpi`
(MPICH's own extensions are not tested: tests marked `strict=false` or
`mpix=true` count as skipped), `--enable-romio` and
`--enable-threads=multiple` (so `io` and `threads` are listed). Each
directory's programs are built with one `make -k`; a program that does not
build counts as failed with "does not build: <first undefined reference or
error>". The runner (`tools/conformance/`) reads the `testlist` files
(following directory entries; not `testlist.dtp`, long datatype-pool
sweeps, nor `testlist.cvar`, MPICH algorithm variants selected through
`MPIR_CVAR_*`) and runs each entry with its rank count, arguments and
environment and a time limit, deciding like MPICH's `runtests`: a test
passes when it exits 0 and prints ` No Errors` and nothing else
(`resultTest=TestStatus`/`TestErrFatal`: when it exits non-zero). A test
past its limit is killed and counts as failed ("timeout"); after each test
every process still carrying the test's marker variable is killed and the
files it left in `/dev/shm` are removed.

**mpi4py.** For each module `test_*.py`, `mpiexec -n 1` and then `-n 2`
run `python test/main.py --xml DIR <module>`; each rank writes JUnit XML
and a test counts as failed or in error when it did so on any rank. A
module that crashes or passes its time limit is one error, "(the whole
module)", with the first error line of its output. mpi4py's own
known-failure marks (`skipMPI`) apply to the peers only; they count as
skipped.

**MPI-IO clients** (`tools/conformance/io_clients.py`). Parallel HDF5
1.10.8 and PnetCDF 1.12.3 come from Debian bookworm's source packages
(`apt-get source --download-only hdf5=1.10.8+repack1-1 pnetcdf=1.12.3-1`,
the upstream tarballs; PnetCDF's gets `autoreconf -fi`, which needs
autoconf, automake and libtool, installed through apt when missing) and
are configured with the implementation's `mpicc` into
`build-conformance/io-clients/<impl>/`, once per (arguments, `mpicc`,
`mpi.h`). HDF5: `--enable-parallel`, static, without tools, high-level
library, Fortran, C++ and Java; only the library, `libh5test` and
`testpar`'s programs are built (about 3.5 min of CPU), and each program
runs at 4 ranks in `testpar/`, in CMake's order (`t_pflush2` reads what
`t_pflush1` left, `t_prestart` what `t_pshutdown` left); a program passes
when it exits 0 (`t_pflush1`, which always exits 1 on purpose, when it
printed PASSED). PnetCDF: `--disable-fortran --disable-cxx`; in each
directory `make ptest` visits (`test/`, `examples/`, `benchmarks/`), its
programs are built and `make ptest` runs its `parallel_run.sh` at 4 ranks
with `TESTMPIRUN` and `TESTSEQRUN` pointing at `record.sh`, which runs
each call under the time limit, records its status and lets the script go
on: a program passes when it exits 0 and `ncvalidator` accepts the file it
wrote. IOR (github hpc/ior, not packaged: only where a checkout is given)
is built with `./bootstrap; ./configure` and runs `ior -a MPIIO -w -r -W -R
-C -e -i 2` independent and collective (`-c`), with file views, strided
datatypes, a file per process, random offsets, preallocation and fsync,
at 2 and 4 ranks; a run passes when it exits 0 and prints no ERROR,
WARNING or "Incorrect data" (its read-back verification).

**The CI gate.** `scripts/run-tests.sh` (what `.ci/run` calls) runs
`scripts/run-conformance.sh --ci --prefix <its build, installed>` after its
ctest runs (`TERN_SKIP_CONFORMANCE=1` skips it); its status joins the
overall one. The CI subset: the MPICH directories pt2pt, part, coll, comm,
group, datatype, init, errhan, attr, info, spawn, rma, f77, f90 and every
f08 directory but io (basic and util have no `testlist` in 4.0.2), only
their tests at 8 ranks or fewer (`--max-ranks 8`: the
project's tests run 1-8 ranks on 2 cores) and not the few too slow for a
2-core machine (`CI_SKIP` in `tools/conformance/conformance.py`, each with
its reason: `rma/large_acc_flush_local`, `rma/rma_contig -iter=10000`;
the full run keeps them), 45 s per test, and the mpi4py
modules for the same features, at 1 and 2 ranks. It fails on any failure that is not in
`tests/conformance/expected-failures.txt` and on any listed test that now
passes, printing each (`NEW FAILURE ...`, `NOW PASSES ...`), so the list
only shrinks and never hides a regression; entries whose reason starts
with `flaky:` (too slow for the limit on a loaded machine in some runs)
are accepted either way. The CI subset also runs PnetCDF's `make ptest`
in `test/cdf_format`, `test/header` and `examples/tutorial` (`CI_CLIENTS`
in `conformance.py`; its build is cached like the rest); HDF5 is left out
(its library alone is about 3.5 min of CPU, 16 min on this project's
loaded 2-core machine) and so is IOR (no GitHub access in CI). Measured on
2026-11-29 from an empty cache, with IOR's 16 runs in the same run: 8 min
wall on the shared 2-core machine under a load near 28, 1 min 19 s of
user CPU time (PnetCDF's `make` 270 s of it; its 16 programs run in 8 s).

Its time, measured on 2026-11-24 from an empty cache (`--cache` in a fresh
directory: the apt and pip downloads, configuring, building the test
programs and mpi4py, running 392 MPICH tests and 22 mpi4py modules at 1 and
2 ranks; Tern itself is the ctest build, installed): 13 min 7 s wall on
this project's shared 2-core machine under a load average near 18 (3 min
14 s user and 1 min 16 s system CPU time), with the gate passing. Eight of
the listed tests hang with Tern and cost their 45 s each (two at a time).
"""


def _mpich_counts(results, top):
    c = {"tests": 0, "built": 0, "passed": 0, "failed": 0, "skipped": 0}
    for r in results.values():
        if r["dir"] != top:
            continue
        c["tests"] += 1
        if r["status"] == "skipped":
            c["skipped"] += 1
            continue
        c["built"] += 1 if r.get("built", True) else 0
        c[r["status"]] += 1
    return c


def _cell(c, keys):
    return " | ".join(str(c[k]) for k in keys) if c else " | ".join("–" for _ in keys)


def _sum(rows):
    out = {}
    for c in rows:
        for k, v in c.items():
            out[k] = out.get(k, 0) + v
    return out


# The directories of the chapters issue 12 holds Tern to.
REQUIRED_DIRS = ["pt2pt", "coll", "comm", "group", "datatype", "init", "errhan", "attr", "info"]


def _summary(results, impls, labels):
    """Side by side: MPICH tests built and passed in the required
    directories and in all, mpi4py tests passed (every rank count)."""
    head = "| | " + " | ".join(labels[i] for i in impls) + " |"
    rows = [head, "|---|" + "---|" * len(impls)]

    def mpich_row(title, tops):
        cells = []
        for i in impls:
            c = _sum(_mpich_counts(results[i]["mpich"], t) for t in tops)
            if not c.get("tests"):
                cells.append("–")
                continue
            ran = c["tests"] - c["skipped"]
            cells.append(f"{c['passed']} passed of {ran} ({c['built']} built)")
        rows.append(f"| {title} | " + " | ".join(cells) + " |")

    mpich_row("MPICH suite, " + ", ".join(REQUIRED_DIRS), REQUIRED_DIRS)
    every = []
    for i in impls:
        for r in results[i]["mpich"].values():
            if r["dir"] not in every:
                every.append(r["dir"])
    mpich_row("MPICH suite, all directories", every)
    cells = []
    for i in impls:
        m = results[i]["mpi4py"].values()
        if not m:
            cells.append("–")
            continue
        c = _sum({k: r[k] for k in ("tests", "passed", "skipped")} for r in m)
        cells.append(f"{c['passed']} passed of {c['tests'] - c['skipped']} run "
                     f"({c['skipped']} skipped)")
    rows.append("| mpi4py tests (each module at 1 and 2 ranks) | " + " | ".join(cells) + " |")
    return ["## Side by side", "",
            "Tests that ran (not skipped: MPICH's `strict=false`/`mpix=true` tests, "
            "unittest skips) and passed; a program that does not build counts as ran "
            "and failed.", ""] + rows + [""]


def write(path, command, commit, results, entries, peers, seconds):
    impls = list(results)
    labels = {"tern": "Tern"}
    labels.update({k: v[0] for k, v in peers.items()})
    tern = results["tern"]
    lines = ["# Conformance: external test suites", "",
             f"Generated by `{tern.get('command', command)}` on {tern['date']}, Tern commit "
             f"`{tern.get('commit', commit)}` ({tern['seconds'] / 60:.0f} minutes on a shared "
             "2-core machine)"
             + (f", then runs merged in up to {tern['reruns'][-1]['date']} on Tern commit "
                f"`{tern['reruns'][-1].get('commit', '?')}` (listed below: a merged run's "
                "tests replace the earlier results of the same tests)"
                if tern.get("reruns") else "")
             + (f"; this page written by `{command}`"
                if tern.get("command", command) != command else "") + ".", ""]
    lines += DOC_INTRO.splitlines() + [""]
    for impl in impls:
        d = results[impl]
        scope = (f"MPICH directories {', '.join(d['dirs'])}" if d["dirs"] else "no MPICH tests")
        scope += "; mpi4py: " + ("all modules" if d["modules"] == [] else
                                 "none" if d["modules"] is None else ", ".join(d["modules"]))
        ran = sorted({r["suite"] for r in d.get("clients", {}).values()})
        if ran:
            scope += "; MPI-IO clients: " + ", ".join(ran)
        if d.get("only_failing_in"):
            scope += (" — only the tests that built but failed with Tern there (and the "
                      f"mpi4py modules with a Tern failure), from {d['only_failing_in']}")
        how = f"`{d['command']}`, " if d.get("command") and impl != "tern" else ""
        more = d.get("reruns", [])
        reruns = ""
        if more:
            reruns = (f" Then {len(more)} more run{'s' if len(more) > 1 else ''} merged in "
                      f"({more[0]['date']} to {more[-1]['date']}, "
                      f"{sum(r['seconds'] for r in more) / 60:.0f} min): "
                      + "; ".join(f"`{r['command'].replace('scripts/run-conformance.sh ', '')}`"
                                  f" ({r['what']}"
                                  + (f", commit `{r['commit']}`" if impl == "tern" and r.get("commit")
                                     else "") + ")" for r in more) + ".")
        lines.append(f"- {labels[impl]}: {scope} ({how}{d['date']}, {d['seconds'] / 60:.0f} min)."
                     + "".join(f" {n}." for n in d["notes"]) + reruns)
    lines.append("")
    lines += _summary(results, impls, labels)

    # MPICH table
    tops = []
    for impl in impls:
        for r in results[impl]["mpich"].values():
            if r["dir"] not in tops:
                tops.append(r["dir"])
    if tops:
        keys = ["built", "passed", "failed", "skipped"]
        lines += ["## MPICH 4.0.2 test suite", "",
                  "Per directory: tests listed, then for each implementation the tests "
                  "whose program built, passed, failed (not building, wrong output, "
                  "error, timeout) and were skipped.", ""]
        head = "| directory | tests | " + " | ".join(
            f"{labels[i]} {k}" for i in impls for k in keys) + " |"
        lines += [head, "|" + "---|" * (2 + len(keys) * len(impls))]
        totals = {i: [] for i in impls}
        for top in tops:
            cells = []
            ntests = 0
            for i in impls:
                c = _mpich_counts(results[i]["mpich"], top) if results[i]["mpich"] else None
                if c and c["tests"] == 0:
                    c = None
                if c:
                    ntests = max(ntests, c["tests"])
                    totals[i].append(c)
                cells.append(_cell(c, keys))
            lines.append(f"| {top} | {ntests} | " + " | ".join(cells) + " |")
        cells = [_cell(_sum(totals[i]) if totals[i] else None, keys) for i in impls]
        ntot = max((_sum(totals[i]).get("tests", 0) for i in impls if totals[i]), default=0)
        lines += [f"| **all** | {ntot} | " + " | ".join(cells) + " |", ""]

    # mpi4py table
    mods = []
    for impl in impls:
        for r in results[impl]["mpi4py"].values():
            if (r["test"], r["np"]) not in mods:
                mods.append((r["test"], r["np"]))
    if mods:
        keys = ["tests", "passed", "failed", "errors", "skipped"]
        lines += ["## mpi4py 4.1.2", "",
                  "Per module and rank count: unittest's tests, passed, failed, in error "
                  "(an unexpected exception, or the whole module crashed or timed out) and "
                  "skipped.", ""]
        head = "| module | ranks | " + " | ".join(
            f"{labels[i]} {k}" for i in impls for k in keys) + " |"
        lines += [head, "|" + "---|" * (2 + len(keys) * len(impls))]
        totals = {i: [] for i in impls}
        for mod, np in sorted(mods, key=lambda x: (x[1], x[0])):
            cells = []
            for i in impls:
                r = results[i]["mpi4py"].get(f"{mod}|{np}")
                c = {k: r[k] for k in keys} if r else None
                if c:
                    totals[i].append(c)
                cells.append(_cell(c, keys))
            lines.append(f"| {mod} | {np} | " + " | ".join(cells) + " |")
        cells = [_cell(_sum(totals[i]) if totals[i] else None, keys) for i in impls]
        lines += ["| **all** | | " + " | ".join(cells) + " |", ""]

    # MPI-IO clients
    suites = []
    for impl in impls:
        for r in results[impl].get("clients", {}).values():
            if r["suite"] not in suites:
                suites.append(r["suite"])
    if suites:
        keys = ["tests", "passed", "failed"]
        lines += ["## MPI-IO clients", "",
                  "Programs that use MPI-IO for real: Parallel HDF5 1.10.8's `testpar` "
                  "programs (4 ranks) and PnetCDF 1.12.3's `make ptest` programs (4 ranks; "
                  "each program's output file also passes `ncvalidator`), both built "
                  "from Debian bookworm's source packages with the implementation's "
                  "`mpicc`, and IOR's MPIIO backend (independent and collective, 2 and 4 "
                  "ranks, every run verifying the data it wrote and read back). Per "
                  "client: test programs (IOR: runs), passed, failed.", ""]
        head = "| client | " + " | ".join(f"{labels[i]} {k}" for i in impls for k in keys) + " |"
        lines += [head, "|" + "---|" * (1 + len(keys) * len(impls))]
        for suite in suites:
            cells = []
            for i in impls:
                recs = [r for r in results[i].get("clients", {}).values()
                        if r["suite"] == suite and r["status"] != "skipped"]
                c = {"tests": len(recs),
                     "passed": sum(r["status"] == "passed" for r in recs),
                     "failed": sum(r["status"] == "failed" for r in recs)} if recs else None
                cells.append(_cell(c, keys))
            lines.append(f"| {CLIENT_LABELS.get(suite, suite)} | " + " | ".join(cells) + " |")
        lines.append("")

    # failing Tern tests
    fails = []
    for r in tern.get("clients", {}).values():
        if r["status"] == "failed":
            fails.append((r["suite"], r["test"], r["np"], r.get("reason", "")))
    peer_fail = {}
    for i in impls[1:]:
        for r in results[i].get("clients", {}).values():
            peer_fail[(r["suite"], r["test"], r["np"], i)] = r["status"]
        for r in results[i]["mpich"].values():
            peer_fail[("mpich", r["test"], r["np"], i)] = r["status"]
        for r in results[i]["mpi4py"].values():
            for tid, st in r.get("cases", {}).items():
                peer_fail[("mpi4py", tid, r["np"], i)] = st[0]
            for tid, _ in r.get("fails", []):
                peer_fail[("mpi4py", tid, r["np"], i)] = "failed"
    for r in tern["mpich"].values():
        if r["status"] == "failed":
            fails.append(("mpich", r["test"], r["np"], r.get("reason", "")))
    for r in tern["mpi4py"].values():
        for tid, msg in r["fails"]:
            fails.append(("mpi4py", tid, r["np"], msg))
    lines += ["## Failing Tern tests", "",
              f"{len(fails)} in all. The reason is the expected-failure list's "
              "(`tests/conformance/expected-failures.txt`), else the first error line "
              "of the test's output. *(also fails in X)*: the test fails with that peer "
              "too.", ""]
    for suite, test, np, why in sorted(fails):
        reason = entries.get((suite, test, np)) or " ".join((why or "no output").split())[:200]
        also = [labels[i] for i in impls[1:]
                if peer_fail.get((suite, test, np, i)) in ("failed", "error")]
        extra = f" *(also fails in {', '.join(also)})*" if also else ""
        lines.append(f"- {suite} `{test}` ({np} rank{'s' if np != 1 else ''}): "
                     f"{reason.replace('|', '/')}{extra}")
    lines += [""] + DOC_HOWTO.splitlines() + [""]
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines))
