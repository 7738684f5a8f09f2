/*
 * pack_descriptor.c -- descriptor files, read as hostile input: JSON with
 * duplicate keys refused, every key known, every value of its type and
 * range, every name as the pack format allows it, object paths relative
 * and inside their directory.  Each fault is one message naming the file
 * and the JSON path of what is wrong ("$.candidates[2].target").
 */
#include "pack.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "io.h"

#define ENGINE_PREFIX "kernels:"
#define KNOB_PREFIX "kernels."
/* JSON paths in messages: "$.candidates[N].metadata.<name>" at most, each
 * part bounded below so that snprintf never truncates. */
#define PATH_CAP 768

typedef struct reader {
    pack_inputs_t *in;
    const char *file;
    int32_t file_index;
} reader_t;

__attribute__((format(printf, 3, 4)))
static int fault(const reader_t *r, const char *path, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return cli_fail("pack build", CDNN_STATUS_BAD_PARAM, "%s: %s: %s", r->file, path, what);
}

static int out_of_memory(void)
{
    return cli_fail("pack build", CDNN_STATUS_ALLOC_FAILED, "out of memory");
}

/* p, now owned by in (freed with it); NULL if p is NULL or cannot be
 * recorded (then p is freed). */
static void *keep(pack_inputs_t *in, void *p)
{
    if (p && in->kept_count == in->kept_cap) {
        size_t cap = in->kept_cap ? 2 * in->kept_cap : 16;
        void **grown = realloc(in->kept, cap * sizeof *grown);
        if (!grown) {
            free(p);
            return NULL;
        }
        in->kept = grown;
        in->kept_cap = cap;
    }
    if (p)
        in->kept[in->kept_count++] = p;
    return p;
}

/* ---- JSON values ------------------------------------------------------------------ */

static const char *type_name(const json_t *v)
{
    static const char *const names[] = {"an object", "an array", "a string", "an integer",
                                        "a real number", "true", "false", "null"};
    return names[json_typeof(v)];
}

/* A key from the file, printable in a message: control characters as '?',
 * at most 40 characters. */
static const char *shown(const char *key, char out[48])
{
    size_t n = 0;
    for (; key[n] && n < 40; n++)
        out[n] = (unsigned char)key[n] < 0x20 || key[n] == 0x7f ? '?' : key[n];
    snprintf(out + n, 48 - n, "%s", key[n] ? "..." : "");
    return out;
}

static void join(char *out, const char *path, const char *key)
{
    snprintf(out, PATH_CAP, "%.400s.%.300s", path, key);
}

static void join_index(char *out, const char *path, size_t i)
{
    snprintf(out, PATH_CAP, "%.700s[%zu]", path, i);
}

/* An object whose keys are all among known (NULL-terminated). */
static int check_object(const reader_t *r, const json_t *v, const char *path,
                        const char *const *known)
{
    if (!json_is_object(v))
        return fault(r, path, "must be an object, not %s", type_name(v));
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)v, key, value) {
        size_t i = 0;
        while (known[i] && strcmp(known[i], key) != 0)
            i++;
        char buf[48];
        if (!known[i])
            return fault(r, path, "unknown key \"%s\"", shown(key, buf));
    }
    return EXIT_OK;
}

/* obj[key]: NULL with a message when it is absent. */
static const json_t *member(const reader_t *r, const json_t *obj, const char *path,
                            const char *key, int *rc)
{
    const json_t *v = json_object_get(obj, key);
    if (!v) {
        char at[PATH_CAP];
        join(at, path, key);
        *rc = fault(r, at, "is missing");
    }
    return v;
}

enum string_rule { NAME, TEXT };

/* obj[key] as a string following rule; absent and optional: *out NULL. */
static int get_string(const reader_t *r, const json_t *obj, const char *path,
                      const char *key, int required, enum string_rule rule, const char **out)
{
    char at[PATH_CAP];
    join(at, path, key);
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v)
        return required ? fault(r, at, "is missing") : EXIT_OK;
    if (!json_is_string(v))
        return fault(r, at, "must be a string, not %s", type_name(v));
    const char *s = json_string_value(v);
    if (rule == NAME && !sdk_kpack_is_name(s))
        return fault(r, at, "must be a name: 1 to %d printable ASCII characters, no "
                     "spaces", SDK_KPACK_MAX_NAME);
    if (rule == TEXT && !sdk_kpack_is_text(s))
        return fault(r, at, "must be printable ASCII text of at most %d characters",
                     SDK_KPACK_MAX_TEXT);
    *out = s;
    return EXIT_OK;
}

