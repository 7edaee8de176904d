/* Namespaced tag-named XML: MiniMax-M3 ("minimax_m3"), one engine, its
 * spellings as a row (future MiniMax variants join as rows of ROWS).
 *
 *   NS<tool_call>\nNS<invoke name="NAME">NS<KEY>VALUE NS</KEY>...NS</invoke>\nNS</tool_call>
 *
 * NS is the namespace token `]<]minimax[>[`, written before every tag.
 * A parameter is an element named by its key. Its value, as MiniMax-M3's
 * chat template writes it (macro to_xml): a string, number or other scalar
 * as its text (`{{ val }}`, booleans `tojson`), a mapping as one element
 * per key (NS<k>...NS</k>), a sequence as one NS<item>...NS</item> per
 * element, nested to any depth; a None is left out.
 *
 * What is read:
 *  - The block opener is NS<tool_call>, then (after blanks) NS<invoke
 *    name=": anything else and the opener is text, byte for byte. Blanks
 *    between NS and the `<` of a tag are read as SGLang's MinimaxM3Detector
 *    reads them (it deletes them); the template writes none.
 *  - The name runs to `">` (as written, not stripped); a key is the tag's
 *    text, blanks stripped.
 *  - A value ends at NS</KEY> at its own nesting level (an inner element of
 *    the same name does not end it); NS</invoke> and NS</tool_call> end it
 *    at any level (closing tags the model left out are tolerated). Inside an invoke, other bytes between tags are
 *    prose inside the call: bad_markup, the call stands (tp_junk.c);
 *    between invokes, non-blank bytes are prose (text).
 *  - Between invokes, a tag that opens no invoke (NS<x>, a stray NS</x>,
 *    an NS with no tag after it) is markup of no call, reported with its
 *    bytes (bad_markup); so is NS</tool_call> after prose (with the blanks
 *    before it). A partial NS or tag the stream ends with after a call is
 *    "unterminated" with those bytes; after prose, a partial NS is prose.
 *
 * What streams and what is held:
 *  - The call is announced at its first complete parameter tag, or at the
 *    invoke's end for a call without parameters.
 *  - A parameter declared as a string (and not as an object or array)
 *    streams as JSON string content as it is generated; only a possible
 *    NS</KEY> is held back (at most NS, blanks and the tag).
 *  - Every other value (declared otherwise, undeclared, unknown tool) is
 *    held, bounded by lim.max_buffer, with its inner tags, until it closes,
 *    then typed whole by the tool's schema (fmt_nsxml_value.c: nested
 *    elements built into JSON, leaves by the row's rules in
 *    tp_type_rules.c). Only the nesting depth is tracked here. Only a JSON
 *    text the core cannot read as json.loads does goes to the host as a
 *    TP_EV_RAW_VALUE event.
 *  - Errors (unknown tool, over-long name/key/value) drop the call and keep
 *    reading its structure; the end of the stream inside a call is an
 *    "unterminated" error.
 * Each byte is examined once; state held between feeds is bounded. */
#include <stdint.h>
#include <string.h>

#include "tp_internal.h"
#include "tp_schema.h"

enum {
    M_TEXT,  /* prose; looking for NS */
    M_OPEN,  /* after NS in text: the rest of the opener sequence, or it is text */
    M_BLOCK, /* inside a block, between invokes */
    M_BTAG,  /* a tag there, after its NS */
    M_NAME,  /* tool name, up to name_end */
    M_INV,   /* inside an invoke, between parameters */
    M_ITAG,  /* a tag there, after its NS */
    M_VALUE, /* a parameter's value */
    M_VTAG,  /* a tag inside a value, after its NS */
};
enum { VK_DROP, VK_STREAM, VK_HOLD };

#define NX_BLANKS_MAX 64u /* blanks read between the opener's tags, and after an NS */
#define NX_TAG_EXTRA 64u  /* a value's inner tag: at most its key's length plus this */
#define NX_OPEN_MAX 128u

