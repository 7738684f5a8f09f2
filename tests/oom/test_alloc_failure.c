/*
 * test_alloc_failure -- make the N-th allocation fail, for every N, along
 * the save and load paths: graph save/load, plan save/load, container
 * save/load (with and without a handle), graph JSON both ways, blob
 * inspect; and on the kernels provider's engines (with OOM_KERNEL_DIR, a
 * host kernel pack the build makes for this test): its kernel packs opened
 * at provider initialisation, kernel plans built and saved (rule 4 reads
 * the pack again), and kernel plans restored through the ordered load
 * checks (the payload decoded, the graph checked, the code object loaded
 * from a memory file).  Each run must end in ALLOC_FAILED with nothing handed back (no
 * object, the caller's buffer untouched) and nothing left allocated; or,
 * where a failure is survivable, in exactly the output of a run with no
 * failure.
 *
 * How allocations are counted and failed:
 *   - the library (a static copy, cdnn_graph_format_testlib) is linked with
 *     -Wl,--wrap=malloc,calloc,realloc,strdup,free, so its calls land in
 *     the __wrap_ functions below;
 *   - the CPU provider and the kernels provider are copies built with the
 *     same --wrap (oom.cmake) and resolve __wrap_* and the cdnn_* functions
 *     they call from this program (-rdynamic), so their pack opening,
 *     payload decoding and plan restore count too, and there is one copy
 *     of the library in the process;
 *   - jansson allocates through json_set_alloc_funcs, libcrypto (SHA-256)
 *     through CRYPTO_set_mem_functions, both routed here.
 * Not counted: OpenBLAS (never called on these paths), libc's own internal
 * allocations (dlopen, stdio), which these paths do not reach.
 *
 * Each distinct caller address of a counted allocation is a "site"; the
 * summary gives allocations and sites per path.  Leaks: the live count of
 * counted allocations must return to where it was (and the ASan build's
 * LeakSanitizer checks everything at exit).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/err.h>

#include <cdnn/cdnn.h>

/* ---- the counting allocator ---------------------------------------------- */

/* Exported (the project builds with hidden visibility): the provider copy
 * resolves its __wrap_* references to these. */
#define WRAP __attribute__((visibility("default")))

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
WRAP void *__wrap_malloc(size_t n);
WRAP void *__wrap_calloc(size_t n, size_t size);
WRAP void *__wrap_realloc(void *p, size_t n);
WRAP char *__wrap_strdup(const char *s);
WRAP void __wrap_free(void *p);

#define MAX_SITES 8192
#define MAX_LIVE (1 << 16)

static struct {
    int armed;
    long calls;   /* counted allocations since arming */
    long fail_at; /* 1-based; 0: none fails */
    int failed;   /* the injected failure happened */
    int fail_json_first; /* fail jansson's first allocation (see json_alloc) */
    long json_calls;
    /* Sets (open addressing): the callers seen, and the blocks allocated
     * while armed that are not yet freed. */
    const void *sites[MAX_SITES];
    long site_count;
    void *live[MAX_LIVE];
    const void *live_site[MAX_LIVE]; /* who allocated it, for messages */
    long live_count;
} A;

static const void *all_sites[MAX_SITES];
static long all_site_count;

#define TOMBSTONE ((void *)1)

static size_t slot_of(const void *p, size_t cap)
{
    return ((uintptr_t)p >> 4) % cap;
}

static int add_site(const void **set, long *count, const void *site)
{
    size_t h = slot_of(site, MAX_SITES);
    for (size_t i = 0; i < MAX_SITES && set[h]; i++, h = (h + 1) % MAX_SITES)
        if (set[h] == site)
            return 0;
    if (set[h])
        return 0; /* full: a count that is a lower bound */
    set[h] = site;
    (*count)++;
    return 1;
}

static void note_site(const void *site)
{
    add_site(A.sites, &A.site_count, site);
    add_site(all_sites, &all_site_count, site);
}

static const void *current_site;

static void live_add(void *p)
{
    size_t h = slot_of(p, MAX_LIVE);
    while (A.live[h] && A.live[h] != TOMBSTONE)
        h = (h + 1) % MAX_LIVE;
    A.live[h] = p;
    A.live_site[h] = current_site;
    A.live_count++;
}

