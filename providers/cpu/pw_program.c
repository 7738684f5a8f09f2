#include "pw_program.h"

#include <string.h>

#include <cdnn_sdk/numeric.h>

#include "cpu_engine.h"
#include "fast_util.h"

/* Elements one thread should get at least: below this, starting a thread
 * costs more than it saves. */
#define PW_GRAIN 65536

/* ------------------------------------------------------------------------
 * Building
 * ------------------------------------------------------------------------ */

void pw_init(pw_program_t *p, int32_t rank, const int64_t *dims,
             int32_t threads)
{
    memset(p, 0, sizeof *p);
    p->rank = rank;
    p->total = 1;
    for (int32_t d = 0; d < rank; d++) {
        p->dims[d] = dims[d];
        p->total *= dims[d];
    }
    p->threads = threads > 0 ? threads : 1;
}

static cdnn_status_t new_value(pw_program_t *p, pw_value_kind_t kind,
                               int32_t index, int32_t *value)
{
    if (p->value_count >= PW_MAX_VALUES)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "the pointwise work has more than %d values",
                        PW_MAX_VALUES);
    pw_value_t *v = &p->values[p->value_count];
    *v = (pw_value_t){.kind = kind, .index = index, .slot = -1,
                      .last_use = -1};
    *value = p->value_count++;
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t new_io(pw_program_t *p, int32_t tensor,
                            cdnn_data_type_t type, const int64_t *strides,
                            int32_t *io)
{
    if (p->io_count >= PW_MAX_IO)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "the pointwise work reads and writes more than %d "
                        "tensors",
                        PW_MAX_IO);
    pw_io_t *x = &p->io[p->io_count];
    memset(x, 0, sizeof *x);
    x->tensor = tensor;
    x->type = type;
    x->value = -1;
    memcpy(x->strides, strides, sizeof x->strides[0] * (size_t)p->rank);
    *io = p->io_count++;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t pw_add_input(pw_program_t *p, int32_t tensor,
                           cdnn_data_type_t type, const int64_t *strides,
                           int32_t *value)
{
    int32_t io = -1;
    cdnn_status_t st = new_io(p, tensor, type, strides, &io);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    return new_value(p, PW_VALUE_INPUT, io, value);
}

cdnn_status_t pw_add_entry(pw_program_t *p, int32_t *value)
{
    return new_value(p, PW_VALUE_ENTRY, -1, value);
}

cdnn_status_t pw_add_const(pw_program_t *p, float constant, int32_t *value)
{
    cdnn_status_t st = new_value(p, PW_VALUE_CONST, -1, value);
    if (st == CDNN_STATUS_SUCCESS)
        p->values[*value].constant = constant;
    return st;
}

cdnn_status_t pw_add_op(pw_program_t *p, const cdnn_pointwise_attr_t *attr,
                        const int32_t in[3], int32_t to_bool, int32_t *value)
{
    if (p->op_count >= PW_MAX_OPS)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                        "the pointwise work has more than %d nodes",
                        PW_MAX_OPS);
    cdnn_status_t st = new_value(p, PW_VALUE_OP, p->op_count, value);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    pw_op_t *op = &p->ops[p->op_count++];
    pw_fn_init(&op->fn, attr);
    memcpy(op->in, in, sizeof op->in);
    op->out = *value;
    op->to_bool = to_bool;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t pw_add_output(pw_program_t *p, int32_t value, int32_t tensor,
                            cdnn_data_type_t type, const int64_t *strides)
{
    int32_t io = -1;
    cdnn_status_t st = new_io(p, tensor, type, strides, &io);
    if (st == CDNN_STATUS_SUCCESS) {
        p->io[io].value = value;
        p->io[io].is_output = 1;
    }
    return st;
}

/* ------------------------------------------------------------------------
 * Finishing: merge dims, order instructions, assign block buffers
 * ------------------------------------------------------------------------ */

/* Dims d and d + 1 merge when every io steps through them as one dim. */
static int dims_merge(const pw_program_t *p, int32_t d)
{
    for (int32_t i = 0; i < p->io_count; i++)
        if (p->io[i].strides[d] != p->io[i].strides[d + 1] * p->dims[d + 1])
            return 0;
    return 1;
}

/* Fewer, longer dims mean longer rows and fewer row starts to compute. */
static void merge_dims(pw_program_t *p)
{
    int32_t out = 0;
    for (int32_t d = 0; d < p->rank; d++) {
        if (p->dims[d] == 1)
            continue;
        p->dims[out] = p->dims[d];
        for (int32_t i = 0; i < p->io_count; i++)
            p->io[i].strides[out] = p->io[i].strides[d];
        if (out > 0 && dims_merge(p, out - 1)) {
            p->dims[out - 1] *= p->dims[out];
            for (int32_t i = 0; i < p->io_count; i++)
                p->io[i].strides[out - 1] = p->io[i].strides[out];
        } else {
            out++;
        }
    }
    if (out == 0) { /* a single element */
        p->dims[0] = 1;
        for (int32_t i = 0; i < p->io_count; i++)
            p->io[i].strides[0] = 0;
        out = 1;
    }
    p->rank = out;
}

