/* Call lifecycle shared by every format: name validation, announcement,
 * indices, errors.
 *
 * A call goes through two steps. tp_call_open() validates the name (declared
 * tool, call limit) and reserves the call; nothing is emitted yet. The
 * format calls tp_call_announce() at the first byte or tag that commits the
 * call's body to a well-formed start (the `{` of JSON arguments, a complete
 * parameter opening tag, the call's own closing tag for a call without
 * arguments); only then is the call given its index and a CallStart. A call
 * that fails before that point is reported with no index and leaves no trace
 * in the event stream, so clients never see a name without a body, and the
 * indices of announced calls stay contiguous (0, 1, 2, ...), as OpenAI's
 * `tool_calls[].index` must be. */
#include <string.h>

#include "tp_internal.h"

int tp_call_open(tp_parser *p, const uint8_t *name, size_t len, uint64_t offset)
{
    p->held = 0;
    if (p->muted) /* refused at a checkpoint already (tp_raw_checkpoint) */
        return 0;
    if (len == 0) {
        tp_ev_error(p, TP_ERR_BAD_NAME, offset, -1, NULL, 0); /* drops the raw record */
        tp_raw_end(p);
        return 0;
    }
    if (!(p->flags & (TP_FLAG_ACCEPT_ANY | TP_FLAG_FORWARD_UNKNOWN)) &&
        tp_parser_find_tool(p, name, len) < 0) {
        tp_ev_error(p, TP_ERR_UNKNOWN_TOOL, offset, -1, name, len); /* drops the raw record */
        tp_raw_end(p);
        return 0;
    }
    if ((uint32_t)p->ncalls >= p->lim.max_calls) {
        tp_ev_error(p, TP_ERR_CALL_LIMIT, offset, -1, name, len); /* drops the raw record */
        tp_raw_end(p);
        return 0;
    }
    tp_buf_clear(&p->callname);
    tp_buf_clear(&p->callid);
    if (tp_buf_append(&p->callname, name, len)) {
        /* names are bounded by max_name before they get here */
        tp_ev_error(p, TP_ERR_BAD_NAME, offset, -1, NULL, 0);
        return 0;
    }
    p->cur = -1;
    p->held = 1;
    return 1;
}

void tp_call_announce(tp_parser *p)
{
    if (!p->held)
        return;
    tp_junk_announce(p); /* prose before it, inside it (its raw record holds it) */
    tp_raw_end(p);
    p->drop_mark = UINT64_MAX;
    p->held = 0;
    p->cur = p->ncalls++;
    size_t start = p->out.len;
    if (tp_buf_append(&p->out, p->callname.data, p->callname.len) ||
        tp_buf_append(&p->out, p->callid.data, p->callid.len)) {
        p->oom = 1;
        return;
    }
    tp_ev_mark(p, TP_EV_CALL_START, p->cur, start);
    if (!p->oom && p->callid.len) /* the id follows the name in the span */
        p->ev[p->nev - 1].offset = p->callname.len;
}

int tp_call_set_id(tp_parser *p, const uint8_t *id, size_t n)
{
    tp_buf_clear(&p->callid);
    return n && tp_buf_append(&p->callid, id, n) ? -1 : 0;
}

void tp_call_close(tp_parser *p)
{
    tp_call_announce(p); /* a call closed by its own end tag is well-formed */
    if (p->cur >= 0)
        tp_ev_mark(p, TP_EV_CALL_END, p->cur, p->out.len);
    p->cur = -1;
    p->after_call = 1;
}

/* Announces the held call after the scanner wrote out[start:] (its first
 * argument bytes): the CallStart goes before them in the event order (its
 * name span lies after them in the output buffer, which events allow). */
static void announce_before(tp_parser *p, size_t start)
{
    size_t x = p->out.len;
    tp_call_announce(p);
    if (p->oom || x == start)
        return;
    size_t k = p->nev;
    tp_ev_mark(p, TP_EV_ARGS, p->cur, start); /* (prose inside the call may follow it: tp_junk_flush) */
    if (!p->oom)
        p->ev[k].len = x - start;
}

