/*
 * test_fixtures.c -- artifacts saved by an older cdnn keep loading.
 *
 *   test_fixtures DIR
 *
 * Each tests/fixtures/vX.Y/ holds graphs (.cdg), containers (.cdgp: graph
 * and plan, or graph only) and bare plans (.cdp) written by one cdnn (its
 * README says which and how), and a file VERSIONS naming the formats they
 * are in ("graph 1.0", "container 1.0", "plan 1.0", one a line).  Every
 * later cdnn must load them.  For every fixture, with the current library:
 *
 *   - it is what its name says (cdnn_blob_inspect: kind, the formats of
 *     VERSIONS, and for plans the engine named in the file name);
 *   - it loads (graphs and containers: cdnn_graph_load, with a CPU handle
 *     for containers, whose plan is then loaded too; containers also
 *     through cdnn_plan_load; plans: cdnn_plan_load);
 *   - its plan (or, for a graph, a default CPU build of it) executes on
 *     pseudo-random inputs and gives what a fresh cpu:reference build of
 *     the same graph gives (for a bare plan, the graph of the .cdg fixture
 *     of the same example and engine);
 *   - a loaded plan re-saves in PLAN form to exactly the fixture's plan
 *     bytes (for containers, the container's plan part, which is also the
 *     .cdp fixture);
 *   - a graph loaded from a fixture graph or container re-saves (GRAPH, and
 *     GRAPH_AND_PLAN once it has a plan) in the current formats, and what
 *     it saves loads again, runs the same, and keeps the same content key.
 *
 * One cmocka test per fixture, named by its file.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_filter.h"

#include <cdnn/cdnn.h>
#include <cdnn_sdk/numeric.h>

#define OK(call)                                                               \
    do {                                                                       \
        cdnn_status_t st_ = (call);                                            \
        if (st_ != CDNN_STATUS_SUCCESS)                                        \
            fail_msg("%s: %s: %s", #call, cdnn_status_string(st_),             \
                     cdnn_last_error());                                       \
    } while (0)

#define MAX_IO 16
#define MAX_FIXTURES 256

/* The directory under test and the formats its VERSIONS file names. */
static const char *fixtures_dir;
typedef struct format_version {
    int major, minor;
} format_version_t;
static struct {
    format_version_t graph, container, plan;
} formats;

/* ---- bytes ------------------------------------------------------------------ */

typedef struct bytes {
    uint8_t *data;
    size_t size;
} bytes_t;

static bytes_t read_fixture(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", fixtures_dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    bytes_t b = {malloc(1 << 20), 0};
    assert_non_null(b.data);
    b.size = fread(b.data, 1, 1 << 20, f);
    assert_false(ferror(f));
    assert_true(b.size > 0 && b.size < (1 << 20));
    fclose(f);
    return b;
}

static bytes_t save(cdnn_graph_t *g, cdnn_save_form_t form)
{
    bytes_t b = {NULL, 0};
    OK(cdnn_graph_save(g, form, NULL, 0, &b.size));
    b.data = malloc(b.size);
    assert_non_null(b.data);
    size_t again = 0;
    OK(cdnn_graph_save(g, form, b.data, b.size, &again));
    assert_int_equal(again, b.size);
    return b;
}

