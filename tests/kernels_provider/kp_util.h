/*
 * kp_util.h -- what the kernels provider's tests share: kernel packs made
 * from built code objects, matmul graphs, running a plan on deterministic
 * inputs, and running a saved plan in a fresh process.
 */
#ifndef CDNN_TESTS_KP_UTIL_H
#define CDNN_TESTS_KP_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/cdnn.h>
#include <cdnn_sdk/kpack.h>

#define KP_MAX_IO 8

typedef struct kp_bytes {
    uint8_t *data;
    size_t size;
} kp_bytes_t;

void kp_bytes_free(kp_bytes_t *b);
kp_bytes_t kp_read_file(const char *path);
void kp_write_file(const char *path, const void *data, size_t size);

/* ---- packs ------------------------------------------------------------------ */

/** A fresh directory under /tmp for packs and plans (removed by kp_cleanup). */
const char *kp_temp_dir(void);
void kp_cleanup(void);

/** The pack of the project's host kernels (every object built in
 * HOST_KERNEL_DIR of a family the test knows), one engine per family that
 * has objects (kernels:matmul_host, kernels:pointwise_host,
 * kernels:norm_host, kernels:reduce_host, kernels:conv_host,
 * kernels:softmax_host), written to
 * dir/name. */
void kp_write_host_pack(const char *dir, const char *name);

/** spec written as a pack to path (the test fails when it cannot be). */
void kp_write_pack(const char *path, const sdk_kpack_spec_t *spec);

/** The pack of the test's marked matmul (its MARK=mark build), engine
 * kernels:marked_matmul, written to path: pack versions 1 and 2 differ
 * in their code, and so in every output. */
void kp_write_marked_pack(const char *path, int mark);

/* An engine entry over the marked kernel, for packs of odd engines. */
typedef struct kp_engine_entry {
    const char *name, *match, *handler;
    uint32_t handler_version;
    int32_t knob_count;
    const cdnn_knob_info_t *knobs;
} kp_engine_entry_t;

/** A pack of the marked kernel (MARK=1) under each of the engine entries. */
void kp_write_marked_engines_pack(const char *path, const kp_engine_entry_t *entries,
                                  int32_t count);

/** The SHA-256 of the marked kernel's MARK=mark build. */
void kp_marked_code_sha256(int mark, uint8_t sha256[32]);

/* ---- graphs ------------------------------------------------------------------- */

/* The fused steps after a matmul or a convolution writing value: + bias
 * (uid 4), the activation, + residual (uid 5), the last step writing y
 * (uid 3); the values between are virtual f32 tensors from uid 10. */
typedef struct kp_epilogue {
    int bias;
    cdnn_pointwise_mode_t act; /* CDNN_PW_IDENTITY: none */
    int residual;
} kp_epilogue_t;

/** The uid the producing node writes: y with no steps, else a virtual. */
int64_t kp_epilogue_input(cdnn_graph_t *g, const kp_epilogue_t *e);

/** The steps, from the producer's output (kp_epilogue_input's uid). */
void kp_epilogue_add(cdnn_graph_t *g, const kp_epilogue_t *e, int64_t value);

/** The engine's index on h (cdnn_handle_engine_info), or -1. */
int32_t kp_engine_index(cdnn_handle_t *h, const char *name);

/* A matmul c = act(a @ b + bias) + residual. */
typedef struct kp_matmul {
    int32_t batch_rank;           /* 0, 1 or 2 */
    int64_t batch[2];             /* a's batch dims (b's broadcast when 1) */
    int64_t m, n, k;
    cdnn_data_type_t type;        /* a, b, c */
    int b_transposed;             /* b stored column-major */
    int64_t a_pad;                /* extra elements per row of a */
    int bias;                     /* a [1.., n] row */
    cdnn_pointwise_mode_t act;    /* CDNN_PW_IDENTITY: none */
    int residual;                 /* shaped as c */
    int b_shared;                 /* b's batch dims are 1 (broadcast) */
} kp_matmul_t;

/** The graph of m (uids: a 1, b 2, c 3, bias 4, residual 5; virtual ones
 * from 10). */
cdnn_graph_t *kp_matmul_graph(const kp_matmul_t *m);

/** A name for m in messages ("2x3 [7x9x5] f16 bias gelu residual"). */
const char *kp_matmul_label(const kp_matmul_t *m);

/* ---- running ------------------------------------------------------------------- */

typedef struct kp_run {
    int32_t count;
    cdnn_tensor_io_t io[KP_MAX_IO];
    void *ptrs[KP_MAX_IO];
} kp_run_t;

/** Buffers for g's plan, every input filled from its uid (the same values
 * in every process), the outputs zero. */
kp_run_t kp_run_prepare(cdnn_graph_t *g);
/** Execute g's plan on h with r's buffers (thread-safe: no assertions). */
cdnn_status_t kp_run_execute(cdnn_graph_t *g, cdnn_handle_t *h, kp_run_t *r);
/** Both: the outputs stay in the run. */
kp_run_t kp_run_graph(cdnn_graph_t *g, cdnn_handle_t *h);
void kp_run_free(kp_run_t *r);

/** The outputs of two runs of one graph, byte for byte. */
void kp_assert_same_outputs(const kp_run_t *a, const kp_run_t *b);

/** The outputs of a run against a reference run, within the tolerance of
 * their type (f32 1e-4, f16 4e-3, bf16 3e-2, relative to the reference's
 * largest magnitude). */
void kp_assert_close_outputs(const kp_run_t *got, const kp_run_t *want, const char *label);

/** The first output's first element as a double. */
double kp_first_output(const kp_run_t *r);

/* ---- handles and builds -------------------------------------------------------------- */

cdnn_handle_t *kp_cpu_handle(void);
/** Build g pinned to engine (knob: name=value when name is not NULL). */
void kp_build_pinned(cdnn_graph_t *g, cdnn_handle_t *h, const char *engine,
                     const char *knob, int64_t value);
kp_bytes_t kp_save(cdnn_graph_t *g, cdnn_save_form_t form);

/* ---- a fresh process ------------------------------------------------------------------- */

/* What a child process made of saved bytes: whether they loaded (else the
 * status and message), the outputs of a run on the deterministic inputs,
 * and whether the loaded plan re-saved to the bytes it came from. */
typedef struct kp_child {
    cdnn_status_t status;
    char message[2048];
    kp_run_t run;
    int resaved_same;
} kp_child_t;

/** Load bytes (a plan or a container) in a new process of this test
 * (argv[0] kp-child), with env ("NAME=VALUE" strings, NULL-terminated, or
 * NULL) added to this process's environment, run and re-save them. */
kp_child_t kp_in_child(kp_bytes_t bytes, const char *const *env);
void kp_child_free(kp_child_t *c);

/** The child's side: call from main when argv[1] is "kp-child". */
int kp_child_main(int argc, char **argv);

#endif
