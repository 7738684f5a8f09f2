/*
 * test_filter.h -- run only the tests whose names match $CDNN_TEST_FILTER
 * (cmocka's wildcards * and ?): how the thread-sanitizer run and
 * scripts/gpu-check.sh pick the tests they need.
 */
#ifndef CDNN_TESTS_TEST_FILTER_H
#define CDNN_TESTS_TEST_FILTER_H

#include <stdlib.h>

static inline void test_filter_from_environment(void)
{
    const char *filter = getenv("CDNN_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
}

#endif
