/* `call:NAME{key:value,...}` tool calls with a quote token (Gemma 4).
 *
 *   prose<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>
 *   <|tool_call>call:f{opts:{deep:true,tags:[<|"|>a<|"|>,<|"|>b<|"|>]},n:-1.5}<tool_call|>
 *
 * Gemma 4's chat template writes each call of an assistant turn as
 * `<|tool_call>call:` + name + `{` + its arguments + `}<tool_call|>`; an
 * argument is `key:` + format_argument(value) with bare keys, in sorted
 * order, joined by `,`. format_argument writes a string between two quote
 * tokens `<|"|>` with nothing escaped, a boolean as true/false, a mapping
 * as `{key:value,...}` (bare keys again), a list as `[value,...]`, and
 * anything else as its text (ints, floats as Python's repr: `1e-05`,
 * None as `None`; a later template revision writes `null`). This engine is
 * that template read backwards, as JSON arguments: strings stream as JSON
 * string content while they are generated (the quote token, split across
 * chunks, is held only while it can still complete), `{` `[` `}` `]` are
 * written as they come, keys are held until their `:` and bare values until
 * the `,` `}` or `]` that ends them.
 *
 * Where the template leaves it open, SGLang's Gemma4Detector decides:
 * whitespace and any number of commas between members are skipped, a bare
 * value is stripped and read as true/false, then Python's int(), then
 * float() (finite: JSON has no inf), else it is a string (an empty one for
 * `key:,`); a key is everything up to its `:`. Against SGLang, as the
 * template writes them: None/null are null (SGLang: the strings "None",
 * "null"), and repr's exponent form (`1e-05`, `1e+16`) is a number (SGLang:
 * a string, its int() fails and it reads float() only with a `.`).
 *
 * A call is announced at its `{` and ends at the `}` that balances it;
 * `call:` may follow in the same block, `<tool_call|>` ends the block.
 * Malformed arguments (a bracket that closes the wrong container, a key cut
 * by `}`, the closing tag before the arguments balance) fail the call,
 * which is reported, and the block is skipped to its closing tag. Text
 * inside a block that is not a call is reported and dropped. Every name is
 * accepted or refused by the tool list as usual (SGLang's adapter forwards
 * any name, as its detector does).
 *
 * A format is a row: its tag spellings, call prefix and quote token. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tp_internal.h"

typedef struct {
    const char *open;   /* opens a block */
    const char *close;  /* closes it */
    const char *prefix; /* starts a call inside a block, before its name */
    const char *quote;  /* both ends of a string value */
    /* built by init */
    size_t close_len, quote_len;
    tp_matcher text_m;  /* open */
    tp_matcher block_m; /* close, prefix, open */
    tp_matcher name_m;  /* "{", close, open */
    tp_matcher skip_m;  /* close, open */
} kv_row;

static kv_row ROWS[] = {
    {"<|tool_call>", "<tool_call|>", "call:", "<|\"|>", 0, 0, {0}, {0}, {0}, {0}}, /* gemma4 */
};
enum { ROW_GEMMA4 };

/* marker indices of block_m / name_m / skip_m */
enum { B_CLOSE, B_PREFIX, B_OPEN };
enum { N_BRACE, N_CLOSE, N_OPEN };
enum { S_CLOSE, S_OPEN };

enum {
    G_TEXT,  /* prose */
    G_HEAD,  /* in a block, before `call:` or the closing tag */
    G_NAME,  /* the name, up to `{` */
    G_ARGS,  /* the arguments (vkind: A_*) */
    G_AFTER, /* after a call: `call:` again, or the closing tag */
    G_SKIP,  /* a dropped call: to the closing tag */
};
enum { A_KEY, A_KEYCH, A_VALUE, A_BARE, A_STR, A_ITEM };

/* per-parser state kept in the generic fields:
 *   mode, vkind   G_* and A_* states
 *   name, key     the call's name, the key being read (bounded by max_name)
 *   pending       a bare value (bounded by max_buffer)
 *   js.depth, js.stack   open containers (bit 1: object)
 *   first         no member yet in the innermost container
 *   fstate        bytes of the quote token matched inside a string
 *   resync_depth  bytes of the closing tag matched outside strings
 *   trailing_reported  junk in this block was reported */

