/*
 * host_target.h -- can this CPU run a host code object built for an ISA
 * level?  Decided from CPUID (and XGETBV: the OS must save the wide
 * registers too), header-only, for the provider's load check ("the device
 * can run the target") and the tests.
 *
 *     uint32_t have = cdnn_host_cpu_features();
 *     if (!cdnn_host_target_runs("x86-64-v4", have)) refuse, do not load;
 *
 * The decision takes the feature set as an argument, so that tests can ask
 * it about CPUs they do not run on.
 */
#ifndef CDNN_HOST_TARGET_H
#define CDNN_HOST_TARGET_H

#include <cpuid.h>
#include <stdint.h>
#include <string.h>

/* CPU features the levels need (the psABI's x86-64-v2/v3/v4 lists). */
enum {
    CDNN_HOST_CPU_V2_BASE = 1u << 0, /* cx16 lahf popcnt sse3 ssse3 sse4.1 sse4.2 */
    CDNN_HOST_CPU_AVX = 1u << 1,     /* and the OS saves YMM state */
    CDNN_HOST_CPU_AVX2 = 1u << 2,
    CDNN_HOST_CPU_FMA = 1u << 3,
    CDNN_HOST_CPU_F16C = 1u << 4,
    CDNN_HOST_CPU_BMI = 1u << 5,     /* bmi1 bmi2 lzcnt movbe */
    CDNN_HOST_CPU_AVX512 = 1u << 6   /* f bw cd dq vl, and the OS saves ZMM state */
};

#define CDNN_HOST_CPU_V2 CDNN_HOST_CPU_V2_BASE
#define CDNN_HOST_CPU_V3                                                      \
    (CDNN_HOST_CPU_V2 | CDNN_HOST_CPU_AVX | CDNN_HOST_CPU_AVX2 |              \
     CDNN_HOST_CPU_FMA | CDNN_HOST_CPU_F16C | CDNN_HOST_CPU_BMI)
#define CDNN_HOST_CPU_V4 (CDNN_HOST_CPU_V3 | CDNN_HOST_CPU_AVX512)

static inline int cdnn_host_all_bits(uint32_t word, uint32_t bits)
{
    return (word & bits) == bits;
}

/* The state components XCR0 says the OS saves on a context switch. */
static inline uint64_t cdnn_host_xcr0(uint32_t ecx1)
{
    if (!(ecx1 & bit_OSXSAVE))
        return 0;
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

/* The features of the CPU this runs on (CDNN_HOST_CPU_* bits). */
static inline uint32_t cdnn_host_cpu_features(void)
{
    uint32_t a, b1, c1, d1, b7 = 0, c7 = 0, d7 = 0, c81 = 0, d81 = 0;
    if (!__get_cpuid(1, &a, &b1, &c1, &d1))
        return 0;
    __get_cpuid_count(7, 0, &a, &b7, &c7, &d7);
    __get_cpuid(0x80000001u, &a, &b1, &c81, &d81);
    uint64_t xcr0 = cdnn_host_xcr0(c1);
    int ymm_saved = (xcr0 & 0x6) == 0x6;           /* SSE, AVX state */
    int zmm_saved = ymm_saved && (xcr0 & 0xe0) == 0xe0; /* opmask, ZMM */
    uint32_t f = 0;
    if (cdnn_host_all_bits(c1, bit_SSE3 | bit_SSSE3 | bit_SSE4_1 |
                                   bit_SSE4_2 | bit_POPCNT | bit_CMPXCHG16B) &&
        (c81 & bit_LAHF_LM))
        f |= CDNN_HOST_CPU_V2_BASE;
    if ((c1 & bit_AVX) && ymm_saved)
        f |= CDNN_HOST_CPU_AVX;
    if ((b7 & bit_AVX2) && ymm_saved)
        f |= CDNN_HOST_CPU_AVX2;
    if ((c1 & bit_FMA) && ymm_saved)
        f |= CDNN_HOST_CPU_FMA;
    if ((c1 & bit_F16C) && ymm_saved)
        f |= CDNN_HOST_CPU_F16C;
    if (cdnn_host_all_bits(b7, bit_BMI | bit_BMI2) && (c1 & bit_MOVBE) &&
        (c81 & bit_LZCNT))
        f |= CDNN_HOST_CPU_BMI;
    if (cdnn_host_all_bits(b7, bit_AVX512F | bit_AVX512BW | bit_AVX512CD |
                                   bit_AVX512DQ | bit_AVX512VL) &&
        zmm_saved)
        f |= CDNN_HOST_CPU_AVX512;
    return f;
}

/* The features a target needs, or 0 for a target that is not a host ISA
 * level this header knows. */
static inline uint32_t cdnn_host_target_needs(const char *target)
{
    if (!strcmp(target, "x86-64-v2"))
        return CDNN_HOST_CPU_V2;
    if (!strcmp(target, "x86-64-v3"))
        return CDNN_HOST_CPU_V3;
    if (!strcmp(target, "x86-64-v4"))
        return CDNN_HOST_CPU_V4;
    return 0;
}

/* 1 when a CPU with `features` can run code built for `target`. */
static inline int cdnn_host_target_runs(const char *target, uint32_t features)
{
    uint32_t needs = cdnn_host_target_needs(target);
    return needs != 0 && cdnn_host_all_bits(features, needs);
}

#endif /* CDNN_HOST_TARGET_H */