static int get_integer(const reader_t *r, const json_t *obj, const char *path,
                       const char *key, json_int_t min, json_int_t max, json_int_t *out)
{
    char at[PATH_CAP];
    join(at, path, key);
    int rc = EXIT_OK;
    const json_t *v = member(r, obj, path, key, &rc);
    if (!v)
        return rc;
    if (!json_is_integer(v))
        return fault(r, at, "must be an integer, not %s", type_name(v));
    *out = json_integer_value(v);
    if (*out < min || *out > max)
        return fault(r, at, "%lld is outside [%lld, %lld]", (long long)*out, (long long)min,
                     (long long)max);
    return EXIT_OK;
}

/* obj[key] as an array of 1 (or 0 when optional) to max elements; absent
 * and optional: an empty array's count. */
static int get_array(const reader_t *r, const json_t *obj, const char *path,
                     const char *key, int required, const json_t **out)
{
    char at[PATH_CAP];
    join(at, path, key);
    const json_t *v = json_object_get(obj, key);
    *out = v;
    if (!v)
        return required ? fault(r, at, "is missing") : EXIT_OK;
    if (!json_is_array(v))
        return fault(r, at, "must be an array, not %s", type_name(v));
    if (required && json_array_size(v) == 0)
        return fault(r, at, "must not be empty");
    if (json_array_size(v) > SDK_KPACK_MAX_ENTRIES)
        return fault(r, at, "has %zu elements; at most %d are allowed", json_array_size(v),
                     SDK_KPACK_MAX_ENTRIES);
    return EXIT_OK;
}

/* ---- targets, names, object paths -------------------------------------------------- */

static int digits(const char *s, size_t min, size_t max)
{
    size_t n = strspn(s, "0123456789");
    return n >= min && n <= max ? (int)n : 0;
}

/* The family a target belongs to, or NULL for one cdnn does not know:
 * host "x86-64", "x86-64-v2".."x86-64-v4"; cuda "sm_NN", "sm_NNa" (cubins)
 * and "compute_NN" (PTX). */
static const char *family_of(const char *target)
{
    if (strcmp(target, "x86-64") == 0 ||
        (strncmp(target, "x86-64-v", 8) == 0 && target[8] >= '2' && target[8] <= '4' &&
         !target[9]))
        return "host";
    int n;
    if (strncmp(target, "sm_", 3) == 0 && (n = digits(target + 3, 2, 3)) &&
        (!target[3 + n] || (target[3 + n] == 'a' && !target[4 + n])))
        return "cuda";
    if (strncmp(target, "compute_", 8) == 0 && (n = digits(target + 8, 2, 3)) &&
        !target[8 + n])
        return "cuda";
    return NULL;
}

/* "<prefix><rest>", rest non-empty; with dots > 0, rest holds a '.' with
 * something on both sides ("kernels.matmul.tile"). */
static int prefixed(const char *s, const char *prefix, int dots)
{
    size_t n = strlen(prefix);
    if (strncmp(s, prefix, n) != 0 || !s[n])
        return 0;
    const char *dot = strchr(s + n, '.');
    return !dots || (dot && dot != s + n && dot[1]);
}

/* An object path that stays inside its base directory: relative, no ".."
 * component, no empty one. */
static int contained(const char *path)
{
    if (!*path || path[0] == '/')
        return 0;
    for (const char *p = path; p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 0 || (n == 2 && p[0] == '.' && p[1] == '.'))
            return 0;
        p = slash ? slash + 1 : NULL;
    }
    return 1;
}

/* ---- candidates -------------------------------------------------------------------- */

static int compare_keys(const void *a, const void *b)
{
    return strcmp(((const sdk_kpack_kv_t *)a)->key, ((const sdk_kpack_kv_t *)b)->key);
}

/* A candidate's metadata: strings by key, sorted by key (a JSON object's
 * order means nothing, and the pack's bytes must not depend on it). */
