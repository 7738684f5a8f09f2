#!/bin/sh
# Re-sealed forgeries of plans on the engines of the graph format 1.2 and
# 1.3 ops: cpu:index (argmax, top-k, gather, gather-elements), cpu:pool
# (pooling forward and backward), cpu:resize, cpu:norm_train (batch-norm
# training, running statistics, norm backwards), cpu:sdpa_bwd, cpu:softmax
# and cpu:copy (slice, pad, concat, reshape, transpose), and cpu:reference
# on the same graphs.  Every attribute and shape those engines index with
# is edited and the tensor table and content key re-derived, as a forger
# who wants the edit to load would; each must be refused, with a status and
# a message naming the field, before anything runs, and whatever loads is
# run with buffers of exactly the declared sizes (ASan and UBSan in a
# sanitizer build).  test_forgeries.sh does the same for the older engines.
#
# usage: test_forgeries_ops.sh CDNN_CLI RUN_FORGERIES BUILD_WITH_KNOBS SOURCE_DIR
#                              [WORK_DIR]
#
#   1. base plans: tests/security/graphs/*.json and the 1.3 examples, each
#      on the engine the build chooses, some pinned to cpu:reference, some
#      chosen by benchmarking (global.benchmarking=1), some built with the
#      threads knob (build_with_knobs), a few as graph+plan containers, and
#      the kernels provider's softmax, pointwise and reduction host engines
#      (payloads with a code object: test_forgeries.sh's kernel.* edits);
#   2. forge.py forges from them (engine, knobs, the tensor table, the
#      payload graph's attributes, shapes, strides and types);
#   3. run_forgeries loads and runs each one in normal mode, and the engine,
#      knob and control forgeries in strict mode too;
#   4. a consistent forgery refused only because the workspace it records is
#      not what its payload needs is forged again with that workspace, as
#      the refusal tells a forger, and loaded and run too;
#   5. the `cdnn` command on every forgery that must be refused: `cdnn run`
#      exits 1 naming the status, `cdnn inspect` exits 0 or 1; neither
#      crashes.
set -u
if [ $# -lt 4 ]; then
  echo "usage: $0 CDNN_CLI RUN_FORGERIES BUILD_WITH_KNOBS SOURCE_DIR [WORK_DIR]" >&2
  exit 2
fi
cli=$1
runner=$2
knobbed=$3
src=$4
graphs=$src/tests/security/graphs
# shellcheck source=tests/security/forgeries_lib.sh
. "$(dirname "$0")/forgeries_lib.sh"
forgeries_init forgeries-ops ${5:+"$5" base forged reforged}

graph_path() {
  if [ -f "$graphs/$1.json" ]; then echo "$graphs/$1.json"; else echo "$src/examples/$1.json"; fi
}

# name  graph  how (default: the build's choice; an engine name: pinned;
# bench: --benchmark; container: graph+plan as well)
while read -r name graph how; do
  [ -n "$name" ] || continue
  g=$(graph_path "$graph")
  case $how in
    default) "$cli" build "$g" --form plan -o "$work/base/$name.cdp" >/dev/null ;;
    bench) "$cli" build "$g" --form plan --benchmark -o "$work/base/$name.cdp" >/dev/null 2>&1 ;;
    container) "$cli" build "$g" --form graph+plan -o "$work/base/$name.cdgp" >/dev/null ;;
    *) "$cli" build "$g" --form plan --engine "$how" -o "$work/base/$name.cdp" >/dev/null ;;
  esac || fail "cdnn build $g ($how)"
done <<'LIST'
argmax argmax default
gather gather default
gather_elements gather_elements default
topk_i32 topk_i32 default
topk topk default
maxpool_indices maxpool_indices default
maxpool_nhwc maxpool_nhwc default
avgpool avgpool default
maxpool_bwd maxpool_bwd default
maxpool_bwd_indices maxpool_bwd_indices default
resize_nearest resize_nearest default
resize_linear resize_linear default
batchnorm_running batchnorm_running default
batchnorm_bwd batchnorm_bwd default
batchnorm_train batchnorm_train default
layernorm_bwd layernorm_bwd default
rmsnorm_bwd rmsnorm_bwd default
sdpa_bwd sdpa_bwd default
reference__topk_i32 topk_i32 cpu:reference
reference__gather gather cpu:reference
reference__maxpool_indices maxpool_indices cpu:reference
reference__resize_linear resize_linear cpu:reference
reference__layernorm_bwd layernorm_bwd cpu:reference
reference__sdpa_bwd sdpa_bwd cpu:reference
bench__gather_elements gather_elements bench
bench__avgpool avgpool bench
bench__rmsnorm_bwd rmsnorm_bwd bench
container__topk_i32 topk_i32 container
slice slice default
pad pad default
concat concat default
reshape reshape default
transpose transpose default
log_softmax log_softmax cpu:softmax
softmax softmax cpu:softmax
reference__slice slice cpu:reference
container__pad pad container
container__maxpool_bwd maxpool_bwd container
container__resize_nearest resize_nearest container
LIST

