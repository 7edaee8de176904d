/* DeepSeek DSML tool calls (V3.2, V4, V4.1) and GigaChat 3.5's GCML (the
 * same tags with another marker, `<｜GCML｜tool_calls>`, `<｜GCML｜invoke`,
 * `<｜GCML｜parameter`): one engine, tags as data (FAMILIES).
 *
 *   <｜DSML｜function_calls>
 *   <｜DSML｜invoke name="NAME">
 *   <｜DSML｜parameter name="KEY" string="true">raw text</｜DSML｜parameter>
 *   <｜DSML｜parameter name="KEY" string="false">JSON</｜DSML｜parameter>
 *   </｜DSML｜invoke>
 *   <｜DSML｜invoke name="NAME">{"direct": "JSON body"}</｜DSML｜invoke>
 *   <｜DSML｜invoke name="NAME"/>
 *   </｜DSML｜function_calls>
 *
 * V4 names the block `tool_calls`; V4.1 uses ` calls`, ` invoke` and
 * ` parameter` (with a leading space). Models write each other's spellings,
 * so every DSML parser reads all of them (the block as `function_calls`,
 * `tool_calls`, ` calls` or `calls`; invoke and parameter tags with or
 * without the space): the three formats share one tag table.
 *
 * A call is announced (CallStart) when its body begins well-formed: at a
 * complete parameter opening tag, at the `{` of a direct JSON body, or at
 * the invoke's own end (`/>`, or its end tag when it has no parameters). An
 * invoke whose body is malformed before that (an undecorated
 * `<parameter ...>`, prose and no parameter) is reported and emits nothing.
 *
 * The invoke name is checked against the tools when its tag closes. A
 * string parameter streams as JSON string content while it is generated:
 * `{"KEY": "` is written as soon as the tag opens, the value's bytes are
 * escaped as json.dumps escapes them, and a run of whitespace is held back
 * until something else follows (SGLang strips string values, so leading
 * and trailing whitespace is not part of the value). A non-string value is
 * buffered (bounded by max_buffer) until it closes, then written as
 * normalized JSON when it is valid JSON without NaN/Infinity constants,
 * and as a JSON string of its stripped text otherwise (SGLang's fallback).
 * A direct JSON body streams through the JSON normalizer. */
#include <stdio.h>
#include <string.h>

#include "tp_internal.h"
#include "tp_swar.h"

#define DSML "\xef\xbd\x9c" "DSML" "\xef\xbd\x9c" /* ｜DSML｜ */
#define GCML "\xef\xbd\x9c" "GCML" "\xef\xbd\x9c" /* ｜GCML｜ (GigaChat 3.5) */

enum {
    D_TEXT,       /* prose */
    D_BLOCK,      /* inside the block, between invokes */
    D_INV_WS,     /* after <｜DSML｜invoke: whitespace */
    D_INV_LIT,    /* name=" */
    D_INV_NAME,   /* the tool name, up to " */
    D_INV_CLOSE,  /* > or /> */
    D_INV_SLASH,  /* > of /> */
    D_BODY,       /* start of the body: { (JSON) or parameters */
    D_JSON,       /* direct JSON body */
    D_AFTER_JSON, /* after the JSON body, up to </｜DSML｜invoke> */
    D_PARAMS,     /* between parameters */
    D_P_WS,       /* after <｜DSML｜parameter: whitespace */
    D_P_LIT,      /* name=" */
    D_P_NAME,     /* parameter name, up to " */
    D_P_WS2,      /* whitespace */
    D_P_LIT2,     /* string=" */
    D_P_STR,      /* the string attribute, up to " */
    D_P_CLOSE,    /* > */
    D_VALUE,      /* parameter value, up to </｜DSML｜parameter> */
    D_SKIP,       /* a dropped invoke: up to its end */
};

/* text_m markers */
enum { X_BOT, X_INV_START, X_EOT, X_INV_END, X_PARAM_END };
/* tag_m markers */
enum { K_INV_START, K_INV_END, K_EOT, K_PARAM_START, K_PARAM_END };
/* value_m markers */
enum { V_PARAM_END, V_INV_END, V_EOT };

/* Every DSML parser reads every spelling of every tag (V3.2, V4 and V4.1
 * models have been seen writing each other's): one tag table, shared. A
 * matcher's pattern index maps to its tag kind (X_*, K_*, V_*). */
typedef struct {
    tp_matcher m;
    uint8_t kind[TP_MARKER_MAX_PATS];
} tagset;