static int read_metadata(const reader_t *r, const json_t *cand, const char *path,
                         sdk_kpack_spec_kernel_t *k)
{
    const json_t *meta = json_object_get(cand, "metadata");
    char at[PATH_CAP];
    join(at, path, "metadata");
    if (!meta)
        return EXIT_OK;
    if (!json_is_object(meta))
        return fault(r, at, "must be an object of strings, not %s", type_name(meta));
    size_t n = json_object_size(meta);
    if (n > SDK_KPACK_MAX_ENTRIES)
        return fault(r, at, "has %zu keys; at most %d are allowed", n, SDK_KPACK_MAX_ENTRIES);
    sdk_kpack_kv_t *kv = keep(r->in, calloc(n ? n : 1, sizeof *kv));
    if (!kv)
        return out_of_memory();
    const char *key;
    const json_t *value;
    size_t i = 0;
    json_object_foreach((json_t *)meta, key, value) {
        char buf[48];
        if (!sdk_kpack_is_name(key))
            return fault(r, at, "key \"%s\" is not a name: 1 to %d printable ASCII "
                         "characters, no spaces", shown(key, buf), SDK_KPACK_MAX_NAME);
        int rc = get_string(r, meta, at, key, 1, TEXT, &kv[i].value);
        if (rc != EXIT_OK)
            return rc;
        kv[i++].key = key;
    }
    qsort(kv, n, sizeof *kv, compare_keys);
    k->metadata = kv;
    k->metadata_count = (int32_t)n;
    return EXIT_OK;
}

/* The target's family, which every target of the build must share. */
static int check_target(const reader_t *r, const char *target, const char *path)
{
    const char *family = family_of(target);
    if (!family)
        return fault(r, path, "'%s' is not a target cdnn knows (host: x86-64, "
                     "x86-64-v2, x86-64-v3, x86-64-v4; cuda: sm_NN, sm_NNa, compute_NN)",
                     target);
    if (!r->in->family)
        r->in->family = family;
    else if (strcmp(family, r->in->family) != 0)
        return fault(r, path, "'%s' is a %s target, but the pack being built is for %s "
                     "(its first target said so); a pack holds one target family, so "
                     "build one pack per family", target, family, r->in->family);
    return EXIT_OK;
}

/* The object file, relative to objects_dir or the descriptor's directory. */
static int read_object(const reader_t *r, const char *object, const char *path,
                       const char *objects_dir, sdk_kpack_spec_kernel_t *k)
{
    if (!contained(object))
        return fault(r, path, "'%s' must be a relative path inside its directory (no "
                     "leading '/', no '..')", object);
    const char *slash = strrchr(r->file, '/');
    int dir_len = objects_dir ? (int)strlen(objects_dir) : slash ? (int)(slash - r->file) : 1;
    const char *dir = objects_dir ? objects_dir : slash ? r->file : ".";
    size_t n = (size_t)dir_len + strlen(object) + 2;
    char *full = keep(r->in, malloc(n));
    if (!full)
        return out_of_memory();
    snprintf(full, n, "%.*s/%s", dir_len, dir, object);
    unsigned char *code = NULL;
    size_t size = 0;
    if (cli_read_file("pack build", full, &code, &size) != EXIT_OK)
        return EXIT_FAILED;
    if (!keep(r->in, code))
        return out_of_memory();
    if (size == 0)
        return fault(r, path, "'%s' is empty", full);
    k->code = code;
    k->code_size = size;
    return EXIT_OK;
}

static int add_kernel(pack_inputs_t *in, sdk_kpack_spec_kernel_t **k, int32_t file,
                      int32_t candidate)
{
    if (in->kernel_count == SDK_KPACK_MAX_KERNELS)
        return cli_fail("pack build", CDNN_STATUS_BAD_PARAM,
                        "the descriptors define more than the %d kernels a pack holds",
                        SDK_KPACK_MAX_KERNELS);
    if (in->kernel_count == in->kernel_cap) {
        int32_t cap = in->kernel_cap ? 2 * in->kernel_cap : 16;
        sdk_kpack_spec_kernel_t *kernels = realloc(in->kernels, (size_t)cap * sizeof *kernels);
        int32_t *files = realloc(in->kernel_file, (size_t)cap * sizeof *files);
        in->kernels = kernels ? kernels : in->kernels;
        in->kernel_file = files ? files : in->kernel_file;
        int32_t *cands = realloc(in->kernel_candidate, (size_t)cap * sizeof *cands);
        in->kernel_candidate = cands ? cands : in->kernel_candidate;
        if (!kernels || !files || !cands)
            return out_of_memory();
        in->kernel_cap = cap;
    }
    in->kernel_file[in->kernel_count] = file;
    in->kernel_candidate[in->kernel_count] = candidate;
    *k = &in->kernels[in->kernel_count++];
    memset(*k, 0, sizeof **k);
    return EXIT_OK;
}

