#!/bin/bash
# libtern.so exports only the MPI interface: every defined dynamic symbol
# starts with MPI_, PMPI_ or MPIX_ (besides the linker's own symbols), and
# the procedures it exports are exactly those the binding specs list
# (src/mpi/gen/exports.txt, written by tools/bindgen), each with its PMPI_
# twin: no procedure exported without its spec, none listed but missing.
# Usage: check_exports.sh <path to libtern.so> <exports.txt>
set -euo pipefail
lib=$1
listed=$2
syms=$(nm -D --defined-only "$lib" | awk 'NF >= 3 {print $3}' | sed 's/@.*//')
bad=$(grep -Ev '^(P?MPIX?_|_init$|_fini$|_edata$|_end$|__bss_start$|_ITM_|__gmon_start__$)' <<<"$syms" || true)
if [ -n "$bad" ]; then
    echo "FAIL: $lib exports symbols outside the MPI interface:"
    echo "$bad" | head -50
    echo "($(wc -l <<<"$bad") in all)"
    exit 1
fi
# Procedures are MPI_ + a capital + lower case, or MPI_T_ + lower case
# (MPI_COMM_DUP_FN and the
# other predefined callbacks are functions, not procedures).
exported=$(grep -E '^MPI_([A-Z][a-z]|T_[a-z])' <<<"$syms" | sort)
if ! diff <(sort "$listed") <(echo "$exported") >/tmp/check_exports.$$; then
    echo "FAIL: the procedures $lib exports differ from $listed (< listed only, > exported only):"
    grep '^[<>]' /tmp/check_exports.$$ | head -50
    rm -f /tmp/check_exports.$$
    exit 1
fi
rm -f /tmp/check_exports.$$
missing_pmpi=$(comm -23 <(sed 's/^MPI_/PMPI_/' <<<"$exported") <(grep '^PMPI_' <<<"$syms" | sort))
if [ -n "$missing_pmpi" ]; then
    echo "FAIL: no profiling twin for: $missing_pmpi"
    exit 1
fi
echo "ok: $(wc -l <<<"$syms") exported symbols, all MPI_/PMPI_/MPIX_; $(wc -l <<<"$exported") procedures, as listed"
