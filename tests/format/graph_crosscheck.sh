#!/bin/sh
# graph_crosscheck.sh -- cdnn's graph bytes and JSON against flatc's, an
# implementation of the FlatBuffers format no one here wrote.
#
#   graph_crosscheck.sh GRAPH_TOOL SCHEMA EXAMPLES_DIR WORK_DIR [FLATC]
#
# For every examples/*.json, and for a graph that uses every enum value:
#   (a) cdnn's bytes decode with flatc, which sees their SHA-256 (graph
#       format 1.1, field 8); flatc's JSON of them, read back by cdnn (which
#       ignores that key: the JSON form carries no digest), gives the same
#       bytes, digest included;
#   (b) flatc's bytes of the JSON, which says graph format 1.1 and has no
#       sha256, are refused by cdnn as damage (CORRUPT_DATA: a 1.1 graph
#       always carries its SHA-256); flatc's bytes of the JSON with a zeroed
#       "sha256" are refused too (the zeros are not the digest) until
#       graph_tool seal fills in the digest (graph_format_seal, changing
#       only those 32 bytes); then they load and equal cdnn's own reading
#       of the JSON;
#   (c) flatc's bytes of the JSON as graph format 1.0 (no minor, no
#       digest: what a writer of 1.0 gives) load unsealed and equal it too.
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
mkdir -p "$work/cdnn" "$work/flatc_json" "$work/flatc_bin" "$work/inputs" \
         "$work/zeroed_json" "$work/zeroed_bin" "$work/sealed" \
         "$work/v1_0_json" "$work/v1_0_bin"

cp "$examples"/*.json "$work/inputs/"
"$tool" every-enum "$work/inputs/every_enum.json"

failed=0
fail() {
    echo "FAIL: $*" >&2
    failed=1
}

# expect_status FILE STATUS [WORDS...]: how cdnn's graph loader takes FILE
expect_status() {
    file=$1 want=$2
    shift 2
    got=$("$tool" status "$file") || { fail "$file: graph_tool status failed"; return 1; }
    case $got in
    "$want"*) ;;
    *) fail "$(basename "$file"): expected $want, got: $got"; return 1 ;;
    esac
    for word in "$@"; do
        case $got in
        *"$word"*) ;;
        *) fail "$(basename "$file"): the message lacks \"$word\": $got"; return 1 ;;
        esac
    done
    return 0
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

    # flatc sees the digest of cdnn's bytes
    grep -q '"sha256"' "$work/flatc_json/$name.json" ||
        fail "$name: flatc's JSON of cdnn's bytes has no sha256"
    "$tool" bin2json "$ours" "$work/cdnn/$name.json" || { fail "$name"; return; }
    if grep -q '"sha256"' "$work/cdnn/$name.json"; then
        fail "$name: cdnn's JSON carries the binary form's digest"
    fi

    # (b) flatc's bytes of the JSON: unsealed they are damage ...
    "$flatc" -b -o "$work/flatc_bin" "$schema" "$in" ||
        { fail "$name: flatc rejects the JSON"; return; }
    expect_status "$work/flatc_bin/$name.cdg" CDNN_STATUS_CORRUPT_DATA \
        "the graph is damaged" "always carries a SHA-256" || return
    # ... and with zeros where the digest goes too, until sealed
    "$tool" zero-digest "$in" "$work/zeroed_json/$name.json" || { fail "$name"; return; }
    "$flatc" -b -o "$work/zeroed_bin" "$schema" "$work/zeroed_json/$name.json" ||
        { fail "$name: flatc rejects the JSON with a zeroed sha256"; return; }
    zeroed="$work/zeroed_bin/$name.cdg" sealed="$work/sealed/$name.cdg"
    expect_status "$zeroed" CDNN_STATUS_CORRUPT_DATA \
        "the graph is damaged" "SHA-256 does not match" || return
    "$tool" seal "$zeroed" "$sealed" || { fail "$name: cannot seal flatc's bytes"; return; }
    changed=$(cmp -l "$zeroed" "$sealed" | wc -l)
    [ "$changed" -ge 1 ] && [ "$changed" -le 32 ] ||
        fail "$name: sealing changed $changed bytes, not those of the digest"
    expect_status "$sealed" CDNN_STATUS_SUCCESS || return
    "$tool" bin2json "$sealed" "$work/cdnn/$name.from_flatc.json" ||
        { fail "$name: cdnn cannot load flatc's sealed bytes"; return; }
    cmp -s "$work/cdnn/$name.json" "$work/cdnn/$name.from_flatc.json" ||
        fail "$name: flatc's sealed bytes load as a different graph"

    # (c) flatc's bytes of the JSON as graph format 1.0 load as they are
    "$tool" as-1.0 "$in" "$work/v1_0_json/$name.json" || { fail "$name"; return; }
    "$flatc" -b -o "$work/v1_0_bin" "$schema" "$work/v1_0_json/$name.json" ||
        { fail "$name: flatc rejects the JSON as 1.0"; return; }
    "$tool" bin2json "$work/v1_0_bin/$name.cdg" "$work/cdnn/$name.from_flatc_1_0.json" ||
        { fail "$name: cdnn cannot load flatc's bytes of format 1.0"; return; }
    cmp -s "$work/cdnn/$name.json" "$work/cdnn/$name.from_flatc_1_0.json" ||
        fail "$name: flatc's 1.0 bytes load as a different graph"
    echo "ok: $name"
}

for f in "$work"/inputs/*.json; do
    check "$f"
done
exit $failed
