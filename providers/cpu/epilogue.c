#include "epilogue.h"

#include "cpu_engine.h"

/* The GEMM's result goes to node 0's own output: a program that only
 * stores the entry, converting and striding as the output needs. */
static cdnn_status_t compile_store(pw_program_t *p, const cdnn_graph_view_t *g,
                                   int32_t threads)
{
    int32_t out = g->nodes[0].outputs[0];
    const cdnn_tensor_view_t *y = &g->tensors[out];
    if (!pw_type_storable(y->type) || y->type == CDNN_DATA_TYPE_BOOL)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "output '%s' is %s; this engine writes f32, f16 and "
                        "bf16",
                        y->name, cdnn_data_type_name(y->type));
    int32_t entry;
    pw_init(p, y->rank, y->dims, threads);
    cdnn_status_t st = pw_add_entry(p, &entry);
    if (st == CDNN_STATUS_SUCCESS)
        st = pw_add_output(p, entry, out, y->type, y->strides);
    return st != CDNN_STATUS_SUCCESS ? st : pw_finish(p);
}

static cdnn_status_t compile_chain(pw_program_t *p, const cdnn_graph_view_t *g,
                                   int32_t threads)
{
    const cdnn_node_view_t *first = &g->nodes[0];
    const cdnn_tensor_view_t *c = &g->tensors[first->outputs[0]];
    if (!c->is_virtual)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "'%s' feeds pointwise nodes but is not virtual; mark "
                        "it virtual to fuse them, or run the nodes as "
                        "separate graphs",
                        c->name);
    return pw_compile_graph(p, g, 1, first->outputs[0], threads);
}

static int32_t output_tensor(const pw_program_t *p)
{
    for (int32_t i = 0; i < p->io_count; i++)
        if (p->io[i].is_output)
            return p->io[i].tensor;
    return -1;
}

cdnn_status_t cpu_epilogue_compile(cpu_epilogue_t *e,
                                   const cdnn_graph_view_t *g,
                                   int32_t threads)
{
    int chain = g->node_count > 1;
    cdnn_status_t st = chain ? compile_chain(&e->program, g, threads)
                             : compile_store(&e->program, g, threads);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    e->in_place = pw_output_dense_f32(&e->program);
    e->out_tensor = output_tensor(&e->program);
    e->skip = e->in_place && !chain;
    return CDNN_STATUS_SUCCESS;
}

float *cpu_epilogue_target(const cpu_epilogue_t *e, void *const *tensors,
                           float *scratch, int64_t e0)
{
    return e->in_place ? (float *)tensors[e->out_tensor] + e0 : scratch;
}

void cpu_epilogue_run(const cpu_epilogue_t *e, void *const *tensors,
                      const float *c, int64_t e0, int64_t e1)
{
    if (e->skip)
        return;
    pw_binding_t b = {.tensors = tensors, .entry = c, .e0 = e0};
    pw_run(&e->program, &b, e1);
}
