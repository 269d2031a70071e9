#!/bin/bash
# Tern programs under the launchers that clusters run.
#
#   [MPIEXEC=<Tern mpiexec>] launchers_test.sh slurm <launcher_pmi_prog> <launcher_mpi_prog> <mpi_prog>...
#   launchers_test.sh hydra  <launcher_pmi_prog> <launcher_mpi_prog> <mpi_prog>...
#   launchers_test.sh openmpi <launcher_pmi_prog> <launcher_mpi_prog> <mpi_prog>...
#
# slurm: starts a private Slurm on this machine (munged, slurmctld and one
# slurmd with a generated config in a temporary directory, as root), then
# runs the programs with srun -n 4 --mpi=pmi2 (PMI-2, and PMI-1 forced with
# TERN_PMI=pmi1) and --mpi=pmix, checks their output and exit codes, and
# checks that a failing rank (non-zero exit, MPI_Abort) fails the job step
# with its error visible; with MPIEXEC set, also Tern's mpiexec inside salloc
# (proxy started with srun). The daemons are stopped and the directory removed
# on every exit path. Skips (77) only when the Slurm or munge packages are
# missing (or when not root: slurmd must be).
#
# hydra, openmpi: the same checks under MPICH's mpiexec.mpich and Open
# MPI's mpirun.openmpi (PMIx); each skips (77) when its launcher is missing.
set -u

MODE=$1
PMI_PROG=$2
MPI_PROG=$3
shift 3
# Tern's mpiexec, for the allocation case: MPIEXEC=<path> in the environment.
MPIEXEC=${MPIEXEC:-}
MPI_PROGS=("$@")
NP=4
FAILS=0
STEP_TIMEOUT=60

# Sanitizer builds: libpmix's own leaks at exit are not ours.
HERE=$(cd "$(dirname "$0")" && pwd)
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$HERE/lsan_pmix.supp:print_suppressions=0"

# PMIx cases need a Tern built with libpmix (libpmix-dev).
HAVE_PMIX=0
ldd "$MPI_PROG" 2>/dev/null | grep -q libpmix && HAVE_PMIX=1

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

OUT=$(mktemp /tmp/tern-launch-out.XXXXXX)
# timeout exits 124 when the limit hit (srun itself may exit 137 when tasks
# were killed). A step that Slurm itself never finished launching (seen
# once in CI under load: one task never reached PMIx_Init, and srun, killed
# at the limit, said "aborted before step completely launched") is run once
# more, saying so; a hang of Tern's own, after every task started, still
# fails at once.
run() {
    timeout -k 10 $STEP_TIMEOUT "$@" >"$OUT" 2>&1 </dev/null
    local rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        if grep -q "aborted before step completely launched" "$OUT"; then
            echo "NOTE: Slurm did not finish launching the step (exit code $rc): once more: $*"
            timeout -k 10 $STEP_TIMEOUT "$@" >"$OUT" 2>&1 </dev/null
            rc=$?
        fi
    fi
    return $rc
}

# check_ok_prog <label> <PMI flavour or -> <command...>: exit 0, every
# rank's line, and (unless -) every rank on that PMI flavour.
check_ok_prog() {
    local label=$1 flavour=$2
    shift 2
    TERN_LOG_LEVEL=3 run "$@"
    local rc=$?
    local ok=1
    [ $rc -eq 0 ] || { fail "$label: exit code $rc"; ok=0; }
    for r in $(seq 0 $((NP - 1))); do
        grep -q "^rank $r of $NP ok" "$OUT" || { fail "$label: no line from rank $r"; ok=0; }
    done
    if [ "$flavour" != - ]; then
        n=$(grep -c "PMI: $flavour, rank" "$OUT")
        [ "$n" -eq $NP ] || { fail "$label: $n of $NP ranks used PMI flavour $flavour"; ok=0; }
    fi
    if [ $ok -eq 1 ]; then pass "$label"; else sed 's/^/    | /' "$OUT" | grep -v "pmi send\|pmi recv" | head -40; fi
}

# The launcher's node map spares the host-name exchange.
check_node_map() {
    local label=$1
    shift
    TERN_LOG_LEVEL=3 run "$@"
    local rc=$?
    n=$(grep -c "nodes from the launcher's map" "$OUT")
    if [ $rc -eq 0 ] && [ "$n" -eq $NP ] && ! grep -q "key=tern-host-" "$OUT"; then
        pass "$label"
    else
        fail "$label: exit code $rc, $n of $NP ranks took the launcher's node map"
        sed 's/^/    | /' "$OUT" | grep -v "pmi send\|pmi recv" | head -40
    fi
}