static void emit(pw_program_t *p, pw_instr_kind_t kind, int32_t arg)
{
    p->instr[p->instr_count++] = (pw_instr_t){kind, arg};
}

/* Load a value that is not computed, right before its first use. */
static void emit_load(pw_program_t *p, int32_t value, uint8_t *loaded)
{
    if (p->values[value].kind == PW_VALUE_OP || loaded[value])
        return;
    loaded[value] = 1;
    emit(p, PW_LOAD, value);
}

/* Stores come last, so that an output written in place over the entry
 * (the GEMM's own memory) is not overwritten while ops still read it. */
static void order_instructions(pw_program_t *p)
{
    uint8_t loaded[PW_MAX_VALUES] = {0};
    p->instr_count = 0;
    for (int32_t o = 0; o < p->op_count; o++) {
        for (int32_t k = 0; k < 3; k++)
            if (p->ops[o].in[k] >= 0)
                emit_load(p, p->ops[o].in[k], loaded);
        emit(p, PW_OP, o);
    }
    for (int32_t i = 0; i < p->io_count; i++)
        if (p->io[i].is_output)
            emit_load(p, p->io[i].value, loaded);
    for (int32_t i = 0; i < p->io_count; i++)
        if (p->io[i].is_output)
            emit(p, PW_STORE, i);
}

static void note_uses(pw_program_t *p)
{
    for (int32_t n = 0; n < p->instr_count; n++) {
        const pw_instr_t *in = &p->instr[n];
        if (in->kind == PW_OP) {
            for (int32_t k = 0; k < 3; k++)
                if (p->ops[in->arg].in[k] >= 0)
                    p->values[p->ops[in->arg].in[k]].last_use = n;
        } else if (in->kind == PW_STORE) {
            p->values[p->io[in->arg].value].last_use = n;
        }
    }
}

/* An input read in place needs no buffer; every other value does. */
static int needs_slot(const pw_program_t *p, const pw_value_t *v)
{
    if (v->kind == PW_VALUE_ENTRY)
        return 0;
    return v->kind != PW_VALUE_INPUT || !p->io[v->index].direct;
}

typedef struct slot_pool {
    int32_t used[PW_MAX_SLOTS];
} slot_pool_t;

static cdnn_status_t take_slot(pw_program_t *p, slot_pool_t *pool,
                               pw_value_t *v)
{
    for (int32_t s = 0; s < PW_MAX_SLOTS; s++) {
        if (!pool->used[s]) {
            pool->used[s] = 1;
            v->slot = s;
            if (s + 1 > p->slot_count)
                p->slot_count = s + 1;
            return CDNN_STATUS_SUCCESS;
        }
    }
    return sdk_fail(CDNN_STATUS_NOT_SUPPORTED,
                    "the pointwise work keeps more than %d values alive at "
                    "once",
                    PW_MAX_SLOTS);
}

/* Free the buffer of a value whose last reader is instruction n. */
static void release_if_done(slot_pool_t *pool, const pw_value_t *v, int32_t n)
{
    if (v->slot >= 0 && v->last_use <= n)
        pool->used[v->slot] = 0;
}

/* An op's output is placed before its inputs are released, so that it
 * never shares a buffer with one (pw_apply_block needs that). */
static cdnn_status_t place_op(pw_program_t *p, slot_pool_t *pool, int32_t n)
{
    const pw_op_t *op = &p->ops[p->instr[n].arg];
    pw_value_t *out = &p->values[op->out];
    cdnn_status_t st = take_slot(p, pool, out);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    for (int32_t k = 0; k < 3; k++)
        if (op->in[k] >= 0)
            release_if_done(pool, &p->values[op->in[k]], n);
    if (out->last_use < 0)
        pool->used[out->slot] = 0; /* nothing reads it */
    return CDNN_STATUS_SUCCESS;
}

