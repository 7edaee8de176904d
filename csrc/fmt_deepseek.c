/* Calls written as markers, a name and a JSON body: one engine, the
 * markers, the name rule and the id rule as data (ROWS below).
 *
 *   deepseekv3:  <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{ARGS}\n```<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
 *   deepseekv31: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{ARGS}<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
 *   mistral:     [TOOL_CALLS]NAME[ARGS]{ARGS}[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{ARGS}
 *
 * The special tokens are matched with the marker automaton (a token split
 * across chunks is held back while it can still complete). The name is
 * checked against the tools as soon as it ends (V3: at the newline before
 * the code fence; V3.1 and Mistral: at the separator token, or at
 * [CALL_ID]); the arguments then stream through the JSON normalizer. The
 * call ends when its JSON value closes. DeepSeek: what follows up to
 * <｜tool▁call▁end｜> is markup (V3: the closing fence), anything else there
 * is reported as trailing content; inside the block, blanks after its
 * token or a call are template formatting, anything else is prose the
 * model wrote there and is text (issue 18: no byte lost): prose before the
 * block's first call shows the block token made no call (bad_markup with
 * its bytes), the block's end token after prose is a Markup event, an end
 * token there closing no call is bad_markup; prose before and after the
 * block is kept; a bare <｜tool▁call▁begin｜> without the block token is read as a
 * call too (SGLang's streaming path does). Mistral (mistral-common's
 * decoder: the content is what precedes the first [TOOL_CALLS], each call
 * is [TOOL_CALLS]NAME[ARGS] and one JSON value, [CALL_ID]ID before [ARGS]
 * in v11 tokenizers that write ids): a call has no end token, so what
 * follows its JSON value is read as prose again; a call to an undeclared
 * tool has its JSON validated and dropped, and malformed arguments are
 * skipped to the bracket that closes them (tp_resync.c). Mistral's pre-v11
 * array form, `[TOOL_CALLS] [{"name": ..., "arguments": ..., "id": ...}]`
 * (`[{` where a name would begin), is handed over to fmt_jsontag.c's
 * mistral-array row, which reads the rest of the output (hand_over). */
#include <string.h>

#include "tp_internal.h"

#define CALLS_BEGIN "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "begin\xef\xbd\x9c>"
#define CALLS_END "<\xef\xbd\x9ctool\xe2\x96\x81" "calls\xe2\x96\x81" "end\xef\xbd\x9c>"
#define CALL_BEGIN "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "begin\xef\xbd\x9c>"
#define CALL_END "<\xef\xbd\x9ctool\xe2\x96\x81" "call\xe2\x96\x81" "end\xef\xbd\x9c>"
#define TOOL_SEP "<\xef\xbd\x9ctool\xe2\x96\x81" "sep\xef\xbd\x9c>"

typedef struct {
    const char *calls_begin, *calls_end; /* the block around the calls (NULL: none) */
    const char *call_begin;              /* starts a call */
    const char *sep;                     /* between the head and the arguments */
    const char *call_id;                 /* before sep: the model's call id follows (NULL: none) */
    const char *call_end;                /* ends a call (NULL: its JSON value does) */
    uint8_t type_then_name;              /* V3: a type before sep, then NAME\n```json */
    const char *not_call;                /* first in the head: the call marker was prose
                                          * (Mistral: "[{", the pre-v11 array form) */
    uint8_t array_form;                  /* not_call starts Mistral's pre-v11 array form: read by
                                          * fmt_jsontag.c's row (else prose) */
    /* built by init: matchers and, per marker index, its role */
    tp_matcher text_m, block_m, head_m, sec_m;
    int8_t text_role[4], block_role[3], head_role[6], sec_role[4];
} ds_row;

static ds_row ROWS[] = {
    {CALLS_BEGIN, CALLS_END, CALL_BEGIN, TOOL_SEP, NULL, CALL_END, 1},
    {CALLS_BEGIN, CALLS_END, CALL_BEGIN, TOOL_SEP, NULL, CALL_END, 0},
    {NULL, NULL, "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", NULL, 0, "[{", 1},
};
enum { ROW_V3, ROW_V31, ROW_MISTRAL };

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
    E_ID,      /* Mistral: the call id, up to the separator */
    E_RESYNC,  /* no end marker: the rest of malformed arguments */
};

