/*
 * plan_format.c -- encoding and decoding the plan artifact.
 *
 * The decoder refuses in a fixed order, each step with its own message:
 * identifier (is it a plan at all), envelope structure, digest (is it
 * intact), format version (can this build read it), canonical envelope,
 * body structure, field validity.  No field is interpreted before the
 * digest has proven the bytes intact -- the version included, which the
 * digest covers -- so a flipped byte reads as damage, never as "too new".
 * The envelope's four fields keep their ids and meaning in every format
 * major, which is what lets the digest be checked first.
 */
#include "format/plan_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/flatbuf.h>

#include "core/error.h"
#include "core/sha256.h"
#include "format/blob.h"
#include "format/envelope.h"

/* Field ids, in schema/plan.fbs declaration order. */
enum { PLAN_MAJOR, PLAN_MINOR, PLAN_BODY, PLAN_SHA256, PLAN_FIELDS };
enum {
    BODY_ENGINE_ID, BODY_ENGINE_NAME, BODY_PROVIDER_NAME, BODY_PROVIDER_VERSION,
    BODY_DEVICE_KIND, BODY_DEVICE_ARCH, BODY_TENSORS, BODY_WORKSPACE,
    BODY_PAYLOAD_MAJOR, BODY_PAYLOAD_MINOR, BODY_PAYLOAD, BODY_CONTENT_KEY,
    BODY_FIELDS
};

#define PLAN_TENSOR_BYTES 32 /* struct PlanTensor: 26 bytes, padded to 8 */

static const fb_field_desc_t plan_fields[PLAN_FIELDS] = {
    [PLAN_MAJOR] = {FB_SCALAR, 2},
    [PLAN_MINOR] = {FB_SCALAR, 2},
    [PLAN_BODY] = {FB_VECTOR, 1, 1}, /* verified as a body after the digest */
    [PLAN_SHA256] = {FB_VECTOR, 1, 1},
};
static const fb_table_desc_t plan_desc = {"Plan", PLAN_FIELDS, plan_fields};

static const fb_field_desc_t body_fields[BODY_FIELDS] = {
    [BODY_ENGINE_ID] = {FB_SCALAR, 8},
    [BODY_ENGINE_NAME] = {FB_STRING},
    [BODY_PROVIDER_NAME] = {FB_STRING},
    [BODY_PROVIDER_VERSION] = {FB_STRING},
    [BODY_DEVICE_KIND] = {FB_SCALAR, 1},
    [BODY_DEVICE_ARCH] = {FB_SCALAR, 4},
    [BODY_TENSORS] = {FB_VECTOR, PLAN_TENSOR_BYTES, 8},
    [BODY_WORKSPACE] = {FB_SCALAR, 8},
    [BODY_PAYLOAD_MAJOR] = {FB_SCALAR, 2},
    [BODY_PAYLOAD_MINOR] = {FB_SCALAR, 2},
    [BODY_PAYLOAD] = {FB_VECTOR, 1, 1},
    [BODY_CONTENT_KEY] = {FB_VECTOR, 1, 1},
};
static const fb_table_desc_t body_desc = {"PlanBody", BODY_FIELDS, body_fields};

/* SHA-256("CDPL" || major LE16 || minor LE16 || body): the version is
 * covered too, so that a flipped version byte reads as damage. */
static cdnn_status_t body_digest(uint16_t major, uint16_t minor, const uint8_t *body,
                                 size_t size, uint8_t out[32])
{
    uint8_t version[4] = {(uint8_t)major, (uint8_t)(major >> 8), (uint8_t)minor,
                          (uint8_t)(minor >> 8)};
    sha256_t h;
    sha256_begin(&h);
    sha256_update(&h, PLAN_IDENTIFIER, 4);
    sha256_update(&h, version, sizeof version);
    sha256_update(&h, body, size);
    return sha256_end(&h, out);
}

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* PlanTensor structs as the format lays them out, padding zeroed. */
static uint8_t *pack_tensors(const plan_record_t *r)
{
    uint8_t *packed = calloc((size_t)r->tensor_count + 1, PLAN_TENSOR_BYTES);
    for (uint32_t i = 0; packed && i < r->tensor_count; i++) {
        uint8_t *p = packed + (size_t)i * PLAN_TENSOR_BYTES;
        put_le64(p, (uint64_t)r->tensors[i].uid);
        put_le64(p + 8, (uint64_t)r->tensors[i].alignment);
        put_le64(p + 16, r->tensors[i].span_bytes);
        p[24] = (uint8_t)r->tensors[i].type;
        p[25] = r->tensors[i].is_output != 0;
    }
    return packed;
}