typedef struct {
    const tp_format *fmt;
    const char *ns;         /* the token before every tag */
    const char *block_open; /* e.g. "<tool_call>" */
    const char *block_end;  /* the closing tag's name, e.g. "tool_call" */
    const char *invoke_tag; /* a tag that opens an invoke, up to the name: "invoke name=\"" */
    const char *name_end;   /* "\">" */
    const char *invoke_end; /* "invoke" */
    /* built: block_open NS "<" invoke_tag, and where blanks may come */
    char open_seq[NX_OPEN_MAX];
    size_t open_len, blank_at[3];
    tp_matcher text_m, ns_m, name_m;
} nx_row;

static nx_row ROWS[] = {
    {
        .fmt = &tp_fmt_minimax_m3,
        .ns = "]<]minimax[>[",
        .block_open = "<tool_call>", .block_end = "tool_call",
        .invoke_tag = "invoke name=\"", .name_end = "\">", .invoke_end = "invoke",
    },
};
#define NROWS (sizeof(ROWS) / sizeof(ROWS[0]))

int tp_fmt_nsxml_init(void)
{
    for (size_t i = 0; i < NROWS; i++) {
        nx_row *r = &ROWS[i];
        size_t bl = strlen(r->block_open), nl = strlen(r->ns), il = strlen(r->invoke_tag);
        if (bl + nl + 1 + il >= NX_OPEN_MAX)
            return -1;
        memcpy(r->open_seq, r->block_open, bl);
        memcpy(r->open_seq + bl, r->ns, nl);
        r->open_seq[bl + nl] = '<';
        memcpy(r->open_seq + bl + nl + 1, r->invoke_tag, il);
        r->open_len = bl + nl + 1 + il;
        r->blank_at[0] = 0;
        r->blank_at[1] = bl;
        r->blank_at[2] = bl + nl;
        const char *text_p[] = {r->ns};
        const char *name_p[] = {r->name_end};
        if (tp_matcher_build(&r->text_m, text_p, 1) || tp_matcher_build(&r->ns_m, text_p, 1) ||
            tp_matcher_build(&r->name_m, name_p, 1))
            return -1;
    }
    return 0;
}

static const nx_row *row_of(const tp_parser *p)
{
    for (size_t i = 1; i < NROWS; i++)
        if (ROWS[i].fmt == p->fmt)
            return &ROWS[i];
    return &ROWS[0];
}

