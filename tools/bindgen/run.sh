#!/bin/bash
# Runs the binding generator with the Python that has pympistandard: the
# repository's .venv (made by scripts/setup-deps.sh), else python3.
# Arguments go to bindgen.py (--check: write nothing, fail when stale).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
py=python3
[ -x "$root/.venv/bin/python" ] && py=$root/.venv/bin/python
exec "$py" "$root/tools/bindgen/bindgen.py" --root "$root" "$@"
