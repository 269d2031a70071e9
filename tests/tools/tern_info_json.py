#!/usr/bin/env python3
"""tern-info --json is one JSON object a script can use: it parses, and it
carries what the text output shows (version, build, transports, coverage
per chapter, collective algorithms and their selection table, knobs).
--knobs --json and --coverage --json parse too and agree with it.
Usage: tern_info_json.py <tern-info> <src/mpi/gen/exports.txt>"""
import json
import os
import subprocess
import sys

tern_info, exports = sys.argv[1], sys.argv[2]
env = {k: v for k, v in os.environ.items() if not k.startswith("TERN_")}


def run(*args):
    p = subprocess.run([tern_info, *args], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0, f"tern-info {' '.join(args)} exited {p.returncode}: {p.stderr}"
    return p.stdout


def parse(*args):
    try:
        return json.loads(run(*args))
    except json.JSONDecodeError as e:
        sys.exit(f"FAIL: tern-info {' '.join(args)} is not JSON: {e}")


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


doc = parse("--json")
for key in ("version", "mpi_version", "thread_support", "build", "transports", "hardware",
            "cma", "coverage", "collective_selection", "knobs"):
    check(key in doc, f"no '{key}'")
check(doc.get("version") in run("--version"), "version differs from --version")
check("self" in doc.get("transports", []), "transports lack self")
build = doc.get("build", {})
for key in ("type", "c_compiler", "c_flags", "sanitizers", "hwloc", "prefix"):
    check(key in build, f"build lacks '{key}'")

with open(exports) as f:
    n_exports = len(f.read().split())
cov = doc.get("coverage", {})
check(cov.get("implemented") == n_exports,
      f"coverage.implemented {cov.get('implemented')} != {n_exports} exported procedures")
check(sum(c["implemented"] for c in cov.get("chapters", [])) == cov.get("implemented"),
      "chapters do not add up to coverage.implemented")
check(parse("--coverage", "--json") == cov, "--coverage --json differs from --json's coverage")

knobs = doc.get("knobs", [])
names = {k["name"] for k in knobs}
check(len(knobs) > 10 and all({"name", "type", "default", "current", "doc"} <= k.keys()
                              for k in knobs), "knobs incomplete")
check(parse("--knobs", "--json") == knobs, "--knobs --json differs from --json's knobs")
text_knobs = {line.split("=")[0].strip() for line in run("--knobs").splitlines()
              if line.startswith("  TERN_")}
check(text_knobs == names, f"text and JSON knobs differ: {sorted(text_knobs ^ names)}")

sel = doc.get("collective_selection", {})
colls = sel.get("collectives", [])
check(len(colls) == 17, f"{len(colls)} collectives, expected 17")
for c in colls:
    check(c["knob"] in names, f"{c['name']}: knob {c['knob']} is not a knob")
    check(len(c["algorithms"]) >= 1, f"{c['name']}: no algorithms")
algos = {(c["name"], a["name"]) for c in colls for a in c["algorithms"]}
table = sel.get("table", [])
check(len(table) > 0, "empty selection table")
for r in table:
    check((r["collective"], r["algorithm"]) in algos, f"table row names unknown algorithm {r}")
text = run()
check(f"table: {sel.get('table_source')}" in text, "table source differs from the text output")

for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print(f"ok: tern-info --json parses: {len(knobs)} knobs, {len(colls)} collectives, "
      f"{len(table)} selection rows, {cov.get('implemented')} procedures")
