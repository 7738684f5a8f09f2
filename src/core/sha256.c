#include "core/sha256.h"

#include <openssl/evp.h>

#include "core/error.h"

void sha256_begin(sha256_t *h)
{
    h->md = EVP_MD_CTX_new();
    h->ok = h->md && EVP_DigestInit_ex(h->md, EVP_sha256(), NULL);
}

void sha256_update(sha256_t *h, const void *data, size_t size)
{
    if (h->ok && size)
        h->ok = EVP_DigestUpdate(h->md, data, size);
}

cdnn_status_t sha256_end(sha256_t *h, uint8_t out[32])
{
    unsigned int len = 0;
    int had_context = h->md != NULL;
    if (h->ok)
        h->ok = EVP_DigestFinal_ex(h->md, out, &len) && len == 32;
    EVP_MD_CTX_free(h->md);
    h->md = NULL;
    if (!had_context)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory for SHA-256");
    if (!h->ok)
        return cdnn_fail(CDNN_STATUS_INTERNAL_ERROR, "SHA-256 failed in libcrypto");
    return CDNN_STATUS_SUCCESS;
}