static void live_remove(void *p)
{
    size_t h = slot_of(p, MAX_LIVE);
    for (size_t i = 0; i < MAX_LIVE && A.live[h]; i++, h = (h + 1) % MAX_LIVE)
        if (A.live[h] == p) {
            A.live[h] = TOMBSTONE;
            A.live_count--;
            return;
        }
}

/* Count one allocation at `site`; true when it is the one to fail. */
static int fail_now(const void *site)
{
    if (!A.armed)
        return 0;
    A.calls++;
    current_site = site;
    note_site(site);
    if (A.calls != A.fail_at)
        return 0;
    A.failed = 1;
    errno = ENOMEM; /* as libc's allocator says it */
    return 1;
}

static void *counted(void *p)
{
    if (p && A.armed)
        live_add(p);
    return p;
}

void *__wrap_malloc(size_t n)
{
    return fail_now(__builtin_return_address(0)) ? NULL : counted(__real_malloc(n));
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now(__builtin_return_address(0)) ? NULL
                                                 : counted(__real_calloc(n, size));
}

void *__wrap_realloc(void *p, size_t n)
{
    if (fail_now(__builtin_return_address(0)))
        return NULL;
    void *q = __real_realloc(p, n);
    if (q && p)
        live_remove(p);
    return counted(q);
}

char *__wrap_strdup(const char *s)
{
    if (fail_now(__builtin_return_address(0)))
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = counted(__real_malloc(n));
    if (p)
        memcpy(p, s, n);
    return p;
}

void __wrap_free(void *p)
{
    if (p && A.live_count)
        live_remove(p);
    __real_free(p);
}

/*
 * jansson's allocations are counted (sites, leaks) but failed only where
 * jansson copes: its first one (lex_init), on request.  Failing later ones
 * crashes jansson 2.14 itself (Debian 12's libjansson4): a failed append
 * while lexing a string is ignored, and the string is then copied into a
 * buffer sized from what was appended -- a heap overflow in json_loadb that
 * no caller can prevent.  See the report in docs/SECURITY.md.
 */
static void *json_alloc(size_t n)
{
    if (A.armed) {
        A.json_calls++;
        current_site = __builtin_return_address(0);
        note_site(current_site);
        if (A.fail_json_first && A.json_calls == 1) {
            A.failed = 1;
            return NULL;
        }
    }
    return counted(__real_malloc(n));
}

/* libcrypto's allocations are failed like the library's, but not tracked
 * for leaks here: libcrypto keeps a per-thread error record (reused by the
 * next error) that outlives the call that failed.  LeakSanitizer, in the
 * ASan build, still sees any block that is lost. */
static void *crypto_malloc(size_t n, const char *file, int line)
{
    (void)file;
    (void)line;
    return fail_now(__builtin_return_address(0)) ? NULL : __real_malloc(n);
}

static void *crypto_realloc(void *p, size_t n, const char *file, int line)
{
    (void)file;
    (void)line;
    return fail_now(__builtin_return_address(0)) ? NULL : __real_realloc(p, n);
}

static void crypto_free(void *p, const char *file, int line)
{
    (void)file;
    (void)line;
    __real_free(p);
}

/* ---- scenarios --------------------------------------------------------------- */

typedef struct bytes {
    uint8_t *p;
    size_t n;
} bytes_t;

/* Inputs shared by the scenarios of one example, made unarmed. */
typedef struct fixture {
    const char *name;
    char *json;
    cdnn_handle_t *handle;
    cdnn_build_options_t *opts; /* NULL, or an engine pinned */
    bytes_t graph, plan, container;
} fixture_t;

/* One attempt at an operation: its status and what it handed back, as
 * bytes to compare with the run without failures.  `cleanup` frees what
 * the operation made, so that the live count can be checked after. */
typedef struct outcome {
    cdnn_status_t status;
    bytes_t out;
    int handed_back; /* an object or buffer was returned on failure */
} outcome_t;

typedef outcome_t (*op_fn)(const fixture_t *f);

static int failures;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "FAIL: " __VA_ARGS__);                           \
            fprintf(stderr, "\n");                                           \
            failures++;                                                      \
        }                                                                    \
    } while (0)

