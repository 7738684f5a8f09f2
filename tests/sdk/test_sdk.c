/*
 * test_sdk.c -- the provider SDK's own calls (sdk/): SHA-256 against the
 * FIPS 180-2 vectors, the one hex form of a digest, the per-thread error
 * message, the engine table and the payload-knob check, and the CUDA
 * driver loader's all-or-nothing table.  The FlatBuffers runtime has its
 * own test (tests/format/test_flatbuf.c).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <cdnn_sdk/cuda.h>
#include <cdnn_sdk/engines.h>
#include <cdnn_sdk/error.h>
#include <cdnn_sdk/sha256.h>

/* ---- SHA-256 ---------------------------------------------------------------- */

static const char abc_hex[] =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
static const char two_blocks[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
static const char two_blocks_hex[] =
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";

static void expect_digest(const uint8_t digest[SDK_SHA256_BYTES], const char *hex)
{
    char got[SDK_SHA256_HEX_SIZE];
    sdk_sha256_hex(digest, got);
    assert_string_equal(got, hex);
}

static void test_sha256_one_shot(void **state)
{
    (void)state;
    uint8_t digest[SDK_SHA256_BYTES];
    assert_int_equal(sdk_sha256("abc", 3, digest), 0);
    expect_digest(digest, abc_hex);
    assert_int_equal(sdk_sha256("", 0, digest), 0);
    expect_digest(digest, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

/* Updates in pieces, empty ones included, give the digest of the whole. */
static void test_sha256_incremental(void **state)
{
    (void)state;
    uint8_t digest[SDK_SHA256_BYTES];
    sdk_sha256_t h;
    assert_int_equal(sdk_sha256_begin(&h), 0);
    assert_int_equal(sdk_sha256_update(&h, two_blocks, 10), 0);
    assert_int_equal(sdk_sha256_update(&h, two_blocks + 10, 0), 0);
    assert_int_equal(sdk_sha256_update(&h, two_blocks + 10, strlen(two_blocks) - 10), 0);
    assert_int_equal(sdk_sha256_end(&h, digest), 0);
    expect_digest(digest, two_blocks_hex);
    assert_null(h.md);
}

/* Lowercase, two digits a byte, NUL-terminated. */
static void test_sha256_hex(void **state)
{
    (void)state;
    uint8_t digest[SDK_SHA256_BYTES];
    char hex[SDK_SHA256_HEX_SIZE];
    for (int i = 0; i < SDK_SHA256_BYTES; i++)
        digest[i] = (uint8_t)(i * 8 + 7);
    memset(hex, 'x', sizeof hex);
    sdk_sha256_hex(digest, hex);
    assert_string_equal(hex, "070f171f272f373f474f575f676f777f878f979fa7afb7bfc7cfd7dfe7eff7ff");
}

/* ---- the per-thread message ------------------------------------------------- */

static void *fail_elsewhere(void *arg)
{
    (void)arg;
    sdk_fail(CDNN_STATUS_INTERNAL_ERROR, "another thread's failure");
    return NULL;
}

static void test_fail_is_per_thread(void **state)
{
    (void)state;
    assert_int_equal(sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "needs %s, not %d", "f32", 7),
                     CDNN_STATUS_NOT_SUPPORTED);
    assert_string_equal(sdk_last_error(NULL), "needs f32, not 7");
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fail_elsewhere, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_string_equal(sdk_last_error(NULL), "needs f32, not 7");
}

/* ---- the engine table ------------------------------------------------------- */

static const cdnn_knob_info_t tile_knobs[] = {
    {"acme.tile.rows", "rows of a tile", 1, 8, 4},
    {"acme.tile.cols", "columns of a tile", 1, 64, 16},
};
static const sdk_engine_t engines[] = {
    {"acme:tiled", 20, 2, 3, 2, tile_knobs, NULL},
    {"acme:plain", 10, 1, 0, 0, NULL, NULL},
};
static const sdk_engine_table_t table = SDK_ENGINE_TABLE(engines);

static void test_engine_info(void **state)
{
    (void)state;
    cdnn_provider_engine_t info;
    assert_int_equal(sdk_engine_count(&table), 2);
    assert_int_equal(sdk_engine_info(&table, 0, &info), CDNN_STATUS_SUCCESS);
    assert_string_equal(info.name, "acme:tiled");
    assert_int_equal(info.rank, 20);
    assert_int_equal(info.payload_major, 2);
    assert_int_equal(info.payload_minor, 3);
    assert_int_equal(sdk_engine_info(&table, 2, &info), CDNN_STATUS_BAD_PARAM);
    assert_string_equal(sdk_last_error(NULL), "no engine number 2");
    assert_int_equal(sdk_engine_info(&table, -1, &info), CDNN_STATUS_BAD_PARAM);
}

static void test_knob_info(void **state)
{
    (void)state;
    cdnn_knob_info_t knob;
    assert_int_equal(sdk_knob_count(&table, 0), 2);
    assert_int_equal(sdk_knob_count(&table, 1), 0);
    assert_int_equal(sdk_knob_count(&table, 5), 0);
    assert_int_equal(sdk_knob_info(&table, 0, 1, &knob), CDNN_STATUS_SUCCESS);
    assert_string_equal(knob.name, "acme.tile.cols");
    assert_int_equal(knob.max_value, 64);
    assert_int_equal(sdk_knob_info(&table, 1, 0, &knob), CDNN_STATUS_NOT_FOUND);
    assert_string_equal(sdk_last_error(NULL), "no knob number 0");
    assert_int_equal(sdk_knob_info(&table, 7, 0, &knob), CDNN_STATUS_NOT_FOUND);
}

static void expect_refused(const cdnn_knob_value_t *knobs, int32_t count, const char *why)
{
    assert_int_equal(sdk_check_payload_knobs(&engines[0], knobs, count),
                     CDNN_STATUS_CORRUPT_DATA);
    assert_non_null(strstr(sdk_last_error(NULL), "the payload is inconsistent"));
    assert_non_null(strstr(sdk_last_error(NULL), why));
}

static void test_payload_knobs(void **state)
{
    (void)state;
    const cdnn_knob_value_t good[] = {{"acme.tile.cols", 64}, {"acme.tile.rows", 1}};
    assert_int_equal(sdk_check_payload_knobs(&engines[0], good, 2), CDNN_STATUS_SUCCESS);
    assert_int_equal(sdk_check_payload_knobs(&engines[1], NULL, 0), CDNN_STATUS_SUCCESS);

    const cdnn_knob_value_t twice[] = {{"acme.tile.rows", 2}, {"acme.tile.rows", 3}};
    expect_refused(twice, 2, "knob acme.tile.rows is given twice");
    const cdnn_knob_value_t global[] = {{"global.benchmarking", 1}};
    expect_refused(global, 1, "the global knob global.benchmarking");
    const cdnn_knob_value_t unknown[] = {{"acme.tile.depth", 1}};
    expect_refused(unknown, 1, "engine acme:tiled has no knob acme.tile.depth");
    const cdnn_knob_value_t high[] = {{"acme.tile.rows", 9}};
    expect_refused(high, 1, "knob acme.tile.rows=9 is outside [1, 8]");
    const cdnn_knob_value_t low[] = {{"acme.tile.cols", 0}};
    expect_refused(low, 1, "knob acme.tile.cols=0 is outside [1, 64]");
    assert_int_equal(sdk_check_payload_knobs(&engines[1], good, 1), CDNN_STATUS_CORRUPT_DATA);
    assert_non_null(strstr(sdk_last_error(NULL), "engine acme:plain has no knob"));
}

/* ---- the CUDA driver -------------------------------------------------------- */

/* Either every entry point, on every call, or none and a reason. */
static void test_cuda_table_is_whole_or_absent(void **state)
{
    (void)state;
    const char *why = NULL;
    const sdk_cuda_t *cu = sdk_cuda(&why);
    assert_ptr_equal(sdk_cuda(NULL), cu);
    if (!cu) {
        assert_non_null(why);
        assert_true(strlen(why) > 0);
        return;
    }
    for (size_t at = 0; at < sizeof *cu; at += sizeof(void (*)(void))) {
        void (*entry)(void);
        memcpy(&entry, (const char *)cu + at, sizeof entry);
        assert_non_null(entry);
    }
    int count = -1;
    assert_int_equal(cu->device_get_count(&count), SDK_CU_SUCCESS);
    assert_true(count >= 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_one_shot),
        cmocka_unit_test(test_sha256_incremental),
        cmocka_unit_test(test_sha256_hex),
        cmocka_unit_test(test_fail_is_per_thread),
        cmocka_unit_test(test_engine_info),
        cmocka_unit_test(test_knob_info),
        cmocka_unit_test(test_payload_knobs),
        cmocka_unit_test(test_cuda_table_is_whole_or_absent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
