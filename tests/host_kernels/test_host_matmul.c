/*
 * test_host_matmul.c -- every matmul code object this CPU runs, against a
 * naive f64 matmul with the same epilogue: odd shapes and tails, k = 0,
 * batches (one operand shared through zero strides), row- and
 * column-major operands with padded rows, f32/f16/bf16 operands and
 * results, bias as a row or column vector (and with a negative stride),
 * every activation, a residual (also as C itself), one thread and several.
 *
 * Tolerance of one element, from the precisions involved:
 *     2 (k + 1) u sum_p |a b|     f32 accumulation (u = 2^-24; no FMA on v2)
 *   + act_rel |act(x)|            the kernels' activation approximations
 *   + eps(c) |result|             rounding the result to C's type
 * with the sum's term scaled by 1.2, the steepest slope of an activation.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hk_util.h"

#define MAX_OBJECTS 16

typedef struct mm_case {
    int32_t batch_rank;
    int64_t batch[2];
    int b_shared;          /* b's batch strides 0 */
    int64_t m, n, k;
    int a_colmajor, b_colmajor, c_colmajor;
    int64_t gap;           /* extra elements after each row (or column) */
    int32_t ta, tb, tc;
    int32_t activation;
    int bias;              /* 0 none, 1 row over n, 2 column over m, 3 row, negative stride */
    int residual;          /* 0 none, 1 separate, 2 C itself */
    int threads;
    int64_t sample;        /* check every sample-th element (0: all) */
} mm_case_t;

typedef struct mm_buffers {
    hk_buffer_t a, b, c, bias, res;
} mm_buffers_t;

/* Strides of a {batch.., rows, cols} matrix stored row- or column-major
 * with `gap` spare elements per line, batches one after another (or all
 * the same, shared). */
static void matrix_strides(const mm_case_t *t, int64_t rows, int64_t cols,
                           int colmajor, int shared, int64_t *strides)
{
    int32_t br = t->batch_rank;
    int64_t line = (colmajor ? rows : cols) + t->gap;
    strides[br] = colmajor ? 1 : line;
    strides[br + 1] = colmajor ? line : 1;
    int64_t step = line * (colmajor ? cols : rows);
    for (int32_t d = br - 1; d >= 0; d--) {
        strides[d] = shared ? 0 : step;
        step *= t->batch[d];
    }
}

static void matrix_dims(const mm_case_t *t, int64_t rows, int64_t cols,
                        int64_t *dims)
{
    for (int32_t d = 0; d < t->batch_rank; d++)
        dims[d] = t->batch[d];
    dims[t->batch_rank] = rows;
    dims[t->batch_rank + 1] = cols;
}

static void bias_strides(const mm_case_t *t, int64_t *strides)
{
    int32_t br = t->batch_rank;
    memset(strides, 0, sizeof(int64_t) * CDNN_HOST_MAX_RANK);
    if (t->bias == 1)
        strides[br + 1] = 1;
    else if (t->bias == 2)
        strides[br] = 1;
    else
        strides[br + 1] = -1;
}

static void make_buffers(const mm_case_t *t, mm_buffers_t *bu, uint64_t *rng)
{
    int32_t rank = t->batch_rank + 2;
    int64_t dims[CDNN_HOST_MAX_RANK], strides[CDNN_HOST_MAX_RANK];
    memset(bu, 0, sizeof *bu);
    matrix_dims(t, t->m, t->k, dims);
    matrix_strides(t, t->m, t->k, t->a_colmajor, 0, strides);
    hk_buffer_init(&bu->a, t->ta, rank, dims, strides);
    hk_buffer_fill(&bu->a, rng, -1.0, 1.0);
    matrix_dims(t, t->k, t->n, dims);
    matrix_strides(t, t->k, t->n, t->b_colmajor, t->b_shared, strides);
    hk_buffer_init(&bu->b, t->tb, rank, dims, strides);
    hk_buffer_fill(&bu->b, rng, -1.0, 1.0);
    matrix_dims(t, t->m, t->n, dims);
    matrix_strides(t, t->m, t->n, t->c_colmajor, 0, strides);
    hk_buffer_init(&bu->c, t->tc, rank, dims, strides);
    hk_buffer_fill(&bu->c, rng, -9.0, 9.0); /* garbage the kernel overwrites */
    if (t->residual == 1) {
        hk_buffer_init(&bu->res, t->tc, rank, dims, strides);
        hk_buffer_fill(&bu->res, rng, -1.0, 1.0);
    } else if (t->residual == 2) {
        hk_buffer_fill(&bu->c, rng, -1.0, 1.0); /* C's old values are added */
    }
    if (t->bias) {
        bias_strides(t, strides);
        hk_buffer_init(&bu->bias, CDNN_HOST_F32, rank, dims, strides);
        hk_buffer_fill(&bu->bias, rng, -1.0, 1.0);
    }
}

