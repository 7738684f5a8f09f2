/*
 * gpu.c -- the driver helpers of gpu.h.
 */
#include "gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cdnn_sdk/numeric.h>

#include "cuda_kernel.h"

void gpu_check(const gpu_t *gpu, sdk_cu_result result, const char *what) {
    if (result == SDK_CU_SUCCESS)
        return;
    const char *text = NULL;
    if (gpu->cu->get_error_string(result, &text) != SDK_CU_SUCCESS || !text)
        text = "unknown error";
    fprintf(stderr, "FAIL: %s: CUDA error %d: %s\n", what, result, text);
    exit(1);
}

int gpu_open(gpu_t *gpu) {
    memset(gpu, 0, sizeof *gpu);
    const char *why = NULL;
    gpu->cu = sdk_cuda(&why);
    if (!gpu->cu) {
        printf("SKIP: no usable CUDA driver: %s\n", why ? why : "unknown");
        return GPU_SKIP;
    }
    int count = 0;
    if (gpu->cu->device_get_count(&count) != SDK_CU_SUCCESS || count < 1) {
        printf("SKIP: the CUDA driver sees no device\n");
        return GPU_SKIP;
    }
    gpu_check(gpu, gpu->cu->device_get(&gpu->device, 0), "cuDeviceGet");
    gpu_check(gpu, gpu->cu->device_get_name(gpu->name, sizeof gpu->name, gpu->device),
              "cuDeviceGetName");
    gpu_check(gpu, gpu->cu->device_get_attribute(&gpu->major,
                                                 SDK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                                 gpu->device),
              "cuDeviceGetAttribute(major)");
    gpu_check(gpu, gpu->cu->device_get_attribute(&gpu->minor,
                                                 SDK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                                 gpu->device),
              "cuDeviceGetAttribute(minor)");
    if (gpu->major < 8) {
        printf("SKIP: %s is sm_%d%d; the kernels need sm_80 or newer\n", gpu->name, gpu->major,
               gpu->minor);
        return GPU_SKIP;
    }
    gpu_check(gpu, gpu->cu->primary_ctx_retain(&gpu->context, gpu->device),
              "cuDevicePrimaryCtxRetain");
    gpu_check(gpu, gpu->cu->ctx_set_current(gpu->context), "cuCtxSetCurrent");
    return 0;
}

void gpu_close(gpu_t *gpu) {
    if (gpu->context)
        gpu->cu->primary_ctx_release(gpu->device);
    gpu->context = NULL;
}

sdk_cu_deviceptr gpu_alloc(const gpu_t *gpu, size_t bytes) {
    sdk_cu_deviceptr pointer = 0;
    gpu_check(gpu, gpu->cu->mem_alloc(&pointer, bytes ? bytes : 1), "cuMemAlloc");
    return pointer;
}

void gpu_free(const gpu_t *gpu, sdk_cu_deviceptr pointer) {
    if (pointer)
        gpu_check(gpu, gpu->cu->mem_free(pointer), "cuMemFree");
}

void gpu_upload(const gpu_t *gpu, sdk_cu_deviceptr dst, const void *src, size_t bytes) {
    gpu_check(gpu, gpu->cu->memcpy_htod(dst, src, bytes), "cuMemcpyHtoD");
}

void gpu_download(const gpu_t *gpu, void *dst, sdk_cu_deviceptr src, size_t bytes) {
    gpu_check(gpu, gpu->cu->memcpy_dtoh(dst, src, bytes), "cuMemcpyDtoH");
}

void gpu_sync(const gpu_t *gpu) {
    gpu_check(gpu, gpu->cu->stream_synchronize(NULL), "cuStreamSynchronize");
}

uint8_t *gpu_read_file(const char *path, size_t *size) {
    FILE *file = fopen(path, "rb");
    if (!file)
        return NULL;
    uint8_t *bytes = NULL;
    long length = -1;
    if (fseek(file, 0, SEEK_END) == 0)
        length = ftell(file);
    if (length > 0 && fseek(file, 0, SEEK_SET) == 0) {
        bytes = malloc((size_t)length);
        if (bytes && fread(bytes, 1, (size_t)length, file) != (size_t)length) {
            free(bytes);
            bytes = NULL;
        }
    }
    fclose(file);
    if (bytes)
        *size = (size_t)length;
    return bytes;
}

