/*
 * fuzz_common.h -- what the fuzz targets share: failing loudly, and the
 * round-trip oracles that turn "did not crash" into "did the right thing".
 *
 * A loader that accepts bytes must hand back something that saves, loads
 * again and saves to the same bytes (docs/CONTRACT.md rules 1 and 9), and whose
 * JSON form reads back to the same graph.  A violation aborts, which
 * libFuzzer reports as a finding with the input that caused it.
 */
#ifndef CDNN_FUZZ_COMMON_H
#define CDNN_FUZZ_COMMON_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn/cdnn.h>

__attribute__((noreturn, format(printf, 1, 2)))
static void fuzz_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz oracle: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (cdnn_last_error: %s)\n", cdnn_last_error());
    va_end(ap);
    abort();
}

/* A failed call must not leave an object behind. */
static inline void fuzz_expect_null(const void *p, const char *what)
{
    if (p)
        fuzz_die("%s failed but returned an object", what);
}

/*
 * Save in one form, checking the size protocol on the way: a NULL buffer
 * gives the size, a buffer one byte short fails with SIZE_INSUFFICIENT and
 * is left untouched.  NULL when the save fails (the status in *st).
 */
static inline uint8_t *fuzz_save(cdnn_graph_t *g, cdnn_save_form_t form,
                                 size_t *n, cdnn_status_t *st)
{
    size_t size = 0, again = 0;
    *st = cdnn_graph_save(g, form, NULL, 0, &size);
    if (*st != CDNN_STATUS_SUCCESS)
        return NULL;
    uint8_t *buf = malloc(size + 1);
    if (!buf)
        fuzz_die("out of memory in the harness");
    memset(buf, 0xa5, size + 1);
    if (size) {
        cdnn_status_t short_st = cdnn_graph_save(g, form, buf, size - 1, &again);
        if (short_st != CDNN_STATUS_SIZE_INSUFFICIENT || again != size)
            fuzz_die("save form %d into %zu of %zu bytes: status %d, size %zu",
                     (int)form, size - 1, size, (int)short_st, again);
    }
    for (size_t i = 0; i <= size; i++)
        if (buf[i] != 0xa5)
            fuzz_die("a short buffer was written to (byte %zu)", i);
    *st = cdnn_graph_save(g, form, buf, size, &again);
    if (*st != CDNN_STATUS_SUCCESS || again != size)
        fuzz_die("save form %d: size %zu, then status %d and size %zu", (int)form,
                 size, (int)*st, again);
    *n = size;
    return buf;
}


static inline void fuzz_same(const uint8_t *a, size_t na, const uint8_t *b,
                             size_t nb, const char *what)
{
    if (na != nb || memcmp(a, b, na) != 0)
        fuzz_die("%s: %zu bytes, then %zu bytes that differ", what, na, nb);
}

/* The graph's JSON form reads back to a graph with the same JSON form and
 * the same content key.  (Not the same bytes: JSON writes every NaN as
 * "nan", while the binary form keeps a NaN's sign and payload.) */
static inline void fuzz_json_roundtrip(cdnn_graph_t *g)
{
    char *json = NULL, *again = NULL, k1[65], k2[65];
    cdnn_graph_t *back = NULL;
    /* Binary names may be any bytes; JSON holds only UTF-8, and says so
     * with BAD_PARAM. */
    cdnn_status_t st = cdnn_graph_to_json(g, &json);
    if (st == CDNN_STATUS_BAD_PARAM && !json)
        return;
    if (st != CDNN_STATUS_SUCCESS)
        fuzz_die("a loaded graph has no JSON form (status %d)", (int)st);
    if (cdnn_graph_from_json(&back, json, strlen(json)) != CDNN_STATUS_SUCCESS)
        fuzz_die("the JSON form of a loaded graph does not read back:\n%s", json);
    if (cdnn_graph_to_json(back, &again) != CDNN_STATUS_SUCCESS ||
        strcmp(json, again) != 0)
        fuzz_die("graph -> JSON -> graph -> JSON differs:\n%s\n---\n%s", json,
                 again ? again : "(none)");
    st = cdnn_graph_content_key(g, k1);
    if (st == CDNN_STATUS_SUCCESS &&
        (cdnn_graph_content_key(back, k2) != CDNN_STATUS_SUCCESS || strcmp(k1, k2)))
        fuzz_die("a graph and its JSON read-back have different content keys");
    cdnn_graph_destroy(back);
    free(again);
    free(json);
}

/* Validation agrees between a graph and its reloaded copy. */
static inline void fuzz_validate_pair(cdnn_graph_t *g, cdnn_graph_t *copy)
{
    char k1[65], k2[65];
    cdnn_status_t a = cdnn_graph_validate(g), b = cdnn_graph_validate(copy);
    if (a != b)
        fuzz_die("a graph validates with status %d, its reloaded copy %d", (int)a,
                 (int)b);
    if (a != CDNN_STATUS_SUCCESS)
        return;
    if (cdnn_graph_content_key(g, k1) != CDNN_STATUS_SUCCESS ||
        cdnn_graph_content_key(copy, k2) != CDNN_STATUS_SUCCESS ||
        strcmp(k1, k2) != 0)
        fuzz_die("a valid graph and its reloaded copy have different content keys");
}

/*
 * The oracle for every loaded graph: it saves, the bytes load again and
 * re-save identically, validation (and the content key) agree, saving
 * after validation gives the same bytes (saving writes declarations), and
 * the JSON form reads back to the same bytes.
 */
static inline void fuzz_graph_roundtrip(cdnn_graph_t *g)
{
    cdnn_status_t st;
    size_t n = 0, m = 0;
    cdnn_graph_t *copy = NULL;
    uint8_t *saved = fuzz_save(g, CDNN_SAVE_GRAPH, &n, &st);
    if (!saved)
        fuzz_die("a loaded graph does not save (status %d)", (int)st);
    if (cdnn_graph_load(&copy, NULL, saved, n) != CDNN_STATUS_SUCCESS)
        fuzz_die("a saved graph does not load again");
    uint8_t *again = fuzz_save(copy, CDNN_SAVE_GRAPH, &m, &st);
    if (!again)
        fuzz_die("a reloaded graph does not save (status %d)", (int)st);
    fuzz_same(saved, n, again, m, "save -> load -> save");
    free(again);
    fuzz_validate_pair(g, copy);
    again = fuzz_save(g, CDNN_SAVE_GRAPH, &m, &st);
    if (!again)
        fuzz_die("a graph does not save after validation (status %d)", (int)st);
    fuzz_same(saved, n, again, m, "save before and after validation");
    free(again);
    fuzz_json_roundtrip(g);
    cdnn_graph_destroy(copy);
    free(saved);
}

#endif
