/* Prose the model writes inside a call, between its tags (issue 18: no
 * byte of model output lost).
 *
 *   <function=f> <parameter=a>1</parameter> see here <parameter=b>2</parameter>
 *                                          |-------| bad_markup, raw
 *
 * The chat templates write only blanks between a call's tags (its opener
 * and first parameter, its parameters, its last parameter and its end
 * tag); those stay template formatting. Non-blank bytes there are outside
 * the format's grammar, but the call itself is well-formed and stands, as
 * SGLang's detectors keep it: they are a ParseError("bad_markup") with no
 * index (the call is not aborted; it ends with its CallEnd), its raw text
 * from the first non-blank byte to where the next tag starts (blanks
 * before that tag included), at stream offsets, the same for any chunking.
 *
 * An engine gives every byte it reads between a call's tags to
 * tp_junk_bytes (held bytes of a partial tag that turned out not to be one
 * included, with their stream offset) and calls tp_junk_tag at each tag it
 * finds there. Once the call was announced, the error records the bytes
 * (tp_dropped.c) up to the tag. Before the announcement they are in the
 * call's raw record: their spans are noted, their bytes taken from that
 * record at the announcement (tp_call_announce calls tp_junk_announce),
 * and each is an error after the call's first ArgsDelta (tp_junk_flush:
 * inside the call's events, where the prose is; more than TP_JUNK_SPANS
 * spans join the last one, the tags between them included, and bytes past
 * the drop record's bound are reported before the CallStart); a call refused, broken or cut off before it carries them in its
 * own error or text, so nothing more is reported. */
#include <string.h>

#include "tp_internal.h"

static const char DETAIL[] = "prose inside a call";

static void error_at(tp_parser *p, uint64_t off, const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    tp_ev_error_bytes(p, TP_ERR_BAD_MARKUP, off, (const uint8_t *)DETAIL, sizeof(DETAIL) - 1, a, an, b, bn);
}

void tp_junk_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (p->junk == 2 || p->junk == 3 || p->junk == 5 || n == 0)
        return;
    size_t i = 0;
    while (i < n && tp_is_ws(s[i]))
        i++;
    if (i < n)
        tp_junk_at(p, off + i);
}

void tp_junk_at(tp_parser *p, uint64_t off)
{
    if (p->junk == 2 || p->junk == 3 || p->junk == 5)
        return;
    if (p->raw_on) { /* not announced: in the call's raw record */
        if (p->junk == 6) /* (a call announced before: its prose first) */
            tp_junk_flush(p);
        p->junk = 3;
        p->junk_off = off;
        return;
    }
    if (p->cur < 0 || p->drop_on) /* a refused or broken call: its error's record holds them */
        return;
    tp_junk_flush(p);
    p->drop_mark = UINT64_MAX;
    tp_ev_error(p, TP_ERR_BAD_MARKUP, off, -1, (const uint8_t *)DETAIL, sizeof(DETAIL) - 1);
    p->junk = 2;
}

static void note_span(tp_parser *p, uint64_t end)
{
    uint64_t sp[2] = {p->junk_off, end - p->junk_off};
    tp_buf *b = &p->junk_spans;
    if (b->len && tp_buf_append(b, sp, sizeof(sp))) { /* past TP_JUNK_SPANS: the last one runs on */
        uint64_t last[2];
        memcpy(last, b->data + b->len - sizeof(last), sizeof(last));
        last[1] = end - last[0];
        memcpy(b->data + b->len - sizeof(last), last, sizeof(last));
    } else if (!b->len && tp_buf_append(b, sp, sizeof(sp))) {
        p->oom = 1;
    }
}

void tp_junk_tag(tp_parser *p, const uint8_t *after, size_t tlen)
{
    if (p->junk == 5) { /* the end of the call tag's attributes */
        p->junk = 0;
    } else if (p->junk == 2) {
        tp_drop_end_at(p, after, tlen);
        p->junk = 0;
    } else if (p->junk == 3) {
        /* the tag starts where the prose ends (a tag that began in an
         * earlier chunk: its bytes before this chunk) */
        if (p->chunk && after >= p->chunk && after <= p->chunk + p->chunk_n)
            note_span(p, p->base + (uint64_t)(after - p->chunk) - tlen);
        p->junk = 0;
    }
}

