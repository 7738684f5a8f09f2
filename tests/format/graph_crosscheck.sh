#!/bin/sh
# graph_crosscheck.sh -- cdnn's graph bytes and JSON against flatc's, an
# implementation of the FlatBuffers format no one here wrote.
#
#   graph_crosscheck.sh GRAPH_TOOL SCHEMA EXAMPLES_DIR WORK_DIR [FLATC]
#
# For every examples/*.json, and for a graph that uses every enum value:
#   (a) cdnn's bytes decode with flatc, and flatc's JSON of them, read back
#       by cdnn, gives the same bytes;
#   (b) flatc's bytes of the JSON load in cdnn and equal cdnn's own reading
#       of the JSON.
# Exits 77 (skipped) when flatc is not installed.
set -eu

tool=$1 schema=$2 examples=$3 work=$4
flatc=${5:-}
[ -n "$flatc" ] || flatc=$(command -v flatc || true)
if [ -z "$flatc" ] || [ ! -x "$flatc" ]; then
    echo "flatc not found; skipping"
    exit 77
fi

rm -rf "$work"
mkdir -p "$work/cdnn" "$work/flatc_json" "$work/flatc_bin" "$work/inputs"

cp "$examples"/*.json "$work/inputs/"
"$tool" every-enum "$work/inputs/every_enum.json"

failed=0
fail() {
    echo "FAIL: $*" >&2
    failed=1
}

check() {
    in=$1
    name=$(basename "$in" .json)
    ours="$work/cdnn/$name.cdg"
    "$tool" json2bin "$in" "$ours" || { fail "$name: cdnn cannot read it"; return; }

    # (a) cdnn's bytes -> flatc JSON -> cdnn bytes
    "$flatc" --json --strict-json --raw-binary -o "$work/flatc_json" \
        "$schema" -- "$ours" || { fail "$name: flatc cannot decode cdnn's bytes"; return; }
    "$tool" json2bin "$work/flatc_json/$name.json" "$work/cdnn/$name.via_flatc.cdg" ||
        { fail "$name: cdnn cannot read flatc's JSON"; return; }
    cmp -s "$ours" "$work/cdnn/$name.via_flatc.cdg" ||
        fail "$name: cdnn bytes -> flatc JSON -> cdnn bytes differ"

    # (b) flatc's bytes of the JSON, loaded by cdnn, equal cdnn's reading
    "$flatc" -b -o "$work/flatc_bin" "$schema" "$in" ||
        { fail "$name: flatc rejects the JSON"; return; }
    "$tool" bin2json "$work/flatc_bin/$name.cdg" "$work/cdnn/$name.from_flatc.json" ||
        { fail "$name: cdnn cannot load flatc's bytes"; return; }
    "$tool" bin2json "$ours" "$work/cdnn/$name.json" || { fail "$name"; return; }
    cmp -s "$work/cdnn/$name.json" "$work/cdnn/$name.from_flatc.json" ||
        fail "$name: flatc's bytes load as a different graph"
    echo "ok: $name"
}

for f in "$work"/inputs/*.json; do
    check "$f"
done
exit $failed
