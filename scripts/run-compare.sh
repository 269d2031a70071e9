#!/bin/bash
# Side-by-side comparison of Tern with Open MPI and MPICH: builds Tern
# (Release) and the tern-bench sources with each implementation's mpicc,
# runs interleaved rounds and writes bench-report/report.md, results.json
# and PNG plots. See docs/performance.md.
#
#   scripts/run-compare.sh                       # full run (3 rounds)
#   scripts/run-compare.sh --quick --rounds 1    # check the tool (figures meaningless)
#   scripts/run-compare.sh --no-inter-host       # without the inter-host section (which needs root)
#   scripts/run-compare.sh --update-doc docs/performance.md
#   scripts/run-compare.sh --help                # all options
#
# Installs the peers and matplotlib with apt when they are missing (as root,
# or with sudo); set TERN_COMPARE_NO_INSTALL=1 to skip that. Run it on a
# quiet machine: other load makes the figures noise.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libopenmpi-dev openmpi-bin libmpich-dev mpich python3-matplotlib build-essential cmake ninja-build)
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