check_mpi_prog() {
    local label=$1
    shift
    run "$@"
    local rc=$?
    if [ $rc -eq 0 ]; then pass "$label"; else
        fail "$label: exit code $rc"
        sed 's/^/    | /' "$OUT" | head -40
    fi
}

# check_fails <label> <regex that must appear> <command...>: non-zero exit,
# within the timeout (no hang), with the error visible: the regex in the
# output, or the exit code WANT_RC when that is set.
check_fails() {
    local label=$1 want=$2
    shift 2
    run "$@"
    local rc=$?
    # 141: a process of the job died of SIGPIPE, the launcher's output pipes
    # closed under it while the job was being torn down (seen with Hydra
    # under load: the refusal's message lost with it): once more.
    if [ $rc -eq 141 ] && ! grep -Eq "$want" "$OUT"; then
        echo "    (exit code 141 with no '$want' in the output: running it once more)"
        run "$@"
        rc=$?
    fi
    if [ $rc -eq 124 ]; then
        fail "$label: the job hung (killed after ${STEP_TIMEOUT}s)"
    elif [ $rc -eq 0 ]; then
        fail "$label: the job step succeeded"
    elif ! grep -Eq "$want" "$OUT" && [ "$rc" != "${WANT_RC:-}" ]; then
        fail "$label: exit code $rc but no '$want' in the output"
    elif grep -q "passed the barrier" "$OUT"; then
        fail "$label: ranks went on after the failure"
    else
        pass "$label (exit code $rc)"
        return
    fi
    sed 's/^/    | /' "$OUT" | head -40
}

# --- Slurm -------------------------------------------------------------------

