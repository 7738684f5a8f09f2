/*
 * plan_check.h -- what a plan's record must agree with.
 *
 * A plan records the tensors its caller must pass (uid, span, type,
 * alignment, role) and the content key of its graph.  At build they are
 * derived from the graph; at load they are bytes from a file, and a digest
 * proves only that those bytes are intact, not that they agree with the
 * payload that decides what runs.  So a loaded plan's record is derived
 * again from the graph its restored context runs and compared, field by
 * field, before anything executes.
 */
#ifndef CDNN_ENGINE_PLAN_CHECK_H
#define CDNN_ENGINE_PLAN_CHECK_H

#include <cdnn/provider.h>

#include "format/plan_format.h"

/**
 * The tensors a plan of graph g takes pointers for (not virtual, not
 * scalar), in declaration order: *tensors is malloc'd.
 */
cdnn_status_t plan_tensors_of_graph(const cdnn_graph_view_t *g, plan_tensor_t **tensors,
                                    uint32_t *count);

/**
 * Check a decoded plan record against the graph its restored context runs:
 * its tensor table and its content key must be exactly what g implies.
 * CORRUPT_DATA naming the first disagreement otherwise.
 */
cdnn_status_t plan_check_against_graph(const plan_record_t *r,
                                       const cdnn_graph_view_t *g);

#endif
