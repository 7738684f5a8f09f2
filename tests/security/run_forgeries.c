/*
 * run_forgeries.c -- load every forgery forge.py wrote, and run what loads
 * with buffers of exactly the sizes the loaded plan declares (issue 8).
 *
 * usage: run_forgeries FORGED_DIR [--only SUBSTRING]... [--no-fork]
 *
 * --only (up to 16 times): only the forgeries whose file name contains one
 * of the substrings.
 *
 * FORGED_DIR holds the forged files and manifest.json (tests/security/
 * forge.py).  For each forgery, through the public API only:
 *   - a plan (.cdp) is loaded with cdnn_plan_load on a CPU handle;
 *   - a container (.cdgp) with cdnn_plan_load and, separately, with
 *     cdnn_graph_load given the handle (which loads its plan too);
 * and whatever loads is executed: every tensor cdnn_graph_io_tensors lists
 * gets a buffer of exactly span_bytes, filled with random values, and the
 * workspace exactly cdnn_graph_workspace_size bytes.  It is executed twice:
 * with malloc'd buffers (posix_memalign for a declared alignment), so that
 * under ASan (make test-asan) a kernel that reads or writes one byte past
 * what the plan declared is a heap-buffer-overflow report; then with
 * buffers that end at a PROT_NONE page, so that code ASan does not
 * instrument (OpenBLAS writes the conv and matmul outputs) faults too.
 *
 * Expectations (manifest "expect"; in strict mode "expect_strict" and
 * "message_strict" instead where the entry has them):
 *   CORRUPT_DATA (or another status name)  the load must fail with that
 *       status and a message containing "message";
 *   LOADS             the load and the execute must succeed;
 *   REFUSED           any refusal (not INTERNAL_ERROR) with "message";
 *   LOADS_OR_REFUSED  a self-consistent forgery of another computation:
 *       either outcome, but it must be memory-safe, and neither the load nor
 *       the execute may report INTERNAL_ERROR (a bug by definition).
 *
 * Each load runs in a child process, so that a sanitizer report or a crash
 * fails that forgery's line and the run goes on to the next; the child
 * writes its verdict to a pipe, and a child that dies without one, or that
 * exits non-zero after it (LeakSanitizer at exit), is a failure.  The
 * parent never calls into cdnn, so nothing of cdnn's or OpenBLAS's threads
 * is forked.  --no-fork runs everything in one process (for a debugger).
 *
 * One line per check: "PASS|FAIL FILE [plan_load|graph_load] CATEGORY: what
 * happened"; then a summary per category; exit status 1 if any check
 * failed.  The mode (strict when CDNN_TRUSTED_CODE=pack) is the
 * environment's: tests/security/test_forgeries.sh runs both.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cdnn/cdnn.h>

/* Buffers larger than this are not allocated: a loaded plan that asks for
 * more (a forged span of 2^62 bytes) is reported as loaded, unexecuted. */
#define MAX_BUFFER ((size_t)1 << 30)
/* A child that has not answered by then is hung: a failure. */
#define CHILD_SECONDS 300

typedef enum { LOAD_PLAN, LOAD_GRAPH } load_path_t;
static const char *const path_names[] = {"plan_load", "graph_load"};

typedef struct forgery {
    const char *file, *kind, *category, *expect, *message;
} forgery_t;

