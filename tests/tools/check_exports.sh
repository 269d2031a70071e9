#!/bin/bash
# libtern.so exports only the MPI interface: every defined dynamic symbol
# starts with MPI_, PMPI_ or MPIX_ (besides the linker's own symbols), and
# the basic entry points are there.
# Usage: check_exports.sh <path to libtern.so>
set -euo pipefail
lib=$1
syms=$(nm -D --defined-only "$lib" | awk 'NF >= 3 {print $3}' | sed 's/@.*//')
bad=$(grep -Ev '^(P?MPIX?_|_init$|_fini$|_edata$|_end$|__bss_start$|_ITM_|__gmon_start__$)' <<<"$syms" || true)
if [ -n "$bad" ]; then
    echo "FAIL: $lib exports symbols outside the MPI interface:"
    echo "$bad" | head -50
    echo "($(wc -l <<<"$bad") in all)"
    exit 1
fi
for s in MPI_Init MPI_Finalize MPI_Comm_rank MPI_Comm_size; do
    if ! grep -qx "$s" <<<"$syms"; then
        echo "FAIL: $lib does not export $s"
        exit 1
    fi
done
echo "ok: $(wc -l <<<"$syms") exported symbols, all MPI_/PMPI_/MPIX_"
