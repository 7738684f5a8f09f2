#include "cuda_code.h"

#include <stdio.h>

#include <cdnn_sdk/error.h>

/* Driver results this file tells apart (cuda.h's CUresult values). */
#define CU_ERROR_NO_BINARY_FOR_GPU 209
#define CU_ERROR_UNSUPPORTED_PTX_VERSION 222
/* cuFuncSetAttribute's CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES. */
#define CU_FUNC_MAX_DYNAMIC_SHARED 8
#define STATIC_SHARED_LIMIT (48 * 1024)
/* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */
#define CU_DEVICE_MULTIPROCESSORS 16

cdnn_status_t cuda_failed(const cuda_code_t *code, cdnn_status_t status, sdk_cu_result r,
                          const char *what)
{
    const char *text = NULL;
    if (code->cu->get_error_string(r, &text) != SDK_CU_SUCCESS || !text)
        text = "an error the driver does not name";
    return sdk_fail(status, "%s: CUDA error %d: %s", what, r, text);
}

cdnn_status_t cuda_code_enter(const cuda_code_t *code)
{
    sdk_cu_result r = code->cu->ctx_push_current(code->context);
    return r == SDK_CU_SUCCESS
               ? CDNN_STATUS_SUCCESS
               : cuda_failed(code, CDNN_STATUS_EXECUTION_FAILED, r, "cuCtxPushCurrent");
}

void cuda_code_leave(const cuda_code_t *code)
{
    sdk_cu_context popped;
    code->cu->ctx_pop_current(&popped);
}

cdnn_status_t cuda_code_launch(const cuda_code_t *code, const unsigned grid[3],
                               unsigned block, unsigned shared_bytes, void *stream,
                               void **params)
{
    cdnn_status_t st = cuda_code_enter(code);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    sdk_cu_result r = code->cu->launch_kernel(code->function, grid[0], grid[1], grid[2],
                                              block, 1, 1, shared_bytes, stream, params,
                                              NULL);
    cuda_code_leave(code);
    return r == SDK_CU_SUCCESS
               ? CDNN_STATUS_SUCCESS
               : cuda_failed(code, CDNN_STATUS_EXECUTION_FAILED, r, "cuLaunchKernel");
}

/* A device that cannot take the image is "valid but not loadable here". */
static cdnn_status_t load_failed(const cuda_code_t *code, sdk_cu_result r,
                                 const char *kernel_id)
{
    char what[160];
    snprintf(what, sizeof what, "the code object of kernel %s does not load", kernel_id);
    int not_here = r == CU_ERROR_NO_BINARY_FOR_GPU || r == CU_ERROR_UNSUPPORTED_PTX_VERSION;
    return cuda_failed(code, not_here ? CDNN_STATUS_NOT_SUPPORTED : CDNN_STATUS_CORRUPT_DATA,
                       r, what);
}

static cdnn_status_t load_in_context(cuda_code_t *code, const uint8_t *bytes,
                                     const char *symbol, const char *kernel_id,
                                     uint32_t shared_bytes)
{
    char what[200];
    sdk_cu_result r = code->cu->module_load_data(&code->module, bytes);
    if (r != SDK_CU_SUCCESS) {
        code->module = NULL;
        return load_failed(code, r, kernel_id);
    }
    r = code->cu->module_get_function(&code->function, code->module, symbol);
    if (r != SDK_CU_SUCCESS) {
        snprintf(what, sizeof what, "the code object of kernel %s has no symbol %s",
                 kernel_id, symbol);
        return cuda_failed(code, CDNN_STATUS_CORRUPT_DATA, r, what);
    }
    if (shared_bytes <= STATIC_SHARED_LIMIT)
        return CDNN_STATUS_SUCCESS;
    r = code->cu->func_set_attribute(code->function, CU_FUNC_MAX_DYNAMIC_SHARED,
                                     (int)shared_bytes);
    snprintf(what, sizeof what, "kernel %s needs %u bytes of shared memory, which the "
             "device does not grant", kernel_id, shared_bytes);
    return r == SDK_CU_SUCCESS ? CDNN_STATUS_SUCCESS
                               : cuda_failed(code, CDNN_STATUS_NOT_SUPPORTED, r, what);
}

static uint64_t le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The driver takes an image without its size: a cubin says its own size
 * in its ELF header, PTX ends at its NUL.  So before the driver reads one,
 * the PTX must end with its NUL, and the cubin's header tables must lie
 * inside the bytes. */
static cdnn_status_t check_image(const uint8_t *bytes, size_t size, int ptx,
                                 const char *kernel_id)
{
    if (ptx)
        return size > 0 && bytes[size - 1] == 0
                   ? CDNN_STATUS_SUCCESS
                   : sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the PTX of kernel %s does not end "
                              "with a NUL byte", kernel_id);
    int elf64 = size >= 64 && bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' &&
                bytes[3] == 'F' && bytes[4] == 2 && bytes[5] == 1;
    uint64_t sections = elf64 ? le(bytes + 40, 8) + le(bytes + 60, 2) * le(bytes + 58, 2) : 0;
    uint64_t segments = elf64 ? le(bytes + 32, 8) + le(bytes + 56, 2) * le(bytes + 54, 2) : 0;
    if (!elf64 || le(bytes + 40, 8) > size || sections > size || le(bytes + 32, 8) > size ||
        segments > size)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the cubin of kernel %s is not a 64-bit "
                        "ELF image whose tables lie within its %zu bytes", kernel_id, size);
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cuda_code_load(const cdnn_device_view_t *device, const uint8_t *bytes,
                             size_t size, int ptx, const char *symbol, const char *kernel_id,
                             uint32_t shared_bytes, cuda_code_t *code)
{
    const char *why = NULL;
    *code = CUDA_CODE_NONE;
    cdnn_status_t st = check_image(bytes, size, ptx, kernel_id);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    code->cu = sdk_cuda(&why);
    if (!code->cu)
        return sdk_fail(CDNN_STATUS_NOT_SUPPORTED, "no CUDA driver: %s", why);
    code->context = device->cuda_context;
    sdk_cu_device dev;
    if (code->cu->device_get(&dev, device->ordinal) != SDK_CU_SUCCESS ||
        code->cu->device_get_attribute(&code->multiprocessors, CU_DEVICE_MULTIPROCESSORS,
                                       dev) != SDK_CU_SUCCESS)
        code->multiprocessors = 0; /* launches keep their full grids */
    st = cuda_code_enter(code);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    st = load_in_context(code, bytes, symbol, kernel_id, shared_bytes);
    cuda_code_leave(code);
    if (st != CDNN_STATUS_SUCCESS)
        cuda_code_unload(code);
    return st;
}

void cuda_code_unload(cuda_code_t *code)
{
    if (code->module && cuda_code_enter(code) == CDNN_STATUS_SUCCESS) {
        code->cu->module_unload(code->module);
        cuda_code_leave(code);
    }
    *code = CUDA_CODE_NONE;
}