/* the announced call's arguments s[0:n) through p->js (not done yet) */
static inline int stream_args(tp_parser *p, const uint8_t *s, size_t n, size_t *used)
{
    size_t start = p->out.len;
    *used = tp_json_feed(&p->js, s, n, &p->out);
    if (p->out.len > start || p->hs_on) /* (nothing written: no event, unless a held surrogate is written) */
        tp_ev_args_from(p, start);
    if (tp_json_failed(&p->js))
        return -1;
    return tp_json_done(&p->js);
}

int tp_call_json_args(tp_parser *p, const uint8_t *s, size_t n, size_t *used)
{
    if (!p->held) { /* (the usual case: the call was announced) */
        if (tp_json_done(&p->js)) {
            *used = 0;
            return 1;
        }
        return stream_args(p, s, n, used);
    }
    size_t done = 0;
    /* Held call: the value is fed a byte at a time until it writes its first
     * output byte (the `{`, `[` or `"` that opens it, or a whole number or
     * literal), which announces the call; a byte the scanner rejects before
     * that drops the call unannounced. Decided at one byte, so the result
     * does not depend on the chunking. */
    while (p->held && done < n) {
        size_t start = p->out.len;
        size_t k = tp_json_feed(&p->js, s + done, 1, &p->out);
        if (tp_json_failed(&p->js)) {
            p->out.len = start;
            p->js.err_at += done;
            *used = done + k;
            return -1;
        }
        done += k;
        if (p->out.len > start)
            announce_before(p, start);
        else if (k == 0)
            break;
    }
    if (p->held || tp_json_done(&p->js)) {
        *used = done;
        return tp_json_done(&p->js) ? 1 : 0;
    }
    size_t k;
    int st = stream_args(p, s + done, n - done, &k);
    *used = done + k;
    if (st < 0)
        p->js.err_at += done;
    return st;
}

void tp_call_unterminated(tp_parser *p)
{
    /* a call never announced sent nothing: its text is text */
    int released = tp_call_release_raw(p);
    p->node = 0;
    tp_buf_clear(&p->pending);
    tp_call_fail(p, TP_ERR_UNTERMINATED, p->base);
    if (!released)
        p->after_call = 1;
}

void tp_call_fail(tp_parser *p, int code, uint64_t offset)
{
    /* a call failing before its announcement is reported without an index:
     * no event ever named it; its raw record is what the error drops */
    tp_ev_error(p, code, offset, p->cur, NULL, 0);
    tp_raw_end(p);
    p->cur = -1;
    p->held = 0;
}

/* ---- the raw text of a call before its announcement ----
 * Every byte of model output ends up in text, in a call or in an error: a
 * call the stream ends in before it was announced (its name, its markup)
 * has sent nothing, so its text is released as text, as if the marker had
 * started no call. Decided at the end of the stream only, so the result is
 * the same for any chunking. The record is bounded (max_buffer, at least
 * TP_RAW_FLOOR + max_name); one that outgrows it is refused at the next
 * checkpoint (tp_raw_checkpoint), so no byte of it is ever lost. */

void tp_raw_begin(tp_parser *p, const char *marker, size_t mlen, size_t at)
{
    p->muted = 0;
    uint64_t mstart = p->base + at - mlen;
    tp_junk_begin(p); /* (prose inside the call before: reported) */
    /* the held whitespace is the model's bytes just before the marker,
     * unless markup the format took (a block opener) came between */
    int next_to = p->ws.len == 0 || (p->ws_end == mstart && p->ws_start == mstart - p->ws.len);
    tp_drop_end(p, at, mlen + (next_to ? p->ws.len : 0)); /* a call's first marker: a drop ends */
    p->raw_off = mstart - (next_to ? p->ws.len : 0);
    p->raw_skip = next_to ? 0 : p->ws.len;
    tp_buf_clear(&p->raw);
    p->raw_over = (tp_buf_append(&p->raw, p->ws.data, p->ws.len) ||
                   tp_buf_append(&p->raw, marker, mlen)) != 0;
    p->raw_on = 1;
    p->raw_at = at;
}

