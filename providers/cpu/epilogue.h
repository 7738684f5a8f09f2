/*
 * epilogue.h -- what the GEMM engines do with a GEMM's result: store it,
 * or apply the pointwise chain that follows it in the graph, a range of
 * elements at a time while the range is still in cache.
 *
 * The GEMM computes node 0's output.  Either node 0 is the whole graph and
 * the result is stored into its output (converted and strided as needed),
 * or node 0's output is virtual and feeds pointwise nodes, compiled into
 * one pw_program whose entry is the GEMM result.  The GEMM writes a range
 * of its result densely, in row-major order of node 0's output, either to
 * scratch or, when the final output is packed f32 of the same shape,
 * straight into the final output, which the epilogue then rewrites in
 * place.
 */
#ifndef CDNN_CPU_EPILOGUE_H
#define CDNN_CPU_EPILOGUE_H

#include "pw_program.h"

typedef struct cpu_epilogue {
    pw_program_t program;
    int32_t in_place;   /* the GEMM writes into the output tensor */
    int32_t out_tensor; /* that tensor, when in_place */
    int32_t skip;       /* in place with nothing to apply: done */
} cpu_epilogue_t;

/* Compile what follows the GEMM of graph->nodes[0]; NOT_SUPPORTED with a
 * reason when the rest of the graph is not a pointwise chain we run. */
cdnn_status_t cpu_epilogue_compile(cpu_epilogue_t *e,
                                   const cdnn_graph_view_t *g,
                                   int32_t threads);

/* Where the GEMM writes its result from element e0 on: the output tensor
 * when in place, else scratch (which then holds element e0 first). */
float *cpu_epilogue_target(const cpu_epilogue_t *e, void *const *tensors,
                           float *scratch, int64_t e0);

/* Finish elements [e0, e1) of the result, which the GEMM wrote at c. */
void cpu_epilogue_run(const cpu_epilogue_t *e, void *const *tensors,
                      const float *c, int64_t e0, int64_t e1);

#endif
