#include "packs.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/error.h>

#include "payload.h"
#include "targets.h"

#define ENGINE_PREFIX "kernels:"

/* ---- logging ------------------------------------------------------------------------ */

static void log_skip(const cdnn_provider_host_t *host, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A pack or engine left out: a warning, so that an operator sees why an
 * engine they installed is missing. */
static void log_skip(const cdnn_provider_host_t *host, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    host->log(CDNN_LOG_WARNING, line);
}

/* ---- the kernel path ------------------------------------------------------------------ */

/* "<the directory of this provider's shared object>/../kernels", canonical
 * when it exists, or NULL if the object cannot be located. */
static char *default_kernel_dir(void)
{
    Dl_info info;
    char object[PATH_MAX], dir[PATH_MAX + 16], canonical[PATH_MAX];
    if (!dladdr((void *)&pack_set_open, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, object))
        return NULL;
    char *slash = strrchr(object, '/');
    if (slash)
        *slash = 0;
    snprintf(dir, sizeof dir, "%s/../kernels", object);
    return strdup(realpath(dir, canonical) ? canonical : dir);
}

static char *kernel_path(void)
{
    const char *env = secure_getenv(KERNEL_PATH_ENV);
    if (env && *env)
        return strdup(env);
    char *dir = default_kernel_dir();
    return dir ? dir : strdup("");
}

/* ---- opening packs ------------------------------------------------------------------------ */

static int is_pack_name(const struct dirent *entry)
{
    size_t n = strlen(entry->d_name), s = strlen(KERNEL_PACK_SUFFIX);
    return entry->d_name[0] != '.' && n > s &&
           strcmp(entry->d_name + n - s, KERNEL_PACK_SUFFIX) == 0;
}

static cdnn_status_t add_pack(pack_set_t *set, sdk_kpack_t *pack)
{
    sdk_kpack_t **grown = realloc(set->packs, (size_t)(set->pack_count + 1) * sizeof *grown);
    if (!grown) {
        sdk_kpack_close(pack);
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory reading kernel packs");
    }
    set->packs = grown;
    set->packs[set->pack_count++] = pack;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t open_pack(const cdnn_provider_host_t *host, pack_set_t *set,
                               const char *path)
{
    char why[512];
    sdk_kpack_t *pack = NULL;
    cdnn_status_t st = sdk_kpack_open(path, &pack, why, sizeof why);
    if (st == CDNN_STATUS_ALLOC_FAILED)
        return sdk_fail(st, "%s", why);
    if (st != CDNN_STATUS_SUCCESS) {
        log_skip(host, "kernels provider: skipping kernel pack %s: %s", path, why);
        return CDNN_STATUS_SUCCESS;
    }
    const char *family = sdk_kpack_info(pack)->target_family;
    if (strcmp(family, "host") != 0 && strcmp(family, "cuda") != 0) {
        log_skip(host, "kernels provider: skipping kernel pack %s: its target family "
                 "\"%s\" is not host or cuda", path, family);
        sdk_kpack_close(pack);
        return CDNN_STATUS_SUCCESS;
    }
    return add_pack(set, pack);
}

static cdnn_status_t open_directory(const cdnn_provider_host_t *host, pack_set_t *set,
                                    const char *dir)
{
    struct dirent **names = NULL;
    char path[PATH_MAX];
    int n = scandir(dir, &names, is_pack_name, alphasort);
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        if (st == CDNN_STATUS_SUCCESS)
            st = open_pack(host, set, path);
        free(names[i]);
    }
    free(names);
    return st;
}

static cdnn_status_t open_packs(const cdnn_provider_host_t *host, pack_set_t *set)
{
    char *copy = strdup(set->path), *save = NULL;
    if (!copy)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    for (char *dir = strtok_r(copy, ":", &save); dir && st == CDNN_STATUS_SUCCESS;
         dir = strtok_r(NULL, ":", &save))
        st = open_directory(host, set, dir);
    free(copy);
    return st;
}

/* ---- engines ------------------------------------------------------------------------------ */

static int family_kind(const sdk_kpack_t *pack)
{
    return strcmp(sdk_kpack_info(pack)->target_family, "host") == 0 ? KERNEL_KIND_HOST
                                                                     : KERNEL_KIND_CUDA;
}

/* Why this provider cannot run the pack's engine entry as described, or
 * NULL; fills e's match, handler and constraints. */
static const char *engine_problem(const sdk_kpack_t *pack, const sdk_kpack_engine_t *entry,
                                  kernel_engine_t *e, char *why, size_t cap)
{
    if (strncmp(entry->name, ENGINE_PREFIX, strlen(ENGINE_PREFIX)) != 0)
        return "its name does not start with \"" ENGINE_PREFIX "\"";
    if (!(e->match = match_function_find(entry->match)))
        return "its match function is not one this provider has";
    if (!(e->handler = dispatch_handler_find(entry->handler_name, entry->handler_version)))
        return "its dispatch handler (name and version) is not one this provider has";
    if ((int)e->handler->kind != family_kind(pack))
        return "its handler launches kernels of another target family";
    for (int32_t i = 0; i < entry->candidate_count; i++)
        if (strcmp(entry->candidates[i]->signature, e->handler->signature) != 0 ||
            target_kind(entry->candidates[i]->target) != family_kind(pack))
            return "a candidate's signature or target is not its handler's";
    if (engine_constraints_parse(entry->constraints_json, &e->constraints, why, cap) != 0)
        return why;
    if (e->constraints.given & ~e->match->honored)
        return "it states a constraint its match function does not read";
    return NULL;
}

/* The candidate knob: 0 runs the first candidate that applies, i runs
 * candidate i (1-based) exactly.  A descriptor may name it by declaring
 * one knob, from 0 (the default) to at least its candidate count; else it
 * is kernels.<engine>.candidate.  Other knobs this provider would not
 * read, so an engine declaring them is not run on guesses. */
static const char *make_knobs(const sdk_kpack_engine_t *entry, kernel_engine_t *e)
{
    const char *suffix = entry->name + strlen(ENGINE_PREFIX);
    size_t n = strlen("kernels..candidate") + strlen(suffix) + 1;
    const cdnn_knob_info_t *declared = entry->knob_count == 1 ? &entry->knobs[0] : NULL;
    if (entry->knob_count > 1)
        return "it declares more than one knob; its one knob chooses its candidate";
    if (declared && (declared->min_value != 0 || declared->default_value != 0 ||
                     declared->max_value < entry->candidate_count))
        return "its knob does not run from 0 (the default) to its candidate count";
    e->candidate_knob = declared ? strdup(declared->name) : malloc(n);
    e->knobs = calloc(1, sizeof *e->knobs);
    if (!e->candidate_knob || !e->knobs)
        return "out of memory";
    if (!declared)
        snprintf(e->candidate_knob, n, "kernels.%s.candidate", suffix);
    e->knobs[0] = (cdnn_knob_info_t){e->candidate_knob,
                                     declared ? declared->description
                                              : "candidate kernel: 0 = the first that "
                                                "applies, i = candidate i of the descriptor",
                                     0, declared ? declared->max_value : entry->candidate_count,
                                     0};
    e->knob_count = 1;
    return NULL;
}

static int engine_taken(const pack_set_t *set, int32_t count, const char *name)
{
    for (int32_t i = 0; i < count; i++)
        if (strcmp(set->engines[i].entry->name, name) == 0)
            return 1;
    return 0;
}

static void engine_free(kernel_engine_t *e)
{
    free(e->knobs);
    free(e->candidate_knob);
}

/* Add the pack's engine entry as engine number *count, or log why not. */
static void add_engine(const cdnn_provider_host_t *host, pack_set_t *set,
                       const sdk_kpack_t *pack, const sdk_kpack_engine_t *entry,
                       int32_t *count)
{
    char why[256];
    kernel_engine_t *e = &set->engines[*count];
    *e = (kernel_engine_t){.pack = pack, .entry = entry};
    const char *problem = engine_taken(set, *count, entry->name)
                              ? "an earlier pack serves an engine of that name"
                              : engine_problem(pack, entry, e, why, sizeof why);
    if (!problem)
        problem = make_knobs(entry, e);
    if (problem) {
        log_skip(host, "kernels provider: skipping engine %s of kernel pack %s: %s",
                 entry->name, sdk_kpack_info(pack)->path, problem);
        engine_free(e);
        return;
    }
    set->table_rows[*count] = (sdk_engine_t){entry->name, entry->rank, KERNEL_PAYLOAD_MAJOR,
                                             KERNEL_PAYLOAD_MINOR, e->knob_count, e->knobs, e};
    (*count)++;
}

static cdnn_status_t find_engines(const cdnn_provider_host_t *host, pack_set_t *set)
{
    int32_t total = 0, count = 0;
    for (int32_t p = 0; p < set->pack_count; p++)
        total += sdk_kpack_engine_count(set->packs[p]);
    set->engines = calloc((size_t)total + 1, sizeof *set->engines);
    set->table_rows = calloc((size_t)total + 1, sizeof *set->table_rows);
    if (!set->engines || !set->table_rows)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory reading kernel packs");
    for (int32_t p = 0; p < set->pack_count; p++)
        for (int32_t i = 0; i < sdk_kpack_engine_count(set->packs[p]); i++)
            add_engine(host, set, set->packs[p], sdk_kpack_engine(set->packs[p], i), &count);
    set->table = (sdk_engine_table_t){count, set->table_rows};
    return CDNN_STATUS_SUCCESS;
}

/* ---- the set ---------------------------------------------------------------------------------- */

cdnn_status_t pack_set_open(const cdnn_provider_host_t *host, pack_set_t *set)
{
    memset(set, 0, sizeof *set);
    set->path = kernel_path();
    if (!set->path)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    cdnn_status_t st = open_packs(host, set);
    if (st == CDNN_STATUS_SUCCESS)
        st = find_engines(host, set);
    if (st != CDNN_STATUS_SUCCESS)
        pack_set_close(set);
    return st;
}

void pack_set_close(pack_set_t *set)
{
    for (int32_t i = 0; set->engines && i < set->table.count; i++)
        engine_free(&set->engines[i]);
    for (int32_t i = 0; i < set->pack_count; i++)
        sdk_kpack_close(set->packs[i]);
    free(set->engines);
    free(set->table_rows);
    free(set->packs);
    free(set->path);
    memset(set, 0, sizeof *set);
}

const kernel_engine_t *pack_set_engine(const pack_set_t *set, int32_t index)
{
    const sdk_engine_t *row = NULL;
    return sdk_engine_at(&set->table, index, &row) == CDNN_STATUS_SUCCESS ? row->impl : NULL;
}

/* ---- strict mode ------------------------------------------------------------------------------ */

static int same_metadata(const sdk_kpack_kernel_t *k, const sdk_kpack_kv_t *metadata,
                         int32_t count)
{
    if (k->metadata_count != count)
        return 0;
    for (int32_t i = 0; i < count; i++)
        if (strcmp(k->metadata[i].key, metadata[i].key) != 0 ||
            strcmp(k->metadata[i].value, metadata[i].value) != 0)
            return 0;
    return 1;
}

const sdk_kpack_kernel_t *pack_set_find_code(const pack_set_t *set,
                                             const uint8_t sha256[SDK_SHA256_BYTES],
                                             const char *symbol, const char *target,
                                             const char *signature,
                                             const sdk_kpack_kv_t *metadata,
                                             int32_t metadata_count)
{
    for (int32_t p = 0; p < set->pack_count; p++)
        for (int32_t i = 0; i < sdk_kpack_kernel_count(set->packs[p]); i++) {
            const sdk_kpack_kernel_t *k = sdk_kpack_kernel(set->packs[p], i);
            if (memcmp(k->sha256, sha256, SDK_SHA256_BYTES) == 0 &&
                strcmp(k->symbol, symbol) == 0 && strcmp(k->target, target) == 0 &&
                strcmp(k->signature, signature) == 0 &&
                same_metadata(k, metadata, metadata_count))
                return k;
        }
    return NULL;
}

const sdk_kpack_kernel_t *pack_set_find_entry(const pack_set_t *set,
                                              const uint8_t sha256[SDK_SHA256_BYTES],
                                              const char *symbol)
{
    for (int32_t p = 0; p < set->pack_count; p++)
        for (int32_t i = 0; i < sdk_kpack_kernel_count(set->packs[p]); i++) {
            const sdk_kpack_kernel_t *k = sdk_kpack_kernel(set->packs[p], i);
            if (memcmp(k->sha256, sha256, SDK_SHA256_BYTES) == 0 &&
                strcmp(k->symbol, symbol) == 0)
                return k;
        }
    return NULL;
}
