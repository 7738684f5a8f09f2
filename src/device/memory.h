/*
 * memory.h -- the blocks a handle handed out through cdnn_memory_alloc.
 *
 * The public calls take raw pointers from the caller; the table is what
 * lets them refuse a pointer they did not hand out, a second free, or a
 * copy that runs past its block, instead of passing it to free() or the
 * driver.
 */
#ifndef CDNN_DEVICE_MEMORY_H
#define CDNN_DEVICE_MEMORY_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct memory_block {
    uintptr_t start;
    size_t bytes;
} memory_block_t;

typedef struct memory_table {
    pthread_mutex_t lock;
    memory_block_t *blocks; /* sorted by start; blocks never overlap */
    size_t count, cap;
} memory_table_t;

struct cdnn_handle;

/** An empty table (the handle's calloc'ed state plus its lock). */
void memory_table_init(memory_table_t *table);

/** Free every block still in the handle's table, then the table itself. */
void memory_table_destroy(struct cdnn_handle *handle);

#endif
