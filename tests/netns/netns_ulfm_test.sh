#!/bin/sh
# Failure detection across hosts: two network namespaces (scripts/netns-hosts.sh),
# 2 hosts x 2 ranks (0-1 on A, 2-3 on B) started over ssh, ranks 0-1 and
# 2-3 joined by shm, the hosts by the ofi transport across the veth link.
# Every rank waits in MPI_Barrier (ulfm_prog wait_kill) while the script
#   kill:      kills rank 3 on host B with SIGKILL (mpiexec --ft);
#   host:      kills host B's proxy with SIGKILL, and so its ranks (--ft);
#   cut:       takes the link down (ip link set down in A) (--ft);
#   kill_noft: kills rank 3 without --ft;
#   cut_noft:  cuts the link without --ft;
#   mute:      host B's proxy is stopped (SIGSTOP), so that no launcher
#              tells anyone, then rank 3 is killed (--ft; the root's heartbeat
#              timeout raised to 30 s): ranks 0 and 1 on A must learn it by
#              themselves (ofi's liveness port, TERN_PEER_HEARTBEAT_MS), as
#              under srun with TERN_FT=1; the proxy is resumed once they did;
#   mute_noft: the same without --ft, rank 0 waiting only in MPI_Recv from
#              rank 3 under MPI_ERRORS_ARE_FATAL (ulfm_prog recv_kill): the
#              job must end with rank 0's error naming rank 3 and its host;
#   abort:     the even ranks (0 on A, 2 on B) make a communicator and rank
#              2 calls MPI_Abort on it (--ft): exactly ranks 0 and 2 end,
#              on both hosts, and ranks 1 and 3 go on (ulfm_prog abort_even).
# --ft: every survivor must get MPIX_ERR_PROC_FAILED, shrink, and report
# the same failed group and members (kill: [3] / 0,1,2; host, cut: [2,3] /
# 0,1), the job's status (137; host, cut: 1) and mpiexec's line naming the rank or host;
# the time from the kill or cut to the last survivor's error is printed and
# must stay within NETNS_ULFM_LIMIT_MS (default 2000). Without --ft the job
# must end within that limit plus the kill grace, with a message naming the
# rank and host. Each case asserts that no process of the job and no
# /dev/shm file of it is left.
#
# Usage: netns_ulfm_test.sh MPIEXEC ULFM_PROG [CASE...]
# Needs root, `ip netns`, sshd and libfabric's tcp provider; exits 77 when
# the namespaces cannot be made.
set -u
mpiexec=$1
prog_src=$2
shift 2
cases=${*:-kill host cut kill_noft cut_noft abort mute mute_noft}
limit=${NETNS_ULFM_LIMIT_MS:-2000}

