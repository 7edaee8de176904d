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
 * string parameter is the raw text, byte for byte (DeepSeek's encoder
 * writes it raw and its decoders read it so; SGLang's detector strips it:
 * a declared difference), and streams as JSON string content while it is
 * generated: `{"KEY": "` is written as soon as the tag opens, the value's
 * bytes are escaped as json.dumps escapes them, and nothing is held back
 * but a possible partial end tag. A non-string value is
 * buffered (bounded by max_buffer) until it closes, then written as
 * normalized JSON when it is JSON (json.loads(strict=False), without the
 * NaN/Infinity constants), and as a JSON string of its stripped text
 * otherwise (SGLang's fallback).
 * A direct JSON body streams through the JSON normalizer.
 *
 * Between invokes in the block, blanks after its opener or an invoke are
 * template formatting; anything else is prose the model wrote there and is
 * text (issue 18: no byte lost; DeepSeek's reference decoder refuses such
 * output, SGLang's detector drops it): prose before the block's first
 * invoke shows the opener made no call (bad_markup with its bytes), the
 * block's end tag after prose is a Markup event, a tag there that closes
 * or opens no invoke is bad_markup. */
#include <stdio.h>
#include <string.h>

#include "tp_internal.h"

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
/* tag_m markers (block_m: also K_BOT, between invokes) */
enum { K_INV_START, K_INV_END, K_EOT, K_PARAM_START, K_PARAM_END, K_BOT };
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
    tagset text, tag, value, block;
} dsml_tags;


static int kind_of(const tagset *t, int match) { return match < 0 ? -1 : t->kind[match]; }

/* per-parser state kept in the generic fields:
 *   mode     D_* state
 *   first    1 inside a block (0: a bare invoke)
 *   fstate   attribute parsing: whitespace seen / position in a literal;
 *            D_BLOCK: prose began
 *   have_name  D_BLOCK: right after the block opener (its `>` may follow)
 *   name     invoke name; then the string="..." attribute of a parameter
 *   key      parameter name
 *   vkind    1: the parameter is a string
 *   have_args  a parameter was written
 *   discard  non-markup text was seen between parameters
 *   trailing_reported  after a JSON body: trailing content was reported
 *   pending  a non-string value: its raw text
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
        /* the block opener without its `>`: a model that leaves the `>` out
         * still opened the block (a `>` that follows is skipped with the
         * other markup between invokes), and no part of it is text */
        snprintf(f->spell[T_BOT][v], 48, "<%s%s", m, f->blocks[v]);
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
    static const int block_k[] = {T_INV_START, T_INV_END, T_EOT, T_PAR_START, T_PAR_END, T_BOT};
    static const int block_a[] = {K_INV_START, K_INV_END, K_EOT, K_PARAM_START, K_PARAM_END, K_BOT};
    if (tagset_build(f, &f->tags.text, text_k, text_a, 5) || tagset_build(f, &f->tags.tag, tag_k, tag_a, 5) ||
        tagset_build(f, &f->tags.block, block_k, block_a, 6))
        return -1;
    return tagset_build(f, &f->tags.value, value_k, value_a, 3);
}

int tp_fmt_dsml_init(void)
{
    for (size_t i = 0; i < NFAMILIES; i++)
        if (family_build(&FAMILIES[i]))
            return -1;
    return 0;
}

/* ---- JSON string content: tp_json_escape ---- */