static fb_ref_t encode_body(fb_builder_t *b, const plan_record_t *r,
                            const uint8_t *packed_tensors, fb_ref_t *payload)
{
    fb_ref_t content_key = fb_bytes(b, r->content_key, 32);
    *payload = r->payload ? fb_bytes(b, r->payload, r->payload_size)
                          : fb_bytes_hole(b, r->payload_size);
    fb_ref_t tensors = fb_vector_structs(b, packed_tensors, PLAN_TENSOR_BYTES, 8,
                                         r->tensor_count);
    fb_ref_t version = fb_string(b, r->provider_version);
    fb_ref_t provider = fb_string(b, r->provider_name);
    fb_ref_t engine = fb_string(b, r->engine_name);
    fb_table_start(b, BODY_FIELDS);
    fb_add_u64(b, BODY_ENGINE_ID, r->engine_id, 0);
    fb_add_ref(b, BODY_ENGINE_NAME, engine);
    fb_add_ref(b, BODY_PROVIDER_NAME, provider);
    fb_add_ref(b, BODY_PROVIDER_VERSION, version);
    fb_add_i8(b, BODY_DEVICE_KIND, (int8_t)r->device_kind, 0);
    fb_add_i32(b, BODY_DEVICE_ARCH, r->device_arch, 0);
    fb_add_ref(b, BODY_TENSORS, tensors);
    fb_add_u64(b, BODY_WORKSPACE, r->workspace_size, 0);
    fb_add_u16(b, BODY_PAYLOAD_MAJOR, r->payload_major, 0);
    fb_add_u16(b, BODY_PAYLOAD_MINOR, r->payload_minor, 0);
    fb_add_ref(b, BODY_PAYLOAD, *payload);
    fb_add_ref(b, BODY_CONTENT_KEY, content_key);
    return fb_table_end(b);
}

/* The body's bytes, inside b.  A payload given as a writer is written in
 * place, into the finished body: the provider's bytes are copied once. */
static cdnn_status_t finish_body(fb_builder_t *b, const plan_record_t *r,
                                 const uint8_t **body, size_t *size)
{
    fb_ref_t payload = 0;
    uint8_t *packed = pack_tensors(r);
    fb_ref_t root = packed ? encode_body(b, r, packed, &payload) : 0;
    free(packed);
    if (!packed || fb_finish(b, root, NULL, body, size) != 0)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory encoding a plan");
    if (r->payload)
        return CDNN_STATUS_SUCCESS;
    /* the builder's own buffer: writable, though fb_finish hands it out const */
    uint8_t *at = (uint8_t *)*body + fb_vector_data_at(*size, payload);
    return r->write_payload(r->writer, at, r->payload_size);
}

/* The envelope around a body: the layout decoding checks bytes against
 * (envelope_matches), so every byte outside the body is either meaningful
 * and checked, or fixed (padding), and no flip goes unnoticed. */
static cdnn_status_t lay_out_envelope(envelope_t *e, uint16_t major, uint16_t minor,
                                      const uint8_t *body, size_t body_size,
                                      const uint8_t digest[32])
{
    fb_ref_t digest_ref = fb_bytes(&e->b, digest, 32);
    fb_ref_t body_ref = envelope_part(e, body, body_size);
    fb_table_start(&e->b, PLAN_FIELDS);
    fb_add_u16(&e->b, PLAN_MAJOR, major, 0);
    fb_add_u16(&e->b, PLAN_MINOR, minor, 0);
    fb_add_ref(&e->b, PLAN_BODY, body_ref);
    fb_add_ref(&e->b, PLAN_SHA256, digest_ref);
    return envelope_finish(e, fb_table_end(&e->b), PLAN_IDENTIFIER);
}

