#!/bin/sh
# CTest entry for the flatbuf cross-check: crosscheck.py does the work.
# usage: crosscheck.sh FB_DUMP [FLATC]
exec /usr/bin/python3 "$(dirname "$0")/crosscheck.py" "$@"