static int eq(const uint8_t *s, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* ---- calls ---- */

static void args_lit(tp_parser *p, const char *s)
{
    if (!p->discard)
        tp_ev_args(p, (const uint8_t *)s, strlen(s));
}

static void fail(tp_parser *p, int code, uint64_t off)
{
    if (!p->discard)
        tp_call_fail(p, code, off);
    p->discard = 1;
    p->vkind = VK_DROP;
}

static void announce(tp_parser *p)
{
    if (p->have_args)
        return;
    p->have_args = 1;
    if (p->discard)
        return;
    if (tp_call_open(p, p->name.data, p->name.len, p->call_off))
        tp_call_announce(p);
    else
        p->discard = 1;
}

static void invoke_begins(tp_parser *p, uint64_t off)
{
    tp_text_call_starts(p);
    p->mode = M_NAME;
    p->node = 0;
    p->call_off = off;
    p->discard = 0;
    p->have_args = 0;
    p->first = 1;
    p->tool_id = -1;
    p->vkind = VK_DROP;
    tp_buf_clear(&p->name);
    tp_buf_clear(&p->key);
    tp_buf_clear(&p->pending);
}

static void end_invoke(tp_parser *p)
{
    announce(p);
    if (!p->discard) {
        args_lit(p, p->first ? "{}" : "}");
        tp_call_close(p);
    } else {
        p->after_call = 1;
    }
    p->discard = 0;
    p->fstate = 0; /* no prose after it yet */
    tp_buf_clear(&p->pending);
    tp_buf_shrink(&p->pending, 1u << 16);
}

/* ---- the opener: NS, then the rest of open_seq (blanks at blank_at) ---- */

static void not_a_call(tp_parser *p, const nx_row *r)
{
    p->mode = M_TEXT;
    p->node = 0;
    tp_raw_end(p);
    /* at their stream offsets (p->call_off: the NS's), so blanks it ends
     * with that a call's marker follows are known to be next to it */
    tp_text_at(p, (const uint8_t *)r->ns, strlen(r->ns), p->call_off);
    tp_text_at(p, p->pending.data, p->pending.len, p->call_off + strlen(r->ns));
    tp_buf_clear(&p->pending);
}

static size_t open_bytes(tp_parser *p, const nx_row *r, const uint8_t *s, size_t n, uint64_t off)
{
    for (size_t i = 0; i < n; i++) {
        size_t pos = p->nx_pos;
        int blank_ok = pos == r->blank_at[0] || pos == r->blank_at[1] || pos == r->blank_at[2];
        if (blank_ok && tp_is_ws(s[i]) && p->pending.len < pos + NX_BLANKS_MAX) {
            if (tp_buf_push(&p->pending, s[i])) {
                not_a_call(p, r);
                return i;
            }
            continue;
        }
        if ((uint8_t)r->open_seq[pos] != s[i] || tp_buf_push(&p->pending, s[i])) {
            not_a_call(p, r);
            return i; /* the deciding byte is scanned again as text */
        }
        if (++p->nx_pos == r->open_len) {
            invoke_begins(p, off + i + 1 - strlen(r->invoke_tag) - 1 - strlen(r->ns));
            return i + 1;
        }
    }
    return n;
}

/* ---- tags between invokes and between parameters ---- */

/* One byte of a tag after its NS (M_BTAG / M_ITAG; p->nx_pos: 0 before its
 * `<`, else 1). The tag's text goes to p->key. Returns 0 when the byte was
 * not the tag's (it is read again by the caller's mode). */
/* Between invokes: the tag read so far (NS, blanks, `<` and its text, the
 * bytes of p->pending; `extra` bytes more, the last ones read) ended at
 * chunk index `at` and opens no invoke: markup of no call. */
static void btag_no_call(tp_parser *p, const nx_row *r, size_t extra, size_t at)
{
    size_t len = strlen(r->ns) + p->nx_ns + p->nx_pos + p->key.len + extra;
    p->mode = M_BLOCK;
    p->node = 0;
    tp_stray_markup(p, len, at);
}

/* The wl bytes of the stream that end at chunk index `at` (those before
 * the chunk from the tail ring), as the model wrote them, into buf;
 * 0 when the ring no longer holds them. */
static int as_written(const tp_parser *p, uint8_t *buf, size_t wl, size_t at)
{
    uint64_t start = p->base + at - wl;
    if (!p->chunk || p->base + at < wl || p->base - (start < p->base ? start : p->base) > TP_DROP_TAIL)
        return 0;
    for (size_t k = 0; k < wl; k++) {
        uint64_t o = start + k;
        buf[k] = o >= p->base ? p->chunk[o - p->base] : p->tail[o % TP_DROP_TAIL];
    }
    return 1;
}

static int tag_byte(tp_parser *p, const nx_row *r, uint8_t c, size_t i, uint64_t off)
{
    int inv = p->mode == M_ITAG;
    uint8_t back = inv ? M_INV : M_BLOCK;
    if (!inv && tp_buf_push(&p->pending, c))
        p->nx_lt = 1; /* (over max_buffer: a cut-off tag is reported without its bytes) */
    if (p->nx_pos == 0) {
        if (tp_is_ws(c) && p->nx_ns < NX_BLANKS_MAX) {
            p->nx_ns++; /* blanks after the NS */
            return 1;
        }
        if (c != '<') {
            if (!inv) { /* an NS with no tag after it */
                btag_no_call(p, r, 0, i);
                return 0;
            }
            p->mode = back;
            p->node = 0;
            return 0;
        }
        p->nx_pos = 1;
        tp_buf_clear(&p->key);
        return 1;
    }
    if (c != '>') {
        if (c == (uint8_t)r->ns[0] || c == '<') { /* no tag: markup is dropped */
            if (!inv) {
                btag_no_call(p, r, 0, i);
                return 0;
            }
            p->mode = back;
            p->node = 0;
            return 0;
        }
        /* a tag name over max_name ends at a character boundary: a
         * character that does not fit whole is not the tag's (a tag between
         * invokes then ends before it, and it is read again as prose; the
         * dropped text was cut inside it: random-seed fuzz finding) */
        size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        int full = need > 1 && p->key.limit && p->key.len + need > p->key.limit;
        if (full && !inv) {
            btag_no_call(p, r, 0, i);
            return 0;
        }
        if (full || tp_buf_push(&p->key, c)) { /* (in an invoke: the error at the character's start) */
            if (inv)
                fail(p, TP_ERR_BUFFER_LIMIT, off);
            else
                btag_no_call(p, r, 1, i + 1);
            p->mode = back;
            p->node = 0;
            return 1;
        }
        size_t il = strlen(r->invoke_tag);
        if (p->key.len == il && memcmp(p->key.data, r->invoke_tag, il) == 0) {
            if (inv)
                end_invoke(p); /* the previous invoke was not closed */
            const char *marker = r->open_seq + strlen(r->block_open); /* NS "<" invoke_tag */
            size_t ml = r->open_len - strlen(r->block_open);
            uint8_t wb[256];
            size_t wl = strlen(r->ns) + p->nx_ns + 1 + il;
            if (!inv && p->nx_lt == 0) { /* as written, blanks after the NS included */
                marker = (const char *)p->pending.data;
                ml = p->pending.len;
            } else if (!inv) { /* (not kept: recorded from the tag's `<`) */
                ml -= strlen(r->ns);
            } else if (wl <= sizeof wb && as_written(p, wb, wl, i + 1)) {
                marker = (const char *)wb; /* in an invoke: as written too */
                ml = wl;
            }
            tp_raw_begin(p, marker, ml, i + 1);
            invoke_begins(p, off + 1 - ml);
        }
        return 1;
    }
    /* the tag is complete */
    tp_buf *k = &p->key;
    p->node = 0;
    if (k->len && k->data[0] == '/') {
        const uint8_t *nm = k->data + 1;
        size_t nl = k->len - 1;
        while (nl && tp_is_ws(nm[nl - 1]))
            nl--;
        if (eq(nm, nl, r->block_end)) {
            if (inv)
                end_invoke(p);
            else if (p->fstate) { /* after prose: the block's end closes no call */
                p->after_call = 1; /* the blanks before it: the template's, with it */
                btag_no_call(p, r, 1, i + 1);
            }
            p->mode = M_TEXT;
        } else if (inv && eq(nm, nl, r->invoke_end)) {
            end_invoke(p);
            p->mode = M_BLOCK;
        } else if (!inv) {
            btag_no_call(p, r, 1, i + 1); /* a stray closing tag */
        } else {
            p->mode = back; /* a stray closing tag */
        }
        return 1;
    }
    if (!inv) {
        btag_no_call(p, r, 1, i + 1); /* a tag that is no invoke */
        return 1;
    }
    /* a parameter: its key, blanks stripped */
    size_t a = 0;
    while (a < k->len && tp_is_ws(k->data[a]))
        a++;
    while (k->len > a && tp_is_ws(k->data[k->len - 1]))
        k->len--;
    if (a) /* (an empty key may have no buffer: no pointer arithmetic on NULL) */
        memmove(k->data, k->data + a, k->len - a);
    k->len -= a;
    if (k->len == 0) {
        p->mode = M_INV;
        return 1;
    }
    announce(p);
    p->mode = M_VALUE;
    p->nx_depth = 0;
    tp_buf_clear(&p->pending);
    if (p->discard) {
        p->vkind = VK_DROP;
        return 1;
    }
    args_lit(p, p->first ? "{\"" : ", \"");
    p->first = 0;
    tp_ev_args_escaped(p, k->data, k->len);
    args_lit(p, "\": ");
    int kind = tp_parser_param_kind(p, p->tool_id, k->data, k->len);
    p->vkind = kind == TP_PARAM_STRING ? VK_STREAM : VK_HOLD;
    if (p->vkind == VK_STREAM)
        args_lit(p, "\"");
    return 1;
}

/* ---- values ---- */

static void hold(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (p->vkind == VK_HOLD && tp_buf_append(&p->pending, s, n))
        fail(p, TP_ERR_BUFFER_LIMIT, tp_buf_limit_at(&p->pending, s, off, n));
}

static void value_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (p->vkind == VK_STREAM)
        tp_ev_args_escaped(p, s, n);
    else
        hold(p, s, n, off);
}