static int read_candidate(const reader_t *r, const json_t *cand, const char *path,
                          int32_t index, const char *objects_dir, const char **id)
{
    static const char *const keys[] = {"kernel", "target", "object", "symbol",
                                       "signature", "metadata", NULL};
    sdk_kpack_spec_kernel_t *k = NULL;
    const char *object = NULL;
    char at[PATH_CAP];
    int rc = check_object(r, cand, path, keys);
    if (rc == EXIT_OK)
        rc = add_kernel(r->in, &k, r->file_index, index);
    if (rc == EXIT_OK)
        rc = get_string(r, cand, path, "kernel", 1, NAME, &k->id);
    if (rc == EXIT_OK)
        rc = get_string(r, cand, path, "target", 1, NAME, &k->target);
    join(at, path, "target");
    if (rc == EXIT_OK)
        rc = check_target(r, k->target, at);
    if (rc == EXIT_OK)
        rc = get_string(r, cand, path, "symbol", 1, NAME, &k->symbol);
    if (rc == EXIT_OK)
        rc = get_string(r, cand, path, "signature", 1, NAME, &k->signature);
    if (rc == EXIT_OK)
        rc = read_metadata(r, cand, path, k);
    if (rc == EXIT_OK)
        rc = get_string(r, cand, path, "object", 1, TEXT, &object);
    join(at, path, "object");
    if (rc == EXIT_OK)
        rc = read_object(r, object, at, objects_dir, k);
    *id = k ? k->id : NULL;
    return rc;
}

static int read_candidates(const reader_t *r, const json_t *doc, const char *objects_dir,
                           sdk_kpack_spec_engine_t *e)
{
    const json_t *list = NULL;
    int rc = get_array(r, doc, "$", "candidates", 1, &list);
    if (rc != EXIT_OK)
        return rc;
    size_t n = json_array_size(list);
    const char **ids = keep(r->in, calloc(n, sizeof *ids));
    if (!ids)
        return out_of_memory();
    for (size_t i = 0; rc == EXIT_OK && i < n; i++) {
        char at[PATH_CAP];
        join_index(at, "$.candidates", i);
        rc = read_candidate(r, json_array_get(list, i), at, (int32_t)i, objects_dir, &ids[i]);
    }
    e->candidates = ids;
    e->candidate_count = (int32_t)n;
    return rc;
}

/* ---- the engine -------------------------------------------------------------------- */

static int read_knob(const reader_t *r, const json_t *v, const char *path,
                     cdnn_knob_info_t *knob)
{
    static const char *const keys[] = {"name", "min", "max", "default", "description", NULL};
    json_int_t min = 0, max = 0, dflt = 0;
    char at[PATH_CAP];
    int rc = check_object(r, v, path, keys);
    if (rc == EXIT_OK)
        rc = get_string(r, v, path, "name", 1, NAME, &knob->name);
    join(at, path, "name");
    if (rc == EXIT_OK && !prefixed(knob->name, KNOB_PREFIX, 1))
        rc = fault(r, at, "'%s' must be %s<category>.<name>, as the kernels provider's knobs "
                   "are named", knob->name, KNOB_PREFIX);
    if (rc == EXIT_OK)
        rc = get_string(r, v, path, "description", 1, TEXT, &knob->description);
    if (rc == EXIT_OK)
        rc = get_integer(r, v, path, "min", INT64_MIN, INT64_MAX, &min);
    if (rc == EXIT_OK)
        rc = get_integer(r, v, path, "max", min, INT64_MAX, &max);
    if (rc == EXIT_OK)
        rc = get_integer(r, v, path, "default", min, max, &dflt);
    knob->min_value = min;
    knob->max_value = max;
    knob->default_value = dflt;
    return rc;
}

