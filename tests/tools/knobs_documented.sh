#!/bin/bash
# Every TERN_* environment variable the code reads is a documented knob:
# each name passed to getenv/secure_getenv in src/ and tools/, and each knob
# read through its identifier TERN_KNOB_<ID> (base/config.h; an undeclared one
# does not compile), must appear in the output of `tern-info --knobs`, as must
# every row of knobs.def. Variables that the sources also set themselves
# (setenv/putenv: the launcher telling ranks who they are) are internal, not
# knobs, and are only reported. Test programs (*_test.c) set and misspell
# knobs on purpose and are left out.
# Usage: knobs_documented.sh <tern-info> <source dir>
set -euo pipefail
tern_info=$1 src=$2
cd "$src"

used=$( (grep -rhoE --include='*.c' --include='*.h' --exclude='*_test.c' \
        '(secure_getenv|getenv) *\( *"TERN_[A-Z0-9_]+"' src tools | grep -oE 'TERN_[A-Z0-9_]+'
        grep -rhoE --include='*.c' --include='*.h' --exclude='*_test.c' '\bTERN_KNOB_[A-Z0-9_]*[A-Z0-9]\b' src tools |
        grep -vxE 'TERN_KNOB_(T_[A-Z0-9]+|N|CHECK|IS)' | sed 's/^TERN_KNOB_/TERN_/') | sort -u || true)
internal=$(grep -rhoE --include='*.c' --include='*.h' --exclude='*_test.c' \
        '(setenv|putenv) *\( *"TERN_[A-Z0-9_]+' src tools |
       grep -oE 'TERN_[A-Z0-9_]+' | sort -u || true)
listed=$("$tern_info" --knobs)
knobs_def=$(sed -nE 's/^TERN_KNOB\(([A-Z0-9_]+),.*/TERN_\1/p' src/base/knobs.def)

fail=0
n=0
for name in $used; do
    if grep -qx "$name" <<<"$internal"; then
        echo "internal (set by Tern itself, not a knob): $name"
        continue
    fi
    n=$((n + 1))
    if grep -qE "(^|[^A-Z0-9_])${name}([^A-Z0-9_]|$)" <<<"$listed"; then
        echo "ok: $name"
    else
        echo "FAIL: $name is read in the sources but tern-info does not list it (declare it in src/base/knobs.def):"
        grep -rnE --include='*.c' --include='*.h' "\"$name\"|${name/TERN_/TERN_KNOB_}" src tools | sed 's/^/    /'
        fail=1
    fi
done
for name in $knobs_def; do
    grep -qE "(^|[^A-Z0-9_])${name}([^A-Z0-9_]|$)" <<<"$listed" || { echo "FAIL: $name is in knobs.def but not listed by tern-info"; fail=1; }
    grep -qx "$name" <<<"$used" || echo "note: $name is declared in knobs.def but no literal use was found"
done
echo "$n knob names read in the sources, $(wc -w <<<"$knobs_def") declared"
[ "$n" -gt 0 ] || { echo "FAIL: found no knob uses at all (is the pattern stale?)"; fail=1; }
exit $fail
