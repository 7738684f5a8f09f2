/*
 * kpack.h -- kernel packs: one file of precompiled code objects (x86-64
 * shared objects, cubins, PTX) per target family, with a table of contents
 * (TOC) naming every kernel and the engines built on them.  The reader
 * treats a pack as hostile; the writer is what `cdnn pack build` and tests
 * make packs with.  The bytes: docs/FORMATS.md section 9; the TOC's schema:
 * schema/kernel_pack.fbs.
 *
 *     file:   header (64 bytes) | code objects, each 64-byte aligned,
 *             zero padding between | TOC (a FlatBuffers buffer, "CDKT")
 *     header: 0 "CDKP" | 4 u16 major | 6 u16 minor | 8 u32 header size (64)
 *             | 12 u32 flags (0) | 16 u64 TOC offset | 24 u64 TOC size
 *             | 32 SHA-256 (32 bytes)
 *
 * Refinements of the lead's design (ISSUE10-design.md sections 1 and 2),
 * each checked by the reader:
 *   - The header's SHA-256 covers header bytes 0..31 and then the TOC, not
 *     the TOC alone, so that no header field (the version included) is
 *     read before a digest has proven it intact: a flipped version byte is
 *     damage, never "too new" (docs/FORMATS.md section 6, "Digest first").
 *     Bytes 0..63 keep their meaning in every format major.
 *   - Every byte of the file is accounted for: the file ends where the TOC
 *     ends, and every byte between code objects is zero.
 *   - Kernels may share one code object (the same offset, size and
 *     SHA-256): a cubin or shared object with several entry points is
 *     stored once.  Ranges that are not identical may not overlap.
 *   - Engines are checked too: unique names, candidates that name kernels
 *     of the pack (each once), knobs with min <= default <= max, each named
 *     once.  Engine ids are not stored: cdnn derives an engine's id from its
 *     name (FNV-1a), and providers never hash.
 *   - Strings: names (ids, symbols, targets, signatures, metadata keys,
 *     engine, match, handler and knob names, pack name and version, target
 *     family) are 1..255 bytes of printable ASCII without spaces; text
 *     (metadata values, knob descriptions, constraints JSON) is printable
 *     ASCII with spaces, at most 65535 bytes.
 *   - Any minor of format 1 is read (a newer minor only adds TOC fields);
 *     nonzero header flags are NOT_SUPPORTED (an intact pack that asks for
 *     something this reader does not know), not damage.
 *
 * Statuses: CORRUPT_DATA for damage ("kernel pack 'P' is damaged: ..."),
 * NOT_SUPPORTED for an intact pack this reader cannot read ("kernel pack
 * 'P' cannot be read by this cdnn: ..."), IO_ERROR / NOT_FOUND for the file
 * system, ALLOC_FAILED, BAD_PARAM for bad arguments and for a writer spec
 * that would not make a valid pack ("cannot write kernel pack 'N': ...").
 * Messages name the pack and, where one is at fault, the kernel or engine
 * ("kernel 'matmul_6x16' (kernels[2]): its offset 100 is not 64-byte
 * aligned").  They go to why (why_cap bytes, NUL-terminated; why may be
 * NULL), not to the thread's sdk_fail message, so that a caller adds its own
 * words: `return sdk_fail(st, "%s", why);`.
 *
 * Threads: an opened pack is read-only and may be used from many threads
 * at once (sdk_kpack_code included); close it once, when no thread uses it.
 */
#ifndef CDNN_SDK_KPACK_H
#define CDNN_SDK_KPACK_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/provider.h>
#include <cdnn_sdk/sha256.h>

#define SDK_KPACK_MAGIC "CDKP"
#define SDK_KPACK_TOC_IDENTIFIER "CDKT"
/* The format this SDK writes; it reads major 1, any minor. */
#define SDK_KPACK_FORMAT_MAJOR 1
#define SDK_KPACK_FORMAT_MINOR 0
#define SDK_KPACK_HEADER_BYTES 64
/* Code objects and the TOC start at multiples of this (a cache line; what
 * cuModuleLoadData and an in-memory ELF image are happy with). */
#define SDK_KPACK_ALIGN 64
/* The largest pack read or written: the TOC is a FlatBuffers buffer, which
 * stays below 2 GiB, and a pack is read into memory whole. */
#define SDK_KPACK_MAX_BYTES ((uint64_t)1 << 31)
/* What one pack may list (hostile input cannot make a reader allocate or
 * sort without bound). */
