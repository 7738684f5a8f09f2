/*
 * ranking.c -- how a benchmarking plan ranked its candidates, for
 * `cdnn build --benchmark` and `cdnn demo`.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "io.h"

static void print_candidate(FILE *report, const cdnn_candidate_result_t *r, int32_t place,
                            int chosen)
{
    fprintf(report, "  %2d. ", place + 1);
    cli_text_string(report, r->name);
    if (r->median_us >= 0)
        fprintf(report, "  %.1f us (%d runs)%s\n", r->median_us, r->runs,
                chosen ? "  <- chosen" : "");
    else
        fprintf(report, "  not timed (it failed; the log says why)\n");
}

int cli_print_ranking(const char *cmd, const cdnn_graph_t *g, FILE *report, int32_t limit)
{
    int32_t count = 0, chosen = -1;
    cdnn_status_t st = cdnn_graph_candidates(g, NULL, 0, &count, &chosen);
    cdnn_candidate_result_t *r = st == CDNN_STATUS_SUCCESS && count > 0
                                     ? calloc((size_t)count, sizeof *r) : NULL;
    if (!r)
        return st != CDNN_STATUS_SUCCESS ? cli_report(cmd, st)
                                         : cli_fail(cmd, CDNN_STATUS_INTERNAL_ERROR,
                                                    "the plan has no candidates");
    st = cdnn_graph_candidates(g, r, count, &count, &chosen);
    if (st == CDNN_STATUS_SUCCESS && count == 1 && r[0].median_us < 0) {
        fprintf(report, "benchmark: ");
        cli_text_string(report, r[0].name);
        fprintf(report, " chosen without timing (the only candidate, or the winner "
                "cache's record ranks every candidate)\n");
    } else if (st == CDNN_STATUS_SUCCESS) {
        int32_t shown = limit > 0 && limit < count ? limit : count;
        fprintf(report, "ranking (%d candidates, median of timed runs):\n", count);
        for (int32_t i = 0; i < shown; i++)
            print_candidate(report, &r[i], i, i == chosen);
        if (shown < count)
            fprintf(report, "  ... and %d slower\n", count - shown);
    }
    free(r);
    return st == CDNN_STATUS_SUCCESS ? EXIT_OK : cli_report(cmd, st);
}
