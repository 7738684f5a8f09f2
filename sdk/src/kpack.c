/*
 * kpack.c -- opening a kernel pack (the file read whole, then kpack_read.c's
 * checks), what an opened pack answers, its code objects (SHA-256 first)
 * and rule 4's check of the file on disk.
 */
#include "kpack_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int kpack_header_digest(const uint8_t *header, const uint8_t *toc, size_t toc_size,
                        uint8_t out[SDK_SHA256_BYTES])
{
    sdk_sha256_t h;
    sdk_sha256_begin(&h);
    sdk_sha256_update(&h, header, HDR_DIGESTED);
    sdk_sha256_update(&h, toc, toc_size);
    return sdk_sha256_end(&h, out);
}

void kpack_free(sdk_kpack_t *pack)
{
    if (!pack)
        return;
    free(pack->kernels);
    free(pack->engines);
    free(pack->metadata);
    free(pack->knobs);
    free(pack->candidates);
    free(pack->by_id);
    free(pack->by_name);
    free(pack->code_checked);
    free(pack->owned);
    free(pack->path);
    free(pack->reopen_path);
    free(pack);
}

void sdk_kpack_close(sdk_kpack_t *pack)
{
    kpack_free(pack);
}

cdnn_status_t kpack_fail(cdnn_status_t status, char *why, size_t why_cap, const char *fmt,
                         ...)
{
    if (why && why_cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_cap, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* ---- opening ---------------------------------------------------------------- */

/* A pack over bytes it owns (taken over, freed with it), named name. */
static cdnn_status_t parse_owned(uint8_t *bytes, size_t size, const char *name,
                                 char *reopen_path, sdk_kpack_t **out, char *why,
                                 size_t why_cap)
{
    sdk_kpack_t *pack = calloc(1, sizeof *pack);
    char *path = strdup(name);
    if (!pack || !path) {
        free(bytes);
        free(path);
        free(pack);
        free(reopen_path);
        return kpack_fail(CDNN_STATUS_ALLOC_FAILED, why, why_cap,
                          "kernel pack '%s': out of memory", name);
    }
    pack->owned = bytes;
    pack->bytes = bytes;
    pack->size = size;
    pack->path = path;
    pack->info.path = path;
    pack->reopen_path = reopen_path;
    char reason[1024];
    cdnn_status_t st = kpack_parse(pack, reason, sizeof reason);
    if (st == CDNN_STATUS_SUCCESS) {
        *out = pack;
        return st;
    }
    kpack_free(pack);
    return kpack_fail(st, why, why_cap, "kernel pack '%s' %s: %s", name,
                      st == CDNN_STATUS_CORRUPT_DATA    ? "is damaged"
                      : st == CDNN_STATUS_NOT_SUPPORTED ? "cannot be read by this cdnn"
                                                        : "cannot be opened",
                      reason);
}

cdnn_status_t sdk_kpack_open_bytes(const void *bytes, size_t size, const char *name,
                                   sdk_kpack_t **pack, char *why, size_t why_cap)
{
    name = name ? name : "(bytes)";
    if (!pack || (!bytes && size))
        return kpack_fail(CDNN_STATUS_BAD_PARAM, why, why_cap,
                          "sdk_kpack_open_bytes: no pack pointer or no bytes");
    *pack = NULL;
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return kpack_fail(CDNN_STATUS_ALLOC_FAILED, why, why_cap,
                          "kernel pack '%s': out of memory copying %zu bytes", name, size);
    if (size)
        memcpy(copy, bytes, size);
    return parse_owned(copy, size, name, NULL, pack, why, why_cap);
}

/* Read all n bytes at offset, stopping early only at the end of the file:
 * the count read, or -1 with errno. */
static ssize_t read_at(int fd, uint8_t *buf, size_t n, uint64_t offset)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)(offset + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* The status an errno value is: a missing file, memory, or the file
 * system. */
static cdnn_status_t errno_status(int err)
{
    return err == ENOENT   ? CDNN_STATUS_NOT_FOUND
           : err == ENOMEM ? CDNN_STATUS_ALLOC_FAILED
                           : CDNN_STATUS_IO_ERROR;
}

static cdnn_status_t file_failure(const char *path, int err, const char *doing, char *why,
                                  size_t why_cap)
{
    return kpack_fail(errno_status(err), why, why_cap, "kernel pack '%s' cannot be %s: %s",
                      path, doing, strerror(err));
}

/* The regular file at fd, whole, into *bytes: its size as fstat says, then
 * nothing more (a file that changes while read is refused). */
static cdnn_status_t read_whole(int fd, const char *path, uint8_t **bytes, size_t *size,
                                char *why, size_t why_cap)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return file_failure(path, errno, "read", why, why_cap);
    if (!S_ISREG(st.st_mode))
        return file_failure(path, S_ISDIR(st.st_mode) ? EISDIR : EINVAL, "read (it is not "
                            "a regular file)", why, why_cap);
    if ((uint64_t)st.st_size > SDK_KPACK_MAX_BYTES)
        return kpack_fail(CDNN_STATUS_NOT_SUPPORTED, why, why_cap,
                          "kernel pack '%s' is %lld bytes, larger than the %llu a pack "
                          "may be", path, (long long)st.st_size,
                          (unsigned long long)SDK_KPACK_MAX_BYTES);
    size_t n = (size_t)st.st_size;
    uint8_t extra, *buf = malloc(n ? n : 1);
    if (!buf)
        return kpack_fail(CDNN_STATUS_ALLOC_FAILED, why, why_cap,
                          "kernel pack '%s': out of memory reading %zu bytes", path, n);
    ssize_t got = read_at(fd, buf, n, 0);
    ssize_t more = got == (ssize_t)n ? read_at(fd, &extra, 1, n) : 0;
    if (got < 0 || more < 0) {
        free(buf);
        return file_failure(path, errno, "read", why, why_cap);
    }
    if ((size_t)got != n || more != 0) {
        free(buf);
        return kpack_fail(CDNN_STATUS_IO_ERROR, why, why_cap,
                          "kernel pack '%s' changed size while it was read", path);
    }
    *bytes = buf;
    *size = n;
    return CDNN_STATUS_SUCCESS;
}

/* path made absolute, so that rule 4's re-read finds the same file after the
 * process changes directory.  Symbolic links are kept: what is checked is
 * whatever the path names then. */
static char *absolute_path(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    char *cwd = getcwd(NULL, 0);
    if (!cwd)
        return NULL;
    size_t n = strlen(cwd) + strlen(path) + 2;
    char *joined = malloc(n);
    if (joined)
        snprintf(joined, n, "%s/%s", cwd, path);
    free(cwd);
    return joined;
}

cdnn_status_t sdk_kpack_open(const char *path, sdk_kpack_t **pack, char *why,
                             size_t why_cap)
{
    if (!path || !pack)
        return kpack_fail(CDNN_STATUS_BAD_PARAM, why, why_cap,
                          "sdk_kpack_open: no path or no pack pointer");
    *pack = NULL;
    char *reopen = absolute_path(path);
    if (!reopen)
        return file_failure(path, errno, "opened", why, why_cap);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        free(reopen);
        return file_failure(path, err, "opened", why, why_cap);
    }
    uint8_t *bytes = NULL;
    size_t size = 0;
    cdnn_status_t st = read_whole(fd, path, &bytes, &size, why, why_cap);
    close(fd);
    if (st != CDNN_STATUS_SUCCESS) {
        free(reopen);
        return st;
    }
    return parse_owned(bytes, size, path, reopen, pack, why, why_cap);
}

