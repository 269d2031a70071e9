#!/bin/sh
# tern-info shows the selection table from TERN_COLL_TUNING_FILE; a bad file
# is reported (with its line) and the built-in table stays in effect.
# Usage: tuning_check.sh <tern-info> <tuning file>
set -u
info=$1
file=$2
fail() { echo "FAIL: $*"; exit 1; }

out=$(TERN_COLL_TUNING_FILE=$file "$info") || fail "tern-info exited non-zero"
echo "$out" | grep -q "table: $file" || fail "table source not shown"
echo "$out" | grep -Eq "^ +allreduce +4 +\* +any +ring" || fail "allreduce row from the file missing"
echo "$out" | grep -Eq "^ +alltoall +\* +\* +any +bruck" || fail "alltoall row from the file missing"
echo "$out" | grep -Eq "^ +bcast +8 +4096 +fit +shm" || fail "bcast row with its load missing"
echo "$out" | grep -Eq "^ +alltoall +\* +32768 +any +direct" && fail "built-in alltoall rows not replaced"
echo "$out" | grep -Eq "^ +gather +\* +2048 +any +binomial" || fail "built-in rows of other collectives lost"
echo "$out" | grep -Eq "^ +gather +8 +16384 +fit +shm" || fail "built-in rooted shm row not marked fit"

bad=$(mktemp)
trap 'rm -f "$bad"' EXIT
printf 'allreduce * * ring\nallreduce * * no_such_algorithm\n' > "$bad"
out=$(TERN_COLL_TUNING_FILE=$bad "$info" 2>&1) || fail "tern-info exited non-zero on a bad file"
echo "$out" | grep -q "$bad:2" || fail "bad line not reported: $out"
echo "$out" | grep -q "table: built-in" || fail "built-in table not kept"
printf 'allreduce * * ring sometimes\n' > "$bad"
out=$(TERN_COLL_TUNING_FILE=$bad "$info" 2>&1) || fail "tern-info exited non-zero on a bad load"
echo "$out" | grep -q "$bad:1" || fail "bad load not reported: $out"

out=$(TERN_ALLREDUCE_ALGORITHM=ring "$info") || fail "tern-info exited non-zero"
echo "$out" | grep -q "forced: TERN_ALLREDUCE_ALGORITHM=ring" || fail "forced algorithm not shown"
echo "tuning ok"
