/* DeepSeek V3 and V3.1 tool calls.
 *
 *   V3:   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{ARGS}\n```<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
 *   V3.1: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{ARGS}<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
 *
 * The special tokens are matched with the marker automaton (a token split
 * across chunks is held back while it can still complete). The name is
 * checked against the tools as soon as it ends (V3: at the newline before
 * the code fence; V3.1: at <｜tool▁sep｜>); the arguments then stream
 * through the JSON normalizer. The call ends when its JSON value closes;
 * what follows up to <｜tool▁call▁end｜> is markup (V3: the closing fence),
 * anything else there is reported as trailing content. Inside the block,
 * text between calls is template formatting and is dropped; prose before
 * and after the block is kept. A bare <｜tool▁call▁begin｜> without the
 * block token is read as a call too (SGLang's streaming path does). */
#include <string.h>

#include "tp_internal.h"

#define CALLS_BEGIN "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "begin\xef\xbd\x9c>"
#define CALLS_END "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "end\xef\xbd\x9c>"
#define CALL_BEGIN "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "begin\xef\xbd\x9c>"
#define CALL_END "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "end\xef\xbd\x9c>"
#define TOOL_SEP "<\xef\xbd\x9ctool\xe2\x96\x81" "sep\xef\xbd\x9c>"

enum {
    E_TEXT,    /* prose */
    E_BLOCK,   /* inside <｜tool▁calls▁begin｜>: between calls */
    E_HEAD,    /* after <｜tool▁call▁begin｜>: V3 type / V3.1 name, up to <｜tool▁sep｜> */
    E_V3NAME,  /* V3: name up to the newline */
    E_FENCE,   /* V3: ```json before the arguments */
    E_JSON,    /* the arguments */
    E_AFTER,   /* V3: closing ``` */
    E_TAIL,    /* up to <｜tool▁call▁end｜> */
    E_SKIP,    /* a dropped call: up to its end */
};

/* text: markers that start a block/call, and stray end markers (dropped) */
enum { T_CALLS_BEGIN, T_CALL_BEGIN, T_CALLS_END, T_CALL_END };
/* inside a call: what ends or interrupts it */
enum { C_CALL_END, C_CALL_BEGIN, C_CALLS_END, C_SEP };

static tp_matcher text_m;  /* CALLS_BEGIN, CALL_BEGIN, CALLS_END, CALL_END */
static tp_matcher block_m; /* CALL_END, CALL_BEGIN, CALLS_END (C_ order) */
static tp_matcher head_m;  /* CALL_END, CALL_BEGIN, CALLS_END, TOOL_SEP */

/* per-parser state kept in the generic fields:
 *   mode    E_* state
 *   first   1 inside a <｜tool▁calls▁begin｜> block
 *   fstate  position in a literal ("```json", "```")
 *   vkind   1 for V3.1
 *   trailing_reported  trailing content after this call was reported */

int tp_fmt_deepseek_init(void)
{
    static const char *const text_pats[] = {CALLS_BEGIN, CALL_BEGIN, CALLS_END, CALL_END};
    static const char *const block_pats[] = {CALL_END, CALL_BEGIN, CALLS_END};
    static const char *const head_pats[] = {CALL_END, CALL_BEGIN, CALLS_END, TOOL_SEP};
    if (tp_matcher_build(&text_m, text_pats, 4) || tp_matcher_build(&block_m, block_pats, 3))
        return -1;
    return tp_matcher_build(&head_m, head_pats, 4);
}

/* Runs the matcher, appending the text it passes over to dst. *over is set
 * when dst would exceed its limit. */
static size_t scan_into(tp_parser *p, const tp_matcher *m, const uint8_t *s, size_t n,
                        tp_buf *dst, int *match, int *over)
{
    tp_scan_res r;
    uint8_t old = p->node;
    tp_matcher_scan(m, &p->node, s, n, &r);
    if (r.held_text) {
        size_t hl;
        const uint8_t *held = tp_matcher_path(m, old, &hl);
        if (tp_buf_append(dst, held, r.held_text))
            *over = 1;
    }
    if (r.text_len && tp_buf_append(dst, s, r.text_len))
        *over = 1;
    *match = r.match;
    return r.consumed;
}

