/* ascii.h: character classes in ASCII alone, whatever the locale: a URL's
 * syntax is ASCII (RFC 3986), and so is HTML's white space. */
#ifndef CRAWL_ASCII_H
#define CRAWL_ASCII_H

/* HTML's ASCII white space. */
static inline int ascii_ws(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

static inline int ascii_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline int ascii_digit(int c)
{
    return c >= '0' && c <= '9';
}

static inline int ascii_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static inline int ascii_upper(int c)
{
    return c >= 'a' && c <= 'z' ? c - ('a' - 'A') : c;
}

static inline int ascii_hex(int c)
{
    return ascii_digit(c) || (ascii_lower(c) >= 'a' && ascii_lower(c) <= 'f');
}

#endif
