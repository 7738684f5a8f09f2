#include "payload.h"

#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/flatbuf.h>

#include "cpu_engine.h"

#define CPU_PAYLOAD_IDENTIFIER "CDCP"

/* Field ids, in schema/cpu_payload.fbs declaration order. */
enum { KNOB_NAME, KNOB_VALUE, KNOB_FIELDS };
enum { PAYLOAD_MAJOR, PAYLOAD_MINOR, PAYLOAD_ENGINE, PAYLOAD_KNOBS, PAYLOAD_GRAPH,
       PAYLOAD_FIELDS };

static const fb_field_desc_t knob_fields[KNOB_FIELDS] = {
    [KNOB_NAME] = {FB_STRING},
    [KNOB_VALUE] = {FB_SCALAR, 8},
};
static const fb_table_desc_t knob_desc = {"CpuKnob", KNOB_FIELDS, knob_fields};

static const fb_field_desc_t payload_fields[PAYLOAD_FIELDS] = {
    [PAYLOAD_MAJOR] = {FB_SCALAR, 2},
    [PAYLOAD_MINOR] = {FB_SCALAR, 2},
    [PAYLOAD_ENGINE] = {FB_STRING},
    [PAYLOAD_KNOBS] = {FB_VECTOR_TABLE, 0, 0, &knob_desc},
    [PAYLOAD_GRAPH] = {FB_VECTOR, 1, 1}, /* checked by the graph loader */
};
static const fb_table_desc_t payload_desc = {"CpuPayload", PAYLOAD_FIELDS,
                                             payload_fields};

cdnn_status_t cpu_payload_encode(const char *engine, const cdnn_knob_value_t *knobs,
                                 int32_t knob_count, const uint8_t *graph,
                                 size_t graph_size, uint8_t **bytes, size_t *size)
{
    fb_builder_t b;
    fb_ref_t *knob_refs = calloc((size_t)knob_count + 1, sizeof *knob_refs);
    if (!knob_refs)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory saving a plan");
    fb_builder_init(&b);
    for (int32_t i = 0; i < knob_count; i++) {
        fb_ref_t name = fb_string(&b, knobs[i].name);
        fb_table_start(&b, KNOB_FIELDS);
        fb_add_ref(&b, KNOB_NAME, name);
        fb_add_i64(&b, KNOB_VALUE, knobs[i].value, 0);
        knob_refs[i] = fb_table_end(&b);
    }
    fb_ref_t knob_vec = fb_vector_refs(&b, knob_refs, (size_t)knob_count);
    fb_ref_t graph_ref = fb_bytes(&b, graph, graph_size);
    fb_ref_t engine_ref = fb_string(&b, engine);
    fb_table_start(&b, PAYLOAD_FIELDS);
    fb_add_u16(&b, PAYLOAD_MAJOR, CPU_PAYLOAD_MAJOR, 0);
    fb_add_u16(&b, PAYLOAD_MINOR, CPU_PAYLOAD_MINOR, 0);
    fb_add_ref(&b, PAYLOAD_ENGINE, engine_ref);
    fb_add_ref(&b, PAYLOAD_KNOBS, knob_vec);
    fb_add_ref(&b, PAYLOAD_GRAPH, graph_ref);
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    if (fb_finish_copy(&b, fb_table_end(&b), CPU_PAYLOAD_IDENTIFIER, bytes, size) != 0)
        st = sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory saving a plan");
    fb_builder_free(&b);
    free(knob_refs);
    return st;
}

static cdnn_status_t decode_knobs(const fb_table_t *root, cpu_payload_t *p)
{
    uint32_t count = 0;
    fb_get_vector(root, PAYLOAD_KNOBS, &count);
    p->knobs = calloc((size_t)count + 1, sizeof *p->knobs);
    if (!p->knobs)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory loading a plan");
    for (uint32_t i = 0; i < count; i++) {
        fb_table_t knob = fb_vector_table(root, PAYLOAD_KNOBS, i);
        p->knobs[i].name = fb_get_string(&knob, KNOB_NAME, NULL);
        p->knobs[i].value = fb_get_i64(&knob, KNOB_VALUE, 0);
        if (!p->knobs[i].name)
            return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "CPU payload: knob %u has no name", i);
    }
    p->knob_count = (int32_t)count;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cpu_payload_decode(const uint8_t *bytes, size_t size, cpu_payload_t *p)
{
    char why[512];
    memset(p, 0, sizeof *p);
    if (fb_verify(bytes, size, CPU_PAYLOAD_IDENTIFIER, &payload_desc, why, sizeof why))
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "CPU payload is malformed: %s", why);
    fb_table_t root = fb_root(bytes, size);
    uint16_t major = fb_get_u16(&root, PAYLOAD_MAJOR, 0);
    uint16_t minor = fb_get_u16(&root, PAYLOAD_MINOR, 0);
    if (major != CPU_PAYLOAD_MAJOR)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "CPU payload format %u.%u; this "
                        "provider reads %d.x", major, minor, CPU_PAYLOAD_MAJOR);
    /* A newer minor may carry fields that change what runs, which this
     * provider would ignore; the plan body's record of the payload version
     * (checked by cdnn) cannot vouch for the payload's own. */
    if (minor > CPU_PAYLOAD_MINOR)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "CPU payload format %u.%u is newer "
                        "than this provider reads (%d.%d): its format_minor is past "
                        "what the plan body records", major, minor, CPU_PAYLOAD_MAJOR,
                        CPU_PAYLOAD_MINOR);
    uint32_t graph_size = 0;
    p->engine = fb_get_string(&root, PAYLOAD_ENGINE, NULL);
    p->graph = fb_get_vector(&root, PAYLOAD_GRAPH, &graph_size);
    p->graph_size = graph_size;
    if (!p->engine || !p->graph)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "CPU payload lacks its %s",
                        p->engine ? "graph" : "engine name");
    cdnn_status_t st = decode_knobs(&root, p);
    if (st != CDNN_STATUS_SUCCESS)
        cpu_payload_free(p);
    return st;
}

void cpu_payload_free(cpu_payload_t *p)
{
    free(p->knobs);
    p->knobs = NULL;
    p->knob_count = 0;
}
