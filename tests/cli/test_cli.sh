#!/bin/sh
# test_cli.sh CDNN -- help on every command, exit codes that mean
# something, and a demo whose results check against cpu:reference.
set -eu
cdnn=$1
fail() { echo "FAIL: $*" >&2; exit 1; }

"$cdnn" --help | grep -q "usage: cdnn" || fail "--help"
# Every command the top-level usage lists answers --help with its own usage
# on stdout and exit 0 (none runs instead, as `version` once did).
commands=$("$cdnn" --help | sed -n 's/^  \([a-z]\+\)   .*/\1/p')
[ "$(echo "$commands" | wc -l)" -ge 7 ] || fail "top-level usage lists: $commands"
for cmd in $commands; do
    out=$("$cdnn" "$cmd" --help) || fail "$cmd --help exited $?"
    echo "$out" | head -n 1 | grep -q "^usage: cdnn $cmd" ||
        fail "$cmd --help printed no usage first: $out"
done
[ "$("$cdnn" version)" = "$("$cdnn" --version)" ] || fail "version and --version differ"
"$cdnn" version | grep -Eq "^cdnn [0-9]+\.[0-9]+\.[0-9]+" || fail "version prints no version"
set +e
"$cdnn" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no command must exit 2"
"$cdnn" frobnicate >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown command must exit 2"
"$cdnn" engines --bogus >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown option must exit 2"
"$cdnn" engines --device gpu >/dev/null 2>&1; [ $? -eq 1 ] || fail "bad device must exit 1"
"$cdnn" version extra >/dev/null 2>&1; [ $? -eq 2 ] || fail "version with an argument must exit 2"
set -e

"$cdnn" engines | grep -q "^0x[0-9a-f]\{16\}  cpu:reference" || fail "engines lists cpu:reference"
# The demo: a benchmarking build (a ranking), then in fresh processes a
# load checked against cpu:reference and a byte-exact re-save, per graph;
# its files go away unless kept.
keep=$(mktemp -d)
out=$("$cdnn" demo --device cpu --keep "$keep/files") || fail "demo failed: $out"
echo "$out"
[ "$(echo "$out" | grep -c '^ranking\|; ranking (')" -eq 2 ] || fail "demo must rank candidates twice"
[ "$(echo "$out" | grep -c 'check: every output matches cpu:reference')" -eq 2 ] ||
    fail "demo must check two loaded plans against cpu:reference"
[ "$(echo "$out" | grep -c ' ok  *byte-exact$')" -eq 2 ] || fail "demo's table must show two byte-exact re-saves"
for g in matmul_bias_gelu conv_bias_relu; do
    cmp -s "$keep/files/$g.cdnn" "$keep/files/$g.resaved.cdnn" || fail "--keep must keep $g's files"
done
set +e
"$cdnn" demo --device cpu --keep /proc/none >/dev/null 2>&1; [ $? -eq 1 ] || fail "an unmakeable --keep must exit 1"
"$cdnn" demo extra >/dev/null 2>&1; [ $? -eq 2 ] || fail "demo with an operand must exit 2"
set -e
rm -rf "$keep"
