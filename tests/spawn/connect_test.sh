#!/bin/sh
# Two jobs from two mpiexec runs meet through a port name in a file:
# connect_test.sh MPIEXEC PROGRAM NP_ACCEPT NP_CONNECT
set -u
mpiexec=$1 prog=$2 na=$3 nc=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$mpiexec" -n "$na" "$prog" accept "$dir/port" >"$dir/a.out" 2>&1 &
apid=$!
"$mpiexec" -n "$nc" "$prog" connect "$dir/port" >"$dir/c.out" 2>&1
crc=$?
wait $apid
arc=$?
cat "$dir/a.out" "$dir/c.out"
[ $arc -eq 0 ] && [ $crc -eq 0 ] || { echo "FAILED: accept rc=$arc connect rc=$crc"; exit 1; }
grep -q "test accept ok" "$dir/a.out" && grep -q "test connect ok" "$dir/c.out" || exit 1
echo "connect_test ok"
