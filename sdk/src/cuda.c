#include <cdnn_sdk/cuda.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Where each entry point goes in the table, and the driver's symbol for
 * it; fallback, when not NULL, is the symbol an older driver has instead. */
typedef struct binding {
    size_t offset;
    const char *symbol;
    const char *fallback;
} binding_t;

#define BIND(member, symbol) {offsetof(sdk_cuda_t, member), symbol, NULL}

static const binding_t bindings[] = {
    BIND(init, "cuInit"),
    BIND(device_get, "cuDeviceGet"),
    BIND(device_get_count, "cuDeviceGetCount"),
    BIND(device_get_name, "cuDeviceGetName"),
    BIND(device_get_attribute, "cuDeviceGetAttribute"),
    BIND(primary_ctx_retain, "cuDevicePrimaryCtxRetain"),
    BIND(primary_ctx_release, "cuDevicePrimaryCtxRelease_v2"),
    BIND(ctx_push_current, "cuCtxPushCurrent_v2"),
    BIND(ctx_pop_current, "cuCtxPopCurrent_v2"),
    BIND(ctx_set_current, "cuCtxSetCurrent"),
    BIND(module_load_data, "cuModuleLoadData"),
    BIND(module_unload, "cuModuleUnload"),
    BIND(module_get_function, "cuModuleGetFunction"),
    BIND(func_set_attribute, "cuFuncSetAttribute"),
    BIND(launch_kernel, "cuLaunchKernel"),
    BIND(mem_alloc, "cuMemAlloc_v2"),
    BIND(mem_free, "cuMemFree_v2"),
    BIND(memcpy_htod, "cuMemcpyHtoD_v2"),
    BIND(memcpy_dtoh, "cuMemcpyDtoH_v2"),
    BIND(memcpy_htod_async, "cuMemcpyHtoDAsync_v2"),
    BIND(memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2"),
    BIND(stream_synchronize, "cuStreamSynchronize"),
    BIND(event_create, "cuEventCreate"),
    BIND(event_record, "cuEventRecord"),
    BIND(event_synchronize, "cuEventSynchronize"),
    {offsetof(sdk_cuda_t, event_elapsed_time), "cuEventElapsedTime_v2",
     "cuEventElapsedTime"},
    BIND(event_destroy, "cuEventDestroy_v2"),
    BIND(get_error_string, "cuGetErrorString"),
    BIND(tensor_map_encode_tiled, "cuTensorMapEncodeTiled"),
    BIND(tensor_map_encode_im2col, "cuTensorMapEncodeIm2col"),
};

/* Every member of the table is bound: a member added without a binding
 * would stay NULL in a table handed out as complete. */
_Static_assert(sizeof bindings / sizeof bindings[0] ==
                   sizeof(sdk_cuda_t) / sizeof(void (*)(void)),
               "every sdk_cuda_t member needs a binding");

static struct {
    sdk_cuda_t table;
    int usable;
    char why[512];
} driver;

static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

/* POSIX lets a dlsym result be used as a function pointer of the same
 * size; it is stored bytewise so no conversion between object and
 * function pointers is written out. */
static int bind_all(void *library)
{
    for (size_t i = 0; i < sizeof bindings / sizeof bindings[0]; i++) {
        const binding_t *b = &bindings[i];
        void *entry = dlsym(library, b->symbol);
        if (!entry && b->fallback)
            entry = dlsym(library, b->fallback);
        if (!entry) {
            snprintf(driver.why, sizeof driver.why, "the CUDA driver lacks %s", b->symbol);
            return -1;
        }
        memcpy((char *)&driver.table + b->offset, &entry, sizeof entry);
    }
    return 0;
}

static void open_driver(void)
{
    void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(driver.why, sizeof driver.why,
                 "the CUDA driver (libcuda.so.1) cannot be opened: %s", dlerror());
        return;
    }
    if (bind_all(library) != 0)
        return;
    sdk_cu_result r = driver.table.init(0);
    if (r != SDK_CU_SUCCESS) {
        const char *text = NULL;
        if (driver.table.get_error_string(r, &text) != SDK_CU_SUCCESS || !text)
            text = "an error the driver does not name";
        snprintf(driver.why, sizeof driver.why, "cuInit failed (%d: %s): no usable "
                 "CUDA device", r, text);
        return;
    }
    driver.usable = 1;
}

const sdk_cuda_t *sdk_cuda(const char **why)
{
    pthread_once(&driver_once, open_driver);
    if (driver.usable)
        return &driver.table;
    if (why)
        *why = driver.why;
    return NULL;
}
