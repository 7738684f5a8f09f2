#!/bin/sh
# test_cli_saveload.sh CDNN EXAMPLES_DIR -- the save/load commands of the
# CLI (build, inspect, resave, run) end to end: every form, byte-identical
# re-saves, checked runs, damaged files, bad usage, no half-written output.
set -eu
cdnn=$1
examples=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect CODE PATTERN CMD...: CMD exits with CODE and its output (stdout and
# stderr together) matches PATTERN (grep -E); "" matches anything.
expect() {
    want=$1 pattern=$2
    shift 2
    set +e
    out=$("$@" 2>&1)
    got=$?
    set -e
    [ "$got" -eq "$want" ] || fail "$* exited $got, not $want: $out"
    [ -z "$pattern" ] || echo "$out" | grep -Eq -- "$pattern" ||
        fail "$* printed no '$pattern': $out"
}

# The two fused examples, or failing those any two examples there are.
graphs=""
for name in conv_bias_relu matmul_bias_gelu_residual; do
    [ -f "$examples/$name.json" ] && graphs="$graphs $examples/$name.json"
done
[ -n "$graphs" ] || graphs=$(ls "$examples"/*.json | head -n 2)
[ -n "$graphs" ] || fail "no example graphs in $examples"

for json in $graphs; do
    n=$tmp/$(basename "$json" .json)
    echo "== $json"
    # build: every form; the default is graph+plan.
    expect 0 "^built: engine .* wrote [0-9]+ B \(graph\+plan\) to $n.cdgp" \
        "$cdnn" build "$json" -o "$n.cdgp"
    expect 0 "\(plan\)" "$cdnn" build "$json" -o "$n.cdpl" --form plan
    expect 0 "\(graph\)" "$cdnn" build "$json" -o "$n.cdg" --form graph --device cpu
    expect 0 "engine cpu:reference" "$cdnn" build "$n.cdg" -o "$n.ref.cdpl" \
        --form plan --engine cpu:reference

    # inspect: text and JSON, for each form.
    expect 0 "^kind +container holding a graph and its plan$" "$cdnn" inspect "$n.cdgp"
    expect 0 "^integrity +verified \(SHA-256\)" "$cdnn" inspect "$n.cdgp"
    expect 0 "^graph content key +[0-9a-f]{64}$" "$cdnn" inspect "$n.cdpl"
    expect 0 "^kind +graph$" "$cdnn" inspect "$n.cdg"
    for f in "$n.cdgp" "$n.cdpl" "$n.cdg"; do
        "$cdnn" inspect --json "$f" >"$tmp/inspect.json" || fail "inspect --json $f"
        /usr/bin/python3 -m json.tool "$tmp/inspect.json" >/dev/null ||
            fail "inspect --json $f is not JSON: $(cat "$tmp/inspect.json")"
    done
    "$cdnn" inspect --json "$n.cdgp" >"$tmp/inspect.json"
    /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is True and d["kind"] == "graph+plan" and d["container"] is True, d
assert d["plan"]["verified"] is True and d["plan"]["digest"] == "SHA-256", d
assert d["graph"]["content_key"] == d["plan"]["graph_content_key"], d
assert any(t["role"] == "out" for t in d["plan"]["tensors"]), d
' "$tmp/inspect.json" || fail "inspect --json $n.cdgp: $(cat "$tmp/inspect.json")"

    # resave: a plan comes back byte for byte, as does a container's plan part.
    expect 0 "identical to the input: yes" "$cdnn" resave "$n.cdpl" -o "$n.re.cdpl"
    cmp "$n.cdpl" "$n.re.cdpl" || fail "resaved plan differs from $n.cdpl"
    expect 0 "identical to the input: yes" "$cdnn" resave "$n.cdgp" -o "$n.re.cdgp"
    cmp "$n.cdgp" "$n.re.cdgp" || fail "resaved container differs"
    expect 0 "\(plan\)" "$cdnn" resave "$n.cdgp" -o "$n.part.cdpl" --form plan
    expect 0 "identical to the input: yes" "$cdnn" resave "$n.part.cdpl" -o "$n.part2.cdpl"
    cmp "$n.part.cdpl" "$n.part2.cdpl" || fail "container's plan part resaves differently"
    expect 1 "no graph to save" "$cdnn" resave "$n.cdpl" -o "$n.x" --form graph
    [ ! -e "$n.x" ] || fail "a failed resave left $n.x"

    # run: timed, checked against cpu:reference; a bare plan cannot check.
    expect 0 "every output matches cpu:reference" "$cdnn" run "$n.cdgp" --check
    expect 0 "median [0-9.]+ ms" "$cdnn" run "$n.cdpl" --iterations 3
    expect 0 "holds no plan" "$cdnn" run "$n.cdg" --check
    expect 0 "matches" "$cdnn" run "$n.re.cdgp" --check --iterations 2
    expect 1 "^cdnn: run: a bare plan carries no graph to check against; save it as graph\+plan$" \
        "$cdnn" run "$n.cdpl" --check
done

echo "== damaged files"
plan=$n.cdpl
size=$(wc -c <"$plan")
head -c $((size / 2)) "$plan" >"$tmp/short.cdpl"
head -c $((size / 2)) "$n.cdgp" >"$tmp/short.cdgp"
cp "$plan" "$tmp/flip.cdpl"
printf '\377' | dd of="$tmp/flip.cdpl" bs=1 seek=$((size * 3 / 4)) conv=notrunc 2>/dev/null
cmp -s "$plan" "$tmp/flip.cdpl" && fail "the byte flip changed nothing"
printf 'not a cdnn file at all' >"$tmp/junk"
: >"$tmp/empty"
for f in short.cdpl short.cdgp flip.cdpl junk empty; do
    expect 1 "^cdnn: inspect: CDNN_STATUS_CORRUPT_DATA: ." "$cdnn" inspect "$tmp/$f"
    expect 1 "^cdnn: inspect: CDNN_STATUS_CORRUPT_DATA: ." "$cdnn" inspect --json "$tmp/$f"
    expect 1 "^cdnn: run: CDNN_STATUS_CORRUPT_DATA: ." "$cdnn" run "$tmp/$f"
    expect 1 "^cdnn: resave: CDNN_STATUS_CORRUPT_DATA: ." "$cdnn" resave "$tmp/$f" -o "$tmp/out"
done
expect 1 "cannot open '$tmp/missing'" "$cdnn" inspect "$tmp/missing"

echo "== inspect --json says on stdout why it failed"
# failed_json FILE STATUS: `inspect --json FILE` exits 1 and prints one JSON
# object {"ok": false, "file", "status", "error"} on stdout.
failed_json() {
    set +e
    "$cdnn" inspect --json "$1" >"$tmp/failed.json" 2>/dev/null
    rc=$?
    set -e
    [ "$rc" -eq 1 ] || fail "inspect --json $1 exited $rc, not 1"
    /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is False and d["status"] == sys.argv[3], d
assert d["file"] == sys.argv[2] and d["error"], d
' "$tmp/failed.json" "$1" "$2" || fail "inspect --json $1 printed: $(cat "$tmp/failed.json")"
}
for f in short.cdpl short.cdgp flip.cdpl junk empty; do
    failed_json "$tmp/$f" CORRUPT_DATA
done
failed_json "$tmp/missing" IO_ERROR
# A name JSON must escape, in the message too.
weird="$tmp/we\"ird\\name	tab"
printf 'x' >"$weird"
failed_json "$weird" CORRUPT_DATA
failed_json "$json" BAD_PARAM # graph JSON is no saved artifact
expect 1 "SHA-256" "$cdnn" run "$tmp/flip.cdpl"
expect 1 "^cdnn: build: '$plan' holds a plan only, no graph to build from; build from" \
    "$cdnn" build "$plan" -o "$tmp/out"
[ ! -e "$tmp/out" ] || fail "a failed command left $tmp/out"

echo "== a container holding a graph only says so"
# cdnn writes containers with both parts, but the format lets a container
# hold a graph alone; one is made here as cdnn would lay it out
# (docs/FORMATS.md, container format 1.1).
if /usr/bin/python3 -c 'import flatbuffers' 2>/dev/null; then
    "$cdnn" build "$json" -o "$tmp/part.cdg" --form graph >/dev/null
    /usr/bin/python3 - "$tmp/part.cdg" "$tmp/graph_only.cdgp" <<'PYTHON'
import hashlib, struct, sys
import flatbuffers
graph = open(sys.argv[1], "rb").read()
major, minor = 1, 1
sha = hashlib.sha256(b"CDGP" + struct.pack("<HHQ", major, minor, len(graph)) + graph +
                     struct.pack("<Q", 0)).digest()
b = flatbuffers.Builder(1024)
def byte_vector(data):
    b.StartVector(1, len(data), 8)  # cdnn aligns [ubyte] elements to 8
    b.head = b.Head() - len(data)
    b.Bytes[b.head:b.head + len(data)] = data
    return b.EndVector()
sha_ref = byte_vector(sha)
graph_sha_ref = byte_vector(hashlib.sha256(graph).digest())
graph_ref = byte_vector(graph)
b.StartObject(6)
b.PrependUint16Slot(0, major, 0)
b.PrependUint16Slot(1, minor, 0)
b.PrependUOffsetTRelativeSlot(2, graph_ref, 0)
b.PrependUOffsetTRelativeSlot(4, graph_sha_ref, 0)
b.PrependUOffsetTRelativeSlot(5, sha_ref, 0)
b.Finish(b.EndObject(), file_identifier=b"CDGP")
open(sys.argv[2], "wb").write(b.Output())
PYTHON
    expect 0 "^kind +container holding a graph only \(no plan\)$" \
        "$cdnn" inspect "$tmp/graph_only.cdgp"
    "$cdnn" inspect --json "$tmp/graph_only.cdgp" >"$tmp/inspect.json"
    /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] is True and d["kind"] == "graph" and d["container"] is True, d
assert "plan" not in d, d
' "$tmp/inspect.json" || fail "inspect --json of a graph-only container: $(cat "$tmp/inspect.json")"
    expect 0 "^kind +graph$" "$cdnn" inspect "$tmp/part.cdg"
else
    echo "skipped: no python3-flatbuffers to write a graph-only container"
fi

echo "== messages speak the CLI's language, not the library's calls"
# no_api_names CMD...: whatever CMD prints names no cdnn_* function.
no_api_names() {
    set +e
    said=$("$@" 2>&1)
    set -e
    if echo "$said" | grep -q "cdnn_[a-z]"; then
        fail "$* names a library call: $said"
    fi
}
no_api_names "$cdnn" build "$plan" -o "$tmp/out"
no_api_names "$cdnn" resave "$plan" -o "$tmp/out" --form graph
no_api_names "$cdnn" resave "$plan" -o "$tmp/out" --form graph+plan
no_api_names "$cdnn" resave "$n.cdg" -o "$tmp/out" --form plan
no_api_names "$cdnn" resave "$json" -o "$tmp/out" --form graph+plan
no_api_names "$cdnn" run "$plan" --check
no_api_names "$cdnn" inspect "$json"
for cmd in engines build inspect resave run demo version; do
    no_api_names "$cdnn" "$cmd" --help
done
expect 1 "holds a plan only, so there is no graph to save as --form graph\+plan" \
    "$cdnn" resave "$plan" -o "$tmp/out" --form graph+plan
expect 1 "holds a graph only, so there is no plan to save as --form plan; .cdnn build. builds" \
    "$cdnn" resave "$n.cdg" -o "$tmp/out" --form plan
[ ! -e "$tmp/out" ] || fail "a refused resave left $tmp/out"
# JSON starting with a UTF-8 byte order mark is still JSON.
printf '\357\273\277' | cat - "$json" >"$tmp/bom.json"
expect 0 "^built: " "$cdnn" build "$tmp/bom.json" -o "$tmp/bom.cdg" --form graph

echo "== failed builds write nothing"
mkdir "$tmp/outdir"
expect 1 "^cdnn: build: CDNN_STATUS_" "$cdnn" build "$json" -o "$tmp/outdir/a" \
    --engine no:such:engine
echo old >"$tmp/outdir/b"
expect 1 "^cdnn: build: CDNN_STATUS_" "$cdnn" build "$json" -o "$tmp/outdir/b" \
    --engine no:such:engine
[ "$(cat "$tmp/outdir/b")" = old ] || fail "a failed build changed an existing file"
expect 1 "cannot write" "$cdnn" build "$json" -o "$tmp/outdir"
[ "$(ls -A "$tmp/outdir")" = b ] || fail "failed builds left files: $(ls -A "$tmp/outdir")"
echo "== benchmarking (--benchmark, engines --knobs)"
# A private winner cache: never the user's ~/.cache/cdnn.
export CDNN_CACHE_DIR="$tmp/cache"
bench=$examples/conv_fwd.json
[ -f "$bench" ] || bench=$json
cache=$CDNN_CACHE_DIR/winners.v1
# First build: every candidate timed (conv_fwd has several), ranked, saved.
expect 0 "^ranking \([0-9]+ candidates, median of timed runs\):" \
    "$cdnn" build "$bench" -o "$tmp/bench.cdgp" --benchmark
echo "$out" | grep -Eq "^ +1\. .* [0-9.]+ us \([0-9]+ runs\)  <- chosen$" ||
    fail "--benchmark ranks no winner first: $out"
echo "$out" | grep -q "^built: engine " || fail "--benchmark saved nothing: $out"
echo "$out" | grep -q "^candidate " && fail "progress on a stderr that is no terminal: $out"
[ "$(wc -l <"$cache")" -eq 1 ] || fail "the first --benchmark left no single record in $cache"
expect 0 "every output matches cpu:reference" "$cdnn" run "$tmp/bench.cdgp" --check
# Second build: the record ranks every candidate, so nothing is timed.
expect 0 "chosen without timing" "$cdnn" build "$bench" -o "$tmp/bench2.cdpl" \
    --benchmark --form plan
[ "$(wc -l <"$cache")" -eq 1 ] || fail "a cache hit appended a record"
expect 0 "median" "$cdnn" run "$tmp/bench2.cdpl"
# With the cache off, benchmarking again and nothing recorded.
expect 0 "^ranking " env CDNN_DISABLE_CACHE=1 "$cdnn" build "$bench" -o "$tmp/bench3.cdpl" \
    --benchmark --form plan
[ "$(wc -l <"$cache")" -eq 1 ] || fail "CDNN_DISABLE_CACHE=1 still wrote $cache"
# CDNN_FORCE_BENCHMARKING=1 benchmarks as --benchmark does: the build
# chooses (executing once) and saves, instead of refusing an unchosen plan.
expect 0 "^ranking \([0-9]+ candidates" env CDNN_FORCE_BENCHMARKING=1 CDNN_DISABLE_CACHE=1 \
    "$cdnn" build "$bench" -o "$tmp/forced.cdpl" --form plan
echo "$out" | grep -q "^built: engine " || fail "CDNN_FORCE_BENCHMARKING=1 saved nothing: $out"
expect 0 "median" "$cdnn" run "$tmp/forced.cdpl"
expect 1 "CDNN_FORCE_BENCHMARKING=\"yes\" is not an accepted value; set it to exactly 1" \
    env CDNN_FORCE_BENCHMARKING=yes "$cdnn" build "$bench" -o "$tmp/refused.cdpl"
expect 1 "CDNN_FORCE_BENCHMARKING is set but empty; .* unset it" \
    env CDNN_FORCE_BENCHMARKING= "$cdnn" build "$bench" -o "$tmp/refused.cdpl"
[ ! -e "$tmp/refused.cdpl" ] || fail "a refused build wrote $tmp/refused.cdpl"
# The workspace a benchmarking build prints is the chosen candidate's, the
# one its saved plan records (not the most any candidate needs).
for name in pointwise matmul_bias_gelu_residual conv_bwd_filter conv_fwd; do
    [ -f "$examples/$name.json" ] || continue
    expect 0 "^built: " env CDNN_DISABLE_CACHE=1 "$cdnn" build "$examples/$name.json" \
        -o "$tmp/ws.cdpl" --form plan --benchmark
    printed=$(echo "$out" | sed -n 's/^built: .*, workspace \([0-9]*\) B;.*/\1/p')
    recorded=$("$cdnn" inspect --json "$tmp/ws.cdpl" | /usr/bin/python3 -c '
import json, sys
print(json.load(sys.stdin)["plan"]["workspace_bytes"])')
    [ -n "$printed" ] && [ "$printed" = "$recorded" ] ||
        fail "$name: build --benchmark printed workspace '$printed' B, the plan records $recorded B"
done
# On a terminal (script(1) gives it one), a line per candidate as timed.
if command -v script >/dev/null 2>&1; then
    out=$(CDNN_DISABLE_CACHE=1 script -qec \
        "'$cdnn' build '$bench' -o '$tmp/bench4.cdpl' --benchmark --form plan" /dev/null)
    echo "$out" | grep -Eq "^candidate 1 of [0-9]+: [a-z_]+:[a-z_]+.*  [0-9.]+ us" ||
        fail "no progress on a terminal: $out"
fi
expect 0 "^    cpu\.threads\.count  \[0, 1024\], default 0: " "$cdnn" engines --knobs
expect 0 "^    global\.benchmarking  \[0, 1\], default 0: " "$cdnn" engines --knobs
expect 0 "^    global\.workspace_limit  " "$cdnn" engines --knobs
"$cdnn" engines --knobs --json >"$tmp/knobs.json" || fail "engines --knobs --json"
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = [k["name"] for k in d["global_knobs"]]
assert names == ["global.benchmarking", "global.workspace_limit"], names
conv = [e for e in d["engines"] if e["name"] == "cpu:blas_conv"][0]
assert conv["knobs"][0]["name"] == "cpu.threads.count", conv
assert (conv["knobs"][0]["min"], conv["knobs"][0]["max"]) == (0, 1024), conv
' "$tmp/knobs.json" || fail "engines --knobs --json: $(cat "$tmp/knobs.json")"

echo "== usage"
for cmd in build inspect resave run; do
    expect 0 "^usage: cdnn $cmd" "$cdnn" "$cmd" --help
    "$cdnn" "$cmd" --help 2>/dev/null | grep -q "^usage: cdnn $cmd" || fail "$cmd --help on stdout"
    expect 2 "usage: cdnn $cmd" "$cdnn" "$cmd" --bogus
    expect 2 "usage: cdnn $cmd" "$cdnn" "$cmd"
done
expect 2 "-o OUT is required" "$cdnn" build "$json"
expect 2 "bad --form" "$cdnn" build "$json" -o "$tmp/x" --form planz
expect 2 "bad --engine" "$cdnn" build "$json" -o "$tmp/x" --engine 0xnothex
expect 2 "usage: cdnn build" "$cdnn" build "$json" -o
expect 2 "usage: cdnn inspect" "$cdnn" inspect "$plan" "$plan"
expect 2 "-o OUT is required" "$cdnn" resave "$plan"
expect 2 "--iterations wants" "$cdnn" run "$plan" --iterations 0
expect 2 "--iterations wants" "$cdnn" run "$plan" --iterations many
[ ! -e "$tmp/x" ] || fail "bad usage wrote $tmp/x"
# Devices run and build refuse say which and why: a malformed name, an
# ordinal this machine lacks (or no driver at all), a plan made elsewhere.
expect 1 "\"gpu0\" is not" "$cdnn" run "$plan" --device gpu0
expect 1 "cuda:99" "$cdnn" run "$plan" --device cuda:99
expect 1 "cuda:99" "$cdnn" build "$json" -o "$tmp/x" --device cuda:99 --benchmark
expect 1 "cuda:99" "$cdnn" demo --device cuda:99
[ ! -e "$tmp/x" ] || fail "a refused build wrote $tmp/x"
"$cdnn" --help | grep -q "^  resave " || fail "top-level usage lists resave"
echo "all save/load CLI checks passed"