/* ---- deterministic random fill ------------------------------------------- */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    /* xorshift64*: enough for test data, the same on every run. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static void rng_seed(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *p = name; *p; p++)
        h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
    rng_state = h ? h : 1;
}

/* A float in [-1, 1). */
static float rng_unit(void)
{
    return (float)((double)(rng_next() >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static uint16_t f32_to_f16(float f)
{
    /* |f| < 1: a normal half for |f| >= 2^-14, else zero (test data only). */
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    int exp = (int)((bits >> 23) & 0xff) - 127 + 15;
    if (exp <= 0)
        return sign;
    return (uint16_t)(sign | (uint16_t)(exp << 10) | (uint16_t)((bits >> 13) & 0x3ff));
}

/* Values of the tensor's type, element by element; bytes past the last
 * whole element (a forged span need not be a multiple) random. */
static void fill(void *buf, size_t span, cdnn_data_type_t type)
{
    uint8_t *p = buf;
    size_t size = cdnn_data_type_size(type), i = 0;
    for (; size && i + size <= span; i += size) {
        float f = rng_unit();
        double d = f;
        uint16_t h;
        uint32_t u32 = (uint32_t)(rng_next() & 7);
        uint64_t u64 = rng_next() & 7;
        switch (type) {
        case CDNN_DATA_TYPE_F32: memcpy(p + i, &f, 4); break;
        case CDNN_DATA_TYPE_F64: memcpy(p + i, &d, 8); break;
        case CDNN_DATA_TYPE_F16: h = f32_to_f16(f); memcpy(p + i, &h, 2); break;
        case CDNN_DATA_TYPE_BF16: {
            uint32_t bits;
            memcpy(&bits, &f, 4);
            h = (uint16_t)(bits >> 16);
            memcpy(p + i, &h, 2);
            break;
        }
        case CDNN_DATA_TYPE_I32: memcpy(p + i, &u32, 4); break;
        case CDNN_DATA_TYPE_I64: memcpy(p + i, &u64, 8); break;
        case CDNN_DATA_TYPE_BOOL: p[i] = (uint8_t)(rng_next() & 1); break;
        default: p[i] = (uint8_t)(rng_next() & 7); break; /* I8, U8 */
        }
    }
    for (; i < span; i++)
        p[i] = (uint8_t)rng_next();
}

/* A buffer of exactly n bytes, two ways, both needed:
 *   malloc'd (posix_memalign for a declared alignment): ASan's redzone
 *     starts at byte n, so any instrumented code that touches byte n or
 *     beyond, or a byte before the start, is reported at once;
 *   guarded: the last byte sits right before a PROT_NONE page, so that
 *     code ASan does not instrument (OpenBLAS's kernels write conv and
 *     matmul outputs) faults at byte n instead of corrupting the heap
 *     unseen.  A declared alignment moves the start down, leaving fewer
 *     than `alignment` unguarded bytes after the end. */
typedef struct buffer {
    void *ptr;
    void *map;
    size_t map_size;
} buffer_t;

static int buffer_alloc(buffer_t *b, size_t n, int64_t alignment, int guarded)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    memset(b, 0, sizeof *b);
    if (guarded && alignment <= (int64_t)page) {
        size_t body = (n + page - 1) / page * page;
        b->map_size = body + page;
        b->map = mmap(NULL, b->map_size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (b->map == MAP_FAILED) {
            b->map = NULL;
            return -1;
        }
        if (mprotect((char *)b->map + body, page, PROT_NONE) != 0) {
            munmap(b->map, b->map_size);
            b->map = NULL;
            return -1;
        }
        uintptr_t start = (uintptr_t)b->map + body - n;
        if (alignment > 1)
            start &= ~((uintptr_t)alignment - 1);
        b->ptr = (void *)start;
        return 0;
    }
    if (alignment > (int64_t)sizeof(void *))
        return posix_memalign(&b->ptr, (size_t)alignment, n ? n : 1) == 0 ? 0 : -1;
    b->ptr = malloc(n ? n : 1);
    return b->ptr ? 0 : -1;
}

static void buffer_free(buffer_t *b)
{
    if (b->map)
        munmap(b->map, b->map_size);
    else
        free(b->ptr);
    memset(b, 0, sizeof *b);
}

/* ---- one load ------------------------------------------------------------ */

static char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = n < 0 ? 0 : (size_t)n;
    return buf;
}

static const char *status_name(cdnn_status_t st)
{
    const char *s = cdnn_status_string(st);
    return strncmp(s, "CDNN_STATUS_", 12) == 0 ? s + 12 : s;
}

/* Execute g once with exact-size buffers, malloc'd or guarded; *ran is 0
 * when it could not be run (what says why). */
static cdnn_status_t execute_exact(cdnn_graph_t *g, cdnn_handle_t *h, const char *label,
                                   int guarded, int *ran, char *what, size_t what_size)
{
    const char *how = guarded ? "guard pages" : "malloc";
    int32_t count = 0;
    size_t workspace = 0;
    cdnn_status_t st;
    *ran = 0;
    if ((st = cdnn_graph_io_tensors(g, NULL, 0, &count)) != CDNN_STATUS_SUCCESS ||
        (st = cdnn_graph_workspace_size(g, &workspace)) != CDNN_STATUS_SUCCESS) {
        snprintf(what, what_size, "io_tensors/workspace_size: %s: %s", status_name(st),
                 cdnn_last_error());
        return st;
    }
    cdnn_tensor_io_t *io = calloc((size_t)count + 1, sizeof *io);
    int64_t *uids = calloc((size_t)count + 1, sizeof *uids);
    void **ptrs = calloc((size_t)count + 1, sizeof *ptrs);
    buffer_t *bufs = calloc((size_t)count + 1, sizeof *bufs);
    buffer_t ws = {0};
    int32_t got = 0;
    if (!io || !uids || !ptrs || !bufs) {
        snprintf(what, what_size, "out of memory");
        st = CDNN_STATUS_ALLOC_FAILED;
        goto out;
    }
    if ((st = cdnn_graph_io_tensors(g, io, count, &got)) != CDNN_STATUS_SUCCESS) {
        snprintf(what, what_size, "io_tensors: %s: %s", status_name(st),
                 cdnn_last_error());
        goto out;
    }
    for (int32_t i = 0; i < count; i++)
        if (io[i].span_bytes > MAX_BUFFER) {
            snprintf(what, what_size, "not executed: tensor uid %" PRId64 " declares "
                     "%zu bytes, more than this test allocates", io[i].uid,
                     io[i].span_bytes);
            goto out;
        }
    if (workspace > MAX_BUFFER) {
        snprintf(what, what_size, "not executed: workspace of %zu bytes", workspace);
        goto out;
    }
    for (int32_t i = 0; i < count; i++) {
        uids[i] = io[i].uid;
        if (buffer_alloc(&bufs[i], io[i].span_bytes, io[i].alignment, guarded) != 0) {
            snprintf(what, what_size, "cannot allocate %zu bytes (%s)", io[i].span_bytes,
                     how);
            st = CDNN_STATUS_ALLOC_FAILED;
            goto out;
        }
        ptrs[i] = bufs[i].ptr;
        fill(ptrs[i], io[i].span_bytes, io[i].type);
    }
    if (workspace) {
        if (buffer_alloc(&ws, workspace, 0, guarded) != 0) {
            st = CDNN_STATUS_ALLOC_FAILED;
            snprintf(what, what_size, "cannot allocate the workspace (%s)", how);
            goto out;
        }
        fill(ws.ptr, workspace, CDNN_DATA_TYPE_U8);
    }
    /* Printed before the call: if a kernel overruns a buffer, the sanitizer
     * report or the crash follows this line. */
    fprintf(stderr, "%s: executing with %d exact-size buffers (%s), workspace %zu\n",
            label, (int)count, how, workspace);
    st = cdnn_graph_execute(g, h, count, uids, ptrs, ws.ptr);
    *ran = 1;
    snprintf(what, what_size, "%s (%s)%s%s", status_name(st), how, st ? ": " : "",
             st ? cdnn_last_error() : "");
out:
    for (int32_t i = 0; bufs && i < count; i++)
        buffer_free(&bufs[i]);
    buffer_free(&ws);
    free(bufs);
    free(ptrs);
    free(uids);
    free(io);
    return st;
}

/* Both ways; the first failure, or the second's status. */
static cdnn_status_t execute_both(cdnn_graph_t *g, cdnn_handle_t *h, const char *label,
                                  int *ran, char *what, size_t what_size)
{
    char first[600], second[600];
    int ran1 = 0, ran2 = 0;
    cdnn_status_t st = execute_exact(g, h, label, 0, &ran1, first, sizeof first);
    if (!ran1 || st != CDNN_STATUS_SUCCESS) {
        *ran = ran1;
        snprintf(what, what_size, "executed with exact-size buffers: %.400s", first);
        return st;
    }
    st = execute_exact(g, h, label, 1, &ran2, second, sizeof second);
    *ran = ran2;
    snprintf(what, what_size, "executed with exact-size buffers: %.400s, %.400s", first,
             second);
    return st;
}

/* Load and run one forgery along one path; the verdict goes to out. */
static int check_one(const char *dir, const forgery_t *f, load_path_t path, char *out,
                     size_t out_size)
{
    char file[4096], label[4200], exec_what[1024] = "";
    snprintf(file, sizeof file, "%s/%s", dir, f->file);
    snprintf(label, sizeof label, "%s [%s]", f->file, path_names[path]);
    size_t size = 0;
    char *bytes = read_file(file, &size);
    if (!bytes) {
        snprintf(out, out_size, "cannot read %s: %s", file, strerror(errno));
        return 0;
    }
    rng_seed(f->file);
    cdnn_handle_t *h = NULL;
    cdnn_graph_t *g = NULL;
    cdnn_status_t st = cdnn_handle_create(&h, "cpu");
    if (st != CDNN_STATUS_SUCCESS) {
        snprintf(out, out_size, "no CPU handle: %s: %s", status_name(st),
                 cdnn_last_error());
        free(bytes);
        return 0;
    }
    st = path == LOAD_PLAN ? cdnn_plan_load(&g, h, bytes, size)
                           : cdnn_graph_load(&g, h, bytes, size);
    char *msg = strdup(st ? cdnn_last_error() : "");
    cdnn_status_t ex = CDNN_STATUS_SUCCESS;
    int ran = 0;
    if (st == CDNN_STATUS_SUCCESS)
        ex = execute_both(g, h, label, &ran, exec_what, sizeof exec_what);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    free(bytes);

    int ok;
    if (strcmp(f->expect, "LOADS") == 0) {
        ok = st == CDNN_STATUS_SUCCESS && ran && ex == CDNN_STATUS_SUCCESS;
        if (st == CDNN_STATUS_SUCCESS)
            snprintf(out, out_size, "loaded; %s", exec_what);
        else
            snprintf(out, out_size, "refused, expected to load: %s: %s",
                     status_name(st), msg ? msg : "");
    } else if (strcmp(f->expect, "LOADS_OR_REFUSED") == 0) {
        ok = st != CDNN_STATUS_INTERNAL_ERROR && ex != CDNN_STATUS_INTERNAL_ERROR;
        if (st == CDNN_STATUS_SUCCESS)
            snprintf(out, out_size, "loaded; %s", exec_what);
        else
            snprintf(out, out_size, "refused: %s: %s", status_name(st), msg ? msg : "");
    } else if (strcmp(f->expect, "REFUSED") == 0) {
        /* any refusal with the message, but never a bug's status */
        ok = st != CDNN_STATUS_SUCCESS && st != CDNN_STATUS_INTERNAL_ERROR && msg &&
             strstr(msg, f->message);
        snprintf(out, out_size, "%s: %s%s", st ? status_name(st) : "LOADED, expected a "
                 "refusal", msg ? msg : "", ok ? "" : " (expected a refusal)");
    } else if (st == CDNN_STATUS_SUCCESS) {
        ok = 0;
        snprintf(out, out_size, "LOADED, expected %s with \"%s\"; %s", f->expect,
                 f->message, exec_what);
    } else {
        ok = strcmp(status_name(st), f->expect) == 0 && msg && strstr(msg, f->message);
        snprintf(out, out_size, "%s%s: %s", ok ? "" : "refused otherwise than "
                 "expected: ", status_name(st), msg ? msg : "");
        if (!ok) {
            size_t n = strlen(out);
            snprintf(out + n, out_size - n, " (expected %s with \"%s\")", f->expect,
                     f->message);
        }
    }
    free(msg);
    return ok;
}

/* ---- the parent ------------------------------------------------------------ */

typedef struct tally {
    char category[128];
    int passed, total;
} tally_t;

static tally_t *tallies;
static size_t tally_count;

static void count(const char *category, int ok)
{
    size_t i = 0;
    while (i < tally_count && strcmp(tallies[i].category, category) != 0)
        i++;
    if (i == tally_count) {
        tally_t *t = realloc(tallies, (tally_count + 1) * sizeof *t);
        if (!t)
            return;
        tallies = t;
        memset(&tallies[i], 0, sizeof tallies[i]);
        snprintf(tallies[i].category, sizeof tallies[i].category, "%.127s", category);
        tally_count++;
    }
    tallies[i].total++;
    tallies[i].passed += ok != 0;
}

/* Run check_one in a child; its verdict line comes back through a pipe. */
static int run_child(const char *dir, const forgery_t *f, load_path_t path, char *out,
                     size_t out_size)
{
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(out, out_size, "pipe: %s", strerror(errno));
        return 0;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(out, out_size, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return 0;
    }
    if (pid == 0) {
        close(fds[0]);
        alarm(CHILD_SECONDS);
        char verdict[4096];
        int ok = check_one(dir, f, path, verdict, sizeof verdict);
        char line[4200];
        int n = snprintf(line, sizeof line, "%c%s", ok ? 'P' : 'F', verdict);
        if (n > (int)sizeof line - 1)
            n = (int)sizeof line - 1;
        ssize_t w = write(fds[1], line, (size_t)n);
        (void)w;
        close(fds[1]);
        exit(ok ? 0 : 1); /* exit, not _exit: LeakSanitizer runs at exit */
    }
    close(fds[1]);
    char buf[4200];
    size_t got = 0;
    ssize_t r;
    while (got < sizeof buf - 1 && (r = read(fds[0], buf + got, sizeof buf - 1 - got)) != 0) {
        if (r < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        got += (size_t)r;
    }
    buf[got] = 0;
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (got == 0) {
        if (WIFSIGNALED(status))
            snprintf(out, out_size, "CRASHED with signal %d%s (report above)",
                     WTERMSIG(status), WTERMSIG(status) == SIGALRM ? " (timed out)" : "");
        else
            snprintf(out, out_size, "CRASHED: exit %d without a verdict (sanitizer "
                     "report above)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return 0;
    }
    snprintf(out, out_size, "%s", buf + 1);
    int ok = buf[0] == 'P';
    if (ok && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        size_t n = strlen(out);
        snprintf(out + n, out_size - n, "; but the process then ended with %s %d "
                 "(a sanitizer report at exit, e.g. a leak: see above)",
                 WIFSIGNALED(status) ? "signal" : "exit",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        ok = 0;
    }
    return ok;
}

static const char *field(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *only[16];
    int only_count = 0, use_fork = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--only") == 0 && i + 1 < argc && only_count < 16)
            only[only_count++] = argv[++i];
        else if (strcmp(argv[i], "--no-fork") == 0)
            use_fork = 0;
        else if (!dir && argv[i][0] != '-')
            dir = argv[i];
        else
            dir = NULL, i = argc;
    }
    if (!dir) {
        fprintf(stderr, "usage: run_forgeries FORGED_DIR [--only SUBSTRING]... "
                        "[--no-fork]\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    json_t *list = root ? json_object_get(root, "forgeries") : NULL;
    if (!json_is_array(list) || json_array_size(list) == 0) {
        fprintf(stderr, "run_forgeries: %s: %s\n", path,
                root ? "no forgeries listed" : jerr.text);
        json_decref(root);
        return 2;
    }
    const char *trusted = getenv("CDNN_TRUSTED_CODE");
    printf("# %s mode%s%s%s; %zu forgeries in %s\n", trusted ? "strict" : "normal",
           trusted ? " (CDNN_TRUSTED_CODE=" : "", trusted ? trusted : "",
           trusted ? ")" : "", json_array_size(list), dir);
    int checks = 0, failed = 0;
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item) {
        forgery_t f = {field(item, "file"), field(item, "kind"), field(item, "category"),
                       field(item, "expect"), field(item, "message")};
        /* Strict mode may be expected to refuse what normal mode loads: a
         * kernel plan whose code no installed pack holds. */
        if (trusted && field(item, "expect_strict")) {
            f.expect = field(item, "expect_strict");
            f.message = field(item, "message_strict");
        }
        if (!f.file || !f.kind || !f.category || !f.expect || !f.message) {
            printf("FAIL manifest entry %zu: a field is missing\n", i);
            failed++;
            continue;
        }
        int wanted = only_count == 0;
        for (int o = 0; o < only_count && !wanted; o++)
            wanted = strstr(f.file, only[o]) != NULL;
        if (!wanted)
            continue;
        int paths = strcmp(f.kind, "container") == 0 ? 2 : 1;
        for (int p = 0; p < paths; p++) {
            char verdict[4200];
            int ok = use_fork ? run_child(dir, &f, (load_path_t)p, verdict, sizeof verdict)
                              : check_one(dir, &f, (load_path_t)p, verdict, sizeof verdict);
            printf("%s %s [%s] %s: %s\n", ok ? "PASS" : "FAIL", f.file, path_names[p],
                   f.category, verdict);
            fflush(stdout);
            char key[160];
            snprintf(key, sizeof key, "%s %s", f.kind, f.category);
            count(key, ok);
            checks++;
            failed += !ok;
        }
    }
    printf("# by category (kind category: passed/checks)\n");
    for (size_t t = 0; t < tally_count; t++)
        printf("#   %-48s %d/%d%s\n", tallies[t].category, tallies[t].passed,
               tallies[t].total, tallies[t].passed == tallies[t].total ? "" : "  FAILING");
    printf("# %d checks, %d failed\n", checks, failed);
    free(tallies);
    json_decref(root);
    return failed ? 1 : 0;
}
