# Assertions shared by the launcher test scripts (sourced). The caller sets
# OUT, ERR (mpiexec's output files), WORK (its scratch folder), PROG (a
# program path unique to the test, so pgrep finds its processes only), RC
# and ELAPSED (ms) after a run, and defines fail().

now_ms() { date +%s%3N; }

expect_rc() { [ "$RC" -eq "$1" ] || fail "exit code $RC, expected $1"; }
expect_out() { grep -q -- "$1" "$OUT" || fail "stdout lacks '$1'"; }
expect_err() { grep -q -- "$1" "$ERR" || fail "stderr lacks '$1'"; }
expect_within() { [ "$ELAPSED" -le "$1" ] || fail "took ${ELAPSED} ms, limit $1 ms"; }

# No process of this job may survive it (give the kernel a moment); ranks,
# proxies and fake proxies all carry $PROG in their arguments.
expect_no_orphans() {
    i=0
    while pgrep -f "$PROG" >/dev/null; do
        i=$((i + 1))
        [ $i -gt 20 ] && fail "orphan processes: $(pgrep -af "$PROG" | tr '\n' ';')"
        sleep 0.1
    done
}

# No /dev/shm file of any job this test ran (TERN_JOBID printed or seen).
expect_no_shm() {
    for job in $(grep -ho 'tern-[0-9]*-[0-9a-f]*' "$OUT" "$ERR" "$WORK/jobs" 2>/dev/null | sort -u); do
        ls /dev/shm/tern-"$job"-* >/dev/null 2>&1 && fail "leftover /dev/shm/tern-$job-*"
    done
    return 0
}
