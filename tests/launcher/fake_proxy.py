#!/usr/bin/env python3
"""A misbehaving proxy for launcher_security_test.sh: started by the test's
remote-start command in place of `mpiexec --proxy`, it proves itself to the
root as a real proxy does (with the job's secret, which the remote-start
command read from its stdin and passes here; see tools/mpiexec/auth.c), then:
  flood     sends 300 puts of 60,000 bytes and a fence, and never reads
            (the root's release to it, about 18 MB, is never taken);
  longline  sends one 10 MB line with no newline.
Usage: fake_proxy.py MODE COMMAND-LINE-OF-THE-REAL-PROXY SECRET-IN-HEX"""
import hashlib
import hmac
import re
import socket
import sys
import time

mode, cmd = sys.argv[1], sys.argv[2]
m = re.search(r"'--proxy' '([^']*):(\d+)' '(\d+),", cmd)
host, port, index = m.group(1), int(m.group(2)), int(m.group(3))
secret = bytes.fromhex(sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else "00" * 32)

s = socket.create_connection((host, port))
s.settimeout(2)
nonce = ""
try:  # a root that sends no challenge (older mpiexec) is answered anyway
    line = b""
    while not line.endswith(b"\n"):
        line += s.recv(1)
    nonce = re.search(rb"nonce=([0-9a-f]+)", line).group(1).decode()
except (socket.timeout, AttributeError):
    pass
s.settimeout(None)
proof = hmac.new(secret, f"tern-mpiexec-hello:{nonce}:{index}".encode(), hashlib.sha256).hexdigest()
try:
    s.sendall(f"cmd=hello host={index} proof={proof} nonce={'0' * 32}\n".encode())
    if mode == "flood":
        value = "v" * 60000
        for i in range(300):
            s.sendall(f"cmd=put key=fake-{i} value={value}\n".encode())
        s.sendall(b"cmd=fence\n")
    elif mode == "longline":
        s.sendall(b"cmd=put key=long value=")
        for _ in range(10):
            s.sendall(b"a" * 1000000)
except OSError:
    pass  # the root closed the connection
print("fake proxy done", flush=True)
while True:
    time.sleep(1000)
