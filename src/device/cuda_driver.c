#include "device/cuda_driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

/* The driver API's own types, reduced to what crosses these calls. */
typedef int cu_result;
typedef int cu_device;
typedef void *cu_context;

enum {
    CU_ATTR_CC_MAJOR = 75, /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
    CU_ATTR_CC_MINOR = 76, /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR */
};

static struct {
    void *library;
    char error[512];
    cu_result (*init)(unsigned int flags);
    cu_result (*device_count)(int *count);
    cu_result (*device_get)(cu_device *device, int ordinal);
    cu_result (*device_name)(char *name, int len, cu_device device);
    cu_result (*device_attribute)(int *value, int attribute, cu_device device);
    cu_result (*primary_retain)(cu_context *context, cu_device device);
    cu_result (*primary_release)(cu_device device);
} cu;

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

static void *symbol(const char *name)
{
    void *p = dlsym(cu.library, name);
    if (!p && !cu.error[0])
        snprintf(cu.error, sizeof cu.error, "the CUDA driver lacks %s", name);
    return p;
}

/* The driver stays loaded for the life of the process: unloading it under
 * live contexts is not supported by the driver. */
static void load_driver(void)
{
    cu.library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cu.library) {
        snprintf(cu.error, sizeof cu.error,
                 "the CUDA driver (libcuda.so.1) cannot be opened: %s", dlerror());
        return;
    }
    *(void **)&cu.init = symbol("cuInit");
    *(void **)&cu.device_count = symbol("cuDeviceGetCount");
    *(void **)&cu.device_get = symbol("cuDeviceGet");
    *(void **)&cu.device_name = symbol("cuDeviceGetName");
    *(void **)&cu.device_attribute = symbol("cuDeviceGetAttribute");
    *(void **)&cu.primary_retain = symbol("cuDevicePrimaryCtxRetain_v2");
    if (!cu.primary_retain) {
        cu.error[0] = 0;
        *(void **)&cu.primary_retain = symbol("cuDevicePrimaryCtxRetain");
    }
    *(void **)&cu.primary_release = symbol("cuDevicePrimaryCtxRelease_v2");
    if (!cu.primary_release) {
        cu.error[0] = 0;
        *(void **)&cu.primary_release = symbol("cuDevicePrimaryCtxRelease");
    }
    if (!cu.error[0] && cu.init(0) != 0)
        snprintf(cu.error, sizeof cu.error, "cuInit failed: no usable CUDA device");
}

cdnn_status_t cuda_device_open(int ordinal, cuda_device_t *device)
{
    pthread_once(&cu_once, load_driver);
    if (cu.error[0])
        return cdnn_fail(CDNN_STATUS_NOT_SUPPORTED, "cuda:%d: %s", ordinal, cu.error);
    int count = 0;
    cu_device dev;
    int major = 0, minor = 0;
    if (cu.device_count(&count) != 0 || ordinal >= count)
        return cdnn_fail(CDNN_STATUS_NOT_FOUND, "cuda:%d: this machine has %d CUDA device(s)",
                         ordinal, count);
    if (cu.device_get(&dev, ordinal) != 0 ||
        cu.device_attribute(&major, CU_ATTR_CC_MAJOR, dev) != 0 ||
        cu.device_attribute(&minor, CU_ATTR_CC_MINOR, dev) != 0 ||
        cu.device_name(device->name, (int)sizeof device->name, dev) != 0)
        return cdnn_fail(CDNN_STATUS_EXECUTION_FAILED, "cuda:%d: the driver cannot "
                         "describe the device", ordinal);
    if (cu.primary_retain(&device->context, dev) != 0)
        return cdnn_fail(CDNN_STATUS_EXECUTION_FAILED, "cuda:%d: the driver cannot "
                         "create the device's primary context", ordinal);
    device->ordinal = ordinal;
    device->arch = 10 * major + minor;
    return CDNN_STATUS_SUCCESS;
}

void cuda_device_close(cuda_device_t *device)
{
    cu_device dev;
    if (device->context && cu.device_get(&dev, device->ordinal) == 0)
        cu.primary_release(dev);
    device->context = NULL;
}
