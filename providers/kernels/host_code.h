/*
 * host_code.h -- a host code object (an x86-64 ELF shared object) loaded
 * from memory.
 *
 * The bytes are written to an anonymous, sealed memory file (memfd_create)
 * and dlopen'ed through /proc/self/fd: the code that runs is exactly the
 * bytes checked against their SHA-256, with no path on disk that someone
 * could swap between the check and the load.  The handle, and the memory
 * file, live as long as the context that runs the code.
 */
#ifndef CDNN_KERNELS_HOST_CODE_H
#define CDNN_KERNELS_HOST_CODE_H

#include <stddef.h>
#include <stdint.h>

#include <cdnn/provider.h>

typedef struct host_code {
    void *library;   /* dlopen handle */
    void *entry;     /* the kernel's symbol */
    int memory_file; /* open while loaded: see host_code.c; -1 when none */
} host_code_t;

#define HOST_CODE_NONE ((host_code_t){NULL, NULL, -1})

/**
 * Load bytes as a shared object and resolve symbol in it.  CORRUPT_DATA
 * when the bytes do not load or lack the symbol (the kernel's id names it
 * in the message); ALLOC_FAILED when the memory file cannot be made.
 */
cdnn_status_t host_code_load(const uint8_t *bytes, size_t size, const char *symbol,
                             const char *kernel_id, host_code_t *code);

/** Unload a loaded code object; one never loaded (HOST_CODE_NONE) or
 * already unloaded is left alone. */
void host_code_unload(host_code_t *code);

#endif
