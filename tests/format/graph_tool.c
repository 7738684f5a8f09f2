/*
 * graph_tool.c -- converts graphs between cdnn's JSON and binary forms, for
 * tests/format/graph_crosscheck.sh, which holds the results against flatc.
 *
 *   graph_tool json2bin IN.json OUT.cdg
 *   graph_tool bin2json IN.cdg OUT.json
 *   graph_tool every-enum OUT.json   a graph (not a valid one) that uses
 *                                    every enum value and attribute field
 *   graph_tool seal IN.cdg OUT.cdg   fill in the SHA-256 of graph bytes
 *                                    that have a 32-byte sha256 field
 *                                    (graph_format_seal): what a writer of
 *                                    graph format 1.1 other than cdnn does
 *   graph_tool status IN.cdg         print how cdnn's graph loader takes the
 *                                    bytes: "CDNN_STATUS_...<TAB>message"
 *   graph_tool zero-digest IN.json OUT.json
 *                                    the JSON with "sha256": 32 zeros, so
 *                                    that flatc's bytes of it can be sealed
 *   graph_tool as-1.0 IN.json OUT.json
 *                                    the JSON as graph format 1.0 (minor 0,
 *                                    no sha256 key)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn/cdnn.h>
#include <jansson.h>

#include "format/graph_format.h"
#include "format/graph_json.h"

static int read_file(const char *path, char **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *p = realloc(buf, cap * 2);
            if (!p) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = p;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
    }
    *data = buf;
    *size = n;
    return 0;
}

static int write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

static int fail(const char *what)
{
    fprintf(stderr, "graph_tool: %s: %s\n", what, cdnn_last_error());
    return 1;
}

static int json2bin(const char *in, const char *out)
{
    char *text;
    size_t n;
    if (read_file(in, &text, &n) != 0)
        return 1;
    cdnn_graph_t *g;
    cdnn_status_t st = graph_json_decode(text, n, &g);
    free(text);
    if (st != CDNN_STATUS_SUCCESS)
        return fail(in);
    uint8_t *bytes;
    size_t size;
    st = graph_format_encode(g, &bytes, &size);
    cdnn_graph_destroy(g);
    if (st != CDNN_STATUS_SUCCESS)
        return fail("encoding");
    int rc = write_file(out, bytes, size) ? 1 : 0;
    free(bytes);
    return rc;
}

static int write_json(const cdnn_graph_t *g, const char *out)
{
    char *json;
    if (graph_json_encode(g, &json) != CDNN_STATUS_SUCCESS)
        return fail("writing JSON");
    int rc = write_file(out, json, strlen(json)) ? 1 : 0;
    free(json);
    return rc;
}

static int bin2json(const char *in, const char *out)
{
    char *data;
    size_t n;
    if (read_file(in, &data, &n) != 0)
        return 1;
    cdnn_graph_t *g;
    cdnn_status_t st = graph_format_decode((const uint8_t *)data, n, &g);
    free(data);
    if (st != CDNN_STATUS_SUCCESS)
        return fail(in);
    int rc = write_json(g, out);
    cdnn_graph_destroy(g);
    return rc;
}

static int seal(const char *in, const char *out)
{
    char *data;
    size_t n;
    if (read_file(in, &data, &n) != 0)
        return 1;
    int rc = graph_format_seal((uint8_t *)data, n) != CDNN_STATUS_SUCCESS
                 ? fail(in)
                 : write_file(out, data, n) ? 1 : 0;
    free(data);
    return rc;
}

static int status(const char *in)
{
    char *data;
    size_t n;
    if (read_file(in, &data, &n) != 0)
        return 1;
    cdnn_graph_t *g = NULL;
    cdnn_status_t st = graph_format_decode((const uint8_t *)data, n, &g);
    free(data);
    printf("%s\t%s\n", cdnn_status_string(st),
           st == CDNN_STATUS_SUCCESS ? "" : cdnn_last_error());
    cdnn_graph_destroy(g);
    return 0;
}

/* The root object of a JSON file edited: zero-digest adds a sha256 of 32
 * zeros; as-1.0 drops format_minor and any sha256. */
