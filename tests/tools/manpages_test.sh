#!/bin/bash
# The generated man pages (tools/bindgen/manpages.py): a page for every
# procedure Tern exports, MPI_Send's with the prototypes of include/mpi.h,
# its parameters and errors, MPI_Bcast's with its algorithms and knob; every
# page formats without warnings, and man finds them by name.
# Usage: manpages_test.sh <man dir of the build> <source dir>
set -euo pipefail
man=$1 src=$2
fail=0
n=0
while read -r p; do
    [ -n "$p" ] || continue
    n=$((n + 1))
    [ -s "$man/man3/$p.3" ] || { echo "FAIL: no page for $p"; fail=1; }
done <"$src/src/mpi/gen/exports.txt"
echo "checked $n procedures for a page"

page=$man/man3/MPI_Send.3
for f in MPI_Send MPI_Send_c; do
    proto=$(grep -E "^int $f\(" "$src/include/mpi.h")
    grep -Fxq "$proto" "$page" || { echo "FAIL: $page lacks the prototype of mpi.h: $proto"; fail=1; }
done
expect() { # expect <page> <fixed string>
    grep -Fq -- "$2" "$man/man3/$1.3" || { echo "FAIL: $1.3 lacks: $2"; fail=1; }
}
expect MPI_Send "IN (const void *): initial address of send buffer"
expect MPI_Send "IN (int; MPI_Count in MPI_Send_c): number of elements in send buffer"
expect MPI_Send '\fBMPI_ERR_TAG\fR'
expect MPI_Send 'error handler of the communicator \fIcomm\fR'
expect MPI_Send_c ".so man3/MPI_Send.3"
expect MPI_Bcast "TERN_BCAST_ALGORITHM"
expect MPI_Bcast ".B binomial"
expect MPI_Bcast '\fBMPI_ERR_ROOT\fR'
expect MPI_Ibcast "TERN_BCAST_ALGORITHM"
expect MPI_Win_lock "TERN_RMA_"

if command -v groff >/dev/null; then
    # Warnings name the page (groff prints the file and line).
    warn=$(cd "$man" && groff -man -ww -z -Tutf8 man3/*.3 man1/*.1 2>&1 || true)
    [ -z "$warn" ] || { echo "FAIL: groff warns:"; echo "$warn" | head -20; fail=1; }
fi
if command -v man >/dev/null; then
    out=$(MANWIDTH=200 man -M "$man" MPI_Send 2>&1)
    grep -Fq "int MPI_Send(const void *buf" <<<"$out" || { echo "FAIL: man -M $man MPI_Send:"; echo "$out" | head; fail=1; }
    out=$(MANWIDTH=200 man -M "$man" MPI_Send_c 2>&1)
    grep -Fq "int MPI_Send_c(const void *buf" <<<"$out" || { echo "FAIL: man MPI_Send_c"; fail=1; }
fi
[ $fail = 0 ] && echo "ok: man pages"
exit $fail
