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

#endif