static void assert_same_bytes(bytes_t a, bytes_t b, const char *what)
{
    if (a.size != b.size)
        fail_msg("%s: %zu bytes, expected %zu", what, a.size, b.size);
    for (size_t i = 0; i < a.size; i++)
        if (a.data[i] != b.data[i])
            fail_msg("%s: byte %zu is 0x%02x, expected 0x%02x", what, i, a.data[i],
                     b.data[i]);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* The plan part (field 3) of a container, read by hand with every offset
 * bounds-checked: the fixture's own plan bytes, independent of cdnn's
 * container reader.  size 0 when the container holds no plan. */
static bytes_t container_plan_part(bytes_t c)
{
    bytes_t part = {NULL, 0};
    assert_true(c.size >= 8 && memcmp(c.data + 4, "CDGP", 4) == 0);
    uint32_t table = le32(c.data);
    assert_true(table + 4 <= c.size);
    int64_t vt = (int64_t)table - (int32_t)le32(c.data + table);
    assert_true(vt >= 0 && (uint64_t)vt + 4 <= c.size);
    uint16_t vt_size = (uint16_t)(c.data[vt] | c.data[vt + 1] << 8);
    assert_true((uint64_t)vt + vt_size <= c.size);
    const unsigned slot = 4 + 2 * 3;
    if (vt_size < slot + 2)
        return part;
    uint16_t off = (uint16_t)(c.data[vt + slot] | c.data[vt + slot + 1] << 8);
    if (!off)
        return part;
    uint64_t at = (uint64_t)table + off;
    assert_true(at + 4 <= c.size);
    uint64_t vec = at + le32(c.data + at);
    assert_true(vec + 4 <= c.size);
    uint32_t n = le32(c.data + vec);
    assert_true(vec + 4 + n <= c.size);
    part.data = malloc(n);
    assert_non_null(part.data);
    memcpy(part.data, c.data + vec + 4, n);
    part.size = n;
    return part;
}

/* ---- running ------------------------------------------------------------------ */

typedef struct run {
    int32_t count;
    cdnn_tensor_io_t io[MAX_IO];
    int64_t uids[MAX_IO];
    void *ptrs[MAX_IO];
} run_t;

/* Inputs pseudo-random in [-1, 1) from a seed (never exactly zero),
 * outputs poisoned with 0xFF. */
static void fill(const cdnn_tensor_io_t *t, void *p, uint32_t seed)
{
    size_t elem = cdnn_data_type_size(t->type);
    if (t->is_output) {
        memset(p, 0xff, t->span_bytes);
        return;
    }
    for (size_t i = 0; i < t->span_bytes / elem; i++) {
        seed = seed * 1664525u + 1013904223u + (uint32_t)t->uid;
        double v = t->type == CDNN_DATA_TYPE_BOOL ? (seed >> 31)
                                                  : (double)(seed >> 8) * 0x1p-23 - 1.0;
        cdnn_store_element(t->type, (char *)p + i * elem, v == 0 ? 0.25 : v);
    }
}

static void run_prepare(cdnn_graph_t *g, run_t *r, uint32_t seed)
{
    OK(cdnn_graph_io_tensors(g, r->io, MAX_IO, &r->count));
    assert_true(r->count > 0 && r->count <= MAX_IO);
    for (int32_t i = 0; i < r->count; i++) {
        r->uids[i] = r->io[i].uid;
        r->ptrs[i] = aligned_alloc(64, (r->io[i].span_bytes + 63) / 64 * 64);
        assert_non_null(r->ptrs[i]);
        fill(&r->io[i], r->ptrs[i], seed);
    }
}

static void run_execute(cdnn_graph_t *g, cdnn_handle_t *h, run_t *r)
{
    size_t ws = 0;
    OK(cdnn_graph_workspace_size(g, &ws));
    void *workspace = ws ? malloc(ws) : NULL;
    for (int32_t i = 0; i < r->count; i++)
        if (r->io[i].is_output)
            fill(&r->io[i], r->ptrs[i], 0);
    OK(cdnn_graph_execute(g, h, r->count, r->uids, r->ptrs, workspace));
    free(workspace);
}

static void run_free(run_t *r)
{
    for (int32_t i = 0; i < r->count; i++)
        free(r->ptrs[i]);
    r->count = 0;
}

/* Same variant pack, and every output within tolerance of the reference's. */
static void compare_outputs(const run_t *got, const run_t *want, const char *what)
{
    assert_int_equal(got->count, want->count);
    int outputs = 0;
    for (int32_t i = 0; i < got->count; i++) {
        const cdnn_tensor_io_t *t = &want->io[i];
        assert_int_equal(got->io[i].uid, t->uid);
        assert_int_equal(got->io[i].type, t->type);
        assert_int_equal(got->io[i].span_bytes, t->span_bytes);
        assert_int_equal(got->io[i].is_output, t->is_output);
        if (!t->is_output)
            continue;
        outputs++;
        size_t elem = cdnn_data_type_size(t->type);
        double err = 0, scale = 1;
        for (size_t k = 0; k < t->span_bytes / elem; k++) {
            double a = cdnn_load_element(t->type, (char *)got->ptrs[i] + k * elem);
            double b = cdnn_load_element(t->type, (char *)want->ptrs[i] + k * elem);
            if (isnan(a) != isnan(b))
                fail_msg("%s: output uid %lld element %zu: %g vs %g", what,
                         (long long)t->uid, k, a, b);
            if (!isnan(b)) {
                err = fmax(err, fabs(a - b));
                scale = fmax(scale, fabs(b));
            }
        }
        double tol = t->type == CDNN_DATA_TYPE_F32 ? 1e-4 : 3e-2;
        if (err > tol * scale)
            fail_msg("%s: output uid %lld: max error %g over tolerance %g", what,
                     (long long)t->uid, err, tol * scale);
    }
    assert_true(outputs > 0);
}

/* Execute g (built or loaded) twice on inputs from seed and compare with
 * want, which ran on the same inputs. */
static void check_runs(cdnn_graph_t *g, cdnn_handle_t *h, const run_t *want,
                       uint32_t seed, const char *what)
{
    run_t got;
    run_prepare(g, &got, seed);
    for (int i = 0; i < 2; i++) {
        run_execute(g, h, &got);
        compare_outputs(&got, want, what);
    }
    run_free(&got);
}

/* The expected outputs: the graph in graph_bytes (a graph or a container)
 * loaded afresh and built pinned to cpu:reference. */
static void reference_run(bytes_t graph_bytes, cdnn_handle_t *h, run_t *r,
                          uint32_t seed)
{
    cdnn_graph_t *g = NULL;
    OK(cdnn_graph_load(&g, NULL, graph_bytes.data, graph_bytes.size));
    cdnn_build_options_t *o = NULL;
    OK(cdnn_build_options_create(&o));
    OK(cdnn_build_options_pin_engine(o, cdnn_engine_id_from_name("cpu:reference")));
    OK(cdnn_graph_build(g, h, o));
    run_prepare(g, r, seed);
    run_execute(g, h, r);
    cdnn_build_options_destroy(o);
    cdnn_graph_destroy(g);
}

/* ---- fixtures and their names ------------------------------------------------ */

/* "<example>.<engine>.<ext>", the engine with '-' for ':' (cpu-blas_conv);
 * graph-only containers are "<example>.graph-only.cdgp". */
typedef struct fixture {
    char file[256];
    char example[128];
    char engine[128]; /* "cpu:blas_conv"; "" for graph-only containers */
    char ext[8];
    uint32_t seed;
} fixture_t;

static int parse_name(const char *file, fixture_t *f)
{
    const char *dot1 = strchr(file, '.');
    const char *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
    if (!dot1 || !dot2 || strchr(dot2 + 1, '.') || strlen(file) >= sizeof f->file)
        return -1;
    size_t ex_len = (size_t)(dot1 - file), eng_len = (size_t)(dot2 - dot1 - 1);
    if (!ex_len || ex_len >= sizeof f->example || !eng_len ||
        eng_len >= sizeof f->engine || strlen(dot2 + 1) >= sizeof f->ext)
        return -1;
    memset(f, 0, sizeof *f);
    snprintf(f->file, sizeof f->file, "%s", file);
    memcpy(f->example, file, ex_len);
    memcpy(f->engine, dot1 + 1, eng_len);
    snprintf(f->ext, sizeof f->ext, "%s", dot2 + 1);
    if (strcmp(f->engine, "graph-only") == 0)
        f->engine[0] = '\0';
    else if (strncmp(f->engine, "cpu-", 4) == 0)
        f->engine[3] = ':';
    else
        return -1;
    uint32_t h = 2166136261u; /* FNV-1a of the name: each fixture its inputs */
    for (const char *p = file; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    f->seed = h | 1;
    return 0;
}

/* What cdnn_blob_inspect says the fixture is must be what its name says. */
static void expect_inspected(bytes_t b, const fixture_t *f, uint32_t contents,
                             int container)
{
    cdnn_blob_info_t *info = NULL;
    OK(cdnn_blob_inspect(b.data, b.size, &info));
    assert_int_equal(info->contents, contents);
    assert_int_equal(info->container_major, container ? formats.container.major : 0);
    assert_int_equal(info->container_minor, container ? formats.container.minor : 0);
    if (contents & CDNN_BLOB_GRAPH) {
        assert_int_equal(info->graph_major, formats.graph.major);
        assert_int_equal(info->graph_minor, formats.graph.minor);
    }
    if (contents & CDNN_BLOB_PLAN) {
        assert_int_equal(info->plan_major, formats.plan.major);
        assert_int_equal(info->plan_minor, formats.plan.minor);
        assert_true(info->plan_verified);
        assert_string_equal(info->engine_name, f->engine);
        assert_string_equal(info->device, "cpu");
    }
    cdnn_blob_info_destroy(info);
}

static void expect_engine(const cdnn_graph_t *g, const char *engine)
{
    uint64_t id = 0;
    const char *name = NULL;
    OK(cdnn_graph_engine(g, &id, &name));
    assert_string_equal(name, engine);
    assert_true(id == cdnn_engine_id_from_name(engine));
}

static void expect_same_key(cdnn_graph_t *a, cdnn_graph_t *b)
{
    char ka[65], kb[65];
    OK(cdnn_graph_content_key(a, ka));
    OK(cdnn_graph_content_key(b, kb));
    assert_string_equal(ka, kb);
}

/* The graph (with or without a plan) g, loaded from a 1.0 artifact,
 * saved in today's forms: each loads again and runs as the reference. */
static void check_resaved_graph(cdnn_graph_t *g, cdnn_handle_t *h, const run_t *want,
                                uint32_t seed, const char *what)
{
    bytes_t graph = save(g, CDNN_SAVE_GRAPH);
    cdnn_blob_info_t *info = NULL;
    OK(cdnn_blob_inspect(graph.data, graph.size, &info));
    assert_int_equal(info->contents, CDNN_BLOB_GRAPH);
    assert_true(info->graph_major == 1 && info->graph_minor >= 1);
    cdnn_blob_info_destroy(info);
    cdnn_graph_t *again = NULL;
    OK(cdnn_graph_load(&again, h, graph.data, graph.size));
    expect_same_key(again, g);
    cdnn_graph_destroy(again);
    free(graph.data);

    bytes_t both = save(g, CDNN_SAVE_GRAPH_AND_PLAN);
    bytes_t plan = save(g, CDNN_SAVE_PLAN);
    OK(cdnn_blob_inspect(both.data, both.size, &info));
    assert_int_equal(info->contents, CDNN_BLOB_GRAPH | CDNN_BLOB_PLAN);
    assert_true(info->container_major == 1 && info->container_minor >= 1);
    assert_true(info->graph_major == 1 && info->graph_minor >= 1);
    cdnn_blob_info_destroy(info);
    OK(cdnn_graph_load(&again, h, both.data, both.size));
    expect_same_key(again, g);
    check_runs(again, h, want, seed, what);
    /* the plan inside is the one g had, byte for byte */
    bytes_t part = save(again, CDNN_SAVE_PLAN);
    assert_same_bytes(part, plan, "the plan of the re-saved container");
    cdnn_graph_destroy(again);
    free(part.data);
    free(plan.data);
    free(both.data);
}

/* ---- the checks, by kind ------------------------------------------------------- */

/* A bare graph: loads with and without a handle, builds on the CPU by
 * default, runs as cpu:reference does, re-saves in today's forms. */
static void check_graph(const fixture_t *f, cdnn_handle_t *h)
{
    bytes_t b = read_fixture(f->file);
    expect_inspected(b, f, CDNN_BLOB_GRAPH, 0);
    cdnn_graph_t *g = NULL;
    OK(cdnn_graph_load(&g, NULL, b.data, b.size));
    cdnn_graph_destroy(g);
    OK(cdnn_graph_load(&g, h, b.data, b.size));
    OK(cdnn_graph_validate(g));
    run_t want;
    reference_run(b, h, &want, f->seed);
    OK(cdnn_graph_build(g, h, NULL));
    check_runs(g, h, &want, f->seed, f->file);
    check_resaved_graph(g, h, &want, f->seed, f->file);
    /* A graph of format 1.1 uses nothing newer, and cdnn writes the lowest
     * minor that expresses a graph: it re-saves byte for byte. */
    cdnn_blob_info_t *info = NULL;
    OK(cdnn_blob_inspect(b.data, b.size, &info));
    if (info->graph_major == 1 && info->graph_minor == 1) {
        bytes_t resaved = save(g, CDNN_SAVE_GRAPH);
        assert_same_bytes(resaved, b, "GRAPH re-save of a format 1.1 graph");
        free(resaved.data);
    }
    cdnn_blob_info_destroy(info);
    cdnn_graph_destroy(g);
    run_free(&want);
    free(b.data);
}

/* The .cdp fixture of a container's example and engine. */
static bytes_t matching(const fixture_t *f, const char *ext)
{
    char name[512];
    char engine[128];
    snprintf(engine, sizeof engine, "%s", f->engine);
    engine[3] = '-';
    snprintf(name, sizeof name, "%s.%s.%s", f->example, engine, ext);
    return read_fixture(name);
}

/* A graph+plan container: the graph loads with its plan, which runs as
 * cpu:reference does and re-saves as the container's plan part; the plan
 * part loads alone too; the graph re-saves in today's forms. */
static void check_container(const fixture_t *f, cdnn_handle_t *h)
{
    bytes_t b = read_fixture(f->file);
    expect_inspected(b, f, CDNN_BLOB_GRAPH | CDNN_BLOB_PLAN, 1);
    bytes_t part = container_plan_part(b);
    assert_true(part.size > 0);
    bytes_t cdp = matching(f, "cdp");
    assert_same_bytes(part, cdp, "the container's plan part and the .cdp fixture");
    free(cdp.data);
    run_t want;
    reference_run(b, h, &want, f->seed);

    cdnn_graph_t *g = NULL;
    OK(cdnn_graph_load(&g, h, b.data, b.size));
    expect_engine(g, f->engine);
    check_runs(g, h, &want, f->seed, f->file);
    bytes_t resaved = save(g, CDNN_SAVE_PLAN);
    assert_same_bytes(resaved, part, "PLAN re-save of the loaded container");
    free(resaved.data);
    check_resaved_graph(g, h, &want, f->seed, f->file);
    cdnn_graph_destroy(g);

    /* without a handle only the graph loads */
    OK(cdnn_graph_load(&g, NULL, b.data, b.size));
    assert_int_equal(cdnn_graph_save(g, CDNN_SAVE_PLAN, NULL, 0, &resaved.size),
                     CDNN_STATUS_BAD_STATE);
    cdnn_graph_destroy(g);

    OK(cdnn_plan_load(&g, h, b.data, b.size));
    expect_engine(g, f->engine);
    check_runs(g, h, &want, f->seed, f->file);
    resaved = save(g, CDNN_SAVE_PLAN);
    assert_same_bytes(resaved, part, "PLAN re-save of the container's plan");
    free(resaved.data);
    cdnn_graph_destroy(g);

    run_free(&want);
    free(part.data);
    free(b.data);
}

/* A graph-only container: loads (no plan, with or without a handle), is
 * no plan to cdnn_plan_load, builds and runs as cpu:reference does, and
 * re-saves in today's forms. */
static void check_graph_container(const fixture_t *f, cdnn_handle_t *h)
{
    bytes_t b = read_fixture(f->file);
    expect_inspected(b, f, CDNN_BLOB_GRAPH, 1);
    bytes_t part = container_plan_part(b);
    assert_int_equal(part.size, 0);
    cdnn_graph_t *g = NULL;
    assert_int_equal(cdnn_plan_load(&g, h, b.data, b.size), CDNN_STATUS_BAD_PARAM);
    assert_null(g);
    OK(cdnn_graph_load(&g, NULL, b.data, b.size));
    cdnn_graph_destroy(g);
    OK(cdnn_graph_load(&g, h, b.data, b.size));
    size_t ws;
    assert_int_equal(cdnn_graph_workspace_size(g, &ws), CDNN_STATUS_BAD_STATE);
    run_t want;
    reference_run(b, h, &want, f->seed);
    OK(cdnn_graph_build(g, h, NULL));
    check_runs(g, h, &want, f->seed, f->file);
    check_resaved_graph(g, h, &want, f->seed, f->file);
    cdnn_graph_destroy(g);
    run_free(&want);
    free(b.data);
}

/* A bare plan: loads, runs as cpu:reference runs the .cdg fixture of the
 * same example, and re-saves to exactly its bytes. */
static void check_plan(const fixture_t *f, cdnn_handle_t *h)
{
    bytes_t b = read_fixture(f->file);
    expect_inspected(b, f, CDNN_BLOB_PLAN, 0);
    bytes_t graph = matching(f, "cdg");
    run_t want;
    reference_run(graph, h, &want, f->seed);
    cdnn_graph_t *g = NULL;
    OK(cdnn_plan_load(&g, h, b.data, b.size));
    expect_engine(g, f->engine);
    check_runs(g, h, &want, f->seed, f->file);
    bytes_t resaved = save(g, CDNN_SAVE_PLAN);
    assert_same_bytes(resaved, b, "PLAN re-save of the loaded plan");
    free(resaved.data);
    cdnn_graph_destroy(g);
    /* the recorded content key is the key of the graph it was built from */
    cdnn_blob_info_t *info = NULL;
    OK(cdnn_blob_inspect(b.data, b.size, &info));
    cdnn_graph_t *from = NULL;
    OK(cdnn_graph_load(&from, NULL, graph.data, graph.size));
    char key[65];
    OK(cdnn_graph_content_key(from, key));
    assert_string_equal(info->graph_content_key, key);
    cdnn_graph_destroy(from);
    cdnn_blob_info_destroy(info);
    run_free(&want);
    free(graph.data);
    free(b.data);
}

static void test_fixture(void **state)
{
    const fixture_t *f = *state;
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cpu"));
    if (strcmp(f->ext, "cdg") == 0)
        check_graph(f, h);
    else if (strcmp(f->ext, "cdp") == 0)
        check_plan(f, h);
    else if (f->engine[0])
        check_container(f, h);
    else
        check_graph_container(f, h);
    cdnn_handle_destroy(h);
}

/* ---- the list ------------------------------------------------------------------ */

static fixture_t fixtures[MAX_FIXTURES];
static int fixture_count;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const fixture_t *)a)->file, ((const fixture_t *)b)->file);
}

