#include "cpu_engine.h"

#include <stdlib.h>
#include <string.h>

static size_t name_bytes(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

static const char *keep_name(char **cursor, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    memcpy(*cursor, s, n);
    const char *kept = *cursor;
    *cursor += n;
    return kept;
}

cdnn_status_t cpu_graph_copy(cpu_graph_t *dst, const cdnn_graph_view_t *src)
{
    memset(dst, 0, sizeof *dst);
    size_t total = 1;
    for (int32_t i = 0; i < src->tensor_count; i++)
        total += name_bytes(src->tensors[i].name);
    for (int32_t i = 0; i < src->node_count; i++)
        total += name_bytes(src->nodes[i].name);

    dst->tensors = calloc((size_t)src->tensor_count + 1, sizeof *dst->tensors);
    dst->nodes = calloc((size_t)src->node_count + 1, sizeof *dst->nodes);
    dst->names = malloc(total);
    if (!dst->tensors || !dst->nodes || !dst->names) {
        cpu_graph_free(dst);
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory copying a graph");
    }
    char *cursor = dst->names;
    for (int32_t i = 0; i < src->tensor_count; i++) {
        dst->tensors[i] = src->tensors[i];
        dst->tensors[i].name = keep_name(&cursor, src->tensors[i].name);
    }
    for (int32_t i = 0; i < src->node_count; i++) {
        dst->nodes[i] = src->nodes[i];
        dst->nodes[i].name = keep_name(&cursor, src->nodes[i].name);
    }
    dst->view = *src;
    dst->view.struct_size = sizeof dst->view;
    dst->view.tensors = dst->tensors;
    dst->view.nodes = dst->nodes;
    return CDNN_STATUS_SUCCESS;
}

void cpu_graph_free(cpu_graph_t *g)
{
    free(g->tensors);
    free(g->nodes);
    free(g->names);
    memset(g, 0, sizeof *g);
}

cdnn_status_t cpu_bind_tensors(const cdnn_graph_view_t *g,
                               const cdnn_exec_args_t *args, void **ptrs)
{
    for (int32_t i = 0; i < g->tensor_count; i++) {
        const cdnn_tensor_view_t *t = &g->tensors[i];
        ptrs[i] = NULL;
        if (t->is_virtual || t->is_scalar)
            continue;
        for (int32_t j = 0; j < args->count; j++) {
            if (args->uids[j] == t->uid) {
                ptrs[i] = args->ptrs[j];
                break;
            }
        }
        if (!ptrs[i])
            return sdk_fail(CDNN_STATUS_BAD_PARAM,
                            "tensor '%s' (uid %lld) has no pointer in the "
                            "variant pack",
                            t->name, (long long)t->uid);
    }
    return CDNN_STATUS_SUCCESS;
}

int64_t cpu_tensor_elements(const cdnn_tensor_view_t *t)
{
    int64_t n = 1;
    for (int32_t d = 0; d < t->rank; d++)
        n *= t->dims[d];
    return n;
}

int cpu_tensor_is_packed(const cdnn_tensor_view_t *t)
{
    int64_t expect = 1;
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        if (t->dims[d] != 1 && t->strides[d] != expect)
            return 0;
        expect *= t->dims[d];
    }
    return 1;
}

int64_t cpu_knob(const cdnn_knob_value_t *knobs, int32_t count,
                 const char *name, int64_t fallback)
{
    for (int32_t i = 0; i < count; i++)
        if (strcmp(knobs[i].name, name) == 0)
            return knobs[i].value;
    return fallback;
}
