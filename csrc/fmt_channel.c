/* Recipient channels around XML-attribute calls: Muse Glimmer ("muse").
 *
 *    to=self<|message|>REASONING<|eom|>
 *   <|start|>assistant to=user<|message|>ANSWER<|eot|>
 *   <|start|>assistant to=weather.get<|message|><atem:function_calls>
 *   <atem:invoke name="weather.get">
 *   <atem:parameter name="city">Oslo</atem:parameter>
 *   </atem:invoke>
 *   </atem:function_calls><|eom|>
 *
 * The chat template ends the prompt at `<|start|>assistant`, so the model's
 * first header is ` to=R<|message|>` without `<|start|>`; later ones are
 * `<|start|>HEADER<|message|>` (the template writes `assistant to=R`). A
 * body runs to <|eom|> or <|eot|>. Its recipient R is the first `to=`
 * followed by a run of non-blank bytes other than `<` (RECIPIENT_RE of
 * SGLang's muse_glimmer_format); a header without one is `user`.
 *
 * What a body is (the row's data, ROWS below):
 *  - a recipient of the row's prose list (commentary, self, user; or none
 *    at all: output that opens with no header is one prose body) makes the
 *    body text;
 *  - any other recipient is a tool channel: its calls are the invoke
 *    elements in it, `<atem:invoke … name="N" …>` … `</atem:invoke>`, each
 *    parameter `<atem:parameter … name="K" …>V</atem:parameter>`. Tags are
 *    read as SGLang's regexes read them (`\b`, then the first `name="…"`
 *    with a non-empty value at a word boundary before the tag's `>`; the
 *    value may hold `>`). V is json.loads'ed, else its raw text (not
 *    stripped); `</atem:invoke>` also ends an open value (SGLang drops
 *    such a parameter: its bytes are kept here). Everything else in a
 *    tool channel is not text, as SGLang drops it: the template's markup
 *    (`<atem:function_calls>`, its closing tag, blanks), or junk
 *    (bad_markup, its bytes the error's dropped text up to the next invoke
 *    or the terminator);
 *  - the name is resolved against the tools as MuseGlimmerDetector resolves
 *    it: declared as written; else `f.f` is `f`; else the one declared tool
 *    with the same last dotted part.
 *
 * Every byte is accounted for (docs/SEMANTICS.md "Dropped text"): the
 * headers (with the blanks before the first), the terminators and a tool
 * channel's markup are Markup events (the message's framing, as Harmony's).
 *
 * What streams and what is held: prose streams (a possible partial
 * terminator held back); the call is announced when its invoke tag closes
 * with a declared name, the object's `{` with it; a value is held while it
 * may still be JSON and streams as a string once it cannot be (see the
 * values section), a JSON-like value is typed at its closing tag (held up
 * to lim.max_buffer). A terminator inside a call ends the body: the
 * call is reported `unterminated` (SGLang drops it). A header is held while
 * it can still become one (bounded: lim.max_name for the first one,
 * lim.max_buffer for a `<|start|>` header, then it is text). A
 * parameter's tag is read up to TAG_BOUND bytes, then it is prose inside
 * the call (its bytes are not held: see TAG_BOUND). Each byte is
 * examined once. */
#include <string.h>

#include "tp_internal.h"

enum {
    C_START, /* the output's first bytes: blanks, then `to=R<|message|>`, else prose */
    C_WS,    /* after a body: blanks (text), then <|start|>, else prose */
    C_HEAD,  /* after <|start|>: up to <|message|> */
    C_PROSE, /* a prose body */
    C_TOOL,  /* a tool body, between invokes */
    C_ITAG,  /* an invoke's tag */
    C_INV,   /* inside an invoke, between parameters */
    C_PTAG,  /* a parameter's tag */
    C_VALUE, /* a parameter's value */
};
/* tag sub-states (p->fstate) */
enum { T_BOUND, T_ATTRS, T_NAME, T_REST };

/* The longest parameter tag read (from its `<`): one that is not a tag
 * yet at this many bytes is prose inside the call. Its bytes are not held:
 * the error's dropped text takes them from the tail ring (tp_dropped.c),
 * which keeps this many, so the same for any chunking. Well above a tag
 * with a key of the default max_name. */
#define TAG_BOUND TP_DROP_TAIL

/* marker slots: the body terminators come first in every matcher */
enum { K_STOP0, K_STOP1, K_NEXT };