int tp_fmt_kvcall_init(void)
{
    for (size_t r = 0; r < sizeof(ROWS) / sizeof(ROWS[0]); r++) {
        kv_row *w = &ROWS[r];
        const char *block[3] = {w->close, w->prefix, w->open};
        const char *name[3] = {"{", w->close, w->open};
        const char *skip[2] = {w->close, w->open};
        w->close_len = strlen(w->close);
        w->quote_len = strlen(w->quote);
        const char *text[1] = {w->open};
        if (tp_matcher_build(&w->text_m, text, 1) || tp_matcher_build(&w->block_m, block, 3) ||
            tp_matcher_build(&w->name_m, name, 3) || tp_matcher_build(&w->skip_m, skip, 2))
            return -1;
    }
    return 0;
}

/* One byte `c` after k bytes of tok matched: the new count, and in *rel
 * how many bytes of tok[0:k] + c, from the front, turned out not to be tok
 * (the longest suffix that is still a prefix of tok stays held). */
static size_t tok_step(const char *tok, size_t k, uint8_t c, size_t *rel)
{
    *rel = 0;
    if ((uint8_t)tok[k] == c)
        return k + 1;
    for (size_t m = k; m > 0; m--)
        if ((uint8_t)tok[m - 1] == c && memcmp(tok + (k + 1 - m), tok, m - 1) == 0) {
            *rel = k + 1 - m;
            return m;
        }
    *rel = k + 1;
    return 0;
}

static void out(tp_parser *p, const char *s, size_t n) { tp_ev_args(p, (const uint8_t *)s, n); }

static void out_esc(tp_parser *p, const uint8_t *s, size_t n)
{
    if (n)
        tp_ev_args_escaped(p, s, n);
}

static int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

/* s[i] is '_' between two digits (Python's int() and float() allow it) */
static int digit_sep(const uint8_t *s, size_t n, size_t i)
{
    return i > 0 && i + 1 < n && is_digit(s[i - 1]) && is_digit(s[i + 1]);
}

/* Python's int(s), written as json.dumps writes it; 0 if int() refuses or
 * the number would be longer than a JSON number token may be
 * (TP_JSON_NUM_MAX: then it is a string, as bare_float's) */
static int bare_int(tp_parser *p, const uint8_t *s, size_t n)
{
    size_t i = 0, digits = 0;
    int neg = 0;
    if (n && (s[0] == '+' || s[0] == '-'))
        neg = s[i++] == '-';
    if (i == n)
        return 0;
    for (size_t k = i; k < n; k++)
        if (!is_digit(s[k]) && !(s[k] == '_' && digit_sep(s, n, k)))
            return 0;
    while (i < n && (s[i] == '0' || s[i] == '_'))
        i++;
    if (i == n) {
        out(p, "0", 1);
        return 1;
    }
    for (size_t k = i; k < n; k++)
        digits += s[k] != '_';
    if (neg + digits > TP_JSON_NUM_MAX)
        return 0;
    if (neg)
        out(p, "-", 1);
    while (i < n) {
        size_t k = i;
        while (k < n && s[k] != '_')
            k++;
        out(p, (const char *)s + i, k - i);
        i = k + (k < n);
    }
    return 1;
}

/* Python's float(s) of a decimal literal, finite, written as json.dumps
 * writes it (repr); 0 if float() refuses or gives inf */
static int bare_float(tp_parser *p, const uint8_t *s, size_t n)
{
    char buf[TP_JSON_NUM_MAX + 1];
    size_t k = 0, i = 0, mant = 0;
    if (n > TP_JSON_NUM_MAX)
        return 0;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        buf[k++] = (char)s[i++];
    for (; i < n && (is_digit(s[i]) || (s[i] == '_' && digit_sep(s, n, i))); i++)
        if (s[i] != '_')
            buf[k++] = (char)s[i], mant++;
    if (i < n && s[i] == '.') {
        buf[k++] = '.';
        for (i++; i < n && (is_digit(s[i]) || (s[i] == '_' && digit_sep(s, n, i))); i++)
            if (s[i] != '_')
                buf[k++] = (char)s[i], mant++;
    }
    if (!mant)
        return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t exp = 0;
        buf[k++] = 'e';
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            buf[k++] = (char)s[i++];
        for (; i < n && (is_digit(s[i]) || (s[i] == '_' && digit_sep(s, n, i))); i++)
            if (s[i] != '_')
                buf[k++] = (char)s[i], exp++;
        if (!exp)
            return 0;
    }
    if (i != n)
        return 0;
    buf[k] = 0;
    double v = strtod(buf, NULL);
    if (!isfinite(v))
        return 0;
    char num[32];
    out(p, num, tp_format_double(v, num));
    return 1;
}