static void die(const char *what)
{
    fprintf(stderr, "setup failed: %s: %s\n", what, cdnn_last_error());
    exit(1);
}

/* The bytes of a save, through a caller buffer that must stay untouched
 * on failure. */
static outcome_t save_into(cdnn_graph_t *g, cdnn_save_form_t form, size_t cap)
{
    outcome_t o = {CDNN_STATUS_SUCCESS, {NULL, 0}, 0};
    uint8_t *buf = __real_malloc(cap);
    size_t size = 0;
    if (!buf)
        die("harness buffer");
    memset(buf, 0xa5, cap);
    o.status = cdnn_graph_save(g, form, buf, cap, &size);
    if (o.status != CDNN_STATUS_SUCCESS) {
        for (size_t i = 0; i < cap; i++)
            o.handed_back |= buf[i] != 0xa5;
        __real_free(buf);
        return o;
    }
    o.out.p = buf;
    o.out.n = size;
    return o;
}

/* Saved bytes of a loaded graph (unarmed: the comparison is not the
 * operation under test). */
static bytes_t bytes_of(cdnn_graph_t *g, cdnn_save_form_t form)
{
    int armed = A.armed;
    size_t n = 0;
    A.armed = 0;
    bytes_t b = {NULL, 0};
    if (cdnn_graph_save(g, form, NULL, 0, &n) == CDNN_STATUS_SUCCESS &&
        (b.p = __real_malloc(n + 1)) &&
        cdnn_graph_save(g, form, b.p, n, &b.n) != CDNN_STATUS_SUCCESS) {
        __real_free(b.p);
        b.p = NULL;
    }
    A.armed = armed;
    return b;
}

static outcome_t loaded(cdnn_status_t st, cdnn_graph_t *g, cdnn_save_form_t form)
{
    outcome_t o = {st, {NULL, 0}, 0};
    if (st == CDNN_STATUS_SUCCESS)
        o.out = bytes_of(g, form);
    else
        o.handed_back = g != NULL;
    cdnn_graph_destroy(g);
    return o;
}

static outcome_t op_graph_save(const fixture_t *f)
{
    cdnn_graph_t *g = NULL;
    int armed = A.armed;
    A.armed = 0;
    if (cdnn_graph_load(&g, NULL, f->graph.p, f->graph.n))
        die("graph load");
    A.armed = armed;
    outcome_t o = save_into(g, CDNN_SAVE_GRAPH, 1 << 20);
    cdnn_graph_destroy(g);
    return o;
}

static outcome_t op_graph_load(const fixture_t *f)
{
    cdnn_graph_t *g = NULL;
    cdnn_status_t st = cdnn_graph_load(&g, NULL, f->graph.p, f->graph.n);
    return loaded(st, g, CDNN_SAVE_GRAPH);
}

static outcome_t op_json_read(const fixture_t *f)
{
    cdnn_graph_t *g = NULL;
    cdnn_status_t st = cdnn_graph_from_json(&g, f->json, strlen(f->json));
    return loaded(st, g, CDNN_SAVE_GRAPH);
}

static outcome_t op_json_write(const fixture_t *f)
{
    cdnn_graph_t *g = NULL;
    char *json = NULL;
    int armed = A.armed;
    A.armed = 0;
    if (cdnn_graph_load(&g, NULL, f->graph.p, f->graph.n))
        die("graph load");
    A.armed = armed;
    outcome_t o = {cdnn_graph_to_json(g, &json), {NULL, 0}, 0};
    if (o.status == CDNN_STATUS_SUCCESS) {
        o.out.n = strlen(json);
        o.out.p = __real_malloc(o.out.n + 1);
        memcpy(o.out.p, json, o.out.n);
    } else {
        o.handed_back = json != NULL;
    }
    free(json);
    cdnn_graph_destroy(g);
    return o;
}

/* A fresh plan each time: the first save of a plan makes and keeps its
 * bytes, and that first save is the path under test. */