# Plans built with engine knobs, which the command does not set.
while read -r name graph engine knobs; do
  [ -n "$name" ] || continue
  # shellcheck disable=SC2086 # knobs: NAME=VALUE words
  "$knobbed" "$(graph_path "$graph")" "$engine" "$work/base/$name.cdp" $knobs ||
    fail "build_with_knobs $graph $engine $knobs"
done <<'LIST'
threads1__topk_i32 topk_i32 cpu:index cpu.threads.count=1
threads2__maxpool_nhwc maxpool_nhwc cpu:pool cpu.threads.count=2
threads1__resize_linear resize_linear cpu:resize cpu.threads.count=1
threads2__batchnorm_train batchnorm_train cpu:norm_train cpu.threads.count=2
threads1__sdpa_bwd sdpa_bwd cpu:sdpa_bwd cpu.threads.count=1
LIST

# Plans that carry code: the kernels provider's host engines of the ops
# test_forgeries.sh does not build (softmax, pointwise, reduction), whose
# payloads get its kernel.* forgeries.
host_pack kernels:softmax_host softmax pointwise reduce
while read -r name graph engine; do
  build_forms "$name" "$(graph_path "$graph")" "$engine" plan
done <<'LIST'
khost__softmax softmax kernels:softmax_host
khost__log_softmax log_softmax kernels:softmax_host
khost__add_mul add_mul kernels:pointwise_host
khost__reduce_rows reduce_rows kernels:reduce_host
LIST

forge forged

status=0
echo "== normal mode"
env -u CDNN_TRUSTED_CODE "$runner" "$work/forged" >"$work/normal.log" 2>&1 || status=1
cat "$work/normal.log"
# CPU payloads carry no code object: strict mode decodes the payload and
# vouches, then checks as normal mode does, so the categories that touch
# what it decodes (engine, knobs) and the controls are enough there; the
# kernel plans, whose code strict mode compares with the packs, all.
echo "== strict mode (engine, knob and control forgeries; every kernel plan's)"
CDNN_TRUSTED_CODE=pack "$runner" "$work/forged" --only .engine. --only .knob \
  --only .control. --only khost__ || status=1

# Round 2: what a forger does with "its payload needs N" workspace bytes.
$python - "$work/normal.log" "$work/workspaces.json" <<'EOF' || fail "collecting workspaces"
import json, re, sys
needs = {}
for line in open(sys.argv[1]):
    m = re.match(r"PASS (\S+) \[plan_load\] \S+: refused: CORRUPT_DATA: the plan is "
                 r"inconsistent: it records \d+ workspace bytes but its payload needs "
                 r"(\d+)", line)
    if m:
        needs[m.group(1)] = int(m.group(2))
json.dump(needs, open(sys.argv[2], "w"))
print("# %d consistent forgeries refused only for their workspace: forged again "
      "with it" % len(needs))
EOF
if [ "$(cat "$work/workspaces.json")" != "{}" ]; then
  forge reforged --workspace "$work/workspaces.json"
  echo "== workspace re-forged, normal mode"
  env -u CDNN_TRUSTED_CODE "$runner" "$work/reforged" || status=1
fi

# The command on what must be refused: an error and exit status 1 from
# `cdnn run` (which loads), 0 or 1 from `cdnn inspect` (which does not
# restore), never a signal or a sanitizer's exit.
echo "== cdnn run and inspect on every forgery that must be refused"
cli_fail=0
cli_count=0
$python - "$work/forged/manifest.json" >"$work/refused.txt" <<'EOF' || fail "reading the manifest"
import json, sys
for f in json.load(open(sys.argv[1]))["forgeries"]:
    if f["kind"] == "plan" and f["expect"] not in ("LOADS", "LOADS_OR_REFUSED", "REFUSED"):
        print(f["file"], f["expect"])
EOF
while read -r file expect; do
  cli_count=$((cli_count + 1))
  "$cli" run "$work/forged/$file" >/dev/null 2>"$work/cli.err"
  rc=$?
  if [ $rc -ne 1 ] || ! grep -q "CDNN_STATUS_$expect" "$work/cli.err"; then
    echo "FAIL cdnn run $file: exit $rc, expected 1 with CDNN_STATUS_$expect:"
    cat "$work/cli.err"
    cli_fail=1
  fi
  "$cli" inspect "$work/forged/$file" >/dev/null 2>"$work/cli.err"
  rc=$?
  if [ $rc -gt 1 ]; then
    echo "FAIL cdnn inspect $file: exit $rc"
    cat "$work/cli.err"
    cli_fail=1
  fi
done <"$work/refused.txt"
echo "# cdnn run and inspect on $cli_count refused forgeries: $([ $cli_fail -eq 0 ] && echo passed || echo FAILED)"
[ $cli_fail -eq 0 ] || status=1

forgeries_finish $status "every forgery of the 1.2/1.3 ops' engines, both modes, and the command on them"
