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
 * call's raw record: the error is reported with the bytes from that
 * record, kept at the announcement (tp_call_announce calls
 * tp_junk_announce) and reported after the call's first ArgsDelta
 * (tp_junk_flush: inside the call's events, where the prose is); a call refused, broken or cut off before it carries them in its
 * own error or text, so nothing more is reported. */
#include "tp_internal.h"

static const char DETAIL[] = "prose inside a call";

void tp_junk_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (p->junk >= 2 || n == 0)
        return;
    size_t i = 0;
    while (i < n && tp_is_ws(s[i]))
        i++;
    if (i == n)
        return;
    off += i;
    if (p->raw_on) { /* not announced: in the call's raw record */
        p->junk = 3;
        p->junk_off = off;
        p->junk_end = off;
        return;
    }
    if (p->cur < 0 || p->drop_on) /* a refused or broken call: its error's record holds them */
        return;
    p->drop_mark = UINT64_MAX;
    tp_ev_error(p, TP_ERR_BAD_MARKUP, off, -1, (const uint8_t *)DETAIL, sizeof(DETAIL) - 1);
    p->junk = 2;
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
            p->junk_end = p->base + (uint64_t)(after - p->chunk) - tlen;
        p->junk = 4;
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
    if (p->junk < 3 || p->junk > 4 || !p->raw_on) {
        p->junk = 0;
        return;
    }
    uint64_t from = p->junk_off, to = p->junk == 4 ? p->junk_end : p->base + (p->chunk ? p->chunk_n : 0);
    p->junk = 0;
    const uint8_t *a = NULL, *b = NULL;
    size_t an, bn;
    if (raw_slice(p, from, to, &a, &an, &b, &bn))
        an = bn = 0; /* past max_buffer: reported without its text */
    /* reported inside the call, after its CallStart and first ArgsDelta
     * (tp_junk_flush), as the prose after the announcement is: the bytes
     * wait in the drop record, which holds nothing while no error records */
    if (!p->drop_on && p->drop.len == 0 && tp_buf_append(&p->drop, a, an) == 0 &&
        tp_buf_append(&p->drop, b, bn) == 0) {
        p->junk = 6;
        return;
    }
    tp_buf_clear(&p->drop);
    tp_ev_error_bytes(p, TP_ERR_BAD_MARKUP, from, (const uint8_t *)DETAIL, sizeof(DETAIL) - 1, a, an, b, bn);
}

void tp_junk_flush(tp_parser *p)
{
    if (p->junk != 6)
        return;
    p->junk = 0;
    tp_ev_error_bytes(p, TP_ERR_BAD_MARKUP, p->junk_off, (const uint8_t *)DETAIL, sizeof(DETAIL) - 1, p->drop.data,
                      p->drop.len, NULL, 0);
    tp_buf_clear(&p->drop);
}
