#!/bin/sh
# A real MPI_T tool nobody here wrote, against Tern: LLNL's VarList
# (github.com/LLNL/mpi-tools, mpi_t/varlist), downloaded here, never kept
# in the tree. It lists every control and performance variable through
# the MPI_T calls, after MPI_Init and (-m) without it; this checks that
# it finds as many as tern-info --mpit, and how it shows the variables
# bound to a communicator and a window, a timer, and the scopes of the
# writable knobs.
# Usage: varlist.sh <mpicc> <mpiexec> <tern-info>
# TERN_MPI_TOOLS_SRC=<a checkout of LLNL/mpi-tools> skips the download;
# without it and without the network the test is skipped (77).
set -u
mpicc=$1 mpiexec=$2 terninfo=$3
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
src=${TERN_MPI_TOOLS_SRC:-}
if [ -z "$src" ]; then
    git clone -q --depth 1 https://github.com/LLNL/mpi-tools "$work/mpi-tools" 2>/dev/null ||
        { echo "SKIP: cannot download LLNL/mpi-tools (set TERN_MPI_TOOLS_SRC)"; exit 77; }
    src=$work/mpi-tools
fi
[ -f "$src/mpi_t/varlist/varlist.c" ] || fail "no mpi_t/varlist/varlist.c in $src"
"$mpicc" -O1 -w -o "$work/varlist" "$src/mpi_t/varlist/varlist.c" || fail "varlist does not build"

ncvar=$("$terninfo" --mpit | grep -c '^  cvar')
npvar=$("$terninfo" --mpit | grep -c '^  pvar')
out=$("$mpiexec" -n 1 "$work/varlist" -v 9 2>&1) || fail "varlist failed: $out"
echo "$out" | grep -q "^Found $ncvar control variables\$" ||
    fail "varlist does not find the $ncvar control variables: $(echo "$out" | grep Found)"
echo "$out" | grep -q "^Found $npvar performance variables\$" ||
    fail "varlist does not find the $npvar performance variables: $(echo "$out" | grep Found)"
row() { # <name> <word>...: varlist's row of the variable shows every word
    line=$(echo "$out" | grep "^$1 ") || fail "no row for $1"
    shift
    for w in "$@"; do
        echo "$line" | grep -qw "$w" || fail "row '$line' lacks $w"
    done
}
row tern_comm_msgs_sent COUNTER COMM
row tern_comm_coll_calls COUNTER COMM
row tern_win_ops COUNTER WINDOW
row tern_time_mpi TIMER
row tern_p2p_unexpected_len LEVEL
row TERN_P2P_EAGER_MAX LOCAL auto
row TERN_BCAST_ALGORITHM ALL auto
# Without MPI_Init (MPI_T alone): the control variables all the same.
out=$("$mpiexec" -n 1 "$work/varlist" -m -c 2>&1) || fail "varlist -m failed: $out"
echo "$out" | grep -q "^Found $ncvar control variables\$" ||
    fail "varlist -m: $(echo "$out" | grep Found)"
echo "varlist ok: $ncvar control and $npvar performance variables"