typedef struct {
    const tp_format *fmt;
    const char *start, *message, *stop[2];
    const char *recipient_key;
    const char *prose[4]; /* NULL-terminated */
    const char *invoke_open, *invoke_close, *param_open, *param_close;
    const char *name_attr; /* `name="` */
    const char *wrap[2];   /* the template's wrapper of a tool body's invokes (markup) */
} channel_row;

typedef struct {
    tp_matcher head, prose, tool, inv, value;
    tp_matcher tag_attrs[2], tag_name[2], tag_rest[2]; /* [0]: invoke tag, [1]: parameter tag */
} channel_matchers;

const tp_format tp_fmt_muse;

static const channel_row ROWS[] = {
    {&tp_fmt_muse, "<|start|>", "<|message|>", {"<|eom|>", "<|eot|>"}, "to=",
     {"commentary", "self", "user", NULL}, "<atem:invoke", "</atem:invoke>", "<atem:parameter",
     "</atem:parameter>", "name=\"", {"<atem:function_calls>", "</atem:function_calls>"}},
};
#define NROWS (sizeof(ROWS) / sizeof(ROWS[0]))
static channel_matchers MATCHERS[NROWS];

int tp_fmt_channel_init(void)
{
    for (size_t i = 0; i < NROWS; i++) {
        const channel_row *r = &ROWS[i];
        channel_matchers *m = &MATCHERS[i];
        const char *head[] = {r->message};
        const char *prose[] = {r->stop[0], r->stop[1]};
        const char *tool[] = {r->stop[0], r->stop[1], r->invoke_open, r->wrap[0], r->wrap[1]};
        const char *inv[] = {r->stop[0], r->stop[1], r->param_open, r->invoke_close};
        const char *value[] = {r->stop[0], r->stop[1], r->invoke_close, r->param_close};
        if (tp_matcher_build(&m->head, head, 1) || tp_matcher_build(&m->prose, prose, 2) ||
            tp_matcher_build(&m->tool, tool, 5) || tp_matcher_build(&m->inv, inv, 4) ||
            tp_matcher_build(&m->value, value, 4))
            return -1;
        for (int t = 0; t < 2; t++) {
            /* a parameter's tag also ends at the invoke's closing tag */
            int np = t ? 3 : 2;
            const char *attrs[] = {r->stop[0], r->stop[1], r->invoke_close, ">", r->name_attr};
            const char *name[] = {r->stop[0], r->stop[1], r->invoke_close, "\""};
            const char *rest[] = {r->stop[0], r->stop[1], r->invoke_close, ">"};
            attrs[np] = ">";
            attrs[np + 1] = r->name_attr;
            name[np] = "\"";
            rest[np] = ">";
            if (tp_matcher_build(&m->tag_attrs[t], attrs, np + 2) ||
                tp_matcher_build(&m->tag_name[t], name, np + 1) ||
                tp_matcher_build(&m->tag_rest[t], rest, np + 1))
                return -1;
        }
    }
    return 0;
}

static size_t row_of(const tp_parser *p)
{
    for (size_t i = 1; i < NROWS; i++)
        if (ROWS[i].fmt == p->fmt)
            return i;
    return 0;
}

/* Python's \s for ASCII (str.isspace / re's \s) */
static int is_space(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }
/* re's \w: bytes >= 0x80 count as word characters (letters beyond ASCII) */
static int is_word(uint8_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           c >= 0x80;
}

static void args_lit(tp_parser *p, const char *s) { tp_ev_args(p, (const uint8_t *)s, strlen(s)); }

/* ---- headers ---- */

/* The recipient in header h (`to=` then [^\s<]+, the first that matches):
 * is it a tool? No recipient: `user`, prose. */
static int tool_recipient(const channel_row *r, const uint8_t *h, size_t n, size_t *at, size_t *len)
{
    size_t kl = strlen(r->recipient_key);
    for (size_t i = 0; i + kl <= n; i++) {
        if (memcmp(h + i, r->recipient_key, kl) != 0)
            continue;
        size_t j = i + kl;
        while (j < n && !is_space(h[j]) && h[j] != '<')
            j++;
        if (j == i + kl)
            continue;
        *at = i + kl;
        *len = j - *at;
        for (size_t k = 0; r->prose[k]; k++)
            if (strlen(r->prose[k]) == *len && memcmp(h + *at, r->prose[k], *len) == 0)
                return 0;
        return 1;
    }
    return 0;
}

static void body_begins(tp_parser *p, int tool)
{
    if (tool)
        tp_text_flush_ws(p); /* blanks before the tool channel were text */
    p->mode = tool ? C_TOOL : C_PROSE;
    p->node = 0;
    tp_buf_clear(&p->pending);
}

