/*
 * tensors.c -- memory for a plan's variant pack (see tensors.h).
 */
#include "tensors.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/numeric.h>

#include "cli.h"

/* The most alignment a tensor may ask for: a page is plenty for any
 * engine, and a bound keeps a hostile plan from asking for absurd ones. */
#define MAX_ALIGNMENT ((int64_t)1 << 16)

/* A plan on the CPU reads the host copies themselves. */
static int on_cpu(const cli_tensors_t *t)
{
    return strcmp(cdnn_handle_device(t->handle), "cpu") == 0;
}

void cli_tensors_free(cli_tensors_t *t)
{
    int separate = t->handle && !on_cpu(t);
    for (int32_t i = 0; t->host && i < t->count; i++) {
        if (separate && t->device)
            cdnn_memory_free(t->handle, t->device[i]);
        free(t->host[i]);
    }
    if (separate)
        cdnn_memory_free(t->handle, t->workspace);
    else
        free(t->workspace);
    free(t->io);
    free(t->uids);
    free(t->host);
    free(t->device);
    memset(t, 0, sizeof *t);
}

/* aligned_alloc wants a size that is a multiple of the alignment. */
static void *alloc_aligned(size_t bytes, int64_t alignment)
{
    size_t align = alignment > 64 ? (size_t)alignment : 64;
    if (bytes > SIZE_MAX - align)
        return NULL;
    return aligned_alloc(align, (bytes + align - 1) / align * align + (bytes ? 0 : align));
}

/* bytes on the plan's device: host memory on the CPU, else a block of
 * cdnn_memory_alloc (256-byte aligned). */
static int alloc_on_device(const char *cmd, cli_tensors_t *t, size_t bytes,
                           int64_t alignment, void *host, void **p)
{
    if (on_cpu(t)) {
        *p = host ? host : alloc_aligned(bytes, alignment);
        return *p ? EXIT_OK
                  : cli_fail(cmd, CDNN_STATUS_ALLOC_FAILED, "cannot allocate %zu B", bytes);
    }
    if (alignment > 256)
        return cli_fail(cmd, CDNN_STATUS_NOT_SUPPORTED,
                        "a tensor asks for alignment %" PRId64 "; device memory from "
                        "cdnn_memory_alloc is aligned to 256", alignment);
    cdnn_status_t st = cdnn_memory_alloc(t->handle, bytes ? bytes : 1, p);
    return st == CDNN_STATUS_SUCCESS ? EXIT_OK : cli_report(cmd, st);
}

static int alloc_one(const char *cmd, cli_tensors_t *t, int32_t i)
{
    const cdnn_tensor_io_t *io = &t->io[i];
    if (cdnn_data_type_size(io->type) == 0)
        return cli_fail(cmd, CDNN_STATUS_CORRUPT_DATA,
                        "tensor uid %" PRId64 " has no valid data type", io->uid);
    if (io->alignment < 0 || io->alignment > MAX_ALIGNMENT ||
        (io->alignment & (io->alignment - 1)))
        return cli_fail(cmd, CDNN_STATUS_NOT_SUPPORTED,
                        "tensor uid %" PRId64 " asks for alignment %" PRId64
                        "; cdnn %s handles powers of two up to %" PRId64,
                        io->uid, io->alignment, cmd, MAX_ALIGNMENT);
    t->uids[i] = io->uid;
    t->host[i] = alloc_aligned(io->span_bytes, io->alignment);
    if (!t->host[i])
        return cli_fail(cmd, CDNN_STATUS_ALLOC_FAILED,
                        "cannot allocate %zu B for tensor uid %" PRId64,
                        io->span_bytes, io->uid);
    return alloc_on_device(cmd, t, io->span_bytes, io->alignment, t->host[i],
                           &t->device[i]);
}

