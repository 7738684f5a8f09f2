#include "kp_forge.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cdnn_sdk/flatbuf.h>
#include <cdnn_sdk/sha256.h>

/* ---- the plan envelope and body (schema/plan.fbs) ------------------------------------- */

enum { PLAN_MAJOR, PLAN_MINOR, PLAN_BODY, PLAN_SHA256, PLAN_FIELDS };
enum { B_ENGINE_ID, B_ENGINE, B_PROVIDER, B_VERSION, B_KIND, B_ARCH, B_TENSORS,
       B_WORKSPACE, B_PAYLOAD_MAJOR, B_PAYLOAD_MINOR, B_PAYLOAD, B_KEY, B_FIELDS };

static const fb_field_desc_t plan_fields[PLAN_FIELDS] = {
    {FB_SCALAR, 2}, {FB_SCALAR, 2}, {FB_VECTOR, 1, 1}, {FB_VECTOR, 1, 1}};
static const fb_table_desc_t plan_desc = {"Plan", PLAN_FIELDS, plan_fields};
static const fb_field_desc_t body_fields[B_FIELDS] = {
    {FB_SCALAR, 8}, {FB_STRING}, {FB_STRING}, {FB_STRING}, {FB_SCALAR, 1}, {FB_SCALAR, 4},
    {FB_VECTOR, 32, 8}, {FB_SCALAR, 8}, {FB_SCALAR, 2}, {FB_SCALAR, 2}, {FB_VECTOR, 1, 1},
    {FB_VECTOR, 1, 1}};
static const fb_table_desc_t body_desc = {"PlanBody", B_FIELDS, body_fields};

static fb_table_t plan_body(kp_bytes_t plan, fb_table_t *envelope)
{
    char why[256];
    uint32_t size = 0;
    if (fb_verify(plan.data, plan.size, "CDPL", &plan_desc, why, sizeof why) != 0)
        fail_msg("not a plan: %s", why);
    *envelope = fb_root(plan.data, plan.size);
    const uint8_t *body = fb_get_vector(envelope, PLAN_BODY, &size);
    if (fb_verify(body, size, NULL, &body_desc, why, sizeof why) != 0)
        fail_msg("not a plan body: %s", why);
    return fb_root(body, size);
}

/* The body again with another payload, in cdnn's order (plan_format.c). */
static kp_bytes_t body_with_payload(const fb_table_t *body, kp_bytes_t payload)
{
    fb_builder_t b;
    uint32_t key_size = 0, tensor_count = 0;
    kp_bytes_t out = {NULL, 0};
    const uint8_t *key = fb_get_vector(body, B_KEY, &key_size);
    const uint8_t *tensors = fb_get_vector(body, B_TENSORS, &tensor_count);
    fb_builder_init(&b);
    fb_ref_t key_ref = fb_bytes(&b, key, key_size);
    fb_ref_t payload_ref = fb_bytes(&b, payload.data, payload.size);
    fb_ref_t tensor_ref = fb_vector_structs(&b, tensors, 32, 8, tensor_count);
    fb_ref_t version = fb_string(&b, fb_get_string(body, B_VERSION, NULL));
    fb_ref_t provider = fb_string(&b, fb_get_string(body, B_PROVIDER, NULL));
    fb_ref_t engine = fb_string(&b, fb_get_string(body, B_ENGINE, NULL));
    fb_table_start(&b, B_FIELDS);
    fb_add_u64(&b, B_ENGINE_ID, fb_get_u64(body, B_ENGINE_ID, 0), 0);
    fb_add_ref(&b, B_ENGINE, engine);
    fb_add_ref(&b, B_PROVIDER, provider);
    fb_add_ref(&b, B_VERSION, version);
    fb_add_i8(&b, B_KIND, fb_get_i8(body, B_KIND, 0), 0);
    fb_add_i32(&b, B_ARCH, fb_get_i32(body, B_ARCH, 0), 0);
    fb_add_ref(&b, B_TENSORS, tensor_ref);
    fb_add_u64(&b, B_WORKSPACE, fb_get_u64(body, B_WORKSPACE, 0), 0);
    fb_add_u16(&b, B_PAYLOAD_MAJOR, fb_get_u16(body, B_PAYLOAD_MAJOR, 0), 0);
    fb_add_u16(&b, B_PAYLOAD_MINOR, fb_get_u16(body, B_PAYLOAD_MINOR, 0), 0);
    fb_add_ref(&b, B_PAYLOAD, payload_ref);
    fb_add_ref(&b, B_KEY, key_ref);
    assert_int_equal(fb_finish_copy(&b, fb_table_end(&b), NULL, &out.data, &out.size), 0);
    fb_builder_free(&b);
    return out;
}

