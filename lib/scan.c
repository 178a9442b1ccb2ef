/* scan.c: the default rule's links, found by a tokenizer that follows the
 * WHATWG HTML Standard (13.2.5, Tokenization) as far as links need, fed as
 * bytes arrive. Its state lives in struct scan between calls, so a tag may
 * be cut anywhere, inside an attribute value or a character reference.
 * libxml2's HTML parser found the same links at about a third of the speed
 * of the rest of a crawl: it decodes every character, keeps a stack of
 * open elements and copies every attribute; this looks only at the bytes
 * that can start or end markup and copies only the values it hands over.
 * What a link means is left to the caller (html.c). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/HTMLparser.h>

#include "ascii.h"
#include "scan.h"
#include "url.h"

/* Attribute values kept: an href is dropped past URL_MAX anyway. */
#define HREF_MAX (URL_MAX + 1)
#define META_MAX 128
/* What the second tokenizer in an unclosed text element may report. */
#define HELD_MAX (1 << 20)
#define NO_OFFSET UINT64_MAX

enum state {
    S_DATA, S_TAG_OPEN, S_END_TAG_OPEN, S_TAG_NAME,
    S_BEFORE_ATTR_NAME, S_ATTR_NAME, S_AFTER_ATTR_NAME, S_BEFORE_VALUE,
    S_VALUE_DQ, S_VALUE_SQ, S_VALUE_UQ, S_AFTER_VALUE, S_SELF_CLOSING,
    S_CHARREF,
    S_MARKUP, S_MARKUP_DASH, S_BOGUS,
    S_COMMENT_START, S_COMMENT_START_DASH, S_COMMENT, S_COMMENT_END_DASH,
    S_COMMENT_END, S_COMMENT_END_BANG,
    S_RAW, S_RAW_LT, S_RAW_END, S_PLAINTEXT,
};

/* The tags that matter. Text elements hold text up to their end tag. */
enum tag { T_OTHER, T_A, T_BASE, T_META, T_SCRIPT, T_STYLE, T_TEXT, T_PLAINTEXT };

/* Where the current attribute's value goes. */
enum attr { A_NONE, A_HREF, A_CHARSET, A_EQUIV, A_CONTENT, A_COUNT };

struct value {
    char *buf;
    size_t len, cap;
    int over;                   /* longer than cap: dropped */
};

struct scan {
    const struct scan_cb *cb;
    void *data;
    enum state state, back;     /* back: the value state a reference returns to */
    enum tag tag;
    int end_tag;                /* the tag being read is an end tag */
    char name[16];              /* tag or attribute name, lower case */
    size_t nname;               /* may pass sizeof name: then it matches nothing */
    char raw[16];               /* the text element we are in */
    size_t nraw, rawmatch;      /* rawmatch: bytes of its name after "</" seen */
    enum attr attr;
    unsigned seen;              /* attributes of this tag taken (first wins) */
    char ref[36];               /* a character reference being read, '&' first */
    size_t nref;
    struct value val[A_COUNT];  /* by enum attr; A_NONE unused */
    char hrefbuf[HREF_MAX], charsetbuf[META_MAX], equivbuf[META_MAX], contentbuf[META_MAX];
    int based, meta_done, pinned, stopped;
    uint64_t off;               /* offset of the tokenizer's chunk */
    uint64_t here;              /* offset just after the tag being reported */
    uint64_t bad;               /* from here bytes are ISO-8859-1 (NO_OFFSET: none yet) */
    /* UTF-8 check, ahead of the tokenizer (libxml2 2.9's htmlCurrentChar
     * rules: overlong forms are errors, surrogates are not). */
    uint64_t voff, lead_off;
    unsigned need, uval, umin;
    unsigned char carry[4];     /* a sequence cut by the chunk, not tokenized yet */
    size_t ncarry;
    /* A text element not yet closed: a second tokenizer reads its content
     * as markup, and what it finds is reported if the body ends first. */
    struct scan *shadow;
    int shadowing;              /* it is reading the current element's content */
    int is_shadow;
    char *held;                 /* its finds: kind byte, 4-byte length, bytes */
    size_t nheld, capheld;
};

static void value_init(struct value *v, char *buf, size_t cap)
{
    v->buf = buf;
    v->cap = cap - 1;           /* room for a terminating NUL */
}

struct scan *scan_new(const struct scan_cb *cb, void *data)
{
    struct scan *s = calloc(1, sizeof *s);

