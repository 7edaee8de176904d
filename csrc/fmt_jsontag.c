/* Qwen2.5 / Qwen3 and Hermes: <tool_call>{"name": ..., "arguments": ...}</tool_call>
 * (and Arcee Trinity: the same after removing <think> / </think>, below)
 *
 * The call object is read key by key: "name" is decoded into a buffer and
 * checked against the tools as soon as it closes; "arguments" (or
 * "parameters") streams through the JSON normalizer straight into argument
 * events, or into a bounded pending buffer while the name is still unknown
 * (arguments written before the name). Other keys are validated and
 * dropped. Whitespace around the object is optional, so both the Qwen
 * ("<tool_call>\n{...}\n</tool_call>") and Hermes spellings are read.
 *
 * A <tool_call> starts a call only if the next non-whitespace byte is `{`:
 * the tag and the whitespace after it are held until that byte, and
 * released as prose when it is anything else ("use the <tool_call> tag").
 * A </tool_call> that follows such a prose tag (before the next call) is
 * prose as well; other stray end tags are markup and dropped. At the end
 * of the stream a held tag is a cut-off call ("unterminated").
 * The call is announced (CallStart) at the first byte of its arguments
 * value once the name is known, or at the object's closing `}` when it has
 * no arguments; a call that breaks before that is reported and leaves no
 * event behind. */
#include <string.h>

#include "tp_internal.h"

enum {
    M_TEXT,      /* prose; looking for <tool_call> */
    M_OPEN,      /* after <tool_call>: whitespace, then '{' (else prose) */
    M_KEY_OR_END,
    M_KEY,
    M_COLON,
    M_VALUE,
    M_AFTER,     /* after a member: ',' or '}' */
    M_END_TAG,   /* call object closed: expect </tool_call> */
    M_SKIP,      /* a broken call: drop everything up to its end tag */
};
enum { VK_NAME, VK_ARGS, VK_SKIP };
#define TAG_LEN 11 /* strlen("<tool_call>") */

static tp_matcher text_m; /* <tool_call>, stray </tool_call> */
static tp_matcher end_m;  /* </tool_call>, <tool_call> (a missing end tag) */

int tp_fmt_jsontag_init(void)
{
    static const char *const text_pats[] = {"<tool_call>", "</tool_call>"};
    static const char *const end_pats[] = {"</tool_call>", "<tool_call>"};
    if (tp_matcher_build(&text_m, text_pats, 2))
        return -1;
    return tp_matcher_build(&end_m, end_pats, 2);
}

/* a <tool_call> tag: held (with the whitespace after it, in pending) until
 * the next byte shows whether it opens a call object */
static void start_call(tp_parser *p, uint64_t off)
{
    /* the tag ended at chunk index off + TAG_LEN - base: recorded from there */
    tp_raw_begin(p, "<tool_call>", TAG_LEN, (size_t)(off + TAG_LEN - p->base));
    p->mode = M_OPEN;
    p->call_off = off;
    p->discard = 0;
    p->have_name = 0;
    p->have_args = 0;
    p->first = 1;
    p->trailing_reported = 0;
    tp_buf_clear(&p->name);
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
}

static int key_is(const tp_parser *p, const char *k)
{
    size_t n = strlen(k);
    return p->key.len == n && memcmp(p->key.data, k, n) == 0;
}

static void name_done(tp_parser *p, uint64_t off)
{
    p->have_name = 1;
    if (!tp_call_open(p, p->name.data, p->name.len, off)) {
        p->discard = 1; /* reported; read on to find the end of the call */
        tp_buf_clear(&p->pending);
        return;
    }
    if (p->pending.len) { /* the arguments came first, and were well-formed */
        tp_call_announce(p);
        tp_ev_args(p, p->pending.data, p->pending.len);
        tp_buf_clear(&p->pending);
        tp_buf_shrink(&p->pending, 0);
    }
}

static void object_done(tp_parser *p, uint64_t off)
{
    if (!p->have_name) {
        tp_buf_clear(&p->pending);
        broken(p, TP_ERR_MISSING_NAME, off);
        return;
    }
    if (!p->discard) {
        if (!p->have_args) {
            tp_call_announce(p); /* {"name": ...}: a call without arguments */
            tp_ev_args(p, (const uint8_t *)"{}", 2);
        }
        tp_call_close(p);
    } else {
        p->after_call = 1;
    }
    p->mode = M_END_TAG;
    p->node = 0;
}

