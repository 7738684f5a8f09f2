/*
 * hk_util.c -- the host-kernel tests' shared helpers (hk_util.h).
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cdnn_sdk/numeric.h>

#include "../../kernels/host/host_target.h"
#include "hk_util.h"

#ifndef HOST_KERNEL_DIR
#error "define HOST_KERNEL_DIR (where the .so files are)"
#endif
#ifndef HOST_KERNEL_OBJECTS
#error "define HOST_KERNEL_OBJECTS (name.level,name.level,...)"
#endif

/* ------------------------------------------------------------------------
 * Objects
 * ------------------------------------------------------------------------ */

static int load_one(const char *name, const char *level, hk_object_t *o)
{
    char path[512], symbol[96];
    snprintf(path, sizeof path, "%s/%s.%s.so", HOST_KERNEL_DIR, name, level);
    snprintf(symbol, sizeof symbol, "cdnn_host_%s", name);
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "%s", name);
    snprintf(o->level, sizeof o->level, "%s", level);
    o->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!o->handle)
        fail_msg("cannot load %s: %s", path, dlerror());
    o->entry = dlsym(o->handle, symbol);
    if (!o->entry)
        fail_msg("%s does not export %s", path, symbol);
    return 1;
}

const char *hk_object_list(void)
{
    return HOST_KERNEL_OBJECTS;
}

int hk_load_objects(const char *prefix, hk_object_t *out, int cap,
                    int *skipped)
{
    int count = hk_load_objects_for(prefix, cdnn_host_cpu_features(), out,
                                    cap, skipped);
    if (count == 0)
        fail_msg("no '%s' object this CPU runs was built", prefix);
    return count;
}

int hk_load_objects_for(const char *prefix, uint32_t features,
                        hk_object_t *out, int cap, int *skipped)
{
    char list[] = HOST_KERNEL_OBJECTS;
    int count = 0;
    *skipped = 0;
    for (char *save, *item = strtok_r(list, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *dot = strchr(item, '.');
        assert_non_null(dot);
        *dot = '\0';
        if (strncmp(item, prefix, strlen(prefix)) != 0)
            continue;
        if (!cdnn_host_target_runs(dot + 1, features)) {
            (*skipped)++;
            continue;
        }
        assert_true(count < cap);
        count += load_one(item, dot + 1, &out[count]);
    }
    return count;
}

void hk_unload_objects(hk_object_t *objects, int count)
{
    for (int i = 0; i < count; i++)
        dlclose(objects[i].handle);
}

/* ------------------------------------------------------------------------
 * Buffers
 * ------------------------------------------------------------------------ */

static size_t type_size(int32_t type)
{
    return type == CDNN_HOST_F32 ? 4 : 2;
}

void hk_packed_strides(int32_t rank, const int64_t *dims, int64_t *strides)
{
    int64_t s = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= dims[d] > 0 ? dims[d] : 1;
    }
}

void hk_buffer_init(hk_buffer_t *b, int32_t type, int32_t rank,
                    const int64_t *dims, const int64_t *strides)
{
    memset(b, 0, sizeof *b);
    b->t.type = type;
    b->rank = rank;
    int64_t lo = 0, hi = 0, empty = 0;
    for (int32_t d = 0; d < rank; d++) {
        b->dims[d] = dims[d];
        b->t.strides[d] = strides[d];
        empty |= dims[d] == 0;
        int64_t reach = (dims[d] - 1) * strides[d];
        if (reach < 0)
            lo += reach;
        else
            hi += reach;
    }
    b->bytes = empty ? 0 : (size_t)(hi - lo + 1) * type_size(type);
    /* exactly the bytes reached; one byte for an empty tensor so that the
     * pointer is real but any read of it is an overflow */
    b->block = malloc(b->bytes ? b->bytes : 1);
    assert_non_null(b->block);
    b->t.data = (char *)b->block - lo * (int64_t)type_size(type);
}

void hk_buffer_free(hk_buffer_t *b)
{
    free(b->block);
    b->block = NULL;
}

static int64_t offset_of(const hk_buffer_t *b, const int64_t *index)
{
    int64_t off = 0;
    for (int32_t d = 0; d < b->rank; d++)
        off += index[d] * b->t.strides[d];
    return off;
}

double hk_get_at(int32_t type, const void *data, int64_t offset)
{
    const char *p = (const char *)data + offset * (int64_t)type_size(type);
    return cdnn_load_element((cdnn_data_type_t)type, p);
}

double hk_get(const hk_buffer_t *b, const int64_t *index)
{
    return hk_get_at(b->t.type, b->t.data, offset_of(b, index));
}

