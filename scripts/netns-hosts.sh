#!/bin/sh
# Two "hosts" on one machine: two network namespaces joined by a veth pair,
# each running its own sshd that accepts a key made for the occasion. Shared
# by the netns ctest (tests/netns/netns_test.sh) and the inter-host section
# of the compare tool (tools/compare/compare.py).
#
#   scripts/netns-hosts.sh up      sets everything up and prints, one a line,
#                                  shell assignments: NETNS_DIR (state and
#                                  keys), NETNS_A / NETNS_B (namespaces),
#                                  NETNS_IPA / NETNS_IPB (their addresses),
#                                  NETNS_IFA / NETNS_IFB (their veth ends),
#                                  NETNS_SSH (an ssh wrapper reaching either
#                                  address from inside a namespace)
#   scripts/netns-hosts.sh up --two-links
#                                  the same plus a second veth pair between
#                                  the namespaces on a subnet of its own (for
#                                  multi-rail runs), adding NETNS_IPA2 /
#                                  NETNS_IPB2, NETNS_IFA2 / NETNS_IFB2 and the
#                                  two subnets NETNS_NET1 / NETNS_NET2 (as
#                                  libfabric's tcp provider names its fabrics)
#   scripts/netns-hosts.sh down DIR  kills the sshds, deletes the namespaces
#                                  (and so the veth pairs), removes DIR
#
# The caller owns the clean-up: run `down` from a trap (or a finally) as soon
# as `up` has printed NETNS_DIR. `up` undoes its own partial work when it
# fails. Exit 77 with the reason on stderr when this machine cannot do it
# (not root, no ip(8), no sshd, namespaces or veths refused); 1 on other
# errors.
set -u

skip() {
    echo "netns-hosts: cannot set up: $*" >&2
    [ -n "${dir:-}" ] && teardown "$dir"
    exit 77
}
die() {
    echo "netns-hosts: $*" >&2
    [ -n "${dir:-}" ] && teardown "$dir"
    exit 1
}

# teardown DIR: everything `up` recorded in DIR/state, in reverse order.
teardown() {
    d=$1
    [ -f "$d/state" ] || { rm -rf "$d"; return 0; }
    ns_a=$(sed -n 's/^NETNS_A=//p' "$d/state")
    ns_b=$(sed -n 's/^NETNS_B=//p' "$d/state")
    for side in a b; do
        [ -f "$d/sshd-$side.pid" ] && kill "$(cat "$d/sshd-$side.pid")" 2>/dev/null
    done
    # Whatever still runs inside the namespaces was started there by us (ssh
    # sessions, ranks left behind by a run that timed out): end it by pid.
    for sig in TERM KILL; do
        left=
        for ns in $ns_a $ns_b; do
            for pid in $(ip netns pids "$ns" 2>/dev/null); do
                kill -s $sig "$pid" 2>/dev/null && left=1
            done
        done
        [ -z "$left" ] && break
        [ $sig = TERM ] && sleep 0.5
    done
    # Deleting a namespace destroys the veth end inside it, and so the pair.
    [ -n "$ns_a" ] && ip netns del "$ns_a" 2>/dev/null
    [ -n "$ns_b" ] && ip netns del "$ns_b" 2>/dev/null
    rm -rf "$d"
    return 0
}

