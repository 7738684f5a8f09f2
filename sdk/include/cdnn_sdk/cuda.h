/*
 * cuda.h -- the CUDA driver API, opened at run time.
 *
 * cdnn and its GPU providers must build and load where no CUDA is
 * installed, so none of them links libcuda: the driver is dlopen'ed
 * ("libcuda.so.1") the first time a caller asks for it, and its entry
 * points are handed out as a table.  This header does not include the
 * CUDA toolkit's cuda.h; it declares the driver's handles as the same
 * opaque structs (a provider that includes cuda.h too may pass its
 * CUcontext, CUstream, ... to the table unchanged) and the few scalar
 * types as what they are on a 64-bit host.
 *
 * The table binds the symbols the toolkit's cuda.h maps each call to:
 * the _v2 ones where the driver API versions a call (cuMemAlloc_v2,
 * cuCtxPushCurrent_v2, ...), so that arguments have today's widths.
 */
#ifndef CDNN_SDK_CUDA_H
#define CDNN_SDK_CUDA_H

#include <stddef.h>
#include <stdint.h>

typedef int sdk_cu_result;                  /* CUresult */
typedef int sdk_cu_device;                  /* CUdevice */
typedef unsigned long long sdk_cu_deviceptr; /* CUdeviceptr */
typedef struct CUctx_st *sdk_cu_context;    /* CUcontext */
typedef struct CUmod_st *sdk_cu_module;     /* CUmodule */
typedef struct CUfunc_st *sdk_cu_function;  /* CUfunction */
typedef struct CUstream_st *sdk_cu_stream;  /* CUstream */
typedef struct CUevent_st *sdk_cu_event;    /* CUevent */

#define SDK_CU_SUCCESS 0
/* CUdevice_attribute values the library reads. */
#define SDK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define SDK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76

/** The driver's entry points; each member is the driver call of its
 * comment, which documents it (the CUDA Driver API reference). */
typedef struct sdk_cuda {
    sdk_cu_result (*init)(unsigned int flags); /* cuInit */
    sdk_cu_result (*device_get)(sdk_cu_device *device, int ordinal); /* cuDeviceGet */
    sdk_cu_result (*device_get_count)(int *count); /* cuDeviceGetCount */
    sdk_cu_result (*device_get_name)(char *name, int len,
                                     sdk_cu_device device); /* cuDeviceGetName */
    sdk_cu_result (*device_get_attribute)(int *value, int attribute,
                                          sdk_cu_device device); /* cuDeviceGetAttribute */
    sdk_cu_result (*primary_ctx_retain)(sdk_cu_context *context,
                                        sdk_cu_device device); /* cuDevicePrimaryCtxRetain */
    sdk_cu_result (*primary_ctx_release)(sdk_cu_device device); /* cuDevicePrimaryCtxRelease_v2 */
    sdk_cu_result (*ctx_push_current)(sdk_cu_context context); /* cuCtxPushCurrent_v2 */
    sdk_cu_result (*ctx_pop_current)(sdk_cu_context *context); /* cuCtxPopCurrent_v2 */
    sdk_cu_result (*ctx_set_current)(sdk_cu_context context); /* cuCtxSetCurrent */
    sdk_cu_result (*module_load_data)(sdk_cu_module *module,
                                      const void *image); /* cuModuleLoadData */
    sdk_cu_result (*module_unload)(sdk_cu_module module); /* cuModuleUnload */
    sdk_cu_result (*module_get_function)(sdk_cu_function *function, sdk_cu_module module,
                                         const char *name); /* cuModuleGetFunction */
    sdk_cu_result (*func_set_attribute)(sdk_cu_function function, int attribute,
                                        int value); /* cuFuncSetAttribute */
    sdk_cu_result (*launch_kernel)(sdk_cu_function function, unsigned int grid_x,
                                   unsigned int grid_y, unsigned int grid_z,
                                   unsigned int block_x, unsigned int block_y,
                                   unsigned int block_z, unsigned int shared_bytes,
                                   sdk_cu_stream stream, void **params,
                                   void **extra); /* cuLaunchKernel */
    sdk_cu_result (*mem_alloc)(sdk_cu_deviceptr *pointer, size_t bytes); /* cuMemAlloc_v2 */
    sdk_cu_result (*mem_free)(sdk_cu_deviceptr pointer); /* cuMemFree_v2 */
    sdk_cu_result (*memcpy_htod)(sdk_cu_deviceptr dst, const void *src,
                                 size_t bytes); /* cuMemcpyHtoD_v2 */
    sdk_cu_result (*memcpy_dtoh)(void *dst, sdk_cu_deviceptr src,
                                 size_t bytes); /* cuMemcpyDtoH_v2 */
    sdk_cu_result (*memcpy_htod_async)(sdk_cu_deviceptr dst, const void *src, size_t bytes,
                                       sdk_cu_stream stream); /* cuMemcpyHtoDAsync_v2 */
    sdk_cu_result (*memcpy_dtoh_async)(void *dst, sdk_cu_deviceptr src, size_t bytes,
                                       sdk_cu_stream stream); /* cuMemcpyDtoHAsync_v2 */
    sdk_cu_result (*stream_synchronize)(sdk_cu_stream stream); /* cuStreamSynchronize */
    sdk_cu_result (*event_create)(sdk_cu_event *event, unsigned int flags); /* cuEventCreate */
    sdk_cu_result (*event_record)(sdk_cu_event event, sdk_cu_stream stream); /* cuEventRecord */
    sdk_cu_result (*event_synchronize)(sdk_cu_event event); /* cuEventSynchronize */
    /* cuEventElapsedTime_v2 (CUDA 12.8), or cuEventElapsedTime on an
     * older driver: the same call. */
    sdk_cu_result (*event_elapsed_time)(float *milliseconds, sdk_cu_event start,
                                        sdk_cu_event end);
    sdk_cu_result (*event_destroy)(sdk_cu_event event); /* cuEventDestroy_v2 */
    sdk_cu_result (*get_error_string)(sdk_cu_result error,
                                      const char **text); /* cuGetErrorString */
    /* cuTensorMapEncodeTiled (CUDA 12.0): map is a CUtensorMap (128 bytes,
     * 128-byte aligned); the enums are passed as int. */
    sdk_cu_result (*tensor_map_encode_tiled)(void *map, int data_type, uint32_t rank,
                                             void *address, const uint64_t *dims,
                                             const uint64_t *strides, const uint32_t *box,
                                             const uint32_t *element_strides, int interleave,
                                             int swizzle, int l2_promotion, int oob_fill);
    /* cuTensorMapEncodeIm2col (CUDA 12.0): the same, for im2col loads;
     * the corners have rank - 2 entries (innermost spatial dim first). */
    sdk_cu_result (*tensor_map_encode_im2col)(void *map, int data_type, uint32_t rank,
                                              void *address, const uint64_t *dims,
                                              const uint64_t *strides, const int *lower_corner,
                                              const int *upper_corner,
                                              uint32_t channels_per_pixel,
                                              uint32_t pixels_per_column,
                                              const uint32_t *element_strides, int interleave,
                                              int swizzle, int l2_promotion, int oob_fill);
} sdk_cuda_t;

/**
 * The driver's table, opened and initialised (cuInit(0)) by the first call
 * in the process; thread-safe.  NULL when there is no usable driver --
 * none installed, one lacking a call above, or cuInit failing -- with the
 * reason in *why (if why is not NULL; the text lives as long as the
 * process).  The driver is never unloaded: it does not support unloading
 * under live contexts.
 */
const sdk_cuda_t *sdk_cuda(const char **why);

#endif