static int json_edit(const char *how, const char *in, const char *out)
{
    json_error_t err;
    json_t *root = json_load_file(in, 0, &err);
    if (!root || !json_is_object(root)) {
        fprintf(stderr, "graph_tool: %s:%d: %s\n", in, err.line,
                root ? "not a JSON object" : err.text);
        json_decref(root);
        return 1;
    }
    if (strcmp(how, "zero-digest") == 0) {
        json_t *zeros = json_array();
        for (int i = 0; i < 32; i++)
            json_array_append_new(zeros, json_integer(0));
        json_object_set_new(root, "sha256", zeros);
    } else {
        json_object_del(root, "format_minor");
        json_object_del(root, "sha256");
    }
    int rc = json_dump_file(root, out, JSON_INDENT(2)) != 0;
    if (rc)
        fprintf(stderr, "graph_tool: cannot write %s\n", out);
    json_decref(root);
    return rc;
}

/* ---- every-enum: one of everything the schema can say ------------------- */

static void every_tensor(cdnn_graph_t *g)
{
    const int64_t dims[4] = {2, 3, 4, 5}, strides[4] = {60, 1, 15, 3};
    for (int t = 0; t < CDNN_DATA_TYPE_COUNT; t++)
        cdnn_graph_tensor(g, t + 1, NULL, (cdnn_data_type_t)t, 4, dims,
                          t % 2 ? strides : NULL);
    cdnn_graph_tensor(g, -7, "inferred", CDNN_DATA_TYPE_UNSET, 0, NULL, NULL);
    cdnn_graph_tensor_set_virtual(g, -7);
    const int64_t one[2] = {1, 1};
    cdnn_graph_tensor(g, 0, "scalar", CDNN_DATA_TYPE_F32, 2, one, NULL);
    cdnn_graph_tensor_set_scalar(g, 0, -0.125);
    cdnn_graph_tensor_set_alignment(g, 1, 256);
}

static void every_mode(cdnn_graph_t *g)
{
    for (int m = 0; m < CDNN_PW_MODE_COUNT; m++) {
        cdnn_pointwise_attr_t a;
        cdnn_pointwise_attr_init(&a, (cdnn_pointwise_mode_t)m);
        if (m == CDNN_PW_RELU_FWD) {
            a.relu_lower_clip = -INFINITY;
            a.relu_upper_clip = 6;
            a.relu_lower_clip_slope = 0.01;
        }
        a.elu_alpha = m == CDNN_PW_ELU_FWD ? 0.5 : 1;
        a.softplus_beta = m == CDNN_PW_SOFTPLUS_FWD ? 2 : 1;
        a.swish_beta = m == CDNN_PW_SWISH_FWD ? 1.5 : 1;
        cdnn_graph_pointwise(g, NULL, &a, 1, m % 3 ? 2 : CDNN_UID_NONE,
                             m % 3 == 2 ? 3 : CDNN_UID_NONE, 4);
    }
    for (int m = 0; m < CDNN_REDUCE_MODE_COUNT; m++)
        cdnn_graph_reduction(g, NULL, (cdnn_reduction_mode_t)m, 1, 5);
}