    if (!s)
        return NULL;
    s->cb = cb;
    s->data = data;
    s->bad = NO_OFFSET;
    value_init(&s->val[A_HREF], s->hrefbuf, sizeof s->hrefbuf);
    value_init(&s->val[A_CHARSET], s->charsetbuf, sizeof s->charsetbuf);
    value_init(&s->val[A_EQUIV], s->equivbuf, sizeof s->equivbuf);
    value_init(&s->val[A_CONTENT], s->contentbuf, sizeof s->contentbuf);
    return s;
}

void scan_free(struct scan *s)
{
    if (!s)
        return;
    scan_free(s->shadow);
    free(s->held);
    free(s);
}

void scan_pin_charset(struct scan *s, int latin1)
{
    s->pinned = 1;
    if (latin1)
        s->bad = 0;
}

/* ---- values ------------------------------------------------------------- */

static void put(struct value *v, char c)
{
    if (v->len < v->cap)
        v->buf[v->len++] = c;
    else
        v->over = 1;
}

static void put_utf8(struct value *v, unsigned c)
{
    static const unsigned char lead[4] = { 0, 0xC0, 0xE0, 0xF0 };
    int n = c < 0x80 ? 0 : c < 0x800 ? 1 : c < 0x10000 ? 2 : 3;    /* bytes after the first */

    put(v, (char)(lead[n] | c >> 6 * n));
    while (n-- > 0)
        put(v, (char)(0x80 | (c >> 6 * n & 0x3F)));
}

/* One byte of the page at offset off into the current value, if one is
 * kept: NUL is U+FFFD (WHATWG), a byte past the first bad one is Latin-1. */
static void put_byte(struct scan *s, unsigned char c, uint64_t off)
{
    struct value *v;

    if (s->attr == A_NONE)
        return;
    v = &s->val[s->attr];
    if (c == 0)
        put_utf8(v, 0xFFFD);
    else if (c >= 0x80 && off >= s->bad)
        put_utf8(v, c);
    else
        put(v, (char)c);
}

/* Windows-1252's characters for the C1 range, which numeric references
 * there stand for (WHATWG, 13.2.5.80); 0: the code point itself. */
static const unsigned short c1[32] = {
    0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
    0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
};

static unsigned numeric_char(unsigned long n)
{
    if (n == 0 || n > 0x10FFFF || (n >= 0xD800 && n <= 0xDFFF))
        return 0xFFFD;
    if (n >= 0x80 && n <= 0x9F && c1[n - 0x80])
        return c1[n - 0x80];
    return (unsigned)n;
}

/* Ends the reference in s->ref (the terminating byte not included; semi:
 * it was ';' and belongs to the reference if it is one). Returns 1 when the
 * ';' was used. */
static int charref_end(struct scan *s, int semi)
{
    struct value *v = s->attr == A_NONE ? NULL : &s->val[s->attr];
    const char *r = s->ref;
    size_t n = s->nref;

    if (!v)
        return semi;
    if (n > 2 && r[1] == '#') {
        int hex = r[2] == 'x' || r[2] == 'X';
        size_t i = hex ? 3 : 2;
        unsigned long cp = 0;
        if (i < n) {
            for (; i < n; i++) {
                int c = (unsigned char)r[i];
                int d = ascii_digit(c) ? c - '0' : ascii_lower(c) - 'a' + 10;
                if (cp <= 0x10FFFF)
                    cp = cp * (hex ? 16 : 10) + (unsigned long)d;
            }
            put_utf8(v, numeric_char(cp));
            return semi;
        }
    } else if (n > 1 && r[1] != '#' && semi && n < sizeof s->ref) {
        const htmlEntityDesc *e;
        s->ref[n] = '\0';
        e = htmlEntityLookup((const xmlChar *)r + 1);
        if (e) {
            put_utf8(v, e->value);
            return 1;
        }
    }
    for (size_t i = 0; i < n; i++)
        put(v, r[i]);
    return 0;
}

/* Is c part of the reference being read? */
static int charref_takes(const struct scan *s, int c)
{
    if (s->nref >= sizeof s->ref - 1)
        return 0;
    if (s->nref == 1)
        return c == '#' || ascii_alpha(c) || c == '_' || c == ':';
    if (s->ref[1] == '#') {
        if (s->nref == 2 && (c == 'x' || c == 'X'))
            return 1;
        return (s->nref > 2 && (s->ref[2] == 'x' || s->ref[2] == 'X')) ? ascii_hex(c)
                                                                       : ascii_digit(c);
    }
    return ascii_alpha(c) || ascii_digit(c) || c == '.' || c == '-' || c == '_' || c == ':';
}