cdnn_status_t plan_format_encode(const plan_record_t *r, uint8_t **bytes, size_t *size)
{
    fb_builder_t b;
    envelope_t e;
    const uint8_t *body = NULL;
    size_t body_size = 0;
    uint8_t digest[32];
    fb_builder_init(&b);
    envelope_init(&e);
    cdnn_status_t st = finish_body(&b, r, &body, &body_size);
    if (st == CDNN_STATUS_SUCCESS)
        st = body_digest(PLAN_FORMAT_MAJOR, PLAN_FORMAT_MINOR, body, body_size, digest);
    if (st == CDNN_STATUS_SUCCESS)
        st = lay_out_envelope(&e, PLAN_FORMAT_MAJOR, PLAN_FORMAT_MINOR, body, body_size,
                              digest);
    if (st == CDNN_STATUS_SUCCESS)
        st = envelope_write(&e, bytes, size);
    envelope_free(&e);
    fb_builder_free(&b);
    return st;
}

/* ---- decoding ----------------------------------------------------------- */

static cdnn_status_t check_structure(const uint8_t *bytes, size_t size, fb_table_t *plan)
{
    char why[512];
    cdnn_status_t st = blob_expect(bytes, size, BLOB_PLAN, "loading a plan");
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    if (fb_verify(bytes, size, PLAN_IDENTIFIER, &plan_desc, why, sizeof why) != 0)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the plan is damaged: %s", why);
    *plan = fb_root(bytes, size);
    return CDNN_STATUS_SUCCESS;
}

static const artifact_format_t plan_format = {"plan", PLAN_FORMAT_MAJOR,
                                              PLAN_FORMAT_MINOR, 0};

static cdnn_status_t check_digest(const fb_table_t *plan, const uint8_t **body,
                                  uint32_t *body_size)
{
    uint32_t digest_size = 0;
    const uint8_t *stored = fb_get_vector(plan, PLAN_SHA256, &digest_size);
    *body = fb_get_vector(plan, PLAN_BODY, body_size);
    if (!*body)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the plan is damaged: its body is "
                         "missing");
    uint8_t digest[32];
    cdnn_status_t st = body_digest(fb_get_u16(plan, PLAN_MAJOR, 0),
                                   fb_get_u16(plan, PLAN_MINOR, 0), *body,
                                   *body_size, digest);
    return st ? st : envelope_check_digest("the plan", stored, digest_size, digest);
}

/* The envelope must be exactly what cdnn writes around this body. */
static cdnn_status_t check_canonical(const uint8_t *bytes, size_t size,
                                     const fb_table_t *plan, const uint8_t *body,
                                     uint32_t body_size)
{
    envelope_t e;
    uint32_t digest_size;
    envelope_init(&e);
    cdnn_status_t st = lay_out_envelope(&e, fb_get_u16(plan, PLAN_MAJOR, 0),
                                        fb_get_u16(plan, PLAN_MINOR, 0), body, body_size,
                                        fb_get_vector(plan, PLAN_SHA256, &digest_size));
    if (st == CDNN_STATUS_SUCCESS)
        st = envelope_matches(&e, bytes, size, "the plan");
    envelope_free(&e);
    return st;
}