/* The held bytes (pending) were no header: they and what follows are a
 * prose body. No marker completes inside them (each was a prefix of
 * something else), so one scan reads them all as text. */
static void not_a_header(tp_parser *p, const channel_matchers *m)
{
    int match;
    body_begins(p, 0);
    p->mode = C_PROSE;
    if (p->name.len) { /* C_START: the bytes it held are in name */
        tp_scan_text(p, &m->prose, p->name.data, p->name.len, &match);
        tp_buf_clear(&p->name);
    }
}

/* C_START, one byte. The output may open with `to=R<|message|>` after
 * blanks (MuseGlimmerDetector's could_start_header): the bytes are held in
 * p->name; p->fstate: 0 blanks, 1 inside `to=` (p->first bytes), 2 the
 * recipient, 3 inside <|message|> (p->first bytes). `end`: the stream
 * offset just after the byte. A header (with the blanks before it) is a
 * Markup event. Returns 1 when the byte was taken, 0 when it is to be
 * read again in the new mode. */
static int start_byte(tp_parser *p, const channel_row *r, const channel_matchers *m, uint8_t c, uint64_t end)
{
    size_t kl = strlen(r->recipient_key), ml = strlen(r->message);
    int keep = 0;
    switch (p->fstate) {
    case 0:
        if (is_space(c)) {
            keep = 1;
        } else if (c == (uint8_t)r->recipient_key[0]) {
            p->fstate = 1;
            p->first = 1;
            keep = 1;
        } else if (c == (uint8_t)r->start[0]) {
            /* a <|start|> header after blanks: the blanks are text */
            tp_text(p, p->name.data, p->name.len);
            tp_buf_clear(&p->name);
            p->mode = C_WS;
            p->fstate = 0;
            return 0;
        }
        break;
    case 1:
        if (c == (uint8_t)r->recipient_key[p->first]) {
            keep = 1;
            if (++p->first == kl)
                p->fstate = 2;
        }
        break;
    case 2:
        if (c == (uint8_t)r->message[0]) {
            p->fstate = 3;
            p->first = 1;
            keep = 1;
        } else if (!is_space(c)) {
            keep = 1;
        }
        break;
    default:
        if (c == (uint8_t)r->message[p->first]) {
            keep = 1;
            if (++p->first == ml) { /* a header: the message's framing */
                size_t at, len;
                int tool = tool_recipient(r, p->name.data, p->name.len, &at, &len);
                uint64_t off = end - p->name.len - 1; /* (it holds the stream's bytes from its start) */
                tp_ev_markup(p, off, p->name.data, p->name.len);
                tp_ev_markup(p, off + p->name.len, &c, 1);
                tp_buf_clear(&p->name);
                body_begins(p, tool);
                return 1;
            }
        }
        break;
    }
    if (keep && p->name.len < p->lim.max_name && !tp_buf_append(&p->name, &c, 1))
        return 1;
    not_a_header(p, m);
    return 0;
}

/* C_WS, one byte: blanks are text, then <|start|> (p->first bytes held in
 * pending), else the rest is a prose body. */
static int ws_byte(tp_parser *p, const channel_row *r, const channel_matchers *m, const uint8_t *s)
{
    uint8_t c = *s;
    if (p->first == 0 && is_space(c)) {
        tp_text(p, s, 1);
        return 1;
    }
    if (c == (uint8_t)r->start[p->first]) {
        p->first++;
        if (p->first == strlen(r->start)) {
            p->mode = C_HEAD;
            p->node = 0;
            tp_buf_clear(&p->pending);
        }
        return 1;
    }
    body_begins(p, 0);
    if (p->first) { /* a partial <|start|>: text, read as prose */
        int match;
        tp_scan_text(p, &m->prose, (const uint8_t *)r->start, p->first, &match);
        p->first = 0;
    }
    return 0;
}

/* ---- calls ---- */

/* MuseGlimmerDetector's _normalize_name over the declared tools: the
 * declared name (in p->name on return); 0 when the name stays as written. */