void tp_raw_end(tp_parser *p)
{
    if (!p->raw_on)
        return;
    p->raw_on = 0;
    tp_buf_clear(&p->raw);
    tp_buf_shrink(&p->raw, 1u << 12);
}

/* A block opener's raw record (raw_on: the opener and the blanks after
 * it, no call since) made no call: prose begins at stream offset `at`,
 * known to be prose at `now` (>= at). The whitespace held before the
 * opener stays prose (text), as before a stray end tag; the opener and the
 * blanks after it are a bad_markup error's dropped text, up to `at`. */
void tp_raw_made_no_call(tp_parser *p, uint64_t at)
{
    /* the whitespace held before the opener stays prose, as before a
     * stray end tag, unless the record up to `at` is over max_buffer. That
     * is decided by `at` alone: the record may have stopped at a chunk end
     * past `at` (bytes held as a possible tag, or a call opener found to
     * be prose only later), but the whitespace at its start is in it
     * whenever the record up to `at` fits, so any chunking gives it back */
    size_t k = p->raw_skip;
    while (k < p->raw.len && tp_is_ws(p->raw.data[k]))
        k++;
    int over = p->raw.limit && at >= p->raw_off && p->raw_skip + (at - p->raw_off) > p->raw.limit;
    if (k > p->raw_skip && !over) {
        tp_text_at(p, p->raw.data + p->raw_skip, k - p->raw_skip, p->raw_off);
        tp_text_flush_ws(p);
        p->raw_off += k - p->raw_skip;
        p->raw_skip = k;
    }
    tp_ev_error(p, TP_ERR_BAD_MARKUP, at, -1, (const uint8_t *)"markup that makes no call", 25);
    tp_drop_error(p, at); /* its dropped text ends where the prose begins */
}

size_t tp_piece(const tp_parser *p, uint64_t at, const uint8_t *s, size_t n)
{
    if (p->cp_next - at >= n)
        return n;
    /* the first character start from the checkpoint (a caller's chunk
     * never ends inside a character) */
    size_t k = (size_t)(p->cp_next - at);
    for (int c = 0; c < 3 && k < n && (s[k] & 0xC0) == 0x80; c++)
        k++;
    return k;
}

void tp_piece_end(tp_parser *p, uint64_t end, const uint8_t *s, size_t n)
{
    if (end < p->cp_next)
        return;
    tp_raw_checkpoint(p, s, n);
    p->cp_next = end / TP_CHECKPOINT * TP_CHECKPOINT + TP_CHECKPOINT;
}

void tp_raw_checkpoint(tp_parser *p, const uint8_t *data, size_t n)
{
    if (!p->raw_on || p->cur >= 0)
        return;
    if (!p->raw_over && p->raw.len + (n > p->raw_at ? n - p->raw_at : 0) <= p->raw.limit)
        return;
    /* the record outgrew its bound, which no marker that may still be
     * prose reaches (TP_RAW_FLOOR): a call's text before its announcement
     * longer than max_buffer. Refused here, at the same offset for every
     * chunking; its text is dropped text from its first marker on (the
     * record, then the ring's bytes since it stopped: less than a
     * checkpoint apart), streamed as it goes */
    p->held = 0;
    p->drop_mark = UINT64_MAX;
    tp_ev_error(p, TP_ERR_BUFFER_LIMIT, p->base + n, -1, NULL, 0);
    p->muted = p->drop_on;
}

void tp_raw_chunk_end(tp_parser *p, const uint8_t *data, size_t n)
{
    if (p->raw_on && !p->raw_over && p->raw_at < n &&
        tp_buf_append(&p->raw, data + p->raw_at, n - p->raw_at))
        p->raw_over = 1;
    p->raw_at = 0;
    tp_drop_chunk_end(p, data, n);
}

int tp_call_release_raw(tp_parser *p)
{
    if (!p->raw_on || p->raw_over || p->cur >= 0) {
        tp_raw_end(p);
        return 0;
    }
    p->raw_on = 0;
    p->held = 0;
    p->node = 0;
    tp_text(p, p->raw.data, p->raw.len);
    tp_text_finish(p); /* its trailing whitespace too: nothing follows it */
    tp_buf_clear(&p->raw);
    return 1;
}
