#!/bin/sh
# tern-bench tune writes a tuning table at 2 ranks, then adds 4 ranks'
# rows (--append); the file parses (tern-info shows it as the table, no
# error line), and with it as TERN_COLL_TUNING_FILE the collectives still
# give the right data: coll_check and the collective benchmarks' checks at
# 2 and 4 ranks.
# Usage: tune_check.sh <mpiexec> <tern-bench dir> <tern-info> <coll_check>
set -u
mpiexec=$1 bench=$2 info=$3 check=$4
fail() { echo "FAIL: $*"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
file=$dir/tuning.txt

"$mpiexec" -n 2 "$bench/tern-bench-tune" -m 8:16 -i 3 -x 1 -r 2 -o "$file" >"$dir/out2" 2>&1 ||
    { cat "$dir/out2"; fail "tune at 2 ranks exited non-zero"; }
"$mpiexec" -n 4 "$bench/tern-bench-tune" -m 8:16 -i 3 -x 1 -r 2 -o "$file" --append >"$dir/out4" 2>&1 ||
    { cat "$dir/out4"; fail "tune at 4 ranks exited non-zero"; }
cat "$dir/out2" "$dir/out4" "$file"
# Every row has the five fields, a load of fit or over, and the two counts.
rows=$(grep -v '^#' "$file")
echo "$rows" | awk 'NF != 5 || ($5 != "fit" && $5 != "over") { bad = 1 } END { exit bad }' ||
    fail "a row is not <collective> <ranks> <bytes> <algorithm> <fit|over>"
cpus=$(getconf _NPROCESSORS_ONLN)
load4=fit
[ "$cpus" -lt 4 ] && load4=over
for coll in barrier bcast gather scatter allgather alltoall reduce allreduce reduce_scatter \
    reduce_scatter_block scan exscan; do
    echo "$rows" | grep -Eq "^$coll 2 [0-9*]+ [a-z_]+ fit$" || fail "no 2-rank row for $coll"
    echo "$rows" | grep -Eq "^$coll 4 [0-9*]+ [a-z_]+ $load4$" || fail "no 4-rank $load4 row for $coll"
    echo "$rows" | grep -Eq "^$coll \* \* [a-z_]+ $load4$" || fail "no row for larger counts for $coll"
done
# Another run at 2 ranks replaces its rows, keeps the 4-rank ones.
n4=$(grep -c '^[a-z_]* 4 ' "$file")
"$mpiexec" -n 2 "$bench/tern-bench-tune" -c bcast -m 8:8 -i 2 -x 0 -r 1 -o "$file" --append >/dev/null 2>&1 ||
    fail "tune --append of bcast exited non-zero"
[ "$(grep -c '^[a-z_]* 4 ' "$file")" -eq "$n4" ] || fail "--append lost 4-rank rows"
[ "$(grep -c '^bcast 2 ' "$file")" -eq 1 ] || fail "bcast 2-rank rows not replaced by one"

out=$(TERN_COLL_TUNING_FILE=$file "$info" 2>&1) || fail "tern-info exited non-zero"
echo "$out" | grep -q "table: $file" || fail "the file was not taken: $out"
# The reader's error lines name the file and a line, or say it cannot be opened.
bad='TERN_COLL_TUNING_FILE( |: cannot open)'
echo "$out" | grep -Eq "$bad" && fail "error line for the file: $(echo "$out" | grep -E "$bad")"

for np in 2 4; do
    TERN_COLL_TUNING_FILE=$file "$mpiexec" -n $np "$check" >"$dir/check" 2>&1 ||
        { cat "$dir/check"; fail "coll_check at $np ranks with the tuned table"; }
    grep -Eq "$bad" "$dir/check" && fail "error line at $np ranks"
    for b in bcast gather scatter reduce allreduce reduce_scatter; do
        TERN_COLL_TUNING_FILE=$file "$mpiexec" -n $np "$bench/tern-bench-$b" -m 1:64 -i 3 -x 1 \
            >"$dir/b" 2>&1 || { cat "$dir/b"; fail "$b at $np ranks with the tuned table"; }
        grep -q 'all correct' "$dir/b" || { cat "$dir/b"; fail "$b at $np ranks: data not validated"; }
    done
done
echo "tune ok"
