/* OpenAI Harmony (gpt-oss): messages with headers, channels and recipients.
 *
 *   <|channel|>analysis<|message|>REASONING<|end|>
 *   <|start|>assistant<|channel|>commentary<|message|>PREAMBLE<|end|>
 *   <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{ARGS}<|call|>
 *   <|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>{ARGS}<|call|>
 *   <|start|>assistant<|channel|>final<|message|>ANSWER<|return|>
 *
 * A message is `<|start|>HEADER<|message|>BODY` closed by a stop token
 * (<|end|>, <|call|>, <|return|>). The header is the role, then
 * `<|channel|>CHANNEL`, then optional words: the recipient `to=NAME` (it
 * may also stand right after the role, before <|channel|>) and the content
 * type (`<|constrain|>json`, or a bare `json`). The model's first message
 * begins at <|channel|> (its prompt ends with `<|start|>assistant`), so a
 * header opened by <|channel|> has the assistant role. The header is read
 * as OpenAI's harmony StreamableParser reads it: the channel value runs up
 * to whitespace or `<`; the other words are split on whitespace and
 * <|constrain|>; the word starting with `to=` is the recipient.
 *
 * What the body is (the row's data, see ROWS below):
 *   - an assistant message with a recipient is a tool call: the name is the
 *     recipient without the row's prefix (`functions.`); the body is one
 *     JSON object (an empty body: `{}`), announced at its `{` and streamed
 *     through the JSON normalizer as it is generated. Inside the JSON, a
 *     marker-like string is argument text (the normalizer reads strings);
 *     after the value closes, anything but whitespace up to the stop token
 *     is reported as trailing content;
 *   - otherwise the channel decides: `analysis` bodies are reasoning
 *     (TP_EV_REASONING), every other channel (`final` answers, `commentary`
 *     preambles, unknown channels) and non-assistant messages are text.
 * Text outside messages is text. Stray tokens outside a header are markup
 * and are dropped (as SGLang drops standalone structural tokens). The
 * message's framing (a header that makes no call, a body's stop token, a
 * stray token) is reported as TP_EV_MARKUP; a call's header is the call's
 * raw record (tp_raw_begin) until the call is announced. A token
 * split across chunks is held back while it can still complete: in text and
 * headers every token, in bodies only the stop tokens (anything else in a
 * body is body text, as Harmony reads it). A header is bounded by max_name;
 * a header that ends without <|message|> is reported with its bytes. */
#include <string.h>

#include "tp_internal.h"

/* token slots of a row, in matcher order */
enum { T_END, T_CALL, T_RETURN, T_START, T_CHANNEL, T_MESSAGE, T_CONSTRAIN, NTOK };
#define NSTOP 3 /* the first three slots end a message */

enum { B_TEXT, B_REASONING }; /* what a non-call body is */

typedef struct {
    const char *name;
    uint8_t kind;
} channel_rule;

typedef struct {
    const tp_format *fmt;
    const char *tok[NTOK];
    const char *assistant;        /* the role whose messages may call tools */
    const char *recipient_key;    /* `to=` */
    const char *recipient_prefix; /* stripped from the recipient: `functions.` */
    channel_rule channels[4];     /* NULL-terminated; other channels: B_TEXT */
} harmony_row;

typedef struct {
    tp_matcher all;  /* text, headers, between a call's JSON and its stop token */
    tp_matcher stop; /* message bodies */
} harmony_matchers;

const tp_format tp_fmt_gpt_oss;

static const harmony_row ROWS[] = {
    {&tp_fmt_gpt_oss,
     {"<|end|>", "<|call|>", "<|return|>", "<|start|>", "<|channel|>", "<|message|>", "<|constrain|>"},
     "assistant", "to=", "functions.",
     {{"analysis", B_REASONING}, {"commentary", B_TEXT}, {"final", B_TEXT}, {NULL, 0}}},
};
#define NROWS (sizeof(ROWS) / sizeof(ROWS[0]))
static harmony_matchers MATCHERS[NROWS];

