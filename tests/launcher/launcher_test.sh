#!/bin/sh
# Launcher tests: launcher_test.sh <case> <mpiexec> <launcher_prog>
# Each case asserts exit codes, output and time bounds, and that no process
# of the job outlives it and no /dev/shm/tern-<job>-* file is left.
# Exits 0 on pass, 1 on failure, 77 to skip.
set -u
CASE=$1
MPIEXEC=$2
PROG_SRC=$3

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-launcher-XXXXXX")
# A unique program name, so pgrep finds this test's processes only.
PROG=$WORK/ltprog_$$_$(date +%s%N | tail -c 7)
cp "$PROG_SRC" "$PROG"
OUT=$WORK/out
ERR=$WORK/err

cleanup() {
    pkill -KILL -f "$PROG" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
    echo "FAIL [$CASE]: $*"
    echo "--- stdout:"; cat "$OUT" 2>/dev/null | head -40
    echo "--- stderr:"; cat "$ERR" 2>/dev/null | head -40
    exit 1
}

. "$(dirname "$0")/expect_lib.sh"

# run <args...>: runs mpiexec, sets RC and ELAPSED (ms).
run() {
    t0=$(now_ms)
    timeout -s KILL 30 "$MPIEXEC" "$@" >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    ELAPSED=$(( $(now_ms) - t0 ))
}


# Starts mpiexec in the background; waits until every rank printed "ready".
start_bg() {
    np=$1; shift
    # Create the files first: the background job opens them asynchronously.
    : >"$OUT"
    : >"$ERR"
    "$MPIEXEC" -n "$np" "$@" >>"$OUT" 2>>"$ERR" </dev/null &
    BG=$!
    i=0
    while [ "$(grep -c '^ready' "$OUT")" -lt "$np" ]; do
        i=$((i + 1))
        [ $i -gt 100 ] && fail "ranks did not start"
        sleep 0.1
    done
}

case "$CASE" in
ok)
    run -n 4 "$PROG" ok
    expect_rc 0
    [ "$(grep -c ' ok job ' "$OUT")" -eq 4 ] || fail "expected 4 ok lines"
    for r in 0 1 2 3; do expect_out "rank $r of 4 ok"; done
    expect_no_shm
    ;;
exit_code)
    run -n 4 "$PROG" exit 2 3
    expect_rc 3
    expect_err "rank 2 (pid [0-9]*) exited with code 3"
    expect_within 3000
    grep -q "passed the barrier" "$OUT" && fail "other ranks went on"
    expect_no_orphans
    ;;
abort)
    run -n 4 "$PROG" abort 1 7
    expect_rc 7
    expect_err "rank 1 called MPI_Abort with code 7"
    expect_err "test abort from rank 1"
    expect_within 3000
    expect_no_orphans
    ;;
kill)
    run -n 4 "$PROG" kill 2
    expect_rc 137
    expect_err "rank 2 (pid [0-9]*) killed by signal 9"
    expect_within 3000
    expect_no_orphans
    ;;
nofinalize)
    run -n 3 "$PROG" nofinalize 1
    [ "$RC" -ne 0 ] || fail "exit code 0 after a rank skipped MPI_Finalize"
    expect_err "rank 1 (pid [0-9]*) exited with code 0 without calling MPI_Finalize"
    expect_within 3000
    expect_no_orphans
    ;;
sigint)
    start_bg 3 "$PROG" sleep
    grep -o 'tern-[0-9]*-[0-9a-f]*' "$OUT" >"$WORK/jobs"
    ls /dev/shm/ | grep -o "tern-tern-[0-9]*-[0-9a-f]*" >>"$WORK/jobs"
    t0=$(now_ms)
    kill -INT "$BG"
    wait "$BG"
    RC=$?
    ELAPSED=$(( $(now_ms) - t0 ))
    expect_rc 130
    for r in 0 1 2; do expect_out "rank $r got signal 2"; done
    expect_within 3000
    expect_no_orphans
    ;;
pmi_flood)
    # Rank 0 writes 10,000 PMI puts without reading a reply (about 200 KB of
    # replies, under the launcher's queue bound), then sleeps; SIGTERM from
    # `timeout` 6 s in must end the job within 2 s. A launcher blocked in a
    # reply write would ignore it until the SIGKILL at 9 s.
    t0=$(now_ms)
    timeout --preserve-status -k 3 -s TERM 6 "$MPIEXEC" -n 2 "$PROG" pmi_flood 10000 \
        >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    ELAPSED=$(( $(now_ms) - t0 ))
    expect_rc 143
    expect_out "flooded"
    expect_err "received signal 15"
    expect_within 8000
    expect_no_orphans
    ;;
