#!/bin/sh
# Usage: bench_smoke.sh <mpiexec> <tern-bench-NAME> <NAME> [extra options]
# Runs one benchmark with tiny sizes, as a table and as JSON; both must exit 0
# and report validated data (check_json.py checks the JSON's contents).
set -eu
mpiexec=$1 prog=$2 name=$3
extra=${4:-}
here=$(dirname "$0")
out=$(mktemp)
trap 'rm -f "$out"' EXIT

case $name in
mbw_mr | multi_lat) np=4 ;;   # two pairs
halo) np=4 ;;                 # a 2x2x1 grid: neighbours twice and itself
bcast | reduce | allreduce | allgather | alltoall | gather | scatter | reduce_scatter | barrier) np=3 ;;
*) np=2 ;;
esac
case $name in
init) args="" ;;
halo) args="-m 1:4K -i 3 -x 1 -d 3" ;;
*) args="-m 1:4K -i 3 -x 1 -W 4" ;;
esac
args="$args $extra"


echo "== $name, $np ranks, table"
# shellcheck disable=SC2086
"$mpiexec" -n $np "$prog" $args >"$out" || { cat "$out"; echo "FAIL: $name exited $?"; exit 1; }
cat "$out"
grep -q '^[0-9]' "$out" || { echo "FAIL: no result rows"; exit 1; }
grep -q '^# validation: .*\(all correct\|all consistent\)$' "$out" || { echo "FAIL: no validation line"; exit 1; }

echo "== $name, $np ranks, JSON"
# shellcheck disable=SC2086
"$mpiexec" -n $np "$prog" $args --json >"$out" || { cat "$out"; echo "FAIL: $name --json exited $?"; exit 1; }
cat "$out"
python3 "$here/check_json.py" "$name" "$np" <"$out"
