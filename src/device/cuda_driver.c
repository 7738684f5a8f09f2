#include "device/cuda_driver.h"

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