pmi_flood_unread)
    # Puts without end: the unread replies pass the queue bound and the
    # launcher ends the job, naming the rank.
    t0=$(now_ms)
    timeout -s KILL 20 "$MPIEXEC" -n 2 "$PROG" pmi_flood 0 >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    ELAPSED=$(( $(now_ms) - t0 ))
    [ "$RC" -ne 0 ] && [ "$RC" -ne 137 ] || fail "exit code $RC, expected a failure code"
    expect_err "rank 0 sent PMI requests without reading the replies"
    expect_within 10000
    expect_no_orphans
    ;;
pmi_long_line)
    # A 10 MB PMI line with no newline: ended at the line length limit, not
    # buffered whole (mpiexec's peak memory stays far below the line).
    [ -x /usr/bin/time ] || { echo "SKIP: no /usr/bin/time"; exit 77; }
    t0=$(now_ms)
    timeout -s KILL 20 /usr/bin/time -f "maxrss_kb %M" "$MPIEXEC" -n 2 "$PROG" pmi_long_line 10000000 \
        >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    ELAPSED=$(( $(now_ms) - t0 ))
    [ "$RC" -ne 0 ] && [ "$RC" -ne 137 ] || fail "exit code $RC, expected a failure code"
    expect_err "rank 0 sent a PMI line longer than [0-9]* bytes (the PMI line length limit)"
    expect_within 10000
    rss=$(sed -n 's/^maxrss_kb //p' "$ERR")
    # Against a run that sends no long line (sanitizer builds start larger).
    /usr/bin/time -f "maxrss_kb %M" "$MPIEXEC" -n 2 "$PROG" hello >/dev/null 2>"$WORK/base" </dev/null
    base=$(sed -n 's/^maxrss_kb //p' "$WORK/base")
    [ -n "$rss" ] && [ -n "$base" ] && [ "$rss" -lt $((base + 4000)) ] ||
        fail "mpiexec peak memory ${rss:-?} KB, ${base:-?} KB without the long line"
    expect_no_orphans
    ;;
kill9)
    start_bg 3 "$PROG" sleep
    kill -KILL "$BG"
    wait "$BG" 2>/dev/null
    expect_no_orphans
    # mpiexec died by SIGKILL and could not remove the files the test
    # program named after the job (Tern's own segment is unlinked as soon
    # as every rank has attached, so only these test files are left).
    grep -q '^shm file ' "$OUT" || fail "the ranks reported no shm file"
    for f in $(sed -n 's/^shm file //p' "$OUT"); do rm -f "$f"; done
    ;;
shm)
    # Ranks leave /dev/shm/tern-<job>-test-<rank>; mpiexec must remove them,
    # after success and after failure.
    run -n 2 "$PROG" ok
    expect_rc 0
    job=$(grep -o 'tern-[0-9]*-[0-9a-f]*' "$OUT" | head -1)
    [ -n "$job" ] || fail "no job id printed"
    ls /dev/shm/tern-"$job"-* >/dev/null 2>&1 && fail "leftover /dev/shm/tern-$job-*"
    run -n 2 "$PROG" kill 1
    expect_rc 137
    # Only this job's files: other tests may run beside this one.
    grep -q '^shm file ' "$OUT" || fail "the ranks reported no shm file"
    for f in $(sed -n 's/^shm file //p' "$OUT"); do
        [ -e "$f" ] && fail "failed job left $f"
    done
    ;;
stdin)
    seq 1 200000 >"$WORK/in"
    want_bytes=$(wc -c <"$WORK/in")
    t0=$(now_ms)
    timeout -s KILL 30 "$MPIEXEC" -n 2 "$PROG" stdin <"$WORK/in" >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0
    expect_out "rank 0 stdin bytes $want_bytes lines 200000"
    expect_out "rank 1 stdin bytes 0 lines 0"
    ;;
lines)
    # Two ranks write 2000 lines of 3000 bytes in pieces: no line may be
    # broken or mixed with another.
    run -n 2 "$PROG" lines 2000 3000
    expect_rc 0
    bad=$(awk 'length($0) != 3000 || $0 !~ /^r[01]:[0-9]+:[a-z]+$/ { n++ } END { print n + 0 }' "$OUT")
    [ "$bad" -eq 0 ] || fail "$bad broken lines"
    for r in 0 1; do
        [ "$(grep -c "^r$r:" "$OUT")" -eq 2000 ] || fail "rank $r: not 2000 lines"
    done
    ;;