/* a complete bare value (p->pending), stripped, as JSON */
static void bare_done(tp_parser *p)
{
    const uint8_t *s = p->pending.data;
    size_t n = p->pending.len;
    while (n && tp_is_ws(s[n - 1]))
        n--;
    if ((n == 4 && memcmp(s, "true", 4) == 0) || (n == 5 && memcmp(s, "false", 5) == 0))
        out(p, (const char *)s, n);
    else if ((n == 4 && (memcmp(s, "null", 4) == 0 || memcmp(s, "None", 4) == 0)))
        out(p, "null", 4);
    else if (!bare_int(p, s, n) && !bare_float(p, s, n)) {
        out(p, "\"", 1);
        out_esc(p, s, n);
        out(p, "\"", 1);
    }
    tp_buf_clear(&p->pending);
}

static int in_object(const tp_parser *p)
{
    return tp_json_nest_obj(&p->js, p->js.depth - 1);
}

/* the call's arguments are malformed at `off`: reported, skipped */
static void broken(tp_parser *p, int code, uint64_t off)
{
    tp_call_fail(p, code, off);
    tp_buf_clear(&p->pending);
    tp_buf_clear(&p->key);
    p->mode = G_SKIP;
    p->node = 0;
}

static void push(tp_parser *p, int obj, uint64_t off)
{
    uint32_t d = p->js.depth;
    if (d >= p->lim.max_depth || d >= TP_JSON_DEPTH_CAP) {
        broken(p, TP_ERR_JSON_DEPTH, off);
        return;
    }
    if (tp_json_nest_set(&p->js, d, obj)) {
        broken(p, TP_ERR_NO_MEMORY, off);
        return;
    }
    p->js.depth = d + 1;
    out(p, obj ? "{" : "[", 1);
    p->first = 1;
    p->vkind = obj ? A_KEY : A_ITEM;
}

/* after a value: the next member of the container */
static void value_done(tp_parser *p) { p->vkind = in_object(p) ? A_KEY : A_ITEM; }

/* `}` or `]`: closes the innermost container, or the call */
static void pop(tp_parser *p, uint8_t c, uint64_t off)
{
    if ((c == '}') != in_object(p)) {
        broken(p, TP_ERR_BAD_MARKUP, off);
        return;
    }
    out(p, c == '}' ? "}" : "]", 1);
    if (--p->js.depth == 0) {
        tp_call_close(p);
        p->trailing_reported = 0;
        p->mode = G_AFTER;
        p->node = 0;
        return;
    }
    p->first = 0;
    value_done(p);
}

/* `,` `}` `]`: what ends a member (after its value, or in place of one) */
static void member_end(tp_parser *p, uint8_t c, uint64_t off)
{
    if (c == ',')
        value_done(p);
    else
        pop(p, c, off);
}

/* the first byte of a value */
static void value_start(tp_parser *p, const kv_row *w, uint8_t c, uint64_t off)
{
    if (c == '{' || c == '[') {
        push(p, c == '{', off);
    } else if (c == ',' || c == '}' || c == ']') {
        out(p, "\"\"", 2); /* `key:,`: an empty bare value */
        member_end(p, c, off);
    } else {
        tp_buf_clear(&p->pending);
        p->vkind = A_BARE;
        (void)tp_buf_push(&p->pending, c);
        if (w->quote_len == 1 && c == (uint8_t)w->quote[0]) {
            tp_buf_clear(&p->pending);
            out(p, "\"", 1);
            p->vkind = A_STR;
            p->fstate = 0;
            p->resync_depth = 0;
        }
    }
}

/* string content up to the closing quote token */
static size_t str_run(tp_parser *p, const kv_row *w, const uint8_t *s, size_t n)
{
    const char *q = w->quote;
    size_t i = 0;
    while (i < n) {
        if (p->fstate == 0) {
            const uint8_t *hit = memchr(s + i, (uint8_t)q[0], n - i);
            size_t k = hit ? (size_t)(hit - s) : n;
            out_esc(p, s + i, k - i);
            i = k;
            if (i == n)
                break;
            i++;
            p->fstate = 1;
        } else {
            uint8_t c = s[i++];
            size_t k = p->fstate, rel;
            size_t nk = tok_step(q, k, c, &rel);
            if (rel) {
                out_esc(p, (const uint8_t *)q, rel < k ? rel : k);
                if (rel > k)
                    out_esc(p, &c, 1);
            }
            p->fstate = (uint8_t)nk;
        }
        if (p->fstate == w->quote_len) {
            p->fstate = 0;
            out(p, "\"", 1);
            value_done(p);
            break;
        }
    }
    return i;
}

