/*
 * host_parallel.h -- the parallel_for host kernels split their work with
 * (kernels/host/host_kernel.h, cdnn_host_parallel_t).
 */
#ifndef CDNN_KERNELS_HOST_PARALLEL_H
#define CDNN_KERNELS_HOST_PARALLEL_H

#include <stdint.h>

/**
 * Call body(arg, i) once for every i in [0, n): the calling thread takes
 * one share, and a thread started for this call takes each other share.
 * Threads are joined before it returns, so that a context keeps no pool
 * and executes from many threads need no shared state.  A thread that
 * cannot be started leaves its share to the calling thread.  ctx is
 * unused (the kernels' ABI passes one).
 */
void host_parallel_for(void *ctx, int64_t n, void (*body)(void *arg, int64_t i), void *arg);

#endif
