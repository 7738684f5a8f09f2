/*
 * freestanding.c -- memset and memcpy of the hermetic objects' own.  A
 * compiler may call them for a struct's zeroing or copy even in code that
 * calls no library (clang does for the larger ones), and the objects link
 * no libc.  Hidden, so that each object keeps its own and exports only
 * its entry.  Built with -fno-tree-loop-distribute-patterns (gcc) or
 * -fno-builtin (clang), so these loops are not turned back into calls.
 */
#include <stddef.h>

#define HK_LOCAL __attribute__((visibility("hidden")))

HK_LOCAL void *memset(void *dst, int value, size_t n);
HK_LOCAL void *memcpy(void *restrict dst, const void *restrict src, size_t n);

void *memset(void *dst, int value, size_t n)
{
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = (unsigned char)value;
    return dst;
}

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    for (size_t i = 0; i < n; i++)
        d[i] = s[i];
    return dst;
}
