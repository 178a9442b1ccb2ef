/* json.h: JSON string and CSV field escaping, and UTF-8 checking. */
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

#endif