static void begin_call(tp_parser *p, uint64_t off)
{
    if (!p->raw_on) /* (a block's first call: recorded from the block's token) */
        tp_raw_begin(p, CALL_BEGIN, sizeof CALL_BEGIN - 1, (size_t)(off - p->base));
    p->call_off = off; /* where the head starts: limit errors go there */
    p->mode = E_HEAD;
    p->node = 0;
    p->fstate = 0;
    p->trailing_reported = 0;
    tp_buf_clear(&p->name);
}

static void call_over(tp_parser *p)
{
    tp_raw_end(p); /* no call is open */
    p->mode = p->first ? E_BLOCK : E_TEXT;
    p->node = 0;
    p->after_call = 1;
}

/* A marker (C_* index) seen where the call was not complete. */
static void interrupted(tp_parser *p, int match, uint64_t off)
{
    tp_raw_end(p); /* the interrupted call was reported */
    if (match == C_CALL_BEGIN) {
        begin_call(p, off);
    } else if (match == C_CALLS_END) {
        p->first = 0;
        call_over(p);
    } else {
        call_over(p);
    }
}

static void skip_call(tp_parser *p)
{
    tp_raw_end(p); /* the call was dropped (and reported) */
    p->mode = E_SKIP;
    p->node = 0;
}

static void fail(tp_parser *p, int code, uint64_t off)
{
    tp_call_fail(p, code, off);
    skip_call(p);
}

/* strip ASCII whitespace around the name */
static int open_named(tp_parser *p, uint64_t off)
{
    const uint8_t *s = p->name.data;
    size_t n = p->name.len;
    while (n && tp_is_ws(s[0])) {
        s++;
        n--;
    }
    while (n && tp_is_ws(s[n - 1]))
        n--;
    return tp_call_open(p, s, n, off);
}

static void args_start(tp_parser *p)
{
    tp_json_init(&p->js, TPJ_MODE_NORMAL, p->lim.max_depth);
    p->mode = E_JSON;
}

/* The name overflowed max_name while scanning with head_m; `match` is the
 * marker that ended the scan, if any: it still counts, as it would had the
 * name come in smaller chunks. */
static void name_too_long(tp_parser *p, int match, uint64_t off)
{
    tp_raw_end(p);
    tp_ev_error(p, TP_ERR_BAD_NAME, p->call_off, -1, NULL, 0);
    if (match < 0) {
        /* keep a partial marker: E_SKIP must see it complete */
        tp_matcher_switch(p, &head_m, &block_m);
        p->mode = E_SKIP;
    } else if (match == C_SEP) {
        skip_call(p);
    } else {
        interrupted(p, match, off);
    }
}