static outcome_t save_fresh_plan(const fixture_t *f, cdnn_save_form_t form)
{
    cdnn_graph_t *g = NULL;
    int armed = A.armed;
    A.armed = 0;
    if (cdnn_graph_load(&g, NULL, f->graph.p, f->graph.n) ||
        cdnn_graph_build(g, f->handle, f->opts))
        die("graph build");
    A.armed = armed;
    outcome_t o = save_into(g, form, 1 << 20);
    A.armed = 0;
    cdnn_graph_destroy(g); /* the kept bytes go with the plan */
    A.armed = armed;
    return o;
}

static outcome_t op_plan_save(const fixture_t *f)
{
    return save_fresh_plan(f, CDNN_SAVE_PLAN);
}

static outcome_t op_container_save(const fixture_t *f)
{
    return save_fresh_plan(f, CDNN_SAVE_GRAPH_AND_PLAN);
}

static outcome_t op_plan_load(const fixture_t *f)
{
    cdnn_graph_t *g = NULL;
    cdnn_status_t st = cdnn_plan_load(&g, f->handle, f->plan.p, f->plan.n);
    return loaded(st, g, CDNN_SAVE_PLAN);
}

static outcome_t op_container_load(const fixture_t *f)
{
    cdnn_graph_t *g = NULL;
    cdnn_status_t st = cdnn_graph_load(&g, f->handle, f->container.p, f->container.n);
    return loaded(st, g, CDNN_SAVE_GRAPH_AND_PLAN);
}

static outcome_t op_container_graph_only(const fixture_t *f)
{
    cdnn_graph_t *g = NULL;
    cdnn_status_t st = cdnn_graph_load(&g, NULL, f->container.p, f->container.n);
    return loaded(st, g, CDNN_SAVE_GRAPH);
}

static outcome_t op_inspect(const fixture_t *f)
{
    cdnn_blob_info_t *info = NULL;
    outcome_t o = {cdnn_blob_inspect(f->container.p, f->container.n, &info),
                   {NULL, 0}, 0};
    if (o.status == CDNN_STATUS_SUCCESS) {
        o.out.n = sizeof info->graph_content_key + strlen(info->engine_name);
        o.out.p = __real_malloc(o.out.n);
        memcpy(o.out.p, info->graph_content_key, sizeof info->graph_content_key);
        memcpy(o.out.p + sizeof info->graph_content_key, info->engine_name,
               strlen(info->engine_name));
    } else {
        o.handed_back = info != NULL;
    }
    cdnn_blob_info_destroy(info);
    return o;
}

/* ---- the driver ------------------------------------------------------------ */

typedef struct path {
    const char *name;
    op_fn op;
    long allocations, sites, survived; /* totals over the examples */
} path_t;

static path_t paths[] = {
    {"graph save", op_graph_save, 0, 0, 0},
    {"graph load", op_graph_load, 0, 0, 0},
    {"graph JSON read", op_json_read, 0, 0, 0},
    {"graph JSON write", op_json_write, 0, 0, 0},
    {"plan save", op_plan_save, 0, 0, 0},
    {"container save", op_container_save, 0, 0, 0},
    {"plan load", op_plan_load, 0, 0, 0},
    {"container load (handle)", op_container_load, 0, 0, 0},
    {"container load (graph only)", op_container_graph_only, 0, 0, 0},
    {"blob inspect", op_inspect, 0, 0, 0},
};

static void arm(long fail_at)
{
    A.calls = 0;
    A.fail_at = fail_at;
    A.failed = 0;
    A.json_calls = 0;
    memset(A.live, 0, sizeof A.live);
    A.live_count = 0;
    A.armed = 1;
}

/* Where the blocks left behind were allocated (addresses for addr2line,
 * with the module they are in). */
static void show_left_behind(void)
{
    for (size_t h = 0; h < MAX_LIVE; h++)
        if (A.live[h] && A.live[h] != TOMBSTONE) {
            Dl_info info;
            const void *site = A.live_site[h];
            if (dladdr(site, &info) && info.dli_fname)
                fprintf(stderr, "  left behind: allocated at %s+0x%lx\n",
                        info.dli_fname,
                        (unsigned long)((uintptr_t)site - (uintptr_t)info.dli_fbase));
        }
}