static void resolve_name(tp_parser *p)
{
    const tp_tools *t = tp_parser_tools(p);
    uint8_t *d = p->name.data;
    size_t n = p->name.len;
    if (!t || t->names.n == 0 || tp_parser_find_tool(p, d, n) >= 0)
        return;
    uint8_t *dot = memchr(d, '.', n);
    if (!dot)
        return;
    size_t h = (size_t)(dot - d);
    if (n - h - 1 == h && memcmp(d, dot + 1, h) == 0 && tp_parser_find_tool(p, d, h) >= 0) {
        p->name.len = h; /* `f.f`: f */
        return;
    }
    size_t leaf = n;
    while (leaf > 0 && d[leaf - 1] != '.')
        leaf--;
    int found = -1;
    for (uint32_t i = 0; i < t->names.n; i++) {
        const uint8_t *k = t->names.keys + t->names.off[i];
        size_t kn = t->names.off[i + 1] - t->names.off[i], kl = kn;
        while (kl > 0 && k[kl - 1] != '.')
            kl--;
        if (kn - kl == n - leaf && memcmp(k + kl, d + leaf, n - leaf) == 0) {
            if (found >= 0)
                return; /* more than one: as written */
            found = (int)i;
        }
    }
    if (found >= 0) {
        const uint8_t *k = t->names.keys + t->names.off[found];
        size_t kn = t->names.off[found + 1] - t->names.off[found];
        tp_buf_clear(&p->name);
        if (tp_buf_append(&p->name, k, kn))
            p->name.len = 0; /* longer than max_name: refused below */
    }
}

static void invoke_open(tp_parser *p)
{
    resolve_name(p);
    p->first = 1;
    if (p->name.len && tp_call_open(p, p->name.data, p->name.len, p->call_off)) {
        tp_call_announce(p);
        args_lit(p, "{"); /* the body has begun: the call's first argument byte */
        p->discard = 0;
        p->tool_id = tp_parser_find_tool(p, p->name.data, p->name.len);
    } else {
        if (!p->name.len) { /* (its error drops the raw record) */
            tp_ev_error(p, TP_ERR_BAD_NAME, p->call_off, -1, NULL, 0);
            tp_raw_end(p);
        }
        p->discard = 1; /* refused (reported): read to its end */
    }
    p->mode = C_INV;
    p->node = 0;
}

static void invoke_close(tp_parser *p)
{
    if (!p->discard) {
        args_lit(p, "}");
        tp_call_close(p);
    }
    p->discard = 0;
    p->mode = C_TOOL;
    p->node = 0;
}

/* ---- values: json.loads, else the raw text ----
 * A value is held while it may still be JSON; once it cannot be (its
 * first non-blank byte starts no JSON value, or a literal true / false /
 * null goes wrong) it is a string and streams. Values that start like a
 * JSON number, string, object or array are held to their closing tag and
 * typed there (bounded by lim.max_buffer). NaN and Infinity are strings
 * here (SGLang writes them back as non-JSON). */
enum { V_LEAD, V_LIT, V_LIT_END, V_HOLD, V_STREAM };
static const char *const LITERALS[] = {"true", "false", "null"};