typedef struct {
    tagset text, tag, value;
} dsml_tags;


static int kind_of(const tagset *t, int match) { return match < 0 ? -1 : t->kind[match]; }

/* per-parser state kept in the generic fields:
 *   mode     D_* state
 *   first    1 inside a block (0: a bare invoke)
 *   fstate   attribute parsing: whitespace seen / position in a literal
 *   name     invoke name; then the string="..." attribute of a parameter
 *   key      parameter name; then the bytes of a UTF-8 character split
 *            across chunks
 *   have_name  continuation bytes still missing from that character
 *   vkind    1: the parameter is a string
 *   have_args  a parameter was written
 *   discard  non-markup text was seen between parameters
 *   trailing_reported  string value: a non-space character was written;
 *            after a JSON body: trailing content was reported
 *   pending  string value: held whitespace (escaped); otherwise the raw
 *            value
 *   call_off stream offset where the attribute or value being buffered
 *            starts (limit errors are reported there, so the offset does
 *            not depend on the chunking) */

/* tag kinds, one set for all matchers */
enum { T_BOT, T_EOT, T_INV_START, T_INV_END, T_PAR_START, T_PAR_END, NKIND };
#define NBLOCK_MAX 4
#define NTAG_MAX 2

/* A family of spellings, one row each: the marker between the tag's `<` and
 * its name, the block names, and the invoke / parameter tag names. Every
 * parser of a family reads all of the family's spellings. */
typedef struct {
    const char *marker;
    const char *blocks[NBLOCK_MAX];
    const char *invokes[NTAG_MAX], *params[NTAG_MAX];
    uint8_t nblock, ntag;
    char spell[NKIND][NBLOCK_MAX][48]; /* the tags, built once (the matchers point here) */
    uint8_t nspell[NKIND];
    dsml_tags tags;
} dsml_family;

static dsml_family FAMILIES[] = {
    /* DeepSeek V3.2 / V4 / V4.1: the block as function_calls, tool_calls,
     * " calls" or "calls"; invoke and parameter with or without V4.1's
     * leading space */
    {DSML, {"function_calls", "tool_calls", " calls", "calls"}, {"invoke", " invoke"},
     {"parameter", " parameter"}, 4, 2},
    /* GigaChat 3.5 (GCML) */
    {GCML, {"tool_calls"}, {"invoke"}, {"parameter"}, 1, 1},
};
#define NFAMILIES (sizeof(FAMILIES) / sizeof(FAMILIES[0]))

static int tagset_build(const dsml_family *f, tagset *t, const int *kinds, const int *as, int nk)
{
    const char *pats[TP_MARKER_MAX_PATS];
    int n = 0;
    for (int k = 0; k < nk; k++)
        for (int v = 0; v < f->nspell[kinds[k]]; v++) {
            if (n == TP_MARKER_MAX_PATS)
                return -1;
            t->kind[n] = (uint8_t)as[k];
            pats[n++] = f->spell[kinds[k]][v];
        }
    return tp_matcher_build(&t->m, pats, n);
}

static int family_build(dsml_family *f)
{
    const char *m = f->marker;
    for (int v = 0; v < f->nblock; v++) {
        snprintf(f->spell[T_BOT][v], 48, "<%s%s>", m, f->blocks[v]);
        snprintf(f->spell[T_EOT][v], 48, "</%s%s>", m, f->blocks[v]);
    }
    for (int v = 0; v < f->ntag; v++) {
        snprintf(f->spell[T_INV_START][v], 48, "<%s%s", m, f->invokes[v]);
        snprintf(f->spell[T_INV_END][v], 48, "</%s%s>", m, f->invokes[v]);
        snprintf(f->spell[T_PAR_START][v], 48, "<%s%s", m, f->params[v]);
        snprintf(f->spell[T_PAR_END][v], 48, "</%s%s>", m, f->params[v]);
    }
    f->nspell[T_BOT] = f->nspell[T_EOT] = f->nblock;
    f->nspell[T_INV_START] = f->nspell[T_INV_END] = f->nspell[T_PAR_START] = f->nspell[T_PAR_END] = f->ntag;
    static const int text_k[] = {T_BOT, T_INV_START, T_EOT, T_INV_END, T_PAR_END};
    static const int text_a[] = {X_BOT, X_INV_START, X_EOT, X_INV_END, X_PARAM_END};
    static const int tag_k[] = {T_INV_START, T_INV_END, T_EOT, T_PAR_START, T_PAR_END};
    static const int tag_a[] = {K_INV_START, K_INV_END, K_EOT, K_PARAM_START, K_PARAM_END};
    static const int value_k[] = {T_PAR_END, T_INV_END, T_EOT};
    static const int value_a[] = {V_PARAM_END, V_INV_END, V_EOT};
    if (tagset_build(f, &f->tags.text, text_k, text_a, 5) || tagset_build(f, &f->tags.tag, tag_k, tag_a, 5))
        return -1;
    return tagset_build(f, &f->tags.value, value_k, value_a, 3);
}