/* ---- what an opened pack answers ------------------------------------------------- */

const sdk_kpack_info_t *sdk_kpack_info(const sdk_kpack_t *pack)
{
    return pack ? &pack->info : NULL;
}

int32_t sdk_kpack_kernel_count(const sdk_kpack_t *pack)
{
    return pack ? pack->kernel_count : 0;
}

const sdk_kpack_kernel_t *sdk_kpack_kernel(const sdk_kpack_t *pack, int32_t index)
{
    return pack && index >= 0 && index < pack->kernel_count ? &pack->kernels[index] : NULL;
}

int32_t sdk_kpack_engine_count(const sdk_kpack_t *pack)
{
    return pack ? pack->engine_count : 0;
}

const sdk_kpack_engine_t *sdk_kpack_engine(const sdk_kpack_t *pack, int32_t index)
{
    return pack && index >= 0 && index < pack->engine_count ? &pack->engines[index] : NULL;
}

const sdk_kpack_kernel_t *sdk_kpack_find_sha256(const sdk_kpack_t *pack,
                                                const uint8_t sha256[SDK_SHA256_BYTES])
{
    for (int32_t i = 0; pack && sha256 && i < pack->kernel_count; i++)
        if (memcmp(pack->kernels[i].sha256, sha256, SDK_SHA256_BYTES) == 0)
            return &pack->kernels[i];
    return NULL;
}

const char *sdk_kpack_metadata(const sdk_kpack_kernel_t *kernel, const char *key)
{
    for (int32_t i = 0; kernel && key && i < kernel->metadata_count; i++)
        if (strcmp(kernel->metadata[i].key, key) == 0)
            return kernel->metadata[i].value;
    return NULL;
}

/* Whether kernel is one of pack's (a caller mixing packs up gets BAD_PARAM,
 * not another pack's bytes). */
static int owns(const sdk_kpack_t *pack, const sdk_kpack_kernel_t *kernel)
{
    return pack && kernel && kernel->index >= 0 && kernel->index < pack->kernel_count &&
           &pack->kernels[kernel->index] == kernel;
}

