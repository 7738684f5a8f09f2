#include <cdnn_sdk/sha256.h>

#include <openssl/err.h>
#include <openssl/evp.h>

/* A failed EVP call may leave entries on libcrypto's per-thread error
 * queue; they are cleared so that they are not blamed on a later,
 * unrelated OpenSSL call of the same thread. */
static int failure(sdk_sha256_t *h)
{
    h->failed = 1;
    ERR_clear_error();
    return -1;
}

int sdk_sha256_begin(sdk_sha256_t *h)
{
    h->failed = 0;
    h->md = EVP_MD_CTX_new();
    if (!h->md || !EVP_DigestInit_ex(h->md, EVP_sha256(), NULL))
        return failure(h);
    return 0;
}

int sdk_sha256_update(sdk_sha256_t *h, const void *data, size_t size)
{
    if (h->failed)
        return -1;
    if (size && !EVP_DigestUpdate(h->md, data, size))
        return failure(h);
    return 0;
}

int sdk_sha256_end(sdk_sha256_t *h, uint8_t out[SDK_SHA256_BYTES])
{
    unsigned int len = 0;
    if (!h->failed && (!EVP_DigestFinal_ex(h->md, out, &len) || len != SDK_SHA256_BYTES))
        failure(h);
    EVP_MD_CTX_free(h->md);
    h->md = NULL;
    return h->failed ? -1 : 0;
}

int sdk_sha256(const void *data, size_t size, uint8_t out[SDK_SHA256_BYTES])
{
    sdk_sha256_t h;
    sdk_sha256_begin(&h);
    sdk_sha256_update(&h, data, size);
    return sdk_sha256_end(&h, out);
}

void sdk_sha256_hex(const uint8_t digest[SDK_SHA256_BYTES],
                    char hex[SDK_SHA256_HEX_SIZE])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < SDK_SHA256_BYTES; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[2 * SDK_SHA256_BYTES] = '\0';
}