/* A held value, whole, to the host: the key's bytes, then the raw value
 * (only a JSON text the core cannot read as Python's json.loads does). */
static void host_value(tp_parser *p)
{
    size_t start = p->out.len;
    if (tp_buf_append(&p->out, p->key.data, p->key.len) ||
        (p->pending.len && tp_buf_append(&p->out, p->pending.data, p->pending.len))) {
        p->oom = 1;
        return;
    }
    tp_ev_mark(p, TP_EV_RAW_VALUE, p->cur, start);
    if (!p->oom)
        p->ev[p->nev - 1].offset = p->key.len;
}

/* A held value, typed by the tool's schema (fmt_nsxml_value.c). */
static void typed_value(tp_parser *p, const nx_row *r)
{
    const tp_schema *sc = tp_parser_tools(p)->schema;
    int node = tp_schema_param(sc, tp_schema_tool(sc, p->name.data, p->name.len), p->key.data, p->key.len);
    size_t start = p->out.len;
    int res = tp_nsxml_value(sc, node, r->ns, p->pending.data, p->pending.len, &p->js, p->lim.max_depth, &p->out);
    if (res < 0)
        p->oom = 1;
    else if (res == TP_TV_TEXT)
        tp_ev_args_from(p, start);
    else
        host_value(p);
}

