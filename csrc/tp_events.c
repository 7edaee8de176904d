/* Event batch and the text layer. Adjacent text spans, and adjacent
 * argument spans of one call, are merged into one event. */
#include <stdlib.h>
#include <string.h>

#include "tp_internal.h"

static int grow_events(tp_parser *p)
{
    size_t cap = p->evcap ? p->evcap * 2 : 16;
    tp_event *e = realloc(p->ev, cap * sizeof(*e));
    if (!e) {
        p->oom = 1;
        return -1;
    }
    p->ev = e;
    p->evcap = cap;
    return 0;
}

/* a new event, every field set */
static inline tp_event *push_event(tp_parser *p, int t, int code, int32_t call, uint64_t offset, size_t start,
                                   size_t len)
{
    if (p->nev == p->evcap && grow_events(p))
        return NULL;
    tp_event *e = &p->ev[p->nev++];
    *e = (tp_event){.type = (uint8_t)t, .code = (uint8_t)code, .call = call, .offset = offset, .start = start,
                    .len = len};
    return e;
}

/* ---- a high surrogate held at the end of escaped argument text ----
 * tp_json_escape writes a raw high surrogate followed by a low one as the
 * pair's character. Streamed, the two may come in different pieces: the
 * high one a piece ends with is held (p->hs) until the next piece. Any
 * event other than more escaped text of the arguments shows it was lone:
 * it is written first, escaped, at out[start] (what the caller already
 * wrote from there moves after it). Returns the caller's new start. */
static void raw_span(tp_parser *p, int t, int32_t call, size_t start);

static size_t write_hs(tp_parser *p, size_t start);
static inline size_t flush_hs(tp_parser *p, size_t start)
{
    return p->hs_on ? write_hs(p, start) : start;
}

static size_t write_hs(tp_parser *p, size_t start)
{
    p->hs_on = 0;
    if (p->hs_call < 0) /* (a muted call's: its events are dropped) */
        return start;
    size_t len = p->out.len - start;
    if (tp_buf_reserve(&p->out, 6)) {
        p->oom = 1;
        return start;
    }
    uint8_t *o = p->out.data + start;
    memmove(o + 6, o, len);
    p->out.len = start;
    if (tp_json_escape(&p->out, p->hs, 3)) { /* (six bytes: reserved) */
        p->oom = 1;
        return start;
    }
    raw_span(p, TP_EV_ARGS, p->hs_call, start);
    p->out.len += len;
    return start + 6;
}

/* the argument events of a call refused at a checkpoint (tp_raw_checkpoint) */
static inline int muted(tp_parser *p, int t, int32_t call, size_t start)
{
    if (!p->muted || call >= 0 || (t != TP_EV_ARGS && t != TP_EV_RAW_VALUE))
        return 0;
    p->out.len = start;
    return 1;
}

static void ev_mark_slow(tp_parser *p, int t, int32_t call, size_t start);

void tp_ev_mark(tp_parser *p, int t, int32_t call, size_t start)
{
    /* the usual case, nothing held, muted or pending: the event, no call */
    if (!(p->hs_on | p->muted) && p->junk != 6 && p->nev < p->evcap) {
        p->ev[p->nev++] = (tp_event){.type = (uint8_t)t, .call = call, .start = start, .len = p->out.len - start};
        return;
    }
    ev_mark_slow(p, t, call, start);
}

static void ev_mark_slow(tp_parser *p, int t, int32_t call, size_t start)
{
    start = flush_hs(p, start);
    if (p->junk == 6 && t == TP_EV_CALL_END) /* prose inside the call, before its end */
        tp_junk_flush(p);
    if (muted(p, t, call, start))
        return;
    if (!push_event(p, t, 0, call, 0, start, p->out.len - start))
        return;
    if (p->junk == 6 && t == TP_EV_ARGS) /* ... after its first ArgsDelta */
        tp_junk_flush(p);
}

/* Appends a span of type t that starts at out[start] and runs to the end of
 * out, merging it into the previous event when that one is contiguous. */
static void span_event(tp_parser *p, int t, int32_t call, size_t start)
{
    raw_span(p, t, call, flush_hs(p, start));
}

static void raw_span(tp_parser *p, int t, int32_t call, size_t start)
{
    if (muted(p, t, call, start))
        return;
    size_t len = p->out.len - start;
    if (len == 0)
        return;
    if (p->nev) {
        tp_event *last = &p->ev[p->nev - 1];
        if (last->type == t && last->call == call && last->start + last->len == start) {
            last->len += len;
            return;
        }
    }
    tp_ev_mark(p, t, call, start);
}