static int read_knobs(const reader_t *r, const json_t *doc, sdk_kpack_spec_engine_t *e)
{
    const json_t *list = NULL;
    int rc = get_array(r, doc, "$", "knobs", 0, &list);
    size_t n = list ? json_array_size(list) : 0;
    if (rc != EXIT_OK || n == 0)
        return rc;
    cdnn_knob_info_t *knobs = keep(r->in, calloc(n, sizeof *knobs));
    if (!knobs)
        return out_of_memory();
    for (size_t i = 0; rc == EXIT_OK && i < n; i++) {
        char at[PATH_CAP];
        join_index(at, "$.knobs", i);
        rc = read_knob(r, json_array_get(list, i), at, &knobs[i]);
        for (size_t j = 0; rc == EXIT_OK && j < i; j++)
            if (strcmp(knobs[j].name, knobs[i].name) == 0)
                rc = fault(r, at, "knob '%s' is declared twice (also $.knobs[%zu])",
                           knobs[i].name, j);
    }
    e->knobs = knobs;
    e->knob_count = (int32_t)n;
    return rc;
}

static int read_handler(const reader_t *r, const json_t *doc, sdk_kpack_spec_engine_t *e)
{
    static const char *const keys[] = {"name", "version", NULL};
    int rc = EXIT_OK;
    const json_t *h = member(r, doc, "$", "handler", &rc);
    json_int_t version = 0;
    if (h)
        rc = check_object(r, h, "$.handler", keys);
    if (h && rc == EXIT_OK)
        rc = get_string(r, h, "$.handler", "name", 1, NAME, &e->handler_name);
    if (h && rc == EXIT_OK)
        rc = get_integer(r, h, "$.handler", "version", 0, UINT32_MAX, &version);
    e->handler_version = (uint32_t)version;
    return rc;
}

/* The constraints as the pack keeps them: compact JSON, keys sorted, ASCII
 * ("{}" when the descriptor has none), so that equal constraints are equal
 * bytes. */
static int read_constraints(const reader_t *r, const json_t *doc,
                            sdk_kpack_spec_engine_t *e)
{
    const json_t *c = json_object_get(doc, "constraints");
    if (!c) {
        e->constraints_json = "{}";
        return EXIT_OK;
    }
    if (!json_is_object(c))
        return fault(r, "$.constraints", "must be an object, not %s", type_name(c));
    char *text = keep(r->in, json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII));
    if (!text)
        return out_of_memory();
    if (!sdk_kpack_is_text(text))
        return fault(r, "$.constraints", "is longer than the %d characters a pack keeps",
                     SDK_KPACK_MAX_TEXT);
    e->constraints_json = text;
    return EXIT_OK;
}

static int read_engine(const reader_t *r, const json_t *doc, const char *objects_dir,
                       sdk_kpack_spec_engine_t *e)
{
    static const char *const keys[] = {"engine", "rank", "match", "constraints",
                                       "handler", "knobs", "candidates", NULL};
    json_int_t rank = 0;
    int rc = check_object(r, doc, "$", keys);
    if (rc == EXIT_OK)
        rc = get_string(r, doc, "$", "engine", 1, NAME, &e->name);
    if (rc == EXIT_OK && !prefixed(e->name, ENGINE_PREFIX, 0))
        rc = fault(r, "$.engine", "'%s' must be %s<name>: the kernels provider serves "
                   "these engines", e->name, ENGINE_PREFIX);
    if (rc == EXIT_OK)
        rc = get_integer(r, doc, "$", "rank", INT32_MIN, INT32_MAX, &rank);
    e->rank = (int32_t)rank;
    if (rc == EXIT_OK)
        rc = get_string(r, doc, "$", "match", 1, NAME, &e->match);
    if (rc == EXIT_OK)
        rc = read_constraints(r, doc, e);
    if (rc == EXIT_OK)
        rc = read_handler(r, doc, e);
    if (rc == EXIT_OK)
        rc = read_knobs(r, doc, e);
    return rc == EXIT_OK ? read_candidates(r, doc, objects_dir, e) : rc;
}

/* ---- files ------------------------------------------------------------------------ */

/* Room for one more engine, and the document and file it comes from. */
static int grow_engines(pack_inputs_t *in)
{
    if (in->engine_count == SDK_KPACK_MAX_ENGINES)
        return cli_fail("pack build", CDNN_STATUS_BAD_PARAM,
                        "more than the %d engines a pack holds", SDK_KPACK_MAX_ENGINES);
    if (in->engine_count < in->engine_cap)
        return EXIT_OK;
    int32_t cap = in->engine_cap ? 2 * in->engine_cap : 8;
    sdk_kpack_spec_engine_t *engines = realloc(in->engines, (size_t)cap * sizeof *engines);
    in->engines = engines ? engines : in->engines;
    json_t **docs = realloc(in->documents, (size_t)cap * sizeof *docs);
    in->documents = docs ? docs : in->documents;
    const char **files = realloc(in->files, (size_t)cap * sizeof *files);
    in->files = files ? files : in->files;
    if (!engines || !docs || !files)
        return out_of_memory();
    in->engine_cap = cap;
    return EXIT_OK;
}