static void value_close(tp_parser *p)
{
    if (p->vkind == VK_STREAM)
        args_lit(p, "\"");
    else if (p->vkind == VK_HOLD && !p->discard)
        typed_value(p, row_of(p));
    p->vkind = VK_DROP;
    tp_buf_clear(&p->pending);
    tp_buf_shrink(&p->pending, 1u << 16);
}

/* The bytes of a value's inner tag (from its NS, p->pending[nx_ns:]) are
 * the value's: streamed, kept (held), or dropped. */
static void tag_is_content(tp_parser *p)
{
    if (p->vkind == VK_STREAM)
        tp_ev_args_escaped(p, p->pending.data, p->pending.len);
    if (p->vkind != VK_HOLD)
        tp_buf_clear(&p->pending);
    p->mode = M_VALUE;
    p->node = 0;
}

/* Appends a byte of a value's inner tag; on failure the value is dropped
 * (and the tag with it). */
static int vpush(tp_parser *p, uint8_t c, uint64_t off)
{
    if (!tp_buf_push(&p->pending, c))
        return 1;
    fail(p, TP_ERR_BUFFER_LIMIT, tp_buf_char_start(&p->pending, c, off)); /* (at a character's start) */
    tag_is_content(p);
    return 0;
}

/* One byte of a tag inside a value. Returns 0 when the byte ended the tag
 * without being part of it (it is read again). */
