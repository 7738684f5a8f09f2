/*
 * registry.c -- finding, loading and checking providers.
 */
#include "engine/registry.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.h"
#include "core/error.h"
#include "core/log.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
    int references;
    char *configured_path; /* cdnn_set_provider_path; NULL: default */
    char *used_path;       /* what the last load searched */
    provider_slot_t *providers;
    int32_t provider_count;
    engine_slot_t *engines;
    int32_t engine_count;
} reg;


cdnn_status_t cdnn_set_provider_path(const char *paths)
{
    char *copy = paths ? strdup(paths) : NULL;
    if (paths && !copy)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    pthread_mutex_lock(&registry_lock);
    int busy = reg.references > 0;
    if (!busy) {
        free(reg.configured_path);
        reg.configured_path = copy;
    }
    pthread_mutex_unlock(&registry_lock);
    if (busy) {
        free(copy);
        return cdnn_fail(CDNN_STATUS_BAD_STATE,
                         "providers are already loaded; set the provider path "
                         "before the first handle is created (or after every "
                         "handle and built graph is destroyed)");
    }
    return CDNN_STATUS_SUCCESS;
}

/* A copy made under the lock: the registry replaces its path whenever it
 * loads providers again, which another thread may do meanwhile. */
const char *cdnn_provider_search_path(void)
{
    static _Thread_local char copy[4096];
    pthread_mutex_lock(&registry_lock);
    snprintf(copy, sizeof copy, "%s", reg.used_path ? reg.used_path : "");
    pthread_mutex_unlock(&registry_lock);
    return copy;
}

/* "<directory of libcdnn.so>/cdnn/providers", canonical (the library may
 * have been found through "$ORIGIN/../lib"), or NULL if unknown. */
static char *default_provider_dir(void)
{
    Dl_info info;
    char library[PATH_MAX];
    if (!dladdr((void *)&cdnn_set_provider_path, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, library))
        return NULL;
    char *slash = strrchr(library, '/');
    if (slash)
        *slash = 0;
    size_t n = strlen(library) + sizeof "/" CDNN_PROVIDER_SUBDIR;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%s/%s", library, CDNN_PROVIDER_SUBDIR);
    return out;
}

static char *search_path(void)
{
    if (reg.configured_path)
        return strdup(reg.configured_path);
    const char *env = env_get(CDNN_ENV_PROVIDER_PATH);
    if (env && *env)
        return strdup(env);
    char *dir = default_provider_dir();
    return dir ? dir : strdup(""); /* nothing to search; load_all warns */
}

static int add_engine(provider_slot_t *p, int32_t index)
{
    cdnn_provider_engine_t info = {0};
    if (p->table->engine_info(p->state, index, &info) != CDNN_STATUS_SUCCESS ||
        !info.name) {
        cdnn_log(CDNN_LOG_WARNING, "provider %s: engine %d has no name; dropped",
                 p->path, index);
        return 0;
    }
    uint64_t id = cdnn_engine_id_from_name(info.name);
    const engine_slot_t *holder = registry_find(id);
    if (holder) {
        cdnn_log(CDNN_LOG_WARNING,
                 "provider %s: engine %s (id 0x%016llx) is already served by "
                 "provider %s; the later one is dropped",
                 p->path, info.name, (unsigned long long)id, holder->provider->path);
        return 0;
    }
    engine_slot_t *grown =
        realloc(reg.engines, (size_t)(reg.engine_count + 1) * sizeof *grown);
    char *name = strdup(info.name);
    if (!grown || !name) {
        free(name);
        if (grown)
            reg.engines = grown;
        return -1;
    }
    reg.engines = grown;
    reg.engines[reg.engine_count++] = (engine_slot_t){
        id, name, info.rank, index, info.payload_major, info.payload_minor, p};
    return 0;
}

