#!/bin/bash
# Installs what building and testing Tern needs on Debian (bookworm) or
# Ubuntu, with apt. Idempotent: does nothing when everything is there. Uses
# sudo only when not run as root.
set -euo pipefail

packages=(
    build-essential   # gcc, g++, make, libc headers
    gfortran          # the Fortran bindings (mpif.h, module mpi, libmpifort, mpifort)
    libblas-dev liblapack-dev   # scripts/run-app-scalapack.sh (ScaLAPACK needs BLAS and LAPACK)
    clang libclang-rt-dev   # libFuzzer (-fsanitize=fuzzer) for scripts/run-fuzz.sh (Debian 12: clang 14)
    cmake ninja-build pkg-config
    libhwloc-dev hwloc
    libfabric-dev libfabric-bin   # the ofi network transport (libfabric-bin: fi_info, for diagnosis)
    openssh-server openssh-client   # sshd per network namespace in tests/netns (multi-host mpiexec)
    mpich             # MPICH's Hydra launcher (mpiexec.mpich), for the PMI interoperability tests
    libpmix-dev       # the PMIx client (srun --mpi=pmix, Open MPI's mpirun)
    slurmd slurmctld slurm-client munge   # tests/slurm starts a private Slurm
    openmpi-bin       # Open MPI's mpirun (PMIx), for the launcher tests
    binutils          # nm, for the exported-symbol test
    python3 python3-venv   # tools/bindgen (and its test) run in .venv with pympistandard;
                           # tools/conformance builds mpi4py in a venv (Cython from pip)
    python3-dev       # Python.h, for building mpi4py (scripts/run-conformance.sh)
    python3-matplotlib   # tern-profile: the picture of a job's profile (mpiexec --profile)
    make xz-utils     # MPICH's test suite: configure/make, the .orig.tar.xz
    autoconf automake libtool m4 zlib1g-dev   # the MPI-IO clients of run-conformance.sh:
                      # PnetCDF's and IOR's autoreconf, HDF5's deflate filter (t_filters_parallel)
    libopenmpi-dev libmpich-dev   # mpicc.openmpi, mpicc.mpich: run-conformance.sh --peers
    procps psmisc iproute2   # ps/pgrep, killall/fuser, ss: launcher and cleanup tests
    time              # /usr/bin/time: mpiexec's peak memory in the pmi_long_line test
    coreutils findutils grep sed
    git ca-certificates
)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
# The MPI Forum's API data for tools/bindgen, from PyPI, in the repository's
# .venv (only the test of the generated bindings and their regeneration need
# it; the build does not).
pympistandard_version=0.2.0
setup_venv() {
    local root
    root=$(cd "$(dirname "$0")/.." && pwd)
    if "$root/.venv/bin/python" -c "import pympistandard, sys; sys.exit(pympistandard.__version__ != '$pympistandard_version')" 2>/dev/null; then
        return 0
    fi
    echo "setup-deps: pympistandard $pympistandard_version into $root/.venv"
    python3 -m venv "$root/.venv"
    "$root/.venv/bin/pip" install -q "pympistandard==$pympistandard_version"
}
# MPICH 5.0.2 from PyPI in .venv-mpich: its mpi_abi.h and mpicc_abi check
# Tern's standard ABI (tests/abi: abi_header, abi_mpich_client skip without
# it). Failing to get it is not an error.
mpich_abi_version=5.0.2
setup_mpich_abi() {
    local root
    root=$(cd "$(dirname "$0")/.." && pwd)
    [ -x "$root/.venv-mpich/bin/mpicc_abi" ] && return 0
    echo "setup-deps: mpich $mpich_abi_version (its mpicc_abi) into $root/.venv-mpich"
    { python3 -m venv "$root/.venv-mpich" &&
      "$root/.venv-mpich/bin/pip" install -q "mpich==$mpich_abi_version"; } ||
        echo "setup-deps: no MPICH $mpich_abi_version; tests/abi's MPICH checks will skip" >&2
}

if [ ${#missing[@]} -eq 0 ]; then
    echo "setup-deps: all dependencies are installed"
    setup_venv
    setup_mpich_abi
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup-deps: not root and no sudo; install as root: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
fi
echo "setup-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
setup_venv
setup_mpich_abi