enum {
    H_TEXT,   /* outside messages */
    H_HEAD,   /* a header, up to <|message|> */
    H_BODY,   /* a text / reasoning body, up to a stop token */
    H_OPEN,   /* a call's body: whitespace before its `{` */
    H_NOBODY, /* a call's body that is not `{`: an empty body if a stop token comes first */
    H_JSON,   /* the call's arguments */
    H_TAIL,   /* after the arguments, up to the stop token */
    H_SKIP,   /* a dropped message: up to its stop token */
    H_SKIPHEAD, /* a dropped header (over max_name): up to <|message|> */
};

/* sentinels written into the held header for the tokens inside it */
#define S_CHANNEL 0x01
#define S_CONSTRAIN 0x02

/* per-parser state kept in the generic fields:
 *   mode      H_* state
 *   vkind     B_* kind of the body being read (H_BODY)
 *   name      the header being read (tokens as sentinels)
 *   key       the tool name of the call being opened
 *   call_off  where the header began
 *   trailing_reported  junk after the arguments (H_TAIL) / before a stop
 *             token (H_NOBODY) was seen
 *   discard   the call was refused (unknown tool, call limit): its JSON
 *             body is still read as JSON (H_OPEN, H_JSON), so a token
 *             spelled inside a string does not end it, but nothing is
 *             emitted */

int tp_fmt_harmony_init(void)
{
    for (size_t r = 0; r < NROWS; r++)
        if (tp_matcher_build(&MATCHERS[r].all, ROWS[r].tok, NTOK) ||
            tp_matcher_build(&MATCHERS[r].stop, ROWS[r].tok, NSTOP))
            return -1;
    return 0;
}

static size_t row_of(const tp_parser *p)
{
    for (size_t r = 0; r < NROWS; r++)
        if (ROWS[r].fmt == p->fmt)
            return r;
    return 0;
}

static int is_word_sep(uint8_t c) { return tp_is_ws(c) || c == S_CHANNEL || c == S_CONSTRAIN; }

/* appends header text; the sentinel bytes never come from the model */
static int head_append(tp_parser *p, const uint8_t *s, size_t n)
{
    size_t at = p->name.len;
    if (tp_buf_append(&p->name, s, n))
        return -1;
    for (size_t k = at; k < p->name.len; k++)
        if (p->name.data[k] == S_CHANNEL || p->name.data[k] == S_CONSTRAIN)
            p->name.data[k] = ' ';
    return 0;
}

static int head_token(tp_parser *p, uint8_t sentinel) { return tp_buf_append(&p->name, &sentinel, 1); }

/* Scans with the `all` matcher, appending the text passed over to the
 * header. *over: the header went past max_name. */
static size_t scan_head(tp_parser *p, const tp_matcher *m, const uint8_t *s, size_t n, int *match, int *over)
{
    tp_scan_res r;
    uint8_t old = p->node;
    tp_matcher_scan(m, &p->node, s, n, &r);
    if (r.held_text) {
        size_t hl;
        const uint8_t *held = tp_matcher_path(m, old, &hl);
        if (head_append(p, held, r.held_text))
            *over = 1;
    }
    if (r.text_len && head_append(p, s, r.text_len))
        *over = 1;
    *match = r.match;
    return r.consumed;
}

static void reasoning_span(tp_parser *p, const uint8_t *s, size_t n)
{
    if (n)
        tp_ev_reasoning(p, s, n);
}

/* A body's text up to a stop token: text or reasoning. */
static size_t scan_body(tp_parser *p, const tp_matcher *m, const uint8_t *s, size_t n, int *match)
{
    if (p->vkind == B_TEXT)
        return tp_scan_text(p, m, s, n, match);
    tp_scan_res r;
    uint8_t old = p->node;
    tp_matcher_scan(m, &p->node, s, n, &r);
    if (r.held_text) {
        size_t hl;
        const uint8_t *held = tp_matcher_path(m, old, &hl);
        reasoning_span(p, held, r.held_text);
    }
    reasoning_span(p, s, r.text_len);
    *match = r.match;
    return r.consumed;
}

static void begin_header(tp_parser *p, uint64_t off, int implicit_role)
{
    tp_buf_clear(&p->name);
    p->call_off = off;
    p->mode = H_HEAD;
    p->node = 0;
    if (implicit_role)
        head_token(p, S_CHANNEL); /* bounded: the header is empty */
}