/* The envelope cdnn writes: digest and body vectors, then the fields. */
static kp_bytes_t seal(uint16_t major, uint16_t minor, kp_bytes_t body)
{
    uint8_t digest[32], version[4] = {(uint8_t)major, (uint8_t)(major >> 8), (uint8_t)minor,
                                      (uint8_t)(minor >> 8)};
    sdk_sha256_t h;
    fb_builder_t b;
    kp_bytes_t out = {NULL, 0};
    sdk_sha256_begin(&h);
    sdk_sha256_update(&h, "CDPL", 4);
    sdk_sha256_update(&h, version, 4);
    sdk_sha256_update(&h, body.data, body.size);
    assert_int_equal(sdk_sha256_end(&h, digest), 0);
    fb_builder_init(&b);
    fb_ref_t digest_ref = fb_bytes(&b, digest, 32);
    fb_ref_t body_ref = fb_bytes(&b, body.data, body.size);
    fb_table_start(&b, PLAN_FIELDS);
    fb_add_u16(&b, PLAN_MAJOR, major, 0);
    fb_add_u16(&b, PLAN_MINOR, minor, 0);
    fb_add_ref(&b, PLAN_BODY, body_ref);
    fb_add_ref(&b, PLAN_SHA256, digest_ref);
    assert_int_equal(fb_finish_copy(&b, fb_table_end(&b), "CDPL", &out.data, &out.size), 0);
    fb_builder_free(&b);
    return out;
}

kp_bytes_t kp_plan_with_payload(kp_bytes_t plan, kp_bytes_t payload)
{
    fb_table_t envelope;
    fb_table_t body = plan_body(plan, &envelope);
    kp_bytes_t new_body = body_with_payload(&body, payload);
    kp_bytes_t out = seal(fb_get_u16(&envelope, PLAN_MAJOR, 0),
                          fb_get_u16(&envelope, PLAN_MINOR, 0), new_body);
    kp_bytes_free(&new_body);
    return out;
}

/* ---- the kernel payload (schema/kernel_payload.fbs) ------------------------------------------ */

#define HEADER 64
enum { KV_KEY, KV_VALUE, KV_FIELDS };
enum { F_MAJOR, F_MINOR, F_KIND, F_ENGINE_ID, F_ENGINE, F_KERNEL_ID, F_HANDLER,
       F_HANDLER_VERSION, F_LAUNCH_VALUES, F_TARGET, F_SYMBOL, F_KERNEL_SHA256,
       F_SIGNATURE, F_CODE_OBJECT, F_PROVIDER_VERSION, F_GRAPH, F_METADATA,
       F_PACK_NAME, F_PACK_VERSION, F_FIELDS };

static const fb_field_desc_t kv_fields[KV_FIELDS] = {{FB_STRING}, {FB_STRING}};
static const fb_table_desc_t kv_desc = {"KernelKeyValue", KV_FIELDS, kv_fields};
static const fb_field_desc_t payload_fields[F_FIELDS] = {
    [F_MAJOR] = {FB_SCALAR, 2},          [F_MINOR] = {FB_SCALAR, 2},
    [F_KIND] = {FB_STRING},              [F_ENGINE_ID] = {FB_SCALAR, 8},
    [F_ENGINE] = {FB_STRING},            [F_KERNEL_ID] = {FB_STRING},
    [F_HANDLER] = {FB_STRING},           [F_HANDLER_VERSION] = {FB_SCALAR, 4},
    [F_LAUNCH_VALUES] = {FB_VECTOR, 8, 8}, [F_TARGET] = {FB_STRING},
    [F_SYMBOL] = {FB_STRING},            [F_KERNEL_SHA256] = {FB_VECTOR, 1, 1},
    [F_SIGNATURE] = {FB_STRING},         [F_CODE_OBJECT] = {FB_VECTOR, 1, 1},
    [F_PROVIDER_VERSION] = {FB_STRING},  [F_GRAPH] = {FB_VECTOR, 1, 1},
    [F_METADATA] = {FB_VECTOR_TABLE, 0, 0, &kv_desc},
    [F_PACK_NAME] = {FB_STRING},         [F_PACK_VERSION] = {FB_STRING},
};
static const fb_table_desc_t payload_desc = {"KernelPayload", F_FIELDS, payload_fields};

