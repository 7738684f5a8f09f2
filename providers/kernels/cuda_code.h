/*
 * cuda_code.h -- a CUDA code object (cubin, or PTX the driver compiles)
 * loaded into a device's primary context through the SDK's run-time driver
 * loader, and the context made current around each driver call.
 *
 * The module lives as long as the context that runs it; its function is
 * launched from many threads at once, each pushing the device's context
 * for the call and popping it after, so that a caller's own current
 * context is left as it was.
 */
#ifndef CDNN_KERNELS_CUDA_CODE_H
#define CDNN_KERNELS_CUDA_CODE_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/provider.h>
#include <cdnn_sdk/cuda.h>

typedef struct cuda_code {
    const sdk_cuda_t *cu;
    sdk_cu_context context; /* the device's primary context (cdnn's) */
    sdk_cu_module module;
    sdk_cu_function function;
    int multiprocessors; /* the device's, for persistent grids; 0 unknown */
} cuda_code_t;

#define CUDA_CODE_NONE ((cuda_code_t){NULL, NULL, NULL, NULL, 0})

/**
 * Load bytes (PTX when ptx, else a cubin) on device (a CUDA device view)
 * and find symbol in them; shared_bytes of dynamic shared memory above
 * 48 KiB is opted into once here.  NOT_SUPPORTED without a driver or when
 * the device refuses the image (an architecture it lacks); CORRUPT_DATA
 * when the image is malformed, does not load otherwise or lacks the
 * symbol.
 */
cdnn_status_t cuda_code_load(const cdnn_device_view_t *device, const uint8_t *bytes,
                             size_t size, int ptx, const char *symbol,
                             const char *kernel_id, uint32_t shared_bytes, cuda_code_t *code);

void cuda_code_unload(cuda_code_t *code);

/** Make the code's context current for a driver call; pair with
 * cuda_code_leave. */
cdnn_status_t cuda_code_enter(const cuda_code_t *code);
void cuda_code_leave(const cuda_code_t *code);

/** Launch the code's function on stream with one block shape (x only) and
 * the kernel's by-value parameters, its context current for the call. */
cdnn_status_t cuda_code_launch(const cuda_code_t *code, const unsigned grid[3],
                               unsigned block, unsigned shared_bytes, void *stream,
                               void **params);

/** A failed driver call as a provider failure: status, what, the driver's
 * words. */
cdnn_status_t cuda_failed(const cuda_code_t *code, cdnn_status_t status, sdk_cu_result r,
                          const char *what);

#endif
