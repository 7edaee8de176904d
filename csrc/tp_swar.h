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

/* The bytes of x that tp_esc8 looks for, as their high bits (the lowest
 * set bit is exact: its byte is the first one that needs attention). */
static inline uint64_t tp_esc8_mask(uint64_t x)
{
    uint64_t q = x ^ (TP_ONES * '"'), b = x ^ (TP_ONES * '\\');
    return ((x - TP_ONES * 0x20) | (q - TP_ONES) | (b - TP_ONES)) & ~x & TP_HIGHS;
}

#if defined(__SSE2__)
#include <emmintrin.h>
#define TP_HAVE_ESC16 1
/* Copies s[0:16) to d[0:16) and returns the bytes of it that tp_esc8
 * looks for as a bit mask (bit k: byte k). */
static inline unsigned tp_esc16_copy(uint8_t *d, const uint8_t *s)
{
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)s);
    _mm_storeu_si128((__m128i *)(void *)d, x);
    __m128i lo = _mm_set1_epi8(0x1F);
    __m128i ctl = _mm_cmpeq_epi8(_mm_max_epu8(x, lo), lo); /* x <= 0x1F */
    __m128i q = _mm_cmpeq_epi8(x, _mm_set1_epi8('"')), b = _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'));
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(q, b), ctl));
}
#endif

/* Index of the first byte of s[0:n) that is below 0x20, '"' or '\\'
 * (n if none): eight bytes at a time, then byte by byte. */
static inline size_t tp_esc_scan(const uint8_t *s, size_t n)
{
    size_t k = 0;
    while (k + 8 <= n) {
        uint64_t m = tp_esc8_mask(tp_load8(s + k));
        if (m)
            return k + ((size_t)__builtin_ctzll(m) >> 3);
        k += 8;
    }
    while (k < n && s[k] >= 0x20 && s[k] != '"' && s[k] != '\\')
        k++;
    return k;
}

/* Copies n bytes without a call for short runs (overlapping 8- or 4-byte
 * moves inside [0, n) of both buffers). */
static inline void tp_copy(uint8_t *d, const uint8_t *s, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n < 4) {
        for (size_t k = 0; k < n; k++)
            d[k] = s[k];
    } else {
        memcpy(d, s, n);
    }
}

#endif