static char *copy_string(const fb_table_t *t, int field)
{
    const char *s = fb_get_string(t, field, NULL);
    return s ? strdup(s) : NULL;
}

static kp_bytes_t copy_vector(const fb_table_t *t, int field)
{
    uint32_t n = 0;
    const uint8_t *v = fb_get_vector(t, field, &n);
    kp_bytes_t b = {malloc(n + 1), n};
    memcpy(b.data, v, n);
    return b;
}

static void read_fields(const fb_table_t *t, kp_payload_t *p)
{
    char **strings[] = {&p->kind_name, &p->engine, &p->kernel_id, &p->handler, &p->target,
                        &p->symbol, &p->signature, &p->provider_version, &p->pack_name,
                        &p->pack_version};
    int ids[] = {F_KIND, F_ENGINE, F_KERNEL_ID, F_HANDLER, F_TARGET, F_SYMBOL, F_SIGNATURE,
                 F_PROVIDER_VERSION, F_PACK_NAME, F_PACK_VERSION};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
        *strings[i] = copy_string(t, ids[i]);
    p->engine_id = fb_get_u64(t, F_ENGINE_ID, 0);
    p->handler_version = fb_get_i32(t, F_HANDLER_VERSION, 0);
    uint32_t n = 0;
    const uint8_t *v = fb_get_vector(t, F_LAUNCH_VALUES, &n);
    assert_true(n <= KP_MAX_VALUES);
    for (uint32_t i = 0; i < n; i++)
        p->launch_values[i] = fb_read_i64(v + 8 * i);
    p->launch_count = (int32_t)n;
    memcpy(p->kernel_sha256, fb_get_vector(t, F_KERNEL_SHA256, NULL), 32);
    p->code = copy_vector(t, F_CODE_OBJECT);
    p->graph = copy_vector(t, F_GRAPH);
    fb_get_vector(t, F_METADATA, &n);
    assert_true(n <= KP_MAX_METADATA);
    for (uint32_t i = 0; i < n; i++) {
        fb_table_t kv = fb_vector_table(t, F_METADATA, i);
        p->keys[i] = copy_string(&kv, KV_KEY);
        p->values[i] = copy_string(&kv, KV_VALUE);
    }
    p->metadata_count = (int32_t)n;
}

kp_payload_t kp_payload_of_plan(kp_bytes_t plan)
{
    char why[256];
    fb_table_t envelope;
    uint32_t size = 0;
    kp_payload_t p;
    memset(&p, 0, sizeof p);
    fb_table_t body = plan_body(plan, &envelope);
    const uint8_t *payload = fb_get_vector(&body, B_PAYLOAD, &size);
    assert_true(size > HEADER && memcmp(payload, "CDKL", 4) == 0);
    p.kind = (uint16_t)(payload[12] | payload[13] << 8);
    if (fb_verify(payload + HEADER, size - HEADER, "CDKL", &payload_desc, why, sizeof why))
        fail_msg("the kernel payload does not verify: %s", why);
    fb_table_t root = fb_root(payload + HEADER, size - HEADER);
    read_fields(&root, &p);
    return p;
}

