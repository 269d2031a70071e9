#!/bin/sh
# On a node with more ranks than CPUs the rooted collectives (bcast,
# reduce, gather, scatter) leave the shm algorithm for their message
# algorithms at 8 B (gather and scatter linear), bcast (from 4 KB), gather
# (4-64 KB), reduce (from 16 KB) and allreduce take shm at 64 KB (reduce
# binomial at 8 KB), and barrier keeps shm; with a rank per CPU an 8 KB bcast stays
# on shm (at 2 ranks up to 4 KB go binomial anyway); allgather takes
# shm at 64 KB blocks oversubscribed, as do alltoall and scatter (from
# 8 KB), and allgather and alltoall at 2 ranks up to 128 KB; reduce_scatter of 8 B
# takes recursive_halving at 4 and 8 ranks, direct at 3 and 5-7 (and at 4
# ranks for 4 and 16 B).
# Every rank must choose alike (a split choice would hang), so each line is
# counted over all ranks.
# Usage: oversub_select.sh <mpiexec> <tern-bench-dir>
set -u
mpiexec=$1
bench=$2
fail() { echo "FAIL: $*"; exit 1; }
cpus=$(getconf _NPROCESSORS_ONLN)
[ "$cpus" -le 7 ] || { echo "SKIP: $cpus CPUs, the oversubscribed run would need $((cpus + 1)) ranks"; exit 77; }
n=$((cpus + 1))

chosen() { # <np> <bench> [bytes] -> the debug lines naming the algorithms chosen
    TERN_LOG_LEVEL=3 "$mpiexec" -n "$1" "$bench/tern-bench-$2" -m "${3:-8}:${3:-8}" -i 20 -x 2 2>&1 |
        grep -E "debug: [a-z_]+ on $1 ranks, [0-9]+ bytes: "
}
expect() { # <np> <collective> <bytes> <algorithm>: every rank chose it
    out=$(chosen "$1" "$2" "$3") || fail "$2, $3 bytes at $1 ranks: no selection line"
    k=$(echo "$out" | grep -c "debug: $2 on $1 ranks, $3 bytes: $4")
    [ "$k" -eq "$1" ] || fail "$2, $3 bytes at $1 ranks on $cpus CPUs: $k of $1 ranks chose $4: $out"
}
for coll in bcast reduce gather scatter; do
    out=$(chosen "$n" "$coll") || fail "$coll at $n ranks: no selection line"
    want=binomial
    # every sender straight to the root; the root straight to every rank
    [ "$coll" = gather ] || [ "$coll" = scatter ] && want=linear
    k=$(echo "$out" | grep -c "debug: $coll on $n ranks, [0-9]* bytes: $want")
    [ "$k" -eq "$n" ] || fail "$coll at $n ranks on $cpus CPUs: $k of $n ranks chose $want: $out"
    k=$(echo "$out" | grep -c "debug: barrier on $n ranks, 0 bytes: shm")
    [ "$k" -eq "$n" ] || fail "barrier at $n ranks on $cpus CPUs: $k of $n ranks chose shm: $out"
done
# Larger bcasts oversubscribed: shm from 4 KB (scatter_allgather's steps
# and binomial's inner ranks each wait for a descheduled partner).
expect "$n" bcast 65536 shm
expect "$n" bcast 4096 shm
expect "$n" bcast 2048 binomial
# Gather above 2 KB up to the 64 KB slots: shm (linear's root waits for
# each descheduled sender's rendezvous); past them linear again.
expect "$n" gather 2048 linear
expect "$n" gather 4096 shm
expect "$n" gather 65536 shm
expect "$n" gather 131072 linear
# Allreduce and reduce at 64 KB oversubscribed: shm in one 64 KB slot
# (rabenseifner's and binomial's steps each wait for a descheduled rank);
# reduce keeps binomial up to 8 KB.
for coll in allreduce reduce; do
    expect "$n" "$coll" 65536 shm
done
# Allgather, alltoall and scatter blocks up to 64 KB oversubscribed: shm
# (through the 64 KB slots, where ring, pairwise and linear wait for
# descheduled partners); scatter keeps linear up to 4 KB, alltoall
# pairwise past 64 KB.
for coll in allgather alltoall scatter; do
    expect "$n" "$coll" 65536 shm
done
expect "$n" scatter 8192 shm
expect "$n" scatter 4096 linear
expect "$n" alltoall 131072 pairwise
expect "$n" reduce 16384 shm
expect "$n" reduce 8192 binomial
if [ "$cpus" -ge 2 ]; then
    expect 2 bcast 8192 shm
    expect 2 bcast 4096 binomial
    # Blocks up to 128 KB (the slot) at 2 ranks, one per core: shm; past
    # it the messages.
    for coll in allgather alltoall; do
        expect 2 "$coll" 65536 shm
        expect 2 "$coll" 131072 shm
        out=$(chosen 2 "$coll" 262144) || fail "$coll 256 KB at 2 ranks: no selection line"
        k=$(echo "$out" | grep -c "debug: $coll on 2 ranks, 262144 bytes: shm")
        [ "$k" -eq 0 ] || fail "$coll 256 KB at 2 ranks on $cpus CPUs: $k of 2 ranks chose shm: $out"
    done
fi
# Reduce_scatter of 8 B: recursive halving at 8 oversubscribed ranks (the
# owners wait for lg p messages), direct below 8 ranks.
if [ "$cpus" -lt 8 ]; then
    out=$(chosen 8 reduce_scatter) || fail "reduce_scatter at 8 ranks: no selection line"
    k=$(echo "$out" | grep -c "debug: reduce_scatter on 8 ranks, 8 bytes: recursive_halving")
    [ "$k" -eq 8 ] || fail "reduce_scatter at 8 ranks on $cpus CPUs: $k of 8 ranks chose recursive_halving: $out"
fi
# At 4 ranks only 8 B (two owners) take recursive halving.
if [ "$cpus" -lt 4 ]; then
    expect 4 reduce_scatter 8 recursive_halving
    expect 4 reduce_scatter 4 direct
    expect 4 reduce_scatter 16 direct
fi
if [ "$n" -lt 8 ] && [ "$n" -ne 4 ]; then
    out=$(chosen "$n" reduce_scatter) || fail "reduce_scatter at $n ranks: no selection line"
    k=$(echo "$out" | grep -c "debug: reduce_scatter on $n ranks, 8 bytes: direct")
    [ "$k" -eq "$n" ] || fail "reduce_scatter at $n ranks on $cpus CPUs: $k of $n ranks chose direct: $out"
fi
echo "oversubscribed selection ok ($n ranks on $cpus CPUs)"
