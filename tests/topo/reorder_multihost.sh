#!/bin/sh
# topo_reorder on two stand-in hosts of 4 ranks each (a remote-start
# command that runs each "host"'s proxy here, as
# tests/netns/multihost_local_test.sh does): shm inside a host, ofi across.
# Usage: reorder_multihost.sh MPIEXEC PROGRAM
set -u
dir=$(mktemp -d /tmp/tern-reorder-XXXXXX)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/launch" <<'SH'
#!/bin/sh
host=$1
shift
FAKE_HOST=$host exec sh -c "$*"
SH
chmod +x "$dir/launch"
TOPO_REORDER_NODES=2 FI_PROVIDER=tcp exec "$1" --launcher "$dir/launch" --hosts hA,hB -n 8 "$2"
