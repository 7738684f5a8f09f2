/*
 * test_memory.c -- cdnn_memory_* and cdnn_handle_synchronize: blocks on a
 * handle's device, copies in and out, and the checks that keep a wrong
 * pointer, a double free or an overlong copy from reaching free() or the
 * driver.  Every test runs on "cpu", and again on "cuda:0" where a CUDA
 * device is present (scripts/gpu-check.sh runs this program there).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cdnn/cdnn.h>

#include "test_filter.h"

#define OK(call) assert_int_equal((call), CDNN_STATUS_SUCCESS)

static void expect_error(cdnn_status_t got, cdnn_status_t want, const char *word)
{
    assert_int_equal(got, want);
    if (!strstr(cdnn_last_error(), word))
        fail_msg("message \"%s\" lacks \"%s\"", cdnn_last_error(), word);
}

/* A handle on device, or NULL (with a line saying why) where there is none. */
static cdnn_handle_t *open_device(const char *device)
{
    cdnn_handle_t *h = NULL;
    if (cdnn_handle_create(&h, device) != CDNN_STATUS_SUCCESS) {
        assert_string_not_equal(device, "cpu");
        printf("# %s: skipped, no such device here: %s\n", device, cdnn_last_error());
        return NULL;
    }
    return h;
}

static const char *const devices[] = {"cpu", "cuda:0"};

static void fill_pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed + 31 * i + (i >> 8));
}

static void round_trip_on(cdnn_handle_t *h)
{
    enum { BYTES = 100003 };
    unsigned char *in = malloc(BYTES), *out = malloc(BYTES);
    assert_non_null(in);
    assert_non_null(out);
    fill_pattern(in, BYTES, 7);
    void *d = NULL;
    OK(cdnn_memory_alloc(h, BYTES, &d));
    assert_non_null(d);
    assert_int_equal((uintptr_t)d % 256, 0);
    OK(cdnn_memory_upload(h, d, in, BYTES));
    /* A part of the block, at an odd offset, comes back as it went in. */
    memset(out, 0, BYTES);
    OK(cdnn_memory_download(h, out, (char *)d + 4099, 1000));
    assert_memory_equal(out, in + 4099, 1000);
    /* Overwrite a middle stretch and read the whole block back. */
    unsigned char patch[512];
    fill_pattern(patch, sizeof patch, 99);
    OK(cdnn_memory_upload(h, (char *)d + 60000, patch, sizeof patch));
    memcpy(in + 60000, patch, sizeof patch);
    OK(cdnn_memory_download(h, out, d, BYTES));
    assert_memory_equal(out, in, BYTES);
    /* The last byte is in the block; nothing is copied for 0 bytes. */
    OK(cdnn_memory_download(h, out, (char *)d + BYTES - 1, 1));
    OK(cdnn_memory_upload(h, d, in, 0));
    OK(cdnn_handle_synchronize(h));
    OK(cdnn_memory_free(h, d));
    free(in);
    free(out);
}

static void test_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
        cdnn_handle_t *h = open_device(devices[i]);
        if (h) {
            round_trip_on(h);
            cdnn_handle_destroy(h);
        }
    }
}

static void refusals_on(cdnn_handle_t *h)
{
    void *d = NULL;
    unsigned char host[64] = {0};
    expect_error(cdnn_memory_alloc(h, 0, &d), CDNN_STATUS_BAD_PARAM, "bytes is 0");
    assert_null(d);
    expect_error(cdnn_memory_alloc(h, 16, NULL), CDNN_STATUS_BAD_PARAM, "'pointer'");
    expect_error(cdnn_memory_alloc(NULL, 16, &d), CDNN_STATUS_BAD_PARAM, "'handle'");
    OK(cdnn_memory_alloc(h, 64, &d));
    /* One byte past the end, a pointer before the block, a host pointer. */
    expect_error(cdnn_memory_upload(h, d, host, 65), CDNN_STATUS_BAD_PARAM,
                 "do not lie inside");
    expect_error(cdnn_memory_download(h, host, (char *)d + 1, 64), CDNN_STATUS_BAD_PARAM,
                 "do not lie inside");
    expect_error(cdnn_memory_download(h, host, (char *)d - 1, 1), CDNN_STATUS_BAD_PARAM,
                 "do not lie inside");
    expect_error(cdnn_memory_upload(h, host, host, 1), CDNN_STATUS_BAD_PARAM,
                 "do not lie inside");
    /* A copy whose length would wrap the address space. */
    expect_error(cdnn_memory_upload(h, (char *)d + 8, host, SIZE_MAX - 4),
                 CDNN_STATUS_BAD_PARAM, "do not lie inside");
    expect_error(cdnn_memory_upload(h, NULL, host, 1), CDNN_STATUS_BAD_PARAM, "NULL");
    expect_error(cdnn_memory_download(h, NULL, d, 1), CDNN_STATUS_BAD_PARAM, "NULL");
    /* Freeing inside the block, freeing a stranger's pointer, freeing twice. */
    expect_error(cdnn_memory_free(h, (char *)d + 8), CDNN_STATUS_BAD_PARAM,
                 "not a block");
    expect_error(cdnn_memory_free(h, host), CDNN_STATUS_BAD_PARAM, "not a block");
    OK(cdnn_memory_free(h, d));
    expect_error(cdnn_memory_free(h, d), CDNN_STATUS_BAD_PARAM, "freed already");
    /* A freed block takes no copies. */
    expect_error(cdnn_memory_upload(h, d, host, 1), CDNN_STATUS_BAD_PARAM,
                 "do not lie inside");
    OK(cdnn_memory_free(h, NULL));
}

