#!/bin/sh
# check-layout.sh -- rules of the tree that no compiler checks.
#
#   scripts/check-layout.sh [SOURCE_DIR]
#
# 1. The library reads environment variables only through src/core/env.c,
#    which uses secure_getenv for all of them (a set-uid program must not
#    take paths or modes from its caller's environment).
# Exits 1 naming every violation.
set -eu
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
status=0

readers=$(grep -rln --include='*.c' --include='*.h' -E '\b(secure_)?getenv\(' src \
          | grep -v '^src/core/env\.c$' || true)
if [ -n "$readers" ]; then
    echo "environment read outside src/core/env.c (use env_get):"
    echo "$readers" | sed 's/^/  /'
    status=1
fi

[ $status -eq 0 ] && echo "layout rules hold"
exit $status
