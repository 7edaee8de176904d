/* GLM-4.5/4.6 ("glm45") and GLM-4.7/5 ("glm47"):
 *
 *   <tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n...</tool_call>
 *   <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>
 *
 * Both spellings are read by one state machine: the name ends at <arg_key>,
 * </tool_call>, a newline or a literal "\n" escape (surrounding whitespace
 * is stripped); between the parts, whitespace and literal "\n" escapes (and
 * anything else, as SGLang's regexes skip it) are ignored. Zero-argument
 * calls give {}. A missing </tool_call> before the next <tool_call> is
 * tolerated; the end of the stream inside a call is an "unterminated" error.
 *
 * Values are raw text whose JSON type comes from the tool's schema,
 * compiled once per tool list into a kind per parameter (tp_types.h). This
 * module only decides *how to stream* a value:
 *
 *  - A parameter declared TP_PARAM_STRING is its raw text, as the chat
 *    templates render a string argument (`v` if it is a string, `tojson`
 *    otherwise): it streams as JSON-escaped string content while it is
 *    generated, holding back only a possible partial </arg_value>;
 *    whitespace inside the value is kept. (SGLang also un-quotes and
 *    JSON-decodes declared strings; see docs/PARSERS.md.)
 *  - Every other value (declared non-string, undeclared key, forwarded
 *    unknown tool, no tool list) is held (bounded by lim.max_buffer) until
 *    </arg_value> and given to tp_value_complete(), which writes its JSON
 *    text by the family's rules (tp_type_rules.c) or hands it to the host.
 *
 * The core writes '{', '"key": ', ', ', streamed strings and '}' itself, so
 * one-shot and streamed results are the same for every chunking. Each byte
 * is examined once; state held between feeds is bounded by the limits. */
#include <string.h>

#include "tp_internal.h"

enum {
    M_TEXT,      /* prose; looking for <tool_call> */
    M_NAME,      /* tool name */
    M_BETWEEN,   /* before <arg_key> or </tool_call> */
    M_KEY,       /* inside <arg_key>...</arg_key> */
    M_AFTER_KEY, /* before <arg_value> */
    M_VALUE,     /* inside <arg_value>...</arg_value> */
    M_SKIP,      /* a broken call: drop everything up to its end tag */
};
enum { VK_DROP, VK_RAW, VK_STREAM };
#define TAG_LEN 11 /* strlen("<tool_call>") */

static tp_matcher text_m;  /* <tool_call>, stray </tool_call> */
static tp_matcher name_m;  /* <arg_key>, </tool_call>, \n, literal \n */
static tp_matcher between_m; /* <arg_key>, </tool_call>, <tool_call> */
static tp_matcher key_m;   /* </arg_key> */
static tp_matcher akey_m;  /* <arg_value>, <arg_key>, </tool_call>, <tool_call> */
static tp_matcher value_m; /* </arg_value> */
static tp_matcher skip_m;  /* </tool_call>, <tool_call> */

int tp_fmt_glm_init(void)
{
    static const char *const text_p[] = {"<tool_call>", "</tool_call>"};
    static const char *const name_p[] = {"<arg_key>", "</tool_call>", "\n", "\\n"};
    static const char *const between_p[] = {"<arg_key>", "</tool_call>", "<tool_call>"};
    static const char *const key_p[] = {"</arg_key>"};
    static const char *const akey_p[] = {"<arg_value>", "<arg_key>", "</tool_call>", "<tool_call>"};
    static const char *const value_p[] = {"</arg_value>"};
    static const char *const skip_p[] = {"</tool_call>", "<tool_call>"};
    if (tp_matcher_build(&text_m, text_p, 2) || tp_matcher_build(&name_m, name_p, 4) ||
        tp_matcher_build(&between_m, between_p, 3) || tp_matcher_build(&key_m, key_p, 1) ||
        tp_matcher_build(&akey_m, akey_p, 4) || tp_matcher_build(&value_m, value_p, 1) ||
        tp_matcher_build(&skip_m, skip_p, 2))
        return -1;
    return 0;
}

static int is_blank(uint8_t c) { return tp_is_ws(c) || c == '\v' || c == '\f'; }

