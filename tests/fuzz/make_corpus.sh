#!/bin/sh
# make_corpus.sh -- (re)make the fuzzers' seed corpus from real saved
# artifacts: every example graph built by the `cdnn` CLI, on its default
# engine and on cpu:reference, saved in every form; plan bodies and CPU
# payloads cut out of those plans; the test schema's buffer from cdnn's
# builder (fb_dump) and from Debian's flatc; for fuzz_plan_exec, the body
# and payload of the plan of each example, and of each small graph in
# plan_exec_graphs/ (the examples' ops at sizes cheap enough to execute
# thousands of times a second), on every CPU engine that builds it; for
# fuzz_kpack, packs `cdnn pack build` makes from tests/kpack/descriptors,
# each as it is (first byte 0) and to be re-sealed (first byte 1); for
# fuzz_kpack_descriptor, those descriptors.
#
#   tests/fuzz/make_corpus.sh CDNN_CLI [FB_DUMP] [OUT]
#
# CDNN_CLI is a built `cdnn` (build/bin/cdnn), FB_DUMP a built fb_dump
# (build/bin/fb_dump; optional), OUT the corpus root (default
# tests/fuzz/corpus beside this script).  Rewrites OUT/<target>/ whole.
set -eu

cli=${1:?usage: make_corpus.sh CDNN_CLI [FB_DUMP] [OUT]}
fb_dump=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${3:-$here/corpus}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# winner_cache/ holds hand-written seeds (records in the cache file format)
# and is left alone.
for t in graph graph_json container plan cpu_payload plan_exec flatbuf kpack kpack_descriptor; do
    rm -rf "${out:?}/$t"
    mkdir -p "$out/$t"
done

for json in "$root"/examples/*.json; do
    name=$(basename "$json" .json)
    cp "$json" "$out/graph_json/$name.json"
    "$cli" build "$json" -o "$out/graph/$name.cdg" --form graph >/dev/null
    for engine in default cpu:reference; do
        tag=$(echo "$engine" | tr ':' '_')
        set -- --form plan
        [ "$engine" = default ] || set -- "$@" --engine "$engine"
        "$cli" build "$json" -o "$out/plan/$name.$tag.cdp" "$@" >/dev/null
        shift 2
        "$cli" build "$json" -o "$out/container/$name.$tag.cdc" \
            --form graph+plan "$@" >/dev/null
    done
done
for json in "$root"/examples/*.json "$here"/plan_exec_graphs/*.json; do
    name=$(basename "$json" .json)
    case $json in "$here"/*) name=small_$name ;; esac
    for engine in $("$cli" engines | awk '$1 ~ /^0x/ { print $2 }'); do
        tag=$(echo "$engine" | tr ':' '_')
        "$cli" build "$json" -o "$tmp/$name.$tag.cdp" --form plan \
            --engine "$engine" >/dev/null 2>&1 || true
    done
done
cp "$out"/container/*.cdc "$out/graph/"
cp "$out"/container/*.cdc "$out/plan/"

# Bodies and payloads: field 2 (body) of the Plan table, field 10
# (payload) of the PlanBody table (schema/plan.fbs).
python3 - "$out" "$tmp" <<'PY'
import glob, os, struct, sys

def vector_field(buf, field):
    root = struct.unpack_from('<I', buf, 0)[0]
    vt = root - struct.unpack_from('<i', buf, root)[0]
    vt_size = struct.unpack_from('<H', buf, vt)[0]
    slot = 4 + 2 * field
    if slot + 2 > vt_size:
        return None
    off = struct.unpack_from('<H', buf, vt + slot)[0]
    if not off:
        return None
    at = root + off
    vec = at + struct.unpack_from('<I', buf, at)[0]
    n = struct.unpack_from('<I', buf, vec)[0]
    return buf[vec + 4:vec + 4 + n]

out = sys.argv[1]
for path in sorted(glob.glob(os.path.join(out, 'plan', '*.cdp'))):
    name = os.path.basename(path)[:-4]
    body = vector_field(open(path, 'rb').read(), 2)
    payload = vector_field(body, 10)
    open(os.path.join(out, 'plan', name + '.body'), 'wb').write(body)
    open(os.path.join(out, 'cpu_payload', name + '.payload'), 'wb').write(payload)

# fuzz_plan_exec: a mode byte, then a body (0), a payload (1), or a
# perturbation (field 2 = span_bytes, tensor 0, an all-zero mask) and a
# payload (2).
for path in sorted(glob.glob(os.path.join(sys.argv[2], '*.cdp'))):
    name = os.path.basename(path)[:-4]
    body = vector_field(open(path, 'rb').read(), 2)
    payload = vector_field(body, 10)
    for suffix, seed in (('body', b'\0' + body), ('payload', b'\1' + payload),
                         ('perturbed', b'\2\2\0' + bytes(8) + payload)):
        open(os.path.join(out, 'plan_exec', name + '.' + suffix), 'wb').write(seed)
PY

# Identical seeds (an example whose default engine is cpu:reference) once.
for t in graph container plan cpu_payload plan_exec; do
    (cd "$out/$t" && md5sum * | sort | awk 'seen[$1]++ { print $2 }' | xargs -r rm -f)
done

if [ -n "$fb_dump" ]; then
    "$fb_dump" build "$out/flatbuf/canonical.cdts"
fi
if command -v flatc >/dev/null 2>&1; then
    flatc -b -o "$tmp" "$root/tests/format/test.fbs" "$root/tests/format/test_data.json"
    cp "$tmp"/test_data.bin "$out/flatbuf/flatc.cdts" 2>/dev/null ||
        cp "$tmp"/*.* "$out/flatbuf/" 
fi

descriptors="$root/tests/kpack/descriptors"
"$cli" pack build "$descriptors/matmul.json" "$descriptors/softmax.json" \
    -o "$tmp/host.kpack" --version 0.0.0 >/dev/null
"$cli" pack build "$descriptors/cuda_matmul.json" -o "$tmp/cuda.kpack" --version 0.0.0 \
    >/dev/null
for pack in host cuda; do
    { printf '\0'; cat "$tmp/$pack.kpack"; } >"$out/kpack/$pack.raw"
    { printf '\1'; cat "$tmp/$pack.kpack"; } >"$out/kpack/$pack.resealed"
done
cp "$descriptors"/*.json "$out/kpack_descriptor/"

du -sh "$out"
# winner_cache/ holds hand-written seeds (records in the cache file format)
# and is left alone.
for t in graph graph_json container plan cpu_payload plan_exec flatbuf kpack kpack_descriptor; do
    echo "$t: $(ls "$out/$t" | wc -l) seeds"
done