skip() { echo "netns_ulfm: SKIPPED: $*"; exit 77; }
hosts_sh=$(dirname "$0")/../../scripts/netns-hosts.sh
dir=$(mktemp -d /tmp/tern-netns-ulfm-XXXXXX)
prog=$dir/ulfmprog_$$
cp "$prog_src" "$prog"
NETNS_DIR=
BG=
cleanup() {
    [ -n "$BG" ] && kill -KILL "$BG" 2>/dev/null
    [ -n "$NETNS_DIR" ] && sh "$hosts_sh" down "$NETNS_DIR"
    for p in $(pgrep -f "$prog"); do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
sh "$hosts_sh" up > "$dir/hosts" 2> "$dir/hosts.err"
rc=$?
[ $rc -eq 77 ] && skip "$(cat "$dir/hosts.err")"
[ $rc -eq 0 ] || { echo "netns_ulfm: setting up the two hosts failed:"; cat "$dir/hosts.err"; exit 1; }
. "$dir/hosts"
ipa=$NETNS_IPA
ipb=$NETNS_IPB

failures=0
now_ms() { date +%s%3N; }
bad() {
    echo "netns_ulfm [$case]: FAIL: $*"
    echo "--- stdout:"; head -30 "$dir/out"
    echo "--- stderr:"; head -30 "$dir/err"
    failures=$((failures + 1))
}
# Job files in /dev/shm whose mpiexec is gone (the root's pid is in the name).
shm_orphans() {
    ls /dev/shm 2>/dev/null | sed -n 's/^tern-tern-\([0-9]*\)-.*/\1 &/p' |
        while read -r pid name; do kill -0 "$pid" 2>/dev/null || echo "$name"; done | sort
}
shm_before=$(shm_orphans)

for case in $cases; do
    ft=--ft
    case $case in *_noft) ft= ;; esac
    what=wait_kill hb=
    [ $case = abort ] && what=abort_even
    [ $case = mute_noft ] && what=recv_kill
    case $case in mute*) hb=TERN_MPIEXEC_HEARTBEAT_TIMEOUT_MS=30000 ;; esac
    : > "$dir/out"
    : > "$dir/err"
    "$NETNS_ON_A" env MPIEXEC_TIMEOUT=60 $hb timeout 90 "$mpiexec" $ft --launcher "$NETNS_SSH_CMD" \
        --hosts "$ipa,$ipb" -ppn 2 -n 4 "$prog" $what > "$dir/out" 2> "$dir/err" < /dev/null &
    BG=$!
    i=0
    while [ "$(grep -c '^ready ' "$dir/out")" -lt 4 ]; do
        i=$((i + 1))
        [ $i -gt 3000 ] && break
        sleep 0.01
    done
    sleep 0.3 # every rank but the victim is inside the barrier
    pid=$(sed -n 's/^pid 3 //p' "$dir/out")
    t0=$(now_ms)
    # (abort: the aborting rank prints its time, taken below.)
    case $case in
    kill*) [ -n "$pid" ] && kill -KILL "$pid" ;;
    host) [ -n "$pid" ] && kill -KILL "$(awk '/^PPid:/ {print $2}' "/proc/$pid/status")" ;;
    mute*)
        proxy=$(awk '/^PPid:/ {print $2}' "/proc/$pid/status")
        kill -STOP "$proxy"
        t0=$(now_ms)
        kill -KILL "$pid"
        # Until the ranks on A have seen it (or 10 s), then the proxy goes on.
        i=0
        while [ $i -lt 1000 ]; do
            if [ $case = mute ]; then
                [ "$(grep -c '^errortime [01] ' "$dir/out")" -ge 2 ] && break
            else
                grep -q 'rank 3 .*on host' "$dir/err" && break
            fi
            i=$((i + 1))
            sleep 0.01
        done
        t_seen=$(now_ms)
        kill -CONT "$proxy"
        ;;
    cut*) "$NETNS_ON_A" ip link set "$NETNS_IFA" down ;;
    esac
    wait "$BG"
    rc=$?
    t_end=$(now_ms)
    BG=
    case $case in cut*) "$NETNS_ON_A" ip link set "$NETNS_IFA" up ;; esac
    if [ -z "$pid" ]; then
        bad "the ranks did not start"
        continue
    fi
    case $case in
    kill) want_failed=3 members=0,1,2 rc_want=137 line="rank 3 on host $ipb (pid [0-9]*) killed by signal 9.*the others go on (--ft)" ;;
    host) want_failed=2,3 members=0,1 rc_want=1 line="lost host $ipb (ranks 2-3): its remote start .*the others go on (--ft)" ;;
    cut) want_failed=2,3 members=0,1 rc_want=1 line="lost host $ipb (ranks 2-3): no word from its proxy.*the others go on (--ft)" ;;
    kill_noft) rc_want=137 line="on host $ipb: rank 3 (pid [0-9]*) killed by signal 9" ;;
    cut_noft) rc_want=1 line="lost host $ipb (ranks 2-3): no word from its proxy.*terminating the job" ;;
    mute) want_failed=3 members=0,1,2 rc_want=137 line="rank 3 on host $ipb (pid [0-9]*) killed by signal 9.*the others go on (--ft)" ;;
    mute_noft) rc_want=$rc line="rank 0 called MPI_Abort.*rank 3 on host [^ ]* ($ipb)" ;;
    abort) want_failed=0,2 members=1,3 rc_want=3 line="rank 2 on host $ipb called MPI_Abort with code 3.*ending ranks 0,2 of its communicator only (--ft)" ;;
    esac
    if [ $case = abort ]; then
        for r in 0 2; do
            grep -q "rank $r on host [^ ]* .*the others go on (--ft)" "$dir/err" ||
                bad "mpiexec did not report the end of rank $r"
        done
    fi
    [ $rc -eq 124 ] && { bad "the job hung"; continue; }
    [ -n "$ft" ] && grep -q '^FAIL' "$dir/out" && bad "a survivor reported a broken promise"
    [ $rc -eq $rc_want ] || bad "exit status $rc, expected $rc_want"
    grep -q "$line" "$dir/err" || bad "no line '$line' from mpiexec"
    if [ -n "$ft" ]; then
        n_surv=$(echo "$members" | tr ',' '\n' | grep -c .)
        want="failed=[$want_failed] members=$members"
        [ "$(grep '^survivor ' "$dir/out" | grep -c -F " $want ")" -eq "$n_surv" ] ||
            bad "not every one of the $n_surv survivors reports '$want'"
        last=$(sed -n 's/^errortime [0-9]* //p' "$dir/out" | sort -n | tail -1)
        # mute: ranks 0 and 1 on their own (rank 2 hears it once its proxy goes on).
        [ $case = mute ] && last=$(sed -n 's/^errortime [01] //p' "$dir/out" | sort -n | tail -1)
        [ $case = abort ] && t0=$(sed -n 's/^aborttime //p' "$dir/out")
        if [ -z "$last" ] || [ -z "$t0" ]; then
            bad "no error times"
        else
            ms=$((last - t0))
            echo "netns_ulfm [$case]: every survivor's error within $ms ms of the $case"
            [ "$ms" -le "$limit" ] || bad "$ms ms from the $case to the last survivor's error (limit $limit)"
        fi
    elif [ $case = mute_noft ]; then
        [ $rc -ne 0 ] || bad "exit status 0"
        ms=$((t_seen - t0))
        echo "netns_ulfm [$case]: rank 0's error named rank 3 within $ms ms of the kill"
        [ "$ms" -le "$limit" ] || bad "$ms ms from the kill to rank 0's error (limit $limit)"
    else
        ms=$((t_end - t0))
        echo "netns_ulfm [$case]: the job ended $ms ms after the ${case%_noft}"
        [ "$ms" -le $((limit + 3000)) ] || bad "the job took $ms ms to end"
    fi
    # The far side's ranks end by themselves (their proxy stops hearing mpiexec).
    i=0
    while pgrep -f "$prog" > /dev/null; do
        i=$((i + 1))
        [ $i -gt 500 ] && { bad "processes left: $(pgrep -af "$prog" | tr '\n' ';')"; break; }
        sleep 0.01
    done
    shm_orphans > "$dir/shm_now"
    left=$(echo "$shm_before" | comm -13 - "$dir/shm_now")
    [ -z "$left" ] || bad "left in /dev/shm: $left"
done
[ $failures -eq 0 ] && echo "netns_ulfm: all passed"
exit $((failures > 0))
