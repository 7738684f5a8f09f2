/*
 * build_with_knobs.c -- build a graph's JSON into a saved plan with an
 * engine pinned and knobs set, for base artifacts the `cdnn` command cannot
 * make (it sets no engine knobs): plans of cpu:* engines built with
 * cpu.threads.count, which forge.py then edits
 * (tests/security/test_forgeries_ops.sh).  A benchmarking build cannot be
 * saved before it is executed: `cdnn build --benchmark` makes those.
 *
 * usage: build_with_knobs GRAPH.json ENGINE|- OUT [NAME=VALUE ...]
 *
 * ENGINE "-" pins nothing (the usual order chooses).
 * Exit status 0 on success, 1 with a message otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn/cdnn.h>

static char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) &&
        fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (f)
        fclose(f);
    *size = n < 0 ? 0 : (size_t)n;
    return buf;
}

/* Each NAME=VALUE argument as a knob. */
static cdnn_status_t set_knobs(cdnn_build_options_t *opts, int count, char **args)
{
    for (int i = 0; i < count; i++) {
        char *eq = strchr(args[i], '=');
        if (!eq) {
            fprintf(stderr, "build_with_knobs: %s is not NAME=VALUE\n", args[i]);
            return CDNN_STATUS_BAD_PARAM;
        }
        *eq = 0;
        cdnn_status_t st = cdnn_build_options_set_knob(opts, args[i],
                                                       strtoll(eq + 1, NULL, 0));
        if (st != CDNN_STATUS_SUCCESS)
            return st;
    }
    return CDNN_STATUS_SUCCESS;
}

/* Save the built plan to path. */
static cdnn_status_t save_plan(cdnn_graph_t *g, const char *path)
{
    size_t size = 0;
    cdnn_status_t st = cdnn_graph_save(g, CDNN_SAVE_PLAN, NULL, 0, &size);
    void *buf = st == CDNN_STATUS_SUCCESS ? malloc(size) : NULL;
    if (st == CDNN_STATUS_SUCCESS && !buf)
        st = CDNN_STATUS_ALLOC_FAILED;
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_save(g, CDNN_SAVE_PLAN, buf, size, &size);
    FILE *f = st == CDNN_STATUS_SUCCESS ? fopen(path, "wb") : NULL;
    if (st == CDNN_STATUS_SUCCESS && (!f || fwrite(buf, 1, size, f) != size)) {
        fprintf(stderr, "build_with_knobs: cannot write %s\n", path);
        st = CDNN_STATUS_BAD_PARAM;
    }
    if (f && fclose(f) != 0)
        st = CDNN_STATUS_BAD_PARAM;
    free(buf);
    return st;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: build_with_knobs GRAPH.json ENGINE|- OUT [NAME=VALUE ...]\n");
        return 2;
    }
    size_t size = 0;
    char *json = read_all(argv[1], &size);
    if (!json) {
        fprintf(stderr, "build_with_knobs: cannot read %s\n", argv[1]);
        return 1;
    }
    cdnn_handle_t *h = NULL;
    cdnn_graph_t *g = NULL;
    cdnn_build_options_t *opts = NULL;
    cdnn_status_t st = cdnn_handle_create(&h, "cpu");
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_from_json(&g, json, size);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_build_options_create(&opts);
    if (st == CDNN_STATUS_SUCCESS && strcmp(argv[2], "-") != 0)
        st = cdnn_build_options_pin_engine(opts, cdnn_engine_id_from_name(argv[2]));
    if (st == CDNN_STATUS_SUCCESS)
        st = set_knobs(opts, argc - 4, argv + 4);
    if (st == CDNN_STATUS_SUCCESS)
        st = cdnn_graph_build(g, h, opts);
    if (st == CDNN_STATUS_SUCCESS)
        st = save_plan(g, argv[3]);
    if (st != CDNN_STATUS_SUCCESS)
        fprintf(stderr, "build_with_knobs %s: %s: %s\n", argv[1], cdnn_status_string(st),
                cdnn_last_error());
    cdnn_build_options_destroy(opts);
    cdnn_graph_destroy(g);
    cdnn_handle_destroy(h);
    free(json);
    return st == CDNN_STATUS_SUCCESS ? 0 : 1;
}
