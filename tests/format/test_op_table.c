/*
 * test_op_table.c -- the op table (src/graph/ops.c) against everything
 * that must agree with it and is not derived from it: the Op and NodeAttr
 * enums of schema/graph.fbs, the ops table of docs/FORMATS.md section 2,
 * and the public calls that report it.  Then every op, a new one included,
 * round-trips through the graph format and JSON by the table's slots and
 * names, and validation names its ports as the table does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn/provider.h>

#include "format/graph_format.h"
#include "format/graph_json.h"
#include "graph/graph.h"
#include "graph/ops.h"

#define OK(call)                                                               \
    do {                                                                       \
        cdnn_status_t st_ = (call);                                            \
        if (st_ != CDNN_STATUS_SUCCESS)                                        \
            fail_msg("%s: %s: %s", #call, cdnn_status_string(st_),             \
                     cdnn_last_error());                                       \
    } while (0)

#define MAX_WORDS 64

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    text[size] = '\0';
    return text;
}

/* The names between the braces after `head` in graph.fbs ("ConvFwd = 0,
 * ConvBwdData" gives ConvFwd, ConvBwdData), in order. */
static int schema_names(const char *schema, const char *head,
                        char words[MAX_WORDS][64])
{
    const char *p = strstr(schema, head);
    if (!p)
        fail_msg("graph.fbs has no \"%s\"", head);
    p = strchr(p, '{') + 1;
    const char *end = strchr(p, '}');
    int n = 0;
    while (p < end && n < MAX_WORDS) {
        while (p < end && !isalpha((unsigned char)*p))
            p++;
        size_t len = 0;
        while (p + len < end && (isalnum((unsigned char)p[len]) || p[len] == '_'))
            len++;
        if (len)
            snprintf(words[n++], 64, "%.*s", (int)len, p);
        p += len;
        while (p < end && *p != ',') /* skip "= 0" */
            p++;
    }
    return n;
}

static void test_schema_enums_follow_the_table(void **state)
{
    (void)state;
    char *schema = read_text(GRAPH_FBS);
    char words[MAX_WORDS][64];
    int n = schema_names(schema, "enum Op : byte", words);
    assert_int_equal(n, CDNN_OP_COUNT);
    for (int op = 0; op < CDNN_OP_COUNT; op++)
        assert_string_equal(words[op], op_desc((cdnn_op_t)op)->schema_name);
    n = schema_names(schema, "union NodeAttr", words);
    assert_int_equal(n, OP_ATTR_KIND_COUNT - 1);
    for (int kind = 1; kind < OP_ATTR_KIND_COUNT; kind++)
        assert_string_equal(words[kind - 1], op_attr_schema_name(kind));
    free(schema);
}

/* Every row is whole: names, ports within the limits, names for exactly
 * the slots it has, a shape rule; and no two ops share a name. */
static void test_rows_are_whole(void **state)
{
    (void)state;
    for (int op = 0; op < CDNN_OP_COUNT; op++) {
        const op_desc_t *d = op_desc((cdnn_op_t)op);
        assert_non_null(d->name);
        assert_non_null(d->schema_name);
        assert_non_null(d->shape_rule);
        assert_in_range(d->attr, OP_ATTR_NONE, OP_ATTR_KIND_COUNT - 1);
        const op_ports_t *sides[2] = {&d->inputs, &d->outputs};
        const int most[2] = {CDNN_NODE_MAX_INPUTS, CDNN_NODE_MAX_OUTPUTS};
        for (int s = 0; s < 2; s++) {
            assert_in_range(sides[s]->count, 1, most[s]);
            assert_in_range(sides[s]->required, 1, sides[s]->count);
            for (int p = 0; p < CDNN_NODE_MAX_INPUTS; p++)
                assert_true((sides[s]->names[p] != NULL) == (p < sides[s]->count));
        }
        assert_true(d->same_typed_inputs <= d->inputs.required);
        for (int other = 0; other < op; other++) {
            assert_string_not_equal(d->name, op_desc((cdnn_op_t)other)->name);
            assert_string_not_equal(d->schema_name,
                                    op_desc((cdnn_op_t)other)->schema_name);
        }
    }
    assert_null(op_desc(CDNN_OP_COUNT));
    assert_null(op_desc((cdnn_op_t)-1));
}

/* "`x, scale, bias?` (...)" against one side of a row. */
static void expect_doc_ports(const char *cell, const op_ports_t *ports,
                             const char *op)
{
    char list[256];
    const char *open = strchr(cell, '`'), *close = open ? strchr(open + 1, '`') : NULL;
    if (!close)
        fail_msg("%s: FORMATS.md's ports \"%s\" are not in backquotes", op, cell);
    snprintf(list, sizeof list, "%.*s", (int)(close - open - 1), open + 1);
    int count = 0, required = 0;
    for (char *save, *name = strtok_r(list, ", ", &save); name;
         name = strtok_r(NULL, ", ", &save), count++) {
        size_t len = strlen(name);
        int optional = name[len - 1] == '?';
        name[len - optional] = '\0';
        if (count >= ports->count || strcmp(name, ports->names[count]) != 0)
            fail_msg("%s: FORMATS.md lists port %d as \"%s\", the table as \"%s\"",
                     op, count, name,
                     count < ports->count ? ports->names[count] : "(none)");
        if (!optional && required++ != count)
            fail_msg("%s: FORMATS.md has a required port after an optional one", op);
    }
    assert_int_equal(count, ports->count);
    assert_int_equal(required, ports->required);
}