int gpu_code_objects(const gpu_t *gpu, const char *dir, const char *name, char paths[2][512]) {
    int count = 0;
    /* An sm_90a cubin runs on sm_90 only; an sm_80 one on sm_80..sm_89. */
    if (gpu->major == 9 && gpu->minor == 0)
        snprintf(paths[count++], 512, "%s/%s.sm_90a.cubin", dir, name);
    else if (gpu->major == 8)
        snprintf(paths[count++], 512, "%s/%s.sm_80.cubin", dir, name);
    snprintf(paths[count++], 512, "%s/%s.compute_80.ptx", dir, name);
    return count;
}

sdk_cu_module gpu_load_module(const gpu_t *gpu, const char *path) {
    size_t size = 0;
    uint8_t *bytes = gpu_read_file(path, &size);
    if (!bytes) {
        fprintf(stderr, "FAIL: cannot read %s\n", path);
        exit(1);
    }
    sdk_cu_module module = NULL;
    char what[600];
    snprintf(what, sizeof what, "cuModuleLoadData(%s)", path);
    gpu_check(gpu, gpu->cu->module_load_data(&module, bytes), what);
    free(bytes);
    return module;
}

sdk_cu_function gpu_function(const gpu_t *gpu, sdk_cu_module module, const char *symbol) {
    sdk_cu_function fn = NULL;
    char what[300];
    snprintf(what, sizeof what, "cuModuleGetFunction(%s)", symbol);
    gpu_check(gpu, gpu->cu->module_get_function(&fn, module, symbol), what);
    return fn;
}

void gpu_launch(const gpu_t *gpu, sdk_cu_function fn, unsigned grid_x, unsigned grid_y,
                unsigned grid_z, unsigned block, unsigned smem, void *params) {
    if (smem > 48 * 1024)
        gpu_check(gpu, gpu->cu->func_set_attribute(fn, GPU_FUNC_MAX_DYNAMIC_SHARED, (int)smem),
                  "cuFuncSetAttribute(max dynamic shared)");
    void *args[] = {params};
    gpu_check(gpu,
              gpu->cu->launch_kernel(fn, grid_x, grid_y, grid_z, block, 1, 1, smem, NULL, args,
                                     NULL),
              "cuLaunchKernel");
}

void gpu_launch_run(void *launch_args) {
    const gpu_launch_args_t *l = launch_args;
    gpu_launch(l->gpu, l->fn, l->grid_x, l->grid_y, 1, l->block, l->smem, l->params);
}

size_t elem_size(int32_t type) { return type == CDNN_CUDA_F32 ? 4 : 2; }

double elem_get(int32_t type, const void *base, int64_t index) {
    return cdnn_load_element((cdnn_data_type_t)type,
                             (const uint8_t *)base + index * (int64_t)elem_size(type));
}

void elem_set(int32_t type, void *base, int64_t index, double value) {
    cdnn_store_element((cdnn_data_type_t)type, (uint8_t *)base + index * (int64_t)elem_size(type),
                       value);
}

double elem_epsilon(int32_t type) {
    switch (type) {
    case CDNN_CUDA_F16:
        return 1.0 / 2048;
    case CDNN_CUDA_BF16:
        return 1.0 / 256;
    default:
        return 1.0 / 16777216;
    }
}

const char *type_name(int32_t type) {
    switch (type) {
    case CDNN_CUDA_F16:
        return "f16";
    case CDNN_CUDA_BF16:
        return "bf16";
    default:
        return "f32";
    }
}

uint64_t rng_next(rng_t *rng) {
    uint64_t x = rng->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng->state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

double rng_uniform(rng_t *rng, double lo, double hi) {
    return lo + (hi - lo) * (double)(rng_next(rng) >> 11) / 9007199254740992.0;
}