/* ---- tags --------------------------------------------------------------- */

/* Whether the name read is lit (a strlen of each name was 6% of a scan). */
#define NAME_IS(s, lit) ((s)->nname == sizeof(lit) - 1 && memcmp((s)->name, lit, sizeof(lit) - 1) == 0)

static enum tag tag_kind(const struct scan *s)
{
    switch (s->nname) {
    case 1: return NAME_IS(s, "a") ? T_A : T_OTHER;
    case 3: return NAME_IS(s, "xmp") ? T_TEXT : T_OTHER;
    case 4: return NAME_IS(s, "base") ? T_BASE : NAME_IS(s, "meta") ? T_META : T_OTHER;
    case 5: return NAME_IS(s, "style") ? T_STYLE : NAME_IS(s, "title") ? T_TEXT : T_OTHER;
    case 6: return NAME_IS(s, "script") ? T_SCRIPT : NAME_IS(s, "iframe") ? T_TEXT : T_OTHER;
    case 7: return NAME_IS(s, "noembed") ? T_TEXT : T_OTHER;
    case 8: return NAME_IS(s, "textarea") || NAME_IS(s, "noframes") ? T_TEXT : T_OTHER;
    case 9: return NAME_IS(s, "plaintext") ? T_PLAINTEXT : T_OTHER;
    default: return T_OTHER;
    }
}

static void tag_begin(struct scan *s, int end)
{
    s->end_tag = end;
    s->nname = 0;
    s->seen = 0;
    s->attr = A_NONE;
    for (int i = 1; i < A_COUNT; i++) {
        s->val[i].len = 0;
        s->val[i].over = 0;
    }
}

static void name_add(struct scan *s, int c)
{
    if (s->nname < sizeof s->name)
        s->name[s->nname] = (char)(c == 0 ? 0x7F : ascii_lower(c));
    s->nname++;
}

/* The attribute whose name was just read: where its value goes, if it is
 * one we want and the first of its name. */
static void attr_begin(struct scan *s)
{
    enum attr a = A_NONE;

    if (s->end_tag)
        a = A_NONE;
    else if ((s->tag == T_A || s->tag == T_BASE) && NAME_IS(s, "href"))
        a = A_HREF;
    else if (s->tag == T_META && NAME_IS(s, "charset"))
        a = A_CHARSET;
    else if (s->tag == T_META && NAME_IS(s, "http-equiv"))
        a = A_EQUIV;
    else if (s->tag == T_META && NAME_IS(s, "content"))
        a = A_CONTENT;
    if (a != A_NONE && (s->seen & 1u << a))
        a = A_NONE;
    if (a != A_NONE)
        s->seen |= 1u << a;
    s->attr = a;
}

/* The charset a <meta> names, as htmlCheckMeta and htmlCheckEncoding of
 * libxml2 2.9 find it: a charset attribute, else with http-equiv
 * "Content-Type" what follows "charset" and '=' in content. NULL: none. */
static const char *meta_charset(struct scan *s)
{
    struct value *cs = &s->val[A_CHARSET], *eq = &s->val[A_EQUIV], *ct = &s->val[A_CONTENT];
    char *e;

    if (s->seen & 1u << A_CHARSET && !cs->over) {
        cs->buf[cs->len] = '\0';
        e = cs->buf;
    } else if ((s->seen & 1u << A_EQUIV) && (s->seen & 1u << A_CONTENT) && !ct->over &&
               eq->len == 12 && strncasecmp(eq->buf, "content-type", 12) == 0) {
        ct->buf[ct->len] = '\0';
        e = (char *)xmlStrcasestr((const xmlChar *)ct->buf, (const xmlChar *)"charset");
        if (!e)
            return NULL;
        e += 7;
        if (*e == ' ' || *e == '\t' || *e == '\n' || *e == '\r')
            e = strchr(ct->buf, '=');
        if (!e || *e != '=')
            return NULL;
        e++;
    } else {
        return NULL;
    }
    while (*e == ' ' || *e == '\t')
        e++;
    return e;
}

static int hold(struct scan *s, int kind, const char *v, size_t len);

/* A start tag is complete: report what it holds, and enter a text
 * element's content. Returns non-zero to stop. */
