/* vec.h: the one way an array grows here: capacity doubles, and a failed
 * growth leaves the array as it was. Header-only, for the crawler and the
 * fixture server alike. */
#ifndef CRAWL_VEC_H
#define CRAWL_VEC_H

#include <stdint.h>
#include <stdlib.h>

/* Makes room for at least n elements of size bytes in the array at *(void
 * **)v, whose capacity is *cap elements, doubling from min (at least 1).
 * Returns 0, or -1 when memory is short or the size overflows (the array
 * and *cap are then unchanged). */
static inline int vec_reserve(void *v, size_t *cap, size_t n, size_t size, size_t min)
{
    void **p = (void **)v;
    if (n <= *cap)
        return 0;
    size_t c = *cap ? *cap : (min ? min : 1);
    while (c < n) {
        if (c > SIZE_MAX / 2 / size)
            return -1;
        c *= 2;
    }
    void *q = realloc(*p, c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

#endif