static int json_ws(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static void value_key(tp_parser *p)
{
    args_lit(p, p->first ? "\"" : ", \"");
    p->first = 0;
    tp_ev_args_escaped(p, p->key.data, p->key.len);
    args_lit(p, "\": ");
}

static void value_begins(tp_parser *p)
{
    p->mode = C_VALUE;
    p->node = 0;
    p->vkind = V_LEAD;
    tp_buf_clear(&p->pending);
}

/* ---- surrogates: a value's raw text may hold lone surrogates (WTF-8,
 * from surrogatepass input). JSON reads a high surrogate's escape followed
 * by a low one's as the pair's character, so such a pair is written as
 * that character (the arguments stay canonical); lone ones stay escapes.
 * tp_json_escape writes them so, and tp_ev_args_escaped holds a high
 * surrogate a streamed piece ends with until the next piece shows whether
 * a low one follows (tp_events.c), as for every format. */
static int has_pair(const uint8_t *s, size_t n)
{
    for (size_t k = 0; k + 6 <= n; k++)
        if (tp_sur_high(s + k) && tp_sur_low(s + k + 3))
            return 1;
    return 0;
}

/* a streamed string's next piece */
static void stream_text(tp_parser *p, const uint8_t *s, size_t n) { tp_ev_args_escaped(p, s, n); }

/* a streamed string ends (its closing tag, or the call is cut off) */
static void stream_end(tp_parser *p) { tp_buf_clear(&p->pending); }

/* the value is a string: what was held is written, the rest streams */
static void start_stream(tp_parser *p)
{
    value_key(p);
    args_lit(p, "\"");
    if (p->pending.len)
        tp_ev_args_escaped(p, p->pending.data, p->pending.len);
    tp_buf_clear(&p->pending);
    p->vkind = V_STREAM;
}

/* s[0:n) at stream offset `off`. Over max_buffer: the call fails where
 * the limit is crossed (for any chunking), its dropped text from there (in
 * the chunk or the tail ring: prose reported inside the call before it is
 * not in it again) */
static int hold_value(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (!tp_buf_append(&p->pending, s, n))
        return 0;
    tp_call_fail(p, TP_ERR_BUFFER_LIMIT, tp_buf_limit_at(&p->pending, s, off, n));
    p->discard = 1;
    tp_buf_clear(&p->pending);
    return -1;
}

/* value bytes s[0:n) from stream offset `off`, in order (none of them
 * part of a closing tag) */
static void value_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    size_t i = 0;
    while (i < n && !p->discard) {
        uint8_t c = s[i];
        switch (p->vkind) {
        case V_LEAD:
            if (json_ws(c)) {
                if (hold_value(p, s + i, 1, off + i))
                    return;
                i++;
            } else if (c == 't' || c == 'f' || c == 'n') {
                p->vkind = V_LIT;
                p->fstate = c == 't' ? 0 : c == 'f' ? 1 : 2;
                p->have_name = 0;
            } else if (c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9')) {
                p->vkind = V_HOLD;
            } else {
                start_stream(p);
            }
            break;
        case V_LIT: {
            const char *lit = LITERALS[p->fstate];
            if (c != (uint8_t)lit[p->have_name]) {
                start_stream(p);
                break;
            }
            if (hold_value(p, s + i, 1, off + i))
                return;
            i++;
            if (lit[++p->have_name] == 0)
                p->vkind = V_LIT_END;
            break;
        }
        case V_LIT_END:
            if (!json_ws(c)) {
                start_stream(p);
                break;
            }
            if (hold_value(p, s + i, 1, off + i))
                return;
            i++;
            break;
        case V_HOLD:
            hold_value(p, s + i, n - i, off + i);
            return;
        default:
            stream_text(p, s + i, n - i);
            return;
        }
    }
}

/* the value's closing tag (or the invoke's: the value ends there too) */
static void value_close(tp_parser *p)
{
    if (p->discard)
        return;
    if (p->vkind == V_STREAM) {
        stream_end(p);
        args_lit(p, "\"");
        return;
    }
    value_key(p);
    if (has_pair(p->pending.data, p->pending.len)) { /* no JSON value (raw surrogates): its text */
        args_lit(p, "\"");
        tp_ev_args_escaped(p, p->pending.data, p->pending.len);
        args_lit(p, "\"");
        return;
    }
    tp_value_json_or_text(p, p->pending.len ? p->pending.data : NULL, p->pending.len);
}

/* A body terminator inside an invoke: the call is cut off (SGLang drops it). */
static void body_ends_in_call(tp_parser *p, uint64_t off)
{
    stream_end(p);
    if (p->mode == C_ITAG) {
        if (!p->discard) /* no call yet: the tag's bytes are the error's */
            tp_ev_error(p, TP_ERR_UNTERMINATED, p->call_off, -1, NULL, 0);
    } else if (!p->discard)
        tp_call_fail(p, TP_ERR_UNTERMINATED, off);
    p->discard = 0;
}

/* The body's terminator `stop` ended at chunk index `at`: an error's
 * dropped text ends before it; it is the message's framing (a Markup event,
 * after the body's text). */
static void body_ends(tp_parser *p, size_t at, const char *stop)
{
    size_t back = strlen(stop);
    tp_drop_end(p, at, back);
    p->mode = C_WS;
    p->first = 0;
    p->node = 0;
    tp_buf_clear(&p->pending);
    tp_buf_shrink(&p->pending, 1u << 16);
    tp_text_flush_ws(p); /* blanks after a call in a tool body were not text; after it they are */
    tp_ev_markup(p, p->base + at - back, (const uint8_t *)stop, back);
}

/* ---- scanning ---- */

/* Scans s[0:n) with m; the bytes that are not (part of) a marker are
 * appended to `sink` (NULL: ignored; *over: it is full). *last: the last
 * such byte, -1 if none. */
static size_t scan(tp_parser *p, const tp_matcher *m, const uint8_t *s, size_t n, int *match,
                   tp_buf *sink, int *over, int *last)
{
    tp_scan_res r;
    size_t hl = 0;
    const uint8_t *held = tp_matcher_path(m, p->node, &hl);
    tp_matcher_scan(m, &p->node, s, n, &r);
    *over = 0;
    if (sink) {
        if (r.held_text && tp_buf_append(sink, held, r.held_text))
            *over = 1;
        if (!*over && r.text_len && tp_buf_append(sink, s, r.text_len))
            *over = 1;
    }
    *last = r.text_len ? s[r.text_len - 1] : r.held_text ? held[r.held_text - 1] : -1;
    *match = r.match;
    return r.consumed;
}