/* One row of the ops table: | value | `Op` | `name` | ins | outs | attr |. */
static void expect_doc_row(char *row)
{
    char *cell[8] = {0};
    int n = 0;
    for (char *save, *c = strtok_r(row, "|", &save); c && n < 8;
         c = strtok_r(NULL, "|", &save))
        cell[n++] = c;
    assert_int_equal(n, 6);
    int op = atoi(cell[0]);
    assert_in_range(op, 0, CDNN_OP_COUNT - 1);
    const op_desc_t *d = op_desc((cdnn_op_t)op);
    char want[96];
    snprintf(want, sizeof want, " `%s` ", d->schema_name);
    assert_string_equal(cell[1], want);
    snprintf(want, sizeof want, " `%s` ", d->name);
    assert_string_equal(cell[2], want);
    expect_doc_ports(cell[3], &d->inputs, d->name);
    expect_doc_ports(cell[4], &d->outputs, d->name);
    if (d->attr == OP_ATTR_NONE)
        snprintf(want, sizeof want, " NONE ");
    else
        snprintf(want, sizeof want, " `%s` ", op_attr_schema_name(d->attr));
    assert_string_equal(cell[5], want);
}

static void test_formats_md_lists_the_table(void **state)
{
    (void)state;
    char *doc = read_text(FORMATS_MD);
    char *section = strstr(doc, "### Ops and their ports");
    if (!section)
        fail_msg("FORMATS.md has no \"### Ops and their ports\"");
    char *end = strstr(section + 1, "\n#");
    if (end)
        *end = '\0';
    int rows = 0;
    for (char *save, *line = strtok_r(section, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save))
        if (line[0] == '|' && isdigit((unsigned char)line[2])) {
            assert_int_equal(atoi(line + 1), rows);
            expect_doc_row(line);
            rows++;
        }
    assert_int_equal(rows, CDNN_OP_COUNT);
    free(doc);
}

static void test_public_calls_report_the_table(void **state)
{
    (void)state;
    for (int op = 0; op < CDNN_OP_COUNT; op++) {
        const op_desc_t *d = op_desc((cdnn_op_t)op);
        cdnn_op_port_info_t info;
        OK(cdnn_op_port_info((cdnn_op_t)op, &info));
        assert_string_equal(cdnn_op_name((cdnn_op_t)op), d->name);
        assert_int_equal(info.input_count, d->inputs.count);
        assert_int_equal(info.required_inputs, d->inputs.required);
        assert_int_equal(info.output_count, d->outputs.count);
        assert_int_equal(info.required_outputs, d->outputs.required);
        assert_int_equal(info.inputs_by_mode, d->input_arity != NULL);
        for (int p = 0; p < CDNN_NODE_MAX_INPUTS; p++)
            assert_ptr_equal(info.input_names[p], d->inputs.names[p]);
        for (int p = 0; p < CDNN_NODE_MAX_OUTPUTS; p++)
            assert_ptr_equal(info.output_names[p], d->outputs.names[p]);
    }
    cdnn_op_port_info_t info;
    assert_int_equal(cdnn_op_port_info(CDNN_OP_COUNT, &info), CDNN_STATUS_BAD_PARAM);
    assert_non_null(strstr(cdnn_last_error(), "is not a cdnn_op_t"));
    assert_int_equal(cdnn_op_port_info(CDNN_OP_MATMUL, NULL), CDNN_STATUS_BAD_PARAM);
    assert_string_equal(cdnn_op_name(CDNN_OP_COUNT), "invalid");
}

/* A node of op with a tensor in every slot it has (not a valid graph:
 * these tests stop short of validation). */