/* `KEY:` read: the member's key in the output */
static void key_done(tp_parser *p)
{
    size_t n = p->key.len;
    while (n && tp_is_ws(p->key.data[n - 1]))
        n--;
    if (!p->first)
        out(p, ", ", 2);
    p->first = 0;
    out(p, "\"", 1);
    out_esc(p, p->key.data, n);
    out(p, "\": ", 3);
    tp_buf_clear(&p->key);
    p->vkind = A_VALUE;
}

/* the arguments, outside strings a byte at a time (keys and bare values
 * are held anyway); `base` is the stream offset of s. Returns the bytes
 * consumed. */
static size_t args_run(tp_parser *p, const kv_row *w, const uint8_t *s, size_t n, uint64_t base)
{
    size_t i = 0;
    while (i < n && p->mode == G_ARGS && !p->oom) {
        if (p->vkind == A_STR) {
            i += str_run(p, w, s + i, n - i);
            continue;
        }
        uint8_t c = s[i];
        uint64_t off = base + i;
        size_t rel;
        i++;
        p->resync_depth = (uint32_t)tok_step(w->close, p->resync_depth, c, &rel);
        if (p->resync_depth == w->close_len) { /* the block closed inside the arguments */
            p->resync_depth = 0;
            broken(p, TP_ERR_BAD_MARKUP, off);
            p->mode = G_TEXT;
            break;
        }
        switch (p->vkind) {
        case A_KEY: /* before a key: whitespace and commas skipped */
            if (tp_is_ws(c) || c == ',')
                break;
            if (c == '}' || c == ']') {
                pop(p, c, off);
            } else if (c == ':') {
                key_done(p); /* an empty key */
            } else {
                tp_buf_clear(&p->key);
                (void)tp_buf_push(&p->key, c);
                p->vkind = A_KEYCH;
            }
            break;
        case A_KEYCH:
            if (c == ':')
                key_done(p);
            else if (c == '}' || c == ']')
                broken(p, TP_ERR_BAD_MARKUP, off); /* a key without a value */
            else if (tp_buf_push(&p->key, c))
                broken(p, TP_ERR_BAD_NAME, tp_buf_char_start(&p->key, c, off));
            break;
        case A_VALUE:
            if (!tp_is_ws(c))
                value_start(p, w, c, off);
            break;
        case A_ITEM: /* before a list item: whitespace and commas skipped */
            if (tp_is_ws(c) || c == ',')
                break;
            if (c == ']' || c == '}') {
                pop(p, c, off);
                break;
            }
            if (!p->first)
                out(p, ", ", 2);
            p->first = 0;
            value_start(p, w, c, off);
            break;
        case A_BARE:
            if (c == ',' || c == '}' || c == ']') {
                bare_done(p);
                member_end(p, c, off);
                break;
            }
            if (tp_buf_push(&p->pending, c)) {
                broken(p, TP_ERR_BUFFER_LIMIT, tp_buf_char_start(&p->pending, c, off));
                break;
            }
            if (p->pending.len == w->quote_len && memcmp(p->pending.data, w->quote, w->quote_len) == 0) {
                /* the value is a string */
                tp_buf_clear(&p->pending);
                out(p, "\"", 1);
                p->vkind = A_STR;
                p->fstate = 0;
                p->resync_depth = 0;
            }
            break;
        }
    }
    return i;
}

static void block_open(tp_parser *p, const kv_row *w, size_t at)
{
    tp_raw_begin(p, w->open, strlen(w->open), at);
    tp_text_call_starts(p);
    p->mode = G_HEAD;
    p->node = 0;
    p->trailing_reported = 0;
}

/* a marker of block_m / skip_m outside a call */
static void block_marker(tp_parser *p, const kv_row *w, int close, size_t at)
{
    if (close) {
        if (p->raw_on) /* a block with no call: markup of no call, its text the error's */
            tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + at, -1, (const uint8_t *)"a block with no call", 20);
        tp_raw_end(p);
        p->mode = G_TEXT;
        p->node = 0;
    } else {
        if (p->raw_on) /* a block with no call, then another opener: the same */
            tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + at - strlen(w->open), -1,
                        (const uint8_t *)"a block with no call", 20);
        tp_raw_end(p);
        block_open(p, w, at);
    }
}