static cdnn_status_t assign_slots(pw_program_t *p)
{
    slot_pool_t pool = {{0}};
    for (int32_t n = 0; n < p->instr_count; n++) {
        const pw_instr_t *in = &p->instr[n];
        cdnn_status_t st = CDNN_STATUS_SUCCESS;
        if (in->kind == PW_LOAD && needs_slot(p, &p->values[in->arg]))
            st = take_slot(p, &pool, &p->values[in->arg]);
        else if (in->kind == PW_OP)
            st = place_op(p, &pool, n);
        else if (in->kind == PW_STORE)
            release_if_done(&pool, &p->values[p->io[in->arg].value], n);
        if (st != CDNN_STATUS_SUCCESS)
            return st;
    }
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t pw_finish(pw_program_t *p)
{
    merge_dims(p);
    for (int32_t i = 0; i < p->io_count; i++) {
        pw_io_t *x = &p->io[i];
        x->direct = !x->is_output && x->type == CDNN_DATA_TYPE_F32 &&
                    x->strides[p->rank - 1] == 1;
    }
    order_instructions(p);
    note_uses(p);
    return assign_slots(p);
}

int pw_output_dense_f32(const pw_program_t *p)
{
    const pw_io_t *out = NULL;
    for (int32_t i = 0; i < p->io_count; i++) {
        if (!p->io[i].is_output)
            continue;
        if (out)
            return 0;
        out = &p->io[i];
    }
    if (!out || out->type != CDNN_DATA_TYPE_F32)
        return 0;
    int64_t expect = 1;
    for (int32_t d = p->rank - 1; d >= 0; d--) {
        if (p->dims[d] != 1 && out->strides[d] != expect)
            return 0;
        expect *= p->dims[d];
    }
    return 1;
}

/* ------------------------------------------------------------------------
 * Loading and storing a block
 * ------------------------------------------------------------------------ */

int pw_type_loadable(cdnn_data_type_t type)
{
    return type == CDNN_DATA_TYPE_F32 || type == CDNN_DATA_TYPE_F16 ||
           type == CDNN_DATA_TYPE_BF16 || type == CDNN_DATA_TYPE_BOOL ||
           type == CDNN_DATA_TYPE_I8 || type == CDNN_DATA_TYPE_U8;
}

int pw_type_storable(cdnn_data_type_t type)
{
    return type == CDNN_DATA_TYPE_F32 || type == CDNN_DATA_TYPE_F16 ||
           type == CDNN_DATA_TYPE_BF16 || type == CDNN_DATA_TYPE_BOOL;
}

/* n elements from base + s * i, as float; every loadable type converts
 * exactly.  A stride of 0 repeats one element. */
static void load_block(cdnn_data_type_t type, const void *base, int64_t s,
                       int64_t n, float *y)
{
    switch (type) {
    case CDNN_DATA_TYPE_F32:
        for (int64_t i = 0; i < n; i++)
            y[i] = ((const float *)base)[i * s];
        break;
    case CDNN_DATA_TYPE_F16:
        for (int64_t i = 0; i < n; i++)
            y[i] = cdnn_half_to_float(((const uint16_t *)base)[i * s]);
        break;
    case CDNN_DATA_TYPE_BF16:
        for (int64_t i = 0; i < n; i++)
            y[i] = cdnn_bf16_to_float(((const uint16_t *)base)[i * s]);
        break;
    case CDNN_DATA_TYPE_BOOL:
        for (int64_t i = 0; i < n; i++)
            y[i] = ((const uint8_t *)base)[i * s] != 0;
        break;
    case CDNN_DATA_TYPE_I8:
        for (int64_t i = 0; i < n; i++)
            y[i] = ((const int8_t *)base)[i * s];
        break;
    default: /* u8 */
        for (int64_t i = 0; i < n; i++)
            y[i] = ((const uint8_t *)base)[i * s];
        break;
    }
}

/* n floats to base + s * i, rounded to type (bool: any nonzero is 1). */
static void store_block(cdnn_data_type_t type, void *base, int64_t s,
                        int64_t n, const float *x)
{
    switch (type) {
    case CDNN_DATA_TYPE_F32:
        if (s == 1)
            memcpy(base, x, (size_t)n * sizeof *x);
        else
            for (int64_t i = 0; i < n; i++)
                ((float *)base)[i * s] = x[i];
        break;
    case CDNN_DATA_TYPE_F16:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)base)[i * s] = cdnn_float_to_half(x[i]);
        break;
    case CDNN_DATA_TYPE_BF16:
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)base)[i * s] = cdnn_float_to_bf16(x[i]);
        break;
    default: /* bool */
        for (int64_t i = 0; i < n; i++)
            ((uint8_t *)base)[i * s] = x[i] != 0;
        break;
    }
}

/* ------------------------------------------------------------------------
 * Running
 * ------------------------------------------------------------------------ */

/* Where one block of the run is: its row's io offsets and its columns. */
typedef struct pw_block {
    const int64_t *row_offset; /* per io, in elements */
    int64_t col, n;            /* first column of the row, and count */
    int64_t e;                 /* linear index of the first element */
} pw_block_t;

