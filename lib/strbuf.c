/* strbuf.c: the growable byte string. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "vec.h"

void sb_init_lent(struct strbuf *b, char *buf, size_t n)
{
    b->data = buf;
    b->data[0] = '\0';
    b->len = 0;
    b->cap = n;
    b->nomem = 0;
    b->lent = 1;
}

/* A lent buffer outgrown: its bytes go to the heap, where b grows on. */
static int sb_unlend(struct strbuf *b, size_t n)
{
    size_t cap = b->cap;
    while (cap < n) {
        if (cap > SIZE_MAX / 2)
            return -1;
        cap *= 2;
    }
    char *p = malloc(cap);
    if (!p)
        return -1;
    memcpy(p, b->data, b->len + 1);
    b->data = p;
    b->cap = cap;
    b->lent = 0;
    return 0;
}

int sb_reserve(struct strbuf *b, size_t n)
{
    if (b->nomem)
        return -1;
    if (b->lent && b->len + n + 1 > b->cap) {
        if (n > SIZE_MAX - b->len - 1 || sb_unlend(b, b->len + n + 1) != 0) {
            b->nomem = 1;
            return -1;
        }
        return 0;
    }
    if (vec_reserve(&b->data, &b->cap, b->len + n + 1, 1, 256) != 0) {
        b->nomem = 1;
        return -1;
    }
    return 0;
}

void sb_add(struct strbuf *b, const void *p, size_t n)
{
    if (sb_reserve(b, n) != 0)
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void sb_adds(struct strbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

void sb_addc(struct strbuf *b, char ch)
{
    sb_add(b, &ch, 1);
}

void sb_printf(struct strbuf *b, const char *fmt, ...)
{
    va_list ap;
    char small[256];
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        sb_add(b, small, (size_t)n);
        return;
    }
    if (sb_reserve(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sb_reset(struct strbuf *b)
{
    b->len = 0;
    b->nomem = 0;
    if (b->data)
        b->data[0] = '\0';
}

void sb_free(struct strbuf *b)
{
    if (!b->lent)
        free(b->data);
    memset(b, 0, sizeof *b);
}