/* copies s[0:n) to the output and adds it as a (merged) span event */
static void append_span(tp_parser *p, int t, int32_t call, const uint8_t *s, size_t n)
{
    size_t start = p->out.len;
    if (tp_buf_append(&p->out, s, n)) {
        p->oom = 1;
        return;
    }
    span_event(p, t, call, start);
}

static void raw_text(tp_parser *p, const uint8_t *s, size_t n) { append_span(p, TP_EV_TEXT, -1, s, n); }

void tp_ev_text(tp_parser *p, const uint8_t *s, size_t n) { raw_text(p, s, n); }

void tp_ev_reasoning(tp_parser *p, const uint8_t *s, size_t n) { append_span(p, TP_EV_REASONING, -1, s, n); }

void tp_ev_markup(tp_parser *p, uint64_t off, const uint8_t *s, size_t n)
{
    if (n == 0)
        return;
    flush_hs(p, p->out.len);
    size_t start = p->out.len;
    if (tp_buf_append(&p->out, s, n)) {
        p->oom = 1;
        return;
    }
    if (p->nev) {
        tp_event *last = &p->ev[p->nev - 1];
        if (last->type == TP_EV_MARKUP && last->start + last->len == start && last->offset + last->len == off) {
            last->len += n;
            return;
        }
    }
    tp_ev_mark(p, TP_EV_MARKUP, -1, start);
    if (!p->oom)
        p->ev[p->nev - 1].offset = off;
}

void tp_ev_args_from(tp_parser *p, size_t start) { span_event(p, TP_EV_ARGS, p->cur, start); }

void tp_ev_args(tp_parser *p, const uint8_t *s, size_t n) { append_span(p, TP_EV_ARGS, p->cur, s, n); }

void tp_ev_args_escaped(tp_parser *p, const uint8_t *s, size_t n)
{
    if (p->hs_on && n >= 3 && p->hs_call == p->cur && tp_sur_low(s)) {
        uint8_t u[4]; /* the held high surrogate and this low one: a pair */
        tp_sur_pair(p->hs, s, u);
        p->hs_on = 0;
        tp_ev_args(p, u, 4);
        s += 3;
        n -= 3;
    }
    int hold = p->cur >= 0 && n >= 3 && tp_sur_high(s + n - 3);
    if (hold)
        n -= 3;
    size_t start = p->out.len;
    if (tp_json_escape(&p->out, s, n)) {
        p->oom = 1;
        return;
    }
    tp_ev_args_from(p, start); /* (writes a high surrogate held before first) */
    if (hold) {
        memcpy(p->hs, s + n, 3);
        p->hs_on = 1;
        p->hs_call = p->cur;
    }
}

static void error_event(tp_parser *p, int code, uint64_t offset, int32_t call,
                        const uint8_t *detail, size_t dlen)
{
    flush_hs(p, p->out.len); /* (before the error: the call's arguments) */
    size_t start = p->out.len;
    if (dlen > 256) {
        dlen = 256; /* details are for logs; keep them short */
        while (dlen > 0 && (detail[dlen] & 0xC0) == 0x80)
            dlen--; /* ... and cut at a character boundary */
    }
    if (dlen && tp_buf_append(&p->out, detail, dlen)) {
        p->oom = 1;
        return;
    }
    push_event(p, TP_EV_ERROR, code, call, offset, start, dlen);
}

void tp_ev_error(tp_parser *p, int code, uint64_t offset, int32_t call,
                 const uint8_t *detail, size_t dlen)
{
    if (p->muted && call < 0)
        return; /* the call refused at a checkpoint: what its format finds
                 * in it then is that refusal's dropped text, which runs on */
    tp_junk_flush(p);
    p->junk = 0; /* (prose inside a call: its record ends here) */
    tp_drop_error(p, offset);
    error_event(p, code, offset, call, detail, dlen);
    if (!p->oom)
        tp_drop_started(p, call, offset);
}

void tp_ev_error_bytes(tp_parser *p, int code, uint64_t offset, const uint8_t *detail, size_t dlen,
                       const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    if (p->muted)
        return; /* (prose inside a call refused at a checkpoint: its dropped text) */
    tp_drop_error(p, offset);
    error_event(p, code, offset, -1, detail, dlen);
    if (!p->oom)
        tp_drop_bytes(p, offset, a, an, b, bn);
}