static int tag_emit(struct scan *s)
{
    struct value *h = &s->val[A_HREF];
    int has_href = (s->seen & 1u << A_HREF) && !h->over;
    int ret = 0;

    s->attr = A_NONE;
    if (s->end_tag)
        return 0;
    switch (s->tag) {
    case T_A:
        if (has_href)
            ret = s->is_shadow ? hold(s, 'a', h->buf, h->len) : s->cb->link(s->data, h->buf, h->len);
        break;
    case T_BASE:
        if (has_href && !s->based) {
            s->based = 1;
            ret = s->is_shadow ? hold(s, 'b', h->buf, h->len) : s->cb->base(s->data, h->buf, h->len);
        }
        break;
    case T_META: {
        const char *cs;
        if (s->pinned || s->meta_done || s->is_shadow || !(cs = meta_charset(s)))
            break;
        s->meta_done = 1;
        switch (s->cb->charset(s->data, cs)) {
        case SCAN_LATIN1:
            if (s->bad > s->here)
                s->bad = s->here;
            break;
        case SCAN_STOP:
            ret = 1;
            break;
        }
        break;
    }
    default:
        break;
    }
    return ret;
}

/* ---- the second tokenizer of an unclosed text element ------------------- */

static int hold(struct scan *s, int kind, const char *v, size_t len)
{
    struct scan *p = s->data;           /* a shadow's data is its parent */
    size_t need = 5 + len;
    uint32_t n = (uint32_t)len;

    if (p->nheld + need > HELD_MAX)
        return 0;                        /* past the bound: dropped */
    if (p->nheld + need > p->capheld) {
        size_t cap = p->capheld ? p->capheld * 2 : 4096;
        char *b;
        while (cap < p->nheld + need)
            cap *= 2;
        if (!(b = realloc(p->held, cap)))
            return 0;
        p->held = b;
        p->capheld = cap;
    }
    p->held[p->nheld] = (char)kind;
    memcpy(p->held + p->nheld + 1, &n, 4);
    memcpy(p->held + p->nheld + 5, v, len);
    p->nheld += need;
    return 0;
}

static void shadow_start(struct scan *s)
{
    struct scan *sh = s->shadow;

    if (s->is_shadow)
        return;
    if (!sh && !(sh = s->shadow = scan_new(s->cb, s)))
        return;                          /* no memory: the text element stays text */
    sh->is_shadow = 1;
    sh->data = s;
    sh->state = S_DATA;
    sh->attr = A_NONE;
    sh->based = s->based;
    sh->off = s->here;
    sh->stopped = 0;
    s->nheld = 0;
    s->shadowing = 1;
}

/* Reports what the shadow found, at the end of the body. */
static int shadow_commit(struct scan *s)
{
    int ret = 0;

    s->shadowing = 0;
    s->shadow->bad = s->bad;
    scan_finish(s->shadow);
    for (size_t i = 0; i < s->nheld && !ret; ) {
        uint32_t n;
        memcpy(&n, s->held + i + 1, 4);
        if (s->held[i] == 'a') {
            ret = s->cb->link(s->data, s->held + i + 5, n);
        } else if (!s->based) {
            s->based = 1;
            ret = s->cb->base(s->data, s->held + i + 5, n);
        }
        i += 5 + n;
    }
    s->nheld = 0;
    return ret;
}

/* ---- the tokenizer ------------------------------------------------------ */

/* Runs the state machine over buf[0..len). Returns the bytes used: len, or
 * fewer when a callback stopped it. */