static void str_tables_init(void);

int tp_fmt_dsml_init(void)
{
    str_tables_init();
    for (size_t i = 0; i < NFAMILIES; i++)
        if (family_build(&FAMILIES[i]))
            return -1;
    return 0;
}

/* ---- JSON string content ---- */

static const char HEX[] = "0123456789abcdef";

/* Writes one character (len bytes of UTF-8) as json.dumps(ensure_ascii=False)
 * writes it inside a string. */
static int put_esc_char(tp_buf *out, const uint8_t *c, size_t len)
{
    if (len == 1) {
        uint8_t b = c[0];
        switch (b) {
        case '"': return tp_buf_append(out, "\\\"", 2);
        case '\\': return tp_buf_append(out, "\\\\", 2);
        case '\n': return tp_buf_append(out, "\\n", 2);
        case '\r': return tp_buf_append(out, "\\r", 2);
        case '\t': return tp_buf_append(out, "\\t", 2);
        case '\b': return tp_buf_append(out, "\\b", 2);
        case '\f': return tp_buf_append(out, "\\f", 2);
        default: break;
        }
        if (b < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', HEX[b >> 4], HEX[b & 0xF]};
            return tp_buf_append(out, e, 6);
        }
    }
    return tp_buf_append(out, c, len);
}

static size_t utf8_len(uint8_t c)
{
    return c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
}

static int put_esc(tp_buf *out, const uint8_t *s, size_t n)
{
    size_t k = 0;
    while (k < n) {
        size_t e = k;
        while (e < n && s[e] >= 0x20 && s[e] != '"' && s[e] != '\\')
            e++;
        if (e > k && tp_buf_append(out, s + k, e - k))
            return -1;
        if (e == n)
            break;
        if (put_esc_char(out, s + e, 1))
            return -1;
        k = e + 1;
    }
    return 0;
}

/* Python's str.isspace() */
static int py_space(uint32_t cp)
{
    return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 ||
           cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 ||
           cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

static uint32_t decode(const uint8_t *c, size_t len)
{
    switch (len) {
    case 1: return c[0];
    case 2: return ((uint32_t)(c[0] & 0x1F) << 6) | (c[1] & 0x3F);
    case 3: return ((uint32_t)(c[0] & 0x0F) << 12) | ((uint32_t)(c[1] & 0x3F) << 6) | (c[2] & 0x3F);
    default:
        return ((uint32_t)(c[0] & 0x07) << 18) | ((uint32_t)(c[1] & 0x3F) << 12) |
               ((uint32_t)(c[2] & 0x3F) << 6) | (c[3] & 0x3F);
    }
}

/* str.strip() of UTF-8 text: [*a, *b) */
static void py_strip(const uint8_t *s, size_t n, size_t *a, size_t *b)
{
    size_t i = 0;
    while (i < n) {
        size_t l = utf8_len(s[i]);
        if (i + l > n || !py_space(decode(s + i, l)))
            break;
        i += l;
    }
    size_t j = n;
    while (j > i) {
        size_t k = j - 1;
        while (k > i && (s[k] & 0xC0) == 0x80)
            k--;
        size_t l = j - k;
        if (l != utf8_len(s[k]) || !py_space(decode(s + k, l)))
            break;
        j = k;
    }
    *a = i;
    *b = j;
}

/* ---- string parameter values ---- */

/* One character of a string value. Returns 0, or -1 if the held
 * whitespace would exceed its limit. */
static int str_char(tp_parser *p, const uint8_t *c, size_t len)
{
    if (py_space(decode(c, len))) {
        if (!p->trailing_reported)
            return 0; /* leading whitespace: stripped */
        return put_esc_char(&p->pending, c, len);
    }
    if (p->pending.len) {
        if (tp_buf_append(&p->out, p->pending.data, p->pending.len))
            p->oom = 1;
        tp_buf_clear(&p->pending);
    }
    p->trailing_reported = 1;
    if (put_esc_char(&p->out, c, len))
        p->oom = 1;
    return 0;
}

/* Byte classes of string values: a run of non-space characters is found
 * and written whole (escaped in one pass), a run of ASCII whitespace is
 * held whole; only other whitespace characters (U+0085, U+00A0, U+2000...,
 * which SGLang's strip() removes too), invalid UTF-8 and a character cut by
 * the chunk's end take the character-by-character path. */
enum { B_PLAIN, B_ESC, B_WS, B_HIGH };
static uint8_t BCLS[256];
static uint8_t ESCLEN[256]; /* bytes of a byte's JSON escape (1: as is) */

static void str_tables_init(void)
{
    for (int c = 0; c < 256; c++) {
        uint8_t e = 1;
        if (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f')
            e = 2;
        else if (c < 0x20)
            e = 6;
        ESCLEN[c] = e;
        BCLS[c] = c >= 0x80 ? B_HIGH : py_space((uint32_t)c) ? B_WS : e > 1 ? B_ESC : B_PLAIN;
    }
}

/* Appends s[0:n) escaped, `extra` being the sum of (ESCLEN - 1) over it. */
static int esc_copy(tp_buf *out, const uint8_t *s, size_t n, size_t extra)
{
    if (tp_buf_reserve(out, n + extra))
        return -1;
    uint8_t *o = out->data + out->len;
    if (extra == 0) {
        memcpy(o, s, n);
        out->len += n;
        return 0;
    }
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j + 8 <= n && !tp_esc8(tp_load8(s + j)))
            j += 8;
        while (j < n && ESCLEN[s[j]] == 1)
            j++;
        memcpy(o, s + i, j - i);
        o += j - i;
        if (j == n)
            break;
        uint8_t c = s[j];
        i = j + 1;
        if (ESCLEN[c] == 2) {
            *o++ = '\\';
            *o++ = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : c == '\b' ? 'b' : c == '\f' ? 'f' : c;
        } else {
            o[0] = '\\', o[1] = 'u', o[2] = '0', o[3] = '0', o[4] = (uint8_t)HEX[c >> 4], o[5] = (uint8_t)HEX[c & 0xF];
            o += 6;
        }
    }
    out->len = (size_t)(o - out->data);
    return 0;
}