/* C_TOOL, between invokes: s[0:n) from chunk index i. Blanks are the
 * template's markup (Markup events); any other byte is the model's junk
 * (prose, a stray closing tag): bad_markup, its dropped text running on
 * to the next invoke or the body's terminator. Bytes the matcher held from
 * earlier chunks that are no marker begin with `<`: junk. Returns the
 * bytes consumed; *match: the marker. */
static size_t tool_bytes(tp_parser *p, const channel_matchers *m, const uint8_t *s, size_t n, size_t i,
                         int *match)
{
    tp_scan_res r;
    size_t hl;
    tp_matcher_path(&m->tool, p->node, &hl);
    tp_matcher_scan(&m->tool, &p->node, s, n, &r);
    *match = r.match;
    if (p->drop_on || (!r.held_text && !r.text_len))
        return r.consumed;
    uint64_t junk = UINT64_MAX;
    if (r.held_text) {
        junk = p->base + i - hl;
    } else {
        size_t k = 0;
        while (k < r.text_len && tp_is_ws(s[k]))
            k++;
        tp_ev_markup(p, p->base + i, s, k);
        if (k < r.text_len)
            junk = p->base + i + k;
    }
    if (junk != UINT64_MAX)
        tp_ev_error(p, TP_ERR_BAD_MARKUP, junk, -1, (const uint8_t *)"text in a tool channel", 22);
    return r.consumed;
}

/* C_INV, between an invoke's tags: blanks are the template's; any other
 * byte is prose inside the call (bad_markup, the call stands: tp_junk.c).
 * Returns the bytes consumed; *match: the marker. */
static size_t inv_bytes(tp_parser *p, const channel_matchers *m, const uint8_t *s, size_t n, size_t i,
                        int *match)
{
    tp_scan_res r;
    size_t hl;
    const uint8_t *held = tp_matcher_path(&m->inv, p->node, &hl);
    tp_matcher_scan(&m->inv, &p->node, s, n, &r);
    *match = r.match;
    if (r.held_text)
        tp_junk_bytes(p, held, r.held_text, p->base + i - hl);
    if (r.text_len)
        tp_junk_bytes(p, s, r.text_len, p->base + i);
    if (r.match >= 0)
        tp_junk_tag(p, s + r.consumed, m->inv.patlen[r.match]);
    return r.consumed;
}

/* An invoke tag that opens no invoke (no `\b`, no name): markup of no
 * call, its bytes (the raw record) the error's dropped text, which runs on
 * as junk's does. */
static void no_invoke(tp_parser *p)
{
    tp_ev_error(p, TP_ERR_BAD_MARKUP, p->call_off, -1, (const uint8_t *)"markup that makes no call", 25);
}

static void tag_begins(tp_parser *p, int param)
{
    p->mode = param ? C_PTAG : C_ITAG;
    p->fstate = T_BOUND;
    p->node = 0;
    if (!param)
        p->discard = 0;
    tp_buf_clear(param ? &p->key : &p->name);
}

/* C_HEAD, one byte (a header is short; one that is not is bounded): up to
 * <|message|>, held in pending. A header is the message's framing: a
 * Markup event (the blanks before it were text). Over lim.max_buffer,
 * <|start|> and the header are text, and a prose body follows. `end`: the
 * stream offset just after the byte. */
static void head_byte(tp_parser *p, const channel_row *r, const channel_matchers *m, const uint8_t *s,
                      uint64_t end)
{
    int match, over, last;
    scan(p, &m->head, s, 1, &match, &p->pending, &over, &last);
    if (match == 0) {
        size_t at, len, sl = strlen(r->start), ml = strlen(r->message);
        uint64_t off = end - ml - p->pending.len - sl;
        tp_text_flush_ws(p);
        tp_ev_markup(p, off, (const uint8_t *)r->start, sl);
        tp_ev_markup(p, off + sl, p->pending.data, p->pending.len);
        tp_ev_markup(p, end - ml, (const uint8_t *)r->message, ml);
        body_begins(p, tool_recipient(r, p->pending.data, p->pending.len, &at, &len));
        return;
    }
    if (!over && p->pending.len + m->head.depth[p->node] < p->lim.max_buffer)
        return;
    size_t hl;
    const uint8_t *held = tp_matcher_path(&m->head, p->node, &hl);
    tp_text(p, (const uint8_t *)r->start, strlen(r->start));
    tp_text_at(p, p->pending.data, p->pending.len, UINT64_MAX);
    if (over) /* this byte did not fit */
        tp_text(p, s, 1);
    else
        tp_text(p, held, hl);
    body_begins(p, 0);
}