/* Markup of the message (TP_EV_MARKUP): token `match` ended at chunk
 * index i; the whitespace held before it is text */
static void token_markup(tp_parser *p, const harmony_row *row, int match, size_t i)
{
    const char *t = row->tok[match];
    size_t tl = strlen(t);
    tp_text_flush_ws(p);
    tp_ev_markup(p, p->base + i - tl, (const uint8_t *)t, tl);
}

/* A header that makes no call is complete at chunk index i (its
 * <|message|> read): its recorded bytes, then the chunk's up to i, are
 * the message's framing */
static void header_markup(tp_parser *p, const uint8_t *s, size_t i)
{
    /* a record over max_buffer by the header's end is over for every
     * chunking (a chunk end may not have come to find it so): its bytes
     * are not kept (a header that long is only under a tiny max_buffer) */
    uint64_t end = p->base + i;
    int over = p->raw_over ||
               (p->raw.limit && end >= p->raw_off && p->raw_skip + (end - p->raw_off) > p->raw.limit);
    if (p->raw_on && !over) {
        size_t skip = p->raw_skip < p->raw.len ? p->raw_skip : p->raw.len;
        tp_ev_markup(p, p->raw_off, p->raw.data + skip, p->raw.len - skip);
        if (i > p->raw_at)
            tp_ev_markup(p, p->raw_off + (p->raw.len - skip), s + p->raw_at, i - p->raw_at);
    }
    tp_raw_end(p);
}

/* A token seen where a message could begin (text, after a call, skipping):
 * <|start|> / <|channel|> open a header, a stop token ends the message
 * being skipped; <|message|> / <|constrain|> there are markup (Markup in
 * text; a skip goes on). */
static void on_token(tp_parser *p, const harmony_row *row, int match, size_t i)
{
    p->node = 0;
    if (match == T_START || match == T_CHANNEL) {
        /* the header's bytes are recorded from its token (with the
         * whitespace held before it): the message's framing, or a call's
         * text until it is announced, or an error's raw text */
        const char *t = row->tok[match];
        tp_raw_begin(p, t, strlen(t), i);
        if (p->mode == H_TEXT)
            tp_text_call_starts(p);
        begin_header(p, p->base + i, match == T_CHANNEL);
    } else {
        if (p->mode == H_TEXT) /* a stray token: markup of no message */
            token_markup(p, row, match, i);
        if (match < NSTOP)
            p->mode = H_TEXT;
    }
}

/* word [a, b) of the header equals z */
static int word_is(const uint8_t *h, size_t a, size_t b, const char *z)
{
    size_t zl = strlen(z);
    return b - a == zl && memcmp(h + a, z, zl) == 0;
}

/* The header is complete (<|message|>): what its body is. Returns the next
 * mode: H_BODY with p->vkind set, or H_OPEN for a call (p->discard set
 * when it was refused: its body is read, nothing emitted). */
static int read_header(tp_parser *p, const harmony_row *row, uint64_t off)
{
    const uint8_t *h = p->name.data;
    size_t n = p->name.len;
    size_t ch = 0;
    while (ch < n && h[ch] != S_CHANNEL)
        ch++;
    /* the channel value: after the sentinel, up to whitespace or `<` */
    size_t ca = ch + 1, cb;
    while (ca < n && tp_is_ws(h[ca]))
        ca++;
    cb = ca;
    while (cb < n && !is_word_sep(h[cb]) && h[cb] != '<')
        cb++;
    int implicit = ch == 0 && n > 0; /* begun at <|channel|>: the assistant's */
    int assistant = implicit;
    size_t ra = 0, rb = 0; /* the recipient, without `to=` */
    int have_recipient = 0, first = 1;
    size_t klen = strlen(row->recipient_key);
    /* the words: the role part, then what follows the channel value */
    for (int part = 0; part < 2; part++) {
        size_t i = part ? (ch < n ? cb : n) : 0, end = part ? n : ch;
        while (i < end) {
            while (i < end && is_word_sep(h[i]))
                i++;
            if (i >= end)
                break;
            size_t a = i;
            while (i < end && !is_word_sep(h[i]))
                i++;
            if (part == 0 && first && !implicit) {
                assistant = word_is(h, a, i, row->assistant);
                first = 0;
                if (!(i - a >= klen && memcmp(h + a, row->recipient_key, klen) == 0))
                    continue; /* the role word */
            }
            if (!have_recipient && i - a >= klen && memcmp(h + a, row->recipient_key, klen) == 0) {
                have_recipient = 1;
                ra = a + klen;
                rb = i;
            }
        }
    }
    if (!(assistant && have_recipient)) {
        p->vkind = B_TEXT;
        if (ch < n) {
            for (const channel_rule *c = row->channels; c->name; c++)
                if (word_is(h, ca, cb, c->name)) {
                    p->vkind = assistant ? c->kind : B_TEXT;
                    break;
                }
        }
        return H_BODY;
    }
    size_t plen = strlen(row->recipient_prefix);
    if (rb - ra > plen && memcmp(h + ra, row->recipient_prefix, plen) == 0)
        ra += plen;
    tp_buf_clear(&p->key);
    if (tp_buf_append(&p->key, h + ra, rb - ra)) { /* bounded as the header is: never */
        tp_ev_error(p, TP_ERR_BAD_NAME, off, -1, NULL, 0);
        p->discard = 1;
        return H_OPEN;
    }
    p->discard = !tp_call_open(p, p->key.data, p->key.len, off);
    return H_OPEN;
}

