/*
 * artifact.c -- what the commands that read and write saved graphs and
 * plans share: reading a file and telling what it holds, loading its graph,
 * save forms by name, and saving to a file.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "io.h"

/* A graph's JSON form is an object: '{' after white space and perhaps a
 * UTF-8 byte order mark, as the library reads it.  No binary artifact
 * starts so (they start with a FlatBuffers root offset). */
static int looks_like_json(const unsigned char *p, size_t n)
{
    size_t i = n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
    while (i < n && isspace(p[i]))
        i++;
    return i < n && p[i] == '{';
}

int cli_artifact_read(const char *cmd, const char *path, cli_artifact_t *a)
{
    memset(a, 0, sizeof *a);
    a->path = path;
    int rc = cli_read_file(cmd, path, &a->bytes, &a->size);
    if (rc != EXIT_OK)
        return rc;
    if (looks_like_json(a->bytes, a->size)) {
        a->is_json = 1;
        a->contents = CDNN_BLOB_GRAPH;
        return EXIT_OK;
    }
    cdnn_status_t st = cdnn_blob_contents(a->bytes, a->size, &a->contents);
    if (st != CDNN_STATUS_SUCCESS) {
        cli_artifact_free(a);
        return cli_report(cmd, st);
    }
    return EXIT_OK;
}

void cli_artifact_free(cli_artifact_t *a)
{
    free(a->bytes);
    a->bytes = NULL;
    a->size = 0;
}

int cli_artifact_graph(const char *cmd, const cli_artifact_t *a, cdnn_handle_t *h,
                       cdnn_graph_t **g)
{
    cdnn_status_t st = a->is_json
                           ? cdnn_graph_from_json(g, (const char *)a->bytes, a->size)
                           : cdnn_graph_load(g, h, a->bytes, a->size);
    return st == CDNN_STATUS_SUCCESS ? EXIT_OK : cli_report(cmd, st);
}

static const struct {
    const char *name;
    cdnn_save_form_t form;
} forms[] = {
    {"graph", CDNN_SAVE_GRAPH},
    {"plan", CDNN_SAVE_PLAN},
    {"graph+plan", CDNN_SAVE_GRAPH_AND_PLAN},
};

int cli_parse_form(const char *name, cdnn_save_form_t *form)
{
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
        if (strcmp(name, forms[i].name) == 0) {
            *form = forms[i].form;
            return 0;
        }
    return -1;
}

const char *cli_form_name(cdnn_save_form_t form)
{
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
        if (forms[i].form == form)
            return forms[i].name;
    return "invalid";
}

cdnn_save_form_t cli_form_of(uint32_t contents)
{
    if (contents == (CDNN_BLOB_GRAPH | CDNN_BLOB_PLAN))
        return CDNN_SAVE_GRAPH_AND_PLAN;
    return contents == CDNN_BLOB_PLAN ? CDNN_SAVE_PLAN : CDNN_SAVE_GRAPH;
}

int cli_open_handle(const char *cmd, const char *device, cdnn_handle_t **h)
{
    cdnn_status_t st = cdnn_handle_create(h, device);
    return st == CDNN_STATUS_SUCCESS ? EXIT_OK : cli_report(cmd, st);
}

int cli_save_bytes(const char *cmd, cdnn_graph_t *g, cdnn_save_form_t form,
                   unsigned char **bytes, size_t *size)
{
    size_t n = 0;
    unsigned char *buf = NULL;
    cdnn_status_t st = cdnn_graph_save(g, form, NULL, 0, &n);
    if (st == CDNN_STATUS_SUCCESS && !(buf = malloc(n ? n : 1)))
        return cli_fail(cmd, CDNN_STATUS_ALLOC_FAILED, "out of memory saving %zu bytes", n);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_save(g, form, buf, n, &n);
    if (st != CDNN_STATUS_SUCCESS) {
        free(buf);
        return cli_report(cmd, st);
    }
    *bytes = buf;
    *size = n;
    return EXIT_OK;
}

int cli_save_file(const char *cmd, cdnn_graph_t *g, cdnn_save_form_t form,
                  const char *path, size_t *size)
{
    unsigned char *buf = NULL;
    int rc = cli_save_bytes(cmd, g, form, &buf, size);
    if (rc == EXIT_OK)
        rc = cli_write_output(cmd, path, buf, *size);
    free(buf);
    return rc;
}