/* marker roles: text (start a block/call; stray end markers are dropped),
 * and inside a call (what ends or interrupts it, the separator, the id) */
enum { T_CALLS_BEGIN, T_CALL_BEGIN, T_CALLS_END, T_CALL_END };
enum { C_CALL_END, C_CALL_BEGIN, C_CALLS_END, C_SEP, C_ID, C_NOT_CALL };
/* between calls in a block (E_BLOCK): a call's markers and the block's */
enum { S_CALL_END, S_CALL_BEGIN, S_CALLS_END, S_CALLS_BEGIN };

/* per-parser state kept in the generic fields:
 *   mode    E_* state
 *   first   1 inside a <｜tool▁calls▁begin｜> block
 *   fstate  position in a literal ("```json", "```"); E_BLOCK: prose began
 *   discard the open call's name was not accepted: its JSON is only validated
 *   trailing_reported  trailing content after this call was reported */

/* builds a matcher from the row's markers listed by role (NULL: absent);
 * role[i] is the role of marker index i */
static int build(tp_matcher *m, const char *const *by_role, int nroles, int8_t *role)
{
    const char *pats[6];
    int n = 0;
    for (int r = 0; r < nroles; r++)
        if (by_role[r]) {
            role[n] = (int8_t)r;
            pats[n++] = by_role[r];
        }
    return tp_matcher_build(m, pats, n);
}

int tp_fmt_deepseek_init(void)
{
    for (size_t i = 0; i < sizeof(ROWS) / sizeof(ROWS[0]); i++) {
        ds_row *w = &ROWS[i];
        const char *text[4] = {w->calls_begin, w->call_begin, w->calls_end, w->call_end};
        const char *block[3] = {w->call_end, w->call_begin, w->calls_end};
        const char *head[6] = {w->call_end, w->call_begin, w->calls_end, w->sep, w->call_id, w->not_call};
        const char *sec[4] = {w->call_end, w->call_begin, w->calls_end, w->calls_begin};
        if (build(&w->text_m, text, 4, w->text_role) || build(&w->block_m, block, 3, w->block_role) ||
            build(&w->head_m, head, 6, w->head_role) || build(&w->sec_m, sec, 4, w->sec_role))
            return -1;
    }
    return 0;
}

static int role_of(const int8_t *role, int match) { return match < 0 ? -1 : role[match]; }

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

static void begin_call(tp_parser *p, const ds_row *w, uint64_t off)
{
    if (!p->raw_on) /* (a block's first call: recorded from the block's token) */
        tp_raw_begin(p, w->call_begin, strlen(w->call_begin), (size_t)(off - p->base));
    p->call_off = off; /* where the head starts: limit errors go there */
    p->mode = E_HEAD;
    p->node = 0;
    p->fstate = 0;
    p->discard = 0;
    p->trailing_reported = 0;
    tp_buf_clear(&p->name);
}

static void call_over(tp_parser *p)
{
    tp_raw_end(p); /* no call is open */
    p->mode = p->first ? E_BLOCK : E_TEXT;
    p->node = 0;
    p->fstate = 0; /* E_BLOCK: no prose yet */
    p->after_call = 1;
}

