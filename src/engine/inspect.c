/*
 * inspect.c -- cdnn_blob_inspect: what a blob holds, verified, without
 * loading anything that runs.  Every verdict comes from the loaders' own
 * decoders (graph, plan, container), never from a reading of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/flatbuf.h>
#include <cdnn_sdk/sha256.h>

#include "core/error.h"
#include "format/blob.h"
#include "format/container_format.h"
#include "format/graph_format.h"
#include "format/plan_format.h"

/* The info and the strings and arrays it points to, in one allocation
 * owner: destroy frees them together. */
typedef struct blob_info_owner {
    cdnn_blob_info_t info; /* first: the public pointer is the owner's */
    char *strings;
    cdnn_tensor_io_t *tensors;
    char device[48];
} blob_info_owner_t;

/* A graph part is read by the graph loader itself (every check a load
 * makes, the version policy included), so that inspecting and loading can
 * never disagree; only then are its version fields read. */
static cdnn_status_t graph_details(const uint8_t *bytes, size_t size,
                                   cdnn_blob_info_t *info)
{
    cdnn_graph_t *g = NULL;
    cdnn_status_t st = graph_format_decode(bytes, size, &g);
    cdnn_graph_destroy(g);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    fb_table_t root = fb_root(bytes, size);
    info->graph_major = fb_get_u16(&root, GF_GRAPH_MAJOR, 0);
    info->graph_minor = fb_get_u16(&root, GF_GRAPH_MINOR, 0);
    info->contents |= CDNN_BLOB_GRAPH;
    return CDNN_STATUS_SUCCESS;
}

static char *keep(char **cursor, const char *s)
{
    size_t n = strlen(s) + 1;
    memcpy(*cursor, s, n);
    char *kept = *cursor;
    *cursor += n;
    return kept;
}

static cdnn_status_t copy_plan(const plan_record_t *r, blob_info_owner_t *o)
{
    cdnn_blob_info_t *info = &o->info;
    size_t n = strlen(r->engine_name) + strlen(r->provider_name) +
               strlen(r->provider_version) + 3;
    o->strings = malloc(n);
    o->tensors = calloc((size_t)r->tensor_count + 1, sizeof *o->tensors);
    if (!o->strings || !o->tensors)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory inspecting a plan");
    char *cursor = o->strings;
    info->engine_name = keep(&cursor, r->engine_name);
    info->provider_name = keep(&cursor, r->provider_name);
    info->provider_version = keep(&cursor, r->provider_version);
    for (uint32_t i = 0; i < r->tensor_count; i++)
        o->tensors[i] = (cdnn_tensor_io_t){r->tensors[i].uid, r->tensors[i].type,
                                           (size_t)r->tensors[i].span_bytes,
                                           r->tensors[i].alignment, r->tensors[i].is_output};
    info->tensors = o->tensors;
    info->tensor_count = (int32_t)r->tensor_count;
    if (r->device_kind == CDNN_DEVICE_CUDA)
        snprintf(o->device, sizeof o->device, "cuda (sm_%d)", r->device_arch);
    else
        snprintf(o->device, sizeof o->device, "cpu");
    info->device = o->device;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t plan_details(const uint8_t *bytes, size_t size, blob_info_owner_t *o)
{
    plan_record_t r;
    cdnn_status_t st = plan_format_decode(bytes, size, &r);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    cdnn_blob_info_t *info = &o->info;
    info->contents |= CDNN_BLOB_PLAN;
    info->plan_major = r.format_major;
    info->plan_minor = r.format_minor;
    info->plan_verified = 1;
    info->engine_id = r.engine_id;
    info->workspace_size = r.workspace_size;
    info->payload_major = r.payload_major;
    info->payload_minor = r.payload_minor;
    info->payload_size = r.payload_size;
    info->payload = r.payload; /* into bytes, as the record's */
    sdk_sha256_hex(r.content_key, info->graph_content_key);
    st = copy_plan(&r, o);
    plan_record_free(&r);
    return st;
}

static cdnn_status_t container_details(const uint8_t *bytes, size_t size,
                                       blob_info_owner_t *o)
{
    const uint8_t *graph, *plan;
    size_t graph_size, plan_size;
    cdnn_status_t st = container_decode(bytes, size, &graph, &graph_size, &plan, &plan_size);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    fb_table_t root = fb_root(bytes, size);
    o->info.container_major = fb_get_u16(&root, 0, 0);
    o->info.container_minor = fb_get_u16(&root, 1, 0);
    st = graph_details(graph, graph_size, &o->info);
    if (st == CDNN_STATUS_SUCCESS && plan)
        st = plan_details(plan, plan_size, o);
    return st;
}

void cdnn_blob_info_destroy(cdnn_blob_info_t *info)
{
    blob_info_owner_t *o = (blob_info_owner_t *)info;
    if (!o)
        return;
    free(o->strings);
    free(o->tensors);
    free(o);
}

cdnn_status_t cdnn_blob_inspect(const void *bytes, size_t size, cdnn_blob_info_t **info)
{
    CDNN_CHECK_ARG(bytes);
    CDNN_CHECK_ARG(info);
    *info = NULL;
    blob_info_owner_t *o = calloc(1, sizeof *o);
    if (!o)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory inspecting a blob");
    cdnn_status_t st;
    switch (blob_kind(bytes, size)) {
    case BLOB_GRAPH: st = graph_details(bytes, size, &o->info); break;
    case BLOB_PLAN: st = plan_details(bytes, size, o); break;
    case BLOB_CONTAINER: st = container_details(bytes, size, o); break;
    default: st = blob_expect(bytes, size, BLOB_GRAPH, "inspecting a blob"); break;
    }
    if (st != CDNN_STATUS_SUCCESS) {
        cdnn_blob_info_destroy(&o->info);
        return st;
    }
    *info = &o->info;
    return CDNN_STATUS_SUCCESS;
}
