/* The model text an error drops, recorded for the error (every byte of
 * model output ends up in text, in a call, or in an error that carries it).
 *
 *   text <tool_call>{"name": "nope", ...}</tool_call> more text
 *        |-------- dropped (unknown_tool) -----------|
 *
 * Recording starts at each error: from the refused call's first marker
 * when the call was never announced (its raw record, tp_calls.c, moves
 * over, with the whitespace held before it), else from the error's offset.
 * It ends where the format reads again: text (tp_scan_text, or tp_text on
 * bytes of the chunk), a call's first marker (tp_raw_begin), the next error
 * (which records on from its own offset), or the end of the stream. Then
 * one TP_EV_DROPPED event carries the bytes and their stream offset. The
 * ends are positions in the stream, so the record is the same for any
 * chunking. Bytes are copied at the end of each chunk, the same way the raw
 * record is; all but the last bytes (which a later end may take back: a
 * marker held across chunks) are emitted then, so a long skip streams in
 * pieces and memory stays bounded (the same bytes, in more events). */
#include <string.h>

#include "tp_internal.h"

/* index in the chunk being fed of stream offset `off`, clamped to it */
static size_t chunk_index(const tp_parser *p, uint64_t off)
{
    if (!p->chunk || off <= p->base)
        return 0;
    return off - p->base > p->chunk_n ? p->chunk_n : (size_t)(off - p->base);
}

static void emit_bytes(tp_parser *p, const uint8_t *s, size_t n)
{
    if (n == 0)
        return;
    size_t start = p->out.len;
    if (tp_buf_append(&p->out, s, n)) {
        p->oom = 1;
        return;
    }
    tp_ev_mark(p, TP_EV_DROPPED, p->drop_call, start);
    if (!p->oom)
        p->ev[p->nev - 1].offset = p->drop_off;
    p->drop_off += n;
}

static void emit_held(tp_parser *p)
{
    emit_bytes(p, p->drop.data, p->drop.len);
    tp_buf_clear(&p->drop);
    tp_buf_shrink(&p->drop, 1u << 12);
}

/* emits what the record holds but its last `keep` bytes (cut at a
 * character boundary), so a long skip is streamed as it goes and the
 * record holds only what a trim at its end may take back */
static void emit_but(tp_parser *p, size_t keep)
{
    if (p->drop.len <= keep)
        return;
    size_t k = p->drop.len - keep;
    while (k > 0 && (p->drop.data[k] & 0xC0) == 0x80)
        k--;
    emit_bytes(p, p->drop.data, k);
    memmove(p->drop.data, p->drop.data + k, p->drop.len - k);
    p->drop.len -= k;
}

/* appends to the record (over max_buffer: emitted now) */
static void put(tp_parser *p, const uint8_t *s, size_t n)
{
    if (n == 0 || tp_buf_append(&p->drop, s, n) == 0)
        return;
    emit_but(p, TP_DROP_KEEP); /* room: emit all but what a trim may take back */
    if (tp_buf_append(&p->drop, s, n) == 0)
        return;
    emit_held(p); /* a long piece: its head now, its last bytes kept */
    size_t head = n > TP_DROP_KEEP ? n - TP_DROP_KEEP : 0;
    while (head > 0 && (s[head] & 0xC0) == 0x80)
        head--;
    emit_bytes(p, s, head);
    if (tp_buf_append(&p->drop, s + head, n - head)) { /* (fits: the limit is twice that) */
        emit_bytes(p, s + head, n - head);
    }
}

/* records chunk[drop_at:k) */
static void take(tp_parser *p, size_t k)
{
    if (!p->chunk || k <= p->drop_at)
        return;
    const uint8_t *s = p->chunk + p->drop_at;
    size_t n = k - p->drop_at;
    p->drop_at = k;
    put(p, s, n);
}

void tp_drop_error(tp_parser *p, uint64_t offset)
{
    if (!p->drop_on)
        return;
    take(p, chunk_index(p, offset)); /* the previous error's record ends here */
    uint64_t end = p->drop_off + p->drop.len;
    if (end > offset) /* ... also when it is at bytes recorded from earlier chunks */
        p->drop.len -= end - offset < p->drop.len ? (size_t)(end - offset) : p->drop.len;
    emit_held(p);
    p->drop_on = 0;
    p->muted = 0; /* a call refused at a checkpoint: its text ended */
}