/* A marker (C_* role) seen where the call was not complete. */
static void interrupted(tp_parser *p, const ds_row *w, int role, uint64_t off)
{
    tp_raw_end(p); /* the interrupted call was reported */
    if (role == C_CALL_BEGIN) {
        begin_call(p, w, off);
    } else if (role == C_CALLS_END) {
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

static void strip(const uint8_t **s, size_t *n)
{
    while (*n && tp_is_ws((*s)[0])) {
        (*s)++;
        (*n)--;
    }
    while (*n && tp_is_ws((*s)[*n - 1]))
        (*n)--;
}

/* strip ASCII whitespace around the name */
static int open_named(tp_parser *p, uint64_t off)
{
    const uint8_t *s = p->name.data;
    size_t n = p->name.len;
    strip(&s, &n);
    return tp_call_open(p, s, n, off);
}

static int name_is_blank(const tp_parser *p)
{
    for (size_t k = 0; k < p->name.len; k++)
        if (!tp_is_ws(p->name.data[k]))
            return 0;
    return 1;
}

static void args_start(tp_parser *p)
{
    tp_json_init(&p->js, TPJ_MODE_NORMAL, p->lim.max_depth);
    p->mode = E_JSON;
}

/* The name was not accepted (reported): the arguments are only validated
 * and dropped (the JSON decides where they end: an end marker inside one
 * of its strings does not end the call); a row with an end marker then
 * skips to it */
static void not_accepted(tp_parser *p, const ds_row *w)
{
    tp_raw_end(p); /* (tp_call_open's refusal ended it already) */
    p->discard = 1;
    if (!w->call_end) {
        p->mode = E_ID; /* read on to the separator, then the JSON */
        tp_buf_clear(&p->key);
    }
}

/* a dropped call's arguments are malformed: skipped to its end marker */
static void discarded_broken(tp_parser *p)
{
    p->discard = 0;
    skip_call(p);
}

/* The name overflowed max_name while scanning with head_m; `match` is the
 * marker that ended the scan, if any: it still counts, as it would had the
 * name come in smaller chunks. */
static void head_too_long(tp_parser *p, const ds_row *w, int match, uint64_t off)
{
    int role = role_of(w->head_role, match);
    tp_raw_end(p); /* the call was reported */
    if (match < 0) {
        /* keep a partial marker: E_SKIP must see it complete */
        tp_matcher_switch(p, &w->head_m, &w->block_m);
        p->mode = E_SKIP;
    } else if (role == C_SEP || role == C_ID || role == C_NOT_CALL) {
        skip_call(p); /* as E_SKIP would have read it */
    } else {
        interrupted(p, w, role, off);
    }
}

static void name_too_long(tp_parser *p, const ds_row *w, int match, uint64_t off)
{
    tp_text_call_starts(p); /* the whitespace held before the marker: the error's raw text */
    tp_ev_error(p, TP_ERR_BAD_NAME, p->call_off, -1, NULL, 0);
    head_too_long(p, w, match, off);
}

/* the arguments of a call without an end marker broke: skip their rest
 * (an undeclared tool's were reported already) */
static void args_broken(tp_parser *p, int code, uint64_t at)
{
    if (!p->discard)
        tp_call_fail(p, code, at);
    p->discard = 0;
    tp_resync_start(p, &p->js, 0);
    if (p->resync_depth)
        p->mode = E_RESYNC;
    else
        call_over(p);
}

/* returns how far it read: all of the chunk, or less where the mistral
 * row handed the stream over to the array form's engine (engine_alt) */
static size_t ds_feed_upto(tp_parser *p, const ds_row *w, const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n && !p->oom && !p->engine_alt) {
        uint64_t off = p->base + i;
        switch (p->mode) {
        case E_TEXT: {
            int match;
            i += tp_scan_text(p, &w->text_m, s + i, n - i, &match);
            int role = role_of(w->text_role, match);
            if (role == T_CALLS_BEGIN) {
                tp_raw_begin(p, w->calls_begin, strlen(w->calls_begin), i);
                tp_text_call_starts(p);
                p->first = 1;
                p->mode = E_BLOCK;
                p->fstate = 0;
            } else if (role == T_CALL_BEGIN) {
                tp_raw_begin(p, w->call_begin, strlen(w->call_begin), i);
                if (!w->not_call) /* else held until the head shows a call */
                    tp_text_call_starts(p);
                p->first = 0;
                begin_call(p, w, p->base + i);
            } else if (match >= 0) { /* a stray end marker: markup of no call */
                tp_stray_markup(p, w->text_m.patlen[match], i);
            }
            break;
        }
        case E_BLOCK: {
            /* blanks after the block token or a call: formatting; prose: text */
            int match;
            i += tp_scan_block(p, &w->sec_m, s + i, n - i, &match, &p->fstate);
            int role = role_of(w->sec_role, match);
            if (role == S_CALL_BEGIN) {
                begin_call(p, w, p->base + i);
                tp_text_call_starts(p); /* blanks after prose: the call's record */
            } else if (role == S_CALLS_END) {
                if (p->raw_on) /* a section with no call: markup of no call */
                    tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + i, -1, (const uint8_t *)"a section with no call", 22);
                int prose = p->fstate;
                if (prose) /* after prose: it closes the block, next to no call */
                    tp_block_markup(p, w->calls_end, strlen(w->calls_end), p->base + i - strlen(w->calls_end));
                p->first = 0;
                call_over(p);
                if (prose)
                    p->after_call = 0; /* the blanks after it are text */
            } else if (role == S_CALLS_BEGIN && !p->raw_on) {
                /* another block token: markup, read as the block's first (a
                 * call takes it into its record; prose shows it made none) */
                tp_raw_begin(p, w->calls_begin, strlen(w->calls_begin), i);
                tp_text_call_starts(p);
                p->fstate = 0;
            } else if (match >= 0 && !p->raw_on) { /* an end token that closes no call */
                tp_stray_markup(p, w->sec_m.patlen[match], i);
            } /* (else: in the block token's record, the first call's text) */
            break;
        }
        case E_HEAD: {
            int match, over = 0;
            i += scan_into(p, &w->head_m, s + i, n - i, &p->name, &match, &over);
            if (over) {
                name_too_long(p, w, match, p->base + i);
                break;
            }
            int role = role_of(w->head_role, match);
            if (role == C_NOT_CALL && name_is_blank(p) && w->array_form) {
                /* Mistral's pre-v11 array form: fmt_jsontag.c's row reads
                 * the rest of the output, from the call object's first key */
                p->node = 0;
                p->engine_alt = 1;
                tp_jsontag_mistral_array_enter(p, p->call_off);
                break;
            }
            if (role == C_NOT_CALL && name_is_blank(p)) {
                /* not a call (a form this row does not read): prose */
                tp_raw_end(p);
                tp_text(p, (const uint8_t *)w->call_begin, strlen(w->call_begin));
                tp_text(p, p->name.data, p->name.len);
                tp_text(p, (const uint8_t *)w->not_call, strlen(w->not_call));
                p->mode = E_TEXT;
                p->node = 0;
                break;
            }
            if (role == C_SEP && w->type_then_name) {
                tp_buf_clear(&p->name); /* the call type ("function") */
                p->call_off = p->base + i;
                p->mode = E_V3NAME;
            } else if (role == C_SEP || role == C_ID) {
                tp_text_call_starts(p);
                if (!open_named(p, p->base + i)) {
                    not_accepted(p, w);
                    if (role == C_SEP && (p->mode == E_ID || w->call_end))
                        args_start(p);
                    else if (w->call_end)
                        discarded_broken(p); /* (an id marker in a row with an end marker) */
                } else if (role == C_SEP) {
                    args_start(p);
                } else {
                    p->mode = E_ID;
                    tp_buf_clear(&p->key);
                }
            } else if (match >= 0) {
                /* the refused head's raw text takes the whitespace held
                 * before its marker (a row with not_call holds it): not text */
                tp_text_call_starts(p);
                tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + i, -1, NULL, 0);
                interrupted(p, w, role, p->base + i);
            }
            break;
        }
        case E_ID: {
            /* Mistral: [CALL_ID]ID[ARGS]; an undeclared call also passes here */
            int match, over = 0;
            i += scan_into(p, &w->head_m, s + i, n - i, &p->key, &match, &over);
            int role = role_of(w->head_role, match);
            if (over) { /* the id overflowed max_name: as a name would */
                if (p->discard)
                    tp_ev_error(p, TP_ERR_BAD_NAME, p->call_off, -1, NULL, 0);
                else
                    tp_call_fail(p, TP_ERR_BAD_NAME, p->call_off);
                p->discard = 0;
                head_too_long(p, w, match, p->base + i);
                break;
            }
            if (role == C_SEP) {
                const uint8_t *id = p->key.data;
                size_t idn = p->key.len;
                strip(&id, &idn);
                if (!p->discard && tp_call_set_id(p, id, idn)) {
                    fail(p, TP_ERR_BAD_NAME, p->call_off);
                    break;
                }
                args_start(p);
            } else if (match >= 0) {
                /* a refused call's dropped text ends before a marker that
                 * starts another call: that marker is the next call's raw
                 * text (it was in both; fuzz finding) */
                if (role == C_CALL_BEGIN)
                    tp_drop_end(p, i, w->head_m.patlen[match]);
                if (!p->discard)
                    tp_call_fail(p, TP_ERR_BAD_MARKUP, p->base + i);
                else
                    tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + i, -1, NULL, 0);
                interrupted(p, w, role, p->base + i);
            }
            break;
        }
        case E_V3NAME: {
            /* the name runs to the newline; markers are still watched for */
            const uint8_t *nl = memchr(s + i, '\n', n - i);
            size_t lim = nl ? (size_t)(nl - s) : n;
            int match = -1, over = 0;
            if (lim > i)
                i += scan_into(p, &w->head_m, s + i, lim - i, &p->name, &match, &over);
            if (over) {
                name_too_long(p, w, match, p->base + i);
                break;
            }
            if (match >= 0) {
                tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + i, -1, NULL, 0);
                interrupted(p, w, role_of(w->head_role, match), p->base + i);
                break;
            }
            if (i == lim && nl) {
                /* a partial marker before the newline is part of the name */
                size_t hl;
                const uint8_t *held = tp_matcher_path(&w->head_m, p->node, &hl);
                p->node = 0;
                if (tp_buf_append(&p->name, held, hl)) {
                    tp_ev_error(p, TP_ERR_BAD_NAME, p->call_off, -1, NULL, 0);
                    skip_call(p);
                    break;
                }
                i++;
                if (!open_named(p, p->base + i))
                    not_accepted(p, w); /* its fence and JSON are read, then dropped */
                p->mode = E_FENCE;
                p->fstate = 0;
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
            } else if (p->discard) {
                discarded_broken(p);
            } else {
                fail(p, TP_ERR_BAD_MARKUP, off);
            }
            break;
        }
        case E_JSON: { /* announce point: the arguments' first byte (in tp_call_json_args) */
            size_t k;
            int st;
            if (p->discard) { /* an undeclared tool's arguments: validated, dropped */
                k = tp_json_feed(&p->js, s + i, n - i, NULL);
                st = tp_json_failed(&p->js) ? -1 : tp_json_done(&p->js);
            } else {
                st = tp_call_json_args(p, s + i, n - i, &k);
            }
            if (st < 0) {
                uint64_t at = p->base + i + p->js.err_at;
                i += k;
                if (w->call_end && p->discard)
                    discarded_broken(p);
                else if (w->call_end)
                    fail(p, p->js.err, at);
                else
                    args_broken(p, p->js.err, at);
                break;
            }
            i += k;
            if (st > 0) {
                if (!p->discard)
                    tp_call_close(p);
                else
                    p->trailing_reported = 1; /* what follows is in its dropped text */
                p->discard = 0;
                p->after_call = 1;
                p->fstate = 0;
                p->node = 0;
                if (!w->call_end)
                    call_over(p);
                else
                    p->mode = w->type_then_name ? E_AFTER : E_TAIL;
            }
            break;
        }
        case E_RESYNC:
            i += tp_resync(p, s + i, n - i, 1);
            if (!p->resync_depth)
                call_over(p);
            break;
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
                if (p->fstate && !p->trailing_reported) { /* a broken fence */
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
            size_t k = tp_scan_skip(p, &w->block_m, s + i, n - i, &match, &junk, &junk_at);
            if (junk && p->mode == E_TAIL && !p->trailing_reported) {
                p->trailing_reported = 1;
                tp_ev_error(p, TP_ERR_TRAILING, p->base + i + junk_at, -1, NULL, 0);
            }
            i += k;
            if (match >= 0)
                interrupted(p, w, role_of(w->block_role, match), p->base + i);
            break;
        }
        }
    }
    return i;
}