static int vtag_byte(tp_parser *p, const nx_row *r, uint8_t c, uint64_t off)
{
    size_t len = p->pending.len;
    if (p->nx_lt == SIZE_MAX) { /* blanks, then `<` */
        if (tp_is_ws(c) && len - p->nx_ns < strlen(r->ns) + NX_BLANKS_MAX) {
            vpush(p, c, off);
            return 1;
        }
        if (c != '<') {
            tag_is_content(p);
            return 0;
        }
        if (vpush(p, c, off))
            p->nx_lt = len;
        return 1;
    }
    if (c != '>') {
        if (c == (uint8_t)r->ns[0] || c == '<' || len - p->nx_lt > p->key.len + NX_TAG_EXTRA) {
            tag_is_content(p);
            return 0;
        }
        vpush(p, c, off);
        return 1;
    }
    /* the tag is complete: pending[nx_lt + 1 : len] is its text */
    const uint8_t *t = p->pending.data + p->nx_lt + 1;
    size_t tl = len - p->nx_lt - 1;
    if (tl && t[0] == '/') {
        const uint8_t *nm = t + 1;
        size_t nl = tl - 1;
        while (nl && tp_is_ws(*nm)) {
            nm++;
            nl--;
        }
        while (nl && tp_is_ws(nm[nl - 1]))
            nl--;
        /* the key's own closing tag at the value's level; the invoke's or
         * block's at any level (an inner element left open) */
        int top = p->nx_depth == 0 || p->vkind == VK_STREAM;
        int act = top && nl == p->key.len && memcmp(nm, p->key.data, nl) == 0 ? 1
                : eq(nm, nl, r->invoke_end)                                     ? 2
                : eq(nm, nl, r->block_end)                                      ? 3
                                                                                : 0;
        if (act) {
            p->pending.len = p->nx_ns; /* the closing tag is not the value's */
            value_close(p);
            p->node = 0;
            if (act == 1) {
                p->mode = M_INV;
            } else {
                end_invoke(p);
                p->mode = act == 2 ? M_BLOCK : M_TEXT;
            }
            return 1;
        }
        if (!top)
            p->nx_depth--;
    } else if (p->vkind != VK_STREAM) {
        p->nx_depth++;
    }
    if (vpush(p, c, off))
        tag_is_content(p);
    return 1;
}

/* ---- scanning ---- */

typedef void (*sink_fn)(tp_parser *p, const uint8_t *s, size_t n, uint64_t off);

static size_t scan(tp_parser *p, const tp_matcher *m, const uint8_t *s, size_t n, int *match,
                   sink_fn sink, uint64_t off)
{
    tp_scan_res r;
    size_t hl = 0;
    const uint8_t *held = tp_matcher_path(m, p->node, &hl);
    tp_matcher_scan(m, &p->node, s, n, &r);
    if (sink) {
        if (r.held_text)
            sink(p, held, r.held_text, off - hl);
        if (r.text_len)
            sink(p, s, r.text_len, off);
    }
    *match = r.match;
    return r.consumed;
}

static void name_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (!p->discard && tp_buf_append(&p->name, s, n))
        fail(p, TP_ERR_BAD_NAME, tp_buf_limit_at(&p->name, s, off, n));
}

/* Between invokes: blanks are the template's; other bytes are prose
 * (p->fstate: prose began), kept as text. */
static void block_text(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (!p->fstate) {
        while (n && tp_is_ws(*s)) {
            s++;
            n--;
            off++;
        }
        if (!n)
            return;
        p->fstate = 1;
    }
    /* prose is read again: an error's dropped text ends at its first byte,
     * by stream offset (s may be a partial NS held from earlier chunks,
     * released while the bytes after it are still held) */
    if (p->drop_on && p->chunk) {
        if (off >= p->base)
            tp_drop_end(p, (size_t)(off - p->base), 0);
        else
            tp_drop_end(p, 0, (size_t)(p->base - off)); /* (the record ends at base) */
    }
    tp_text(p, s, n);
}

