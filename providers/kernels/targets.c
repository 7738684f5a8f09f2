#include "targets.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/error.h>

/* B's CPUID decision, which the kernels' own build levels follow. */
#include <host_target.h>

/* "x86-64" is the baseline every x86-64 CPU runs. */
static const char *const host_level_names[] = {"x86-64", "x86-64-v2", "x86-64-v3",
                                               "x86-64-v4"};
#define FIRST_NAMED_LEVEL 1
#define LEVEL_COUNT (int)(sizeof host_level_names / sizeof *host_level_names)

int host_target_level(const char *target)
{
    for (int i = 0; i < LEVEL_COUNT; i++)
        if (strcmp(target, host_level_names[i]) == 0)
            return FIRST_NAMED_LEVEL + i;
    return 0;
}

static const char *host_level_name(int level)
{
    return level >= FIRST_NAMED_LEVEL ? host_level_names[level - FIRST_NAMED_LEVEL]
                                      : "not x86-64";
}

/* ---- the machine ------------------------------------------------------------------ */

static uint32_t machine_features;
static pthread_once_t machine_once = PTHREAD_ONCE_INIT;

/* CPUID's features, less those above the level KERNEL_HOST_LEVEL_ENV caps
 * them to. */
static void find_machine_features(void)
{
    machine_features = cdnn_host_cpu_features();
    const char *cap = secure_getenv(KERNEL_HOST_LEVEL_ENV);
    if (cap && host_target_level(cap))
        machine_features &= cdnn_host_target_needs(cap);
}

static uint32_t host_machine_features(void)
{
    pthread_once(&machine_once, find_machine_features);
    return machine_features;
}

/* B's header knows the levels from v2 up; the baseline needs nothing. */
static int host_runs(const char *target)
{
    return strcmp(target, "x86-64") == 0 ||
           cdnn_host_target_runs(target, host_machine_features());
}

int host_machine_level(void)
{
    int level = 0;
    for (int i = 0; i < LEVEL_COUNT; i++)
        if (host_runs(host_level_names[i]))
            level = FIRST_NAMED_LEVEL + i;
    return level;
}

/* ---- CUDA targets --------------------------------------------------------------- */

typedef struct cuda_target {
    int arch;          /* 10 * major + minor */
    int ptx;           /* compute_XY: PTX, JIT-compiled for newer devices */
    int arch_specific; /* sm_XYa: that architecture only */
} cuda_target_t;

/* "sm_80", "sm_90a", "compute_80" (arch at least 10); 0 when not one. */
static int parse_cuda_target(const char *target, cuda_target_t *t)
{
    const char *digits = NULL;
    memset(t, 0, sizeof *t);
    if (strncmp(target, "sm_", 3) == 0)
        digits = target + 3;
    else if (strncmp(target, "compute_", 8) == 0) {
        digits = target + 8;
        t->ptx = 1;
    } else
        return 0;
    char *end = NULL;
    if (*digits < '1' || *digits > '9')
        return 0;
    long arch = strtol(digits, &end, 10);
    t->arch_specific = !t->ptx && strcmp(end, "a") == 0;
    if (arch < 10 || arch > 10000 || (*end && !t->arch_specific))
        return 0;
    t->arch = (int)arch;
    return 1;
}

int target_kind(const char *target)
{
    cuda_target_t t;
    if (host_target_level(target))
        return KERNEL_KIND_HOST;
    return parse_cuda_target(target, &t) ? KERNEL_KIND_CUDA : 0;
}

/* Whether a device of arch runs t: a cubin within its major, from its
 * minor up (or exactly, arch-specific); PTX on its arch and newer. */
static int cuda_runs(const cuda_target_t *t, int arch)
{
    if (t->ptx)
        return arch >= t->arch;
    if (t->arch_specific)
        return arch == t->arch;
    return arch / 10 == t->arch / 10 && arch >= t->arch;
}

int target_preference(const char *target, const cdnn_device_view_t *device)
{
    cuda_target_t t;
    int level = host_target_level(target);
    if (level)
        return device->kind == CDNN_DEVICE_CPU && host_runs(target) ? level : 0;
    if (!parse_cuda_target(target, &t) || device->kind != CDNN_DEVICE_CUDA ||
        !cuda_runs(&t, device->arch))
        return 0;
    return t.ptx ? 1 : t.arch_specific ? 3 : 2;
}

static cdnn_status_t host_refusal(int level, const cdnn_device_view_t *device)
{
    if (device->kind != CDNN_DEVICE_CPU)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "its code is for the host (%s), and "
                        "the device is %s", host_level_name(level), device->name);
    return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "its code needs an %s CPU, and this "
                    "machine is %s (by CPUID%s); build the plan again here",
                    host_level_name(level), host_level_name(host_machine_level()),
                    secure_getenv(KERNEL_HOST_LEVEL_ENV) ? ", capped by "
                    KERNEL_HOST_LEVEL_ENV : "");
}

static cdnn_status_t cuda_refusal(const char *target, const cdnn_device_view_t *device)
{
    if (device->kind != CDNN_DEVICE_CUDA)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "its code is for CUDA devices (%s), "
                        "and the device is %s", target, device->name);
    return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "its code is for %s, which %s (sm_%d) "
                    "cannot run; build the plan again on this device", target,
                    device->name, device->arch);
}

cdnn_status_t target_check_runnable(const char *target, const cdnn_device_view_t *device)
{
    if (target_preference(target, device) > 0)
        return CDNN_STATUS_SUCCESS;
    int level = host_target_level(target);
    if (level)
        return host_refusal(level, device);
    if (target_kind(target) == KERNEL_KIND_CUDA)
        return cuda_refusal(target, device);
    return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "its code is for target \"%s\", which this "
                    "provider does not know; install a newer kernels provider", target);
}
