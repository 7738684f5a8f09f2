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

#include "core/log.h"
#include "core/sha256.h"

#define CACHE_FILE "winners.v1"
#define CACHE_VERSION 2        /* what records are written as */
#define CACHE_OLDEST_VERSION 1 /* read too: its times are the host's */
#define CACHE_MAX_BYTES (64u << 20) /* a larger file is not read */
#define CHECKSUM_DIGITS 16

int winner_cache_enabled(void)
{
    const char *off = getenv("CDNN_DISABLE_CACHE");
    return !(off && strcmp(off, "1") == 0);
}

/* The cache directory, or 0 if there is none to use. */
static int cache_dir(char *out, size_t cap)
{
    const char *dir = getenv("CDNN_CACHE_DIR");
    const char *home = getenv("HOME");
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

static void hex_key(const uint8_t key[32], char out[65])
{
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", key[i]);
}

static void checksum(const char *text, size_t n, char out[CHECKSUM_DIGITS + 1])
{
    uint8_t digest[32] = {0};
    sha256_t h;
    sha256_begin(&h);
    sha256_update(&h, text, n);
    sha256_end(&h, digest);
    for (int i = 0; i < CHECKSUM_DIGITS / 2; i++)
        snprintf(out + 2 * i, 3, "%02x", digest[i]);
}

/* ---- reading ----------------------------------------------------------------- */

/* The record on one line, or NULL (and *damaged set) if it does not hold. */
static json_t *parse_record(const char *line, size_t n, int *damaged)
{
    char sum[CHECKSUM_DIGITS + 1];
    *damaged = 1;
    if (n < CHECKSUM_DIGITS + 2 || line[CHECKSUM_DIGITS] != ' ')
        return NULL;
    const char *json = line + CHECKSUM_DIGITS + 1;
    size_t json_size = n - CHECKSUM_DIGITS - 1;
    checksum(json, json_size, sum);
    if (memcmp(sum, line, CHECKSUM_DIGITS) != 0)
        return NULL;
    json_t *record = json_loadb(json, json_size, JSON_REJECT_DUPLICATES, NULL);
    json_int_t version = json_integer_value(json_object_get(record, "v"));
    if (!record || !json_is_object(record) || version < CACHE_OLDEST_VERSION ||
        version > CACHE_VERSION || !json_is_array(json_object_get(record, "ranking"))) {
        json_decref(record);
        return NULL;
    }
    *damaged = 0;
    return record;
}

static int record_matches(json_t *record, const char *key, const plan_t *plan)
{
    const char *k = json_string_value(json_object_get(record, "key"));
    const char *d = json_string_value(json_object_get(record, "device"));
    const char *lib = json_string_value(json_object_get(record, "lib"));
    /* a record without "knobs" was made with none */
    json_t *knobs_value = json_object_get(record, "knobs");
    const char *knobs = knobs_value ? json_string_value(knobs_value) : "";
    /* v1 timed CUDA engines with the host clock without synchronizing:
     * its ranking may be the enqueue's rather than the work's */
    int stale = json_integer_value(json_object_get(record, "v")) == 1 && d &&
                strncmp(d, "cuda/", 5) == 0;
    return k && d && lib && knobs && !stale && strcmp(k, key) == 0 &&
           strcmp(d, plan->device_key) == 0 && strcmp(lib, cdnn_version()) == 0 &&
           strcmp(knobs, plan->knob_key) == 0;
}

/* The last record for this plan's graph, device and library, or NULL. */
static json_t *find_record(const char *text, size_t size, const plan_t *plan,
                           const char *path)
{
    char key[65];
    hex_key(plan->content_key, key);
    json_t *found = NULL;
    size_t damaged_lines = 0;
    for (size_t at = 0; at < size;) {
        const char *end = memchr(text + at, '\n', size - at);
        size_t n = end ? (size_t)(end - (text + at)) : size - at;
        int damaged = 0;
        json_t *record = parse_record(text + at, n, &damaged);
        damaged_lines += (size_t)damaged;
        if (record && record_matches(record, key, plan)) {
            json_decref(found);
            found = record;
        } else {
            json_decref(record);
        }
        at += n + 1;
    }
    if (damaged_lines)
        cdnn_log(CDNN_LOG_WARNING, "winner cache %s: skipped %zu damaged record(s)",
                 path, damaged_lines);
    return found;
}

static char *read_cache(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *text = NULL;
    flock(fd, LOCK_SH);
    if (fstat(fd, &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size <= CACHE_MAX_BYTES &&
        (text = malloc((size_t)st.st_size)) != NULL) {
        ssize_t got = read(fd, text, (size_t)st.st_size);
        *size = got > 0 ? (size_t)got : 0;
    } else if (st.st_size > (off_t)CACHE_MAX_BYTES) {
        cdnn_log(CDNN_LOG_WARNING, "winner cache %s is over %u MiB and is not read; "
                 "remove it", path, CACHE_MAX_BYTES >> 20);
    }
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

int32_t winner_cache_choose(const char *text, size_t size, const plan_t *plan,
                            const char *source)
{
    json_t *record = find_record(text, size, plan, source);
    if (!record)
        return -1;
    json_t *ranking = json_object_get(record, "ranking");
    int32_t best = -1, best_rank = INT32_MAX;
    for (int32_t i = 0; i < plan->candidate_count; i++) {
        int32_t r = rank_of(ranking, plan->candidates[i].label);
        if (r < 0) { /* a candidate the record never timed: benchmark again */
            best = -1;
            cdnn_log(CDNN_LOG_INFO, "winner cache: the record does not rank %s; "
                     "benchmarking again", plan->candidates[i].label);
            break;
        }
        if (r < best_rank) {
            best_rank = r;
            best = i;
        }
    }
    json_decref(record);
    return best;
}

int32_t winner_cache_lookup(const plan_t *plan)
{
    char dir[PATH_MAX], path[PATH_MAX + 16];
    size_t size = 0;
    if (!cache_dir(dir, sizeof dir))
        return -1;
    snprintf(path, sizeof path, "%s/%s", dir, CACHE_FILE);
    char *text = read_cache(path, &size);
    int32_t best = text ? winner_cache_choose(text, size, plan, path) : -1;
    free(text);
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
    hex_key(plan->content_key, key);
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

static int append_line(const char *path, const char *line, size_t n)
{
    int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int ok = flock(fd, LOCK_EX) == 0;
    if (ok && ends_mid_line(fd))
        ok = write(fd, "\n", 1) == 1; /* end the damaged line first */
    for (size_t done = 0; ok && done < n;) {
        ssize_t w = write(fd, line + done, n - done);
        ok = w > 0;
        done += ok ? (size_t)w : 0;
    }
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