static size_t tokenize(struct scan *s, const unsigned char *buf, size_t len)
{
    size_t i = 0, shadow_from = 0;
    const unsigned char *q;

    while (i < len) {
        int c = buf[i];
        switch (s->state) {
        case S_DATA:
            q = memchr(buf + i, '<', len - i);
            if (!q) {
                i = len;
                break;
            }
            i = (size_t)(q - buf) + 1;
            s->state = S_TAG_OPEN;
            break;
        case S_TAG_OPEN:
            if (c == '!') {
                s->state = S_MARKUP;
                i++;
            } else if (c == '/') {
                s->state = S_END_TAG_OPEN;
                i++;
            } else if (ascii_alpha(c)) {
                tag_begin(s, 0);
                s->state = S_TAG_NAME;
            } else if (c == '?') {
                s->state = S_BOGUS;
            } else {
                s->state = S_DATA;
            }
            break;
        case S_END_TAG_OPEN:
            if (ascii_alpha(c)) {
                tag_begin(s, 1);
                s->state = S_TAG_NAME;
            } else if (c == '>') {
                s->state = S_DATA;
                i++;
            } else {
                s->state = S_BOGUS;
            }
            break;
        case S_TAG_NAME:
            if (ascii_ws(c) || c == '/' || c == '>') {
                s->tag = tag_kind(s);
                if (s->tag >= T_SCRIPT) {       /* attribute names reuse name[] */
                    memcpy(s->raw, s->name, sizeof s->raw);
                    s->nraw = s->nname;
                }
                s->state = c == '/' ? S_SELF_CLOSING : c == '>' ? S_DATA : S_BEFORE_ATTR_NAME;
                i++;
                if (c == '>')
                    goto emit;
            } else {
                do              /* the rest of the name, without a dispatch a byte */
                    name_add(s, buf[i++]);
                while (i < len && !ascii_ws(buf[i]) && buf[i] != '/' && buf[i] != '>');
            }
            break;
        case S_BEFORE_ATTR_NAME:
            if (ascii_ws(c)) {
                i++;
            } else if (c == '/' || c == '>') {
                s->state = S_AFTER_ATTR_NAME;
            } else {
                s->nname = 0;
                name_add(s, c);         /* '=' here starts a name (an error) */
                s->state = S_ATTR_NAME;
                i++;
            }
            break;
        case S_ATTR_NAME:
            if (ascii_ws(c) || c == '/' || c == '>') {
                attr_begin(s);
                s->state = S_AFTER_ATTR_NAME;
            } else if (c == '=') {
                attr_begin(s);
                s->state = S_BEFORE_VALUE;
                i++;
            } else {
                do
                    name_add(s, buf[i++]);
                while (i < len && !ascii_ws(buf[i]) && buf[i] != '/' && buf[i] != '>' &&
                       buf[i] != '=');
            }
            break;
        case S_AFTER_ATTR_NAME:
            if (ascii_ws(c)) {
                i++;
            } else if (c == '/') {
                s->attr = A_NONE;
                s->state = S_SELF_CLOSING;
                i++;
            } else if (c == '=') {
                s->state = S_BEFORE_VALUE;
                i++;
            } else if (c == '>') {
                s->state = S_DATA;
                i++;
                goto emit;
            } else {
                s->attr = A_NONE;
                s->nname = 0;
                s->state = S_ATTR_NAME;
            }
            break;
        case S_BEFORE_VALUE:
            if (ascii_ws(c)) {
                i++;
            } else if (c == '"' || c == '\'') {
                s->state = c == '"' ? S_VALUE_DQ : S_VALUE_SQ;
                i++;
            } else if (c == '>') {
                s->state = S_DATA;
                i++;
                goto emit;
            } else {
                s->state = S_VALUE_UQ;
            }
            break;
        case S_VALUE_DQ:
        case S_VALUE_SQ: {
            int quote = s->state == S_VALUE_DQ ? '"' : '\'';
            if (s->attr == A_NONE) {     /* not kept: skip to the quote or '&' */
                q = memchr(buf + i, quote, len - i);
                if (!q) {
                    i = len;
                    break;
                }
                i = (size_t)(q - buf);
                c = quote;
            }
            if (c == quote) {
                s->state = S_AFTER_VALUE;
            } else if (c == '&') {
                s->back = s->state;
                s->ref[0] = '&';
                s->nref = 1;
                s->state = S_CHARREF;
            } else {
                do
                    put_byte(s, buf[i], s->off + i);
                while (++i < len && buf[i] != quote && buf[i] != '&');
                break;
            }
            i++;
            break;
        }
        case S_VALUE_UQ:
            if (ascii_ws(c)) {
                s->attr = A_NONE;
                s->state = S_BEFORE_ATTR_NAME;
            } else if (c == '&') {
                s->back = S_VALUE_UQ;
                s->ref[0] = '&';
                s->nref = 1;
                s->state = S_CHARREF;
            } else if (c == '>') {
                s->state = S_DATA;
                i++;
                goto emit;
            } else {
                put_byte(s, (unsigned char)c, s->off + i);
            }
            i++;
            break;
        case S_AFTER_VALUE:
            s->attr = A_NONE;
            if (ascii_ws(c)) {
                s->state = S_BEFORE_ATTR_NAME;
                i++;
            } else if (c == '/') {
                s->state = S_SELF_CLOSING;
                i++;
            } else if (c == '>') {
                s->state = S_DATA;
                i++;
                goto emit;
            } else {
                s->state = S_BEFORE_ATTR_NAME;
            }
            break;
        case S_SELF_CLOSING:
            if (c == '>') {
                s->state = S_DATA;
                i++;
                goto emit;
            }
            s->state = S_BEFORE_ATTR_NAME;
            break;
        case S_CHARREF:
            if (charref_takes(s, c)) {
                s->ref[s->nref++] = (char)c;
                i++;
            } else {
                if (charref_end(s, c == ';'))
                    i++;
                s->state = s->back;
            }
            break;
        case S_MARKUP:
            s->state = c == '-' ? S_MARKUP_DASH : S_BOGUS;
            i += c == '-';
            break;
        case S_MARKUP_DASH:
            s->state = c == '-' ? S_COMMENT_START : S_BOGUS;
            i += c == '-';
            break;
        case S_BOGUS:                   /* also <!DOCTYPE> and <![CDATA[ in HTML */
            q = memchr(buf + i, '>', len - i);
            if (!q) {
                i = len;
                break;
            }
            i = (size_t)(q - buf) + 1;
            s->state = S_DATA;
            break;
        case S_COMMENT_START:
            if (c == '-') {
                s->state = S_COMMENT_START_DASH;
                i++;
            } else if (c == '>') {
                s->state = S_DATA;      /* <!--> */
                i++;
            } else {
                s->state = S_COMMENT;
            }
            break;
        case S_COMMENT_START_DASH:
            if (c == '-') {
                s->state = S_COMMENT_END;
                i++;
            } else if (c == '>') {
                s->state = S_DATA;      /* <!---> */
                i++;
            } else {
                s->state = S_COMMENT;
            }
            break;
        case S_COMMENT:
            q = memchr(buf + i, '-', len - i);
            if (!q) {
                i = len;
                break;
            }
            i = (size_t)(q - buf) + 1;
            s->state = S_COMMENT_END_DASH;
            break;
        case S_COMMENT_END_DASH:
            if (c == '-') {
                s->state = S_COMMENT_END;
                i++;
            } else {
                s->state = S_COMMENT;
            }
            break;
        case S_COMMENT_END:
            if (c == '>') {
                s->state = S_DATA;
                i++;
            } else if (c == '!') {
                s->state = S_COMMENT_END_BANG;
                i++;
            } else if (c == '-') {
                i++;
            } else {
                s->state = S_COMMENT;
            }
            break;
        case S_COMMENT_END_BANG:
            if (c == '-') {
                s->state = S_COMMENT_END_DASH;
                i++;
            } else if (c == '>') {
                s->state = S_DATA;      /* --!> */
                i++;
            } else {
                s->state = S_COMMENT;
            }
            break;
        case S_RAW:
            q = memchr(buf + i, '<', len - i);
            if (!q) {
                i = len;
                break;
            }
            i = (size_t)(q - buf) + 1;
            s->state = S_RAW_LT;
            break;
        case S_RAW_LT:
            if (c == '/') {
                s->rawmatch = 0;
                s->state = S_RAW_END;
                i++;
            } else {
                s->state = S_RAW;
            }
            break;
        case S_RAW_END:
            if (s->rawmatch < s->nraw && ascii_lower(c) == s->raw[s->rawmatch]) {
                s->rawmatch++;
                i++;
            } else if (s->rawmatch == s->nraw && (ascii_ws(c) || c == '/' || c == '>')) {
                /* The end tag: read on as one (its attributes are ignored). */
                tag_begin(s, 1);
                memcpy(s->name, s->raw, sizeof s->name);
                s->nname = s->nraw;
                s->tag = T_OTHER;
                s->state = S_TAG_NAME;
                s->shadowing = 0;
                s->nheld = 0;
            } else {
                s->state = S_RAW;
            }
            break;
        case S_PLAINTEXT:
            i = len;
            break;
        }
        continue;
emit:
        s->here = s->off + i;
        if (tag_emit(s)) {
            s->stopped = 1;
            s->off += i;
            return i;
        }
        if (!s->end_tag && s->tag >= T_SCRIPT) {
            s->state = s->tag == T_PLAINTEXT ? S_PLAINTEXT : S_RAW;
            if (s->tag == T_TEXT || s->tag == T_PLAINTEXT) {
                shadow_start(s);
                shadow_from = i;
            }
        }
    }
    if (s->shadowing && shadow_from < len) {
        s->shadow->bad = s->bad;
        tokenize(s->shadow, buf + shadow_from, len - shadow_from);
    }
    s->off += len;
    return len;
}

