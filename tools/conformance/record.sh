#!/bin/sh
# Runs one command of a client's own test script (PnetCDF's parallel_run.sh
# calls it as its TESTMPIRUN and TESTSEQRUN) under a time limit, appends
# "<exit status><TAB><command>" to LOG and the command's output to LOG.out,
# and exits 0 so that the script goes on to its next program: io_clients.py
# then judges every program of a directory from one run of its script.
#   record.sh LOG SECONDS COMMAND [ARGS...]
log=$1
limit=$2
shift 2
out=$(mktemp)
timeout -k 5 "$limit" "$@" >"$out" 2>&1
rc=$?
cat "$out"
{
    printf '=== conformance: record.sh call %s\t%s\n' "$rc" "$*"
    cat "$out"
} >>"$log.out"
printf '%s\t%s\n' "$rc" "$*" >>"$log"
rm -f "$out"
exit 0