static void ds_feed(tp_parser *p, const ds_row *w, const uint8_t *s, size_t n) { ds_feed_upto(p, w, s, n); }

/* the rest of a chunk after the mistral row handed the stream over to
 * the array form's engine at index i: fed as a chunk of its own, s[i:n)
 * at stream offset base + i (the dropped-text record, tp_dropped.c, finds
 * its bytes by stream offset in p->chunk, so chunk, chunk_n and base move
 * together, and the bytes before i go into the tail ring first, as at the
 * end of a chunk); the call's raw record (lossless) takes the chunk's bytes
 * up to i, then the rest as that engine saw it (nothing more is added to
 * either record at the end of this feed) */
static void hand_over(tp_parser *p, const uint8_t *s, size_t n, size_t i)
{
    if (i >= n)
        return;
    tp_raw_chunk_end(p, s, i);
    tp_drop_keep_tail(p, s, i);
    p->base += i;
    p->chunk = s + i;
    p->chunk_n = n - i;
    tp_jsontag_mistral_array_feed(p, s + i, n - i);
    tp_raw_chunk_end(p, s + i, n - i);
    p->base -= i;
    p->chunk = s;
    p->chunk_n = n;
    p->raw_at = n;
    p->drop_at = n;
}

static void ds_finish(tp_parser *p, const ds_row *w)
{
    switch (p->mode) {
    case E_TEXT:
        tp_release_held(p, &w->text_m);
        break;
    case E_BLOCK:
        if (p->raw_on) { /* a section cut off before its first call: as a call cut off before its announcement */
            tp_call_unterminated(p);
            break;
        }
        if (p->fstate) { /* after prose in the block, a partial token is prose */
            tp_release_held(p, &w->sec_m);
            break;
        }
        if (p->node) { /* a partial token after a call: markup of no call */
            size_t hl;
            const uint8_t *held = tp_matcher_path(&w->sec_m, p->node, &hl);
            tp_drop_held_at_end(p, TP_ERR_UNTERMINATED, held, hl);
            p->node = 0;
        }
        break;
    case E_AFTER:
    case E_TAIL:
    case E_SKIP:
    case E_RESYNC: {
        /* a partial marker here is markup of no call: an error carries it
         * (a skip's dropped text already does) */
        size_t hl;
        const uint8_t *held = tp_matcher_path(&w->block_m, p->node, &hl);
        if (p->mode == E_AFTER && p->fstate > 0 && p->fstate < 3)
            tp_drop_held_at_end(p, TP_ERR_UNTERMINATED, (const uint8_t *)"``", p->fstate); /* a cut fence */
        else if (p->node && p->mode != E_AFTER)
            tp_drop_held_at_end(p, TP_ERR_UNTERMINATED, held, hl);
        p->node = 0;
        break;
    }
    case E_HEAD:
    case E_ID:
    case E_V3NAME:
    case E_FENCE:
    case E_JSON:
        p->node = 0;
        if (p->discard) /* reported when its name was read */
            break;
        /* (a row with not_call still holds the whitespace before the
         * marker: the released raw text carries it) */
        tp_text_call_starts(p);
        tp_call_unterminated(p);
        break;
    }
    tp_text_finish(p);
}