/* An empty call body (a stop token right after <|message|>): `{}`. */
static void empty_call(tp_parser *p)
{
    tp_call_announce(p);
    if (p->cur >= 0)
        tp_ev_args(p, (const uint8_t *)"{}", 2);
    tp_call_close(p);
}

static void harmony_feed(tp_parser *p, const uint8_t *s, size_t n)
{
    size_t r = row_of(p);
    const harmony_row *row = &ROWS[r];
    const tp_matcher *all = &MATCHERS[r].all, *stop = &MATCHERS[r].stop;
    size_t i = 0;
    while (i < n && !p->oom) {
        uint64_t off = p->base + i;
        switch (p->mode) {
        case H_TEXT: {
            int match;
            i += tp_scan_text(p, all, s + i, n - i, &match);
            if (match >= 0)
                on_token(p, row, match, i);
            break;
        }
        case H_HEAD: {
            int match, over = 0;
            i += scan_head(p, all, s + i, n - i, &match, &over);
            if (!over && match == T_CHANNEL)
                over = head_token(p, S_CHANNEL);
            else if (!over && match == T_CONSTRAIN)
                over = head_token(p, S_CONSTRAIN);
            if (over) {
                /* the rest of this message is dropped: the rest of the
                 * header (the held partial token is one `all` holds there
                 * too), then the body */
                tp_ev_error(p, TP_ERR_BAD_NAME, p->call_off, -1, NULL, 0);
                p->mode = H_SKIPHEAD;
                if (match >= 0)
                    p->node = 0;
                if (match == T_MESSAGE) /* a JSON body is read as JSON, as a refused call's */
                    p->mode = H_OPEN, p->discard = 1;
                else if (match >= 0 && match != T_CHANNEL && match != T_CONSTRAIN)
                    on_token(p, row, match, i);
                break;
            }
            if (match == T_CHANNEL || match == T_CONSTRAIN) {
                /* in the header */
            } else if (match == T_MESSAGE) {
                p->node = 0;
                p->trailing_reported = 0;
                p->mode = (uint8_t)read_header(p, row, p->call_off);
                if (p->mode == H_BODY)
                    header_markup(p, s, i);
            } else if (match >= 0) {
                /* a header cut short by another token: reported with its bytes */
                tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + i, -1, p->name.data, p->name.len);
                on_token(p, row, match, i);
            }
            break;
        }
        case H_BODY: {
            int match;
            i += scan_body(p, stop, s + i, n - i, &match);
            if (match >= 0) {
                token_markup(p, row, match, i); /* the message's stop token */
                p->mode = H_TEXT;
                p->node = 0;
            }
            break;
        }
        case H_OPEN: {
            uint8_t c = s[i];
            if (tp_is_ws(c)) {
                i++;
            } else if (c == '{') {
                tp_json_init(&p->js, TPJ_MODE_NORMAL, p->lim.max_depth);
                p->call_off = off;
                p->mode = H_JSON; /* the `{` is fed to the normalizer */
            } else {
                p->mode = p->discard ? H_SKIP : H_NOBODY; /* scanned again for a stop token */
                p->node = 0;
            }
            break;
        }
        case H_SKIPHEAD: {
            int match, junk;
            size_t junk_at;
            i += tp_scan_skip(p, all, s + i, n - i, &match, &junk, &junk_at);
            if (match == T_MESSAGE) {
                p->mode = H_OPEN;
                p->discard = 1;
            } else if (match >= 0 && match != T_CHANNEL && match != T_CONSTRAIN) {
                on_token(p, row, match, i);
            } else if (match >= 0) {
                p->node = 0;
            }
            break;
        }
        case H_NOBODY:
        case H_TAIL:
        case H_SKIP: {
            int match, junk;
            size_t junk_at = 0;
            size_t k = tp_scan_skip(p, all, s + i, n - i, &match, &junk, &junk_at);
            if (junk && p->mode != H_SKIP && !p->trailing_reported) {
                p->trailing_reported = 1;
                if (p->mode == H_TAIL) {
                    tp_ev_error(p, TP_ERR_TRAILING, p->base + i + junk_at, -1, NULL, 0);
                } else { /* a body that is not a JSON object: the call is dropped */
                    tp_call_fail(p, TP_ERR_BAD_MARKUP, p->base + i + junk_at);
                    p->mode = H_SKIP;
                }
            }
            i += k;
            if (match >= 0) {
                if (p->mode == H_NOBODY) {
                    if (match < NSTOP) {
                        empty_call(p);
                    } else {
                        tp_call_fail(p, TP_ERR_BAD_MARKUP, p->base + i);
                        p->mode = H_SKIP;
                    }
                }
                on_token(p, row, match, i);
            }
            break;
        }
        case H_JSON: {
            size_t k;
            if (p->discard) { /* a refused call's body: read, not written */
                k = tp_json_feed(&p->js, s + i, n - i, NULL);
                i += k;
                if (tp_json_failed(&p->js)) {
                    p->mode = H_SKIP;
                    p->node = 0;
                } else if (tp_json_done(&p->js)) {
                    p->mode = H_TAIL;
                    p->trailing_reported = 1; /* its errors were reported */
                    p->node = 0;
                }
                break;
            }
            int st = tp_call_json_args(p, s + i, n - i, &k);
            if (st < 0) {
                uint64_t at = p->base + i + p->js.err_at;
                i += k;
                tp_call_fail(p, p->js.err, at);
                p->mode = H_SKIP;
                p->node = 0;
                break;
            }
            i += k;
            if (st > 0) {
                tp_call_close(p);
                p->mode = H_TAIL;
                p->node = 0;
            }
            break;
        }
        }
    }
}