#define SDK_KPACK_MAX_KERNELS 65536
#define SDK_KPACK_MAX_ENGINES 4096
/* Metadata entries per kernel, knobs per engine, candidates per engine. */
#define SDK_KPACK_MAX_ENTRIES 1024
#define SDK_KPACK_MAX_NAME 255
#define SDK_KPACK_MAX_TEXT 65535

typedef struct sdk_kpack sdk_kpack_t; /* an opened pack: its bytes and TOC */

typedef struct sdk_kpack_kv {
    const char *key;
    const char *value;
} sdk_kpack_kv_t;

/* A kernel of an opened pack.  Strings point into the pack's bytes and live
 * as long as the pack. */
typedef struct sdk_kpack_kernel {
    int32_t index; /* its position in the TOC */
    const char *id;
    const char *symbol;
    const char *target;
    const char *signature;
    uint64_t offset, size; /* its code object in the file */
    uint8_t sha256[SDK_SHA256_BYTES];
    int32_t metadata_count;
    const sdk_kpack_kv_t *metadata; /* in TOC order, keys unique */
} sdk_kpack_kernel_t;

/* An engine of an opened pack (a descriptor, compiled). */
typedef struct sdk_kpack_engine {
    int32_t index;
    const char *name; /* "kernels:matmul_host" */
    int32_t rank;
    const char *match;
    const char *constraints_json;
    const char *handler_name;
    uint32_t handler_version;
    int32_t knob_count;
    const cdnn_knob_info_t *knobs;
    int32_t candidate_count; /* at least 1 */
    const sdk_kpack_kernel_t *const *candidates; /* kernels of this pack */
} sdk_kpack_engine_t;

typedef struct sdk_kpack_info {
    const char *path; /* as given to sdk_kpack_open, or the name given to
                       * sdk_kpack_open_bytes */
    const char *name, *version, *target_family;
    uint16_t format_major, format_minor;
    uint64_t file_size;
    uint64_t toc_offset, toc_size;
    uint8_t sha256[SDK_SHA256_BYTES]; /* the header's digest: names this TOC */
} sdk_kpack_info_t;

/* ---- reading ---------------------------------------------------------------- */

/**
 * Open the pack at path: read the file whole (a regular file of at most
 * SDK_KPACK_MAX_BYTES; the pack keeps its own copy, so a file replaced
 * later changes nothing already open) and check, in order:
 *   1. the file holds a header (64 bytes) and starts with "CDKP";
 *   2. the TOC's range lies after the header and inside the file;
 *   3. the SHA-256 of header bytes 0..31 and the TOC equals header bytes
 *      32..63;
 *   4. the version: major 1 (else NOT_SUPPORTED), any minor;
 *   5. header size 64, flags 0 (else NOT_SUPPORTED), TOC offset 64-aligned,
 *      the file ends where the TOC ends;
 *   6. the TOC verifies as a KernelPackToc with identifier "CDKT", and its
 *      version equals the header's;
 *   7. pack name, version and target family present and sane; counts
 *      within the limits above;
 *   8. each kernel: id, symbol, target, signature present and sane;
 *      metadata keys sane and unique, values sane; sha256 32 bytes; its
 *      code object non-empty, 64-byte aligned, inside [64, TOC offset);
 *   9. kernel ids unique;
 *  10. code objects identical (sharing) or disjoint; bytes between them
 *      zero;
 *  11. each engine: name, match, handler present and sane, constraints
 *      sane; knobs named sanely and once, min <= default <= max; at least
 *      one candidate, each a kernel id of the pack, each once; engine
 *      names unique.
 * Code objects' SHA-256 are checked later, by sdk_kpack_code, before their
 * bytes are first handed out (a provider opens every installed pack but
 * runs few of its kernels).  On failure *pack is NULL.
 */
cdnn_status_t sdk_kpack_open(const char *path, sdk_kpack_t **pack, char *why,
                             size_t why_cap);

/** sdk_kpack_open on bytes in memory, copied (tests, fuzzing).  name
 * stands for the path in messages and info (NULL: "(bytes)"); such a pack
 * has no file for sdk_kpack_still_on_disk. */
cdnn_status_t sdk_kpack_open_bytes(const void *bytes, size_t size, const char *name,
                                   sdk_kpack_t **pack, char *why, size_t why_cap);

void sdk_kpack_close(sdk_kpack_t *pack);

const sdk_kpack_info_t *sdk_kpack_info(const sdk_kpack_t *pack);

