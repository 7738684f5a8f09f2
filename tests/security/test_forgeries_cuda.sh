#!/bin/sh
# Re-sealed forgeries of the kernels provider's cuda plans, loaded and run
# on cuda:0 (cuda_forgeries.c says which and what each must do).  Without a
# device a cuda plan is refused before its payload is read, so this runs
# where scripts/gpu-check.sh runs; exit 77 (skip) without a device.
#
# usage: test_forgeries_cuda.sh CUDA_FORGERIES KERNEL_DIR [--only LABEL]...
#
# MEMCHECK=1: under compute-sanitizer's memcheck, where installed (every
# forgery that loads runs its kernel: an access outside the buffers the
# plan declares is a report, and a failure).
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 CUDA_FORGERIES KERNEL_DIR [--only LABEL]..." >&2
  exit 2
fi
forgeries=$1
shift
# Building must neither read nor write the user's winner cache.
CDNN_DISABLE_CACHE=1
export CDNN_DISABLE_CACHE
unset CDNN_FORCE_BENCHMARKING CDNN_TRUSTED_CODE
if [ "${MEMCHECK:-0}" = 1 ]; then
  sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
  if [ -n "$sanitizer" ]; then
    exec "$sanitizer" --tool memcheck --error-exitcode 1 --target-processes all \
      "$forgeries" "$@"
  fi
  echo "# MEMCHECK=1, but no compute-sanitizer here: run without it"
fi
exec "$forgeries" "$@"