static void harmony_finish(tp_parser *p)
{
    size_t r = row_of(p);
    switch (p->mode) {
    case H_TEXT:
        tp_release_held(p, &MATCHERS[r].all);
        break;
    case H_BODY: {
        /* a message cut off: its body so far is what it is */
        size_t hl;
        const uint8_t *held = tp_matcher_path(&MATCHERS[r].stop, p->node, &hl);
        p->node = 0;
        if (p->vkind == B_TEXT)
            tp_text(p, held, hl);
        else
            reasoning_span(p, held, hl);
        break;
    }
    case H_HEAD: {
        size_t hl;
        const uint8_t *held = tp_matcher_path(&MATCHERS[r].all, p->node, &hl);
        p->node = 0;
        head_append(p, held, hl); /* over max_name: the detail is cut there */
        tp_ev_error(p, TP_ERR_UNTERMINATED, p->call_off, -1, p->name.data, p->name.len);
        break;
    }
    case H_OPEN:
    case H_NOBODY:
    case H_JSON:
        if (p->discard)
            p->node = 0; /* a refused call: reported when it was refused */
        else
            tp_call_unterminated(p);
        break;
    case H_TAIL:
    case H_SKIP:
    case H_SKIPHEAD:
        p->node = 0; /* a partial token here is markup */
        break;
    }
    tp_text_finish(p);
}

const tp_format tp_fmt_gpt_oss = {"gpt_oss", harmony_feed, harmony_finish};