static void args_lit(tp_parser *p, const char *s)
{
    if (!p->discard)
        tp_ev_args(p, (const uint8_t *)s, strlen(s));
}

/* ---- call lifecycle ---- */

/* A <tool_call> tag. Until its name shows whether it opens a call, every
 * byte after it is kept raw in `pending`; the whitespace before it stays
 * held by the text layer. */
static void start_call(tp_parser *p, uint64_t off)
{
    /* the tag ended at chunk index off + TAG_LEN - base: recorded from there */
    tp_raw_begin(p, "<tool_call>", TAG_LEN, (size_t)(off + TAG_LEN - p->base));
    p->mode = M_NAME;
    p->have_name = 0; /* a blank followed the name's first bytes */
    p->have_args = 0; /* ... and then more of it: the tag was prose */
    p->node = 0;
    p->call_off = off;
    p->discard = 0;
    p->first = 1;
    p->tool_id = -1;
    tp_buf_clear(&p->name);
    tp_buf_clear(&p->key);
    tp_buf_clear(&p->pending);
}

/* an error inside the call: report it and skip to the end tag */
static void broken(tp_parser *p, int code, uint64_t off)
{
    tp_call_fail(p, code, off);
    tp_buf_clear(&p->pending);
    tp_buf_shrink(&p->pending, 0);
    p->mode = M_SKIP;
    p->node = 0;
    p->after_call = 1;
}

static void end_call(tp_parser *p)
{
    if (!p->discard) {
        tp_call_announce(p); /* announce point: the end of a call without arguments */
        args_lit(p, p->first ? "{}" : "}");
        tp_call_close(p);
    } else {
        p->after_call = 1;
    }
    p->mode = M_TEXT;
    p->node = 0;
    tp_buf_clear(&p->pending);
    tp_buf_shrink(&p->pending, 0);
}

static void strip(tp_buf *b, size_t *from)
{
    size_t a = 0;
    while (a < b->len && is_blank(b->data[a]))
        a++;
    while (b->len > a && is_blank(b->data[b->len - 1]))
        b->len--;
    *from = a;
}

/* the name is complete; `match` is the name_m marker that ended it */
static void name_done(tp_parser *p, int match, uint64_t off)
{
    size_t a;
    strip(&p->name, &a);
    if (p->name.len == a && (match == 2 || match == 3)) { /* blank line before the name */
        const char *nl = match == 2 ? "\n" : "\\n";
        if (tp_buf_append(&p->pending, nl, strlen(nl)))
            broken(p, TP_ERR_BAD_NAME, off - strlen(nl));
        return;
    }
    /* the tag opened a call (well-formed or not) */
    tp_text_call_starts(p);
    tp_buf_clear(&p->pending);
    p->trailing_reported = 0;
    if (p->name.len == a) {
        if (match == 1) { /* <tool_call></tool_call> */
            tp_ev_error(p, TP_ERR_BAD_NAME, off, -1, NULL, 0);
            p->mode = M_TEXT;
            p->after_call = 1;
        } else {
            broken(p, TP_ERR_BAD_NAME, off);
        }
        return;
    }
    const uint8_t *name = p->name.data + a;
    size_t len = p->name.len - a;
    if (tp_call_open(p, name, len, p->call_off)) {
        p->tool_id = tp_parser_find_tool(p, name, len);
    } else {
        p->discard = 1; /* reported; read on to find the end of the call */
    }
    if (match == 0)
        p->mode = M_KEY;
    else if (match == 1)
        end_call(p);
    else
        p->mode = M_BETWEEN;
    tp_buf_clear(&p->key);
}

/* <arg_value> opens the value of the key just read */
static void value_open(tp_parser *p)
{
    p->mode = M_VALUE;
    p->fstate = 0;
    tp_buf_clear(&p->pending);
    if (p->discard) {
        p->vkind = VK_DROP;
        return;
    }
    size_t a;
    strip(&p->key, &a);
    if (a) {
        memmove(p->key.data, p->key.data + a, p->key.len - a);
        p->key.len -= a;
    }
    tp_call_announce(p); /* announce point: <arg_key>K</arg_key><arg_value> */
    args_lit(p, p->first ? "{\"" : ", \"");
    p->first = 0;
    tp_ev_args_escaped(p, p->key.data, p->key.len);
    args_lit(p, "\": ");
    if (tp_parser_param_kind(p, p->tool_id, p->key.data, p->key.len) == TP_PARAM_STRING) {
        args_lit(p, "\""); /* the raw text, streamed as it is generated */
        p->vkind = VK_STREAM;
    } else {
        p->vkind = VK_RAW; /* held until </arg_value>, then typed */
    }
}