static void test_refusals(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
        cdnn_handle_t *h = open_device(devices[i]);
        if (h) {
            refusals_on(h);
            cdnn_handle_destroy(h);
        }
    }
}

/* A block is one handle's: another handle, even on the same device, does
 * not know it and refuses it. */
static void test_blocks_belong_to_their_handle(void **state)
{
    (void)state;
    cdnn_handle_t *a = open_device("cpu"), *b = open_device("cpu");
    void *d = NULL;
    unsigned char host[8] = {0};
    OK(cdnn_memory_alloc(a, 8, &d));
    expect_error(cdnn_memory_upload(b, d, host, 8), CDNN_STATUS_BAD_PARAM, "(cpu)");
    expect_error(cdnn_memory_free(b, d), CDNN_STATUS_BAD_PARAM, "not a block");
    OK(cdnn_memory_free(a, d));
    cdnn_handle_destroy(a);
    cdnn_handle_destroy(b);
}

/* Blocks still allocated when the handle goes are freed with it (the
 * sanitizer run reports a leak otherwise); the table keeps its order
 * through frees from the middle. */
static void test_many_blocks_and_leftovers(void **state)
{
    (void)state;
    enum { COUNT = 2000 };
    void **blocks = calloc(COUNT, sizeof *blocks);
    assert_non_null(blocks);
    for (size_t d = 0; d < sizeof devices / sizeof devices[0]; d++) {
        cdnn_handle_t *h = open_device(devices[d]);
        if (!h)
            continue;
        for (int i = 0; i < COUNT; i++)
            OK(cdnn_memory_alloc(h, 1 + (size_t)(i % 7) * 300, &blocks[i]));
        for (int i = 1; i < COUNT; i += 2)
            OK(cdnn_memory_free(h, blocks[i]));
        for (int i = 0; i < COUNT; i += 2) {
            unsigned char byte = (unsigned char)i, back = 0;
            OK(cdnn_memory_upload(h, blocks[i], &byte, 1));
            OK(cdnn_memory_download(h, &back, blocks[i], 1));
            assert_int_equal(back, byte);
        }
        for (int i = 1; i < COUNT; i += 2)
            expect_error(cdnn_memory_free(h, blocks[i]), CDNN_STATUS_BAD_PARAM,
                         "not a block");
        cdnn_handle_destroy(h); /* the even blocks are still allocated */
    }
    free(blocks);
}

/* A device with no room says how much was asked.  Host allocators under a
 * sanitizer abort on such sizes instead of failing, so the CPU half of
 * this runs only without one. */
static void test_no_room(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
        if (strcmp(devices[i], "cpu") == 0)
            continue;
#endif
        cdnn_handle_t *h = open_device(devices[i]);
        if (!h)
            continue;
        void *d = (void *)1;
        size_t huge = (size_t)1 << 60;
        expect_error(cdnn_memory_alloc(h, huge, &d), CDNN_STATUS_ALLOC_FAILED,
                     "1152921504606846976 bytes");
        assert_null(d);
        cdnn_handle_destroy(h);
    }
}

typedef struct worker {
    cdnn_handle_t *handle;
    unsigned seed;
    int failures;
} worker_t;

/* Each thread allocates, fills, reads back and frees its own blocks on the
 * shared handle, so that the table is changed from all of them at once. */
static void *churn(void *arg)
{
    worker_t *w = arg;
    unsigned char in[256], out[256];
    for (int round = 0; round < 300; round++) {
        void *d = NULL;
        size_t n = 1 + (w->seed * 17 + (unsigned)round * 13) % sizeof in;
        fill_pattern(in, n, w->seed + (unsigned)round);
        if (cdnn_memory_alloc(w->handle, n, &d) != CDNN_STATUS_SUCCESS ||
            cdnn_memory_upload(w->handle, d, in, n) != CDNN_STATUS_SUCCESS ||
            cdnn_memory_download(w->handle, out, d, n) != CDNN_STATUS_SUCCESS ||
            memcmp(in, out, n) != 0 || cdnn_memory_free(w->handle, d) != CDNN_STATUS_SUCCESS)
            w->failures++;
    }
    return NULL;
}

static void test_threads_share_a_handle(void **state)
{
    (void)state;
    enum { THREADS = 8 };
    for (size_t d = 0; d < sizeof devices / sizeof devices[0]; d++) {
        cdnn_handle_t *h = open_device(devices[d]);
        if (!h)
            continue;
        pthread_t threads[THREADS];
        worker_t workers[THREADS];
        for (int i = 0; i < THREADS; i++) {
            workers[i] = (worker_t){.handle = h, .seed = (unsigned)i * 101u};
            assert_int_equal(pthread_create(&threads[i], NULL, churn, &workers[i]), 0);
        }
        for (int i = 0; i < THREADS; i++) {
            pthread_join(threads[i], NULL);
            assert_int_equal(workers[i].failures, 0);
        }
        cdnn_handle_destroy(h);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_blocks_belong_to_their_handle),
        cmocka_unit_test(test_many_blocks_and_leftovers),
        cmocka_unit_test(test_no_room),
        cmocka_unit_test(test_threads_share_a_handle),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
