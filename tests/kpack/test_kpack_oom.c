/*
 * test_kpack_oom.c -- the N-th allocation fails, for every N, while a kernel
 * pack is opened (from bytes and from a file), walked (every code object
 * hashed), re-checked on disk (rule 4) and closed, and while one is
 * written.  Every run must end in ALLOC_FAILED with nothing handed back and
 * nothing left allocated, or, where libcrypto survives a failure of its
 * own, succeed exactly as a run without failures: an allocation failure
 * must never read as damage (CORRUPT_DATA), as a file system error, or as
 * anything else.
 *
 * The SDK is linked with -Wl,--wrap=malloc,calloc,realloc,strdup,free
 * (kpack.cmake), so its allocations land in the __wrap_ functions below;
 * libcrypto's (SHA-256) come here through CRYPTO_set_mem_functions.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>

#include <cdnn_sdk/kpack.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
void __wrap_free(void *p);

/* ---- a counting allocator that fails the N-th allocation ------------------------- */

#define LIVE_CAP 65536 /* blocks allocated and not yet freed (open addressing) */
#define GONE ((void *)1)

static struct {
    long calls, fail_at; /* fail_at 1-based; 0: none fails */
    int failed;
    void *live[LIVE_CAP];
    long live_count;
} A;

static size_t slot(const void *p)
{
    return ((uintptr_t)p >> 4) % LIVE_CAP;
}

static void *counted(void *p)
{
    if (p) {
        size_t h = slot(p);
        while (A.live[h] && A.live[h] != GONE)
            h = (h + 1) % LIVE_CAP;
        A.live[h] = p;
        A.live_count++;
    }
    return p;
}

/* Blocks from elsewhere (getcwd's, libc's own) are not in the set. */
static void uncount(void *p)
{
    size_t h = slot(p);
    for (size_t i = 0; i < LIVE_CAP && A.live[h]; i++, h = (h + 1) % LIVE_CAP)
        if (A.live[h] == p) {
            A.live[h] = GONE;
            A.live_count--;
            return;
        }
}

/* True when this allocation is the one to fail (with errno, as malloc). */
static int fail_now(void)
{
    if (++A.calls != A.fail_at)
        return 0;
    A.failed = 1;
    errno = ENOMEM;
    return 1;
}

void *__wrap_malloc(size_t n) { return fail_now() ? NULL : counted(__real_malloc(n)); }

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : counted(__real_calloc(n, size));
}

void *__wrap_realloc(void *p, size_t n)
{
    if (fail_now())
        return NULL;
    void *q = __real_realloc(p, n);
    if (q && p)
        uncount(p);
    return counted(q);
}

char *__wrap_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = __wrap_malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

void __wrap_free(void *p)
{
    if (p)
        uncount(p);
    __real_free(p);
}

static void *crypto_malloc(size_t n, const char *file, int line)
{
    (void)file;
    (void)line;
    return __wrap_malloc(n);
}

static void *crypto_realloc(void *p, size_t n, const char *file, int line)
{
    (void)file;
    (void)line;
    return __wrap_realloc(p, n);
}

static void crypto_free(void *p, const char *file, int line)
{
    (void)file;
    (void)line;
    __wrap_free(p);
}

/* ---- the paths ------------------------------------------------------------------- */

static uint8_t code_a[300], code_b[90];
static const sdk_kpack_kv_t meta[] = {{"mr", "6"}, {"nr", "16"}};
static const cdnn_knob_info_t knob[] = {{"kernels.t.tile", "tile", 0, 1, 0}};
static const char *const candidates[] = {"a", "b", "c"};
static const sdk_kpack_spec_kernel_t kernels[] = {
    {"a", "sym_a", "x86-64-v2", "sig", code_a, sizeof code_a, 2, meta},
    {"b", "sym_b", "x86-64-v3", "sig", code_b, sizeof code_b, 0, NULL},
    {"c", "sym_c", "x86-64-v3", "sig", code_a, sizeof code_a, 1, meta},
};
static const sdk_kpack_spec_engine_t engines[] = {
    {"kernels:e", 1, "m", "{}", "h", 1, 1, knob, 3, candidates}};
static const sdk_kpack_spec_t spec = {"oom", "1", "host", 3, kernels, 1, engines};

static uint8_t *pack_bytes;
static size_t pack_size;
static char pack_path[64];

/* A pack opened: every code object and, for a pack opened from a file,
 * rule 4's re-read.  The first failure's status. */