/* Length of the character starting with s[0] >= 0x80 (n >= 1 bytes
 * available): its UTF-8 length, 1 for a byte that starts no character (a
 * lone continuation byte, or a lead byte followed by a non-continuation
 * byte), 0 when the chunk ends inside it. */
static size_t char_at(const uint8_t *s, size_t n)
{
    if (s[0] < 0xC0)
        return 1;
    size_t len = utf8_len(s[0]);
    for (size_t q = 1; q < len; q++) {
        if (q >= n)
            return 0;
        if ((s[q] & 0xC0) != 0x80)
            return 1;
    }
    return len;
}

static void flush_pending(tp_parser *p)
{
    if (p->pending.len) {
        if (tp_buf_append(&p->out, p->pending.data, p->pending.len))
            p->oom = 1;
        tp_buf_clear(&p->pending);
    }
}

static int str_text(tp_parser *p, const uint8_t *s, size_t n)
{
    size_t start = p->out.len;
    int r = 0;
    size_t k = 0;
    while (k < n && !r) {
        uint8_t c = s[k];
        if (p->have_name && (c & 0xC0) != 0x80) {
            /* invalid UTF-8: the held lead byte was no character start;
             * pass the held bytes through one by one, then read c afresh */
            for (size_t h = 0; h < p->key.len && !r; h++)
                r = str_char(p, p->key.data + h, 1);
            tp_buf_clear(&p->key);
            p->have_name = 0;
            continue;
        }
        if (p->have_name) { /* continuing a split character */
            if (tp_buf_push(&p->key, c)) {
                r = -1;
                break;
            }
            k++;
            if (--p->have_name == 0) {
                r = str_char(p, p->key.data, p->key.len);
                tp_buf_clear(&p->key);
            }
            continue;
        }
        if (!p->trailing_reported) { /* leading ASCII whitespace: stripped */
            while (k < n && BCLS[s[k]] == B_WS)
                k++;
            if (k == n)
                break;
            c = s[k];
        }
        /* A run of characters: ASCII, and valid UTF-8 that is not
         * whitespace. Up to its last non-space character (z) it is written
         * (the held whitespace first); its trailing ASCII whitespace is held:
         * it may end the value. extra: bytes its escapes add. */
        size_t e = k, z = k, extra = 0;
        while (e < n) {
            if (e + 8 <= n) { /* eight ASCII bytes, none escaped, the last no space */
                uint64_t x = tp_load8(s + e);
                if (!tp_esc8(x) && !(x & TP_HIGHS) && (x >> 56) != ' ') {
                    z = e += 8;
                    continue;
                }
            }
            uint8_t b = s[e];
            uint8_t cl = BCLS[b];
            if (cl == B_PLAIN) {
                z = ++e;
            } else if (cl == B_WS) {
                extra += ESCLEN[b] - 1u;
                e++;
            } else if (cl == B_ESC) {
                extra += ESCLEN[b] - 1u;
                z = ++e;
            } else {
                size_t l = char_at(s + e, n - e);
                if (l == 0 || py_space(decode(s + e, l)))
                    break;
                z = e += l;
            }
        }
        if (e > k) {
            size_t tail = 0; /* escape bytes of [z, e) */
            for (size_t q = z; q < e; q++)
                tail += ESCLEN[s[q]] - 1u;
            if (z > k) {
                flush_pending(p);
                p->trailing_reported = 1;
                if (esc_copy(&p->out, s + k, z - k, extra - tail))
                    p->oom = 1;
            }
            if (e > z && esc_copy(&p->pending, s + z, e - z, tail)) {
                r = -1;
                break;
            }
            k = e;
            continue;
        }
        /* another whitespace character, or one the chunk cuts */
        size_t len = char_at(s + k, n - k);
        if (len == 0) {
            tp_buf_clear(&p->key);
            if (tp_buf_append(&p->key, s + k, n - k)) {
                r = -1;
                break;
            }
            p->have_name = (uint8_t)(utf8_len(c) - (n - k));
            break;
        }
        r = str_char(p, s + k, len);
        k += len;
    }
    tp_ev_args_from(p, start);
    return r;
}

