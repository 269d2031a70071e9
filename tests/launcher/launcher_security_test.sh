#!/bin/sh
# Launcher security and liveness tests (issue 16):
#   launcher_security_test.sh <case> <mpiexec> <launcher_prog> <fake_proxy.py>
# Multi-host cases run every "host" here through a stand-in remote-start
# command (as tests/netns/multihost_local_test.sh does) that also keeps the
# job's secret it is handed on stdin, so the test can look for it elsewhere
# and fake_proxy.py can prove itself as a real proxy would.
# Exits 0 on pass, 1 on failure, 77 to skip.
set -u
CASE=$1
MPIEXEC=$2
PROG_SRC=$3
FAKE=$4

command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-lsec-XXXXXX")
PROG=$WORK/lsprog_$$_$(date +%s%N | tail -c 7)
cp "$PROG_SRC" "$PROG"
OUT=$WORK/out
ERR=$WORK/err
: >"$OUT"
: >"$ERR"

READER=
cleanup() {
    [ -n "$READER" ] && kill "$READER" 2>/dev/null
    pkill -KILL -f "$PROG" 2>/dev/null
    pkill -KILL -f "$WORK/" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
    echo "FAIL [$CASE]: $*"
    echo "--- stdout:"; head -c 4000 "$OUT" 2>/dev/null | head -40
    echo "--- stderr:"; head -c 4000 "$ERR" 2>/dev/null | head -40
    exit 1
}

. "$(dirname "$0")/expect_lib.sh"

# The stand-in remote start: <launch> HOST COMMAND. It keeps the secret
# (first line of its stdin) and the command line, and passes the secret on.
# slow* hosts start 3 s late; fake-MODE hosts run fake_proxy.py MODE (as
# the launcher's own process, so the root's SIGKILL reaches it).
cat >"$WORK/launch" <<SH
#!/bin/sh
host=\$1
shift
IFS= read -r secret
printf '%s\n' "\$secret" >"$WORK/secret.\$host"
printf '%s\n' "\$*" >"$WORK/cmd.\$host"
case \$host in
slow*) sleep 3 ;;
fake-*) exec python3 "$FAKE" "\${host#fake-}" "\$*" "\$secret" ;;
esac
{ printf '%s\n' "\$secret"; exec cat; } | FAKE_HOST=\$host exec sh -c "\$*"
SH
chmod +x "$WORK/launch"
LAUNCH="--launcher $WORK/launch"

# Waits until `count` lines of stdout start with "ready".
wait_ready() {
    i=0
    while [ "$(grep -c '^ready' "$OUT")" -lt "$1" ]; do
        i=$((i + 1))
        [ $i -gt 150 ] && fail "ranks did not start"
        sleep 0.1
    done
}

# Runs mpiexec under `timeout -s TERM $1` with its stdout read by a reader
# that never reads (`| sleep`); sets RC and ELAPSED (ms) once mpiexec ended.
run_stuck_reader() {
    t=$1
    shift
    t0=$(now_ms)
    if [ "${BOTH_STUCK:-0}" = 1 ]; then
        ( timeout --preserve-status -s TERM "$t" "$MPIEXEC" "$@" 2>&1 </dev/null
          echo $? >"$WORK/rc" ) | sleep 60 &
        READER=$!
    else
        ( timeout --preserve-status -s TERM "$t" "$MPIEXEC" "$@" 2>"$ERR" </dev/null
          echo $? >"$WORK/rc" ) | sleep 60 &
        READER=$!
    fi
    i=0
    while [ ! -s "$WORK/rc" ]; do
        i=$((i + 1))
        [ $i -gt $(( (t + 6) * 10 )) ] && { ELAPSED=$(( $(now_ms) - t0 )); fail "mpiexec still running ${ELAPSED} ms after the start (SIGTERM at ${t} s)"; }
        sleep 0.1
    done
    ELAPSED=$(( $(now_ms) - t0 ))
    RC=$(cat "$WORK/rc")
}

case "$CASE" in
intruder)
    # While host 1's proxy is late, strangers connect to the control port:
    # one claims host 1 without a proof and reports a failure with code 42
    # and a put, one with a wrong proof (code 43), one sends a 1 MB line,
    # one stays silent. All are refused and logged; the job is unharmed.
    "$MPIEXEC" $LAUNCH --hosts hA,slowB -n 2 "$PROG" ok >"$OUT" 2>"$ERR" </dev/null &
    BG=$!
    i=0
    while [ ! -s "$WORK/cmd.hA" ]; do
        i=$((i + 1)); [ $i -gt 100 ] && fail "host hA was not started"; sleep 0.1
    done
    python3 - "$(cat "$WORK/cmd.hA")" <<'PY' || fail "the intruder could not connect"
import re, socket, sys, time
m = re.search(r"'--proxy' '([^']*):(\d+)'", sys.argv[1])
addr = (m.group(1), int(m.group(2)))
socks = []
for payload in (b"cmd=hello host=1\ncmd=failed code=42\ncmd=put key=evil value=x\ncmd=fence\n",
                b"cmd=hello host=1 proof=" + b"0" * 64 + b"\ncmd=failed code=43\n",
                b"x" * 1000000, b""):
    s = socket.create_connection(addr)
    try:
        s.sendall(payload)
    except OSError:
        pass
    socks.append(s)
