#!/bin/bash
# Passes when compiling <source> with <compiler> fails with a message that
# matches <regex>, and the same source with the call fixed (", ierr)" added
# before the closing parenthesis of each MPI_Send call, or the sed
# expression <fix>) compiles.
# Usage: expect_compile_error.sh <compiler> <source> <work dir> <regex> [<fix>]
set -uo pipefail
fc=$1 src=$2 work=$3 regex=$4
fix=${5:-'s/(call MPI_Send\(.*)\)$/\1, ierr)/'}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
if out=$("$fc" -c -o bad.o "$src" 2>&1); then
    echo "FAIL: $src compiled; the explicit interface should have refused it"
    exit 1
fi
if ! grep -Eq -- "$regex" <<<"$out"; then
    echo "FAIL: the compiler's error does not match '$regex':"
    echo "$out"
    exit 1
fi
sed -E "$fix" "$src" > fixed.f90
if ! "$fc" -c -o fixed.o fixed.f90; then
    echo "FAIL: the fixed program does not compile either"
    exit 1
fi
echo "ok: the wrong call is refused at compile time"
