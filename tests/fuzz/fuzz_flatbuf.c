/*
 * fuzz_flatbuf -- the FlatBuffers verifier (fb_verify) and readers on the
 * test schema (tests/format/test.fbs, which has every kind of field the
 * verifier knows: scalars, strings, vectors of scalars, structs, strings
 * and tables, a sub-table, a union and a nested buffer).  Whatever
 * verifies is read through every accessor: ASan checks that no read
 * strays.
 */
#include <cdnn_sdk/flatbuf.h>

#include "test_schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[256];
    /* With and without the identifier check, and with no room for a
     * message (the verifier must cope with each). */
    if (fb_verify(data, size, TEST_IDENTIFIER, &root_desc, why, sizeof why) == 0)
        sink += walk_root(data, size);
    if (fb_verify(data, size, NULL, &root_desc, NULL, 0) == 0)
        sink += walk_root(data, size);
    if (fb_verify(data, size, NULL, &leaf_desc, why, 8) == 0) {
        fb_table_t leaf = fb_root(data, size);
        sink += walk_leaf(&leaf);
    }
    return 0;
}
