/*
 * kpack_internal.h -- what the kernel pack reader (kpack_read.c, kpack.c)
 * and writer (kpack_write.c) share: the header's layout, the TOC's field
 * ids (schema/kernel_pack.fbs, declaration order), the header digest and
 * the pack object.
 */
#ifndef CDNN_SDK_KPACK_INTERNAL_H
#define CDNN_SDK_KPACK_INTERNAL_H

#include <stdatomic.h>

#include <cdnn_sdk/flatbuf.h>
#include <cdnn_sdk/kpack.h>

/* Header fields: byte offsets (docs/FORMATS.md section 9). */
enum {
    HDR_MAGIC = 0,
    HDR_MAJOR = 4,
    HDR_MINOR = 6,
    HDR_SIZE = 8,
    HDR_FLAGS = 12,
    HDR_TOC_OFFSET = 16,
    HDR_TOC_SIZE = 24,
    HDR_SHA256 = 32,
    HDR_DIGESTED = 32, /* the digest covers header bytes [0, 32), then the TOC */
};

enum { TOC_FORMAT_MAJOR, TOC_FORMAT_MINOR, TOC_PACK_NAME, TOC_PACK_VERSION,
       TOC_TARGET_FAMILY, TOC_KERNELS, TOC_ENGINES, TOC_FIELDS };
enum { KERNEL_ID, KERNEL_SYMBOL, KERNEL_TARGET, KERNEL_OFFSET, KERNEL_SIZE,
       KERNEL_SHA256, KERNEL_SIGNATURE, KERNEL_METADATA, KERNEL_FIELDS };
enum { KV_KEY, KV_VALUE, KV_FIELDS };
enum { KNOB_NAME, KNOB_DESCRIPTION, KNOB_MIN, KNOB_MAX, KNOB_DEFAULT, KNOB_FIELDS };
enum { ENGINE_NAME, ENGINE_RANK, ENGINE_MATCH, ENGINE_CONSTRAINTS,
       ENGINE_HANDLER_NAME, ENGINE_HANDLER_VERSION, ENGINE_KNOBS,
       ENGINE_CANDIDATES, ENGINE_FIELDS };

/** SHA-256 of header bytes [0, 32) and then the TOC: 0, or -1 when
 * libcrypto could not allocate. */
int kpack_header_digest(const uint8_t *header, const uint8_t *toc, size_t toc_size,
                        uint8_t out[SDK_SHA256_BYTES]);

struct sdk_kpack {
    sdk_kpack_info_t info;
    char *path;            /* info.path's storage */
    char *reopen_path;     /* absolute, for sdk_kpack_still_on_disk; NULL:
                            * opened from bytes */
    uint8_t *owned;        /* the bytes, when the pack owns them */
    const uint8_t *bytes;  /* the whole file */
    size_t size;
    int32_t kernel_count, engine_count;
    sdk_kpack_kernel_t *kernels;
    sdk_kpack_engine_t *engines;
    sdk_kpack_kv_t *metadata;            /* every kernel's, in one array */
    cdnn_knob_info_t *knobs;             /* every engine's */
    const sdk_kpack_kernel_t **candidates; /* every engine's */
    const sdk_kpack_kernel_t **by_id;    /* kernels sorted by id */
    const sdk_kpack_engine_t **by_name;  /* engines sorted by name */
    /* Per kernel: 1 once its code object matched its SHA-256.  Atomic:
     * threads may ask for code at once; at worst two of them hash it. */
    atomic_uchar *code_checked;
};

/**
 * Check bytes[0, size) as a pack and fill pack's TOC view (pack->bytes and
 * size set by the caller, everything else zero).  On failure returns the
 * status with the bare reason in reason ("kernel 'x' (kernels[2]): ..."),
 * which the caller words for its reader (open) or writer.
 */
cdnn_status_t kpack_parse(sdk_kpack_t *pack, char *reason, size_t reason_cap);

/** Write a printf-style message to why (why_cap bytes; why may be NULL)
 * and return status: every failure of the reader and writer is one line. */
cdnn_status_t kpack_fail(cdnn_status_t status, char *why, size_t why_cap, const char *fmt,
                         ...) __attribute__((format(printf, 4, 5)));

/** Free what kpack_parse allocated, and the pack. */
void kpack_free(sdk_kpack_t *pack);

#endif