static int value_text(tp_parser *p, const uint8_t *s, size_t n)
{
    if (n == 0)
        return 0;
    if (p->vkind)
        return str_text(p, s, n);
    return tp_buf_append(&p->pending, s, n);
}

/* NaN / Infinity outside strings: json.loads(parse_constant=reject) fails */
static int has_constant(const uint8_t *s, size_t n)
{
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (c == 'N' || c == 'I') {
            return 1;
        }
    }
    return 0;
}

static void nonstr_done(tp_parser *p)
{
    size_t a, b;
    py_strip(p->pending.data, p->pending.len, &a, &b);
    const uint8_t *v = p->pending.len ? p->pending.data + a : (const uint8_t *)""; /* data may be NULL */
    size_t n = b - a;
    size_t start = p->out.len;
    int ok = 0;
    if (n && !has_constant(v, n)) {
        tp_json_init(&p->js, TPJ_MODE_NORMAL, p->lim.max_depth);
        size_t k = tp_json_feed(&p->js, v, n, &p->out);
        ok = !tp_json_failed(&p->js) && k == n && tp_json_end(&p->js, &p->out);
    }
    if (!ok) { /* not JSON: the stripped text as a string */
        p->out.len = start;
        if (tp_buf_push(&p->out, '"') || put_esc(&p->out, v, n) || tp_buf_push(&p->out, '"'))
            p->oom = 1;
    }
    tp_buf_clear(&p->pending);
    tp_buf_shrink(&p->pending, 0);
    tp_ev_args_from(p, start);
}

/* ---- invoke lifecycle ---- */

static void new_invoke(tp_parser *p)
{
    p->mode = D_INV_WS;
    p->fstate = 0;
    p->node = 0;
    tp_buf_clear(&p->name);
}

static void invoke_over(tp_parser *p)
{
    p->mode = p->first ? D_BLOCK : D_TEXT;
    p->node = 0;
    p->after_call = 1;
}

static void block_over(tp_parser *p)
{
    p->first = 0;
    p->mode = D_TEXT;
    p->node = 0;
    p->after_call = 1;
}

static void skip_invoke(tp_parser *p)
{
    p->mode = D_SKIP;
    p->node = 0;
    tp_buf_clear(&p->pending);
    tp_buf_shrink(&p->pending, 0);
}

/* an error in the open call (or the invoke tag): report, skip the invoke */
static void fail(tp_parser *p, int code, uint64_t off)
{
    tp_call_fail(p, code, off);
    skip_invoke(p);
}

