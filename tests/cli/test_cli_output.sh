#!/bin/sh
# test_cli_output.sh CDNN EXAMPLES_DIR -- where `-o OUT` writes: a regular
# file is replaced whole (keeping its mode, and its owner when root), a new
# one gets 0666 & ~umask, a symbolic link is followed and stays a link, a
# device, FIFO or socket is written to and never replaced, `-` is standard
# output, and a directory is refused.
set -eu
fail() { echo "FAIL: $*" >&2; exit 1; }
# Absolute paths: the test runs in its own directory, so that a cdnn that
# took - for a file name leaves nothing behind.
cdnn=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
examples=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
json=$examples/pointwise.json
[ -f "$json" ] || json=$(ls "$examples"/*.json | head -n 1)

# The graph form is the same bytes every time: what each output must hold.
"$cdnn" build "$json" -o "$tmp/want.cdg" --form graph >/dev/null || fail "reference build"
build() { "$cdnn" build "$json" --form graph -o "$@"; }

echo "== /dev/null is written to, and stays a character device"
# As root a cdnn that replaced devices would replace the system's /dev/null,
# so root tests a private node of the same device (1, 3); nobody else can
# replace /dev/null, so they test it.
null=/dev/null
if [ "$(id -u)" -eq 0 ]; then
    null=$tmp/null
    mknod -m 666 "$null" c 1 3 2>/dev/null || null=""
fi
if [ -n "$null" ]; then
    build "$null" >/dev/null || fail "build -o $null"
    [ -c "$null" ] || fail "$null is no longer a character device"
else
    echo "skipped: root without the right to make a device node"
fi

echo "== a FIFO is written to, and stays a FIFO"
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/from_fifo" &
reader=$!
# A reader left waiting on a replaced FIFO would wait forever: end it.
build "$tmp/fifo" >/dev/null && [ -p "$tmp/fifo" ] ||
    { kill "$reader"; fail "build -o FIFO failed or replaced the FIFO"; }
wait "$reader"
cmp -s "$tmp/want.cdg" "$tmp/from_fifo" || fail "the FIFO's reader got other bytes"

echo "== a socket is written to, and stays a socket"
if /usr/bin/python3 -c 'import socket' 2>/dev/null; then
    /usr/bin/python3 - "$tmp/sock" "$tmp/from_sock" <<'EOF' &
import os, socket, sys
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(sys.argv[1])
server.listen(1)
open(sys.argv[1] + ".ready", "w").close()
conn, _ = server.accept()
with open(sys.argv[2], "wb") as out:
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        out.write(chunk)
EOF
    listener=$!
    tries=0
    while [ ! -e "$tmp/sock.ready" ] && [ "$tries" -lt 100 ]; do
        sleep 0.1
        tries=$((tries + 1))
    done
    [ -e "$tmp/sock.ready" ] || fail "the socket listener did not start"
    build "$tmp/sock" >/dev/null && [ -S "$tmp/sock" ] ||
        { kill "$listener"; fail "build -o SOCKET failed or replaced the socket"; }
    wait "$listener"
    cmp -s "$tmp/want.cdg" "$tmp/from_sock" || fail "the socket's reader got other bytes"
else
    echo "skipped: no /usr/bin/python3 to listen on a socket"
fi

echo "== a symbolic link is followed: its target gets the bytes, the link stays"
echo old >"$tmp/target"
ln -s target "$tmp/link"
build "$tmp/link" >/dev/null || fail "build -o LINK"
[ -L "$tmp/link" ] || fail "the link was replaced by a file"
[ "$(readlink "$tmp/link")" = target ] || fail "the link points elsewhere"
cmp -s "$tmp/want.cdg" "$tmp/target" || fail "the link's target does not hold the build"
ln -s missing "$tmp/dangling"
build "$tmp/dangling" >/dev/null || fail "build -o DANGLING_LINK"
[ -L "$tmp/dangling" ] && cmp -s "$tmp/want.cdg" "$tmp/missing" ||
    fail "a link to nothing was not followed to create its target"

echo "== an existing file keeps its mode (and its owner when root); a new one gets the umask's"
echo secret >"$tmp/private"
chmod 600 "$tmp/private"
build "$tmp/private" >/dev/null || fail "build -o 0600 file"
[ "$(stat -c %a "$tmp/private")" = 600 ] || fail "a 0600 file became $(stat -c %a "$tmp/private")"
cmp -s "$tmp/want.cdg" "$tmp/private" || fail "the 0600 file does not hold the build"
(umask 027 && build "$tmp/new" >/dev/null) || fail "build -o NEW"
[ "$(stat -c %a "$tmp/new")" = 640 ] || fail "a new file under umask 027 is $(stat -c %a "$tmp/new")"
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
    echo old >"$tmp/theirs"
    chown nobody "$tmp/theirs"
    chmod 640 "$tmp/theirs"
    build "$tmp/theirs" >/dev/null || fail "build -o a file nobody owns"
    [ "$(stat -c %U:%a "$tmp/theirs")" = nobody:640 ] ||
        fail "root's build made nobody's 0640 file $(stat -c %U:%a "$tmp/theirs")"
fi
[ -z "$(ls -A "$tmp" | grep '\.tmp-')" ] || fail "temporary files were left: $(ls -A "$tmp")"

echo "== - is standard output; the report goes to standard error"
build - >"$tmp/stdout.cdg" 2>"$tmp/stderr.txt" || fail "build -o -: $(cat "$tmp/stderr.txt")"
cmp -s "$tmp/want.cdg" "$tmp/stdout.cdg" || fail "build -o - wrote other bytes to stdout"
grep -q "^built: .* to standard output$" "$tmp/stderr.txt" ||
    fail "build -o - reported no 'built:' line on stderr: $(cat "$tmp/stderr.txt")"
"$cdnn" build "$json" -o "$tmp/want.cdpl" --form plan >/dev/null || fail "plan build"
"$cdnn" resave "$tmp/want.cdpl" -o - >"$tmp/resaved.cdpl" 2>"$tmp/stderr.txt" ||
    fail "resave -o -: $(cat "$tmp/stderr.txt")"
cmp -s "$tmp/want.cdpl" "$tmp/resaved.cdpl" || fail "resave -o - wrote other bytes"
grep -q "^resaved: .* -> standard output (plan)" "$tmp/stderr.txt" ||
    fail "resave -o - reported no 'resaved:' line on stderr: $(cat "$tmp/stderr.txt")"
# Benchmarking prints a ranking: with -o - it must not land in the artifact.
CDNN_CACHE_DIR="$tmp/cache" CDNN_DISABLE_CACHE=1 "$cdnn" build "$json" --benchmark \
    --form plan -o - >"$tmp/bench.cdpl" 2>"$tmp/stderr.txt" || fail "build --benchmark -o -"
grep -q "^ranking " "$tmp/stderr.txt" || fail "the ranking did not go to stderr"
"$cdnn" inspect "$tmp/bench.cdpl" >/dev/null || fail "build --benchmark -o - wrote no plan"

echo "== a directory is refused, and left as it was"
mkdir "$tmp/dir"
set +e
out=$(build "$tmp/dir" 2>&1)
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "build -o DIR exited $rc, not 1: $out"
echo "$out" | grep -q "^cdnn: build: cannot write '$tmp/dir': it is a directory; give the path" ||
    fail "build -o DIR said: $out"
[ -d "$tmp/dir" ] && [ -z "$(ls -A "$tmp/dir")" ] || fail "the directory was changed"
echo "all output checks passed"
