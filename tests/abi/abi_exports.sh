#!/bin/sh
# libmpi_abi.so.1: exports exactly the MPI_ and PMPI_ names of the
# procedures listed (src/abi/gen/exports.txt), and its soname.
# Usage: abi_exports.sh LIBMPI_ABI EXPORTS_TXT
set -eu
lib=$1 list=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^_' | sort -u >"$tmp/have"
{ cat "$list"; sed 's/^MPI\(X\{0,1\}\)_/PMPI\1_/' "$list"; } | sort -u >"$tmp/want"
if ! cmp -s "$tmp/have" "$tmp/want"; then
    echo "FAIL: exports differ from $list (< exported, > listed):"
    diff "$tmp/have" "$tmp/want" | head -40
    exit 1
fi
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libmpi_abi.so.1 ] || { echo "FAIL: soname $soname"; exit 1; }
echo "ok: $(wc -l <"$tmp/have") symbols, soname $soname"