static void free_buffers(mm_buffers_t *bu)
{
    hk_buffer_free(&bu->a);
    hk_buffer_free(&bu->b);
    hk_buffer_free(&bu->c);
    hk_buffer_free(&bu->bias);
    hk_buffer_free(&bu->res);
}

/* ------------------------------------------------------------------------
 * Reference
 * ------------------------------------------------------------------------ */

static double activate(int32_t act, double x)
{
    switch (act) {
    case CDNN_HOST_ACT_RELU: return x > 0 ? x : 0;
    case CDNN_HOST_ACT_GELU: return 0.5 * x * erfc(-x / sqrt(2.0));
    case CDNN_HOST_ACT_GELU_TANH:
        return 0.5 * x *
               (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case CDNN_HOST_ACT_SILU: return x / (1.0 + exp(-x));
    case CDNN_HOST_ACT_TANH: return tanh(x);
    default: return x;
    }
}

static double activation_rel_error(int32_t act)
{
    return act == CDNN_HOST_ACT_NONE || act == CDNN_HOST_ACT_RELU ? 0.0
                                                                  : 2e-6;
}

/* Expected C at (batch index, i, j) and its tolerance. */
static void reference(const mm_case_t *t, const mm_buffers_t *bu,
                      const double *res_old, const int64_t *idx, double *want,
                      double *tol)
{
    int32_t br = t->batch_rank;
    int64_t ia[CDNN_HOST_MAX_RANK], ib[CDNN_HOST_MAX_RANK];
    memcpy(ia, idx, sizeof ia);
    memcpy(ib, idx, sizeof ib);
    double sum = 0, mag = 0;
    for (int64_t p = 0; p < t->k; p++) {
        ia[br + 1] = p;
        ib[br] = p;
        double x = hk_get(&bu->a, ia) * hk_get(&bu->b, ib);
        sum += x;
        mag += fabs(x);
    }
    if (t->bias) {
        double b = hk_get(&bu->bias, idx);
        sum += b;
        mag += fabs(b);
    }
    double act = activate(t->activation, sum);
    double result = act + (res_old ? *res_old : 0.0);
    *want = result;
    *tol = 1.2 * 2.0 * (double)(t->k + 1) * ldexp(1.0, -24) * mag +
           activation_rel_error(t->activation) * fabs(act) +
           hk_type_eps(t->tc) * fabs(result) + ldexp(1.0, -24) * fabs(result) +
           hk_type_tiny(t->tc);
}

/* ------------------------------------------------------------------------
 * Running a case
 * ------------------------------------------------------------------------ */

static void fill_args(const mm_case_t *t, mm_buffers_t *bu,
                      cdnn_host_matmul_args_t *args)
{
    memset(args, 0, sizeof *args);
    args->batch_rank = t->batch_rank;
    for (int32_t d = 0; d < t->batch_rank; d++)
        args->batch_dims[d] = t->batch[d];
    args->m = t->m;
    args->n = t->n;
    args->k = t->k;
    args->a = bu->a.t;
    args->b = bu->b.t;
    args->c = bu->c.t;
    args->activation = t->activation;
    if (t->bias)
        args->bias = bu->bias.t;
    if (t->residual == 1)
        args->residual = bu->res.t;
    else if (t->residual == 2)
        args->residual = bu->c.t;
    args->parallel.threads = t->threads;
    args->parallel.parallel_for = t->threads > 1 ? hk_parallel_for : NULL;
}

/* The residual's values before the run (C's own, when C is the residual). */
static double *save_residual(const mm_case_t *t, const mm_buffers_t *bu,
                             int64_t count)
{
    if (!t->residual)
        return NULL;
    const hk_buffer_t *r = t->residual == 1 ? &bu->res : &bu->c;
    double *old = calloc((size_t)count + 1, sizeof *old);
    assert_non_null(old);
    int64_t idx[CDNN_HOST_MAX_RANK] = {0};
    int32_t rank = r->rank;
    for (int64_t e = 0; e < count; e++) {
        int64_t rest = e;
        for (int32_t d = rank - 1; d >= 0; d--) {
            idx[d] = rest % r->dims[d];
            rest /= r->dims[d];
        }
        old[e] = hk_get(r, idx);
    }
    return old;
}

static void check_result(const mm_case_t *t, const mm_buffers_t *bu,
                         const double *res_old, int64_t count,
                         const char *label)
{
    hk_check_t check;
    hk_check_begin(&check);
    int64_t idx[CDNN_HOST_MAX_RANK] = {0};
    int32_t rank = bu->c.rank;
    int64_t step = t->sample > 0 ? t->sample : 1;
    for (int64_t e = 0; e < count; e += step) {
        int64_t rest = e;
        for (int32_t d = rank - 1; d >= 0; d--) {
            idx[d] = rest % bu->c.dims[d];
            rest /= bu->c.dims[d];
        }
        double want, tol;
        reference(t, bu, res_old ? &res_old[e] : NULL, idx, &want, &tol);
        hk_check_value(&check, hk_get(&bu->c, idx), want, tol, "C", e);
    }
    hk_check_end(&check, label);
}

static void run_case(const hk_object_t *o, const mm_case_t *t, uint64_t seed)
{
    char label[256];
    snprintf(label, sizeof label,
             "%s.%s batch %lldx%lld%s m%lld n%lld k%lld a%s%s b%s%s c%s%s "
             "act %d bias %d res %d threads %d",
             o->name, o->level, (long long)t->batch[0], (long long)t->batch[1],
             t->b_shared ? " (b shared)" : "", (long long)t->m,
             (long long)t->n, (long long)t->k, hk_type_name(t->ta),
             t->a_colmajor ? "/T" : "", hk_type_name(t->tb),
             t->b_colmajor ? "/T" : "", hk_type_name(t->tc),
             t->c_colmajor ? "/T" : "", t->activation, t->bias, t->residual,
             t->threads);
    uint64_t rng = hk_rng_seed(seed);
    mm_buffers_t bu;
    make_buffers(t, &bu, &rng);
    cdnn_host_matmul_args_t args;
    fill_args(t, &bu, &args);
    cdnn_host_matmul_fn entry = (cdnn_host_matmul_fn)o->entry;
    size_t need = 0;
    assert_int_equal(entry(&args, &need), CDNN_HOST_OK);
    /* exactly the bytes asked for, so that ASan sees an overrun */
    args.workspace = need ? malloc(need) : NULL;
    args.workspace_size = need;
    int64_t count = 1;
    for (int32_t d = 0; d < bu.c.rank; d++)
        count *= bu.c.dims[d];
    double *res_old = save_residual(t, &bu, count);
    int32_t status = entry(&args, NULL);
    if (status != CDNN_HOST_OK)
        fail_msg("%s: status %d", label, status);
    check_result(t, &bu, res_old, count, label);
    free(res_old);
    free(args.workspace);
    free_buffers(&bu);
}

/* ------------------------------------------------------------------------
 * Cases
 * ------------------------------------------------------------------------ */

static const int64_t shapes[][3] = {
    {1, 1, 1},  {1, 17, 5},   {7, 1, 3},   {13, 29, 31}, {6, 16, 64},
    {5, 9, 0},  {24, 48, 40}, {33, 70, 9}, {2, 100, 17}, {61, 3, 19},
};

static const int32_t types[] = {CDNN_HOST_F32, CDNN_HOST_F16, CDNN_HOST_BF16};

/* Case v of shape s: layouts, types and epilogues vary with v so that each
 * shape meets several of them without the full product. */
static mm_case_t make_case(int s, int v)
{
    mm_case_t t = {0};
    t.m = shapes[s][0];
    t.n = shapes[s][1];
    t.k = shapes[s][2];
    t.a_colmajor = v & 1;
    t.b_colmajor = (v >> 1) & 1;
    t.c_colmajor = v == 5;
    t.gap = v % 3 == 2 ? 3 : 0;
    t.ta = types[(s + v) % 3];
    t.tb = types[(s + 2 * v) % 3];
    t.tc = types[(s * 7 + v) % 3];
    t.activation = (s + v) % CDNN_HOST_ACT_COUNT;
    t.bias = (s + v) % 4;
    t.residual = v % 3;
    t.batch_rank = v >= 4 ? (v == 6 ? 2 : 1) : 0;
    t.batch[0] = t.batch_rank ? 3 : 1;
    t.batch[1] = t.batch_rank == 2 ? 2 : 1;
    t.b_shared = v == 4 || v == 6;
    t.threads = v % 2 ? 3 : 1;
    return t;
}

static void test_matmul_cases(void **state)
{
    (void)state;
    hk_object_t objects[MAX_OBJECTS];
    int skipped, count = hk_load_objects("matmul_", objects, MAX_OBJECTS,
                                         &skipped);
    int shape_count = (int)(sizeof shapes / sizeof shapes[0]);
    for (int o = 0; o < count; o++)
        for (int s = 0; s < shape_count; s++)
            for (int v = 0; v < 8; v++) {
                mm_case_t t = make_case(s, v);
                run_case(&objects[o], &t, (uint64_t)(o * 1000 + s * 10 + v));
            }
    printf("matmul: %d objects x %d cases; %d objects for levels this CPU "
           "lacks not loaded\n", count, shape_count * 8, skipped);
    hk_unload_objects(objects, count);
}

/* Blocks: C larger than a packed block of A holds rows (126 to 336 for
 * all tiles but 8x48) and a block of B columns (512 to 1344, idem), and K
 * deeper than a step of the micro-kernel (128 to 512), so that every loop
 * of the driver runs, with its tails.  Every 37th element is checked: the f64 reference of all of
 * them would take longer than the kernels. */
static void test_matmul_blocks(void **state)
{
    (void)state;
    hk_object_t objects[MAX_OBJECTS];
    int skipped, count = hk_load_objects("matmul_", objects, MAX_OBJECTS,
                                         &skipped);
    for (int o = 0; o < count; o++) {
        mm_case_t t = {.m = 400, .n = 1500, .k = 600, .ta = CDNN_HOST_F32,
                       .tb = CDNN_HOST_F32, .tc = CDNN_HOST_F32,
                       .activation = CDNN_HOST_ACT_GELU, .bias = 1,
                       .threads = o % 2 ? 2 : 1, .batch = {1, 1},
                       .sample = 37};
        run_case(&objects[o], &t, 77);
    }
    hk_unload_objects(objects, count);
}

static void test_matmul_threads_split(void **state)
{
    (void)state;
    hk_object_t objects[MAX_OBJECTS];
    int skipped, count = hk_load_objects("matmul_", objects, MAX_OBJECTS,
                                         &skipped);
    for (int o = 0; o < count; o++) {
        /* tall (rows cut), wide (columns cut), batched (batches cut) */
        mm_case_t tall = {.m = 300, .n = 20, .k = 64, .threads = 4,
                          .ta = CDNN_HOST_F32, .tb = CDNN_HOST_BF16,
                          .tc = CDNN_HOST_F32, .batch = {1, 1}};
        mm_case_t wide = tall;
        wide.m = 20;
        wide.n = 300;
        wide.activation = CDNN_HOST_ACT_SILU;
        mm_case_t batched = tall;
        batched.batch_rank = 1;
        batched.batch[0] = 5;
        batched.m = 60;
        int before = hk_parallel_calls;
        run_case(&objects[o], &tall, 1);
        run_case(&objects[o], &wide, 2);
        run_case(&objects[o], &batched, 3);
        assert_int_equal(hk_parallel_calls - before, 3);
    }
    hk_unload_objects(objects, count);
}

/* ------------------------------------------------------------------------
 * Arguments the kernels refuse, and the workspace contract
 * ------------------------------------------------------------------------ */

static void test_matmul_refusals(void **state)
{
    (void)state;
    hk_object_t objects[MAX_OBJECTS];
    int skipped, count = hk_load_objects("matmul_", objects, MAX_OBJECTS,
                                         &skipped);
    for (int o = 0; o < count; o++) {
        cdnn_host_matmul_fn entry = (cdnn_host_matmul_fn)objects[o].entry;
        mm_case_t t = {.m = 9, .n = 20, .k = 7, .ta = CDNN_HOST_F32,
                       .tb = CDNN_HOST_F32, .tc = CDNN_HOST_F16,
                       .batch = {1, 1}};
        uint64_t rng = hk_rng_seed(5);
        mm_buffers_t bu;
        make_buffers(&t, &bu, &rng);
        cdnn_host_matmul_args_t args;
        fill_args(&t, &bu, &args);
        size_t need = 0;
        assert_int_equal(entry(&args, &need), CDNN_HOST_OK);
        assert_true(need > 0);
        /* too small a workspace: refused, C untouched */
        unsigned char *ws = malloc(need);
        unsigned char *before = malloc(bu.c.bytes);
        memcpy(before, bu.c.block, bu.c.bytes);
        args.workspace = ws;
        args.workspace_size = need - 1;
        assert_int_equal(entry(&args, NULL), CDNN_HOST_WORKSPACE_TOO_SMALL);
        assert_memory_equal(before, bu.c.block, bu.c.bytes);
        args.workspace_size = need;
        cdnn_host_matmul_args_t bad = args;
        bad.a.type = 4; /* f64 */
        assert_int_equal(entry(&bad, NULL), CDNN_HOST_BAD_TYPE);
        bad = args;
        bad.activation = CDNN_HOST_ACT_COUNT;
        assert_int_equal(entry(&bad, &need), CDNN_HOST_BAD_ARGS);
        bad = args;
        bad.batch_rank = CDNN_HOST_MAX_BATCH_RANK + 1;
        assert_int_equal(entry(&bad, NULL), CDNN_HOST_BAD_ARGS);
        bad = args;
        bad.c.data = NULL;
        assert_int_equal(entry(&bad, NULL), CDNN_HOST_BAD_ARGS);
        bad = args;
        bad.k = -1;
        assert_int_equal(entry(&bad, NULL), CDNN_HOST_BAD_ARGS);
        assert_memory_equal(before, bu.c.block, bu.c.bytes);
        /* an empty C: nothing to do, no workspace, nothing touched */
        bad = args;
        bad.m = 0;
        bad.a.data = bad.b.data = bad.c.data = NULL;
        size_t none = 1;
        assert_int_equal(entry(&bad, &none), CDNN_HOST_OK);
        assert_int_equal(none, 0);
        assert_int_equal(entry(&bad, NULL), CDNN_HOST_OK);
        free(before);
        free(ws);
        free_buffers(&bu);
    }
    hk_unload_objects(objects, count);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_cases),
        cmocka_unit_test(test_matmul_blocks),
        cmocka_unit_test(test_matmul_threads_split),
        cmocka_unit_test(test_matmul_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