tag)
    run -n 3 --tag-output "$PROG" hello
    expect_rc 0
    for r in 0 1 2; do expect_out "^\[$r\] hello from rank $r\$"; done
    [ "$(wc -l <"$OUT")" -eq 3 ] || fail "expected 3 lines"
    ;;
env)
    export TERN_LT_FOO=bar
    run -n 2 -x TERN_LT_FOO -x TERN_LT_BAZ=qux --env TERN_LT_A=1 -genv TERN_LT_B 2 \
        "$PROG" env TERN_LT_FOO TERN_LT_BAZ TERN_LT_A TERN_LT_B PMI_SIZE
    expect_rc 0
    for r in 0 1; do
        expect_out "rank $r TERN_LT_FOO=bar TERN_LT_BAZ=qux TERN_LT_A=1 TERN_LT_B=2 PMI_SIZE=2"
    done
    ;;
bind)
    ncores=$(lscpu -p=core 2>/dev/null | grep -v '^#' | sort -u | wc -l)
    run -n 2 "$PROG" affinity
    expect_rc 0
    all=$(grep '^rank 0 cpus' "$OUT" | sed 's/^rank 0 cpus//')
    run -n 2 --bind-to core "$PROG" affinity
    expect_rc 0
    c0=$(grep '^rank 0 cpus' "$OUT" | sed 's/^rank 0 cpus//')
    c1=$(grep '^rank 1 cpus' "$OUT" | sed 's/^rank 1 cpus//')
    [ -n "$c0" ] && [ -n "$c1" ] || fail "no affinity printed"
    if [ "$ncores" -ge 2 ]; then
        [ "$c0" != "$all" ] || fail "rank 0 not bound (cpus$c0)"
        for c in $c0; do
            echo " $c1 " | grep -q " $c " && fail "ranks 0 and 1 share cpu $c"
        done
    fi
    ;;
exec_fail)
    run -n 2 "$WORK/no-such-program"
    expect_rc 127
    expect_err "cannot execute"
    expect_err "no-such-program"
    ;;
help)
    run --help
    expect_rc 0
    expect_out "Usage: mpiexec"
    expect_out "tag-output"
    run --version
    expect_rc 0
    expect_out "Tern"
    ;;
timeout)
    # MPIEXEC_TIMEOUT (seconds, as Hydra and Open MPI read it) ends a job
    # that runs longer, single-host and through the root, with status 124
    # and a message naming it; a shorter job is left alone; a bad value is
    # refused before anything starts.
    export MPIEXEC_TIMEOUT=2
    run -n 3 "$PROG" sleep
    expect_rc 124
    expect_err "the job ran past MPIEXEC_TIMEOUT (2 s); terminating the job"
    [ "$ELAPSED" -ge 1900 ] || fail "ended after ${ELAPSED} ms, before the 2 s limit"
    expect_within 6000
    expect_no_orphans
    expect_no_shm
    run --hosts "localhost:2,localhost" -n 3 "$PROG" sleep
    expect_rc 124
    expect_err "the job ran past MPIEXEC_TIMEOUT (2 s); terminating the job"
    [ "$ELAPSED" -ge 1900 ] || fail "ended after ${ELAPSED} ms, before the 2 s limit"
    expect_within 8000
    expect_no_orphans
    export MPIEXEC_TIMEOUT=20
    run -n 2 "$PROG" ok
    expect_rc 0
    expect_out "rank 1 of 2 ok"
    export MPIEXEC_TIMEOUT=2x
    run -n 2 "$PROG" ok
    expect_rc 2
    expect_err "MPIEXEC_TIMEOUT='2x' is not a number of seconds"
    grep -q "ok" "$OUT" && fail "ranks ran despite the bad MPIEXEC_TIMEOUT"
    unset MPIEXEC_TIMEOUT
    run --help
    expect_out "MPIEXEC_TIMEOUT=S"
    ;;
hydra)
    command -v mpiexec.mpich >/dev/null 2>&1 || { echo "mpiexec.mpich not found: skipped"; exit 77; }
    t0=$(now_ms)
    timeout -s KILL 60 mpiexec.mpich -n 4 "$PROG" ok >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    expect_rc 0
    for r in 0 1 2 3; do expect_out "rank $r of 4 ok"; done
    ;;