/* stream offset of the byte that crosses b's limit when n bytes that start
 * at stream offset `off` are appended (so errors do not depend on chunking) */
static uint64_t limit_at(const tp_buf *b, uint64_t off, size_t n)
{
    size_t room = b->limit > b->len ? b->limit - b->len : 0;
    return off + (room < n ? room : n);
}

static void hold(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (tp_buf_append(&p->pending, s, n))
        broken(p, TP_ERR_BUFFER_LIMIT, limit_at(&p->pending, off, n));
}

static void value_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (n == 0)
        return;
    switch (p->vkind) {
    case VK_DROP:
        break;
    case VK_STREAM:
        tp_ev_args_escaped(p, s, n);
        break;
    case VK_RAW:
        hold(p, s, n, off);
        break;
    }
}

static void value_close(tp_parser *p)
{
    p->mode = M_BETWEEN;
    if (p->vkind == VK_STREAM) {
        args_lit(p, "\"");
    } else if (p->vkind == VK_RAW) {
        tp_value_complete(p, p->key.data, p->key.len, p->pending.data, p->pending.len);
    }
    tp_buf_clear(&p->pending);
    tp_buf_shrink(&p->pending, 1u << 16);
}

/* Scans s[0:n) with m; non-marker bytes (including held-back bytes that
 * turned out to be content) go to `sink` (NULL: dropped). */
typedef void (*sink_fn)(tp_parser *p, const uint8_t *s, size_t n, uint64_t off);

static size_t scan(tp_parser *p, const tp_matcher *m, const uint8_t *s, size_t n, int *match,
                   sink_fn sink, uint64_t off)
{
    tp_scan_res r;
    uint8_t old = p->node;
    uint8_t mode = p->mode;
    size_t hl = 0;
    const uint8_t *held = tp_matcher_path(m, old, &hl);
    tp_matcher_scan(m, &p->node, s, n, &r);
    if (sink) {
        if (r.held_text)
            sink(p, held, r.held_text, off - hl); /* held bytes came before this chunk */
        if (r.text_len && p->mode == mode)
            sink(p, s, r.text_len, off);
    }
    *match = r.match;
    if (p->mode != mode && p->nev && p->ev[p->nev - 1].type == TP_EV_ERROR) {
        /* a limit error: the call is skipped from the first byte that did
         * not fit, wherever the chunk boundaries are */
        uint64_t at = p->ev[p->nev - 1].offset;
        *match = -1;
        if (at < off) {
            int mm, junk;
            size_t junk_at;
            size_t from = (size_t)(at - (off - hl));
            tp_scan_skip(p, &skip_m, held + from, hl - from, &mm, &junk, &junk_at);
            return 0;
        }
        return (size_t)(at - off);
    }
    return r.consumed;
}

/* Name bytes (fed at most a byte plus a released partial marker at a time).
 * A name is one word: a blank inside it followed by more text means the
 * <tool_call> was prose ("use the <tool_call> tag like this"); have_args
 * records that decision for the caller, which releases the tag as text. */
static void name_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (tp_buf_append(&p->pending, s, n)) {
        broken(p, TP_ERR_BAD_NAME, limit_at(&p->pending, off, n));
        return;
    }
    for (size_t k = 0; k < n && !p->have_args; k++) {
        uint8_t c = s[k];
        if (is_blank(c)) {
            if (p->name.len == 0)
                continue; /* leading blanks */
            p->have_name = 1;
        } else if (p->have_name) {
            p->have_args = 1;
            return;
        }
        if (tp_buf_push(&p->name, c)) {
            broken(p, TP_ERR_BAD_NAME, off + k);
            return;
        }
    }
}