/* records from stream offset `off` on (the record so far ends there):
 * the bytes before the chunk from the tail ring (bytes a format held from
 * earlier chunks), then the chunk from there */
static void put_ring(tp_parser *p, uint64_t off)
{
    size_t k = (size_t)(p->base - off);
    size_t at = (size_t)(off % TP_DROP_TAIL), first = TP_DROP_TAIL - at < k ? TP_DROP_TAIL - at : k;
    put(p, p->tail + at, first);
    put(p, p->tail, k - first);
}

static void record_from(tp_parser *p, uint64_t off)
{
    if (!p->chunk)
        return;
    if (off < p->base) {
        if (p->base - off <= TP_DROP_TAIL) {
            put_ring(p, off);
        } else { /* older than the ring keeps: from the chunk */
            emit_held(p);
            p->drop_off = p->base;
        }
        p->drop_at = 0;
        return;
    }
    p->drop_at = chunk_index(p, off);
    if (p->drop.len == 0)
        p->drop_off = p->base + p->drop_at;
}

void tp_drop_started(tp_parser *p, int32_t call, uint64_t offset)
{
    p->drop_call = call;
    tp_buf_clear(&p->drop);
    /* whitespace still held that the record starts with is the record's,
     * not text (a format that fails a call before it let go of the held
     * run: it was in both; random-seed fuzz findings), also when the
     * record stopped at max_buffer (its dropped text starts there too) */
    if (p->raw_on && !p->raw_skip && p->ws.len && p->ws_start == p->raw_off &&
        p->ws_end == p->raw_off + p->ws.len)
        tp_text_call_starts(p);
    if (p->raw_on && !p->raw_over) { /* a call never announced: from its first marker */
        tp_buf t = p->drop;
        p->drop = p->raw;
        p->raw = t;
        p->raw.limit = p->drop.limit; /* each buffer keeps its bound */
        p->drop.limit = t.limit;
        p->raw_on = 0;
        p->drop_off = p->raw_off;
        p->drop_at = p->raw_at;
        if (p->raw_skip) { /* whitespace not next to the marker: not the call's */
            size_t k = p->raw_skip < p->drop.len ? p->raw_skip : p->drop.len;
            memmove(p->drop.data, p->drop.data + k, p->drop.len - k);
            p->drop.len -= k;
        }
        if (p->drop.len > p->drop.limit) /* the raw record may hold more than the drop record's bound */
            emit_but(p, TP_DROP_KEEP);
    } else if (p->raw_on) {
        /* the raw record stopped at max_buffer (where depends on the
         * chunking): the bytes it holds, then on from where it stopped */
        size_t skip = p->raw_skip < p->raw.len ? p->raw_skip : p->raw.len;
        p->drop_off = p->raw_off; /* (raw_off is after whitespace not next to the marker) */
        if (p->raw.len > skip)
            put(p, p->raw.data + skip, p->raw.len - skip);
        p->raw_on = 0;
        uint64_t from = p->raw_off + (p->raw.len - skip);
        if (!p->chunk && from < p->base && p->base - from <= TP_DROP_TAIL)
            put_ring(p, from); /* a cut-off call: to the end (since its last checkpoint) */
        else
            record_from(p, from);
    } else {
        if (call < 0 && p->drop_mark <= offset)
            offset = p->drop_mark; /* the refused call's text, from where it began */
        p->drop_off = offset;
        record_from(p, offset);
    }
    p->drop_mark = UINT64_MAX;
    p->drop_on = 1;
    if (!p->chunk) /* end of stream: nothing follows */
        tp_drop_finish(p);
}

void tp_drop_end(tp_parser *p, size_t at, size_t back)
{
    if (!p->drop_on)
        return;
    take(p, at >= back ? at - back : 0);
    if (back > at) { /* what resumes began in an earlier chunk */
        size_t over = back - at;
        p->drop.len -= over < p->drop.len ? over : p->drop.len;
    }
    emit_held(p);
    p->drop_on = 0;
    p->muted = 0; /* a call refused at a checkpoint: its text ended */
}

