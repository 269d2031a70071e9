#!/bin/sh
# libmpi_abi's copy of libtern: its objects linked into one relocatable
# object whose MPI_/PMPI_/MPIX_ names become tern_native_<name>, so the ABI's
# entry points (same names) call them and libtern's own calls stay inside.
# The objects may be GCC LTO objects (CMAKE_INTERPROCEDURAL_OPTIMIZATION):
# the compiler links them (-r) into a plain object, which objcopy can rename.
# Usage: native_objects.sh CC OUT.o OBJECT...
set -eu
cc=$1
out=$2
shift 2
"$cc" -r -nostdlib -fPIC -O2 -g -fno-semantic-interposition -flinker-output=nolto-rel -o "$out.tmp.o" "$@"
nm -g --defined-only "$out.tmp.o" |
    awk '$3 ~ /^(P?MPIX?_)/ { print $3, "tern_native_" $3 }' >"$out.syms"
objcopy --redefine-syms="$out.syms" "$out.tmp.o" "$out"
rm -f "$out.tmp.o"