/* Every artifact in the directory; anything else there must be one of the
 * files that document or make them. */
static int list_fixtures(void)
{
    DIR *d = opendir(fixtures_dir);
    if (!d) {
        fprintf(stderr, "cannot open %s\n", fixtures_dir);
        return -1;
    }
    struct dirent *e;
    int bad = 0;
    while ((e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        size_t len = strlen(n);
        if (n[0] == '.' || strcmp(n, "README.md") == 0 || strcmp(n, "VERSIONS") == 0 ||
            (len > 2 && strcmp(n + len - 2, ".c") == 0) ||
            (len > 3 && strcmp(n + len - 3, ".sh") == 0))
            continue;
        fixture_t f;
        if (parse_name(n, &f) != 0 ||
            (strcmp(f.ext, "cdg") && strcmp(f.ext, "cdgp") && strcmp(f.ext, "cdp")) ||
            (!f.engine[0] && strcmp(f.ext, "cdgp"))) {
            fprintf(stderr, "%s/%s: not a fixture name "
                    "(<example>.<cpu-engine>.{cdg,cdgp,cdp} or "
                    "<example>.graph-only.cdgp)\n", fixtures_dir, n);
            bad = 1;
            continue;
        }
        if (fixture_count == MAX_FIXTURES) {
            fprintf(stderr, "more than %d fixtures\n", MAX_FIXTURES);
            bad = 1;
            break;
        }
        fixtures[fixture_count++] = f;
    }
    closedir(d);
    qsort(fixtures, (size_t)fixture_count, sizeof *fixtures, by_name);
    return bad ? -1 : 0;
}

/* VERSIONS: "graph M.m", "container M.m" and "plan M.m", one a line. */
static int read_versions(void)
{
    char path[1024], kind[16];
    int major, minor, seen = 0;
    snprintf(path, sizeof path, "%s/VERSIONS", fixtures_dir);
    FILE *f = fopen(path, "r");
    while (f && fscanf(f, "%15s %d.%d", kind, &major, &minor) == 3) {
        format_version_t *at = strcmp(kind, "graph") == 0       ? &formats.graph
                               : strcmp(kind, "container") == 0 ? &formats.container
                               : strcmp(kind, "plan") == 0      ? &formats.plan
                                                                : NULL;
        if (at) {
            *at = (format_version_t){major, minor};
            seen++;
        }
    }
    if (f)
        fclose(f);
    if (seen != 3)
        fprintf(stderr, "%s: expected graph, container and plan versions\n", path);
    return seen == 3 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_fixtures DIR\n");
        return 2;
    }
    fixtures_dir = argv[1];
    if (read_versions() != 0 || list_fixtures() != 0)
        return 1;
    /* the default search path: the providers of this build */
    if (cdnn_set_provider_path(NULL) != CDNN_STATUS_SUCCESS) {
        fprintf(stderr, "cdnn_set_provider_path: %s\n", cdnn_last_error());
        return 1;
    }
    int kinds[4] = {0}; /* cdg, cdp, graph+plan cdgp, graph-only cdgp */
    static struct CMUnitTest tests[MAX_FIXTURES];
    for (int i = 0; i < fixture_count; i++) {
        const fixture_t *f = &fixtures[i];
        kinds[strcmp(f->ext, "cdg") == 0   ? 0
              : strcmp(f->ext, "cdp") == 0 ? 1
              : f->engine[0]               ? 2
                                           : 3]++;
        tests[i] = (struct CMUnitTest){f->file, test_fixture, NULL, NULL,
                                       (void *)f};
    }
    /* At least the five examples the fixtures were made of, in each form. */
    for (int k = 0; k < 4; k++)
        if (kinds[k] < 5) {
            fprintf(stderr, "%s: only %d fixtures of kind %d (cdg, cdp, "
                    "graph+plan cdgp, graph-only cdgp); expected 5 or more\n",
                    fixtures_dir, kinds[k], k);
            return 1;
        }
    test_filter_from_environment();
    return _cmocka_run_group_tests("fixtures", tests, (size_t)fixture_count, NULL,
                                   NULL);
}
