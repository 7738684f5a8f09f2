/*
 * targets.h -- which code object targets this machine's devices run.
 *
 * Host targets are the x86-64 micro-architecture levels (x86-64, the
 * baseline, then x86-64-v2, x86-64-v3, x86-64-v4): a machine runs every
 * level up to its own, which CPUID decides.  CUDA targets are cubins for one architecture (sm_80 runs
 * on 8.x devices of minor 0 and up; sm_90a on 9.0 only) and PTX
 * (compute_80 runs, JIT-compiled, on 8.0 and anything newer).
 */
#ifndef CDNN_KERNELS_TARGETS_H
#define CDNN_KERNELS_TARGETS_H

#include <cdnn/provider.h>

#include "payload.h"

/* The environment variable that caps the host level the provider believes
 * this machine runs ("x86-64-v3": as if it had no AVX-512), so that
 * lower-level kernels, and the refusal of higher ones, can be tested on
 * any machine.  It can only lower what CPUID says. */
#define KERNEL_HOST_LEVEL_ENV "CDNN_KERNEL_HOST_LEVEL"

/** The host level a target names (1 for the baseline, then 2, 3 or 4), or
 * 0 if it names none. */
int host_target_level(const char *target);

/** This machine's level by CPUID (0 when it is no x86-64), capped by
 * KERNEL_HOST_LEVEL_ENV; read once. */
int host_machine_level(void);

/** The family a target belongs to: KERNEL_KIND_HOST, KERNEL_KIND_CUDA, or
 * 0 for a name no family uses. */
int target_kind(const char *target);

/**
 * SUCCESS if device can run code built for target; else NOT_SUPPORTED
 * with a message that names both (a v4 kernel on a machine without
 * AVX-512, a cubin of another architecture, a cuda kernel on the CPU).
 */
cdnn_status_t target_check_runnable(const char *target, const cdnn_device_view_t *device);

/** How well target fits device, for choosing among candidates of one
 * kernel: higher is better, 0 when the device cannot run it (a cubin for
 * exactly the device's architecture beats PTX; a higher host level beats
 * a lower). */
int target_preference(const char *target, const cdnn_device_view_t *device);

#endif