time.sleep(1)
PY
    wait "$BG"
    RC=$?
    expect_rc 0
    expect_out "rank 0 of 2 ok"
    expect_out "rank 1 of 2 ok"
    expect_err "refused a control connection from 127.0.0.1:[0-9]*: wrong proof"
    expect_err "refused a control connection from .*: no valid hello"
    expect_err "refused a control connection from .*: overlong first line"
    expect_no_orphans
    expect_no_shm
    ;;
secret_hidden)
    # The secret each proxy gets is on no command line, in no proxy's
    # environment and in no output, while the job runs.
    "$MPIEXEC" $LAUNCH --hosts hA,hB -n 2 "$PROG" sleep >"$OUT" 2>"$ERR" </dev/null &
    BG=$!
    wait_ready 2
    for h in hA hB; do
        grep -qxE '[0-9a-f]{64}' "$WORK/secret.$h" || fail "host $h was handed no 256-bit secret on stdin: '$(cat "$WORK/secret.$h")'"
    done
    cmp -s "$WORK/secret.hA" "$WORK/secret.hB" || fail "the hosts were handed different secrets"
    ps -eo args >"$WORK/ps"
    grep -qF -f "$WORK/secret.hA" "$WORK/ps" && fail "the secret is in ps -eo args"
    proxies=$(pgrep -f -- "--proxy .*$PROG")
    [ -n "$proxies" ] || fail "no proxy process found"
    for p in $proxies; do
        tr '\0' '\n' </proc/$p/cmdline >"$WORK/cmdline"
        tr '\0' '\n' </proc/$p/environ >"$WORK/environ"
        grep -qF -f "$WORK/secret.hA" "$WORK/cmdline" && fail "the secret is in proxy $p's cmdline"
        grep -qF -f "$WORK/secret.hA" "$WORK/environ" && fail "the secret is in proxy $p's environment"
    done
    for f in /proc/[0-9]*/cmdline; do
        tr '\0' ' ' <"$f" 2>/dev/null | grep -qF -f "$WORK/secret.hA" && fail "the secret is in $f"
    done
    kill -TERM "$BG"
    wait "$BG"
    RC=$?
    expect_rc 143
    grep -qF -f "$WORK/secret.hA" "$OUT" "$ERR" && fail "the secret is in mpiexec's output"
    expect_no_orphans
    ;;
proxy_flood)
    # Host 0's "proxy" sends 18 MB of puts and a fence and never reads; the
    # root's release to it cannot be written. Host 1's rank is released
    # all the same, and SIGTERM at 8 s ends the job within 2 s. (The fake
    # never answers a heartbeat either: a long timeout keeps that out.)
    t0=$(now_ms)
    TERN_MPIEXEC_HEARTBEAT_TIMEOUT_MS=60000 \
    timeout --preserve-status -k 6 -s TERM 8 "$MPIEXEC" $LAUNCH --hosts fake-flood,hB -n 2 \
        "$PROG" fence_sleep >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    ELAPSED=$(( $(now_ms) - t0 ))
    expect_out "ready 1"
    expect_err "received signal 15"
    expect_rc 143
    expect_within 10000
    expect_no_orphans
    ;;
proxy_silent)
    # The same fake proxy answers no heartbeat: its host is lost within the
    # heartbeat timeout (1.2 s) plus one period, named, and the job ends.
    t0=$(now_ms)
    timeout --preserve-status -k 6 -s TERM 20 "$MPIEXEC" $LAUNCH --hosts fake-flood,hB -n 2 \
        "$PROG" fence_sleep >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    ELAPSED=$(( $(now_ms) - t0 ))
    expect_err "lost host fake-flood (ranks 0-0): no word from its proxy for [0-9]* ms"
    expect_rc 1
    expect_within 10000
    expect_no_orphans
    ;;
proxy_long_line)
    # A proxy's control line passes the limit: it is named, the job ends.
    t0=$(now_ms)
    timeout --preserve-status -k 5 -s TERM 20 "$MPIEXEC" $LAUNCH --hosts hA,fake-longline -n 2 \
        "$PROG" fence_sleep >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    ELAPSED=$(( $(now_ms) - t0 ))
    expect_err "host fake-longline sent a control line longer than [0-9]* bytes"
    expect_rc 1
    expect_within 10000
    expect_no_orphans
    ;;
stdout_stuck)
    # `mpiexec ... | sleep`: SIGTERM at 3 s still ends the job within 2 s.
    run_stuck_reader 3 -n 2 "$PROG" spew
    expect_rc 143
    expect_within 5000
    expect_err "received signal 15"
    expect_no_orphans
    expect_no_shm
    ;;
stdout_stderr_stuck)
    # `mpiexec ... 2>&1 | sleep`: mpiexec's own messages must not block it
    # either.
    BOTH_STUCK=1 run_stuck_reader 3 -n 2 "$PROG" spew
    expect_rc 143
    expect_within 5000
    expect_no_orphans
    ;;
stdout_stuck_hosts)
    # The same through a multi-host root and its proxies.
    run_stuck_reader 3 $LAUNCH --hosts hA,hB -n 2 "$PROG" spew
    expect_rc 143
    expect_within 5000
    expect_err "received signal 15"
    expect_no_orphans
    expect_no_shm
    ;;
*)
    echo "unknown case $CASE"
    exit 1
    ;;
esac
echo "PASS [$CASE]"
exit 0