void tp_drop_text(tp_parser *p, const uint8_t *s, size_t n)
{
    if (p->chunk && s >= p->chunk && s <= p->chunk + p->chunk_n) {
        tp_drop_end(p, (size_t)(s - p->chunk), 0);
        return;
    }
    /* bytes held back (a partial marker, a separator) released as text:
     * the input's last bytes before where the format reads, so the
     * record's last bytes when it took none of this chunk yet */
    if ((!p->chunk || p->drop_at == 0) && p->drop.len >= n && memcmp(p->drop.data + p->drop.len - n, s, n) == 0) {
        p->drop.len -= n;
        tp_drop_end(p, p->drop_at, 0);
    }
    /* else the format ended the record where its skip ended (tp_resync) */
}

void tp_drop_end_off(tp_parser *p, uint64_t off)
{
    if (p->drop_on && p->chunk && off >= p->base)
        tp_drop_end(p, chunk_index(p, off), 0);
}

void tp_drop_end_at(tp_parser *p, const uint8_t *s, size_t back)
{
    if (p->drop_on && p->chunk && s >= p->chunk && s <= p->chunk + p->chunk_n)
        tp_drop_end(p, (size_t)(s - p->chunk), back);
}

void tp_drop_chunk_end(tp_parser *p, const uint8_t *data, size_t n)
{
    if (p->drop_on && data == p->chunk) {
        take(p, n);
        /* a trim takes back at most a marker and held whitespace or a
         * held separator run: the rest is streamed now */
        emit_but(p, TP_DROP_KEEP);
    }
    p->drop_at = 0;
}

void tp_drop_keep_tail_slow(tp_parser *p, const uint8_t *data, size_t n)
{
    /* called before base moves past the chunk: data[0] is at stream offset base */
    uint64_t from = p->base;
    if (n > TP_DROP_TAIL) {
        from += n - TP_DROP_TAIL;
        data += n - TP_DROP_TAIL;
        n = TP_DROP_TAIL;
    }
    size_t at = (size_t)(from % TP_DROP_TAIL), first = TP_DROP_TAIL - at < n ? TP_DROP_TAIL - at : n;
    __asm__("" : "+r"(first), "+r"(n)); /* (as in tp_drop_keep_tail) */
    memcpy(p->tail + at, data, first);
    memcpy(p->tail, data + first, n - first);
}

void tp_drop_mark(tp_parser *p, uint64_t off) { p->drop_mark = off; }

void tp_drop_finish(tp_parser *p)
{
    if (!p->drop_on)
        return;
    emit_held(p);
    p->drop_on = 0;
    p->muted = 0; /* a call refused at a checkpoint: its text ended */
}

void tp_drop_held_at_end(tp_parser *p, int code, const uint8_t *s, size_t n)
{
    if (n == 0 || p->chunk)
        return;
    if (p->drop_on) /* a drop ran to the end of the last chunk: it holds them */
        return;
    tp_ev_error(p, code, p->base - n, -1, NULL, 0);
    p->drop_call = -1;
    p->drop_off = p->base - n;
    emit_bytes(p, s, n);
}

int tp_drop_mark_at_end(tp_parser *p, int code)
{
    uint64_t m = p->drop_mark;
    if (p->chunk || p->drop_on || m >= p->base || p->base - m > TP_DROP_TAIL)
        return 0;
    size_t k = (size_t)(p->base - m);
    size_t at = (size_t)(m % TP_DROP_TAIL), first = TP_DROP_TAIL - at < k ? TP_DROP_TAIL - at : k;
    tp_ev_error(p, code, p->base, -1, NULL, 0);
    p->drop_call = -1;
    p->drop_off = m;
    p->drop_mark = UINT64_MAX;
    emit_bytes(p, p->tail + at, first);
    emit_bytes(p, p->tail, k - first);
    return 1;
}

void tp_drop_trailing_ws(tp_parser *p, const uint8_t *s, size_t n, uint64_t at)
{
    /* the last drop ended where the run begins: nothing came between */
    if (n == 0 || p->drop_on || p->chunk || at == UINT64_MAX || at != p->drop_off || p->drop_off == 0)
        return;
    emit_bytes(p, s, n);
}

void tp_drop_bytes(tp_parser *p, uint64_t off, const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    p->drop_call = -1;
    p->drop_off = off;
    emit_bytes(p, a, an);
    emit_bytes(p, b, bn);
}
