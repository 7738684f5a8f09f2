/*
 * hk_util.h -- what the host-kernel tests share: finding and loading the
 * code objects, exact-size strided buffers, random values, the tolerances
 * of each storage type, and a parallel_for of real threads.
 *
 * References are naive f64 loops in each test, independent of the kernels'
 * code: elements are read back with cdnn_sdk's conversions, not the
 * kernels' own.
 */
#ifndef HK_UTIL_H
#define HK_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "../../kernels/host/host_kernel.h"

/* A loaded code object: "<name>.<level>" and its entry. */
typedef struct hk_object {
    char name[64];  /* e.g. "matmul_6x16" */
    char level[16]; /* e.g. "x86-64-v3" */
    void *handle;
    void *entry;
} hk_object_t;

/* Every built object whose name starts with `prefix` and whose level this
 * CPU runs, loaded (dlopen of its path); the count.  Objects for levels the
 * CPU cannot run are counted in *skipped and never opened. */
int hk_load_objects(const char *prefix, hk_object_t *out, int cap,
                    int *skipped);
/* The same for a CPU with `features` (CDNN_HOST_CPU_* bits), which may be
 * made up; returns 0 rather than failing when none is loaded. */
int hk_load_objects_for(const char *prefix, uint32_t features,
                        hk_object_t *out, int cap, int *skipped);
/* Every built object "name.level", comma-separated (a copy to cut up). */
const char *hk_object_list(void);
void hk_unload_objects(hk_object_t *objects, int count);

/* A tensor in memory of exactly the bytes its dims and strides reach
 * (so that ASan sees any access outside), filled with random values
 * already rounded to its type. */
typedef struct hk_buffer {
    cdnn_host_tensor_t t;
    int32_t rank;
    int64_t dims[CDNN_HOST_MAX_RANK];
    void *block;     /* what malloc returned */
    size_t bytes;
} hk_buffer_t;

/* Allocate; dims and strides (elements) of rank `rank`. */
void hk_buffer_init(hk_buffer_t *b, int32_t type, int32_t rank,
                    const int64_t *dims, const int64_t *strides);
void hk_buffer_fill(hk_buffer_t *b, uint64_t *rng, double lo, double hi);
void hk_buffer_free(hk_buffer_t *b);
/* Packed row-major strides for dims. */
void hk_packed_strides(int32_t rank, const int64_t *dims, int64_t *strides);

/* The element at a multi-index, as a double (and storing one). */
double hk_get(const hk_buffer_t *b, const int64_t *index);
void hk_set(hk_buffer_t *b, const int64_t *index, double v);
/* The element at an element offset from data. */
double hk_get_at(int32_t type, const void *data, int64_t offset);

/* Half an ulp of the type, relative: the rounding of a stored result. */
double hk_type_eps(int32_t type);
/* The smallest magnitude below which the type's absolute spacing rules. */
double hk_type_tiny(int32_t type);
const char *hk_type_name(int32_t type);

double hk_uniform(uint64_t *rng, double lo, double hi);
uint64_t hk_rng_seed(uint64_t seed);

/* A parallel_for on real threads (one per index), for the kernels'
 * threads: ctx unused.  Counts its calls. */
void hk_parallel_for(void *ctx, int64_t n, void (*body)(void *, int64_t),
                     void *arg);
extern int hk_parallel_calls;

/* Comparisons of a case: each value's error against its tolerance; the
 * case fails (naming its worst value) when one is over. */
typedef struct hk_check {
    double worst;   /* largest |got - want| / tol seen */
    double max_rel; /* largest |got - want| / |want| over |want| > tiny */
    int64_t count;
    char where[160];
} hk_check_t;

void hk_check_begin(hk_check_t *c);
void hk_check_value(hk_check_t *c, double got, double want, double tol,
                    const char *what, int64_t index);
/* Fails the test when a value was out of tolerance; `label` says the case. */
void hk_check_end(const hk_check_t *c, const char *label);

#endif /* HK_UTIL_H */
