#!/bin/sh
# check-layout.sh -- rules of the tree that no compiler checks.
#
#   scripts/check-layout.sh [SOURCE_DIR]
#
# 1. The library reads environment variables only through src/core/env.c,
#    which uses secure_getenv for all of them (a set-uid program must not
#    take paths or modes from its caller's environment).
# 2. Providers are built as a third party's would be, from the public
#    headers (include/cdnn) and the provider SDK (sdk/) only: under
#    providers/, every quoted include names a header of the provider's own
#    (beside the file, inside providers/), no include names a header of
#    src/, and no CMake code points into src/ or links the library's
#    internal targets.  What providers share belongs in sdk/.
# Exits 1 naming every violation.
set -eu
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
status=0

# report TITLE LINES: print the violations under their rule, if any.
report() {
    if [ -n "$2" ]; then
        echo "$1"
        echo "$2" | sed 's/^/  /'
        status=1
    fi
}

readers=$(grep -rln --include='*.c' --include='*.h' -E '\b(secure_)?getenv\(' src \
          | grep -v '^src/core/env\.c$' || true)
report "environment read outside src/core/env.c (use env_get):" "$readers"

# The headers one provider source includes, as "FILE:LINE: \"H\"" or "<H>".
includes_of() {
    grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' "$1" \
        | sed -E "s|^([0-9]+):.*include[[:space:]]*([<\"][^>\"]+[>\"]).*|$1:\\1: \\2|"
}

# Whether an include line names a header of src/: a quoted one that does
# not resolve inside providers/, or an angle one that exists under src/.
names_src_header() {
    file=${1%%:*}
    header=$(echo "$1" | sed -E 's/.*[<"]([^>"]+)[>"]$/\1/')
    case $1 in
    *\") resolved=$(realpath -m --relative-to=. "$(dirname "$file")/$header")
         case $resolved in providers/*) [ ! -e "$resolved" ] ;; *) true ;; esac ;;
    *) [ -e "src/$header" ] ;;
    esac
}

src_includes=$(find providers -name '*.[ch]' | sort | while read -r f; do
    includes_of "$f" | while read -r line; do
        if names_src_header "$line"; then echo "$line"; fi
    done
done)
report "a provider includes a header that is not its own or the SDK's (move what it needs to sdk/):" \
       "$src_includes"

# CMake code under providers/, comments left out, that names src/ or the
# library's internal targets.
src_cmake=$(find providers -name CMakeLists.txt -o -name '*.cmake' | sort | while read -r f; do
    sed 's/#.*//' "$f" | grep -nE '(^|[/"[:space:]])src(/|"|[[:space:])]|$)|cdnn_(internal|objects)' \
        | sed "s|^|$f:|" || true
done)
report "a provider's CMake code reaches into src/ (link cdnn and cdnn_sdk only):" "$src_cmake"

[ $status -eq 0 ] && echo "layout rules hold"
exit $status