void kp_payload_free(kp_payload_t *p)
{
    char **strings[] = {&p->kind_name, &p->engine, &p->kernel_id, &p->handler, &p->target,
                        &p->symbol, &p->signature, &p->provider_version, &p->pack_name,
                        &p->pack_version};
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++)
        kp_payload_set(strings[i], NULL);
    for (int32_t i = 0; i < p->metadata_count; i++) {
        free(p->keys[i]);
        free(p->values[i]);
    }
    kp_bytes_free(&p->code);
    kp_bytes_free(&p->graph);
}

void kp_payload_set(char **field, const char *value)
{
    free(*field);
    *field = value ? strdup(value) : NULL;
}

static fb_ref_t write_metadata(fb_builder_t *b, const kp_payload_t *p)
{
    fb_ref_t refs[KP_MAX_METADATA];
    for (int32_t i = 0; i < p->metadata_count; i++) {
        fb_ref_t key = fb_string(b, p->keys[i]), value = fb_string(b, p->values[i]);
        fb_table_start(b, KV_FIELDS);
        fb_add_ref(b, KV_KEY, key);
        fb_add_ref(b, KV_VALUE, value);
        refs[i] = fb_table_end(b);
    }
    return fb_vector_refs(b, refs, (size_t)p->metadata_count);
}

static kp_bytes_t write_body(const kp_payload_t *p)
{
    fb_builder_t b;
    kp_bytes_t out = {NULL, 0};
    fb_builder_init(&b);
    fb_ref_t metadata = write_metadata(&b, p);
    fb_ref_t graph = fb_bytes(&b, p->graph.data, p->graph.size);
    fb_ref_t code = fb_bytes(&b, p->code.data, p->code.size);
    fb_ref_t sha = fb_bytes(&b, p->kernel_sha256, 32);
    fb_ref_t values = fb_vector_i64(&b, p->launch_values, (size_t)p->launch_count);
    char *const strings[] = {p->kind_name, p->engine, p->kernel_id, p->handler, p->target,
                             p->symbol, p->signature, p->provider_version, p->pack_name,
                             p->pack_version};
    const int ids[] = {F_KIND, F_ENGINE, F_KERNEL_ID, F_HANDLER, F_TARGET, F_SYMBOL,
                       F_SIGNATURE, F_PROVIDER_VERSION, F_PACK_NAME, F_PACK_VERSION};
    fb_ref_t refs[10];
    for (int i = 0; i < 10; i++)
        refs[i] = fb_string(&b, strings[i]);
    fb_table_start(&b, F_FIELDS);
    fb_add_u16(&b, F_MAJOR, 1, 0);
    fb_add_u16(&b, F_MINOR, 0, 0);
    for (int i = 0; i < 10; i++)
        fb_add_ref(&b, ids[i], refs[i]);
    fb_add_u64(&b, F_ENGINE_ID, p->engine_id, 0);
    fb_add_i32(&b, F_HANDLER_VERSION, p->handler_version, 0);
    fb_add_ref(&b, F_LAUNCH_VALUES, values);
    fb_add_ref(&b, F_KERNEL_SHA256, sha);
    fb_add_ref(&b, F_CODE_OBJECT, code);
    fb_add_ref(&b, F_GRAPH, graph);
    fb_add_ref(&b, F_METADATA, metadata);
    assert_int_equal(fb_finish_copy(&b, fb_table_end(&b), "CDKL", &out.data, &out.size), 0);
    fb_builder_free(&b);
    return out;
}

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void kp_payload_reseal(kp_bytes_t payload)
{
    assert_true(payload.size >= HEADER);
    assert_int_equal(sdk_sha256(payload.data + HEADER, payload.size - HEADER,
                                payload.data + 32), 0);
}

kp_bytes_t kp_payload_bytes(const kp_payload_t *p)
{
    kp_bytes_t body = write_body(p);
    kp_bytes_t out = {calloc(1, HEADER + body.size), HEADER + body.size};
    memcpy(out.data, "CDKL", 4);
    put_le(out.data + 4, 1, 2);
    put_le(out.data + 6, 0, 2);
    put_le(out.data + 8, HEADER, 4);
    put_le(out.data + 12, p->kind, 2);
    put_le(out.data + 16, body.size, 8);
    memcpy(out.data + HEADER, body.data, body.size);
    kp_payload_reseal(out);
    kp_bytes_free(&body);
    return out;
}
