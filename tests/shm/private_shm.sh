# Sourced by the shm tests that mount a /dev/shm of their own (`. private_shm.sh`
# before anything else): re-runs the calling script, with its arguments, in
# a private mount namespace, so that no other test sees the mount; exits 77
# (skipped) without root or unshare. In the namespace, makes every mount
# private.
if [ "${TERN_PRIVATE_SHM:-}" != 1 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "SKIP: needs root to mount a small tmpfs on /dev/shm in a mount namespace"
        exit 77
    fi
    if ! unshare -m true 2>/dev/null; then
        echo "SKIP: unshare -m (a mount namespace) is not available here"
        exit 77
    fi
    TERN_PRIVATE_SHM=1 exec unshare -m sh "$0" "$@"
fi
mount --make-rprivate / 2>/dev/null
