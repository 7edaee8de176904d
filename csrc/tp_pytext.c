/* Python's reading of text, for typed values read as Python reads them
 * (MiniMax-M3's leaves: minimax_m3 row of tp_type_rules.c):
 *  - str.strip() / str.isspace() whitespace (Unicode's, as Python 3.11 has it);
 *  - the text int() / float() parse: non-ASCII whitespace as ' ', a Unicode
 *    decimal digit as its ASCII digit (any other non-ASCII character: no
 *    number), then stripped of ASCII whitespace, with underscores checked
 *    (only between two digits) and removed.
 * Tables from Python 3.11's unicodedata (Unicode 14.0). */
#include <string.h>

#include "tp_types.h"

/* the first code point (the digit zero) of each run of ten decimal digits
 * past ASCII */
static const uint32_t DIGIT0[] = {
    0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66, 0xde6,
    0xe50, 0xed0, 0xf20, 0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90, 0x1b50,
    0x1bb0, 0x1c40, 0x1c50, 0xa620, 0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0, 0xff10,
    0x104a0, 0x10d30, 0x11066, 0x110f0, 0x11136, 0x111d0, 0x112f0, 0x11450, 0x114d0, 0x11650,
    0x116c0, 0x11730, 0x118e0, 0x11950, 0x11c50, 0x11d50, 0x11da0, 0x16a60, 0x16ac0, 0x16b50,
    0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6, 0x1e140, 0x1e2f0, 0x1e950, 0x1fbf0
};

static int digit_of(uint32_t cp)
{
    size_t lo = 0, hi = sizeof(DIGIT0) / sizeof(DIGIT0[0]);
    while (lo < hi) { /* the last run that starts at or before cp */
        size_t mid = (lo + hi) / 2;
        if (DIGIT0[mid] <= cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && cp - DIGIT0[lo - 1] < 10 ? (int)(cp - DIGIT0[lo - 1]) : -1;
}

static int uni_space(uint32_t cp)
{
    return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
           cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

static int ascii_space(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

/* the code point at s[i] (UTF-8 / WTF-8, as the binding writes it) and its length */
static uint32_t decode(const uint8_t *s, size_t n, size_t i, size_t *len)
{
    uint8_t c = s[i];
    size_t l = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (i + l > n)
        l = n - i;
    uint32_t cp = l == 1 ? c : l == 2 ? c & 0x1Fu : l == 3 ? c & 0x0Fu : c & 0x07u;
    for (size_t k = 1; k < l; k++)
        cp = cp << 6 | (s[i + k] & 0x3Fu);
    *len = l;
    return cp;
}

/* length of the whitespace character ending at s[n-1], or 0 */
static size_t space_before(const uint8_t *s, size_t n)
{
    if (ascii_space(s[n - 1]))
        return 1;
    size_t a = n - 1;
    while (a > 0 && n - a < 4 && (s[a] & 0xC0) == 0x80)
        a--;
    size_t len;
    uint32_t cp = decode(s, n, a, &len);
    return a + len == n && uni_space(cp) ? len : 0;
}

size_t tp_py_strip(const uint8_t **s, size_t n)
{
    const uint8_t *p = *s;
    while (n) {
        size_t len;
        uint32_t cp = decode(p, n, 0, &len);
        if (!(cp < 0x80 ? ascii_space((uint8_t)cp) : uni_space(cp)))
            break;
        p += len;
        n -= len;
    }
    for (size_t l; n && (l = space_before(p, n)) != 0;)
        n -= l;
    *s = p;
    return n;
}

int tp_py_number_text(const uint8_t *s, size_t n, tp_buf *out)
{
    size_t start = out->len;
    for (size_t i = 0; i < n;) { /* the text as ASCII */
        size_t len;
        uint32_t cp = decode(s, n, i, &len);
        int d;
        uint8_t c;
        if (cp < 0x7F)
            c = (uint8_t)cp;
        else if (uni_space(cp))
            c = ' ';
        else if ((d = digit_of(cp)) >= 0)
            c = (uint8_t)('0' + d);
        else
            return 0;
        if (tp_buf_push(out, c))
            return -1;
        i += len;
    }
    uint8_t *a = out->data + start, *e = out->data + out->len;
    while (a < e && (*a == ' ' || (*a >= '\t' && *a <= '\r')))
        a++;
    while (e > a && (e[-1] == ' ' || (e[-1] >= '\t' && e[-1] <= '\r')))
        e--;
    uint8_t *o = out->data + start;
    for (uint8_t *q = a; q < e; q++) { /* underscores: only between digits (int() and float() alike) */
        if (*q == '_') {
            if (q == a || q + 1 == e || q[-1] < '0' || q[-1] > '9' || q[1] < '0' || q[1] > '9')
                return 0;
            continue;
        }
        *o++ = *q;
    }
    out->len = (size_t)(o - out->data);
    return 1;
}