static cdnn_status_t read_tensors(const fb_table_t *body, plan_record_t *r)
{
    uint32_t count = 0;
    const uint8_t *packed = fb_get_vector(body, BODY_TENSORS, &count);
    r->tensors = calloc((size_t)count + 1, sizeof *r->tensors);
    if (!r->tensors)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory loading a plan");
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *p = packed + (size_t)i * PLAN_TENSOR_BYTES;
        plan_tensor_t *t = &r->tensors[i];
        t->uid = fb_read_i64(p);
        t->alignment = fb_read_i64(p + 8);
        t->span_bytes = fb_read_u64(p + 16);
        t->type = (cdnn_data_type_t)p[24];
        t->is_output = p[25] != 0;
        if (t->alignment < 0 || (t->alignment & (t->alignment - 1)) != 0 ||
            t->type == CDNN_DATA_TYPE_UNSET || (unsigned)t->type >= CDNN_DATA_TYPE_COUNT ||
            p[25] > 1)
            return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the plan is damaged: tensor uid "
                             "%lld has alignment %lld, type %u, output flag %u",
                             (long long)t->uid, (long long)t->alignment, p[24], p[25]);
    }
    r->tensor_count = count;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t read_body(const uint8_t *bytes, uint32_t size, plan_record_t *r)
{
    char why[512];
    if (fb_verify(bytes, size, NULL, &body_desc, why, sizeof why) != 0)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the plan body is malformed: %s", why);
    fb_table_t body = fb_root(bytes, size);
    uint32_t payload_size = 0;
    r->engine_id = fb_get_u64(&body, BODY_ENGINE_ID, 0);
    r->engine_name = fb_get_string(&body, BODY_ENGINE_NAME, NULL);
    r->provider_name = fb_get_string(&body, BODY_PROVIDER_NAME, NULL);
    r->provider_version = fb_get_string(&body, BODY_PROVIDER_VERSION, NULL);
    r->device_kind = fb_get_i8(&body, BODY_DEVICE_KIND, 0);
    r->device_arch = fb_get_i32(&body, BODY_DEVICE_ARCH, 0);
    r->workspace_size = fb_get_u64(&body, BODY_WORKSPACE, 0);
    r->payload_major = fb_get_u16(&body, BODY_PAYLOAD_MAJOR, 0);
    r->payload_minor = fb_get_u16(&body, BODY_PAYLOAD_MINOR, 0);
    r->payload = fb_get_vector(&body, BODY_PAYLOAD, &payload_size);
    r->payload_size = payload_size;
    uint32_t key_size = 0;
    r->content_key = fb_get_vector(&body, BODY_CONTENT_KEY, &key_size);
    if (!r->engine_name || !r->provider_name || !r->provider_version || !r->payload ||
        !r->content_key || key_size != 32)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the plan body lacks its engine "
                         "name, provider, payload or graph content key");
    if (cdnn_engine_id_from_name(r->engine_name) != r->engine_id)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the plan body names engine %s but "
                         "records id 0x%016llx, which is not that name's id",
                         r->engine_name, (unsigned long long)r->engine_id);
    if (r->device_kind != CDNN_DEVICE_CPU && r->device_kind != CDNN_DEVICE_CUDA)
        return cdnn_fail(CDNN_STATUS_CORRUPT_DATA, "the plan body names device kind %d, "
                         "which is neither CPU nor CUDA", r->device_kind);
    return read_tensors(&body, r);
}

cdnn_status_t plan_format_decode(const uint8_t *bytes, size_t size, plan_record_t *r)
{
    memset(r, 0, sizeof *r);
    fb_table_t plan;
    const uint8_t *body;
    uint32_t body_size;
    cdnn_status_t st = check_structure(bytes, size, &plan);
    if (st == CDNN_STATUS_SUCCESS)
        st = check_digest(&plan, &body, &body_size);
    if (st == CDNN_STATUS_SUCCESS)
        st = envelope_check_version(&plan_format, fb_get_u16(&plan, PLAN_MAJOR, 0),
                                    fb_get_u16(&plan, PLAN_MINOR, 0));
    if (st == CDNN_STATUS_SUCCESS)
        st = check_canonical(bytes, size, &plan, body, body_size);
    if (st == CDNN_STATUS_SUCCESS) {
        r->format_major = fb_get_u16(&plan, PLAN_MAJOR, 0);
        r->format_minor = fb_get_u16(&plan, PLAN_MINOR, 0);
        st = read_body(body, body_size, r);
    }
    if (st != CDNN_STATUS_SUCCESS)
        plan_record_free(r);
    return st;
}

void plan_record_free(plan_record_t *r)
{
    free(r->tensors);
    r->tensors = NULL;
    r->tensor_count = 0;
}
