/* Bounded growable byte buffer. No Python API. */
#ifndef TP_BUF_H
#define TP_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    uint8_t *data;
    size_t len;
    size_t cap;
    size_t limit; /* hard upper bound on len; 0 means SIZE_MAX */
} tp_buf;

void tp_buf_init(tp_buf *b, size_t limit);
void tp_buf_free(tp_buf *b);
static inline void tp_buf_clear(tp_buf *b) { b->len = 0; }

/* Ensure room for `extra` more bytes. Returns 0, or -1 when the limit would
 * be exceeded or allocation fails (the buffer is left unchanged). */
int tp_buf_reserve(tp_buf *b, size_t extra);
/* Appends p[0:n): 0, or -1 as tp_buf_reserve (nothing is appended). An
 * append that fits the capacity and the limit is a copy, inline; the rest
 * (growing, refusing) is tp_buf_append_grow's. */
int tp_buf_append_grow(tp_buf *b, const void *p, size_t n);
static inline int tp_buf_append(tp_buf *b, const void *p, size_t n)
{
    if (n && b->len <= b->limit && n <= b->limit - b->len && n <= b->cap - b->len) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
        return 0;
    }
    return tp_buf_append_grow(b, p, n);
}
int tp_buf_push(tp_buf *b, uint8_t c);

/* Where an append that `b` refused is reported, so that errors do not
 * depend on chunking and their dropped text is whole characters:
 * tp_buf_limit_at: `n` bytes `s` at stream offset `off` (tp_buf_append): the
 * byte that crosses the limit, moved back to the start of its character in s;
 * tp_buf_char_start: one byte `c` at `off` (tp_buf_push, a byte-wise
 * writer): the start of its character, whose first bytes may be b's last. */
uint64_t tp_buf_limit_at(const tp_buf *b, const uint8_t *s, uint64_t off, size_t n);
uint64_t tp_buf_char_start(const tp_buf *b, uint8_t c, uint64_t off);

/* Drop capacity beyond `keep` bytes when the buffer is empty, so one huge
 * chunk does not pin memory for the rest of a long stream (the check
 * inline: it runs per chunk, the freeing rarely). */
void tp_buf_release(tp_buf *b);
static inline void tp_buf_shrink(tp_buf *b, size_t keep)
{
    if (b->len == 0 && b->cap > keep)
        tp_buf_release(b);
}

#endif
