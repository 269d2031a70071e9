#!/bin/sh
# An MPI-IO program with its ranks on two "hosts" of this machine (shm
# inside each, ofi over TCP between them; tests/netns/multihost_local_test.sh
# does the same for mpiexec), so the paths that only a file across nodes
# takes run: the shared file pointer's window (core/io/io_shared.c).
#
# Usage: io_two_hosts_test.sh MPIEXEC PROGRAM [ARGS...]
set -u
mpiexec=$1
shift
dir=$(mktemp -d /tmp/tern-io-two-hosts-XXXXXX)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/launch" <<'SH'
#!/bin/sh
host=$1
shift
FAKE_HOST=$host exec sh -c "$*"
SH
chmod +x "$dir/launch"
FI_PROVIDER=tcp "$mpiexec" --launcher "$dir/launch" --hosts hA,hB -n 4 "$@"