/* the invoke ends (its end tag, or a tolerated missing one) */
static void finish_invoke(tp_parser *p, uint64_t off)
{
    if (p->have_args) {
        tp_ev_args(p, (const uint8_t *)"}", 1);
    } else if (p->discard) {
        /* text but no parameter: SGLang drops such an invoke */
        tp_call_fail(p, TP_ERR_BAD_MARKUP, off);
        p->after_call = 1;
        return;
    } else {
        tp_call_announce(p); /* announce point: the invoke's own end tag */
        tp_ev_args(p, (const uint8_t *)"{}", 2);
    }
    tp_call_close(p);
}

static int open_invoke(tp_parser *p, uint64_t off)
{
    size_t a, b;
    py_strip(p->name.data, p->name.len, &a, &b);
    p->have_args = 0;
    p->discard = 0;
    return tp_call_open(p, p->name.data + a, b - a, off);
}

static void begin_value(tp_parser *p)
{
    p->vkind = p->name.len == 4 && memcmp(p->name.data, "true", 4) == 0;
    tp_call_announce(p); /* announce point: a complete parameter opening tag */
    size_t start = p->out.len;
    int r = tp_buf_append(&p->out, p->have_args ? ", \"" : "{\"", p->have_args ? 3 : 2);
    r = r || put_esc(&p->out, p->key.data, p->key.len);
    r = r || tp_buf_append(&p->out, p->vkind ? "\": \"" : "\": ", p->vkind ? 4 : 3);
    if (r)
        p->oom = 1;
    tp_ev_args_from(p, start);
    p->have_args = 1;
    p->trailing_reported = 0;
    p->have_name = 0;
    tp_buf_clear(&p->key);
    tp_buf_clear(&p->pending);
    p->mode = D_VALUE;
    p->node = 0;
}

static void end_value(tp_parser *p)
{
    if (p->vkind) {
        if (p->have_name) { /* a truncated character: keep its bytes */
            size_t start = p->out.len;
            if (tp_buf_append(&p->out, p->pending.data, p->pending.len) ||
                tp_buf_append(&p->out, p->key.data, p->key.len))
                p->oom = 1;
            tp_ev_args_from(p, start);
            p->have_name = 0;
        }
        tp_buf_clear(&p->pending); /* trailing whitespace: stripped */
        tp_ev_args(p, (const uint8_t *)"\"", 1);
    } else {
        nonstr_done(p);
    }
    p->mode = D_PARAMS;
    p->node = 0;
}

/* Matches a literal byte by byte (fstate = position). 1: complete,
 * 0: continuing, -1: mismatch. */
static int lit_step(tp_parser *p, uint8_t c, const char *lit)
{
    if (c != (uint8_t)lit[p->fstate])
        return -1;
    p->fstate++;
    return lit[p->fstate] == 0;
}