/* Per-thread buffers: a block of each live value and where values are. */
typedef struct pw_frame {
    _Alignas(64) float slots[PW_MAX_SLOTS][PW_BLOCK];
    const float *val[PW_MAX_VALUES];
} pw_frame_t;

static void *io_address(const pw_program_t *p, const pw_binding_t *b,
                        const pw_block_t *k, int32_t io)
{
    const pw_io_t *x = &p->io[io];
    char *base = x->tensor == PW_BUFFER ? b->buffer : b->tensors[x->tensor];
    int64_t at = k->row_offset[io] + k->col * x->strides[p->rank - 1];
    return base + at * (int64_t)cdnn_data_type_size(x->type);
}

static void run_load(const pw_program_t *p, const pw_binding_t *b,
                     const pw_block_t *k, pw_frame_t *f, int32_t value)
{
    const pw_value_t *v = &p->values[value];
    float *slot = v->slot >= 0 ? f->slots[v->slot] : NULL;
    if (v->kind == PW_VALUE_ENTRY) {
        f->val[value] = b->entry + (k->e - b->e0);
    } else if (v->kind == PW_VALUE_CONST) {
        for (int64_t i = 0; i < k->n; i++)
            slot[i] = v->constant;
        f->val[value] = slot;
    } else if (p->io[v->index].direct) {
        f->val[value] = io_address(p, b, k, v->index);
    } else {
        const pw_io_t *x = &p->io[v->index];
        load_block(x->type, io_address(p, b, k, v->index),
                   x->strides[p->rank - 1], k->n, slot);
        f->val[value] = slot;
    }
}

static void run_op(const pw_program_t *p, const pw_block_t *k, pw_frame_t *f,
                   int32_t o)
{
    const pw_op_t *op = &p->ops[o];
    float *y = f->slots[p->values[op->out].slot];
    const float *in[3];
    for (int32_t j = 0; j < 3; j++)
        in[j] = op->in[j] >= 0 ? f->val[op->in[j]] : NULL;
    pw_apply_block(&op->fn, k->n, in[0], in[1], in[2], y);
    if (op->to_bool)
        for (int64_t i = 0; i < k->n; i++)
            y[i] = y[i] != 0;
    f->val[op->out] = y;
}

static void run_block(const pw_program_t *p, const pw_binding_t *b,
                      const pw_block_t *k, pw_frame_t *f)
{
    for (int32_t n = 0; n < p->instr_count; n++) {
        const pw_instr_t *in = &p->instr[n];
        if (in->kind == PW_LOAD) {
            run_load(p, b, k, f, in->arg);
        } else if (in->kind == PW_OP) {
            run_op(p, k, f, in->arg);
        } else {
            const pw_io_t *x = &p->io[in->arg];
            store_block(x->type, io_address(p, b, k, in->arg),
                        x->strides[p->rank - 1], k->n, f->val[x->value]);
        }
    }
}

/* Each io's offset at the start of row `row` (all dims but the last). */
static void row_offsets(const pw_program_t *p, int64_t row, int64_t *off)
{
    for (int32_t i = 0; i < p->io_count; i++)
        off[i] = 0;
    for (int32_t d = p->rank - 2; d >= 0; d--) {
        int64_t c = row % p->dims[d];
        row /= p->dims[d];
        for (int32_t i = 0; i < p->io_count; i++)
            off[i] += c * p->io[i].strides[d];
    }
}

typedef struct pw_task {
    const pw_program_t *p;
    const pw_binding_t *b;
} pw_task_t;

/* Elements [e0 + begin, e0 + end), row by row, a block at a time. */
static void run_range(void *arg, int64_t begin, int64_t end)
{
    const pw_task_t *t = arg;
    const pw_program_t *p = t->p;
    pw_frame_t frame;
    int64_t offsets[PW_MAX_IO];
    int64_t inner = p->dims[p->rank - 1];
    int64_t e = t->b->e0 + begin, stop = t->b->e0 + end;
    while (e < stop) {
        pw_block_t k = {.row_offset = offsets, .col = e % inner, .e = e};
        row_offsets(p, e / inner, offsets);
        int64_t row_stop = e - k.col + inner < stop ? e - k.col + inner : stop;
        for (; k.e < row_stop; k.e += k.n, k.col += k.n) {
            k.n = row_stop - k.e < PW_BLOCK ? row_stop - k.e : PW_BLOCK;
            run_block(p, t->b, &k, &frame);
        }
        e = row_stop;
    }
}

void pw_run(const pw_program_t *p, const pw_binding_t *b, int64_t e1)
{
    pw_task_t task = {p, b};
    int64_t n = e1 - b->e0;
    cpu_parallel_for(cpu_threads_for(p->threads, n, PW_GRAIN), n, run_range,
                     &task);
}