static const char *table_problem(const cdnn_provider_t *t)
{
    static _Thread_local char why[256];
    if (!t)
        return "its entry point returned NULL";
    if (t->abi_major != CDNN_PROVIDER_ABI_MAJOR) {
        snprintf(why, sizeof why,
                 "it was built for provider ABI %u.%u, and this cdnn speaks "
                 "%u.%u; rebuild it against this cdnn",
                 t->abi_major, t->abi_minor, CDNN_PROVIDER_ABI_MAJOR,
                 CDNN_PROVIDER_ABI_MINOR);
        return why;
    }
    if (offsetof(cdnn_provider_t, context_restore) + sizeof(t->context_restore) >
        t->struct_size)
        return "its table is shorter than ABI 1.0 requires";
    if (!t->name || !t->version || !t->init || !t->fini || !t->engine_count ||
        !t->engine_info || !t->applicable || !t->context_create ||
        !t->workspace_size || !t->execute || !t->context_destroy || !t->last_error)
        return "its table lacks a required function or name";
    return NULL;
}

/* Load one shared object; problems are logged and the file skipped. */
static void load_provider(const char *path)
{
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        cdnn_log(CDNN_LOG_WARNING, "skipping provider %s: %s", path, dlerror());
        return;
    }
    cdnn_provider_entry_fn entry;
    *(void **)&entry = dlsym(library, CDNN_PROVIDER_ENTRY_SYMBOL);
    const cdnn_provider_t *table = entry ? entry() : NULL;
    const char *problem = entry ? table_problem(table)
                                : "it does not export " CDNN_PROVIDER_ENTRY_SYMBOL;
    void *state = NULL;
    if (!problem && table->init(&provider_host, &state) != CDNN_STATUS_SUCCESS) {
        cdnn_log(CDNN_LOG_WARNING, "skipping provider %s (%s %s): its "
                 "initialisation failed: %s", path, table->name, table->version,
                 table->last_error(NULL));
        dlclose(library);
        return;
    }
    provider_slot_t *grown = problem ? NULL
        : realloc(reg.providers, (size_t)(reg.provider_count + 1) * sizeof *grown);
    char *kept_path = grown ? strdup(path) : NULL;
    if (!kept_path) {
        if (grown)
            reg.providers = grown;
        if (!problem) {
            table->fini(state);
            problem = "out of memory";
        }
        cdnn_log(CDNN_LOG_WARNING, "skipping provider %s: %s", path, problem);
        dlclose(library);
        return;
    }
    reg.providers = grown;
    reg.providers[reg.provider_count++] = (provider_slot_t){library, table, state, kept_path};
    cdnn_log(CDNN_LOG_INFO, "loaded provider %s %s from %s", table->name,
             table->version, path);
}

static int is_shared_object(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return n > 3 && strcmp(e->d_name + n - 3, ".so") == 0;
}

/* Every *.so of a directory, in name order so that "first loaded" is
 * reproducible. */
static void load_directory(const char *dir)
{
    struct dirent **entries = NULL;
    int n = scandir(dir, &entries, is_shared_object, alphasort);
    if (n < 0) {
        cdnn_log(CDNN_LOG_INFO, "provider directory %s cannot be read", dir);
        return;
    }
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, entries[i]->d_name) <
            (int)sizeof path)
            load_provider(path);
        free(entries[i]);
    }
    free(entries);
}

static void load_engines(void)
{
    /* Providers were loaded first, so that engine order follows load order
     * and duplicates are settled in favour of the first provider. */
    for (int32_t p = 0; p < reg.provider_count; p++) {
        provider_slot_t *slot = &reg.providers[p];
        int32_t count = slot->table->engine_count(slot->state);
        for (int32_t i = 0; i < count; i++)
            if (add_engine(slot, i) < 0)
                cdnn_log(CDNN_LOG_WARNING, "out of memory listing engines");
    }
}

static void unload_all(void)
{
    for (int32_t i = 0; i < reg.engine_count; i++)
        free(reg.engines[i].name);
    for (int32_t p = 0; p < reg.provider_count; p++) {
        reg.providers[p].table->fini(reg.providers[p].state);
        dlclose(reg.providers[p].library);
        free(reg.providers[p].path);
    }
    free(reg.engines);
    free(reg.providers);
    reg.engines = NULL;
    reg.providers = NULL;
    reg.engine_count = reg.provider_count = 0;
}