static void every_op(cdnn_graph_t *g)
{
    cdnn_conv_attr_t c;
    cdnn_conv_attr_init(&c, 2);
    c.pre_padding[0] = 1;
    c.post_padding[1] = 2;
    c.stride[0] = 2;
    c.dilation[1] = 3;
    c.groups = 2;
    cdnn_graph_conv_fwd(g, "conv_fwd", &c, 1, 2, 3);
    cdnn_conv_attr_init(&c, 1);
    cdnn_graph_conv_bwd_data(g, "conv_bwd_data", &c, 1, 2, 3);
    cdnn_conv_attr_init(&c, 3);
    cdnn_graph_conv_bwd_filter(g, "conv_bwd_filter", &c, 1, 2, 3);
    cdnn_graph_matmul(g, "matmul", 1, 2, 3);
    cdnn_graph_batchnorm_inference(g, "bn", 1e-5, 1, 2, 3, 4, 5, 6);
    cdnn_graph_layernorm(g, "ln", 1e-6, 1, 2, 3, 4, 5, 6);
    cdnn_graph_rmsnorm(g, "rms", 0.001, 1, 2, CDNN_UID_NONE, 4, 5);
    cdnn_sdpa_attr_t s = {0.125, 1};
    cdnn_graph_sdpa_fwd(g, "sdpa", &s, 1, 2, 3, 4);
    /* format 1.3 */
    cdnn_graph_sdpa_bwd(g, "sdpa_bwd", &s, 1, 2, 3, 4, 5, 6, 7, 8);
    cdnn_graph_gather(g, "gather", 1, 1, 2, 3);
    cdnn_graph_gather_elements(g, "gather_elements", -2, 1, 2, 3);
    cdnn_topk_attr_t t = {1, 0, 7};
    cdnn_graph_topk(g, "topk", &t, 1, 2, 3);
    cdnn_pooling_attr_t p;
    cdnn_pooling_attr_init(&p, CDNN_POOLING_MAX, 3);
    for (int i = 0; i < 3; i++) {
        p.window[i] = 2 + i;
        p.stride[i] = 3 - i;
        p.dilation[i] = 1 + i;
        p.pre_padding[i] = i;
        p.post_padding[i] = 2 - i;
    }
    p.ceil_mode = 1;
    cdnn_graph_pooling_fwd(g, "max_pool", &p, 1, 2, 3);
    cdnn_graph_pooling_bwd(g, "max_pool_bwd", &p, 2, 1, 3, 4);
    cdnn_pooling_attr_init(&p, CDNN_POOLING_AVG, 2);
    p.window[0] = 3;
    p.count_include_pad = 1;
    cdnn_graph_pooling_fwd(g, "avg_pool", &p, 1, 2, CDNN_UID_NONE);
    for (int k = 0; k < CDNN_RESIZE_COORDINATE_COUNT; k++)
        for (int r = 0; r < CDNN_RESIZE_NEAREST_COUNT; r++) {
            cdnn_resize_attr_t z = {(k + r) % CDNN_RESIZE_MODE_COUNT, k, r};
            cdnn_graph_resize(g, NULL, &z, 1, 2);
        }
    cdnn_graph_batchnorm_train(g, "bn_train", 1e-3, 1, 2, 3, 4, 5, 6);
    cdnn_graph_batchnorm_running_stats(g, "bn_running", 0.25, 1, 2, 3, 4, 5);
    cdnn_graph_batchnorm_running_stats(g, NULL, 0.1, 1, 2, 3, 4, 5); /* default */
    cdnn_graph_batchnorm_bwd(g, "bn_bwd", 1, 2, 3, 4, 5, 6, 7, 8);
    cdnn_graph_layernorm_bwd(g, "ln_bwd", 1, 2, 3, 4, 5, 6, CDNN_UID_NONE, 8);
    cdnn_graph_rmsnorm_bwd(g, "rms_bwd", 1, 2, 3, 4, 5, 6, 7);
}

static int every_enum(const char *out)
{
    cdnn_graph_t *g;
    if (cdnn_graph_create(&g) != CDNN_STATUS_SUCCESS)
        return fail("creating a graph");
    cdnn_graph_set_name(g, "every enum \"value\"\t\xc3\xa9");
    cdnn_graph_set_data_types(g, CDNN_DATA_TYPE_F16, CDNN_DATA_TYPE_BF16,
                              CDNN_DATA_TYPE_F64);
    every_tensor(g);
    every_mode(g);
    every_op(g);
    int rc = write_json(g, out);
    cdnn_graph_destroy(g);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "json2bin") == 0)
        return json2bin(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "bin2json") == 0)
        return bin2json(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "every-enum") == 0)
        return every_enum(argv[2]);
    if (argc == 4 && strcmp(argv[1], "seal") == 0)
        return seal(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "status") == 0)
        return status(argv[2]);
    if (argc == 4 && (strcmp(argv[1], "zero-digest") == 0 ||
                      strcmp(argv[1], "as-1.0") == 0))
        return json_edit(argv[1], argv[2], argv[3]);
    fprintf(stderr, "usage: graph_tool json2bin IN.json OUT.cdg\n"
                    "       graph_tool bin2json IN.cdg OUT.json\n"
                    "       graph_tool every-enum OUT.json\n"
                    "       graph_tool seal IN.cdg OUT.cdg\n"
                    "       graph_tool status IN.cdg\n"
                    "       graph_tool zero-digest IN.json OUT.json\n"
                    "       graph_tool as-1.0 IN.json OUT.json\n");
    return 2;
}
