#include "core/sha256.h"

#include <openssl/err.h>
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
    /* SHA-256 is built into libcrypto's default provider, so its calls fail
     * only when libcrypto cannot allocate (it does not always say so on its
     * error queue). */
    if (!h->ok) {
        ERR_clear_error();
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "libcrypto could not %s SHA-256: "
                         "out of memory", had_context ? "compute" : "set up");
    }
    return CDNN_STATUS_SUCCESS;
}
