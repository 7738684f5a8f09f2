/* handle.h -- a handle: one device, and a reference on the providers. */
#ifndef CDNN_ENGINE_HANDLE_H
#define CDNN_ENGINE_HANDLE_H

#include <cdnn/provider.h>

#include "device/cuda_driver.h"
#include "device/memory.h"

struct cdnn_handle {
    cdnn_device_view_t device;
    char device_string[32]; /* "cpu", "cuda:0" */
    char description[192];  /* for people; see cdnn_handle_device_description */
    char device_key[160];   /* what a benchmark result holds for: the model */
    cuda_device_t cuda;     /* when device.kind is CUDA */
    void *stream;
    memory_table_t memory;  /* the blocks of cdnn_memory_alloc */
};

#endif
