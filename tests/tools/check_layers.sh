#!/bin/bash
# The one-way order of src/'s layers and of the core's rooms, read from the
# #include "..." lines of every .c and .h under src/:
#   - a file of layer L includes only files of L or of a layer before it
#     (base < pmi < transport < core < mpi);
#   - a file of the core sits in a declared room and includes only files
#     of its room or of a room before it (the order given, lowest first);
#   - includes are rooted at src/ (they name the layer: "core/pt2pt/p2p.h"),
#     never relative ("../").
#   - a file outside the transport layer includes only its contract (the
#     files directly in transport/: transport.h), never a transport's own
#     header (transport/<name>/...): everything the layers above use of a
#     transport goes through the ops table.
#   - a .c file of the core declares nothing extern: such a declaration is
#     an include this check cannot see (as p2p.c once reached bsend).
# Each violation is printed with the file, line and include; any fails the
# test.
# Usage: check_layers.sh <src dir> --layers <lowest>... --rooms <lowest>...
set -euo pipefail
src=$1
shift
layers=() rooms=() into=
for arg in "$@"; do
    case $arg in
    --layers) into=layers ;;
    --rooms) into=rooms ;;
    *) if [ "$into" = layers ]; then layers+=("$arg"); else rooms+=("$arg"); fi ;;
    esac
done
[ ${#layers[@]} -gt 0 ] && [ ${#rooms[@]} -gt 0 ] || { echo "usage: $0 <src> --layers ... --rooms ..."; exit 2; }

# Position of $1 in the list that follows, or -1.
rank_of() {
    local name=$1 i=0
    shift
    for x in "$@"; do
        [ "$x" = "$name" ] && { echo $i; return; }
        i=$((i + 1))
    done
    echo -1
}

# Room of a path under core/ ("core/<room>/...") and its position among the
# declared rooms: "<room> <rank>", rank -1 when the path is in no declared
# room (a file directly in core/ is in none).
room_of() {
    local rest=${1#core/}
    local room=${rest%%/*}
    if [ "$rest" = "$room" ]; then
        echo "- -1"
    else
        echo "$room $(rank_of "$room" "${rooms[@]}")"
    fi
}

order_text() { local IFS='<'; echo "$*" | sed 's/</ < /g'; }
layer_order=$(order_text "${layers[@]}")
room_order=$(order_text "${rooms[@]}")

cd "$src"
fail=0 n_files=0 n_includes=0
while IFS= read -r file; do
    n_files=$((n_files + 1))
    layer=${file%%/*}
    lrank=$(rank_of "$layer" "${layers[@]}")
    if [ "$lrank" -lt 0 ]; then
        echo "FAIL: src/$file is in no declared layer ($layer_order)"
        fail=1
        continue
    fi
    room= rrank=-1
    if [ "$layer" = core ]; then
        read -r room rrank < <(room_of "$file")
        if [ "$rrank" -lt 0 ]; then
            echo "FAIL: src/$file is in no declared room of the core ($room_order)"
            fail=1
            continue
        fi
    fi
    if [ "$layer" = core ] && [[ $file == *.c ]]; then
        while IFS=: read -r line decl; do
            echo "FAIL: src/$file:$line declares \"$decl\": include the header of the room that owns it"
            fail=1
        done < <(grep -n '^[[:space:]]*extern[[:space:]]' "$file" || true)
    fi
    while IFS=: read -r line inc; do
        n_includes=$((n_includes + 1))
        where="src/$file:$line includes \"$inc\""
        case $inc in
        */*) ;;
        *) echo "FAIL: $where: name it from src/ (<layer>/...)"; fail=1; continue ;;
        esac
        if [[ $inc == *../* || $inc == ./* ]]; then
            echo "FAIL: $where: includes are rooted at src/, not relative"
            fail=1
            continue
        fi
        tlayer=${inc%%/*}
        trank=$(rank_of "$tlayer" "${layers[@]}")
        if [ "$trank" -lt 0 ]; then
            echo "FAIL: $where: $tlayer is not a layer ($layer_order)"
            fail=1
        elif [ "$trank" -gt "$lrank" ]; then
            echo "FAIL: $where: layer $layer is below $tlayer ($layer_order)"
            fail=1
        elif [ "$tlayer" = transport ] && [ "$layer" != transport ] && [[ ${inc#transport/} == */* ]]; then
            echo "FAIL: $where: a transport's own header; use the contract (transport/transport.h)"
            fail=1
        elif [ "$layer" = core ] && [ "$tlayer" = core ]; then
            read -r troom trrank < <(room_of "$inc")
            if [ "$trrank" -lt 0 ]; then
                echo "FAIL: $where: not in a room of the core ($room_order)"
                fail=1
            elif [ "$trrank" -gt "$rrank" ]; then
                echo "FAIL: $where: room $room is below $troom ($room_order)"
                fail=1
            fi
        fi
    done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" |
             sed -E 's/^([0-9]+):[^"]*"([^"]*)".*/\1:\2/')
done < <(find . -name '*.[ch]' | sed 's|^\./||' | sort)

echo "$n_files files, $n_includes includes checked; layers: $layer_order; core rooms: $room_order"
[ "$n_files" -gt 0 ] && [ "$n_includes" -gt 0 ] || { echo "FAIL: found nothing to check"; fail=1; }
exit $fail