cdnn_status_t sdk_kpack_code(const sdk_kpack_t *pack, const sdk_kpack_kernel_t *kernel,
                             const uint8_t **bytes, size_t *size, char *why,
                             size_t why_cap)
{
    if (!owns(pack, kernel) || !bytes || !size)
        return kpack_fail(CDNN_STATUS_BAD_PARAM, why, why_cap, "sdk_kpack_code: no pack, a "
                          "kernel of another pack, or no output pointers");
    const uint8_t *code = pack->bytes + kernel->offset;
    atomic_uchar *checked = &pack->code_checked[kernel->index];
    if (!atomic_load_explicit(checked, memory_order_acquire)) {
        uint8_t digest[SDK_SHA256_BYTES];
        if (sdk_sha256(code, (size_t)kernel->size, digest) != 0)
            return kpack_fail(CDNN_STATUS_ALLOC_FAILED, why, why_cap,
                              "kernel pack '%s': out of memory computing a SHA-256",
                              pack->path);
        if (memcmp(digest, kernel->sha256, SDK_SHA256_BYTES) != 0)
            return kpack_fail(CDNN_STATUS_CORRUPT_DATA, why, why_cap,
                              "kernel pack '%s' is damaged: kernel '%s' (kernels[%d]): its "
                              "code object (%llu bytes at offset %llu) does not match its "
                              "SHA-256", pack->path, kernel->id, kernel->index,
                              (unsigned long long)kernel->size,
                              (unsigned long long)kernel->offset);
        atomic_store_explicit(checked, 1, memory_order_release);
    }
    *bytes = code;
    *size = (size_t)kernel->size;
    return CDNN_STATUS_SUCCESS;
}

/* ---- rule 4: the file on disk ------------------------------------------------ */

/* The SHA-256 of n bytes at offset of fd: 0, 1 when the file ends first,
 * -1 with errno (ENOMEM when hashing failed). */
static int hash_range(int fd, uint64_t offset, uint64_t n, uint8_t out[SDK_SHA256_BYTES])
{
    uint8_t chunk[65536];
    sdk_sha256_t h;
    sdk_sha256_begin(&h);
    int rc = 0;
    for (uint64_t done = 0; rc == 0 && done < n;) {
        size_t want = n - done < sizeof chunk ? (size_t)(n - done) : sizeof chunk;
        ssize_t got = read_at(fd, chunk, want, offset + done);
        rc = got < 0 ? -1 : (size_t)got < want ? 1 : 0;
        if (got > 0)
            sdk_sha256_update(&h, chunk, (size_t)got);
        done += want;
    }
    int err = errno;
    if (sdk_sha256_end(&h, out) != 0 && rc == 0) {
        err = ENOMEM;
        rc = -1;
    }
    errno = err;
    return rc;
}

/* The file's header still the one read (its digest covers the whole TOC),
 * and kernel's bytes there still its SHA-256. */
static cdnn_status_t compare_file(const sdk_kpack_t *pack, int fd,
                                  const sdk_kpack_kernel_t *kernel, const char **change)
{
    uint8_t header[SDK_KPACK_HEADER_BYTES], digest[SDK_SHA256_BYTES];
    ssize_t got = read_at(fd, header, sizeof header, 0);
    if (got < 0)
        return errno_status(errno);
    if (got != (ssize_t)sizeof header || memcmp(header, pack->bytes, sizeof header) != 0) {
        *change = "its header (and so its table of contents) is not the one read";
        return CDNN_STATUS_BAD_STATE;
    }
    int rc = hash_range(fd, kernel->offset, kernel->size, digest);
    if (rc < 0)
        return errno_status(errno);
    if (rc > 0 || memcmp(digest, kernel->sha256, SDK_SHA256_BYTES) != 0) {
        *change = rc > 0 ? "the file now ends inside the kernel's code object"
                         : "the kernel's code object there no longer matches its SHA-256";
        return CDNN_STATUS_BAD_STATE;
    }
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t sdk_kpack_still_on_disk(const sdk_kpack_t *pack,
                                      const sdk_kpack_kernel_t *kernel, char *why,
                                      size_t why_cap)
{
    if (!owns(pack, kernel) || !pack->reopen_path)
        return kpack_fail(CDNN_STATUS_BAD_PARAM, why, why_cap,
                          "sdk_kpack_still_on_disk: no pack, a kernel of another pack, or "
                          "a pack opened from bytes (it has no file to check)");
    int fd = open(pack->reopen_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        return kpack_fail(errno_status(err), why, why_cap,
                          "kernel pack '%s' cannot be opened again to check kernel "
                          "'%s' against it: %s", pack->path, kernel->id, strerror(err));
    }
    const char *change = NULL;
    cdnn_status_t st = compare_file(pack, fd, kernel, &change);
    int err = errno;
    close(fd);
    if (st == CDNN_STATUS_BAD_STATE)
        return kpack_fail(st, why, why_cap, "kernel pack '%s' changed on disk since it was "
                          "opened, so kernel '%s' cannot be checked against it: %s",
                          pack->path, kernel->id, change);
    if (st != CDNN_STATUS_SUCCESS)
        return kpack_fail(st, why, why_cap, "kernel pack '%s' cannot be read again to check "
                          "kernel '%s' against it: %s", pack->path, kernel->id,
                          strerror(err));
    return st;
}