/* ---- UTF-8 ---------------------------------------------------------------- */

/* Checks buf as UTF-8 from where the last call stopped; the first error
 * sets s->bad to the offset of the sequence's first byte. */
static void check_utf8(struct scan *s, const unsigned char *buf, size_t len)
{
    for (size_t i = 0; i < len && s->bad == NO_OFFSET; i++) {
        unsigned c;
        if (s->need == 0) {
            uint64_t w;         /* ASCII eight bytes at a time */
            while (len - i >= 8 && (memcpy(&w, buf + i, 8), (w & 0x8080808080808080u) == 0))
                i += 8;
            if (i == len)
                break;
            if ((c = buf[i]) < 0x80)
                continue;
            s->lead_off = s->voff + i;
            if ((c & 0x40) == 0 || c >= 0xF8) {
                s->bad = s->lead_off;
            } else if (c < 0xE0) {
                s->need = 1, s->uval = c & 0x1F, s->umin = 0x80;
            } else if (c < 0xF0) {
                s->need = 2, s->uval = c & 0x0F, s->umin = 0x800;
            } else {
                s->need = 3, s->uval = c & 0x07, s->umin = 0x10000;
            }
        } else if (((c = buf[i]) & 0xC0) != 0x80) {
            s->bad = s->lead_off;
            s->need = 0;
        } else {
            s->uval = s->uval << 6 | (c & 0x3F);
            if (--s->need == 0 && s->uval < s->umin)
                s->bad = s->lead_off;
        }
    }
    if (s->bad != NO_OFFSET)
        s->need = 0;
    s->voff += len;
}