int cli_tensors_alloc(const char *cmd, const cdnn_graph_t *g, cdnn_handle_t *h,
                      cli_tensors_t *t)
{
    memset(t, 0, sizeof *t);
    t->handle = h;
    size_t ws = 0;
    cdnn_status_t st = cdnn_graph_io_tensors(g, NULL, 0, &t->count);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_workspace_size(g, &ws);
    if (st != CDNN_STATUS_SUCCESS)
        return cli_report(cmd, st);
    size_t n = t->count > 0 ? (size_t)t->count : 1;
    t->io = calloc(n, sizeof *t->io);
    t->uids = calloc(n, sizeof *t->uids);
    t->host = calloc(n, sizeof *t->host);
    t->device = calloc(n, sizeof *t->device);
    if (!t->io || !t->uids || !t->host || !t->device)
        return cli_fail(cmd, CDNN_STATUS_ALLOC_FAILED,
                        "out of memory for %d tensors", t->count);
    if ((st = cdnn_graph_io_tensors(g, t->io, t->count, &t->count)) != CDNN_STATUS_SUCCESS)
        return cli_report(cmd, st);
    for (int32_t i = 0; i < t->count; i++)
        if (alloc_one(cmd, t, i) != EXIT_OK)
            return EXIT_FAILED;
    return ws ? alloc_on_device(cmd, t, ws, 256, NULL, &t->workspace) : EXIT_OK;
}

/* Copy tensor i's host copy to the device, or back (to_host). */
static int transfer(const char *cmd, cli_tensors_t *t, int32_t i, int to_host)
{
    if (on_cpu(t))
        return EXIT_OK;
    size_t bytes = t->io[i].span_bytes;
    cdnn_status_t st = to_host ? cdnn_memory_download(t->handle, t->host[i], t->device[i], bytes)
                               : cdnn_memory_upload(t->handle, t->device[i], t->host[i], bytes);
    return st == CDNN_STATUS_SUCCESS ? EXIT_OK : cli_report(cmd, st);
}

/* Uniform in [-1, 1) for floats, small integers, 0 or 1 for bool. */
static void fill_input(const cdnn_tensor_io_t *io, void *p)
{
    size_t elem = cdnn_data_type_size(io->type), n = io->span_bytes / elem;
    uint32_t seed = 0x9e3779b9u ^ (uint32_t)io->uid ^ (uint32_t)((uint64_t)io->uid >> 32);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        double u = (double)(seed >> 8) * 0x1p-23 - 1.0;
        double v = io->type == CDNN_DATA_TYPE_BOOL     ? (double)(seed >> 31)
                   : cdnn_data_type_is_float(io->type) ? u
                                                       : floor(u * 8);
        cdnn_store_element(io->type, (char *)p + i * elem, v);
    }
}

int cli_tensors_fill_inputs(const char *cmd, cli_tensors_t *t)
{
    int rc = EXIT_OK;
    for (int32_t i = 0; i < t->count && rc == EXIT_OK; i++)
        if (!t->io[i].is_output) {
            fill_input(&t->io[i], t->host[i]);
            rc = transfer(cmd, t, i, 0);
        }
    return rc;
}

int cli_tensors_poison_outputs(const char *cmd, cli_tensors_t *t)
{
    int rc = EXIT_OK;
    for (int32_t i = 0; i < t->count && rc == EXIT_OK; i++)
        if (t->io[i].is_output) {
            memset(t->host[i], 0xff, t->io[i].span_bytes);
            rc = transfer(cmd, t, i, 0);
        }
    return rc;
}

int cli_tensors_fetch_outputs(const char *cmd, cli_tensors_t *t)
{
    int rc = EXIT_OK;
    for (int32_t i = 0; i < t->count && rc == EXIT_OK; i++)
        if (t->io[i].is_output)
            rc = transfer(cmd, t, i, 1);
    return rc;
}

int32_t cli_tensors_find(const cli_tensors_t *t, int64_t uid)
{
    for (int32_t i = 0; i < t->count; i++)
        if (t->io[i].uid == uid)
            return i;
    return -1;
}

int cli_tensors_execute(const char *cmd, const cdnn_graph_t *g, cli_tensors_t *t)
{
    cdnn_status_t st = cdnn_graph_execute(g, t->handle, t->count, t->uids,
                                          (void *const *)t->device, t->workspace);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_handle_synchronize(t->handle);
    return st == CDNN_STATUS_SUCCESS ? EXIT_OK : cli_report(cmd, st);
}