/* the stream bytes [from, to) while the call's raw record is on: the
 * record's bytes, then the chunk's */
static int raw_slice(tp_parser *p, uint64_t from, uint64_t to, const uint8_t **a, size_t *an,
                     const uint8_t **b, size_t *bn)
{
    *an = *bn = 0;
    uint64_t rec0 = p->raw_off - p->raw_skip; /* stream offset of raw.data[0] */
    uint64_t rec_end = rec0 + p->raw.len;
    if (from < rec0 || p->raw_over)
        return -1;
    if (from < rec_end) {
        uint64_t e = to < rec_end ? to : rec_end;
        *a = p->raw.data + (from - rec0);
        *an = (size_t)(e - from);
        from = e;
    }
    if (from < to) { /* the rest is in the chunk (the record takes it at its end) */
        if (!p->chunk || from < p->base || to > p->base + p->chunk_n)
            return -1;
        *b = p->chunk + (from - p->base);
        *bn = (size_t)(to - from);
    }
    return 0;
}

void tp_junk_announce(tp_parser *p)
{
    if (p->junk == 3) /* (a span no tag ended: the engine announces at a tag) */
        p->junk = 0;
    tp_buf *sp = &p->junk_spans;
    if (!sp->len || !p->raw_on) {
        tp_buf_clear(sp);
        return;
    }
    /* each span's bytes into the drop record (which holds nothing while no
     * error records), its length kept; reported after the first ArgsDelta */
    int keep = !p->drop_on && p->drop.len == 0;
    for (size_t k = 0; k < sp->len; k += 2 * sizeof(uint64_t)) {
        uint64_t v[2];
        memcpy(v, sp->data + k, sizeof(v));
        const uint8_t *a = NULL, *b = NULL;
        size_t an, bn;
        if (raw_slice(p, v[0], v[0] + v[1], &a, &an, &b, &bn))
            an = bn = 0; /* past max_buffer: reported without its text */
        v[1] = an + bn;
        memcpy(sp->data + k, v, sizeof(v));
        if (keep && (tp_buf_append(&p->drop, a, an) || tp_buf_append(&p->drop, b, bn))) {
            keep = 0; /* over the drop record's bound: reported now, before the CallStart */
            tp_buf_clear(&p->drop);
            for (size_t j = 0; j < k; j += 2 * sizeof(uint64_t)) { /* (the spans before: from the record again) */
                uint64_t w[2];
                memcpy(w, sp->data + j, sizeof(w));
                const uint8_t *c = NULL, *d = NULL;
                size_t cn, dn;
                if (raw_slice(p, w[0], w[0] + w[1], &c, &cn, &d, &dn))
                    cn = dn = 0;
                error_at(p, w[0], c, cn, d, dn);
            }
        }
        if (!keep)
            error_at(p, v[0], a, an, b, bn);
    }
    if (keep)
        p->junk = 6;
    else
        tp_buf_clear(sp);
}

void tp_junk_flush(tp_parser *p)
{
    if (p->junk != 6)
        return;
    p->junk = 0;
    tp_buf *sp = &p->junk_spans;
    size_t at = 0;
    for (size_t k = 0; k < sp->len; k += 2 * sizeof(uint64_t)) {
        uint64_t v[2];
        memcpy(v, sp->data + k, sizeof(v));
        error_at(p, v[0], v[1] ? p->drop.data + at : NULL, (size_t)v[1], NULL, 0);
        at += (size_t)v[1];
    }
    tp_buf_clear(sp);
    tp_buf_clear(&p->drop);
}

void tp_junk_begin(tp_parser *p)
{
    tp_junk_flush(p);
    p->junk = 0;
    tp_buf_clear(&p->junk_spans);
}
