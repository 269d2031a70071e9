#!/usr/bin/env python3
"""Checks include/mpi_abi.h against a reference header of the MPI-5.0 ABI:
the Forum's (github mpi-forum/mpi-abi-stubs, mpi.h) or MPICH's mpi_abi.h
(pip install mpich==5.0.2). Neither is committed; without one the check is
skipped (exit 77).

It compiles two programs: one with the reference that prints the value of
every constant both headers define, one with Tern's that prints the same,
and compares the outputs; and one with Tern's header that redeclares every
reference prototype of a procedure Tern declares and the reference's handle
typedefs (a C compiler rejects any that differ). Constants the reference has
and Tern's lacks are listed.

Usage: check_header.py [--cc CC] REFERENCE_HEADER [TERN_HEADER]"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
ap.add_argument("reference")
ap.add_argument("tern", nargs="?", default=os.path.join(
    os.path.dirname(__file__), "..", "..", "include", "mpi_abi.h"))
a = ap.parse_args()
if not os.path.exists(a.reference):
    print(f"check_header: SKIP: no reference header at {a.reference}")
    sys.exit(77)
ref = open(a.reference).read()
tern = open(a.tern).read()


def names(text):
    out = set(re.findall(r"^#define (MPIX?_\w+)\s+\S", text, re.M))
    out |= set(re.findall(r"^\s+(MPIX?_\w+)\s*=", text, re.M))
    return {n for n in out if not n.startswith(("MPI_ABI_", "MPI_H"))}


ref_names, tern_names = names(ref), names(tern)
common = sorted(ref_names & tern_names)
missing = sorted(ref_names - tern_names)
tmp = tempfile.mkdtemp()


def values(header):
    src = os.path.join(tmp, "v.c")
    with open(src, "w") as f:
        f.write(f'#include "{os.path.abspath(header)}"\n#include <stdio.h>\nint main(void) {{\n')
        for n in common:
            f.write(f'    printf("{n} %lld\\n", (long long)(intptr_t){n});\n')
        f.write("    return 0;\n}\n")
    exe = os.path.join(tmp, "v")
    subprocess.run([a.cc, "-w", "-o", exe, src], check=True)
    return subprocess.run([exe], check=True, capture_output=True, text=True).stdout.splitlines()


bad = [f"{r} (Tern: {t.split()[1]})" for r, t in zip(values(a.reference), values(a.tern)) if r != t]
# Prototypes and types: redeclare the reference's after Tern's header.
protos = re.findall(r"^(?:int|double|MPI_\w+) (P?MPI_\w+)\(.*?\);", ref, re.M | re.S)
decls = {m.group(1): m.group(0) for m in
         re.finditer(r"^(?:int|double|MPI_\w+) (P?MPI_\w+)\(.*?\);", ref, re.M | re.S)}
# The Forum's stubs give MPI_Psend_init/MPI_Precv_init an int count; the
# standard's data (pympistandard) and MPICH's mpi_abi.h an MPI_Count one,
# which Tern follows.
KNOWN = {"MPI_Psend_init", "MPI_Precv_init", "PMPI_Psend_init", "PMPI_Precv_init"}
for k in KNOWN:
    if k in decls and "int count" in decls[k]:
        print(f"check_header: {k}: the reference's count is an int (known difference)")
        del decls[k]
ours = set(re.findall(r"^\w+ (P?MPI_\w+)\(", tern, re.M))
src = os.path.join(tmp, "p.c")
with open(src, "w") as f:
    f.write(f'#include "{os.path.abspath(a.tern)}"\n')
    for line in re.findall(r"^typedef struct MPI_ABI_\w+ ?\* ?MPI_\w+;", ref, re.M):
        f.write(line + "\n")
    f.write(re.search(r"typedef struct \{.*?\} MPI_Status;", ref, re.S).group(0)
            .replace("MPI_Status", "tern_ref_status") + "\n")
    f.write("_Static_assert(sizeof(MPI_Status) == sizeof(tern_ref_status), \"MPI_Status\");\n")
    for n in sorted(ours & set(decls)):
        f.write(decls[n].replace("/* deprecated", "//") + "\n")
proto_rc = subprocess.run([a.cc, "-std=c11", "-Werror", "-c", "-o", os.path.join(tmp, "p.o"),
                           src]).returncode
not_in_ref = sorted(ours - set(decls) - KNOWN)
print(f"check_header: {len(common)} constants compared, {len(bad)} differ; "
      f"{len(ours & set(decls))} prototypes redeclared ({'ok' if proto_rc == 0 else 'FAILED'}); "
      f"{len(missing)} reference constants absent")
for b in bad:
    print("  differs:", b)
for m in missing:
    print("  absent:", m)
for m in not_in_ref:
    print("  not in the reference:", m)
sys.exit(1 if bad or proto_rc or not_in_ref else 0)
