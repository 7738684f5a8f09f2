# shellcheck shell=sh
# forgeries_lib.sh -- what the forgery drivers (test_forgeries.sh,
# test_forgeries_ops.sh) share; sourced, after they set cli (the cdnn
# command) and src (the source tree).

python=/usr/bin/python3

# forgeries_init NAME [WORK_DIR SUBDIR...]: skip (exit 77) without
# python3-flatbuffers; work is WORK_DIR, its SUBDIRs removed first, else a
# new /tmp/cdnn-NAME.XXXXXX that forgeries_finish removes when everything
# passed; work/base made; the user's winner cache neither read nor written.
forgeries_init() {
  name=$1
  shift
  if ! $python -c 'import flatbuffers' 2>/dev/null; then
    echo "SKIP: $python cannot import flatbuffers (apt-get install python3-flatbuffers)"
    exit 77
  fi
  if [ $# -ge 1 ]; then
    work=$1
    shift
    temporary=0
    for sub in "$@"; do
      rm -rf "${work:?}/$sub"
    done
  else
    work=$(mktemp -d "/tmp/cdnn-$name.XXXXXX") || exit 1
    temporary=1
  fi
  mkdir -p "$work/base" || exit 1
  CDNN_DISABLE_CACHE=1
  export CDNN_DISABLE_CACHE
  unset CDNN_FORCE_BENCHMARKING
}

fail() {
  echo "FAIL: $*"
  echo "artifacts kept in $work"
  exit 1
}

# build_forms NAME GRAPH_JSON ENGINE FORM...: the graph built on the engine
# as work/base/NAME.cdp (form plan) and .cdgp (form graph+plan).
build_forms() {
  b_name=$1 b_graph=$2 b_engine=$3
  shift 3
  for form in "$@"; do
    ext=cdp
    [ "$form" = plan ] || ext=cdgp
    "$cli" build "$b_graph" --engine "$b_engine" --form "$form" \
      -o "$work/base/$b_name.$ext" >/dev/null ||
      fail "cdnn build $b_graph --engine $b_engine --form $form"
  done
}

# host_pack ENGINE DESCRIPTOR...: plans that carry code come from the
# kernels provider's host engines.  A sanitizer build makes no kernel pack
# of its own (kernels/packs.cmake), so where ENGINE is missing one is made
# here from the build's host objects (kernels/descriptors/host/
# DESCRIPTOR.json each), which the sanitized process that loads them
# provides the runtime for, and put on the kernel path.
host_pack() {
  h_engine=$1
  shift
  "$cli" engines | grep -q "$h_engine" && return 0
  objects=$(cd "$(dirname "$cli")/.." && pwd)/kernels/host
  mkdir -p "$work/kernels"
  descriptors=""
  for d in "$@"; do
    descriptors="$descriptors $src/kernels/descriptors/host/$d.json"
  done
  # shellcheck disable=SC2086 # descriptors: paths without spaces
  "$cli" pack build $descriptors --objects "$objects" -o "$work/kernels/host.kpack" \
    >/dev/null || fail "no $h_engine engine, and no pack could be made from $objects"
  CDNN_KERNEL_PATH=$work/kernels
  export CDNN_KERNEL_PATH
}

# forge OUT [--workspace MAP]: forge.py from work/base into work/OUT, with
# the engines' knobs from `cdnn engines`.
forge() {
  "$cli" engines --json --knobs >"$work/engines.json" || fail "cdnn engines --json --knobs"
  f_out=$1
  shift
  $python "$src/tests/security/forge.py" "$work/base" "$work/$f_out" "$work/engines.json" \
    "$@" || fail "forge.py $*"
}

# forgeries_finish STATUS MESSAGE: fail, or remove a temporary work
# directory and pass.
forgeries_finish() {
  if [ "$1" -ne 0 ]; then
    fail "forgeries were not handled as expected (the FAIL lines above)"
  fi
  [ "$temporary" -eq 1 ] && rm -rf "$work"
  echo "PASS: $2"
  exit 0
}