static size_t utf8_len(uint8_t c)
{
    return c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
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

/* ---- string parameter values ----
 * A string="true" value is the raw text between the tags, byte for byte:
 * DeepSeek's encoder writes it raw and both reference decoders
 * (encoding_dsv32.parse_tool_calls, deepseek-recipe) read it back so. It
 * streams escaped as it arrives; only a possible partial end tag is held
 * (by the value matcher). */
static int str_text(tp_parser *p, const uint8_t *s, size_t n)
{
    tp_ev_args_escaped(p, s, n);
    return 0;
}

static int value_text(tp_parser *p, const uint8_t *s, size_t n)
{
    if (n == 0)
        return 0;
    if (p->vkind)
        return str_text(p, s, n);
    return tp_buf_append(&p->pending, s, n);
}

static void nonstr_done(tp_parser *p)
{
    size_t a, b;
    py_strip(p->pending.data, p->pending.len, &a, &b);
    const uint8_t *v = p->pending.len ? p->pending.data + a : (const uint8_t *)""; /* data may be NULL */
    size_t n = b - a;
    size_t start = p->out.len;
    int ok = 0;
    if (n) { /* never NaN/Infinity: those are not JSON here (tp_json.h) */
        tp_json_init(&p->js, TPJ_MODE_NORMAL, p->lim.max_depth);
        size_t k = tp_json_feed(&p->js, v, n, &p->out);
        ok = !tp_json_failed(&p->js) && k == n && tp_json_end(&p->js, &p->out);
    }
    if (!ok) { /* not JSON: the stripped text as a string */
        p->out.len = start;
        if (tp_buf_push(&p->out, '"') || tp_json_escape(&p->out, v, n) || tp_buf_push(&p->out, '"'))
            p->oom = 1;
    }
    tp_buf_clear(&p->pending);
    tp_buf_shrink(&p->pending, 0);
    tp_ev_args_from(p, start);
}

/* ---- invoke lifecycle ---- */

/* An invoke tag: pattern `pat` of matcher `m`, ending at chunk index `at`
 * (recorded from there, unless the block's opener already started it). */
static void new_invoke(tp_parser *p, const tp_matcher *m, int pat, size_t at)
{
    if (!p->raw_on && pat >= 0)
        tp_raw_begin(p, m->pats[pat], m->patlen[pat], at);
    p->mode = D_INV_WS;
    p->fstate = 0;
    p->node = 0;
    tp_buf_clear(&p->name);
}

static void invoke_over(tp_parser *p)
{
    tp_raw_end(p); /* no call is open */
    p->mode = p->first ? D_BLOCK : D_TEXT;
    p->node = 0;
    p->fstate = 0; /* D_BLOCK: no prose yet */
    p->have_name = 0;
    p->after_call = 1;
}

static void block_over(tp_parser *p)
{
    tp_raw_end(p);
    p->first = 0;
    p->mode = D_TEXT;
    p->node = 0;
    p->after_call = 1;
}

static void skip_invoke(tp_parser *p)
{
    tp_raw_end(p); /* the invoke was dropped (and reported) */
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
    r = r || tp_json_escape(&p->out, p->key.data, p->key.len);
    r = r || tp_buf_append(&p->out, p->vkind ? "\": \"" : "\": ", p->vkind ? 4 : 3);
    if (r)
        p->oom = 1;
    tp_ev_args_from(p, start);
    p->have_args = 1;
    tp_buf_clear(&p->key);
    tp_buf_clear(&p->pending);
    p->mode = D_VALUE;
    p->node = 0;
}

static void end_value(tp_parser *p)
{
    if (p->vkind) {
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
            int pat = match;
            match = kind_of(&t->text, match);
            if (match == X_BOT) {
                tp_raw_begin(p, t->text.m.pats[pat], t->text.m.patlen[pat], i);
                tp_text_call_starts(p);
                p->first = 1;
                p->mode = D_BLOCK;
                p->fstate = 0;
                p->have_name = 1; /* its `>` may follow */
            } else if (match == X_INV_START) {
                tp_raw_begin(p, t->text.m.pats[pat], t->text.m.patlen[pat], i);
                tp_text_call_starts(p);
                p->first = 0;
                new_invoke(p, &t->text.m, -1, i);
            } else if (pat >= 0) { /* a stray end tag: markup of no call */
                tp_stray_markup(p, t->text.m.patlen[pat], i);
            }
            break;
        }
        case D_BLOCK: {
            /* blanks after the opener or an invoke: formatting; prose: text */
            if (p->have_name) { /* the opener's `>` (its spelling leaves it out) */
                p->have_name = 0;
                if (c == '>' && p->node == 0) {
                    i++;
                    break;
                }
            }
            int match;
            const tp_matcher *bm = &t->block.m;
            i += tp_scan_block(p, bm, s + i, n - i, &match, &p->fstate);
            int pat = match;
            match = kind_of(&t->block, match);
            if (match == K_INV_START) {
                new_invoke(p, bm, pat, i);
                tp_text_call_starts(p); /* blanks after prose: the invoke's record */
            } else if (match == K_EOT) {
                int prose = p->fstate;
                size_t ml = bm->patlen[pat];
                if (p->raw_on) /* a block with no call: markup of no call */
                    tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + i, -1, (const uint8_t *)"a block with no call", 20);
                else if (prose) /* after prose: it closes the block, next to no call */
                    tp_block_markup(p, bm->pats[pat], ml, p->base + i - ml);
                block_over(p);
                if (prose)
                    p->after_call = 0; /* the blanks after it are text */
            } else if (match == K_BOT) {
                /* another block opener: markup, read as the block's first
                 * (an invoke takes it into its record; prose shows it made
                 * none); its `>` may follow */
                if (!p->raw_on) {
                    tp_raw_begin(p, bm->pats[pat], bm->patlen[pat], i);
                    tp_text_call_starts(p);
                }
                p->fstate = 0;
                p->have_name = 1;
            } else if (pat >= 0 && !p->raw_on) { /* a tag that closes or opens no invoke */
                tp_stray_markup(p, bm->patlen[pat], i);
            } /* (else: in the opener's record, the first invoke's text) */
            break;
        }
        case D_SKIP:
        case D_AFTER_JSON: {
            int match, junk;
            size_t junk_at = 0;
            size_t k = tp_scan_skip(p, &t->tag.m, s + i, n - i, &match, &junk, &junk_at);
            size_t mlen = match >= 0 ? t->tag.m.patlen[match] : 0;
            int pat = match;
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
                new_invoke(p, &t->tag.m, pat, i);
            } else if (match == K_EOT) {
                if (p->raw_on) /* a block with no call: markup of no call */
                    tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + i, -1, (const uint8_t *)"a block with no call", 20);
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
                /* one blank, then the whole literal (` name="`, ` string="`)
                 * in this chunk: taken in one step, as D_*_LIT takes it */
                const char *lit = p->mode == D_P_WS2 ? "string=\"" : "name=\"";
                size_t ll = p->mode == D_P_WS2 ? 8 : 6;
                if (n - i > ll && memcmp(s + i + 1, lit, ll) == 0) {
                    i += 1 + ll;
                    p->fstate = 0;
                    p->mode = (uint8_t)(p->mode + 2);
                    p->call_off = p->base + i; /* where the attribute value starts */
                    if (p->mode == D_P_NAME)
                        tp_buf_clear(&p->key);
                    else if (p->mode == D_P_STR)
                        tp_buf_clear(&p->name);
                    break;
                }
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
            const char *lit = p->mode == D_P_LIT2 ? "string=\"" : "name=\"";
            size_t rest = strlen(lit) - p->fstate;
            if (rest > 1 && n - i >= rest && memcmp(s + i, lit + p->fstate, rest - 1) == 0) {
                i += rest - 1; /* all but the last byte at once; it completes below */
                p->fstate = (uint8_t)(p->fstate + rest - 1);
                c = s[i];
                off = p->base + i;
            }
            int r = lit_step(p, c, lit);
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
            size_t k = tp_scan_skip(p, &t->tag.m, s + i, n - i, &match, &junk, &junk_at);
            if (junk) { /* prose between the call's tags: bad_markup (tp_junk.c) */
                p->discard = 1;
                tp_junk_at(p, p->base + i + junk_at);
            }
            i += k;
            int pat = match;
            if (pat >= 0)
                tp_junk_tag(p, s + i, t->tag.m.patlen[pat]);
            match = kind_of(&t->tag, match);
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
                new_invoke(p, &t->tag.m, pat, i);
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
            /* A non-string value: scan no more than can fit in the
             * pending buffer (the held bytes of a partial tag may be
             * released too), so the limit is hit at the same byte whatever
             * the chunks, and skipping starts there. A string value holds
             * nothing but a partial tag. */
            size_t cap = n - i;
            if (!p->vkind) {
                size_t room = p->pending.limit - p->pending.len;
                size_t held_n = t->value.m.depth[p->node];
                cap = room > held_n ? room - held_n : 1;
            }
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
        if (p->raw_on) { /* a block cut off before its first call: as a call cut off before its announcement */
            tp_call_unterminated(p);
            break;
        }
        if (p->fstate) { /* after prose in the block, a partial tag is prose */
            tp_release_held(p, &t->block.m);
        } else if (p->node) { /* a partial tag after an invoke: markup of no call */
            size_t hl;
            const uint8_t *held = tp_matcher_path(&t->block.m, p->node, &hl);
            tp_drop_held_at_end(p, TP_ERR_UNTERMINATED, held, hl);
        }
        p->node = 0;
        break;
    case D_SKIP:
    case D_AFTER_JSON: {
        /* a partial tag here is markup of no call: an error carries it
         * (a skip's dropped text already does) */
        size_t hl;
        const uint8_t *held = tp_matcher_path(&t->tag.m, p->node, &hl);
        if (p->node)
            tp_drop_held_at_end(p, TP_ERR_UNTERMINATED, held, hl);
        p->node = 0;
        break;
    }
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
