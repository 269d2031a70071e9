#!/usr/bin/env python3
"""How far Tern's mpi.h is from MPICH's ABI (Debian's MPICH 4.0.2 mpi.h).

Collects every constant both headers name (MPI_*/MPIX_* object-like macros
and enumerators; not MPI_T_*, not the version-string macros), compiles one
C program per header that prints each value, the sizes of the ABI's types
and the layout of MPI_Status, and lists the differences. A difference that
the MPICH face translates (src/mpi/abi/mpich.c, docs/design.md "The MPICH
ABI face") is listed in TRANSLATED with the reason; any other difference
fails --check (ctest abi_mpich_constants).

Usage: abi_compare.py --tern-include DIR [--mpich-include DIR] [--mpich-libdir DIR] [--check]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

MPICH_INC = "/usr/include/x86_64-linux-gnu/mpich"

# Differences the libmpich.so.12 face absorbs, with why.
TRANSLATED = {
    "MPI_FILE_NULL": "MPI_File is a pointer in MPICH: the face widens the handle (src/mpich/mpich_abi.c)",
    "sizeof(MPI_File)": "MPI_File is a pointer in MPICH: the face widens the handle (src/mpich/mpich_abi.c)",
    "MPI_VERSION": "compile-time only: MPICH 4.0.2 says 4.0, Tern 5.0 (the face's MPI_Get_version says 4.0)",
    "MPI_SUBVERSION": "compile-time only: MPICH 4.0.2 says 4.0, Tern 5.0 (the face's MPI_Get_version says 4.0)",
}

# Constants whose value is an address (sentinels, data symbols in MPICH).
POINTERS = {"MPI_BOTTOM", "MPI_IN_PLACE", "MPI_STATUS_IGNORE", "MPI_STATUSES_IGNORE",
            "MPI_ERRCODES_IGNORE", "MPI_ARGV_NULL", "MPI_ARGVS_NULL", "MPI_UNWEIGHTED",
            "MPI_WEIGHTS_EMPTY", "MPI_BUFFER_AUTOMATIC", "MPI_F_STATUS_IGNORE",
            "MPI_F_STATUSES_IGNORE", "MPI_F08_STATUS_IGNORE", "MPI_F08_STATUSES_IGNORE"}

# Predefined callbacks: MPICH's null ones are NULL, Tern's are functions;
# both must be accepted (the value only says null or not).
CALLBACKS = re.compile(r"_FN(_NULL)?(_C)?$|^MPI_(NULL|DUP)_")

SKIP = re.compile(r"^MPI_T_|^MPIX_|^MPI_AINT_FMT|^MPIIMPL_|_DEFINED$|^MPI_INCLUDED$|"
                   r"^MPI_FILE_DEFINED$|^MPIO_|^MPI_Fint$|^MPI_Comm_|^MPICH|^MPI_File_|"
                   r"^MPI_[A-Z][a-z]")


def names_of(paths):
    """Object-like macro and enumerator names MPI_* in the given headers."""
    names = set()
    for path in paths:
        text = open(path, encoding="latin-1").read()
        names.update(re.findall(r"^\s*#\s*define\s+(MPI_[A-Za-z0-9_]+)(?!\()", text, re.M))
        for body in re.findall(r"enum\s+\w*\s*\{([^}]*)\}", text):
            names.update(re.findall(r"\b(MPI_[A-Z0-9_]+)\s*(?:=|,|$)", body))
        names.update(re.findall(r"extern\s+[\w\s\*]*?\b(MPI_[A-Z0-9_]+)\s*(?:MPICH_API_PUBLIC)?;",
                                text))
    return {n for n in names if not SKIP.search(n)}


def program(names):
    lines = ["#include <mpi.h>", "#include <stdio.h>", "#include <stddef.h>",
             "#include <stdint.h>", "int main(void) {"]
    for n in sorted(names):
        if CALLBACKS.search(n):
            lines.append(f'  printf("{n} %s\\n", (MPI_Aint)(intptr_t){n} ? "function" : "NULL");')
        elif n in POINTERS:
            lines.append(f'  printf("{n} %lld\\n", (long long)(intptr_t)({n}));')
        else:
            lines.append(f'  printf("{n} %lld\\n", (long long)({n}));')
    for t in ["MPI_Aint", "MPI_Offset", "MPI_Count", "MPI_Fint", "MPI_Comm", "MPI_Datatype",
              "MPI_Op", "MPI_Request", "MPI_Message", "MPI_Info", "MPI_Group", "MPI_Win",
              "MPI_Errhandler", "MPI_Session", "MPI_File", "MPI_Status"]:
        lines.append(f'  printf("sizeof({t}) %zu\\n", sizeof({t}));')
    for f in ["count_lo", "count_hi_and_cancelled", "MPI_SOURCE", "MPI_TAG", "MPI_ERROR"]:
        lines.append(f'  printf("offsetof(MPI_Status,{f}) %zu\\n", offsetof(MPI_Status, {f}));')
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def values(cc, incflags, ldflags, names, tmp, tag):
    src = os.path.join(tmp, tag + ".c")
    exe = os.path.join(tmp, tag)
    with open(src, "w") as f:
        f.write(program(names))
    subprocess.run(cc + incflags + [src, "-o", exe] + ldflags, check=True)
    out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    return dict(line.split(" ", 1) for line in out.splitlines())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tern-include", required=True)
    ap.add_argument("--mpich-include", default=MPICH_INC)
    ap.add_argument("--mpich-libdir", help="where the libmpich.so.12 that gives MPICH's data "
                    "symbols (MPI_UNWEIGHTED...) lies: Tern's for the check (the face's "
                    "values); default the system's (MPICH's own)")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()

    tern_h = os.path.join(args.tern_include, "mpi.h")
    mpich_h = [os.path.join(args.mpich_include, h) for h in ("mpi.h", "mpio.h")]
    tern_names, mpich_names = names_of([tern_h]), names_of(mpich_h)
    both = tern_names & mpich_names
    with tempfile.TemporaryDirectory() as tmp:
        tv = values(["cc", "-w"], ["-I", args.tern_include], [], both, tmp, "tern")
        libdir = ["-L" + args.mpich_libdir, "-Wl,-rpath," + args.mpich_libdir] \
            if args.mpich_libdir else []
        mv = values(["cc", "-w"], ["-I", args.mpich_include], libdir + ["-lmpich"], both, tmp,
                    "mpich")
    bad = 0
    print(f"# Tern mpi.h vs MPICH ({args.mpich_include}): {len(both)} shared names")
    for key in sorted(mv):
        if tv.get(key) == mv[key]:
            continue
        why = TRANSLATED.get(key)
        if why is None:
            bad += 1
        print(f"{'translated' if why else 'DIFFERENT '} {key}: tern {tv.get(key)} "
              f"mpich {mv[key]}" + (f"  ({why})" if why else ""))
    only_mpich = sorted(mpich_names - tern_names)
    only_tern = sorted(tern_names - mpich_names)
    print(f"# only in MPICH's header ({len(only_mpich)}): {' '.join(only_mpich)}")
    print(f"# only in Tern's header ({len(only_tern)}): {' '.join(only_tern)}")
    print(f"# {bad} untranslated difference(s)")
    return 1 if args.check and bad else 0


if __name__ == "__main__":
    sys.exit(main())