size_t scan_feed(struct scan *s, const char *buf, size_t len)
{
    const unsigned char *b = (const unsigned char *)buf;
    size_t keep = 0, used;

    if (s->stopped || len == 0)
        return 0;
    check_utf8(s, b, len);
    /* A sequence cut by the chunk waits, so that its bytes are read the
     * same way whatever the cut: as UTF-8, or as Latin-1 if it is bad. */
    if (s->ncarry) {
        if (s->need > 0 && s->lead_off < s->voff - len) {     /* still the carried one */
            memcpy(s->carry + s->ncarry, b, len);
            s->ncarry += len;
            return len;
        }
        tokenize(s, s->carry, s->ncarry);
        s->ncarry = 0;
        if (s->stopped)
            return 0;
    }
    if (s->need > 0)
        keep = (size_t)(s->voff - s->lead_off);
    used = tokenize(s, b, len - keep);
    if (s->stopped)
        return used;
    memcpy(s->carry, b + len - keep, keep);
    s->ncarry = keep;
    return len;
}

int scan_finish(struct scan *s)
{
    if (s->stopped)
        return 1;
    if (s->ncarry) {
        s->bad = s->bad < s->lead_off ? s->bad : s->lead_off;
        s->need = 0;
        tokenize(s, s->carry, s->ncarry);
        s->ncarry = 0;
        if (s->stopped)
            return 1;
    }
    /* A start tag the body ends inside is still reported (libxml2 2.9). */
    switch (s->state) {
    case S_CHARREF:
        charref_end(s, 0);
        /* fall through */
    case S_TAG_NAME: case S_BEFORE_ATTR_NAME: case S_ATTR_NAME: case S_AFTER_ATTR_NAME:
    case S_BEFORE_VALUE: case S_VALUE_DQ: case S_VALUE_SQ: case S_VALUE_UQ:
    case S_AFTER_VALUE: case S_SELF_CLOSING:
        if (s->state == S_TAG_NAME)
            s->tag = tag_kind(s);
        else if (s->state == S_ATTR_NAME)
            attr_begin(s);
        s->state = S_DATA;
        s->here = s->off;
        if (!s->end_tag && s->tag <= T_META && tag_emit(s))
            s->stopped = 1;
        break;
    case S_RAW: case S_RAW_LT: case S_RAW_END: case S_PLAINTEXT:
        if (s->shadowing && shadow_commit(s))
            s->stopped = 1;
        break;
    default:
        break;
    }
    return s->stopped;
}