static cdnn_status_t load_all(void)
{
    char *path = search_path();
    if (!path)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    free(reg.used_path);
    reg.used_path = path;
    char *copy = strdup(path);
    if (!copy)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "out of memory");
    char *save = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save))
        load_directory(dir);
    free(copy);
    load_engines();
    if (reg.engine_count == 0)
        cdnn_log(CDNN_LOG_WARNING, "no engine was found; providers were looked "
                 "for in %s", path);
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t registry_acquire(void)
{
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    pthread_mutex_lock(&registry_lock);
    if (reg.references == 0)
        st = load_all();
    if (st == CDNN_STATUS_SUCCESS)
        reg.references++;
    pthread_mutex_unlock(&registry_lock);
    return st;
}

void registry_release(void)
{
    pthread_mutex_lock(&registry_lock);
    if (reg.references > 0 && --reg.references == 0)
        unload_all();
    pthread_mutex_unlock(&registry_lock);
}

int32_t registry_engine_count(void)
{
    return reg.engine_count;
}

const engine_slot_t *registry_engine(int32_t index)
{
    return index >= 0 && index < reg.engine_count ? &reg.engines[index] : NULL;
}

const engine_slot_t *registry_find(uint64_t id)
{
    for (int32_t i = 0; i < reg.engine_count; i++)
        if (reg.engines[i].id == id)
            return &reg.engines[i];
    return NULL;
}

const char *registry_provider_error(const provider_slot_t *provider)
{
    const char *msg = provider->table->last_error(provider->state);
    return msg && *msg ? msg : "(the provider gave no reason)";
}

int32_t engine_knob_count(const engine_slot_t *e)
{
    const cdnn_provider_t *t = e->provider->table;
    if (!PROVIDER_HAS(t, knob_count) || !PROVIDER_HAS(t, knob_info))
        return 0;
    int32_t n = t->knob_count(e->provider->state, e->index);
    return n < 0 ? 0 : n;
}

cdnn_status_t engine_knob_info(const engine_slot_t *e, int32_t index,
                               cdnn_knob_info_t *info)
{
    const cdnn_provider_t *t = e->provider->table;
    if (index < 0 || index >= engine_knob_count(e))
        return cdnn_fail(CDNN_STATUS_NOT_FOUND, "engine %s has no knob number %d",
                         e->name, index);
    memset(info, 0, sizeof *info);
    if (t->knob_info(e->provider->state, e->index, index, info) != CDNN_STATUS_SUCCESS ||
        !info->name)
        return cdnn_fail(CDNN_STATUS_INTERNAL_ERROR, "engine %s cannot describe its "
                         "knob %d: %s", e->name, index, registry_provider_error(e->provider));
    if (!info->description)
        info->description = "";
    return CDNN_STATUS_SUCCESS;
}

int32_t engine_variant_count(const engine_slot_t *e, const cdnn_device_view_t *device,
                             const cdnn_graph_view_t *graph)
{
    const cdnn_provider_t *t = e->provider->table;
    if (!PROVIDER_HAS(t, variant_count) || !PROVIDER_HAS(t, variant_knob))
        return 0;
    int32_t n = t->variant_count(e->provider->state, e->index, device, graph);
    return n < 0 ? 0 : n;
}

cdnn_status_t engine_variant_knob(const engine_slot_t *e,
                                  const cdnn_device_view_t *device,
                                  const cdnn_graph_view_t *graph, int32_t index,
                                  cdnn_knob_value_t *knob)
{
    const cdnn_provider_t *t = e->provider->table;
    memset(knob, 0, sizeof *knob);
    if (t->variant_knob(e->provider->state, e->index, device, graph, index, knob) !=
            CDNN_STATUS_SUCCESS || !knob->name)
        return cdnn_fail(CDNN_STATUS_INTERNAL_ERROR, "engine %s cannot describe its "
                         "variant %d: %s", e->name, index,
                         registry_provider_error(e->provider));
    return CDNN_STATUS_SUCCESS;
}
