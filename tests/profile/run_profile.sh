#!/bin/bash
# The profile of a job, end to end (tests/profile/CMakeLists.txt).
# Usage: run_profile.sh MODE MPIEXEC PROGRAM TERN_PROFILE_SCRIPT WORKDIR
#   env  TERN_PROFILE=DIR in the environment, as under srun, allreduce by
#        recursive doubling: profile.json only (checked cell by cell, the
#        collective's messages in "all"), no picture; then tern-profile without
#        matplotlib says so, exits 3 and keeps the JSON.
#   png  mpiexec --profile DIR: the JSON checked, and the picture mpiexec
#        drew after the job is a PNG (exit 77, skipped, without matplotlib).
set -euo pipefail
mode=$1 mpiexec=$2 prog=$3 script=$4 work=$5
here=$(cd "$(dirname "$0")" && pwd)
dir=$work/profile_$mode
rm -rf "$dir"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

case $mode in
env)
    # A collective that sends messages (shm's move none): the 4 ranks of
    # recursive doubling send 2 x 80 bytes each, in "all" but not "p2p".
    TERN_PROFILE=$dir TERN_ALLREDUCE_ALGORITHM=recursive_doubling "$mpiexec" -n 4 "$prog"
    python3 "$here/check_profile.py" "$dir" 640
    [ "$(cat "$dir/chosen.txt")" = recursive_doubling ] || fail "the forced algorithm not chosen"
    [ ! -e "$dir/profile.png" ] || fail "a picture without --profile"
    # A Python whose matplotlib cannot be imported.
    fake=$work/no_matplotlib
    mkdir -p "$fake/matplotlib"
    echo 'raise ImportError("no matplotlib here")' > "$fake/matplotlib/__init__.py"
    set +e
    msg=$(PYTHONPATH=$fake python3 "$script" "$dir" 2>&1)
    rc=$?
    set -e
    [ $rc -eq 3 ] || fail "tern-profile without matplotlib exited $rc: $msg"
    grep -q "matplotlib is not installed" <<<"$msg" || fail "no word of matplotlib: $msg"
    [ -s "$dir/profile.json" ] && [ ! -e "$dir/profile.png" ] || fail "the JSON not kept alone"
    echo "env mode: JSON checked, no picture, tern-profile without matplotlib: exit 3"
    ;;
png)
    # tern-profile also tries the system's Python (apt's matplotlib).
    if ! python3 -c 'import matplotlib' 2>/dev/null &&
       ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
        echo "SKIP: Python's matplotlib is not installed"
        exit 77
    fi
    "$mpiexec" --profile "$dir" -n 4 "$prog"
    python3 "$here/check_profile.py" "$dir"
    png=$dir/profile.png
    [ -s "$png" ] || fail "mpiexec --profile drew no $png"
    sig=$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')
    [ "$sig" = 89504e470d0a1a0a ] || fail "$png is not a PNG (signature $sig)"
    echo "png mode: JSON checked, $png is a PNG of $(stat -c %s "$png") bytes"
    ;;
*)
    fail "unknown mode $mode"
    ;;
esac
