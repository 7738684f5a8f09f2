#include "device/cuda_driver.h"

#include <stdint.h>

#include <cdnn_sdk/cuda.h>

#include "core/error.h"

/* The device's name, compute capability and retained primary context. */
static cdnn_status_t describe(const sdk_cuda_t *cu, int ordinal, cuda_device_t *device)
{
    int major = 0, minor = 0;
    sdk_cu_device dev;
    sdk_cu_context context = NULL;
    if (cu->device_get(&dev, ordinal) != SDK_CU_SUCCESS ||
        cu->device_get_attribute(&major, SDK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                 dev) != SDK_CU_SUCCESS ||
        cu->device_get_attribute(&minor, SDK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                 dev) != SDK_CU_SUCCESS ||
        cu->device_get_name(device->name, (int)sizeof device->name, dev) != SDK_CU_SUCCESS)
        return cdnn_fail(CDNN_STATUS_EXECUTION_FAILED, "cuda:%d: the driver cannot "
                         "describe the device", ordinal);
    if (cu->primary_ctx_retain(&context, dev) != SDK_CU_SUCCESS)
        return cdnn_fail(CDNN_STATUS_EXECUTION_FAILED, "cuda:%d: the driver cannot "
                         "create the device's primary context", ordinal);
    device->context = context;
    device->ordinal = ordinal;
    device->arch = 10 * major + minor;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cuda_device_open(int ordinal, cuda_device_t *device)
{
    const char *why = NULL;
    const sdk_cuda_t *cu = sdk_cuda(&why);
    if (!cu)
        return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED, "cuda:%d: %s", ordinal, why);
    int count = 0;
    if (cu->device_get_count(&count) != SDK_CU_SUCCESS || ordinal >= count)
        return cdnn_fail(CDNN_STATUS_NOT_FOUND, "cuda:%d: this machine has %d CUDA device(s)",
                         ordinal, count);
    return describe(cu, ordinal, device);
}

/* Only a device that cuda_device_open opened holds a context, so the
 * driver is there whenever one is to be released. */
void cuda_device_close(cuda_device_t *device)
{
    const sdk_cuda_t *cu = sdk_cuda(NULL);
    sdk_cu_device dev;
    if (device->context && cu && cu->device_get(&dev, device->ordinal) == SDK_CU_SUCCESS)
        cu->primary_ctx_release(dev);
    device->context = NULL;
}

/* CUDA_ERROR_OUT_OF_MEMORY in cuda.h's CUresult. */
#define CU_ERROR_OUT_OF_MEMORY 2

static cdnn_status_t driver_failed(const sdk_cuda_t *cu, const cuda_device_t *device,
                                   cdnn_status_t status, sdk_cu_result r, const char *what)
{
    const char *text = NULL;
    if (cu->get_error_string(r, &text) != SDK_CU_SUCCESS || !text)
        text = "an error the driver does not name";
    return cdnn_fail(status, "cuda:%d: %s failed: CUDA error %d: %s", device->ordinal,
                     what, r, text);
}

/* The driver's table with the device's context made current on this
 * thread; NULL (and the failure reported) when either is impossible.
 * Every success is paired with leave(). */
static const sdk_cuda_t *enter(const cuda_device_t *device, cdnn_status_t *status)
{
    const sdk_cuda_t *cu = sdk_cuda(NULL);
    /* A device was opened, so the driver loaded; the check is for form. */
    if (!cu) {
        *status = cdnn_fail(CDNN_STATUS_INTERNAL_ERROR, "cuda:%d: the driver is gone",
                            device->ordinal);
        return NULL;
    }
    sdk_cu_result r = cu->ctx_push_current(device->context);
    if (r != SDK_CU_SUCCESS) {
        *status = driver_failed(cu, device, CDNN_STATUS_EXECUTION_FAILED, r,
                                "cuCtxPushCurrent");
        return NULL;
    }
    return cu;
}

static void leave(const sdk_cuda_t *cu)
{
    sdk_cu_context popped;
    cu->ctx_pop_current(&popped);
}

cdnn_status_t cuda_memory_alloc(const cuda_device_t *device, size_t bytes, void **pointer)
{
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    const sdk_cuda_t *cu = enter(device, &st);
    if (!cu)
        return st;
    sdk_cu_deviceptr p = 0;
    sdk_cu_result r = cu->mem_alloc(&p, bytes);
    leave(cu);
    if (r == CU_ERROR_OUT_OF_MEMORY)
        return cdnn_fail(CDNN_STATUS_ALLOC_FAILED, "cuda:%d: no room for %zu bytes of "
                         "device memory", device->ordinal, bytes);
    if (r != SDK_CU_SUCCESS)
        return driver_failed(cu, device, CDNN_STATUS_EXECUTION_FAILED, r, "cuMemAlloc");
    *pointer = (void *)(uintptr_t)p;
    return CDNN_STATUS_SUCCESS;
}

cdnn_status_t cuda_memory_free(const cuda_device_t *device, void *pointer)
{
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    const sdk_cuda_t *cu = enter(device, &st);
    if (!cu)
        return st;
    sdk_cu_result r = cu->mem_free((sdk_cu_deviceptr)(uintptr_t)pointer);
    leave(cu);
    return r == SDK_CU_SUCCESS
               ? CDNN_STATUS_SUCCESS
               : driver_failed(cu, device, CDNN_STATUS_EXECUTION_FAILED, r, "cuMemFree");
}

cdnn_status_t cuda_memory_copy(const cuda_device_t *device, void *stream, void *dst,
                               const void *src, size_t bytes, int to_device)
{
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    const sdk_cuda_t *cu = enter(device, &st);
    if (!cu)
        return st;
    sdk_cu_result r =
        to_device ? cu->memcpy_htod_async((sdk_cu_deviceptr)(uintptr_t)dst, src, bytes,
                                          stream)
                  : cu->memcpy_dtoh_async(dst, (sdk_cu_deviceptr)(uintptr_t)src, bytes,
                                          stream);
    const char *what = to_device ? "cuMemcpyHtoDAsync" : "cuMemcpyDtoHAsync";
    if (r == SDK_CU_SUCCESS) {
        r = cu->stream_synchronize(stream);
        what = "cuStreamSynchronize";
    }
    leave(cu);
    return r == SDK_CU_SUCCESS
               ? CDNN_STATUS_SUCCESS
               : driver_failed(cu, device, CDNN_STATUS_EXECUTION_FAILED, r, what);
}

cdnn_status_t cuda_stream_wait(const cuda_device_t *device, void *stream)
{
    cdnn_status_t st = CDNN_STATUS_SUCCESS;
    const sdk_cuda_t *cu = enter(device, &st);
    if (!cu)
        return st;
    sdk_cu_result r = cu->stream_synchronize(stream);
    leave(cu);
    return r == SDK_CU_SUCCESS
               ? CDNN_STATUS_SUCCESS
               : driver_failed(cu, device, CDNN_STATUS_EXECUTION_FAILED, r,
                               "cuStreamSynchronize");
}
