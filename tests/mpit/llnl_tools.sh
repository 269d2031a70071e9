#!/bin/sh
# Real MPI_T tools nobody here wrote, against Tern: LLNL's VarList and
# Gyan (github.com/LLNL/mpi-tools, mpi_t/varlist and mpi_t/gyan),
# downloaded here, never kept in the tree. VarList lists every control and
# performance variable through the MPI_T calls, after MPI_Init and (-m)
# without it: it must find as many as tern-info --mpit, and show the
# variables bound to a communicator and a window, a timer, and the scopes
# of the writable knobs as Tern declares them. Gyan, preloaded into a
# program that sends ten 100-byte messages from rank 0 to rank 1, reads
# the counters it is told (MPIT_VAR_TO_TRACE) from MPI_Init to
# MPI_Finalize and prints their minimum, maximum and average over the
# ranks: 0 and 1000 bytes sent, 0 and 10 messages received.
# Usage: llnl_tools.sh <mpicc> <mpiexec> <tern-info>
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

gyan=$src/mpi_t/gyan
"$mpicc" -O1 -w -fPIC -shared -I"$gyan" -o "$work/libgyan.so" "$gyan/utility.c" "$gyan/gyan.c" ||
    fail "gyan does not build"
cat > "$work/prog.c" <<'PROG'
#include <mpi.h>
int main(int argc, char **argv)
{
    char b[100] = {0};
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 10; i++) {
        if (rank == 0)
            MPI_Send(b, 100, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        else
            MPI_Recv(b, 100, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
PROG
"$mpicc" -o "$work/prog" "$work/prog.c" || fail "the program does not build"
out=$(MPIT_VAR_TO_TRACE="tern_p2p_eager_sent_bytes:counter;tern_p2p_eager_recvd:counter" \
      LD_PRELOAD="$work/libgyan.so" "$mpiexec" -n 2 "$work/prog" 2>&1) || fail "gyan run failed: $out"
echo "$out" | grep -Eq "^tern_p2p_eager_sent_bytes[[:space:]]+COUNTER[[:space:]]+0\( *1\)[[:space:]]+1000\( *0\)[[:space:]]+500\.00\$" ||
    fail "gyan's eager bytes sent: $out"
echo "$out" | grep -Eq "^tern_p2p_eager_recvd[[:space:]]+COUNTER[[:space:]]+0\( *0\)[[:space:]]+10\( *1\)[[:space:]]+5\.00\$" ||
    fail "gyan's eager messages received: $out"
echo "gyan ok: 1000 bytes sent by rank 0, 10 messages received by rank 1"