static void nx_feed(tp_parser *p, const uint8_t *s, size_t n)
{
    const nx_row *r = row_of(p);
    size_t nsl = strlen(r->ns);
    size_t i = 0;
    while (i < n && !p->oom) {
        uint64_t off = p->base + i;
        int match;
        switch (p->mode) {
        case M_TEXT:
            i += tp_scan_text(p, &r->text_m, s + i, n - i, &match);
            if (match == 0) {
                tp_raw_begin(p, r->ns, nsl, i);
                p->call_off = p->base + i - nsl; /* (invoke_begins sets it again) */
                p->mode = M_OPEN;
                p->nx_pos = 0;
                tp_buf_clear(&p->pending);
            }
            break;
        case M_OPEN:
            i += open_bytes(p, r, s + i, n - i, off);
            break;
        case M_BLOCK:
            i += scan(p, &r->ns_m, s + i, n - i, &match, block_text, off);
            if (match == 0) {
                p->mode = M_BTAG;
                p->nx_pos = 0;
                p->nx_ns = 0;
                tp_buf_clear(&p->key);
                tp_buf_clear(&p->pending); /* the tag's bytes, from its NS */
                p->nx_lt = tp_buf_append(&p->pending, r->ns, nsl) ? 1 : 0;
            }
            break;
        case M_INV: /* prose between the call's tags: bad_markup (tp_junk.c) */
            i += scan(p, &r->ns_m, s + i, n - i, &match, tp_junk_bytes, off);
            if (match == 0) {
                tp_junk_tag(p, s + i, nsl);
                p->mode = M_ITAG;
                p->nx_pos = 0;
                p->nx_ns = 0;
                tp_buf_clear(&p->key);
            }
            break;
        case M_BTAG:
        case M_ITAG:
            if (tag_byte(p, r, s[i], i, off))
                i++;
            break;
        case M_NAME:
            i += scan(p, &r->name_m, s + i, n - i, &match, name_bytes, off);
            if (match == 0) {
                p->mode = M_INV;
                if (!p->discard && p->name.len == 0)
                    fail(p, TP_ERR_BAD_NAME, p->call_off);
                else if (!p->discard)
                    p->tool_id = tp_parser_find_tool(p, p->name.data, p->name.len);
            }
            break;
        case M_VALUE:
            i += scan(p, &r->ns_m, s + i, n - i, &match, value_bytes, off);
            if (match == 0) {
                if (p->vkind != VK_HOLD)
                    tp_buf_clear(&p->pending);
                p->nx_ns = p->pending.len;
                p->nx_lt = SIZE_MAX;
                p->mode = M_VTAG;
                if (tp_buf_append(&p->pending, r->ns, nsl)) {
                    fail(p, TP_ERR_BUFFER_LIMIT, p->base + i);
                    tag_is_content(p);
                }
            }
            break;
        case M_VTAG:
            if (vtag_byte(p, r, s[i], off))
                i++;
            break;
        }
    }
}

static void nx_finish(tp_parser *p)
{
    const nx_row *r = row_of(p);
    switch (p->mode) {
    case M_TEXT:
        tp_release_held(p, &r->text_m);
        break;
    case M_OPEN: /* an opener that started no call: text */
        not_a_call(p, r);
        break;
    case M_BLOCK: /* the calls are complete; a partial NS after prose is prose */
        if (p->fstate) {
            tp_release_held(p, &r->ns_m);
        } else if (p->node) { /* after a call: markup of no call */
            size_t hl;
            const uint8_t *held = tp_matcher_path(&r->ns_m, p->node, &hl);
            tp_drop_held_at_end(p, TP_ERR_UNTERMINATED, held, hl);
        }
        p->node = 0;
        break;
    case M_BTAG: /* a tag cut off: markup of no call */
        p->node = 0;
        if (p->fstate)
            tp_text_flush_ws(p); /* blanks after prose: prose */
        if (p->nx_lt == 0)
            tp_drop_held_at_end(p, TP_ERR_UNTERMINATED, p->pending.data, p->pending.len);
        else
            tp_ev_error(p, TP_ERR_UNTERMINATED, p->base, -1, NULL, 0);
        break;
    default: /* end of stream inside an invoke: reported; one not announced yet is text */
        p->node = 0;
        if (!p->discard)
            tp_call_unterminated(p);
        else
            p->after_call = 1;
        break;
    }
    tp_text_finish(p);
}

const tp_format tp_fmt_minimax_m3 = {"minimax_m3", nx_feed, nx_finish};
