#include "kp_util.h"

#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <cdnn_sdk/kpack.h>
#include <cdnn_sdk/numeric.h>
#include <cdnn_sdk/sha256.h>

#define OK(call)                                                                      \
    do {                                                                              \
        cdnn_status_t st_ = (call);                                                   \
        if (st_ != CDNN_STATUS_SUCCESS)                                               \
            fail_msg("%s: %s: %s", #call, cdnn_status_string(st_), cdnn_last_error());  \
    } while (0)

/* ---- files -------------------------------------------------------------------------- */

void kp_bytes_free(kp_bytes_t *b)
{
    free(b->data);
    b->data = NULL;
    b->size = 0;
}

kp_bytes_t kp_read_file(const char *path)
{
    kp_bytes_t b = {NULL, 0};
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    b.size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    b.data = malloc(b.size + 1);
    assert_non_null(b.data);
    assert_int_equal(fread(b.data, 1, b.size, f), b.size);
    fclose(f);
    return b;
}

void kp_write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        fail_msg("cannot write %s", path);
    assert_int_equal(fwrite(data, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

static char temp_dir[64];

const char *kp_temp_dir(void)
{
    if (!temp_dir[0]) {
        snprintf(temp_dir, sizeof temp_dir, "/tmp/cdnn-kp-XXXXXX");
        assert_non_null(mkdtemp(temp_dir));
    }
    return temp_dir;
}

void kp_cleanup(void)
{
    char command[128];
    if (!temp_dir[0])
        return;
    snprintf(command, sizeof command, "rm -rf '%s'", temp_dir);
    if (system(command) != 0)
        fprintf(stderr, "could not remove %s\n", temp_dir);
    temp_dir[0] = 0;
}

/* ---- packs ------------------------------------------------------------------------------ */

void kp_write_pack(const char *path, const sdk_kpack_spec_t *spec)
{
    char why[512];
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (sdk_kpack_write(spec, &bytes, &size, why, sizeof why) != CDNN_STATUS_SUCCESS)
        fail_msg("cannot write pack %s: %s", path, why);
    kp_write_file(path, bytes, size);
    free(bytes);
}

/* A family of host kernels and the engine the test pack makes of it. */
typedef struct host_family {
    const char *prefix; /* object files "<prefix><variant>.<level>.so" */
    const char *engine, *match, *constraints, *handler, *signature;
} host_family_t;

static const host_family_t host_families[] = {
    {"matmul_", "kernels:matmul_host", "matmul_epilogue",
     "{\"dtypes\":[\"bf16\",\"f16\",\"f32\"],\"epilogue\":[\"add\",\"bias\",\"gelu\","
     "\"gelu_tanh\",\"relu\",\"silu\",\"tanh\"],\"max_rank\":8}",
     "host_matmul", "host-matmul-v1"},
    {"pointwise_", "kernels:pointwise_host", "pointwise_program",
     "{\"dtypes\":[\"bf16\",\"f16\",\"f32\"]}", "host_pointwise", "host-pointwise-v1"},
    {"norm_", "kernels:norm_host", "norm", "{\"dtypes\":[\"bf16\",\"f16\",\"f32\"]}",
     "host_norm", "host-norm-v1"},
    {"reduce", "kernels:reduce_host", "reduction", "{\"dtypes\":[\"bf16\",\"f16\",\"f32\"]}",
     "host_reduce", "host-reduce-v1"},
    {"conv_nhwc_", "kernels:conv_host", "conv_fwd_nhwc_host",
     "{\"dtypes\":[\"bf16\",\"f16\",\"f32\"],\"epilogue\":[\"add\",\"bias\",\"gelu\","
     "\"gelu_tanh\",\"relu\",\"silu\",\"tanh\"]}",
     "host_conv", "host-conv-nhwc-v1"},
    {"softmax_", "kernels:softmax_host", "softmax", "{\"dtypes\":[\"bf16\",\"f16\",\"f32\"]}",
     "host_softmax", "host-softmax-v1"},
};
#define HOST_FAMILY_COUNT (int)(sizeof host_families / sizeof *host_families)
#define MAX_OBJECTS 64

/* A code object of the project's host kernels, as a pack kernel. */
typedef struct host_object {
    int family;
    char file[256], name[64], level[16], id[96], symbol[96];
    kp_bytes_t code;
    sdk_kpack_kv_t metadata; /* "variant": the object's name */
} host_object_t;

/* "<name>.<level>.so" of a known family into o. */
static int parse_host_object(const char *file, host_object_t *o)
{
    char name[64], level[16];
    if (sscanf(file, "%63[^.].%15[^.].so", name, level) != 2 ||
        strncmp(level, "x86-64", 6) != 0)
        return 0;
    memset(o, 0, sizeof *o);
    o->family = -1;
    for (int f = 0; f < HOST_FAMILY_COUNT; f++)
        if (strncmp(name, host_families[f].prefix, strlen(host_families[f].prefix)) == 0)
            o->family = f;
    snprintf(o->file, sizeof o->file, "%.200s", file);
    snprintf(o->name, sizeof o->name, "%s", name);
    snprintf(o->level, sizeof o->level, "%s", level);
    snprintf(o->id, sizeof o->id, "%s_%s", name, level);
    snprintf(o->symbol, sizeof o->symbol, "cdnn_host_%s", name);
    return o->family >= 0;
}

/* Higher levels first, so that an engine's default candidate is the best
 * build; then by name. */
static int by_level_then_name(const void *a, const void *b)
{
    const host_object_t *x = a, *y = b;
    int c = strcmp(y->level, x->level);
    return c ? c : strcmp(x->file, y->file);
}

static int find_host_objects(host_object_t *objects)
{
    int n = 0;
    DIR *dir = opendir(HOST_KERNEL_DIR);
    assert_non_null(dir);
    for (struct dirent *e; (e = readdir(dir)) && n < MAX_OBJECTS;)
        n += parse_host_object(e->d_name, &objects[n]);
    closedir(dir);
    qsort(objects, (size_t)n, sizeof *objects, by_level_then_name);
    return n;
}

/* Engine number f's candidates: its family's objects, in objects' order. */
static sdk_kpack_spec_engine_t family_engine(int f, const host_object_t *objects, int n,
                                            const char **ids)
{
    const host_family_t *h = &host_families[f];
    int count = 0;
    for (int i = 0; i < n; i++)
        if (objects[i].family == f)
            ids[count++] = objects[i].id;
    return (sdk_kpack_spec_engine_t){h->engine, 40, h->match, h->constraints, h->handler, 1,
                                     0, NULL, count, ids};
}

void kp_write_host_pack(const char *dir, const char *name)
{
    static host_object_t objects[MAX_OBJECTS];
    sdk_kpack_spec_kernel_t kernels[MAX_OBJECTS];
    sdk_kpack_spec_engine_t engines[HOST_FAMILY_COUNT];
    const char *ids[HOST_FAMILY_COUNT][MAX_OBJECTS];
    char path[512];
    int n = find_host_objects(objects), engine_count = 0;
    for (int i = 0; i < n; i++) {
        host_object_t *o = &objects[i];
        snprintf(path, sizeof path, "%s/%.200s", HOST_KERNEL_DIR, o->file);
        o->code = kp_read_file(path);
        o->metadata = (sdk_kpack_kv_t){"variant", o->name};
        kernels[i] = (sdk_kpack_spec_kernel_t){o->id, o->symbol, o->level,
                                               host_families[o->family].signature,
                                               o->code.data, o->code.size, 1, &o->metadata};
    }
    for (int f = 0; f < HOST_FAMILY_COUNT; f++) {
        engines[engine_count] = family_engine(f, objects, n, ids[f]);
        engine_count += engines[engine_count].candidate_count > 0;
    }
    assert_true(engine_count > 0);
    sdk_kpack_spec_t spec = {"cdnn-host-test", "0.1.0", "host", n, kernels, engine_count,
                             engines};
    snprintf(path, sizeof path, "%s/%s", dir, name);
    kp_write_pack(path, &spec);
    for (int i = 0; i < n; i++)
        kp_bytes_free(&objects[i].code);
}

static kp_bytes_t marked_code(int mark)
{
    char path[512];
    snprintf(path, sizeof path, "%s/marked_matmul.v%d.so", TEST_KERNEL_DIR, mark);
    return kp_read_file(path);
}

void kp_marked_code_sha256(int mark, uint8_t sha256[32])
{
    kp_bytes_t code = marked_code(mark);
    assert_int_equal(sdk_sha256(code.data, code.size, sha256), 0);
    kp_bytes_free(&code);
}

void kp_write_marked_pack(const char *path, int mark)
{
    char version[16];
    kp_bytes_t code = marked_code(mark);
    const char *ids[] = {"marked_matmul"};
    sdk_kpack_spec_kernel_t kernel = {"marked_matmul", "cdnn_host_marked_matmul", "x86-64",
                                      "host-matmul-v1", code.data, code.size, 0, NULL};
    sdk_kpack_spec_engine_t engine = {
        "kernels:marked_matmul", 45, "matmul_epilogue",
        "{\"dtypes\":[\"f32\"],\"epilogue\":[\"add\",\"bias\",\"relu\"]}", "host_matmul", 1,
        0, NULL, 1, ids};
    snprintf(version, sizeof version, "%d.0.0", mark);
    sdk_kpack_spec_t spec = {"cdnn-marked-test", version, "host", 1, &kernel, 1, &engine};
    kp_write_pack(path, &spec);
    kp_bytes_free(&code);
}

void kp_write_marked_engines_pack(const char *path, const kp_engine_entry_t *entries,
                                  int32_t count)
{
    kp_bytes_t code = marked_code(1);
    const char *ids[] = {"marked_matmul"};
    sdk_kpack_spec_engine_t engines[8];
    sdk_kpack_spec_kernel_t kernel = {"marked_matmul", "cdnn_host_marked_matmul", "x86-64",
                                      "host-matmul-v1", code.data, code.size, 0, NULL};
    assert_true(count <= 8);
    for (int32_t i = 0; i < count; i++)
        engines[i] = (sdk_kpack_spec_engine_t){
            entries[i].name, 10, entries[i].match, "{}", entries[i].handler,
            entries[i].handler_version, entries[i].knob_count, entries[i].knobs, 1, ids};
    sdk_kpack_spec_t spec = {"cdnn-engines-test", "1.0.0", "host", 1, &kernel, count, engines};
    kp_write_pack(path, &spec);
    kp_bytes_free(&code);
}

/* ---- graphs ------------------------------------------------------------------------------- */

/* Packed row-major strides of dims, each row padded by pad elements. */
static void packed(int32_t rank, const int64_t *dims, int64_t pad, int64_t *strides)
{
    int64_t step = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        strides[d] = step;
        step *= dims[d] + (d == rank - 1 ? pad : 0);
    }
}

static void declare(cdnn_graph_t *g, int64_t uid, cdnn_data_type_t type, int32_t rank,
                    const int64_t *dims, const int64_t *strides)
{
    OK(cdnn_graph_tensor(g, uid, NULL, type, rank, dims, strides));
}

static void declare_operands(cdnn_graph_t *g, const kp_matmul_t *m)
{
    int32_t r = m->batch_rank + 2;
    int64_t a[CDNN_MAX_RANK], b[CDNN_MAX_RANK], c[CDNN_MAX_RANK], s[CDNN_MAX_RANK] = {0};
    for (int32_t d = 0; d < m->batch_rank; d++) {
        a[d] = c[d] = m->batch[d];
        b[d] = m->b_shared ? 1 : m->batch[d];
    }
    a[r - 2] = c[r - 2] = m->m;
    a[r - 1] = b[r - 2] = m->k;
    b[r - 1] = c[r - 1] = m->n;
    packed(r, a, m->a_pad, s);
    declare(g, 1, m->type, r, a, s);
    packed(r, b, 0, s);
    if (m->b_transposed) { /* k fastest, then n, then the batch */
        s[r - 2] = 1;
        s[r - 1] = m->k;
    }
    declare(g, 2, m->type, r, b, s);
    declare(g, 3, m->type, r, c, NULL);
    if (m->residual)
        declare(g, 5, m->type, r, c, NULL);
    for (int32_t d = 0; d < r - 1; d++)
        c[d] = 1;
    if (m->bias)
        declare(g, 4, m->type, r, c, NULL);
}

/* The chain's next value: a virtual f32 tensor, or y when it is the last. */
static int64_t next_value(cdnn_graph_t *g, int last, int64_t *virtual_uid)
{
    if (last)
        return 3;
    OK(cdnn_graph_tensor(g, *virtual_uid, NULL, CDNN_DATA_TYPE_F32, 0, NULL, NULL));
    OK(cdnn_graph_tensor_set_virtual(g, *virtual_uid));
    return (*virtual_uid)++;
}

static void pointwise(cdnn_graph_t *g, cdnn_pointwise_mode_t mode, int64_t x, int64_t y,
                      int64_t out)
{
    cdnn_pointwise_attr_t attr;
    cdnn_pointwise_attr_init(&attr, mode);
    OK(cdnn_graph_pointwise(g, NULL, &attr, x, y, CDNN_UID_NONE, out));
}

static int epilogue_steps(const kp_epilogue_t *e)
{
    return e->bias + (e->act != CDNN_PW_IDENTITY) + e->residual;
}

int64_t kp_epilogue_input(cdnn_graph_t *g, const kp_epilogue_t *e)
{
    int64_t virtual_uid = 10;
    return next_value(g, epilogue_steps(e) == 0, &virtual_uid);
}

void kp_epilogue_add(cdnn_graph_t *g, const kp_epilogue_t *e, int64_t value)
{
    int steps = epilogue_steps(e);
    int64_t virtual_uid = 11; /* 10 is kp_epilogue_input's */
    if (e->bias) {
        int64_t out = next_value(g, --steps == 0, &virtual_uid);
        pointwise(g, CDNN_PW_ADD, value, 4, out);
        value = out;
    }
    if (e->act != CDNN_PW_IDENTITY) {
        int64_t out = next_value(g, --steps == 0, &virtual_uid);
        pointwise(g, e->act, value, CDNN_UID_NONE, out);
        value = out;
    }
    if (e->residual)
        pointwise(g, CDNN_PW_ADD, 5, value, 3);
}

int32_t kp_engine_index(cdnn_handle_t *h, const char *name)
{
    int32_t count = 0;
    OK(cdnn_handle_engine_count(h, &count));
    for (int32_t i = 0; i < count; i++) {
        cdnn_engine_info_t info;
        OK(cdnn_handle_engine_info(h, i, &info));
        if (strcmp(info.name, name) == 0)
            return i;
    }
    return -1;
}

cdnn_graph_t *kp_matmul_graph(const kp_matmul_t *m)
{
    cdnn_graph_t *g = NULL;
    const kp_epilogue_t e = {.bias = m->bias, .act = m->act, .residual = m->residual};
    OK(cdnn_graph_create(&g));
    declare_operands(g, m);
    int64_t value = kp_epilogue_input(g, &e);
    OK(cdnn_graph_matmul(g, "mm", 1, 2, value));
    kp_epilogue_add(g, &e, value);
    OK(cdnn_graph_validate(g));
    return g;
}

const char *kp_matmul_label(const kp_matmul_t *m)
{
    static char label[160];
    snprintf(label, sizeof label, "batch %d [%lldx%lldx%lld] %s%s%s%s%s%s%s",
             m->batch_rank ? (int)m->batch[0] : 0, (long long)m->m, (long long)m->k,
             (long long)m->n, cdnn_data_type_name(m->type),
             m->b_transposed ? " b^T" : "", m->a_pad ? " padded" : "",
             m->b_shared ? " shared-b" : "", m->bias ? " bias" : "",
             m->act != CDNN_PW_IDENTITY ? " act" : "", m->residual ? " residual" : "");
    return label;
}

/* ---- running --------------------------------------------------------------------------------- */

/* The same values for a uid in every process: a small LCG over [-1, 1]. */
static void fill(void *p, const cdnn_tensor_io_t *t)
{
    size_t elem = cdnn_data_type_size(t->type), n = t->span_bytes / elem;
    uint64_t state = 0x9e3779b97f4a7c15ull * (uint64_t)(t->uid + 1);
    for (size_t i = 0; i < n; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        double v = (double)((state >> 33) % 2001) / 1000.0 - 1.0;
        cdnn_store_element(t->type, (char *)p + i * elem, v);
    }
}

kp_run_t kp_run_prepare(cdnn_graph_t *g)
{
    kp_run_t r;
    memset(&r, 0, sizeof r);
    OK(cdnn_graph_io_tensors(g, r.io, KP_MAX_IO, &r.count));
    for (int32_t i = 0; i < r.count; i++) {
        r.ptrs[i] = calloc(1, r.io[i].span_bytes + 64);
        assert_non_null(r.ptrs[i]);
        if (!r.io[i].is_output)
            fill(r.ptrs[i], &r.io[i]);
    }
    return r;
}

cdnn_status_t kp_run_execute(cdnn_graph_t *g, cdnn_handle_t *h, kp_run_t *r)
{
    int64_t uids[KP_MAX_IO];
    size_t workspace_size = 0;
    for (int32_t i = 0; i < r->count; i++)
        uids[i] = r->io[i].uid;
    cdnn_status_t st = cdnn_graph_workspace_size(g, &workspace_size);
    void *workspace = malloc(workspace_size + 1);
    if (st == CDNN_STATUS_SUCCESS)
        st = workspace ? cdnn_graph_execute(g, h, r->count, uids, r->ptrs, workspace)
                       : CDNN_STATUS_ALLOC_FAILED;
    free(workspace);
    return st;
}

kp_run_t kp_run_graph(cdnn_graph_t *g, cdnn_handle_t *h)
{
    kp_run_t r = kp_run_prepare(g);
    OK(kp_run_execute(g, h, &r));
    return r;
}

void kp_run_free(kp_run_t *r)
{
    for (int32_t i = 0; i < r->count; i++)
        free(r->ptrs[i]);
    r->count = 0;
}

void kp_assert_same_outputs(const kp_run_t *a, const kp_run_t *b)
{
    assert_int_equal(a->count, b->count);
    for (int32_t i = 0; i < a->count; i++) {
        assert_int_equal(a->io[i].uid, b->io[i].uid);
        assert_int_equal(a->io[i].span_bytes, b->io[i].span_bytes);
        if (a->io[i].is_output)
            assert_memory_equal(a->ptrs[i], b->ptrs[i], a->io[i].span_bytes);
    }
}

static double tolerance(cdnn_data_type_t type)
{
    return type == CDNN_DATA_TYPE_BF16 ? 3e-2 : type == CDNN_DATA_TYPE_F16 ? 4e-3 : 1e-4;
}

void kp_assert_close_outputs(const kp_run_t *got, const kp_run_t *want, const char *label)
{
    assert_int_equal(got->count, want->count);
    for (int32_t i = 0; i < got->count; i++) {
        const cdnn_tensor_io_t *t = &want->io[i];
        size_t elem = cdnn_data_type_size(t->type), n = t->span_bytes / elem;
        double scale = 1e-30;
        if (!t->is_output)
            continue;
        for (size_t e = 0; e < n; e++)
            scale = fmax(scale, fabs(cdnn_load_element(t->type, (char *)want->ptrs[i] + e * elem)));
        for (size_t e = 0; e < n; e++) {
            double x = cdnn_load_element(t->type, (char *)got->ptrs[i] + e * elem);
            double y = cdnn_load_element(t->type, (char *)want->ptrs[i] + e * elem);
            if (!(fabs(x - y) <= tolerance(t->type) * scale))
                fail_msg("%s: output uid %lld element %zu is %.7g, the reference %.7g",
                         label, (long long)t->uid, e, x, y);
        }
    }
}

double kp_first_output(const kp_run_t *r)
{
    for (int32_t i = 0; i < r->count; i++)
        if (r->io[i].is_output)
            return cdnn_load_element(r->io[i].type, r->ptrs[i]);
    fail_msg("the run has no output");
    return 0;
}

/* ---- handles and builds ------------------------------------------------------------------------ */

cdnn_handle_t *kp_cpu_handle(void)
{
    cdnn_handle_t *h = NULL;
    OK(cdnn_handle_create(&h, "cpu"));
    return h;
}

void kp_build_pinned(cdnn_graph_t *g, cdnn_handle_t *h, const char *engine,
                     const char *knob, int64_t value)
{
    cdnn_build_options_t *opts = NULL;
    OK(cdnn_build_options_create(&opts));
    OK(cdnn_build_options_pin_engine(opts, cdnn_engine_id_from_name(engine)));
    if (knob)
        OK(cdnn_build_options_set_knob(opts, knob, value));
    cdnn_status_t st = cdnn_graph_build(g, h, opts);
    cdnn_build_options_destroy(opts);
    if (st != CDNN_STATUS_SUCCESS)
        fail_msg("building on %s: %s: %s", engine, cdnn_status_string(st), cdnn_last_error());
}

kp_bytes_t kp_save(cdnn_graph_t *g, cdnn_save_form_t form)
{
    kp_bytes_t b = {NULL, 0};
    size_t again = 0;
    OK(cdnn_graph_save(g, form, NULL, 0, &b.size));
    b.data = malloc(b.size);
    assert_non_null(b.data);
    OK(cdnn_graph_save(g, form, b.data, b.size, &again));
    assert_int_equal(again, b.size);
    return b;
}

/* ---- a fresh process ------------------------------------------------------------------------------ */

/* The child's report: a fixed part, then each output's io and bytes. */
typedef struct child_report {
    int32_t status;
    int32_t resaved_same;
    int32_t count;
    char message[2048];
} child_report_t;

static void run_child(const char *in, const char *out, const char *const *env)
{
    for (int i = 0; env && env[i]; i++)
        putenv((char *)env[i]);
    execl("/proc/self/exe", "test_kernels_provider", "kp-child", in, out, (char *)NULL);
    _exit(127);
}

static void read_report(const char *path, kp_child_t *c)
{
    kp_bytes_t b = kp_read_file(path);
    child_report_t report;
    size_t at = sizeof report;
    assert_true(b.size >= sizeof report);
    memcpy(&report, b.data, sizeof report);
    c->status = (cdnn_status_t)report.status;
    c->resaved_same = report.resaved_same;
    snprintf(c->message, sizeof c->message, "%s", report.message);
    c->run.count = report.count;
    for (int32_t i = 0; i < report.count; i++) {
        memcpy(&c->run.io[i], b.data + at, sizeof c->run.io[i]);
        at += sizeof c->run.io[i];
        c->run.ptrs[i] = malloc(c->run.io[i].span_bytes + 1);
        memcpy(c->run.ptrs[i], b.data + at, c->run.io[i].span_bytes);
        at += c->run.io[i].span_bytes;
    }
    kp_bytes_free(&b);
}

kp_child_t kp_in_child(kp_bytes_t bytes, const char *const *env)
{
    char in[256], out[256];
    kp_child_t c;
    int status = 0;
    memset(&c, 0, sizeof c);
    snprintf(in, sizeof in, "%s/child-in.bin", kp_temp_dir());
    snprintf(out, sizeof out, "%s/child-out.bin", kp_temp_dir());
    kp_write_file(in, bytes.data, bytes.size);
    unlink(out);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        run_child(in, out, env);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the child process failed (status 0x%x)", status);
    read_report(out, &c);
    return c;
}

void kp_child_free(kp_child_t *c)
{
    kp_run_free(&c->run);
}

/* The child: load, run, re-save; everything it saw goes to the report. */
static int write_report(const char *path, const child_report_t *report, const kp_run_t *r)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 1;
    fwrite(report, sizeof *report, 1, f);
    for (int32_t i = 0; i < r->count; i++) {
        fwrite(&r->io[i], sizeof r->io[i], 1, f);
        fwrite(r->ptrs[i], 1, r->io[i].span_bytes, f);
    }
    return fclose(f) != 0;
}

static int resaves_same(cdnn_graph_t *g, cdnn_save_form_t form, kp_bytes_t in)
{
    kp_bytes_t again = kp_save(g, form);
    int same = again.size == in.size && memcmp(again.data, in.data, in.size) == 0;
    kp_bytes_free(&again);
    return same;
}

int kp_child_main(int argc, char **argv)
{
    child_report_t report = {0};
    cdnn_graph_t *g = NULL;
    uint32_t contents = 0;
    kp_run_t r = {0};
    if (argc != 4)
        return 2;
    kp_bytes_t in = kp_read_file(argv[2]);
    cdnn_handle_t *h = kp_cpu_handle();
    int container = cdnn_blob_contents(in.data, in.size, &contents) == CDNN_STATUS_SUCCESS &&
                    contents == (CDNN_BLOB_GRAPH | CDNN_BLOB_PLAN);
    report.status = container ? cdnn_graph_load(&g, h, in.data, in.size)
                              : cdnn_plan_load(&g, h, in.data, in.size);
    if (report.status != CDNN_STATUS_SUCCESS) {
        snprintf(report.message, sizeof report.message, "%s", cdnn_last_error());
    } else {
        r = kp_run_graph(g, h);
        report.count = r.count;
        report.resaved_same = resaves_same(g, container ? CDNN_SAVE_GRAPH_AND_PLAN
                                                        : CDNN_SAVE_PLAN, in);
    }
    int rc = write_report(argv[3], &report, &r);
    kp_run_free(&r);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    kp_bytes_free(&in);
    return rc;
}