DIR=
PIDS=()
# Processes of this Slurm instance: the daemons' step daemons (slurmstepd)
# and tasks outlive slurmd, and all carry our SLURM_CONF in their
# environment.
instance_pids() {
    local p
    for p in /proc/[0-9]*; do
        { tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qx "SLURM_CONF=$DIR/slurm.conf" &&
            echo "${p#/proc/}"
    done
}

cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null
    done
    if [ -n "$DIR" ]; then
        for pid in $(instance_pids); do
            [ "$pid" != $$ ] && kill -KILL "$pid" 2>/dev/null
        done
    fi
    rm -f "$OUT"
    [ -n "$DIR" ] && rm -rf "$DIR"
    # Slurm's PMIx plugin leaves /tmp/spmix_appdir_<uid>_<job>.<step> behind
    # for steps it killed; remove ours (job ids from FIRST_JOB on).
    local d id
    for d in /tmp/spmix_appdir_*_*.*; do
        [ -d "$d" ] || continue
        id=${d##*_}
        id=${id%%.*}
        [ -n "${FIRST_JOB:-}" ] && [ "$id" -ge "$FIRST_JOB" ] 2>/dev/null &&
            [ "$id" -lt $((FIRST_JOB + 100000)) ] && rm -rf "$d"
    done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# A port below the kernel's ephemeral range, so that no outgoing connection
# (of this test or any other running beside it) can take it between the
# check and slurmd's bind; any socket on it, in any state, rules it out.
# $1: a port not to return (the other daemon's).
free_port() {
    local p low
    low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    [ "$low" -gt 12000 ] 2>/dev/null || low=32768
    for _ in $(seq 1 50); do
        p=$((10000 + RANDOM % (low - 10000)))
        [ "$p" = "${1:-}" ] && continue
        ss -Htan "( sport = :$p or dport = :$p )" 2>/dev/null | grep -q . ||
            { echo $p; return; }
    done
    echo 0
}

start_slurm() {
    for c in munged slurmctld slurmd srun sinfo; do
        command -v $c >/dev/null 2>&1 || [ -x /usr/sbin/$c ] ||
            { echo "$c not found (install slurmd slurmctld slurm-client munge): skipped"; exit 77; }
    done
    [ "$(id -u)" -eq 0 ] || { echo "not root: slurmd must run as root: skipped"; exit 77; }
    export PATH=$PATH:/usr/sbin
    DIR=$(mktemp -d /tmp/tern-slurm.XXXXXX)
    chmod 700 "$DIR"
    mkdir -p "$DIR/state" "$DIR/spool" "$DIR/munge"
    chmod 700 "$DIR/munge"
    head -c 1024 /dev/urandom >"$DIR/munge/munge.key"
    chmod 400 "$DIR/munge/munge.key"
    local sock=$DIR/munge/munge.sock
    munged --force -F --key-file="$DIR/munge/munge.key" --socket="$sock" \
        --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" \
        --seed-file="$DIR/munge/munged.seed" >"$DIR/munged.out" 2>&1 &
    PIDS+=($!)
    disown $!
    for _ in $(seq 1 50); do [ -S "$sock" ] && break; sleep 0.1; done
    [ -S "$sock" ] || { echo "munged did not start:"; cat "$DIR/munged.out" "$DIR/munge/munged.log"; exit 1; }

    local host ctld_port slurmd_port
    host=$(hostname -s)
    ctld_port=$(free_port)
    slurmd_port=$(free_port $ctld_port)
    # Job ids of our own, so that two instances one after the other (CI's
    # normal and ASan runs) never reuse a step id: the PMIx plugin refuses
    # a step whose directory a killed step of the same id left in /tmp.
    FIRST_JOB=$(( ($$ % 600) * 100000 + 100000 ))   # below MaxJobId (67043328)
    cat >"$DIR/slurm.conf" <<CONF
ClusterName=terntest
FirstJobId=$FIRST_JOB
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
InactiveLimit=0
KillWait=2
MessageTimeout=20
NodeName=$host NodeAddr=127.0.0.1 CPUs=$NP State=UNKNOWN
PartitionName=tern Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
    export SLURM_CONF=$DIR/slurm.conf
    slurmctld -D -i >"$DIR/slurmctld.out" 2>&1 &
    PIDS+=($!)
    disown $!
    slurmd -D >"$DIR/slurmd.out" 2>&1 &
    PIDS+=($!)
    disown $!
    local state=
    for _ in $(seq 1 100); do
        state=$(sinfo -h -N -o %T 2>/dev/null | head -1)
        [ "$state" = idle ] && break
        sleep 0.2
    done
    if [ "$state" != idle ]; then
        echo "the Slurm node did not become idle (state '$state'):"
        tail -n 20 "$DIR"/slurmctld.log "$DIR"/slurmd.log "$DIR"/slurmctld.out "$DIR"/slurmd.out 2>/dev/null
        exit 1
    fi
    echo "Slurm is up: $(srun --version), MPI plugins: $(srun --mpi=list 2>&1 | tr -s '\n' ' ')"
}

case $MODE in
slurm)
    start_slurm
    SRUN=(srun -n $NP -N 1 --overcommit)
    check_ok_prog "srun --mpi=pmi2, PMI-2" pmi2 "${SRUN[@]}" --mpi=pmi2 "$PMI_PROG" ok
    TERN_PMI=pmi1 check_ok_prog "srun --mpi=pmi2, PMI-1 (TERN_PMI=pmi1)" pmi1 \
        "${SRUN[@]}" --mpi=pmi2 "$PMI_PROG" ok
    MPIS=(pmi2)
    if [ $HAVE_PMIX -eq 1 ]; then
        check_ok_prog "srun --mpi=pmix" pmix "${SRUN[@]}" --mpi=pmix "$PMI_PROG" ok
        MPIS+=(pmix)
    else
        echo "SKIP: srun --mpi=pmix cases: Tern was built without PMIx (libpmix-dev)"
    fi
    for mpi in "${MPIS[@]}"; do
        check_ok_prog "srun --mpi=$mpi, MPI program" - "${SRUN[@]}" --mpi=$mpi "$MPI_PROG" ok
        check_node_map "srun --mpi=$mpi: node map from the launcher" \
            "${SRUN[@]}" --mpi=$mpi "$MPI_PROG" ok
        for prog in "${MPI_PROGS[@]}"; do
            check_mpi_prog "srun --mpi=$mpi $(basename "$prog")" "${SRUN[@]}" --mpi=$mpi "$prog"
        done
        check_fails "srun --mpi=$mpi -K: rank 2 exits with 7" "task 2: Exited with exit code 7" \
            "${SRUN[@]}" -K --mpi=$mpi "$MPI_PROG" exit 2 7
        check_fails "srun --mpi=$mpi: rank 1 calls MPI_Abort" \
            "rank 1\\]: MPI_Abort with code 5" \
            "${SRUN[@]}" --mpi=$mpi "$MPI_PROG" abort 1 5
    done
    check_fails "srun without an MPI plugin" "without a PMI plugin" \
        "${SRUN[@]}" --mpi=none "$MPI_PROG" ok
    # ULFM under srun (ULFM_PROG: tests/ulfm's ulfm_prog): TERN_FT=1 and -K0,
    # so the step keeps the others when rank 3 kills itself in a
    # collective; the survivors see the death themselves, without Tern's
    # mpiexec, and agree on the failed group and the shrunk communicator.
    if [ -n "${ULFM_PROG:-}" ]; then
        TERN_FT=1 run "${SRUN[@]}" -K0 --mpi=pmi2 "$ULFM_PROG" coll_during
        rc=$?
        n=$(grep -c "^survivor " "$OUT")
        views=$(grep "^survivor " "$OUT" | cut -d' ' -f3- | sort -u | wc -l)
        if [ $rc -ne 124 ] && [ $rc -ne 0 ] && ! grep -q "^FAIL" "$OUT" &&
            [ "$n" -eq $((NP - 1)) ] && [ "$views" -eq 1 ]; then
            pass "srun --mpi=pmi2 with TERN_FT=1: $n survivors agree: $(grep -m1 "^survivor " "$OUT" | cut -d' ' -f3-)"
        else
            fail "srun --mpi=pmi2 with TERN_FT=1: exit code $rc, $n survivors, $views views"
            sed 's/^/    | /' "$OUT" | head -40
        fi
    fi
    # Tern's mpiexec inside an allocation: the allocation's node, its proxy
    # started as a job step with srun (slurmd logs one more task launch).
    if [ -n "$MPIEXEC" ]; then
        steps=$(grep -c "launch task" "$DIR/slurmd.log")
        check_ok_prog "mpiexec inside salloc" - salloc -n $NP --overcommit "$MPIEXEC" -n $NP "$PMI_PROG" ok
        now=$(grep -c "launch task" "$DIR/slurmd.log")
        if [ "$now" -eq $((steps + 1)) ]; then pass "mpiexec inside salloc: proxy started with srun"
        else fail "mpiexec inside salloc: $((now - steps)) job steps launched, expected 1"; fi
        check_fails "mpiexec inside salloc: rank 2 exits with 7" "rank 2 .*exited with code 7" \
            salloc -n $NP --overcommit "$MPIEXEC" -n $NP "$MPI_PROG" exit 2 7
    fi
    ;;
hydra)
    command -v mpiexec.mpich >/dev/null 2>&1 || { echo "mpiexec.mpich not found: skipped"; exit 77; }
    HYDRA=(mpiexec.mpich -n $NP)
    check_ok_prog "Hydra, PMI-1" pmi1 "${HYDRA[@]}" "$PMI_PROG" ok
    TERN_PMI=pmi2 check_fails "Hydra: TERN_PMI=pmi2 is refused" "Hydra's PMI-2 fence" \
        "${HYDRA[@]}" "$PMI_PROG" ok
    check_node_map "Hydra: node map from the launcher" "${HYDRA[@]}" "$MPI_PROG" ok
    for prog in "${MPI_PROGS[@]}"; do
        check_mpi_prog "Hydra $(basename "$prog")" "${HYDRA[@]}" "$prog"
    done
    # Hydra either exits with the failed rank's code or prints its banner
    # about the first process it reaped (then one it killed).
    WANT_RC=7 check_fails "Hydra: rank 2 exits with 7" "BAD TERMINATION" \
        "${HYDRA[@]}" "$MPI_PROG" exit 2 7
    check_fails "Hydra: rank 1 calls MPI_Abort" "rank 1\\]: MPI_Abort with code 5" \
        "${HYDRA[@]}" "$MPI_PROG" abort 1 5
    ;;