static void jsontag_feed(tp_parser *p, const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n && !p->oom) {
        uint64_t off = p->base + i;
        switch (p->mode) {
        case M_TEXT: {
            int match;
            i += tp_scan_text(p, &text_m, s + i, n - i, &match);
            if (match == 0)
                start_call(p, p->base + i - TAG_LEN);
            else if (match == 1 && p->fstate) /* closes a tag that was prose */
                tp_text(p, (const uint8_t *)"</tool_call>", TAG_LEN + 1);
            break;
        }
        case M_OPEN:
            /* the whitespace is held up to TP_WS_HOLD_MAX (and max_buffer)
             * bytes; a longer run makes the tag prose */
            if (tp_is_ws(s[i]) && p->pending.len < TP_WS_HOLD_MAX &&
                tp_buf_push(&p->pending, s[i]) == 0) {
                i++;
            } else if (s[i] == '{') {
                tp_text_call_starts(p); /* whitespace before the tag: formatting */
                tp_buf_clear(&p->pending);
                p->fstate = 0;
                p->mode = M_KEY_OR_END;
                i++;
            } else {
                /* not a call: the tag and what followed it are prose */
                tp_raw_end(p);
                tp_text(p, (const uint8_t *)"<tool_call>", TAG_LEN);
                tp_text(p, p->pending.data, p->pending.len);
                tp_buf_clear(&p->pending);
                p->mode = M_TEXT;
                p->node = 0;
                p->fstate = 1; /* a </tool_call> after it is prose too */
            }
            break;
        case M_KEY_OR_END:
            if (tp_is_ws(s[i])) {
                i++;
            } else if (s[i] == '"') {
                tp_json_init(&p->ks, TPJ_MODE_RAW_STRING, 1);
                tp_buf_clear(&p->key);
                p->mode = M_KEY;
                /* the scanner reads the opening quote itself */
            } else if (s[i] == '}' && p->first) {
                i++;
                object_done(p, off);
            } else {
                broken(p, TP_ERR_JSON_SYNTAX, off);
            }
            break;
        case M_KEY: {
            size_t k = tp_json_feed(&p->ks, s + i, n - i, &p->key);
            if (tp_json_failed(&p->ks)) {
                broken(p, p->ks.err, p->base + i + p->ks.err_at);
                i += k;
                break;
            }
            i += k;
            if (tp_json_done(&p->ks))
                p->mode = M_COLON;
            break;
        }
        case M_COLON:
            if (tp_is_ws(s[i])) {
                i++;
                break;
            }
            if (s[i] != ':') {
                broken(p, TP_ERR_JSON_SYNTAX, off);
                break;
            }
            i++;
            p->first = 0;
            p->mode = M_VALUE;
            if (key_is(p, "name")) {
                if (p->have_name) {
                    broken(p, TP_ERR_BAD_NAME, off);
                    break;
                }
                p->vkind = VK_NAME;
                tp_json_init(&p->ks, TPJ_MODE_RAW_STRING, 1);
                tp_buf_clear(&p->name);
            } else if (key_is(p, "arguments") || key_is(p, "parameters")) {
                if (p->have_args) {
                    broken(p, TP_ERR_BAD_MARKUP, off);
                    break;
                }
                p->have_args = 1;
                p->vkind = VK_ARGS;
                tp_json_init(&p->js, TPJ_MODE_NORMAL, p->lim.max_depth);
            } else {
                p->vkind = VK_SKIP;
                tp_json_init(&p->js, TPJ_MODE_NORMAL, p->lim.max_depth);
            }
            break;
        case M_VALUE: {
            if (p->vkind == VK_ARGS && p->have_name && !p->discard) {
                size_t k;
                int st = tp_call_json_args(p, s + i, n - i, &k);
                if (st < 0) {
                    broken(p, p->js.err, p->base + i + p->js.err_at);
                    i += k;
                    break;
                }
                i += k;
                if (st > 0)
                    p->mode = M_AFTER;
                break;
            }
            tp_json *j = p->vkind == VK_NAME ? &p->ks : &p->js;
            tp_buf *dst = NULL;
            if (p->vkind == VK_NAME)
                dst = &p->name;
            else if (p->vkind == VK_ARGS && !p->discard)
                dst = &p->pending; /* arguments before the name */
            size_t k = tp_json_feed(j, s + i, n - i, dst);
            if (tp_json_failed(j)) {
                int code = j->err;
                if (code == TP_ERR_BUFFER_LIMIT && dst == &p->name)
                    code = TP_ERR_BAD_NAME;
                broken(p, code, p->base + i + j->err_at);
                i += k;
                break;
            }
            i += k;
            if (tp_json_done(j)) {
                p->mode = M_AFTER;
                if (p->vkind == VK_NAME)
                    name_done(p, p->base + i);
            }
            break;
        }
        case M_AFTER:
            if (tp_is_ws(s[i])) {
                i++;
            } else if (s[i] == ',') {
                p->mode = M_KEY_OR_END;
                i++;
            } else if (s[i] == '}') {
                i++;
                object_done(p, off);
            } else {
                broken(p, TP_ERR_JSON_SYNTAX, off);
            }
            break;
        case M_END_TAG:
        case M_SKIP: {
            int match, junk;
            size_t junk_at = 0;
            size_t k = tp_scan_skip(p, &end_m, s + i, n - i, &match, &junk, &junk_at);
            if (junk && p->mode == M_END_TAG && !p->trailing_reported) {
                p->trailing_reported = 1;
                tp_ev_error(p, TP_ERR_TRAILING, p->base + i + junk_at, -1, NULL, 0);
            }
            i += k;
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

static void jsontag_finish(tp_parser *p)
{
    switch (p->mode) {
    case M_TEXT:
        tp_release_held(p, &text_m);
        break;
    case M_END_TAG:
    case M_SKIP:
        p->node = 0; /* a partial end tag: markup, not prose */
        break;
    case M_OPEN: /* <tool_call> and then the end: a call cut off */
        tp_text_call_starts(p);
        tp_buf_clear(&p->pending);
        tp_call_unterminated(p);
        break;
    default: /* end of stream inside the call object */
        tp_call_unterminated(p);
        break;
    }
    tp_text_finish(p);
}

/* ---- Trinity: the same format read after removing <think> and </think> ----
 * SGLang's TrinityDetector removes every <think> and </think> from the
 * text before Qwen2.5's parse, so reasoning tags around (or inside) a call
 * vanish. Here the removal is a filter in front of the engine, matched
 * across chunk boundaries (a partial tag is held; its bytes are the
 * matcher's static path), so what the engine sees does not depend on the
 * chunking. Each kept span is fed at its own stream offset. */
static tp_matcher think_m;

static void feed_at(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    uint64_t base = p->base;
    p->base = off;
    jsontag_feed(p, s, n);
    p->base = base;
}

static void trinity_feed(tp_parser *p, const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n && !p->oom) {
        tp_scan_res r;
        size_t hl = 0;
        const uint8_t *held = tp_matcher_path(&think_m, p->filter_node, &hl);
        tp_matcher_scan(&think_m, &p->filter_node, s + i, n - i, &r);
        if (r.held_text) /* held bytes that were no tag: they came before s + i */
            feed_at(p, held, r.held_text, p->base + i - hl);
        if (r.text_len)
            feed_at(p, s + i, r.text_len, p->base + i);
        i += r.consumed;
    }
}

static void trinity_finish(tp_parser *p)
{
    size_t hl = 0;
    const uint8_t *held = tp_matcher_path(&think_m, p->filter_node, &hl);
    p->filter_node = 0;
    if (hl) /* a partial tag at the end: text */
        feed_at(p, held, hl, p->base - hl);
    jsontag_finish(p);
}

int tp_fmt_trinity_init(void)
{
    static const char *const pats[] = {"<think>", "</think>"};
    return tp_matcher_build(&think_m, pats, 2);
}

const tp_format tp_fmt_qwen25 = {"qwen25", jsontag_feed, jsontag_finish};
const tp_format tp_fmt_hermes = {"hermes", jsontag_feed, jsontag_finish};
const tp_format tp_fmt_trinity = {"trinity", trinity_feed, trinity_finish};