void hk_set(hk_buffer_t *b, const int64_t *index, double v)
{
    char *p = (char *)b->t.data +
              offset_of(b, index) * (int64_t)type_size(b->t.type);
    cdnn_store_element((cdnn_data_type_t)b->t.type, p, v);
}

/* A random value in every element, row-major from dimension d on. */
static void fill_rec(hk_buffer_t *b, int32_t d, int64_t *index,
                     uint64_t *rng, double lo, double hi)
{
    if (d == b->rank) {
        hk_set(b, index, hk_uniform(rng, lo, hi));
        return;
    }
    for (index[d] = 0; index[d] < b->dims[d]; index[d]++)
        fill_rec(b, d + 1, index, rng, lo, hi);
}

void hk_buffer_fill(hk_buffer_t *b, uint64_t *rng, double lo, double hi)
{
    int64_t index[CDNN_HOST_MAX_RANK] = {0};
    fill_rec(b, 0, index, rng, lo, hi);
}

/* ------------------------------------------------------------------------
 * Types, random numbers
 * ------------------------------------------------------------------------ */

double hk_type_eps(int32_t type)
{
    switch (type) {
    case CDNN_HOST_F16: return ldexp(1.0, -11);
    case CDNN_HOST_BF16: return ldexp(1.0, -8);
    default: return ldexp(1.0, -24);
    }
}

double hk_type_tiny(int32_t type)
{
    /* f16's subnormal spacing; f32 and bf16 share f32's exponent range */
    return type == CDNN_HOST_F16 ? ldexp(1.0, -24) : ldexp(1.0, -126);
}

const char *hk_type_name(int32_t type)
{
    switch (type) {
    case CDNN_HOST_F32: return "f32";
    case CDNN_HOST_F16: return "f16";
    case CDNN_HOST_BF16: return "bf16";
    default: return "?";
    }
}

uint64_t hk_rng_seed(uint64_t seed)
{
    return seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
}

double hk_uniform(uint64_t *rng, double lo, double hi)
{
    /* xorshift64* */
    uint64_t x = *rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *rng = x;
    double u = (double)((x * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-53;
    return lo + (hi - lo) * u;
}

/* ------------------------------------------------------------------------
 * Threads
 * ------------------------------------------------------------------------ */

int hk_parallel_calls;

typedef struct hk_thread_arg {
    void (*body)(void *, int64_t);
    void *arg;
    int64_t i;
} hk_thread_arg_t;

static void *thread_main(void *p)
{
    hk_thread_arg_t *t = p;
    t->body(t->arg, t->i);
    return NULL;
}

void hk_parallel_for(void *ctx, int64_t n, void (*body)(void *, int64_t),
                     void *arg)
{
    (void)ctx;
    __atomic_add_fetch(&hk_parallel_calls, 1, __ATOMIC_RELAXED);
    pthread_t threads[64];
    hk_thread_arg_t args[64];
    assert_true(n >= 1 && n <= 64);
    /* index 0 on this thread, the rest on their own */
    for (int64_t i = 1; i < n; i++) {
        args[i] = (hk_thread_arg_t){body, arg, i};
        assert_int_equal(pthread_create(&threads[i], NULL, thread_main,
                                        &args[i]), 0);
    }
    body(arg, 0);
    for (int64_t i = 1; i < n; i++)
        pthread_join(threads[i], NULL);
}

/* ------------------------------------------------------------------------
 * Checks
 * ------------------------------------------------------------------------ */

void hk_check_begin(hk_check_t *c)
{
    memset(c, 0, sizeof *c);
}

void hk_check_value(hk_check_t *c, double got, double want, double tol,
                    const char *what, int64_t index)
{
    double err = fabs(got - want);
    int same_special = (isnan(got) && isnan(want)) ||
                       (isinf(want) && got == want);
    double ratio = same_special ? 0.0 : (isnan(err) ? INFINITY : err / tol);
    c->count++;
    if (!same_special && fabs(want) > 1e-30 && err / fabs(want) > c->max_rel)
        c->max_rel = err / fabs(want);
    if (ratio > c->worst) {
        c->worst = ratio;
        snprintf(c->where, sizeof c->where,
                 "%s[%lld]: got %.9g, want %.9g, tolerance %.3g", what,
                 (long long)index, got, want, tol);
    }
}

void hk_check_end(const hk_check_t *c, const char *label)
{
    if (c->worst > 1.0)
        fail_msg("%s: %s (error %.2fx the tolerance)", label, c->where,
                 c->worst);
}