static int same(bytes_t a, bytes_t b)
{
    return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

/* Fail allocation 1, 2, ..., T of the operation (T: allocations of a run
 * without failure) and check each outcome against that run. */
static void run_path(path_t *p, const fixture_t *f)
{
    /* Warm-up: what libraries set up once (jansson's hash seed, libcrypto's
     * digest tables) is not the operation's to free. */
    outcome_t warm = p->op(f);
    if (warm.status != CDNN_STATUS_SUCCESS)
        die(p->name);
    __real_free(warm.out.p);
    memset(A.sites, 0, sizeof A.sites);
    A.site_count = 0;
    arm(0);
    outcome_t base = p->op(f);
    A.armed = 0;
    long total = A.calls;
    CHECK(base.status == CDNN_STATUS_SUCCESS, "%s, %s: fails without injection",
          f->name, p->name);
    CHECK(A.live_count == 0, "%s, %s: %ld allocations outlive a clean run",
          f->name, p->name, A.live_count);
    for (long n = 1; n <= total; n++) {
        arm(n);
        outcome_t o = p->op(f);
        A.armed = 0;
        /* What libcrypto recorded for the failure is not cdnn's message. */
        ERR_clear_error();
        if (o.status == CDNN_STATUS_SUCCESS) {
            p->survived++;
            CHECK(same(o.out, base.out), "%s, %s: allocation %ld failed, yet it "
                  "succeeded with different output", f->name, p->name, n);
        } else {
            CHECK(o.status == CDNN_STATUS_ALLOC_FAILED, "%s, %s: allocation %ld "
                  "failed and the status is %s (%s)", f->name, p->name, n,
                  cdnn_status_string(o.status), cdnn_last_error());
            CHECK(!o.handed_back, "%s, %s: allocation %ld failed and output was "
                  "handed back or written", f->name, p->name, n);
        }
        CHECK(A.live_count == 0, "%s, %s: allocation %ld failed and %ld "
              "allocations were left behind", f->name, p->name, n, A.live_count);
        if (A.live_count)
            show_left_behind();
        __real_free(o.out.p);
    }
    p->allocations += total;
    p->sites = A.site_count > p->sites ? A.site_count : p->sites;
    __real_free(base.out.p);
}

/* jansson's first allocation fails: the JSON reader says ALLOC_FAILED
 * (jansson gives no error code for it) and leaves nothing behind. */
static void json_first_fails(const fixture_t *f)
{
    arm(0);
    A.fail_json_first = 1;
    outcome_t o = op_json_read(f);
    A.armed = 0;
    A.fail_json_first = 0;
    CHECK(A.failed && o.status == CDNN_STATUS_ALLOC_FAILED && !o.handed_back &&
              A.live_count == 0,
          "%s: jansson's first allocation failed: status %s, %ld left behind",
          f->name, cdnn_status_string(o.status), A.live_count);
    __real_free(o.out.p);
}

static char *read_text(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        die(path);
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *s = __real_malloc((size_t)n + 1);
    if (!s || fread(s, 1, (size_t)n, fp) != (size_t)n)
        die(path);
    s[n] = '\0';
    fclose(fp);
    return s;
}

static bytes_t must_save(cdnn_graph_t *g, cdnn_save_form_t form, const char *what)
{
    bytes_t b = bytes_of(g, form);
    if (!b.p)
        die(what);
    return b;
}

/* engine: NULL to let cdnn choose, else the engine the plans are built on. */
static void make_fixture(fixture_t *f, const char *dir, const char *file,
                         cdnn_handle_t *h, const char *engine)
{
    char path[4096];
    cdnn_graph_t *g = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    f->name = file;
    f->json = read_text(path);
    f->handle = h;
    f->opts = NULL;
    if (engine && (cdnn_build_options_create(&f->opts) ||
                   cdnn_build_options_pin_engine(f->opts, cdnn_engine_id_from_name(engine))))
        die("build options");
    if (cdnn_graph_from_json(&g, f->json, strlen(f->json)) ||
        cdnn_graph_build(g, h, f->opts))
        die(path);
    f->graph = must_save(g, CDNN_SAVE_GRAPH, "graph save");
    f->plan = must_save(g, CDNN_SAVE_PLAN, "plan save");
    f->container = must_save(g, CDNN_SAVE_GRAPH_AND_PLAN, "container save");
    cdnn_graph_destroy(g);
}

static void free_fixture(fixture_t *f)
{
    __real_free(f->json);
    __real_free(f->graph.p);
    __real_free(f->plan.p);
    __real_free(f->container.p);
    cdnn_build_options_destroy(f->opts);
}

static int is_json(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && strcmp(name + n - 5, ".json") == 0;
}

/* ---- the kernels provider ------------------------------------------------------ */

#ifdef OOM_KERNEL_DIR
/* Plans on kernels:* engines: built (unarmed) and saved, loaded. */
static path_t kernel_paths[] = {
    {"kernel plan save", op_plan_save, 0, 0, 0},
    {"kernel container save", op_container_save, 0, 0, 0},
    {"kernel plan load (restore)", op_plan_load, 0, 0, 0},
    {"kernel container load", op_container_load, 0, 0, 0},
};

static const struct {
    const char *engine, *example;
} kernel_fixtures[] = {
    {"kernels:matmul_host", "matmul_bias_gelu_residual.json"},
    {"kernels:norm_host", "layernorm.json"},
};

/* What providers logged while armed: a provider whose initialisation
 * failed is skipped with a warning that says why. */
static char init_log[8192];

static void keep_log(cdnn_log_level_t level, const char *message, void *user)
{
    (void)level;
    (void)user;
    size_t n = strlen(init_log);
    snprintf(init_log + n, sizeof init_log - n, "%s\n", message);
}

/* A handle's creation loads the providers: the kernels provider opens every
 * pack of CDNN_KERNEL_PATH and builds its engine table from them.  The
 * outcome's bytes are the engine names the handle has. */
static outcome_t op_provider_init(const fixture_t *f)
{
    (void)f;
    cdnn_handle_t *h = NULL;
    outcome_t o = {cdnn_handle_create(&h, "cpu"), {NULL, 0}, 0};
    int32_t count = 0;
    if (o.status != CDNN_STATUS_SUCCESS) {
        o.handed_back = h != NULL;
        return o;
    }
    int armed = A.armed;
    A.armed = 0; /* the listing is not the operation under test */
    o.out.p = __real_calloc(1, 1 << 14);
    cdnn_handle_engine_count(h, &count);
    for (int32_t i = 0; i < count; i++) {
        cdnn_engine_info_t info;
        if (cdnn_handle_engine_info(h, i, &info) == CDNN_STATUS_SUCCESS)
            o.out.n += (size_t)snprintf((char *)o.out.p + o.out.n, (1 << 14) - o.out.n,
                                        "%s\n", info.name);
    }
    A.armed = armed;
    cdnn_handle_destroy(h); /* the last handle: the providers are unloaded */
    return o;
}

/* Fail each allocation of a handle's creation in turn.  Clean outcomes:
 * ALLOC_FAILED; the same engines; or fewer engines where a provider whose
 * initialisation failed was skipped with a warning saying "out of memory"
 * (cdnn skips a provider that cannot start, docs/PROVIDER_ABI.md). */
static void provider_init_path(long *allocations, long *skipped)
{
    cdnn_set_log_callback(keep_log, CDNN_LOG_WARNING, NULL);
    outcome_t warm = op_provider_init(NULL);
    if (warm.status != CDNN_STATUS_SUCCESS || !strstr((char *)warm.out.p, "kernels:"))
        die("a handle with the kernels provider's engines");
    __real_free(warm.out.p);
    arm(0);
    outcome_t base = op_provider_init(NULL);
    A.armed = 0;
    long total = A.calls;
    /* One block outlives a clean load by design: the search path cdnn keeps
     * for cdnn_provider_path, freed when the next load replaces it. */
    long kept = A.live_count;
    CHECK(kept <= 1, "provider init: %ld allocations outlive a clean run", kept);
    for (long n = 1; n <= total; n++) {
        init_log[0] = '\0';
        arm(n);
        outcome_t o = op_provider_init(NULL);
        A.armed = 0;
        ERR_clear_error();
        if (o.status == CDNN_STATUS_SUCCESS && !same(o.out, base.out)) {
            (*skipped)++;
            CHECK(strstr(init_log, "out of memory") || strstr(init_log, strerror(ENOMEM)),
                  "provider init: allocation "
                  "%ld failed, engines went missing, and no warning said out of memory: "
                  "%s", n, init_log);
        } else if (o.status != CDNN_STATUS_SUCCESS) {
            CHECK(o.status == CDNN_STATUS_ALLOC_FAILED && !o.handed_back, "provider "
                  "init: allocation %ld failed and the status is %s (%s)", n,
                  cdnn_status_string(o.status), cdnn_last_error());
        }
        CHECK(A.live_count <= kept, "provider init: allocation %ld failed and %ld "
              "allocations were left behind", n, A.live_count);
        if (A.live_count > kept)
            show_left_behind();
        __real_free(o.out.p);
    }
    __real_free(base.out.p);
    cdnn_set_log_callback(NULL, CDNN_LOG_WARNING, NULL);
    *allocations = total;
}

/* The kernels provider's paths; returns the allocations failed. */
static long run_kernel_paths(void)
{
    long init_allocations = 0, skipped = 0;
    provider_init_path(&init_allocations, &skipped);
    cdnn_handle_t *h = NULL;
    if (cdnn_handle_create(&h, "cpu"))
        die("CPU handle");
    for (size_t i = 0; i < sizeof kernel_fixtures / sizeof kernel_fixtures[0]; i++) {
        fixture_t f;
        make_fixture(&f, EXAMPLES_DIR, kernel_fixtures[i].example, h,
                     kernel_fixtures[i].engine);
        for (size_t j = 0; j < sizeof kernel_paths / sizeof kernel_paths[0]; j++)
            run_path(&kernel_paths[j], &f);
        free_fixture(&f);
    }
    cdnn_handle_destroy(h);
    printf("kernels provider (packs in %s):\n", OOM_KERNEL_DIR);
    printf("  %-28s %7ld allocations  %ld skipped the provider with a warning\n",
           "provider init (packs)", init_allocations, skipped);
    for (size_t i = 0; i < sizeof kernel_paths / sizeof kernel_paths[0]; i++)
        printf("  %-28s %7ld allocations  %4ld sites  %ld survived\n", kernel_paths[i].name,
               kernel_paths[i].allocations, kernel_paths[i].sites, kernel_paths[i].survived);
    long total = init_allocations;
    for (size_t i = 0; i < sizeof kernel_paths / sizeof kernel_paths[0]; i++)
        total += kernel_paths[i].allocations;
    return total;
}
#endif

int main(void)
{
    /* Before libcrypto or jansson allocate anything. */
    if (!CRYPTO_set_mem_functions(crypto_malloc, crypto_realloc, crypto_free))
        fprintf(stderr, "note: libcrypto allocated before the test could count "
                        "its allocations; they are not injected\n");
    json_set_alloc_funcs(json_alloc, __wrap_free);
#ifdef OOM_KERNEL_DIR
    setenv("CDNN_KERNEL_PATH", OOM_KERNEL_DIR, 1);
#endif
    cdnn_handle_t *h = NULL;
    if (cdnn_set_provider_path(OOM_PROVIDER_DIR) || cdnn_handle_create(&h, "cpu"))
        die("CPU handle");
    DIR *d = opendir(EXAMPLES_DIR);
    struct dirent *e;
    long examples = 0;
    if (!d)
        die(EXAMPLES_DIR);
    while ((e = readdir(d))) {
        if (!is_json(e->d_name))
            continue;
        fixture_t f;
        make_fixture(&f, EXAMPLES_DIR, e->d_name, h, NULL);
        for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
            run_path(&paths[i], &f);
        json_first_fails(&f);
        free_fixture(&f);
        examples++;
    }
    closedir(d);
    cdnn_handle_destroy(h);
    long total = 0;
#ifdef OOM_KERNEL_DIR
    total += run_kernel_paths();
#endif
    printf("%ld examples; per path: allocations failed one at a time (summed "
           "over the examples), most distinct sites in one example, failures "
           "survived with identical output\n", examples);
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        printf("  %-28s %7ld allocations  %4ld sites  %ld survived\n", paths[i].name,
               paths[i].allocations, paths[i].sites, paths[i].survived);
        total += paths[i].allocations;
    }
    printf("%ld injected failures in all, at %ld distinct allocation sites; %s\n",
           total, all_site_count, failures ? "FAILED" : "every one clean");
    return failures ? 1 : 0;
}