up() {
    two_links=
    [ "${1:-}" = --two-links ] && two_links=1
    [ "$(id -u)" -eq 0 ] || skip "needs root to create network namespaces"
    command -v ip >/dev/null || skip "no ip(8) (iproute2)"
    sshd=$(command -v sshd || echo /usr/sbin/sshd)
    [ -x "$sshd" ] || skip "no sshd (Debian: openssh-server)"
    command -v ssh >/dev/null || skip "no ssh client"
    command -v ssh-keygen >/dev/null || skip "no ssh-keygen"

    id=$$
    nsa=tern-$id-a
    nsb=tern-$id-b
    ifa=tn$id-a
    ifb=tn$id-b
    net=$((id % 200 + 20))
    ipa=10.$net.77.1
    ipb=10.$net.77.2
    dir=$(mktemp -d /tmp/tern-netns-XXXXXX) || die "mktemp failed"
    # Recorded before anything is created, so teardown finds what exists.
    printf 'NETNS_DIR=%s\nNETNS_A=%s\nNETNS_B=%s\n' "$dir" "$nsa" "$nsb" > "$dir/state"
    trap 'teardown "$dir"; exit 130' INT TERM

    ip netns add "$nsa" 2>/dev/null || skip "cannot create a network namespace (no CAP_SYS_ADMIN/NET_ADMIN here)"
    ip netns add "$nsb" || die "ip netns add $nsb failed"
    ip link add "$ifa" type veth peer name "$ifb" 2>/dev/null || skip "cannot create veth pairs"
    if ! ip link set "$ifa" netns "$nsa" || ! ip link set "$ifb" netns "$nsb"; then
        ip link del "$ifa" 2>/dev/null
        die "cannot move the veth ends into the namespaces"
    fi
    ip -n "$nsa" addr add "$ipa/24" dev "$ifa" && ip -n "$nsb" addr add "$ipb/24" dev "$ifb" ||
        die "cannot address the veth ends"
    for ns in "$nsa" "$nsb"; do
        ip -n "$ns" link set lo up || die "cannot bring lo up in $ns"
    done
    ip -n "$nsa" link set "$ifa" up && ip -n "$nsb" link set "$ifb" up || die "cannot bring the veth pair up"
    if [ -n "$two_links" ]; then
        # Created inside the namespaces at once: nothing to clean up outside.
        ip link add "${ifa}2" netns "$nsa" type veth peer name "${ifb}2" netns "$nsb" 2>/dev/null ||
            die "cannot create the second veth pair"
        ip -n "$nsa" addr add "10.$net.78.1/24" dev "${ifa}2" &&
            ip -n "$nsb" addr add "10.$net.78.2/24" dev "${ifb}2" || die "cannot address the second veth pair"
        ip -n "$nsa" link set "${ifa}2" up && ip -n "$nsb" link set "${ifb}2" up ||
            die "cannot bring the second veth pair up"
    fi

    # Keys and an sshd per namespace, all inside $dir.
    ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key" || die "ssh-keygen failed"
    ssh-keygen -q -t ed25519 -N '' -f "$dir/id" || die "ssh-keygen failed"
    cp "$dir/id.pub" "$dir/authorized_keys"
    chmod 600 "$dir/authorized_keys"
    mkdir -p /run/sshd
    command -v unshare >/dev/null || skip "no unshare(1) (util-linux)"
    for side in a b; do
        cat > "$dir/on-$side" <<SH
#!/bin/sh
# on-$side COMMAND...: runs COMMAND on host $side (its network namespace and hostname).
exec ip netns exec tern-$id-$side unshare --uts sh -c 'hostname "\$0" && exec "\$@"' tern-$id-$side "\$@"
SH
        chmod +x "$dir/on-$side"
    done
    "$dir/on-a" true 2>/dev/null || skip "cannot give a namespace its own hostname (unshare --uts)"
    for side in a b; do
        ip=$ipa
        [ $side = b ] && ip=$ipb
        cat > "$dir/sshd-$side.conf" <<CONF
ListenAddress $ip
Port 22
HostKey $dir/host_key
PidFile $dir/sshd-$side.pid
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AcceptEnv *
MaxStartups 100
MaxSessions 100
CONF
        # Each host also gets its own hostname (a UTS namespace): MPI
        # libraries that tell hosts apart by name would otherwise take the
        # two for one and talk through shared memory.
        "$dir/on-$side" "$sshd" -f "$dir/sshd-$side.conf" || skip "sshd does not start here"
    done
    # One executable that every launcher can be pointed at (some take no
    # arguments with their remote-shell command).
    ssh_cmd="ssh -x -F none -i $dir/id -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout=5"
    printf '#!/bin/sh\nexec %s "$@"\n' "$ssh_cmd" > "$dir/ssh"
    chmod +x "$dir/ssh"
    ok=0
    for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
        if "$dir/on-a" "$dir/ssh" "$ipb" true 2>/dev/null && "$dir/on-b" "$dir/ssh" "$ipa" true 2>/dev/null; then
            ok=1
            break
        fi
        sleep 0.3
    done
    [ $ok = 1 ] || skip "ssh between the namespaces does not work"
    printf 'NETNS_IPA=%s\nNETNS_IPB=%s\nNETNS_IFA=%s\nNETNS_IFB=%s\nNETNS_HOSTA=%s\nNETNS_HOSTB=%s\n' \
        "$ipa" "$ipb" "$ifa" "$ifb" "$nsa" "$nsb" >> "$dir/state"
    [ -n "$two_links" ] &&
        printf 'NETNS_IPA2=%s\nNETNS_IPB2=%s\nNETNS_IFA2=%s\nNETNS_IFB2=%s\nNETNS_NET1=%s\nNETNS_NET2=%s\n' \
            "10.$net.78.1" "10.$net.78.2" "${ifa}2" "${ifb}2" "10.$net.77.0/24" "10.$net.78.0/24" >> "$dir/state"
    printf 'NETNS_ON_A=%s\nNETNS_ON_B=%s\nNETNS_SSH=%s\nNETNS_SSH_CMD='\''%s'\''\n' \
        "$dir/on-a" "$dir/on-b" "$dir/ssh" "$ssh_cmd" >> "$dir/state"
    trap - INT TERM
    cat "$dir/state"
}

case "${1:-}" in
up) shift; up "$@" ;;
down)
    [ -n "${2:-}" ] || { echo "usage: netns-hosts.sh down DIR" >&2; exit 2; }
    teardown "$2" ;;
*)
    echo "usage: netns-hosts.sh up [--two-links] | down DIR" >&2
    exit 2 ;;
esac