static json_t *parse(const char *path, const char *text, size_t size)
{
    json_error_t error;
    json_t *doc = json_loadb(text, size, JSON_REJECT_DUPLICATES, &error);
    if (!doc)
        cli_fail("pack build", CDNN_STATUS_BAD_PARAM, "%s: line %d, column %d: %s", path,
                 error.line, error.column, error.text);
    return doc;
}

int pack_descriptor_parse(pack_inputs_t *in, const char *path, const char *text,
                          size_t size, const char *objects_dir)
{
    if (grow_engines(in) != EXIT_OK)
        return EXIT_FAILED;
    json_t *doc = parse(path, text, size);
    if (!doc)
        return EXIT_FAILED;
    int32_t i = in->engine_count++;
    in->documents[i] = doc; /* its strings live as long as in */
    in->files[i] = path;
    sdk_kpack_spec_engine_t *e = &in->engines[i];
    memset(e, 0, sizeof *e);
    reader_t r = {in, path, i};
    return read_engine(&r, doc, objects_dir, e);
}

int pack_descriptor_read(pack_inputs_t *in, const char *path, const char *objects_dir)
{
    unsigned char *text = NULL;
    size_t size = 0;
    int rc = cli_read_file("pack build", path, &text, &size);
    if (rc == EXIT_OK)
        rc = pack_descriptor_parse(in, path, (const char *)text, size, objects_dir);
    free(text);
    return rc;
}

/* Engines are few (one per descriptor): pairs are compared. */
static int check_engine_names(const pack_inputs_t *in)
{
    for (int32_t i = 1; i < in->engine_count; i++)
        for (int32_t j = 0; j < i; j++)
            if (strcmp(in->engines[i].name, in->engines[j].name) == 0)
                return cli_fail("pack build", CDNN_STATUS_BAD_PARAM,
                                "%s: $.engine: engine '%s' is already defined by %s; engine "
                                "names are unique in a pack", in->files[i],
                                in->engines[i].name, in->files[j]);
    return EXIT_OK;
}

static int compare_ids(const void *a, const void *b)
{
    const sdk_kpack_spec_kernel_t *x = *(const sdk_kpack_spec_kernel_t *const *)a;
    const sdk_kpack_spec_kernel_t *y = *(const sdk_kpack_spec_kernel_t *const *)b;
    int c = strcmp(x->id, y->id);
    return c ? c : (x > y) - (x < y); /* the earlier definition first */
}

int pack_inputs_check(const pack_inputs_t *in)
{
    if (check_engine_names(in) != EXIT_OK)
        return EXIT_FAILED;
    size_t n = (size_t)in->kernel_count;
    const sdk_kpack_spec_kernel_t **order = calloc(n ? n : 1, sizeof *order);
    if (!order)
        return out_of_memory();
    for (size_t i = 0; i < n; i++)
        order[i] = &in->kernels[i];
    qsort(order, n, sizeof *order, compare_ids);
    int rc = EXIT_OK;
    for (size_t i = 1; rc == EXIT_OK && i < n; i++) {
        ptrdiff_t a = order[i - 1] - in->kernels, b = order[i] - in->kernels;
        if (strcmp(order[i - 1]->id, order[i]->id) == 0)
            rc = cli_fail("pack build", CDNN_STATUS_BAD_PARAM,
                          "%s: $.candidates[%d].kernel: kernel id '%s' is already defined "
                          "by %s: $.candidates[%d]; kernel ids are unique in a pack",
                          in->files[in->kernel_file[b]], in->kernel_candidate[b],
                          order[i]->id, in->files[in->kernel_file[a]],
                          in->kernel_candidate[a]);
    }
    free(order);
    return rc;
}

void pack_inputs_free(pack_inputs_t *in)
{
    for (int32_t i = 0; i < in->engine_count; i++)
        json_decref(in->documents[i]);
    for (size_t i = 0; i < in->kept_count; i++)
        free(in->kept[i]);
    free(in->kept);
    free(in->documents);
    free(in->files);
    free(in->engines);
    free(in->kernels);
    free(in->kernel_file);
    free(in->kernel_candidate);
    memset(in, 0, sizeof *in);
}