static void ds_feed(tp_parser *p, const uint8_t *s, size_t n, int v31)
{
    size_t i = 0;
    while (i < n && !p->oom) {
        uint64_t off = p->base + i;
        switch (p->mode) {
        case E_TEXT: {
            int match;
            i += tp_scan_text(p, &text_m, s + i, n - i, &match);
            if (match == T_CALLS_BEGIN) {
                tp_raw_begin(p, CALLS_BEGIN, sizeof CALLS_BEGIN - 1, i);
                tp_text_call_starts(p);
                p->first = 1;
                p->mode = E_BLOCK;
            } else if (match == T_CALL_BEGIN) {
                tp_raw_begin(p, CALL_BEGIN, sizeof CALL_BEGIN - 1, i);
                tp_text_call_starts(p);
                p->first = 0;
                begin_call(p, p->base + i);
            } /* stray end markers are markup: dropped */
            break;
        }
        case E_BLOCK: {
            int match, junk;
            size_t junk_at;
            i += tp_scan_skip(p, &block_m, s + i, n - i, &match, &junk, &junk_at);
            if (match == C_CALL_BEGIN) {
                begin_call(p, p->base + i);
            } else if (match == C_CALLS_END) {
                p->first = 0;
                call_over(p);
            }
            break;
        }
        case E_HEAD: {
            int match, over = 0;
            i += scan_into(p, &head_m, s + i, n - i, &p->name, &match, &over);
            if (over) {
                name_too_long(p, match, p->base + i);
                break;
            }
            if (match == C_SEP) {
                if (v31) {
                    if (open_named(p, p->base + i))
                        args_start(p);
                    else
                        skip_call(p);
                } else {
                    tp_buf_clear(&p->name); /* the call type ("function") */
                    p->call_off = p->base + i;
                    p->mode = E_V3NAME;
                }
            } else if (match >= 0) {
                tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + i, -1, NULL, 0);
                interrupted(p, match, p->base + i);
            }
            break;
        }
        case E_V3NAME: {
            /* the name runs to the newline; markers are still watched for */
            const uint8_t *nl = memchr(s + i, '\n', n - i);
            size_t lim = nl ? (size_t)(nl - s) : n;
            int match = -1, over = 0;
            if (lim > i)
                i += scan_into(p, &head_m, s + i, lim - i, &p->name, &match, &over);
            if (over) {
                name_too_long(p, match, p->base + i);
                break;
            }
            if (match >= 0) {
                tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + i, -1, NULL, 0);
                interrupted(p, match, p->base + i);
                break;
            }
            if (i == lim && nl) {
                /* a partial marker before the newline is part of the name */
                size_t hl;
                const uint8_t *held = tp_matcher_path(&head_m, p->node, &hl);
                p->node = 0;
                if (tp_buf_append(&p->name, held, hl)) {
                    tp_ev_error(p, TP_ERR_BAD_NAME, p->call_off, -1, NULL, 0);
                    skip_call(p);
                    break;
                }
                i++;
                if (open_named(p, p->base + i)) {
                    p->mode = E_FENCE;
                    p->fstate = 0;
                } else {
                    skip_call(p);
                }
            }
            break;
        }
        case E_FENCE: {
            static const char lit[] = "```json";
            uint8_t c = s[i];
            if (p->fstate == 0 && tp_is_ws(c)) {
                i++;
            } else if (p->fstate < 7 && c == (uint8_t)lit[p->fstate]) {
                p->fstate++;
                i++;
                if (p->fstate == 7)
                    args_start(p);
            } else if ((p->fstate == 0 || p->fstate == 3) && (c == '{' || c == '[' || tp_is_ws(c))) {
                args_start(p); /* no fence, or ``` without "json": the JSON itself */
            } else {
                fail(p, TP_ERR_BAD_MARKUP, off);
            }
            break;
        }
        case E_JSON: { /* announce point: the arguments' first byte (in tp_call_json_args) */
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
                p->after_call = 1;
                p->mode = v31 ? E_TAIL : E_AFTER;
                p->fstate = 0;
                p->node = 0;
            }
            break;
        }
        case E_AFTER: {
            /* V3: the closing fence; anything else is left to E_TAIL */
            uint8_t c = s[i];
            if (p->fstate == 0 && tp_is_ws(c)) {
                i++;
            } else if (p->fstate < 3 && c == '`') {
                p->fstate++;
                i++;
                if (p->fstate == 3)
                    p->mode = E_TAIL;
            } else {
                if (p->fstate) { /* a broken fence */
                    p->trailing_reported = 1;
                    tp_ev_error(p, TP_ERR_TRAILING, off, -1, NULL, 0);
                }
                p->mode = E_TAIL;
            }
            break;
        }
        case E_TAIL:
        case E_SKIP: {
            int match, junk;
            size_t junk_at = 0;
            size_t k = tp_scan_skip(p, &block_m, s + i, n - i, &match, &junk, &junk_at);
            if (junk && p->mode == E_TAIL && !p->trailing_reported) {
                p->trailing_reported = 1;
                tp_ev_error(p, TP_ERR_TRAILING, p->base + i + junk_at, -1, NULL, 0);
            }
            i += k;
            if (match >= 0)
                interrupted(p, match, p->base + i);
            break;
        }
        }
    }
}

static void v3_feed(tp_parser *p, const uint8_t *s, size_t n)
{
    ds_feed(p, s, n, 0);
}

static void v31_feed(tp_parser *p, const uint8_t *s, size_t n)
{
    ds_feed(p, s, n, 1);
}

static void ds_finish(tp_parser *p)
{
    switch (p->mode) {
    case E_TEXT:
        tp_release_held(p, &text_m);
        break;
    case E_BLOCK:
    case E_AFTER:
    case E_TAIL:
    case E_SKIP:
        p->node = 0; /* a partial marker here is markup, not prose */
        break;
    case E_HEAD:
    case E_V3NAME:
    case E_FENCE:
    case E_JSON:
        tp_call_unterminated(p);
        break;
    }
    tp_text_finish(p);
}

const tp_format tp_fmt_deepseekv3 = {"deepseekv3", v3_feed, ds_finish};
const tp_format tp_fmt_deepseekv31 = {"deepseekv31", v31_feed, ds_finish};
