#!/usr/bin/env python3
"""A root that does not hold the job's secret must not command a proxy.

fake_root.py MPIEXEC: listens on loopback, starts `mpiexec --proxy` for a
one-rank host whose program would create a marker file, hands it a secret
on stdin (as the real root does), sends the challenge, reads the proxy's
hello (which must carry a nonce of its own), then answers as
  wrong:   a welcome whose proof is made with another secret, then orders
           (a put, a release);
  none:    no welcome at all, orders at once;
  right:   the right proof (auth.c: HMAC-SHA256(secret,
           "tern-mpiexec-welcome:<nonce>:<host>")), then pings.
wrong/none: the proxy must refuse (exit status non-zero, its message says
the launch host did not prove it holds the secret) within 15 s, and the
program must never have run. right: the program runs (marker made) and
the proxy ends with status 0. Exits 0 when all three hold, 1 otherwise."""
import hashlib
import hmac
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time


def run(mpiexec, mode, work):
    marker = os.path.join(work, f"ran-{mode}")
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(4)
    lsock.settimeout(15)
    port = lsock.getsockname()[1]
    secret = secrets.token_bytes(32)
    proxy = subprocess.Popen(
        [mpiexec, "--proxy", f"127.0.0.1:{port}", "0,0,1,1,1", "tern-fake-root-kvs",
         "(vector,(0,1,1))", "--", "sh", "-c", f"touch {marker}"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proxy.stdin.write(secret.hex().encode() + b"\n")
    proxy.stdin.flush()
    problems = []
    try:
        conn, _ = lsock.accept()
    except socket.timeout:
        proxy.kill()
        return [f"{mode}: the proxy never connected"]
    conn.settimeout(15)
    conn.sendall(b"cmd=challenge nonce=" + b"ab" * 16 + b"\n")
    hello = b""
    while not hello.endswith(b"\n"):
        b = conn.recv(1)
        if not b:
            break
        hello += b
    m = re.search(rb"nonce=([0-9a-f]+)", hello)
    if not m or len(m.group(1)) != 32:
        problems.append(f"{mode}: the proxy's hello has no nonce: {hello!r}")
    nonce = m.group(1).decode() if m else ""
    orders = b"cmd=put key=evil value=x\ncmd=release\ncmd=ping\n"
    try:
        if mode == "wrong":
            other = secrets.token_bytes(32)
            bad = hmac.new(other, f"tern-mpiexec-welcome:{nonce}:0".encode(),
                           hashlib.sha256).hexdigest()
            conn.sendall(f"cmd=welcome proof={bad}\n".encode() + orders)
        elif mode == "none":
            conn.sendall(orders)
        else:
            good = hmac.new(secret, f"tern-mpiexec-welcome:{nonce}:0".encode(),
                            hashlib.sha256).hexdigest()
            conn.sendall(f"cmd=welcome proof={good}\n".encode() +
                         b"cmd=config name=fakehost heartbeat_timeout_ms=5000\n")
    except OSError:
        pass
    deadline = time.time() + 15
    while proxy.poll() is None and time.time() < deadline:
        if mode == "right":
            try:
                conn.sendall(b"cmd=ping\n")
            except OSError:
                pass
        time.sleep(0.1)
    if proxy.poll() is None:
        proxy.kill()
        problems.append(f"{mode}: the proxy was still running after 15 s")
    _, err = proxy.communicate()
    err = err.decode(errors="replace")
    conn.close()
    lsock.close()
    ran = os.path.exists(marker)
    if mode == "right":
        if proxy.returncode != 0 or not ran:
            problems.append(f"right: status {proxy.returncode}, program ran: {ran}; {err}")
    else:
        if proxy.returncode == 0:
            problems.append(f"{mode}: the proxy obeyed a fake root (status 0)")
        if ran:
            problems.append(f"{mode}: the program ran for a fake root")
        if "did not prove it holds the job's secret" not in err:
            problems.append(f"{mode}: no refusal message: {err}")
    print(f"fake_root {mode}: status {proxy.returncode}, program ran: {ran}")
    return problems


def main():
    problems = []
    with tempfile.TemporaryDirectory(prefix="tern-fake-root-") as work:
        for mode in ("wrong", "none", "right"):
            problems += run(sys.argv[1], mode, work)
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