static void feed(tp_parser *p, const uint8_t *s, size_t n)
{
    size_t ri = row_of(p);
    const channel_row *r = &ROWS[ri];
    const channel_matchers *m = &MATCHERS[ri];
    size_t i = 0;
    while (i < n && !p->oom) {
        int match, over, last;
        size_t used;
        switch (p->mode) {
        case C_START:
            i += start_byte(p, r, m, s[i], p->base + i + 1);
            break;
        case C_WS:
            i += ws_byte(p, r, m, s + i);
            break;
        case C_HEAD:
            head_byte(p, r, m, s + i, p->base + i + 1);
            i++;
            break;
        case C_PROSE:
            i += tp_scan_text(p, &m->prose, s + i, n - i, &match);
            if (match >= 0)
                body_ends(p, i, r->stop[match]);
            break;
        case C_TOOL:
            i += tool_bytes(p, m, s + i, n - i, i, &match);
            if (match >= 3) { /* the wrapper's tags: markup (or the dropped text's) */
                size_t wl = strlen(r->wrap[match - 3]);
                if (!p->drop_on)
                    tp_ev_markup(p, p->base + i - wl, (const uint8_t *)r->wrap[match - 3], wl);
            } else if (match == 2) {
                p->call_off = p->base + i - strlen(r->invoke_open);
                tp_raw_begin(p, r->invoke_open, strlen(r->invoke_open), i);
                tag_begins(p, 0);
            } else if (match >= 0) {
                body_ends(p, i, r->stop[match]);
            }
            break;
        case C_INV:
            i += inv_bytes(p, m, s + i, n - i, i, &match);
            if (match == 2) {
                /* where the tag began, should it be no tag (tp_junk.c reads
                 * junk_off only while a span of prose runs) */
                p->junk_off = p->base + i - strlen(r->param_open);
                tag_begins(p, 1);
            }
            else if (match == 3)
                invoke_close(p);
            else if (match >= 0) {
                body_ends_in_call(p, p->base + i - strlen(r->stop[match]));
                body_ends(p, i, r->stop[match]);
            }
            break;
        case C_ITAG:
        case C_PTAG: {
            int param = p->mode == C_PTAG;
            tp_buf *b = param ? &p->key : &p->name;
            if (p->fstate == T_BOUND) { /* `\b` after the tag's name */
                if (is_word(s[i])) {
                    if (!param)
                        no_invoke(p);
                    else /* no parameter's tag: prose inside the call, from its `<` */
                        tp_junk_at(p, p->junk_off);
                    p->mode = param ? C_INV : C_TOOL; /* no tag: read on */
                    break;
                }
                p->fstate = T_ATTRS;
                p->have_name = 1; /* the byte before it ends the tag's name */
                break; /* read again in T_ATTRS */
            }
            const tp_matcher *tm = p->fstate == T_ATTRS ? &m->tag_attrs[param]
                                   : p->fstate == T_NAME ? &m->tag_name[param]
                                                         : &m->tag_rest[param];
            int np = param ? 3 : 2; /* first tag-own slot */
            size_t avail = n - i;
            if (param && !p->discard) {
                /* a parameter's tag is read up to TAG_BOUND bytes from its
                 * `<`: past that it is no tag (prose inside the call, its
                 * bytes from the tail ring), decided at that stream offset */
                uint64_t at = p->base + i, stop = p->junk_off + TAG_BOUND;
                if (at >= stop) {
                    tp_junk_at(p, p->junk_off);
                    tp_matcher_switch(p, tm, &m->inv); /* a terminator it began still ends the body */
                    p->mode = C_INV;
                    break;
                }
                if (avail > stop - at)
                    avail = (size_t)(stop - at);
            }
            used = scan(p, tm, s + i, avail, &match, p->fstate == T_NAME ? b : NULL, &over, &last);
            if (over) { /* a name / key longer than max_name: the call is dropped */
                if (!p->discard && !param) {
                    tp_ev_error(p, TP_ERR_BAD_NAME, p->call_off, -1, NULL, 0);
                    tp_raw_end(p);
                } else if (!p->discard) {
                    /* from the parameter tag's `<` (in the tail ring: the
                     * tag is bounded), after any prose reported before it */
                    tp_call_fail(p, TP_ERR_BUFFER_LIMIT, p->junk_off);
                }
                p->discard = 1;
                tp_buf_clear(b);
            }
            if (p->fstate == T_ATTRS && last >= 0)
                p->have_name = (uint8_t)is_word((uint8_t)last); /* the byte before what follows */
            if (match >= 0 && match < np) { /* a terminator / the invoke's end tag */
                i += used;
                if (match == 2) { /* </atem:invoke> inside a parameter tag */
                    invoke_close(p);
                } else {
                    body_ends_in_call(p, p->base + i - strlen(r->stop[match]));
                    body_ends(p, i, r->stop[match]);
                }
                break;
            }
            if (p->fstate == T_ATTRS && match == np + 1) { /* name=" */
                int w = p->have_name;
                i += used;
                p->have_name = 0; /* `"` */
                if (!w) {
                    p->fstate = T_NAME;
                    tp_buf_clear(b);
                }
                break;
            }
            i += used;
            if (match < 0)
                break;
            /* match == np: `>` (T_ATTRS, T_REST) or `"` (T_NAME) */
            if (p->fstate == T_ATTRS) { /* no name before the tag's end: no tag */
                if (!param)
                    no_invoke(p);
                else
                    tp_junk_at(p, p->junk_off);
                p->mode = param ? C_INV : C_TOOL;
                p->node = 0;
            } else if (p->fstate == T_NAME) {
                p->fstate = b->len || p->discard ? T_REST : T_ATTRS; /* an empty name: read on */
                p->have_name = 0;
            } else if (!param) {
                if (p->discard) { /* refused (its name too long): read to its end */
                    p->mode = C_INV;
                    p->node = 0;
                } else {
                    invoke_open(p);
                }
            } else {
                value_begins(p);
            }
            break;
        }
        case C_VALUE: {
            tp_scan_res sr;
            size_t hl;
            const uint8_t *held = tp_matcher_path(&m->value, p->node, &hl);
            tp_matcher_scan(&m->value, &p->node, s + i, n - i, &sr);
            if (sr.held_text)
                value_bytes(p, held, sr.held_text, p->base + i - hl);
            if (sr.text_len)
                value_bytes(p, s + i, sr.text_len, p->base + i);
            i += sr.consumed;
            match = sr.match;
            if (match == 3 || match == 2) {
                /* the invoke's closing tag ends an open value too: its
                 * bytes are the parameter's (SGLang drops the parameter) */
                value_close(p);
                tp_buf_clear(&p->pending);
                tp_buf_shrink(&p->pending, 1u << 16);
                p->mode = C_INV;
                if (match == 2)
                    invoke_close(p);
            } else if (match >= 0) {
                body_ends_in_call(p, p->base + i - strlen(r->stop[match]));
                body_ends(p, i, r->stop[match]);
            }
            break;
        }
        }
    }
}