static cdnn_status_t walk(const sdk_kpack_t *pack, int on_disk)
{
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    for (int32_t i = 0; !st && i < sdk_kpack_kernel_count(pack); i++) {
        const uint8_t *code = NULL;
        size_t size = 0;
        st = sdk_kpack_code(pack, sdk_kpack_kernel(pack, i), &code, &size, NULL, 0);
        if (!st && on_disk)
            st = sdk_kpack_still_on_disk(pack, sdk_kpack_kernel(pack, i), NULL, 0);
    }
    return st;
}

static cdnn_status_t open_bytes_path(void)
{
    sdk_kpack_t *pack = (sdk_kpack_t *)&pack;
    cdnn_status_t st = sdk_kpack_open_bytes(pack_bytes, pack_size, "oom", &pack, NULL, 0);
    if (st && pack)
        return CDNN_STATUS_INTERNAL_ERROR; /* a failure handed a pack back */
    if (!st)
        st = walk(pack, 0);
    sdk_kpack_close(pack);
    return st;
}

static cdnn_status_t open_file_path(void)
{
    sdk_kpack_t *pack = (sdk_kpack_t *)&pack;
    cdnn_status_t st = sdk_kpack_open(pack_path, &pack, NULL, 0);
    if (st && pack)
        return CDNN_STATUS_INTERNAL_ERROR;
    if (!st)
        st = walk(pack, 1);
    sdk_kpack_close(pack);
    return st;
}

static cdnn_status_t write_path(void)
{
    uint8_t *bytes = (uint8_t *)&bytes;
    size_t size = 1;
    cdnn_status_t st = sdk_kpack_write(&spec, &bytes, &size, NULL, 0);
    if (st && (bytes || size))
        return CDNN_STATUS_INTERNAL_ERROR;
    if (!st && (size != pack_size || memcmp(bytes, pack_bytes, size) != 0))
        st = CDNN_STATUS_INTERNAL_ERROR; /* survived, but wrote other bytes */
    free(bytes);
    return st;
}

/* Fail allocation 1, 2, ... until a run needs fewer: each run ALLOC_FAILED
 * (or a success: the paths check their results) and leak-free, the last
 * one a success.  Returns the allocations a run makes, or -1. */
static long every_failure(const char *name, cdnn_status_t (*path)(void))
{
    for (long n = 1;; n++) {
        long live = A.live_count;
        A.calls = 0;
        A.failed = 0;
        A.fail_at = n;
        cdnn_status_t st = path();
        A.fail_at = 0;
        if (A.live_count != live) {
            printf("FAIL %s: allocation %ld failed, %ld blocks leaked\n", name, n,
                   A.live_count - live);
            return -1;
        }
        if (A.failed && st != CDNN_STATUS_ALLOC_FAILED && st != CDNN_STATUS_SUCCESS) {
            printf("FAIL %s: allocation %ld failed, status %d\n", name, n, (int)st);
            return -1;
        }
        if (!A.failed) {
            if (st == CDNN_STATUS_SUCCESS)
                return n - 1;
            printf("FAIL %s: no failure injected, status %d\n", name, (int)st);
            return -1;
        }
    }
}

int main(void)
{
    if (!CRYPTO_set_mem_functions(crypto_malloc, crypto_realloc, crypto_free))
        return printf("FAIL: libcrypto allocated before main\n"), 1;
    /* libcrypto's per-thread error state is made on first use and kept:
     * made here, so that it is not taken for a leak of a failing run. */
    ERR_clear_error();
    for (size_t i = 0; i < sizeof code_a; i++)
        code_a[i] = (uint8_t)(i * 3 + 1);
    for (size_t i = 0; i < sizeof code_b; i++)
        code_b[i] = (uint8_t)(i * 5 + 2);
    if (sdk_kpack_write(&spec, &pack_bytes, &pack_size, NULL, 0) != CDNN_STATUS_SUCCESS)
        return printf("FAIL: the pack does not write\n"), 1;
    snprintf(pack_path, sizeof pack_path, "/tmp/cdnn-kpack-oom-%ld.kpack", (long)getpid());
    FILE *f = fopen(pack_path, "wb");
    if (!f || fwrite(pack_bytes, 1, pack_size, f) != pack_size || fclose(f) != 0)
        return printf("FAIL: cannot write %s\n", pack_path), 1;
    static const struct {
        const char *name;
        cdnn_status_t (*run)(void);
    } paths[] = {{"open_bytes", open_bytes_path},
                 {"open_file", open_file_path},
                 {"write", write_path}};
    int failed = 0;
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        long n = every_failure(paths[i].name, paths[i].run);
        failed |= n < 0;
        if (n >= 0)
            printf("PASS %s: each of its %ld allocations failed in turn\n", paths[i].name, n);
    }
    unlink(pack_path);
    free(pack_bytes);
    return failed;
}