static void kv_feed(tp_parser *p, const kv_row *w, const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n && !p->oom) {
        uint64_t off = p->base + i;
        switch (p->mode) {
        case G_TEXT: {
            int match;
            i += tp_scan_text(p, &w->text_m, s + i, n - i, &match);
            if (match >= 0)
                block_open(p, w, i);
            break;
        }
        case G_HEAD:
        case G_AFTER: {
            int match, junk;
            size_t junk_at = 0;
            size_t k = tp_scan_skip(p, &w->block_m, s + i, n - i, &match, &junk, &junk_at);
            if (junk && !p->trailing_reported) {
                p->trailing_reported = 1;
                tp_ev_error(p, p->mode == G_HEAD ? TP_ERR_BAD_MARKUP : TP_ERR_TRAILING, off + junk_at, -1,
                            NULL, 0);
            }
            i += k;
            if (match == B_PREFIX) {
                if (!p->raw_on)
                    tp_raw_begin(p, w->prefix, strlen(w->prefix), i);
                tp_buf_clear(&p->name);
                p->call_off = p->base + i;
                p->mode = G_NAME;
                p->node = 0;
            } else if (match >= 0) {
                block_marker(p, w, match == B_CLOSE, i);
            }
            break;
        }
        case G_NAME: {
            tp_scan_res r;
            uint8_t old = p->node;
            int over = 0;
            tp_matcher_scan(&w->name_m, &p->node, s + i, n - i, &r);
            if (r.held_text) {
                size_t hl;
                over |= tp_buf_append(&p->name, tp_matcher_path(&w->name_m, old, &hl), r.held_text) != 0;
            }
            over |= r.text_len && tp_buf_append(&p->name, s + i, r.text_len);
            i += r.consumed;
            if (over) {
                /* (the raw record, from the block's opener, is the error's dropped text) */
                tp_ev_error(p, TP_ERR_BAD_NAME, p->call_off, -1, NULL, 0);
                tp_raw_end(p);
                if (r.match < 0) {
                    tp_matcher_switch(p, &w->name_m, &w->skip_m);
                    p->mode = G_SKIP;
                } else if (r.match == N_BRACE) {
                    p->mode = G_SKIP;
                    p->node = 0;
                } else {
                    block_marker(p, w, r.match == N_CLOSE, i);
                }
            } else if (r.match == N_BRACE) {
                if (tp_call_open(p, p->name.data, p->name.len, p->call_off)) {
                    tp_call_announce(p);
                    p->mode = G_ARGS;
                    p->js.depth = 0;
                    p->resync_depth = 0;
                    push(p, 1, p->base + i - 1);
                } else {
                    p->mode = G_SKIP; /* refused (and reported) */
                    p->node = 0;
                }
            } else if (r.match >= 0) {
                /* (the raw record, from the block's opener, is the error's dropped text) */
                tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + i, -1, p->name.data, p->name.len);
                block_marker(p, w, r.match == N_CLOSE, i);
            }
            break;
        }
        case G_ARGS: {
            size_t k = args_run(p, w, s + i, n - i, off);
            i += k;
            break;
        }
        case G_SKIP: {
            int match, junk;
            size_t junk_at;
            i += tp_scan_skip(p, &w->skip_m, s + i, n - i, &match, &junk, &junk_at);
            if (match >= 0)
                block_marker(p, w, match == S_CLOSE, i);
            break;
        }
        }
    }
}

static void kv_finish(tp_parser *p, const kv_row *w)
{
    switch (p->mode) {
    case G_TEXT:
        tp_release_held(p, &w->text_m);
        break;
    case G_AFTER:
    case G_SKIP: {
        /* a partial tag here is markup of no call: an error carries it
         * (a skip's dropped text already does) */
        size_t hl;
        const uint8_t *held = tp_matcher_path(p->mode == G_AFTER ? &w->block_m : &w->skip_m, p->node, &hl);
        if (p->node)
            tp_drop_held_at_end(p, TP_ERR_UNTERMINATED, held, hl);
        p->node = 0;
        tp_raw_end(p);
        break;
    }
    case G_HEAD:
    case G_NAME:
    case G_ARGS:
        tp_call_unterminated(p);
        break;
    }
    tp_text_finish(p);
}

static void gemma4_feed(tp_parser *p, const uint8_t *s, size_t n) { kv_feed(p, &ROWS[ROW_GEMMA4], s, n); }
static void gemma4_finish(tp_parser *p) { kv_finish(p, &ROWS[ROW_GEMMA4]); }

const tp_format tp_fmt_gemma4 = {"gemma4", gemma4_feed, gemma4_finish};
