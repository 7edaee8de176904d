/* Bounded growable byte buffer. No Python API. */
#ifndef TP_BUF_H
#define TP_BUF_H

#include <stddef.h>
#include <stdint.h>

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
int tp_buf_append(tp_buf *b, const void *p, size_t n);
int tp_buf_push(tp_buf *b, uint8_t c);

/* Drop capacity beyond `keep` bytes when the buffer is empty, so one huge
 * chunk does not pin memory for the rest of a long stream. */
void tp_buf_shrink(tp_buf *b, size_t keep);

#endif
