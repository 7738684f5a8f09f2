/*
 * test_sdk.c -- the provider SDK's own calls (sdk/): SHA-256 against the
 * FIPS 180-2 vectors, the one hex form of a digest, and the CUDA driver
 * loader's all-or-nothing table.  The FlatBuffers runtime has its own test
 * (tests/format/test_flatbuf.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <cdnn_sdk/cuda.h>
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
        cmocka_unit_test(test_cuda_table_is_whole_or_absent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
