/* Eight bytes at a time (SWAR) for the string scanners (DSML values, the
 * JSON normalizer): a run of bytes that need no attention is skipped a
 * word at a time. */
#ifndef TP_SWAR_H
#define TP_SWAR_H

#include <stdint.h>
#include <string.h>

#define TP_ONES 0x0101010101010101ull
#define TP_HIGHS 0x8080808080808080ull

static inline uint64_t tp_load8(const uint8_t *s)
{
    uint64_t x;
    memcpy(&x, s, 8);
    return x;
}

/* Whether any byte of x is below 0x20, '"' or '\\' (the bytes a JSON
 * string escapes). Exact: a borrow only spreads above a byte that matched. */
static inline int tp_esc8(uint64_t x)
{
    uint64_t q = x ^ (TP_ONES * '"'), b = x ^ (TP_ONES * '\\');
    return (((x - TP_ONES * 0x20) | (q - TP_ONES) | (b - TP_ONES)) & ~x & TP_HIGHS) != 0;
}

#endif