#define ROW_FORMAT(sym, name, row)                                                              \
    static void sym##_feed(tp_parser *p, const uint8_t *s, size_t n) { ds_feed(p, &ROWS[row], s, n); } \
    static void sym##_finish(tp_parser *p) { ds_finish(p, &ROWS[row]); }                         \
    const tp_format tp_fmt_##sym = {name, sym##_feed, sym##_finish};

ROW_FORMAT(deepseekv3, "deepseekv3", ROW_V3)
ROW_FORMAT(deepseekv31, "deepseekv31", ROW_V31)
static void mistral_feed(tp_parser *p, const uint8_t *s, size_t n)
{
    if (p->engine_alt) { /* the pre-v11 array form (fmt_jsontag.c) */
        tp_jsontag_mistral_array_feed(p, s, n);
        return;
    }
    size_t i = ds_feed_upto(p, &ROWS[ROW_MISTRAL], s, n);
    if (p->engine_alt)
        hand_over(p, s, n, i);
}

static void mistral_finish(tp_parser *p)
{
    if (p->engine_alt)
        tp_jsontag_mistral_array_finish(p);
    else
        ds_finish(p, &ROWS[ROW_MISTRAL]);
}

const tp_format tp_fmt_mistral = {"mistral", mistral_feed, mistral_finish};
