#include "core/sha256.h"

#include "core/error.h"

/* The SDK remembers a failure until sdk_sha256_end, so the status of
 * these two steps is read there. */
void sha256_begin(sha256_t *h)
{
    (void)sdk_sha256_begin(h);
}

void sha256_update(sha256_t *h, const void *data, size_t size)
{
    (void)sdk_sha256_update(h, data, size);
}

cdnn_status_t sha256_end(sha256_t *h, uint8_t out[32])
{
    /* SHA-256 is built into libcrypto's default provider, so its calls
     * fail only when libcrypto cannot allocate. */
    if (sdk_sha256_end(h, out) != 0)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED,
                         "libcrypto could not compute SHA-256: out of memory");
    return CDNN_STATUS_SUCCESS;
}
