#!/bin/bash
# Checks what the build-tree wrappers print without running a compiler:
# -show and its MPICH/Open MPI variants, compile-only detection, and the
# environment variables that change the compiler.
# Usage: wrapper_show.sh <dir with mpicc and mpicxx>
set -euo pipefail
bindir=$1
fail=0
check() { # description, command output, extended regex it must match
    if [[ $2 =~ $3 ]]; then
        echo "ok: $1"
    else
        echo "FAIL: $1: got '$2', want /$3/"
        fail=1
    fi
}
check_not() {
    if [[ $2 =~ $3 ]]; then
        echo "FAIL: $1: got '$2', must not match /$3/"
        fail=1
    else
        echo "ok: $1"
    fi
}
unset MPICC_CC TERN_CC MPICXX_CXX TERN_CXX || true

for w in mpicc mpicxx; do
    out=$("$bindir/$w" -show)
    first=${out%% *}
    re_first=$(sed 's/[][\\.*^$+?(){}|]/\\&/g' <<<"$first")
    if command -v -- "$first" >/dev/null; then
        echo "ok: $w -show starts with a compiler ($first)"
    else
        echo "FAIL: $w -show starts with '$first', not a compiler"
        fail=1
    fi
    check "$w -show has -I" "$out" ' -I/[^ ]*include'
    check "$w -show links libtern" "$out" ' -L/[^ ]+ .* -ltern$'
    check "$w -show has an rpath" "$out" ' -Wl,-rpath,/'
    for opt in -compile_info -compile-info -link_info -link-info -showme; do
        check "$w $opt is -show" "$("$bindir/$w" $opt)" "^$re_first .*-ltern"
    done
    out=$("$bindir/$w" -show -c foo.c -o foo.o)
    check "$w -show -c keeps arguments" "$out" "^$re_first -c foo.c -o foo.o -I"
    check_not "$w -c does not link" "$out" '-ltern|-L/'
    for opt in -E -S -M -MM; do
        check_not "$w $opt does not link" "$("$bindir/$w" -show $opt foo.c)" '-ltern'
    done
    out=$("$bindir/$w" -show foo.c -o 'a b' -DX='"y z"')
    check "$w passes arguments before the MPI flags" "$out" "^$re_first foo.c -o a b -DX=\"y z\" -I"
    check "$w -showme:compile" "$("$bindir/$w" -showme:compile)" '^-I/[^ ]+'
    check_not "$w -showme:compile has no compiler" "$("$bindir/$w" -showme:compile)" "^$re_first|-ltern"
    check "$w -showme:link" "$("$bindir/$w" -showme:link)" '^-L/[^ ]+ .*-ltern$'
    check "$w -showme:command" "$("$bindir/$w" -showme:command)" "^$re_first$"
    check "$w -showme:libs" "$("$bindir/$w" -showme:libs)" '^tern$'
    check "$w -showme:version" "$("$bindir/$w" -showme:version)" 'Tern'
    check "$w -cc= chooses the compiler" "$("$bindir/$w" -cc=my-cc -show)" '^my-cc -I'
done

check "MPICC_CC chooses the C compiler" "$(MPICC_CC=my-cc "$bindir/mpicc" -show x.c)" '^my-cc x.c -I'
check "TERN_CC chooses the C compiler" "$(TERN_CC=other-cc "$bindir/mpicc" -show x.c)" '^other-cc x.c -I'
check "MPICC_CC wins over TERN_CC" "$(MPICC_CC=a-cc TERN_CC=b-cc "$bindir/mpicc" -show)" '^a-cc '
check "MPICXX_CXX chooses the C++ compiler" "$(MPICXX_CXX=my-cxx "$bindir/mpicxx" -show x.cc)" '^my-cxx x.cc -I'
check "TERN_CXX chooses the C++ compiler" "$(TERN_CXX=o-cxx "$bindir/mpicxx" -show)" '^o-cxx '
check "-help describes the wrapper" "$("$bindir/mpicc" -help)" '-showme:compile'

exit $fail
