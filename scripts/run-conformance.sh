#!/bin/bash
# Runs external test suites against Tern: MPICH 4.0.2's test/mpi (Debian's
# source package, through apt) and mpi4py 4.1.2's tests (its sdist, through
# pip); with --peers also against Debian's MPICH and Open MPI on the same
# tests. Writes docs/conformance.md (with --ci: build-conformance/ci-report.md,
# and the exit status says whether every failure is expected). Downloads,
# builds and results are cached in build-conformance/ and reused.
#
#   scripts/run-conformance.sh                # everything, Tern only
#   scripts/run-conformance.sh --peers        # also MPICH and Open MPI
#   scripts/run-conformance.sh --ci           # the CI subset and its gate
#   scripts/run-conformance.sh --faces        # also the suite built with mpicc.mpich,
#                                             # run on Tern's libmpich.so.12, and
#                                             # mpi4py built for the standard ABI
#                                             # on Tern's libmpi_abi.so.1
#   scripts/run-conformance.sh --help         # every option
#
# See docs/conformance.md. Needs python3 with venv (scripts/setup-deps.sh);
# --peers needs Debian's mpich/libmpich-dev and openmpi-bin/libopenmpi-dev,
# installed here (as root or with sudo) when missing unless
# TERN_CONFORMANCE_NO_INSTALL=1.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ " $* " == *" --peers "* || " $* " == *" --faces "* ]] && [ "${TERN_CONFORMANCE_NO_INSTALL:-0}" != 1 ]; then
    missing=()
    for p in mpich libmpich-dev openmpi-bin libopenmpi-dev; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        sudo=()
        [ "$(id -u)" -eq 0 ] || sudo=(sudo)
        echo "run-conformance: installing ${missing[*]}"
        "${sudo[@]}" apt-get update -q
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
    fi
fi
exec python3 tools/conformance/conformance.py "$@"
