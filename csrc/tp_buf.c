#include "tp_buf.h"

#include <stdlib.h>
#include <string.h>

void tp_buf_init(tp_buf *b, size_t limit)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->limit = limit ? limit : SIZE_MAX;
}

void tp_buf_free(tp_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int tp_buf_reserve(tp_buf *b, size_t extra)
{
    if (b->len > b->limit || extra > b->limit - b->len) /* (len past a lowered limit: full) */
        return -1;
    size_t need = b->len + extra;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    if (cap > b->limit)
        cap = b->limit;
    uint8_t *d = realloc(b->data, cap);
    if (!d)
        return -1;
    b->data = d;
    b->cap = cap;
    return 0;
}

int tp_buf_append_grow(tp_buf *b, const void *p, size_t n)
{
    if (n == 0)
        return 0;
    if (tp_buf_reserve(b, n))
        return -1;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

int tp_buf_push(tp_buf *b, uint8_t c)
{
    if (b->len == b->cap && tp_buf_reserve(b, 1))
        return -1;
    if (b->len >= b->limit)
        return -1;
    b->data[b->len++] = c;
    return 0;
}

uint64_t tp_buf_limit_at(const tp_buf *b, const uint8_t *s, uint64_t off, size_t n)
{
    size_t room = b->limit > b->len ? b->limit - b->len : 0;
    size_t k = room < n ? room : n;
    for (int j = 0; j < 3 && k > 0 && k < n && (s[k] & 0xC0) == 0x80; j++)
        k--;
    return off + k;
}

uint64_t tp_buf_char_start(const tp_buf *b, uint8_t c, uint64_t off)
{
    size_t j = 0;
    if ((c & 0xC0) == 0x80) {
        while (j < 3 && j < b->len && (b->data[b->len - 1 - j] & 0xC0) == 0x80)
            j++;
        if (j < 3 && j < b->len && (b->data[b->len - 1 - j] & 0xC0) == 0xC0)
            j++;
        else
            j = 0; /* no lead byte held: the byte itself */
    }
    return off - j;
}

void tp_buf_release(tp_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->cap = 0;
}