static void finish(tp_parser *p)
{
    size_t ri = row_of(p);
    const channel_row *r = &ROWS[ri];
    const channel_matchers *m = &MATCHERS[ri];
    size_t hl;
    const uint8_t *held;
    switch (p->mode) {
    case C_START: /* no header came: its bytes are text */
        tp_text(p, p->name.data, p->name.len);
        tp_buf_clear(&p->name);
        break;
    case C_WS:
        tp_text(p, (const uint8_t *)r->start, p->first);
        break;
    case C_HEAD: /* a header without <|message|>: text */
        tp_text(p, (const uint8_t *)r->start, strlen(r->start));
        tp_text_at(p, p->pending.data, p->pending.len, UINT64_MAX);
        held = tp_matcher_path(&m->head, p->node, &hl);
        tp_text(p, held, hl);
        break;
    case C_PROSE:
        tp_release_held(p, &m->prose);
        break;
    case C_TOOL: /* a partial tag or terminator: its bytes are the error's */
        held = tp_matcher_path(&m->tool, p->node, &hl);
        tp_drop_held_at_end(p, TP_ERR_UNTERMINATED, held, hl);
        break;
    case C_ITAG: /* a call cut off in its tag: reported (its error drops the raw record) */
        if (!p->discard)
            tp_ev_error(p, TP_ERR_UNTERMINATED, p->call_off, -1, NULL, 0);
        tp_raw_end(p);
        break;
    default: /* inside an invoke */
        stream_end(p);
        if (!p->discard)
            tp_call_unterminated(p);
        break;
    }
    p->node = 0;
    tp_text_finish(p);
}

const tp_format tp_fmt_muse = {"muse", feed, finish};
