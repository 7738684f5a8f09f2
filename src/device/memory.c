/*
 * memory.c -- cdnn_memory_*: buffers on a handle's device and copies to
 * and from them, checked against the table of blocks the handle handed out.
 */
#include "device/memory.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "engine/handle.h"

/* What plans may ask of a tensor's pointer, and what cuMemAlloc gives. */
#define BLOCK_ALIGNMENT 256

void memory_table_init(memory_table_t *table)
{
    pthread_mutex_init(&table->lock, NULL);
}

static int on_cuda(const cdnn_handle_t *handle)
{
    return handle->device.kind == CDNN_DEVICE_CUDA;
}

static cdnn_status_t device_alloc(cdnn_handle_t *handle, size_t bytes, void **pointer)
{
    if (on_cuda(handle))
        return cuda_memory_alloc(&handle->cuda, bytes, pointer);
    if (posix_memalign(pointer, BLOCK_ALIGNMENT, bytes) != 0) {
        *pointer = NULL;
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "no room for %zu bytes of host memory",
                         bytes);
    }
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t device_free(cdnn_handle_t *handle, void *pointer)
{
    if (on_cuda(handle))
        return cuda_memory_free(&handle->cuda, pointer);
    free(pointer);
    return CDNN_STATUS_SUCCESS;
}

void memory_table_destroy(cdnn_handle_t *handle)
{
    memory_table_t *table = &handle->memory;
    for (size_t i = 0; i < table->count; i++)
        device_free(handle, (void *)table->blocks[i].start);
    free(table->blocks);
    table->blocks = NULL;
    table->count = table->cap = 0;
    pthread_mutex_destroy(&table->lock);
}

/* The index of the first block that starts above address (binary search). */
static size_t first_above(const memory_table_t *table, uintptr_t address)
{
    size_t lo = 0, hi = table->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (table->blocks[mid].start <= address)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The block holding [address, address + bytes), or NULL.  Lock held. */
static const memory_block_t *block_holding(const memory_table_t *table,
                                           uintptr_t address, size_t bytes)
{
    size_t i = first_above(table, address);
    if (i == 0)
        return NULL;
    const memory_block_t *b = &table->blocks[i - 1];
    size_t offset = address - b->start;
    return offset < b->bytes && bytes <= b->bytes - offset ? b : NULL;
}

static cdnn_status_t table_insert(memory_table_t *table, void *pointer, size_t bytes)
{
    if (table->count == table->cap) {
        size_t cap = table->cap ? 2 * table->cap : 16;
        memory_block_t *grown = realloc(table->blocks, cap * sizeof *grown);
        if (!grown)
            return cdnn_fail(CDNN_STATUS_ALLOC_FAILED,
                             "out of memory recording a device block");
        table->blocks = grown;
        table->cap = cap;
    }
    uintptr_t start = (uintptr_t)pointer;
    size_t i = first_above(table, start);
    memmove(&table->blocks[i + 1], &table->blocks[i],
            (table->count - i) * sizeof table->blocks[0]);
    table->blocks[i] = (memory_block_t){.start = start, .bytes = bytes};
    table->count++;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_memory_alloc(cdnn_handle_t *handle, size_t bytes, void **pointer)
{
    CDNN_CHECK_ARG(pointer);
    *pointer = NULL;
    CDNN_CHECK_ARG(handle);
    if (bytes == 0)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "cdnn_memory_alloc: bytes is 0");
    void *p = NULL;
    cdnn_status_t st = device_alloc(handle, bytes, &p);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    pthread_mutex_lock(&handle->memory.lock);
    st = table_insert(&handle->memory, p, bytes);
    pthread_mutex_unlock(&handle->memory.lock);
    if (st != CDNN_STATUS_SUCCESS) {
        device_free(handle, p);
        return st;
    }
    *pointer = p;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_memory_free(cdnn_handle_t *handle, void *pointer)
{
    CDNN_CHECK_ARG(handle);
    if (!pointer)
        return CDNN_STATUS_SUCCESS;
    memory_table_t *table = &handle->memory;
    pthread_mutex_lock(&table->lock);
    size_t i = first_above(table, (uintptr_t)pointer);
    int found = i > 0 && table->blocks[i - 1].start == (uintptr_t)pointer;
    if (found) {
        memmove(&table->blocks[i - 1], &table->blocks[i],
                (table->count - i) * sizeof table->blocks[0]);
        table->count--;
    }
    pthread_mutex_unlock(&table->lock);
    if (!found)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "cdnn_memory_free: %p is not a block "
                         "that cdnn_memory_alloc gave this handle (%s), or it was "
                         "freed already", pointer, handle->device_string);
    return device_free(handle, pointer);
}

/* Whether [device_pointer, + bytes) lies in one of the handle's blocks. */
static cdnn_status_t check_span(cdnn_handle_t *handle, const char *call,
                                const void *device_pointer, size_t bytes)
{
    pthread_mutex_lock(&handle->memory.lock);
    const memory_block_t *b =
        block_holding(&handle->memory, (uintptr_t)device_pointer, bytes ? bytes : 1);
    pthread_mutex_unlock(&handle->memory.lock);
    if (b)
        return CDNN_STATUS_SUCCESS;
    return cdnn_fail(CDNN_STATUS_BAD_PARAM, "%s: %zu bytes at %p do not lie inside one "
                     "block that cdnn_memory_alloc gave this handle (%s)", call, bytes,
                     device_pointer, handle->device_string);
}

static cdnn_status_t copy(cdnn_handle_t *handle, void *dst, const void *src,
                          size_t bytes, int to_device)
{
    if (bytes == 0)
        return CDNN_STATUS_SUCCESS;
    if (on_cuda(handle))
        return cuda_memory_copy(&handle->cuda, handle->stream, dst, src, bytes,
                                to_device);
    memcpy(dst, src, bytes);
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_memory_upload(cdnn_handle_t *handle, void *device_dst,
                                 const void *host_src, size_t bytes)
{
    CDNN_CHECK_ARG(handle);
    CDNN_CHECK_ARG(device_dst);
    CDNN_CHECK_ARG(host_src);
    cdnn_status_t st = check_span(handle, "cdnn_memory_upload", device_dst, bytes);
    return st != CDNN_STATUS_SUCCESS ? st : copy(handle, device_dst, host_src, bytes, 1);
}

cdnn_status_t cdnn_memory_download(cdnn_handle_t *handle, void *host_dst,
                                   const void *device_src, size_t bytes)
{
    CDNN_CHECK_ARG(handle);
    CDNN_CHECK_ARG(host_dst);
    CDNN_CHECK_ARG(device_src);
    cdnn_status_t st = check_span(handle, "cdnn_memory_download", device_src, bytes);
    return st != CDNN_STATUS_SUCCESS ? st
                                     : copy(handle, host_dst, (void *)device_src, bytes, 0);
}

cdnn_status_t cdnn_handle_synchronize(cdnn_handle_t *handle)
{
    CDNN_CHECK_ARG(handle);
    return on_cuda(handle) ? cuda_stream_wait(&handle->cuda, handle->stream)
                           : CDNN_STATUS_SUCCESS;
}