int32_t sdk_kpack_kernel_count(const sdk_kpack_t *pack);
/** Kernel number index in TOC order; NULL past the end. */
const sdk_kpack_kernel_t *sdk_kpack_kernel(const sdk_kpack_t *pack, int32_t index);
/** The kernel with this id, or NULL. */
const sdk_kpack_kernel_t *sdk_kpack_find(const sdk_kpack_t *pack, const char *id);
/** A kernel whose recorded SHA-256 is sha256, or NULL: strict mode
 * (CDNN_TRUSTED_CODE=pack) asks whether a plan's code is in an installed
 * pack.  It compares the TOC's digests; the plan carries its own bytes. */
const sdk_kpack_kernel_t *sdk_kpack_find_sha256(const sdk_kpack_t *pack,
                                                const uint8_t sha256[SDK_SHA256_BYTES]);
/** The value of a kernel's metadata key, or NULL. */
const char *sdk_kpack_metadata(const sdk_kpack_kernel_t *kernel, const char *key);

/**
 * The code object of kernel (a kernel of pack): its bytes in the pack's
 * copy of the file, valid while the pack is open.  Its SHA-256 is checked
 * against the TOC the first time it is asked for (CORRUPT_DATA if they
 * differ, naming pack and kernel; the bytes are then never handed out).
 */
cdnn_status_t sdk_kpack_code(const sdk_kpack_t *pack, const sdk_kpack_kernel_t *kernel,
                             const uint8_t **bytes, size_t *size, char *why,
                             size_t why_cap);

/**
 * Rule 4 (docs/CONTRACT.md): is the file the pack was opened from still
 * that pack, holding kernel's code?  Reads the file's header again (its
 * digest covers the whole TOC) and the kernel's bytes, and compares them
 * with the pack's: BAD_STATE "kernel pack 'P' changed on disk since it was
 * opened, so kernel 'K' cannot be checked against it: ..." when they differ
 * or the file is now shorter (what the plan holds is intact; the world
 * changed), IO_ERROR / NOT_FOUND when it cannot be read, BAD_PARAM for a
 * pack opened from bytes.
 */
cdnn_status_t sdk_kpack_still_on_disk(const sdk_kpack_t *pack,
                                      const sdk_kpack_kernel_t *kernel, char *why,
                                      size_t why_cap);

int32_t sdk_kpack_engine_count(const sdk_kpack_t *pack);
/** Engine number index in TOC order; NULL past the end. */
const sdk_kpack_engine_t *sdk_kpack_engine(const sdk_kpack_t *pack, int32_t index);
/** The engine with this name, or NULL. */
const sdk_kpack_engine_t *sdk_kpack_find_engine(const sdk_kpack_t *pack,
                                                const char *name);

/** Whether s may stand where the pack holds a name (an id, symbol, target,
 * ...: 1..255 printable ASCII characters, no space) or text (at most 65535
 * printable ASCII characters, spaces included): for tools that check their
 * input before they write a pack. */
int sdk_kpack_is_name(const char *s);
int sdk_kpack_is_text(const char *s);

/* ---- writing ---------------------------------------------------------------- */

typedef struct sdk_kpack_spec_kernel {
    const char *id, *symbol, *target, *signature;
    const void *code;
    size_t code_size;
    int32_t metadata_count;
    const sdk_kpack_kv_t *metadata;
} sdk_kpack_spec_kernel_t;

typedef struct sdk_kpack_spec_engine {
    const char *name;
    int32_t rank;
    const char *match;
    const char *constraints_json;
    const char *handler_name;
    uint32_t handler_version;
    int32_t knob_count;
    const cdnn_knob_info_t *knobs;
    int32_t candidate_count;
    const char *const *candidates; /* kernel ids of spec->kernels */
} sdk_kpack_spec_engine_t;

typedef struct sdk_kpack_spec {
    const char *name, *version, *target_family;
    int32_t kernel_count;
    const sdk_kpack_spec_kernel_t *kernels;
    int32_t engine_count;
    const sdk_kpack_spec_engine_t *engines;
} sdk_kpack_spec_t;

/**
 * The pack of spec, in format 1.0, into *bytes (malloc'd; free it).  The
 * bytes are a pure function of spec: kernels and engines in spec's order;
 * code objects in order of first use, identical ones stored once, each at
 * the next multiple of 64, zero padding; the TOC built by the SDK's
 * FlatBuffers builder (docs/FORMATS.md section 9 gives the order).  The
 * result is opened with sdk_kpack_open_bytes before it is returned, so the
 * writer never hands out a pack the reader refuses: a spec that would make
 * one fails with BAD_PARAM and the reader's reason.
 */
cdnn_status_t sdk_kpack_write(const sdk_kpack_spec_t *spec, uint8_t **bytes,
                              size_t *size, char *why, size_t why_cap);

#endif
