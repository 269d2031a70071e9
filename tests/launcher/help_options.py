#!/usr/bin/env python3
"""mpiexec's --help lists every option its parser accepts.

The parser and --help read one table (tools/mpiexec/options.c), and
--list-options prints every spelling in it. This checks, for each spelling:
it is in --help; the parser knows it (run alone it does not say "unknown
option"); and conversely every option --help shows is in the table. A
made-up option must be refused.
Usage: help_options.py <mpiexec>"""
import re
import subprocess
import sys

mpiexec = sys.argv[1]


def run(*args):
    p = subprocess.run([mpiexec, *args], capture_output=True, text=True, timeout=30,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


rc, listed, _ = run("--list-options")
assert rc == 0, f"--list-options exited {rc}"
spellings = listed.split()
assert len(spellings) >= 20, f"only {len(spellings)} spellings listed: {spellings}"
rc, help_text, _ = run("--help")
assert rc == 0, f"--help exited {rc}"

# The options column of --help: lines "  -n N, --np N, -c N   help".
shown = set()
for line in help_text.splitlines():
    if re.match(r"^  -", line):
        left = re.split(r"\s{2,}", line.strip())[0]
        shown.update(item.split(" ")[0] for item in left.split(", "))

failures = []
for s in spellings:
    if s not in shown:
        failures.append(f"{s}: accepted by the parser but not in --help")
    rc, out, err = run(s)
    if "unknown option" in err:
        failures.append(f"{s}: listed, but the parser says: {err.strip()}")
for s in sorted(shown - set(spellings)):
    failures.append(f"{s}: in --help but not an option of the table")
rc, _, err = run("--no-such-option", "true")
if rc != 2 or "unknown option" not in err:
    failures.append(f"--no-such-option: exit {rc}, stderr {err.strip()!r}")

for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print(f"ok: {len(spellings)} option spellings, each in --help and known to the parser")
