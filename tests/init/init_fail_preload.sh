#!/bin/sh
# Usage: init_fail_preload.sh <mpiexec> <init_fail_preload program>
# 2 "hosts" x 2 ranks (mpiexec's stand-in remote start, tests/netns), so the
# ofi transport's prepare starts loading libfabric in its thread; /dev/shm
# is a 64 KB tmpfs in a private mount namespace and TERN_SHM_FALLBACK=fail,
# so the shm transport then fails. MPI_Session_init must fail cleanly on
# every rank with the thread joined (the program checks), and MPI_Init must
# end the job with a plain exit status; each names shm's failure once per
# rank, and nothing is left in /dev/shm. Needs root and unshare (skipped,
# 77, otherwise), like tests/shm's space tests.
set -u
mpiexec=$1
prog=$2
. "$(dirname "$0")/../shm/private_shm.sh"
mount -t tmpfs -o size=64k tmpfs /dev/shm || { echo "FAIL: cannot mount a tmpfs"; exit 1; }
dir=$(mktemp -d /tmp/tern-initfail-XXXXXX)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/launch" <<'SH'
#!/bin/sh
host=$1
shift
FAKE_HOST=$host exec sh -c "$*"
SH
chmod +x "$dir/launch"
fail=0
for how in session init; do
    rm -rf "$dir/done" && mkdir "$dir/done"
    env TERN_SHM_FALLBACK=fail TERN_TEST_DONE_DIR="$dir/done" TERN_OFI_PRELOAD=1 FI_PROVIDER=tcp \
        timeout -s KILL 120 "$mpiexec" --launcher "$dir/launch" --hosts hA,hB -n 4 "$prog" $how \
        >"$dir/out" 2>"$dir/err" </dev/null
    rc=$?
    said=$(grep -c "transport shm failed to start" "$dir/err")
    space=$(grep -c "shared memory: /dev/shm has [0-9]* bytes free" "$dir/err")
    left=$(ls /dev/shm)
    case $how in
    # (The first rank to exit ends the others, after all reported.)
    session) good=$(grep -c ': ok$' "$dir/out"); [ "$rc" -lt 128 ] && [ "$good" = 4 ] ;;
    init) [ "$rc" != 0 ] && [ "$rc" -lt 128 ] && ! grep -q "MPI_Init returned" "$dir/out" ;;
    esac
    ok=$?
    # Under ASan or TSan (scripts/run-tests.sh): a report fails it, a thread
    # left unjoined included.
    grep -q 'Sanitizer' "$dir/err" && ok=1
    if [ $ok = 0 ] && [ "$said" -ge 1 ] && [ "$space" -ge 1 ] && [ -z "$left" ]; then
        echo "ok: $how: exit status $rc, $said reports of shm's failure, $space of the space, /dev/shm empty"
    else
        echo "FAIL: $how: exit status $rc, $said reports of shm's failure, $space of the space, left in /dev/shm: '$left'"
        sed 's/^/    out: /' "$dir/out"
        grep -v ' debug: ' "$dir/err" | head -20 | sed 's/^/    err: /'
        fail=1
    fi
done
exit $fail
