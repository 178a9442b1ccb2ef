/* json.h: JSON string and CSV field escaping, UTF-8 checking, and one
 * member read from a JSON object. */
#ifndef CRAWL_JSON_H
#define CRAWL_JSON_H

#include <stddef.h>

#include "strbuf.h"

/* Returns the length of the valid UTF-8 sequence that starts at s (1 to 4),
 * or 0 when the bytes there are not valid UTF-8. s is NUL-terminated. */
size_t json_utf8_len(const unsigned char *s);

/* Appends s to b as a JSON string, quotes included; NULL as null. */
void json_string_sb(struct strbuf *b, const char *s);

/* Appends s to b as a CSV field (RFC 4180: quoted when it holds a comma, a
 * quote or a line break); NULL as nothing. */
void json_csv_sb(struct strbuf *b, const char *s);

/* Finds the member called name of the JSON object obj (NUL-terminated)
 * and appends its value to out: a string unescaped (\uXXXX as UTF-8, a
 * lone surrogate as U+FFFD), a number, true, false or null as written.
 * Returns 1 when found, 0 when obj has no such member (or it is an
 * object or an array), -1 when obj is not a JSON object (up to the
 * member). */
int json_member(const char *obj, const char *name, struct strbuf *out);

#endif
