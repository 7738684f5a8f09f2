/*
 * gpu.h -- what the CUDA kernel test and bench share: the driver through
 * the SDK's run-time loader, device buffers, code objects read from disk,
 * host tensors of f32/f16/bf16 elements, and a seeded random source.
 * Every driver failure ends the program with the call and the driver's
 * message (exit 1): a failed call is never a result.
 */
#ifndef CDNN_TESTS_CUDA_KERNELS_GPU_H
#define CDNN_TESTS_CUDA_KERNELS_GPU_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn_sdk/cuda.h>

/* The exit status ctest reads as "skipped" (SKIP_RETURN_CODE). */
#define GPU_SKIP 77

/* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
#define GPU_FUNC_MAX_DYNAMIC_SHARED 8

typedef struct gpu {
    const sdk_cuda_t *cu;
    sdk_cu_device device;
    sdk_cu_context context;
    int major, minor; /* compute capability */
    char name[128];
} gpu_t;

/* Open device 0 and make its primary context current.  Returns 0, or
 * GPU_SKIP with the reason printed when there is no driver or device. */
int gpu_open(gpu_t *gpu);
void gpu_close(gpu_t *gpu);

/* Exit(1) naming `what` if result is not success. */
void gpu_check(const gpu_t *gpu, sdk_cu_result result, const char *what);

sdk_cu_deviceptr gpu_alloc(const gpu_t *gpu, size_t bytes);
void gpu_free(const gpu_t *gpu, sdk_cu_deviceptr pointer);
void gpu_upload(const gpu_t *gpu, sdk_cu_deviceptr dst, const void *src, size_t bytes);
void gpu_download(const gpu_t *gpu, void *dst, sdk_cu_deviceptr src, size_t bytes);
void gpu_sync(const gpu_t *gpu);

/* The bytes of a file (malloc'ed; *size set), or NULL if it cannot be read. */
uint8_t *gpu_read_file(const char *path, size_t *size);

/* The code objects of kernel source `name` this device runs, in `dir`:
 * up to 2 paths (its cubin if there is one for this architecture, and the
 * PTX); returns how many. */
int gpu_code_objects(const gpu_t *gpu, const char *dir, const char *name, char paths[2][512]);

sdk_cu_module gpu_load_module(const gpu_t *gpu, const char *path);
sdk_cu_function gpu_function(const gpu_t *gpu, sdk_cu_module module, const char *symbol);

/* Launch with one by-value parameter struct. */
void gpu_launch(const gpu_t *gpu, sdk_cu_function fn, unsigned grid_x, unsigned grid_y,
                unsigned grid_z, unsigned block, unsigned smem, void *params);

/* One launch held as a value, for callers that repeat it through a
 * callback (the GPU benches' event_timing.h): gpu_launch_run(args). */
typedef struct gpu_launch_args {
    const gpu_t *gpu;
    sdk_cu_function fn;
    unsigned grid_x, grid_y, block, smem;
    void *params;
} gpu_launch_args_t;
void gpu_launch_run(void *launch_args);

/* Element sizes and conversions of the types the kernels take. */
size_t elem_size(int32_t type);
double elem_get(int32_t type, const void *base, int64_t index);
void elem_set(int32_t type, void *base, int64_t index, double value);
/* The relative rounding of a store to `type` (half an ulp at 1). */
double elem_epsilon(int32_t type);
const char *type_name(int32_t type);

/* xorshift64*: the same sequence for the same seed on every machine. */
typedef struct rng {
    uint64_t state;
} rng_t;
double rng_uniform(rng_t *rng, double lo, double hi);
uint64_t rng_next(rng_t *rng);

#endif
