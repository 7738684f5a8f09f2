/*
 * handle.c -- handles, devices and engine listing.
 */
#include "engine/handle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "engine/registry.h"

/* "cpu", "cuda" or "cuda:N" into kind and ordinal. */
static cdnn_status_t parse_device(const char *s, cdnn_device_kind_t *kind,
                                  int *ordinal)
{
    *ordinal = 0;
    if (strcmp(s, "cpu") == 0) {
        *kind = CDNN_DEVICE_CPU;
        return CDNN_STATUS_SUCCESS;
    }
    *kind = CDNN_DEVICE_CUDA;
    if (strcmp(s, "cuda") == 0)
        return CDNN_STATUS_SUCCESS;
    char *end = NULL;
    long n = strncmp(s, "cuda:", 5) == 0 ? strtol(s + 5, &end, 10) : -1;
    if (n < 0 || n > 1023 || !end || end == s + 5 || *end)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM,
                         "device \"%s\" is not \"cpu\", \"cuda\" or \"cuda:N\"", s);
    *ordinal = (int)n;
    return CDNN_STATUS_SUCCESS;
}

static int cpu_thread_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

/* The CPU's model name from /proc/cpuinfo, or "unknown". */
static void cpu_model(char *out, size_t cap)
{
    char line[256];
    snprintf(out, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            colon += 1 + (colon[1] == ' ');
            colon[strcspn(colon, "\n")] = 0;
            snprintf(out, cap, "%s", colon);
            break;
        }
    }
    if (f)
        fclose(f);
}

static cdnn_status_t open_device(cdnn_handle_t *h, cdnn_device_kind_t kind,
                                 int ordinal)
{
    h->device.struct_size = sizeof h->device;
    h->device.kind = kind;
    h->device.ordinal = ordinal;
    h->device.cpu_threads = cpu_thread_count();
    if (kind == CDNN_DEVICE_CPU) {
        snprintf(h->device_string, sizeof h->device_string, "cpu");
        char model[96];
        cpu_model(model, sizeof model);
        snprintf(h->description, sizeof h->description, "cpu (%s, %d threads)", model,
                 h->device.cpu_threads);
        snprintf(h->device_key, sizeof h->device_key, "cpu/%s/%dt", model,
                 h->device.cpu_threads);
        h->device.name = "cpu";
        return CDNN_STATUS_SUCCESS;
    }
    cdnn_status_t st = cuda_device_open(ordinal, &h->cuda);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    snprintf(h->device_string, sizeof h->device_string, "cuda:%d", ordinal);
    h->device.arch = h->cuda.arch;
    h->device.cuda_context = h->cuda.context;
    h->device.name = h->cuda.name;
    snprintf(h->description, sizeof h->description, "cuda:%d (%s, sm_%d)", ordinal,
             h->cuda.name, h->cuda.arch);
    snprintf(h->device_key, sizeof h->device_key, "cuda/%s/sm_%d", h->cuda.name,
             h->cuda.arch);
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_handle_create(cdnn_handle_t **handle, const char *device)
{
    CDNN_CHECK_ARG(handle);
    CDNN_CHECK_ARG(device);
    *handle = NULL;
    cdnn_device_kind_t kind;
    int ordinal;
    cdnn_status_t st = parse_device(device, &kind, &ordinal);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    cdnn_handle_t *h = calloc(1, sizeof *h);
    if (!h)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory creating a handle");
    memory_table_init(&h->memory);
    st = open_device(h, kind, ordinal);
    if (st == CDNN_STATUS_SUCCESS)
        st = registry_acquire();
    if (st != CDNN_STATUS_SUCCESS) {
        if (kind == CDNN_DEVICE_CUDA)
            cuda_device_close(&h->cuda);
        memory_table_destroy(h);
        free(h);
        return st;
    }
    *handle = h;
    return CDNN_STATUS_SUCCESS;
}

void cdnn_handle_destroy(cdnn_handle_t *handle)
{
    if (!handle)
        return;
    memory_table_destroy(handle);
    if (handle->device.kind == CDNN_DEVICE_CUDA)
        cuda_device_close(&handle->cuda);
    registry_release();
    free(handle);
}

const char *cdnn_handle_device(const cdnn_handle_t *handle)
{
    return handle ? handle->device_string : "";
}

const char *cdnn_handle_device_description(const cdnn_handle_t *handle)
{
    return handle ? handle->description : "";
}

cdnn_status_t cdnn_handle_set_stream(cdnn_handle_t *handle, void *stream)
{
    CDNN_CHECK_ARG(handle);
    if (stream && handle->device.kind == CDNN_DEVICE_CPU)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM,
                         "a CPU handle takes no stream; pass NULL");
    handle->stream = stream;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_handle_engine_count(const cdnn_handle_t *handle,
                                       int32_t *count)
{
    CDNN_CHECK_ARG(handle);
    CDNN_CHECK_ARG(count);
    *count = registry_engine_count();
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cdnn_handle_engine_info(const cdnn_handle_t *handle,
                                      int32_t index, cdnn_engine_info_t *info)
{
    CDNN_CHECK_ARG(handle);
    CDNN_CHECK_ARG(info);
    const engine_slot_t *e = registry_engine(index);
    if (!e)
        return cdnn_fail(CDNN_STATUS_BAD_PARAM, "engine index %d is out of range "
                         "(0..%d)", index, registry_engine_count() - 1);
    info->id = e->id;
    info->name = e->name;
    info->provider = e->provider->table->name;
    info->provider_version = e->provider->table->version;
    info->provider_path = e->provider->path;
    return CDNN_STATUS_SUCCESS;
}
