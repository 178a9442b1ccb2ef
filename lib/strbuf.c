/* strbuf.c: the growable byte string. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "vec.h"

int sb_reserve(struct strbuf *b, size_t n)
{
    if (b->nomem)
        return -1;
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
    free(b->data);
    memset(b, 0, sizeof *b);
}
