/*
 * cuda_driver.h -- a CUDA handle's device: opened through the SDK's
 * run-time driver loader (<cdnn_sdk/cuda.h>), so that cdnn builds and runs
 * where no driver exists.
 */
#ifndef CDNN_DEVICE_CUDA_DRIVER_H
#define CDNN_DEVICE_CUDA_DRIVER_H

#include <cdnn/cdnn.h>

typedef struct cuda_device {
    int ordinal;
    int arch;       /* 10 * major + minor */
    char name[128];
    void *context;  /* the device's retained primary CUcontext */
} cuda_device_t;

/** Open device ordinal and retain its primary context. */
cdnn_status_t cuda_device_open(int ordinal, cuda_device_t *device);

/** Release what cuda_device_open retained. */
void cuda_device_close(cuda_device_t *device);

/* Memory and stream calls, each made with the device's context current;
 * a driver failure comes back as a status with the driver's words. */

/** cuMemAlloc of bytes; ALLOC_FAILED when the device is out of memory. */
cdnn_status_t cuda_memory_alloc(const cuda_device_t *device, size_t bytes,
                                void **pointer);

/** cuMemFree. */
cdnn_status_t cuda_memory_free(const cuda_device_t *device, void *pointer);

/** Copy bytes between host and device memory on stream (to_device says
 * which way) and wait for it: the copy is done when this returns. */
cdnn_status_t cuda_memory_copy(const cuda_device_t *device, void *stream, void *dst,
                               const void *src, size_t bytes, int to_device);

/** cuStreamSynchronize. */
cdnn_status_t cuda_stream_wait(const cuda_device_t *device, void *stream);

#endif