hostfile_ok)
    # Comments, blank lines, spaces and slots; localhost starts without ssh.
    printf '# two slots each\n\n  localhost:2   # first\n\t\nlocalhost:2\n' >"$WORK/hosts.txt"
    run --hostfile "$WORK/hosts.txt" -n 4 "$PROG" ok
    expect_rc 0
    for r in 0 1 2 3; do expect_out "rank $r of 4 ok"; done
    run --hosts "localhost:3, localhost" -n 4 "$PROG" ok
    expect_rc 0
    for r in 0 1 2 3; do expect_out "rank $r of 4 ok"; done
    ;;
hostfile_bad)
    # Each bad host list ends mpiexec with 1 and a message naming the place,
    # before any launcher runs (the stand-in leaves a mark if it does).
    printf '#!/bin/sh\ntouch "%s"\n' "$WORK/launched" >"$WORK/launch"
    chmod +x "$WORK/launch"
    bad() {  # bad <expected stderr (fixed string)> <mpiexec args...>
        want=$1; shift
        run --launcher "$WORK/launch" "$@" -n 1 "$PROG" ok
        expect_rc 1
        grep -qF -- "$want" "$ERR" || fail "stderr lacks '$want'"
        [ -e "$WORK/launched" ] && fail "a launcher ran"
        [ -s "$OUT" ] && fail "a rank ran"
        # Bad bytes are escaped, never echoed raw.
        LC_ALL=C grep -q "$(printf '[\001-\010\016-\037\177-\377]')" "$ERR" && fail "raw control byte in stderr"
        return 0
    }
    H=$WORK/hosts.txt
    printf 'nodeA\n# c\n:4\n' >"$H"
    bad "mpiexec: $H:3: empty host name before ':4'" --hostfile "$H"
    printf 'nodeA\nno\001de\n' >"$H"
    bad "hosts.txt:2: invalid byte '\\x01' in host name" --hostfile "$H"
    printf 'nodeA\n\377\376junk\n' >"$H"
    bad "hosts.txt:2: invalid byte '\\xff' in host name" --hostfile "$H"
    printf 'nodeA\nno\000de\n' >"$H"
    bad "hosts.txt:2: invalid byte '\\x00' in host name" --hostfile "$H"
    printf 'node A\n' >"$H"
    bad "hosts.txt:1: invalid byte ' ' in host name" --hostfile "$H"
    printf -- '-oProxyCommand=x\n' >"$H"
    bad "hosts.txt:1: host name starts with '-'" --hostfile "$H"
    { echo nodeA; head -c 100000 /dev/zero | tr '\0' a; echo; } >"$H"
    bad "hosts.txt:2: line longer than 1024 bytes" --hostfile "$H"
    # A file with no end of line (it read /dev/zero for ever).
    bad "mpiexec: /dev/zero:1: line longer than 1024 bytes" --hostfile /dev/zero
    { echo nodeA; head -c 254 /dev/zero | tr '\0' a; echo; } >"$H"
    bad "hosts.txt:2: host name longer than 253 characters" --hostfile "$H"
    printf 'nodeA\nnodeB\n\nnodeC:0\n' >"$H"
    bad "hosts.txt:4: bad slot count '0' for host 'nodeC' (1..1048576)" --hostfile "$H"
    printf 'nodeA:2x\n' >"$H"
    bad "hosts.txt:1: bad slot count '2x' for host 'nodeA'" --hostfile "$H"
    printf 'nodeA:2097152\n' >"$H"
    bad "hosts.txt:1: bad slot count '2097152'" --hostfile "$H"
    printf '# nothing\n\n' >"$H"
    bad "hostfile $H names no host" --hostfile "$H"
    mkdir "$WORK/hostdir"
    bad "cannot read hostfile $WORK/hostdir: Is a directory" --hostfile "$WORK/hostdir"
    bad "cannot read hostfile $WORK/none: No such file or directory" --hostfile "$WORK/none"
    bad "mpiexec: --hosts entry 1: empty host name before ':4'" --hosts ":4"
    bad "mpiexec: --hosts entry 2: empty host name" --hosts "nodeA,,nodeB"
    bad "mpiexec: --hosts entry 3: empty host name" --hosts "nodeA,nodeB,"
    bad "mpiexec: --hosts entry 2: bad slot count '0'" --hosts "nodeA,nodeB:0"
    bad "mpiexec: --hosts entry 1: invalid byte '\\x1b' in host name" --hosts "$(printf 'a\033b')"
    ;;
*)
    echo "unknown case $CASE"
    exit 1
    ;;
esac
echo "PASS [$CASE]"
exit 0