/* ---- text layer ----
 * A whitespace run directly before a call, or between a call's end and the
 * end of the stream, is template formatting and is dropped; whitespace
 * followed by prose is kept. Runs are held (up to TP_WS_HOLD_MAX bytes,
 * longer ones are always kept) until the next non-whitespace byte decides. */

static void flush_ws(tp_parser *p)
{
    if (p->ws.len) {
        raw_text(p, p->ws.data, p->ws.len);
        tp_buf_clear(&p->ws);
    }
}

static void hold_ws(tp_parser *p, const uint8_t *s, size_t n)
{
    if (p->ws_long) {
        raw_text(p, s, n);
        return;
    }
    if (p->ws.len + n > TP_WS_HOLD_MAX || tp_buf_append(&p->ws, s, n)) {
        p->ws_long = 1;
        flush_ws(p);
        raw_text(p, s, n);
    }
}

/* where the whitespace about to be held lies in the stream (a call's raw
 * record starts with it only when it is the model's bytes just before the
 * call's marker) */
static void held_at(tp_parser *p, uint64_t at, size_t n)
{
    if (p->ws.len == 0)
        p->ws_start = at;
    else if (at == UINT64_MAX || p->ws_end != at)
        p->ws_start = UINT64_MAX; /* not one run of the model's bytes */
    p->ws_end = at == UINT64_MAX ? UINT64_MAX : at + n;
}

/* text s[0:n) whose first byte is at stream offset `at` (UINT64_MAX:
 * not known, e.g. bytes a format made up) */
static void text_at(tp_parser *p, const uint8_t *s, size_t n, uint64_t at)
{
    if (n == 0)
        return;
    if (p->drop_on)
        tp_drop_text(p, s, n); /* text is read again: a drop ends */
    size_t last = n;
    while (last > 0 && tp_is_ws(s[last - 1]))
        last--;
    if (last == 0) {
        held_at(p, at, n);
        hold_ws(p, s, n);
        return;
    }
    flush_ws(p);
    p->ws_long = 0;
    p->after_call = 0;
    raw_text(p, s, last);
    if (last < n) {
        held_at(p, at == UINT64_MAX ? at : at + last, n - last);
        hold_ws(p, s + last, n - last);
    }
}

void tp_text_at(tp_parser *p, const uint8_t *s, size_t n, uint64_t at) { text_at(p, s, n, at); }

void tp_text(tp_parser *p, const uint8_t *s, size_t n)
{
    uint64_t at = p->chunk && s >= p->chunk && s + n <= p->chunk + p->chunk_n
                      ? p->base + (uint64_t)(s - p->chunk) : UINT64_MAX;
    text_at(p, s, n, at);
}

/* the first n bytes of a matcher's held path, which were the hl bytes just
 * before s in the stream (a partial marker that did not become one) */
static void held_text(tp_parser *p, const uint8_t *held, size_t n, size_t hl, const uint8_t *s)
{
    uint64_t at = p->chunk && s >= p->chunk && s <= p->chunk + p->chunk_n &&
                          p->base + (uint64_t)(s - p->chunk) >= hl
                      ? p->base + (uint64_t)(s - p->chunk) - hl : UINT64_MAX;
    text_at(p, held, n, at);
}

/* A marker that made no call (an end marker in prose, a section that
 * held no call) ends at chunk index `at` and is `mlen` bytes long: an
 * error whose dropped text carries it, never a silent drop. Whitespace
 * held before it stays prose, or formatting after a call. */
void tp_stray_markup(tp_parser *p, size_t mlen, size_t at)
{
    uint64_t off = p->base + at - mlen;
    if (!p->after_call)
        flush_ws(p);
    else if (p->ws.len && p->ws_end == off && p->ws_start == off - p->ws.len)
        off = p->ws_start; /* formatting after a call: the marker's, with it */
    tp_buf_clear(&p->ws);
    p->ws_long = 0;
    p->after_call = 0; /* whitespace after it is not a call's */
    tp_ev_error(p, TP_ERR_BAD_MARKUP, off, -1, (const uint8_t *)"markup that makes no call", 25);
}

void tp_block_markup(tp_parser *p, const char *m, size_t mlen, uint64_t off)
{
    if (p->drop_on)
        return; /* the error's dropped text runs on through it */
    if (!p->after_call)
        flush_ws(p);
    tp_buf_clear(&p->ws);
    p->ws_long = 0;
    p->after_call = 0;
    size_t start = p->out.len;
    if (tp_buf_append(&p->out, m, mlen)) {
        p->oom = 1;
        return;
    }
    tp_ev_mark(p, TP_EV_MARKUP, -1, start);
    if (!p->oom)
        p->ev[p->nev - 1].offset = off;
}

