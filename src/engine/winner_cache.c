#include "engine/winner_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cdnn_sdk/sha256.h>

#include "core/env.h"
#include "core/log.h"
#include "core/sha256.h"

#define CACHE_FILE "winners.v1"
#define CACHE_VERSION 2        /* what records are written as */
#define CACHE_OLDEST_VERSION 1 /* read too: its times are the host's */
#define CACHE_MAX_BYTES (64u << 20) /* a larger file is not read */
#define CHECKSUM_DIGITS 16

int winner_cache_enabled(void)
{
    const char *off = env_get(CDNN_ENV_DISABLE_CACHE);
    return !(off && strcmp(off, "1") == 0);
}

/* The cache directory, or 0 if there is none to use. */
static int cache_dir(char *out, size_t cap)
{
    const char *dir = env_get(CDNN_ENV_CACHE_DIR);
    const char *home = env_get(CDNN_ENV_HOME);
    int n = dir && *dir ? snprintf(out, cap, "%s", dir)
            : home && *home ? snprintf(out, cap, "%s/.cache/cdnn", home)
                            : -1;
    return n > 0 && (size_t)n < cap;
}

/* mkdir -p, private to the user. */
static int make_dirs(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

static void checksum(const char *text, size_t n, char out[CHECKSUM_DIGITS + 1])
{
    uint8_t digest[32] = {0};
    char hex[SDK_SHA256_HEX_SIZE];
    sha256_t h;
    sha256_begin(&h);
    sha256_update(&h, text, n);
    sha256_end(&h, digest);
    sdk_sha256_hex(digest, hex);
    memcpy(out, hex, CHECKSUM_DIGITS);
    out[CHECKSUM_DIGITS] = '\0';
}

/* ---- reading ----------------------------------------------------------------- */

/* The line at *at, without its newline, in *line and *n; *at moves past
 * it.  0 once the text is used up. */
static int next_line(const char *text, size_t size, size_t *at, const char **line,
                     size_t *n)
{
    if (*at >= size)
        return 0;
    const char *end = memchr(text + *at, '\n', size - *at);
    *line = text + *at;
    *n = end ? (size_t)(end - *line) : size - *at;
    *at += *n + 1;
    return 1;
}

/* What a line holds, for lookups and for compaction. */
typedef enum record_kind {
    RECORD_DAMAGED, /* checksum, JSON or fields do not hold: dead */
    RECORD_STALE,   /* a v1 record for a CUDA device: dead (kind_of) */
    RECORD_NEWER,   /* a later format a newer cdnn wrote: kept, not read */
    RECORD_USABLE,
} record_kind_t;

typedef struct record_fields {
    const char *key, *device, *lib, *knobs;
} record_fields_t;

/* The fields that say whom a record is for; 0 if one is missing. */
static int fields_of(json_t *record, record_fields_t *f)
{
    /* a record without "knobs" was made with none */
    json_t *knobs = json_object_get(record, "knobs");
    f->key = json_string_value(json_object_get(record, "key"));
    f->device = json_string_value(json_object_get(record, "device"));
    f->lib = json_string_value(json_object_get(record, "lib"));
    f->knobs = knobs ? json_string_value(knobs) : "";
    return f->key && f->device && f->lib && f->knobs;
}

static record_kind_t kind_of(json_t *record)
{
    json_t *v = json_object_get(record, "v");
    json_int_t version = json_is_integer(v) ? json_integer_value(v) : 0;
    record_fields_t f;
    if (version > CACHE_VERSION)
        return RECORD_NEWER;
    if (version < CACHE_OLDEST_VERSION ||
        !json_is_array(json_object_get(record, "ranking")) || !fields_of(record, &f))
        return RECORD_DAMAGED;
    /* v1 timed CUDA engines with the host clock without synchronizing:
     * its ranking may be the enqueue's rather than the work's */
    if (version == 1 && strncmp(f.device, "cuda/", 5) == 0)
        return RECORD_STALE;
    return RECORD_USABLE;
}

/* What one line holds (*record set only for a usable record). */
static record_kind_t parse_record(const char *line, size_t n, json_t **record)
{
    char sum[CHECKSUM_DIGITS + 1];
    *record = NULL;
    if (n < CHECKSUM_DIGITS + 2 || line[CHECKSUM_DIGITS] != ' ')
        return RECORD_DAMAGED;
    const char *json = line + CHECKSUM_DIGITS + 1;
    size_t json_size = n - CHECKSUM_DIGITS - 1;
    checksum(json, json_size, sum);
    if (memcmp(sum, line, CHECKSUM_DIGITS) != 0)
        return RECORD_DAMAGED;
    json_t *r = json_loadb(json, json_size, JSON_REJECT_DUPLICATES, NULL);
    record_kind_t kind = kind_of(r);
    if (kind == RECORD_USABLE)
        *record = r;
    else
        json_decref(r);
    return kind;
}

/* What the lines of a cache file hold.  A record is live unless a later
 * record for the same graph, device, library and knobs supersedes it, or
 * it is damaged or stale. */
typedef struct tally {
    json_t *last_of; /* a live record's identity -> index of its line */
    size_t lines, damaged;
    int incomplete;  /* out of memory: the tally must not drop lines */
} tally_t;

/* Whom a line's record is for: its fields, or for a newer format (whose
 * fields this cdnn cannot judge) the line itself.  malloc'd; NULL if out
 * of memory. */
static char *identity_of(json_t *record, const char *line, size_t n)
{
    record_fields_t f;
    if (!record)
        return strndup(line, n);
    fields_of(record, &f);
    json_t *fields = json_pack("[s,s,s,s]", f.key, f.device, f.lib, f.knobs);
    char *identity = fields ? json_dumps(fields, JSON_COMPACT) : NULL;
    json_decref(fields);
    return identity;
}

static void tally_line(tally_t *t, record_kind_t kind, json_t *record, const char *line,
                       size_t n)
{
    size_t index = t->lines++;
    t->damaged += kind == RECORD_DAMAGED;
    if (kind != RECORD_USABLE && kind != RECORD_NEWER)
        return;
    char *identity = identity_of(record, line, n);
    if (!identity || json_object_set_new(t->last_of, identity, json_integer((json_int_t)index)))
        t->incomplete = 1;
    free(identity);
}

static size_t live_records(const tally_t *t)
{
    return json_object_size(t->last_of);
}

/* Tally every line and return the last usable record for plan (NULL:
 * none, or plan NULL). */
static json_t *scan(const char *text, size_t size, const plan_t *plan, tally_t *t)
{
    char key[65] = "";
    const char *line;
    size_t n, at = 0;
    json_t *found = NULL;
    record_fields_t f;
    if (plan)
        sdk_sha256_hex(plan->content_key, key);
    while (next_line(text, size, &at, &line, &n)) {
        json_t *record = NULL;
        record_kind_t kind = parse_record(line, n, &record);
        tally_line(t, kind, record, line, n);
        if (plan && record && fields_of(record, &f) && strcmp(f.key, key) == 0 &&
            strcmp(f.device, plan->device_key) == 0 && strcmp(f.lib, cdnn_version()) == 0 &&
            strcmp(f.knobs, plan->knob_key) == 0) {
            json_decref(found);
            found = record;
        } else {
            json_decref(record);
        }
    }
    return found;
}

/* All of fd's file (under the caller's lock), or NULL. */
static char *read_all(int fd, const char *path, size_t *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size <= 0)
        return NULL;
    if ((uint64_t)st.st_size > CACHE_MAX_BYTES) {
        cdnn_log(CDNN_LOG_WARNING, "winner cache %s is over %u MiB and is not read; "
                 "remove it", path, CACHE_MAX_BYTES >> 20);
        return NULL;
    }
    char *text = malloc((size_t)st.st_size);
    size_t got = 0;
    while (text && got < (size_t)st.st_size) {
        ssize_t r = pread(fd, text + got, (size_t)st.st_size - got, (off_t)got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    *size = got;
    return text;
}

static char *read_cache(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    flock(fd, LOCK_SH);
    char *text = read_all(fd, path, size);
    flock(fd, LOCK_UN);
    close(fd);
    return text;
}

/* The position of label in the record's ranking, or -1. */
static int32_t rank_of(json_t *ranking, const char *label)
{
    for (size_t i = 0; i < json_array_size(ranking); i++) {
        const char *c = json_string_value(json_object_get(json_array_get(ranking, i), "c"));
        if (c && strcmp(c, label) == 0)
            return (int32_t)i;
    }
    return -1;
}

/* The plan's candidate the record ranks first, if it ranks every one. */
static int32_t best_ranked(json_t *record, const plan_t *plan)
{
    json_t *ranking = json_object_get(record, "ranking");
    int32_t best = -1, best_rank = INT32_MAX;
    for (int32_t i = 0; i < plan->candidate_count; i++) {
        int32_t r = rank_of(ranking, plan->candidates[i].label);
        if (r < 0) { /* a candidate the record never timed: benchmark again */
            cdnn_log(CDNN_LOG_INFO, "winner cache: the record does not rank %s; "
                     "benchmarking again", plan->candidates[i].label);
            return -1;
        }
        if (r < best_rank) {
            best_rank = r;
            best = i;
        }
    }
    return best;
}

static int32_t choose_in(const char *text, size_t size, const plan_t *plan,
                         const char *source, tally_t *t)
{
    json_t *record = scan(text, size, plan, t);
    if (t->damaged)
        cdnn_log(CDNN_LOG_WARNING, "winner cache %s: skipped %zu damaged record(s)",
                 source, t->damaged);
    int32_t best = record ? best_ranked(record, plan) : -1;
    json_decref(record);
    return best;
}

int32_t winner_cache_choose(const char *text, size_t size, const plan_t *plan,
                            const char *source)
{
    tally_t t = {json_object(), 0, 0, 0};
    int32_t best = choose_in(text, size, plan, source, &t);
    json_decref(t.last_of);
    return best;
}

/* ---- compaction --------------------------------------------------------------- */

static int worth_compacting(const tally_t *t)
{
    return !t->incomplete && t->lines - live_records(t) > live_records(t);
}

/* Whether path still names the file fd has open: a compaction renames a
 * new file over it, and a line written to the old one would be lost. */
static int names_file(const char *path, int fd)
{
    struct stat by_path, by_fd;
    return stat(path, &by_path) == 0 && fstat(fd, &by_fd) == 0 &&
           by_path.st_dev == by_fd.st_dev && by_path.st_ino == by_fd.st_ino;
}

static int write_all(int fd, const char *bytes, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t w = write(fd, bytes + done, n - done);
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    return 0;
}

/* The live lines of text, in their order, into the new file fd. */
static int write_live(int fd, const char *text, size_t size, const tally_t *t)
{
    unsigned char *keep = calloc(t->lines, 1);
    if (!keep)
        return -1;
    const char *identity, *line;
    json_t *index;
    json_object_foreach(t->last_of, identity, index)
        keep[json_integer_value(index)] = 1;
    size_t n, at = 0;
    int ok = 1;
    for (size_t i = 0; ok && next_line(text, size, &at, &line, &n); i++)
        ok = !keep[i] || (write_all(fd, line, n) == 0 && write_all(fd, "\n", 1) == 0);
    free(keep);
    return ok && fsync(fd) == 0 ? 0 : -1;
}

/* Replace path by a file of text's live lines: written beside it, then
 * renamed over it, so that a reader sees the old file or the new one. */
static int replace_with_live(const char *path, const char *text, size_t size,
                             const tally_t *t)
{
    char temp[PATH_MAX + 32];
    snprintf(temp, sizeof temp, "%s.XXXXXX", path);
    int fd = mkstemp(temp);
    if (fd < 0)
        return -1;
    int ok = write_live(fd, text, size, t) == 0;
    ok = close(fd) == 0 && ok && rename(temp, path) == 0;
    if (!ok)
        unlink(temp);
    return ok ? 0 : -1;
}

/* Rewrite the cache with its live records only.  Under the exclusive lock
 * of the file path names, which writers hold while they append: the text
 * is read again under it, so that no line appended since the caller read
 * is lost, and writers that opened the old file find (holding the lock)
 * that path names another and reopen it. */
static void compact(const char *path)
{
    /* writable: where flock is emulated with fcntl (NFS), LOCK_EX needs it */
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return;
    size_t size = 0;
    char *text = NULL;
    tally_t t = {json_object(), 0, 0, 0};
    if (flock(fd, LOCK_EX) == 0 && names_file(path, fd) &&
        (text = read_all(fd, path, &size)) != NULL)
        scan(text, size, NULL, &t);
    /* (not worth it any more when another process compacted it first) */
    if (text && worth_compacting(&t) && replace_with_live(path, text, size, &t) != 0)
        cdnn_log(CDNN_LOG_WARNING, "winner cache %s: could not compact it (%s); "
                 "it keeps its dead records", path, strerror(errno));
    else if (text && worth_compacting(&t))
        cdnn_log(CDNN_LOG_INFO, "winner cache %s: compacted %zu records to the %zu "
                 "live ones", path, t.lines, live_records(&t));
    flock(fd, LOCK_UN);
    close(fd);
    free(text);
    json_decref(t.last_of);
}

int32_t winner_cache_lookup(const plan_t *plan)
{
    char dir[PATH_MAX], path[PATH_MAX + 16];
    size_t size = 0;
    if (!cache_dir(dir, sizeof dir))
        return -1;
    snprintf(path, sizeof path, "%s/%s", dir, CACHE_FILE);
    char *text = read_cache(path, &size);
    tally_t t = {json_object(), 0, 0, 0};
    int32_t best = text ? choose_in(text, size, plan, path, &t) : -1;
    if (text && worth_compacting(&t))
        compact(path);
    free(text);
    json_decref(t.last_of);
    return best;
}

/* ---- writing ----------------------------------------------------------------- */

static const char *clock_name(timing_clock_t clock)
{
    return clock == TIMING_CLOCK_DEVICE ? "device" : "host";
}

static char *record_json(const plan_t *plan)
{
    char key[65];
    sdk_sha256_hex(plan->content_key, key);
    json_t *ranking = json_array();
    for (int32_t i = 0; ranking && i < plan->candidate_count; i++) {
        const candidate_t *c = &plan->candidates[i];
        if (c->median_us >= 0)
            json_array_append_new(ranking, json_pack("{s:s, s:f, s:s}", "c", c->label,
                                                     "us", c->median_us, "clock",
                                                     clock_name(c->clock)));
    }
    json_t *record = json_pack("{s:i, s:s, s:s, s:s, s:s, s:o}", "v", CACHE_VERSION,
                               "key", key, "device", plan->device_key, "lib",
                               cdnn_version(), "knobs", plan->knob_key, "ranking",
                               ranking);
    char *text = record ? json_dumps(record, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(record);
    return text;
}

/* Whether the file ends inside a line: a writer that died mid-write (or
 * ran out of disk) leaves no newline, and a record appended to that line
 * would be lost with it. */
static int ends_mid_line(int fd)
{
    struct stat st;
    char last = '\n';
    return fstat(fd, &st) == 0 && st.st_size > 0 &&
           pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n';
}

/* How many times a writer reopens the file when compactions keep
 * replacing it under it: each reopen means another process finished one. */
#define REOPEN_TRIES 100

/* The cache file, open for appending under its exclusive lock: the file
 * path names once the lock is held, not one a compaction has since
 * replaced (a line appended to that one would be lost).  -1 on failure. */
static int open_locked(const char *path)
{
    for (int tries = 0; tries < REOPEN_TRIES; tries++) {
        int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0)
            return -1;
        if (flock(fd, LOCK_EX) == 0 && names_file(path, fd))
            return fd;
        close(fd); /* closing drops the lock */
    }
    errno = EAGAIN;
    return -1;
}

static int append_line(const char *path, const char *line, size_t n)
{
    int fd = open_locked(path);
    if (fd < 0)
        return -1;
    int ok = 1;
    if (ends_mid_line(fd))
        ok = write_all(fd, "\n", 1) == 0; /* end the damaged line first */
    ok = ok && write_all(fd, line, n) == 0;
    flock(fd, LOCK_UN);
    return close(fd) == 0 && ok ? 0 : -1;
}

void winner_cache_record(const plan_t *plan)
{
    char dir[PATH_MAX] = "", path[PATH_MAX + 16], sum[CHECKSUM_DIGITS + 1];
    char *json = record_json(plan);
    char *line = json ? malloc(strlen(json) + CHECKSUM_DIGITS + 3) : NULL;
    int ok = line && cache_dir(dir, sizeof dir) && make_dirs(dir) == 0;
    if (ok) {
        snprintf(path, sizeof path, "%s/%s", dir, CACHE_FILE);
        checksum(json, strlen(json), sum);
        int n = sprintf(line, "%s %s\n", sum, json);
        ok = append_line(path, line, (size_t)n) == 0;
    }
    if (!ok)
        cdnn_log(CDNN_LOG_WARNING, "winner cache: could not record the choice for "
                 "%s (%s); the next build benchmarks again",
                 dir[0] ? dir : "(no cache directory: set CDNN_CACHE_DIR or HOME)",
                 strerror(errno));
    free(json);
    free(line);
}