static void dsml_feed(tp_parser *p, const dsml_tags *t, const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n && !p->oom) {
        uint64_t off = p->base + i;
        uint8_t c = s[i];
        switch (p->mode) {
        case D_TEXT: {
            int match;
            i += tp_scan_text(p, &t->text.m, s + i, n - i, &match);
            match = kind_of(&t->text, match);
            if (match == X_BOT) {
                tp_text_call_starts(p);
                p->first = 1;
                p->mode = D_BLOCK;
            } else if (match == X_INV_START) {
                tp_text_call_starts(p);
                p->first = 0;
                new_invoke(p);
            } /* stray end tags are markup: dropped */
            break;
        }
        case D_BLOCK:
        case D_SKIP:
        case D_AFTER_JSON: {
            int match, junk;
            size_t junk_at = 0;
            size_t k = tp_scan_skip(p, &t->tag.m, s + i, n - i, &match, &junk, &junk_at);
            size_t mlen = match >= 0 ? t->tag.m.patlen[match] : 0;
            match = kind_of(&t->tag, match);
            if (p->mode == D_AFTER_JSON && !p->trailing_reported &&
                (junk || match == K_PARAM_START || match == K_PARAM_END)) {
                p->trailing_reported = 1;
                /* the first dropped byte, or the start of the tag */
                uint64_t at = junk ? p->base + i + junk_at
                                   : p->base + i + k - mlen;
                tp_ev_error(p, TP_ERR_TRAILING, at, -1, NULL, 0);
            }
            i += k;
            if (match == K_INV_START) {
                new_invoke(p);
            } else if (match == K_EOT) {
                block_over(p);
            } else if (match == K_INV_END && p->mode != D_BLOCK) {
                invoke_over(p);
            }
            break;
        }
        case D_INV_WS:
        case D_P_WS:
        case D_P_WS2:
            if (tp_is_ws(c)) {
                p->fstate = 1;
                i++;
            } else if (p->fstate) {
                p->fstate = 0;
                p->mode++; /* the literal that follows */
            } else if (p->mode == D_INV_WS) {
                tp_ev_error(p, TP_ERR_BAD_MARKUP, off, -1, NULL, 0);
                skip_invoke(p);
            } else {
                fail(p, TP_ERR_BAD_MARKUP, off);
            }
            break;
        case D_INV_LIT:
        case D_P_LIT:
        case D_P_LIT2: {
            int r = lit_step(p, c, p->mode == D_P_LIT2 ? "string=\"" : "name=\"");
            if (r < 0) {
                if (p->mode == D_INV_LIT) {
                    tp_ev_error(p, TP_ERR_BAD_MARKUP, off, -1, NULL, 0);
                    skip_invoke(p);
                } else {
                    fail(p, TP_ERR_BAD_MARKUP, off);
                }
                break;
            }
            i++;
            if (r) {
                p->call_off = p->base + i; /* where the attribute value starts */
                p->mode++;
                if (p->mode == D_P_NAME)
                    tp_buf_clear(&p->key);
                else if (p->mode == D_P_STR)
                    tp_buf_clear(&p->name);
            }
            break;
        }
        case D_INV_NAME:
        case D_P_NAME:
        case D_P_STR: {
            tp_buf *dst = p->mode == D_P_NAME ? &p->key : &p->name;
            const uint8_t *q = memchr(s + i, '"', n - i);
            size_t e = q ? (size_t)(q - s) : n;
            size_t room = dst->limit - dst->len;
            if (e - i > room || tp_buf_append(dst, s + i, e - i)) {
                /* over the limit: what fits is taken, so that skipping
                 * starts at the same byte whatever the chunks; reported at
                 * the start of the value */
                if (e - i > room && room && tp_buf_append(dst, s + i, room) == 0)
                    i += room;
                if (p->mode == D_INV_NAME) {
                    tp_ev_error(p, TP_ERR_BAD_NAME, p->call_off, -1, NULL, 0);
                    skip_invoke(p);
                } else {
                    fail(p, TP_ERR_BUFFER_LIMIT, p->call_off);
                }
                break;
            }
            i = e;
            if (!q)
                break;
            if (dst->len == 0) { /* name="" / string="": not a tag */
                if (p->mode == D_INV_NAME) {
                    tp_ev_error(p, TP_ERR_BAD_NAME, p->base + i, -1, NULL, 0);
                    skip_invoke(p);
                } else {
                    fail(p, TP_ERR_BAD_MARKUP, p->base + i);
                }
                break;
            }
            i++;
            p->fstate = 0;
            p->mode = p->mode == D_INV_NAME ? D_INV_CLOSE : p->mode == D_P_NAME ? D_P_WS2 : D_P_CLOSE;
            break;
        }
        case D_INV_CLOSE:
        case D_P_CLOSE:
            if (tp_is_ws(c)) {
                i++;
            } else if (c == '>') {
                i++;
                if (p->mode == D_P_CLOSE) {
                    p->call_off = p->base + i;
                    begin_value(p);
                } else if (open_invoke(p, p->base + i)) {
                    p->mode = D_BODY;
                } else {
                    skip_invoke(p);
                }
            } else if (c == '/' && p->mode == D_INV_CLOSE) {
                i++;
                p->mode = D_INV_SLASH;
            } else if (p->mode == D_INV_CLOSE) {
                tp_ev_error(p, TP_ERR_BAD_MARKUP, off, -1, NULL, 0);
                skip_invoke(p);
            } else {
                fail(p, TP_ERR_BAD_MARKUP, off);
            }
            break;
        case D_INV_SLASH:
            if (c != '>') {
                tp_ev_error(p, TP_ERR_BAD_MARKUP, off, -1, NULL, 0);
                skip_invoke(p);
                break;
            }
            i++;
            if (open_invoke(p, p->base + i)) {
                tp_call_announce(p); /* announce point: <invoke name="..."/> */
                tp_ev_args(p, (const uint8_t *)"{}", 2);
                tp_call_close(p);
            }
            invoke_over(p);
            break;
        case D_BODY:
            if (tp_is_ws(c)) {
                i++;
            } else if (c == '{') {
                tp_json_init(&p->js, TPJ_MODE_NORMAL, p->lim.max_depth);
                p->mode = D_JSON;
            } else {
                p->mode = D_PARAMS;
                p->node = 0;
            }
            break;
        case D_JSON: { /* announce point: the body's `{` (in tp_call_json_args) */
            size_t k;
            int st = tp_call_json_args(p, s + i, n - i, &k);
            if (st < 0) {
                uint64_t at = p->base + i + p->js.err_at;
                i += k;
                fail(p, p->js.err, at);
                break;
            }
            i += k;
            if (st > 0) {
                tp_call_close(p);
                p->mode = D_AFTER_JSON;
                p->trailing_reported = 0;
                p->node = 0;
            }
            break;
        }
        case D_PARAMS: {
            int match, junk;
            size_t junk_at;
            i += tp_scan_skip(p, &t->tag.m, s + i, n - i, &match, &junk, &junk_at);
            match = kind_of(&t->tag, match);
            if (junk)
                p->discard = 1; /* prose around parameters: ignored */
            switch (match) {
            case K_PARAM_START:
                p->mode = D_P_WS;
                p->fstate = 0;
                break;
            case K_INV_END:
                finish_invoke(p, p->base + i);
                invoke_over(p);
                break;
            case K_INV_START: /* a missing end tag: tolerated */
                finish_invoke(p, p->base + i);
                new_invoke(p);
                break;
            case K_EOT:
                finish_invoke(p, p->base + i);
                block_over(p);
                break;
            case K_PARAM_END:
                fail(p, TP_ERR_BAD_MARKUP, p->base + i);
                break;
            default:
                break;
            }
            break;
        }
        case D_VALUE: {
            tp_scan_res r;
            uint8_t old = p->node;
            int over = 0;
            /* Scan no more than can fit in the pending buffer (escaped
             * whitespace takes up to 6 bytes a byte; the held bytes of a
             * partial tag may be released too), so the limit is hit at the
             * same byte whatever the chunks, and skipping starts there. */
            size_t f = p->vkind ? 6 : 1;
            size_t room = (p->pending.limit - p->pending.len) / f;
            size_t held_n = t->value.m.depth[p->node];
            size_t cap = room > held_n ? room - held_n : 1;
            tp_matcher_scan(&t->value.m, &p->node, s + i, n - i < cap ? n - i : cap, &r);
            r.match = kind_of(&t->value, r.match);
            if (r.held_text) {
                size_t hl;
                const uint8_t *held = tp_matcher_path(&t->value.m, old, &hl);
                over = value_text(p, held, r.held_text);
            }
            if (!over)
                over = value_text(p, s + i, r.text_len);
            i += r.consumed;
            if (over) {
                tp_call_fail(p, TP_ERR_BUFFER_LIMIT, p->call_off); /* the value's start */
                tp_matcher_switch(p, &t->value.m, &t->tag.m);
                p->mode = D_SKIP;
                tp_buf_clear(&p->pending);
                tp_buf_shrink(&p->pending, 0);
                if (r.match == V_INV_END)
                    invoke_over(p);
                else if (r.match == V_EOT)
                    block_over(p);
                break;
            }
            if (r.match == V_PARAM_END) {
                end_value(p);
            } else if (r.match == V_INV_END || r.match == V_EOT) {
                /* the parameter was never closed: SGLang drops the invoke */
                tp_call_fail(p, TP_ERR_BAD_MARKUP, p->base + i);
                skip_invoke(p);
                if (r.match == V_INV_END)
                    invoke_over(p);
                else
                    block_over(p);
            }
            break;
        }
        }
    }
}

static void dsml_finish(tp_parser *p, const dsml_tags *t)
{
    switch (p->mode) {
    case D_TEXT:
        tp_release_held(p, &t->text.m);
        break;
    case D_BLOCK:
    case D_SKIP:
    case D_AFTER_JSON:
        p->node = 0; /* a partial tag here is markup, not prose */
        break;
    default:
        /* inside an invoke: its tag (no call yet) or its body */
        tp_call_unterminated(p);
        break;
    }
    tp_text_finish(p);
}

#define VARIANT(var, fname, fam)                                              \
    static void var##_feed(tp_parser *p, const uint8_t *s, size_t n)          \
    {                                                                         \
        dsml_feed(p, &FAMILIES[fam].tags, s, n);                              \
    }                                                                         \
    static void var##_finish(tp_parser *p) { dsml_finish(p, &FAMILIES[fam].tags); } \
    const tp_format tp_fmt_##fname = {#fname, var##_feed, var##_finish};

VARIANT(V32, deepseekv32, 0)
VARIANT(V4, deepseekv4, 0)
VARIANT(V41, deepseekv41, 0)
VARIANT(GC35, gigachat35, 1)
