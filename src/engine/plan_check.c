#include "engine/plan_check.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "graph/graph.h"

/* Bytes a tensor's strides span: (largest offset + 1) elements.  The view
 * is validated, so dims and strides are positive and the span is within
 * CDNN_MAX_ELEMENTS elements: no overflow. */
static uint64_t span_bytes(const cdnn_tensor_view_t *t)
{
    uint64_t last = 0;
    for (int32_t d = 0; d < t->rank; d++)
        last += (uint64_t)(t->dims[d] - 1) * (uint64_t)t->strides[d];
    return (last + 1) * cdnn_data_type_size(t->type);
}

cdnn_status_t plan_tensors_of_graph(const cdnn_graph_view_t *g, plan_tensor_t **tensors,
                                    uint32_t *count)
{
    *count = 0;
    *tensors = calloc((size_t)g->tensor_count + 1, sizeof **tensors);
    char *written = calloc((size_t)g->tensor_count + 1, 1);
    if (!*tensors || !written) {
        free(written);
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    }
    for (int32_t n = 0; n < g->node_count; n++)
        for (int p = 0; p < CDNN_NODE_MAX_OUTPUTS; p++)
            if (g->nodes[n].outputs[p] >= 0)
                written[g->nodes[n].outputs[p]] = 1;
    for (int32_t i = 0; i < g->tensor_count; i++) {
        const cdnn_tensor_view_t *t = &g->tensors[i];
        if (!t->is_virtual && !t->is_scalar)
            (*tensors)[(*count)++] = (plan_tensor_t){
                t->uid, t->alignment, span_bytes(t), t->type, written[i]};
    }
    free(written);
    return CDNN_STATUS_SUCCESS;
}

#define INCONSISTENT "the plan is inconsistent: its tensor table "

/* The first way the recorded entry differs from the derived one. */
static cdnn_status_t compare_tensor(const plan_tensor_t *rec, const plan_tensor_t *want,
                                    uint32_t i)
{
    if (rec->uid != want->uid)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "lists uid %" PRId64
                         " at position %u, but the graph its payload runs has uid %"
                         PRId64 " there", rec->uid, i, want->uid);
    if (rec->span_bytes != want->span_bytes)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "says tensor uid %"
                         PRId64 " spans %" PRIu64 " bytes, but the graph its payload "
                         "runs needs %" PRIu64, rec->uid, rec->span_bytes,
                         want->span_bytes);
    if (rec->type != want->type)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "says tensor uid %"
                         PRId64 " is %s, but the graph its payload runs has %s",
                         rec->uid, cdnn_data_type_name(rec->type),
                         cdnn_data_type_name(want->type));
    if (rec->alignment != want->alignment)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "says tensor uid %"
                         PRId64 " needs %" PRId64 "-byte alignment, but the graph its "
                         "payload runs says %" PRId64, rec->uid, rec->alignment,
                         want->alignment);
    if ((rec->is_output != 0) != (want->is_output != 0))
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "says tensor uid %"
                         PRId64 " is %s, but the graph its payload runs %s it",
                         rec->uid, rec->is_output ? "written" : "only read",
                         want->is_output ? "writes" : "only reads");
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t check_tensors(const plan_record_t *r, const cdnn_graph_view_t *g)
{
    plan_tensor_t *want = NULL;
    uint32_t count = 0;
    cdnn_status_t st = plan_tensors_of_graph(g, &want, &count);
    if (st == CDNN_STATUS_SUCCESS && count != r->tensor_count)
        st = cdnn_fail(CDNN_STATUS_CORRUPT_DATA, INCONSISTENT "lists %u tensors, but "
                       "the graph its payload runs takes %u", r->tensor_count, count);
    for (uint32_t i = 0; st == CDNN_STATUS_SUCCESS && i < count; i++)
        st = compare_tensor(&r->tensors[i], &want[i], i);
    free(want);
    return st;
}

cdnn_status_t plan_check_against_graph(const plan_record_t *r,
                                       const cdnn_graph_view_t *g)
{
    uint8_t key[32];
    cdnn_status_t st = check_tensors(r, g);
    if (st == CDNN_STATUS_SUCCESS)
        st = content_key_of_view(g, key);
    if (st == CDNN_STATUS_SUCCESS && memcmp(key, r->content_key, sizeof key) != 0)
        st = cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the plan is inconsistent: its "
                       "content key is not the key of the graph its payload runs");
    return st;
}