openmpi)
    # Open MPI's launcher (ORTE in Debian 12; PRRTE's prterun in later
    # releases) starts any program and serves it PMIx.
    command -v mpirun.openmpi >/dev/null 2>&1 || { echo "mpirun.openmpi not found: skipped"; exit 77; }
    [ $HAVE_PMIX -eq 1 ] || { echo "Tern was built without PMIx (libpmix-dev): skipped"; exit 77; }
    ORTE=(mpirun.openmpi --allow-run-as-root --oversubscribe -n $NP)
    check_ok_prog "Open MPI mpirun, PMIx" pmix "${ORTE[@]}" "$PMI_PROG" ok
    check_node_map "Open MPI mpirun: node map from the launcher" "${ORTE[@]}" "$MPI_PROG" ok
    for prog in "${MPI_PROGS[@]}"; do
        check_mpi_prog "Open MPI mpirun $(basename "$prog")" "${ORTE[@]}" "$prog"
    done
    check_fails "Open MPI mpirun: rank 2 exits with 7" "Exit code: +7" "${ORTE[@]}" "$MPI_PROG" exit 2 7
    check_fails "Open MPI mpirun: rank 1 calls MPI_Abort" "rank 1\\]: MPI_Abort with code 5" \
        "${ORTE[@]}" "$MPI_PROG" abort 1 5
    ;;
*)
    echo "unknown mode $MODE"
    exit 1
    ;;
esac

if [ $FAILS -gt 0 ] && [ -n "$DIR" ]; then
    echo "--- end of the Slurm logs:"
    tail -n 25 "$DIR/slurmd.log" "$DIR/slurmctld.log" 2>/dev/null
fi
echo "$MODE: $FAILS failure(s)"
[ $FAILS -eq 0 ]