void tp_text_call_starts(tp_parser *p)
{
    tp_buf_clear(&p->ws);
    p->ws_long = 0;
}

void tp_text_flush_ws(tp_parser *p)
{
    flush_ws(p);
    p->ws_long = 0;
    p->after_call = 0;
}

void tp_text_finish(tp_parser *p)
{
    if (p->after_call) {
        tp_drop_trailing_ws(p, p->ws.data, p->ws.len, p->ws_start);
        tp_buf_clear(&p->ws);
    }
    else
        flush_ws(p);
    p->ws_long = 0;
}

size_t tp_scan_text(tp_parser *p, const tp_matcher *m, const uint8_t *s, size_t n, int *match)
{
    tp_scan_res r;
    uint8_t old = p->node;
    if (p->drop_on) { /* text is read again: a drop ends (a marker held across chunks included) */
        size_t hl;
        tp_matcher_path(m, old, &hl);
        tp_drop_end_at(p, s, hl);
    }
    tp_matcher_scan(m, &p->node, s, n, &r);
    if (r.held_text) {
        size_t hl;
        const uint8_t *held = tp_matcher_path(m, old, &hl);
        held_text(p, held, r.held_text, hl, s);
    }
    tp_text(p, s, r.text_len);
    *match = r.match;
    return r.consumed;
}

size_t tp_scan_skip(tp_parser *p, const tp_matcher *m, const uint8_t *s, size_t n, int *match,
                    int *junk, size_t *junk_at)
{
    tp_scan_res r;
    uint8_t old = p->node;
    tp_matcher_scan(m, &p->node, s, n, &r);
    *junk = 0;
    if (r.held_text) {
        size_t hl;
        const uint8_t *held = tp_matcher_path(m, old, &hl);
        for (size_t k = 0; k < r.held_text && !*junk; k++)
            if (!tp_is_ws(held[k])) {
                /* the held bytes are the hl bytes just before s: the offset
                 * is negative, and wraps back when the caller adds it to
                 * the stream offset of s */
                *junk = 1;
                *junk_at = (size_t)0 - (hl - k);
            }
    }
    for (size_t k = 0; k < r.text_len && !*junk; k++)
        if (!tp_is_ws(s[k])) {
            *junk = 1;
            *junk_at = k;
        }
    *match = r.match;
    return r.consumed;
}

/* prose inside a section: blanks after its opener or a call are template
 * formatting (the opener's record or the call's); the rest is text at its
 * stream offset `at`, the first of it ending the opener's record (it made
 * no call) or an error's dropped text */
static void block_prose(tp_parser *p, const uint8_t *s, size_t n, uint64_t at, uint8_t *prose)
{
    if (!*prose) {
        while (n && tp_is_ws(*s))
            s++, n--, at++;
        if (!n)
            return;
        *prose = 1;
        if (p->raw_on)
            tp_raw_made_no_call(p, at);
    }
    /* a drop ends where the text begins, also at bytes a partial marker
     * held from earlier chunks (tp_drop_text finds only the chunk's own) */
    if (p->drop_on && p->chunk)
        tp_drop_end(p, at >= p->base ? (size_t)(at - p->base) : 0, at >= p->base ? 0 : (size_t)(p->base - at));
    text_at(p, s, n, at);
}

size_t tp_scan_block(tp_parser *p, const tp_matcher *m, const uint8_t *s, size_t n, int *match, uint8_t *prose)
{
    tp_scan_res r;
    uint8_t old = p->node;
    uint64_t off = p->base + (uint64_t)(s - p->chunk);
    tp_matcher_scan(m, &p->node, s, n, &r);
    if (r.held_text) {
        size_t hl;
        const uint8_t *held = tp_matcher_path(m, old, &hl);
        block_prose(p, held, r.held_text, off - hl, prose);
    }
    if (r.text_len)
        block_prose(p, s, r.text_len, off, prose);
    *match = r.match;
    return r.consumed;
}

void tp_release_held(tp_parser *p, const tp_matcher *m)
{
    size_t hl;
    const uint8_t *held = tp_matcher_path(m, p->node, &hl);
    p->node = 0;
    tp_text(p, held, hl);
}

void tp_matcher_switch(tp_parser *p, const tp_matcher *from, const tp_matcher *to)
{
    size_t hl;
    const uint8_t *held = tp_matcher_path(from, p->node, &hl);
    tp_scan_res r;
    p->node = 0;
    if (hl)
        tp_matcher_scan(to, &p->node, held, hl, &r);
}