/* The <tool_call> tag turned out to be prose: it and the bytes after it are
 * text, and a partial marker held at this point is scanned as text would. */
static void prose_tag(tp_parser *p)
{
    size_t hl;
    const uint8_t *held = tp_matcher_path(&name_m, p->node, &hl);
    int match;
    p->node = 0;
    tp_raw_end(p);
    tp_text(p, (const uint8_t *)"<tool_call>", TAG_LEN);
    tp_text(p, p->pending.data, p->pending.len);
    tp_buf_clear(&p->pending);
    p->mode = M_TEXT;
    p->trailing_reported = 1; /* a </tool_call> after it is prose too */
    if (hl)
        tp_scan_text(p, &text_m, held, hl, &match);
}

static void key_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (tp_buf_append(&p->key, s, n))
        broken(p, TP_ERR_BUFFER_LIMIT, limit_at(&p->key, off, n));
}

static void glm_feed(tp_parser *p, const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n && !p->oom) {
        uint64_t off = p->base + i;
        int match;
        switch (p->mode) {
        case M_TEXT:
            i += tp_scan_text(p, &text_m, s + i, n - i, &match);
            if (match == 0)
                start_call(p, p->base + i - TAG_LEN);
            else if (match == 1 && p->trailing_reported) /* closes a prose tag */
                tp_text(p, (const uint8_t *)"</tool_call>", TAG_LEN + 1);
            break;
        case M_NAME:
            /* a byte at a time (names are short): the byte that shows the
             * tag is prose must not be scanned past */
            i += scan(p, &name_m, s + i, 1, &match, name_bytes, off);
            if (p->mode != M_NAME)
                break;
            if (p->have_args)
                prose_tag(p);
            else if (match >= 0)
                name_done(p, match, p->base + i);
            break;
        case M_BETWEEN:
            i += scan(p, &between_m, s + i, n - i, &match, NULL, off);
            if (match == 0) {
                p->mode = M_KEY;
                tp_buf_clear(&p->key);
            } else if (match == 1) {
                end_call(p);
            } else if (match == 2) {
                end_call(p);
                start_call(p, p->base + i - TAG_LEN);
            }
            break;
        case M_KEY:
            i += scan(p, &key_m, s + i, n - i, &match, key_bytes, off);
            if (match == 0 && p->mode == M_KEY)
                p->mode = M_AFTER_KEY;
            break;
        case M_AFTER_KEY:
            i += scan(p, &akey_m, s + i, n - i, &match, NULL, off);
            if (match == 0) {
                value_open(p);
            } else if (match == 1) {
                p->mode = M_KEY;
                tp_buf_clear(&p->key);
            } else if (match == 2) {
                end_call(p);
            } else if (match == 3) {
                end_call(p);
                start_call(p, p->base + i - TAG_LEN);
            }
            break;
        case M_VALUE:
            i += scan(p, &value_m, s + i, n - i, &match, value_bytes, off);
            if (match == 0 && p->mode == M_VALUE)
                value_close(p);
            break;
        case M_SKIP: {
            int junk;
            size_t junk_at = 0;
            i += tp_scan_skip(p, &skip_m, s + i, n - i, &match, &junk, &junk_at);
            if (match == 0) {
                p->mode = M_TEXT;
                p->after_call = 1;
            } else if (match == 1) {
                start_call(p, p->base + i - TAG_LEN);
            }
            break;
        }
        }
    }
}

static void glm_finish(tp_parser *p)
{
    switch (p->mode) {
    case M_TEXT:
        tp_release_held(p, &text_m);
        break;
    case M_SKIP:
        p->node = 0; /* a partial end tag: markup, not prose */
        break;
    case M_NAME: /* <tool_call> and a name cut off: a call */
        tp_text_call_starts(p);
        tp_call_unterminated(p);
        break;
    default: /* end of stream inside a call */
        tp_call_unterminated(p);
        break;
    }
    tp_text_finish(p);
}

const tp_format tp_fmt_glm45 = {"glm45", glm_feed, glm_finish};
const tp_format tp_fmt_glm47 = {"glm47", glm_feed, glm_finish};