static cdnn_graph_t *node_in_every_slot(cdnn_op_t op)
{
    const op_desc_t *d = op_desc(op);
    int64_t in[CDNN_NODE_MAX_INPUTS], out[CDNN_NODE_MAX_OUTPUTS];
    const int64_t dims[1] = {4};
    cdnn_graph_t *g = NULL;
    OK(cdnn_graph_create(&g));
    for (int p = 0; p < CDNN_NODE_MAX_INPUTS; p++) {
        in[p] = p < d->inputs.count ? 100 + p : CDNN_UID_NONE;
        if (p < d->inputs.count)
            OK(cdnn_graph_tensor(g, in[p], NULL, CDNN_DATA_TYPE_F32, 1, dims, NULL));
    }
    for (int p = 0; p < CDNN_NODE_MAX_OUTPUTS; p++) {
        out[p] = p < d->outputs.count ? 200 + p : CDNN_UID_NONE;
        if (p < d->outputs.count)
            OK(cdnn_graph_tensor(g, out[p], NULL, CDNN_DATA_TYPE_F32, 0, NULL, NULL));
    }
    cdnn_node_attr_t attr;
    memset(&attr, 0, sizeof attr);
    if (d->attr == OP_ATTR_CONV)
        cdnn_conv_attr_init(&attr.conv, 1);
    if (d->attr == OP_ATTR_POINTWISE)
        cdnn_pointwise_attr_init(&attr.pointwise, CDNN_PW_FMA); /* three inputs */
    if (d->attr == OP_ATTR_TRANSPOSE)
        attr.transpose.rank = 1; /* perm {0}, of dims {4} */
    if (d->attr == OP_ATTR_PAD)
        attr.pad.rank = 1; /* pre {0}, value 0 */
    if (d->attr == OP_ATTR_TOPK)
        attr.topk.k = 1; /* axis 0, the smallest */
    if (d->attr == OP_ATTR_POOLING)
        cdnn_pooling_attr_init(&attr.pooling, CDNN_POOLING_MAX, 1);
    if (d->attr == OP_ATTR_SLICE) {
        attr.slice.rank = 1; /* start {0} */
        attr.slice.step[0] = 1;
    }
    OK(graph_add_node(g, op, "n", in, out, &attr));
    return g;
}

static void expect_same_ports(const cdnn_graph_t *a, const cdnn_graph_t *b)
{
    assert_int_equal(a->node_count, 1);
    assert_int_equal(b->node_count, 1);
    assert_int_equal(a->nodes[0].op, b->nodes[0].op);
    assert_memory_equal(a->nodes[0].inputs, b->nodes[0].inputs,
                        sizeof a->nodes[0].inputs);
    assert_memory_equal(a->nodes[0].outputs, b->nodes[0].outputs,
                        sizeof a->nodes[0].outputs);
}

static void test_every_op_round_trips(void **state)
{
    (void)state;
    for (int op = 0; op < CDNN_OP_COUNT; op++) {
        cdnn_graph_t *g = node_in_every_slot((cdnn_op_t)op), *from_bytes = NULL,
                     *from_json = NULL;
        uint8_t *bytes = NULL;
        size_t size = 0;
        char *json = NULL, want[96];
        OK(graph_format_encode(g, &bytes, &size));
        OK(graph_format_decode(bytes, size, &from_bytes));
        expect_same_ports(g, from_bytes);
        OK(graph_json_encode(g, &json));
        snprintf(want, sizeof want, "\"op\": \"%s\"", op_desc((cdnn_op_t)op)->schema_name);
        if (op != 0 && !strstr(json, want)) /* op 0 is the default, left out */
            fail_msg("the JSON of a %s node lacks %s:\n%s", cdnn_op_name((cdnn_op_t)op),
                     want, json);
        OK(graph_json_decode(json, strlen(json), &from_json));
        expect_same_ports(g, from_json);
        free(bytes);
        free(json);
        cdnn_graph_destroy(g);
        cdnn_graph_destroy(from_bytes);
        cdnn_graph_destroy(from_json);
    }
}

/* Validation reads the ports from the table: a node missing its first
 * input is refused naming that port, and one with an input past its slots
 * is refused too.  The node's declaration is edited in place, as no
 * builder call would make either. */
static void test_validation_names_the_table_ports(void **state)
{
    (void)state;
    for (int op = 0; op < CDNN_OP_COUNT; op++) {
        const op_desc_t *d = op_desc((cdnn_op_t)op);
        cdnn_graph_t *g = node_in_every_slot((cdnn_op_t)op);
        g->nodes[0].inputs[0] = CDNN_UID_NONE;
        assert_int_equal(cdnn_graph_validate(g), CDNN_STATUS_INVALID_GRAPH);
        char want[96];
        snprintf(want, sizeof want, "(%s): '%s' is required", d->name, d->inputs.names[0]);
        if (!strstr(cdnn_last_error(), want))
            fail_msg("\"%s\" lacks \"%s\"", cdnn_last_error(), want);
        g->nodes[0].inputs[0] = 100;
        if (d->inputs.count < CDNN_NODE_MAX_INPUTS) {
            g->nodes[0].inputs[d->inputs.count] = 100;
            assert_int_equal(cdnn_graph_validate(g), CDNN_STATUS_INVALID_GRAPH);
            assert_non_null(strstr(cdnn_last_error(), "is one more than the op takes"));
        }
        cdnn_graph_destroy(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_enums_follow_the_table),
        cmocka_unit_test(test_rows_are_whole),
        cmocka_unit_test(test_formats_md_lists_the_table),
        cmocka_unit_test(test_public_calls_report_the_table),
        cmocka_unit_test(test_every_op_round_trips),
        cmocka_unit_test(test_validation_names_the_table_ports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
