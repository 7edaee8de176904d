#include "tp_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_swar.h"

#include "tp_errors.h"

enum {
    S_VALUE, S_ARR_FIRST, S_OBJ_FIRST, S_OBJ_KEY, S_COLON, S_AFTER,
    S_STR, S_ESC, S_U, S_HI, S_HI_BS, S_NUM, S_LIT, S_DONE, S_ERR
};
enum { N_MINUS, N_ZERO, N_INT, N_DOT, N_FRAC, N_E, N_ESIGN, N_EXP };

static const char HEX[] = "0123456789abcdef";

void tp_json_init(tp_json *j, int mode, uint32_t max_depth)
{
    j->state = S_VALUE;
    j->mode = (uint8_t)mode;
    j->str_is_key = 0;
    j->num_state = 0;
    j->lit_pos = 0;
    j->u_n = 0;
    j->err = 0;
    j->lit = NULL;
    j->u_acc = 0;
    j->hi = 0;
    j->depth = 0;
    j->max_depth = max_depth == 0 || max_depth > TP_JSON_DEPTH_CAP ? TP_JSON_DEPTH_CAP : max_depth;
    j->err_at = 0;
    j->num_len = 0;
    if (j->spill)
        tp_json_free(j);
}

int tp_json_spill_get(tp_json *j)
{
    if (!j->spill)
        j->spill = malloc(sizeof(tp_json_spill));
    return j->spill ? 0 : -1;
}

int tp_json_nest_set_deep(tp_json *j, uint32_t d, int is_obj)
{
    if (tp_json_spill_get(j))
        return -1;
    uint8_t m = (uint8_t)(1u << (d & 7)), *b = &j->spill->stack[(d - TP_JSON_NEST_INLINE) >> 3];
    *b = is_obj ? (uint8_t)(*b | m) : (uint8_t)(*b & ~m);
    return 0;
}

void tp_json_free(tp_json *j)
{
    free(j->spill);
    j->spill = NULL;
}

int tp_json_done(const tp_json *j) { return j->state == S_DONE; }
int tp_json_failed(const tp_json *j) { return j->state == S_ERR; }
int tp_json_not_started(const tp_json *j) { return j->state == S_VALUE && j->depth == 0; }

/* escape letters json.dumps writes as they are read (\/ is written '/') */
static const uint8_t SAME_ESC[256] = {['"'] = 1, ['\\'] = 1, ['b'] = 1, ['f'] = 1, ['n'] = 1, ['r'] = 1, ['t'] = 1};

static inline int is_ws(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* is_ws for the token loop: one compare for a byte above the space */
static inline int ws_byte(uint8_t c)
{
    return c <= ' ' && ((1ull << c) & ((1ull << ' ') | (1ull << '\t') | (1ull << '\n') | (1ull << '\r')));
}

/* Appends s[0:n) (n > 0): a copy when it fits the buffer's capacity (which
 * never exceeds its limit), the growing path otherwise. */
static inline int put(tp_buf *out, const void *s, size_t n)
{
    if (!out)
        return 0;
    if (out->cap - out->len >= n && n) {
        tp_copy(out->data + out->len, s, n); /* short: no call */
        out->len += n;
        return 0;
    }
    return tp_buf_append(out, s, n);
}

static int put_utf8(tp_buf *out, uint32_t cp)
{
    uint8_t b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (uint8_t)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (uint8_t)(0xC0 | (cp >> 6));
        b[1] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) { /* includes lone surrogates (WTF-8) */
        b[0] = (uint8_t)(0xE0 | (cp >> 12));
        b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (uint8_t)(0xF0 | (cp >> 18));
        b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return put(out, b, n);
}

/* A decoded code point inside a string, written in the output's form. */
static int put_cp(tp_json *j, tp_buf *out, uint32_t cp)
{
    if ((j->mode & TPJ_MODE_RAW_STRING))
        return put_utf8(out, cp);
    char e[6];
    switch (cp) {
    case '"': return put(out, "\\\"", 2);
    case '\\': return put(out, "\\\\", 2);
    case '\b': return put(out, "\\b", 2);
    case '\f': return put(out, "\\f", 2);
    case '\n': return put(out, "\\n", 2);
    case '\r': return put(out, "\\r", 2);
    case '\t': return put(out, "\\t", 2);
    default: break;
    }
    if (cp < 0x20 || (cp >= 0xD800 && cp <= 0xDFFF)) {
        /* control characters as json.dumps writes them; a lone surrogate
         * escaped, so the output stays valid UTF-8 and decodes the same */
        e[0] = '\\';
        e[1] = 'u';
        e[2] = HEX[(cp >> 12) & 0xF];
        e[3] = HEX[(cp >> 8) & 0xF];
        e[4] = HEX[(cp >> 4) & 0xF];
        e[5] = HEX[cp & 0xF];
        return put(out, e, 6);
    }
    return put_utf8(out, cp);
}

/* Digits of |v| at `prec` significant digits, correctly rounded, and the
 * decimal exponent of the first digit. */
static void digits_at(double v, int prec, char *digits, int *exp10)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.*e", prec - 1, v < 0 ? -v : v);
    int nd = 0;
    const char *s = buf;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9')
            digits[nd++] = *s;
    *exp10 = atoi(s + 1);
}

/* Does digits (prec of them) x 10^exp10 read back as |v|? */
static int round_trips(double v, const char *digits, int prec, int exp10)
{
    char buf[48];
    int n = 0;
    buf[n++] = digits[0];
    buf[n++] = '.';
    memcpy(buf + n, digits + 1, (size_t)(prec - 1));
    n += prec - 1;
    snprintf(buf + n, sizeof buf - (size_t)n, "e%d", exp10);
    return strtod(buf, NULL) == (v < 0 ? -v : v);
}

/* digits +/- one unit in the last place, with carry; adjusts exp10 */
static void step_digits(char *d, int prec, int *exp10, int up)
{
    int k = prec - 1;
    if (up) {
        while (k >= 0 && d[k] == '9')
            d[k--] = '0';
        if (k >= 0) {
            d[k]++;
        } else { /* 99..9 + 1 = 100..0 */
            d[0] = '1';
            (*exp10)++;
        }
    } else {
        while (k >= 0 && d[k] == '0')
            d[k--] = '9';
        if (k >= 0)
            d[k]--;
        if (d[0] == '0') { /* 10..0 - 1 = 9..9 one decade lower */
            memmove(d, d + 1, (size_t)(prec - 1));
            d[prec - 1] = '9';
            (*exp10)--;
        }
    }
}

static size_t format_digits(int neg, const char *digits, int nd, int exp10, char *out);

size_t tp_format_double(double v, char *out)
{
    if (isnan(v))
        return (size_t)sprintf(out, "NaN");
    if (isinf(v))
        return (size_t)sprintf(out, v < 0 ? "-Infinity" : "Infinity");
    /* shortest digit string that reads back as v (what repr() prints): at
     * each precision the candidates are the two decimal neighbours of v,
     * the correctly rounded one first */
    char digits[24];
    int nd = 17, exp10 = 0, neg = signbit(v) ? 1 : 0;
    for (int prec = 1; prec <= 17; prec++) {
        char cand[24];
        int e;
        digits_at(v, prec, cand, &e);
        if (round_trips(v, cand, prec, e)) {
            memcpy(digits, cand, (size_t)prec), nd = prec, exp10 = e;
            break;
        }
        char alt[24];
        int ea = e;
        memcpy(alt, cand, (size_t)prec);
        step_digits(alt, prec, &ea, 1);
        if (round_trips(v, alt, prec, ea)) {
            memcpy(digits, alt, (size_t)prec), nd = prec, exp10 = ea;
            break;
        }
        ea = e;
        memcpy(alt, cand, (size_t)prec);
        step_digits(alt, prec, &ea, 0);
        if (round_trips(v, alt, prec, ea)) {
            memcpy(digits, alt, (size_t)prec), nd = prec, exp10 = ea;
            break;
        }
        if (prec == 17) /* 17 correctly rounded digits always round-trip */
            memcpy(digits, cand, 17), exp10 = e;
    }
    return format_digits(neg, digits, nd, exp10, out);
}

/* repr() of the value (-1)^neg x d1.d2d3.. x 10^exp10, given its shortest
 * round-trip digits d[0:nd) (d[0] != '0'): fixed notation for exponents
 * from -4 to 15, else d.ddde+XX. Returns the length written. */
static size_t format_digits(int neg, const char *digits, int nd, int exp10, char *out)
{
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    int decpt = exp10 + 1; /* value = 0.d1d2.. * 10^decpt */
    char *o = out;
    if (neg)
        *o++ = '-';
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            *o++ = '0';
            *o++ = '.';
            for (int k = 0; k < -decpt; k++)
                *o++ = '0';
            memcpy(o, digits, (size_t)nd);
            o += nd;
        } else if (decpt >= nd) {
            memcpy(o, digits, (size_t)nd);
            o += nd;
            for (int k = nd; k < decpt; k++)
                *o++ = '0';
            *o++ = '.';
            *o++ = '0';
        } else {
            memcpy(o, digits, (size_t)decpt);
            o += decpt;
            *o++ = '.';
            memcpy(o, digits + decpt, (size_t)(nd - decpt));
            o += nd - decpt;
        }
    } else {
        *o++ = digits[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, (size_t)(nd - 1));
            o += nd - 1;
        }
        o += sprintf(o, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    }
    *o = 0;
    return (size_t)(o - out);
}

/* repr(float(s)) of a float token s[0:n) (a JSON one, or a Python float
 * literal as fmt_pythonic.c checks it: tp_json.h) without strtod when it
 * has at most 15 significant digits and a normal-range exponent: such a
 * decimal is the shortest string that reads back as its double (15 digits
 * always survive decimal -> double -> decimal, so no shorter string can
 * name the same double), so repr() prints its own digits. Returns the
 * length written to f, or 0 to take the general path. */
size_t tp_short_float(const char *s, size_t n, char *f)
{
    char d[16];
    int nd = 0, neg = 0, lead = 1, decpt = 0, exp = 0;
    size_t k = 0;
    if (s[0] == '-')
        neg = 1, k = 1;
    for (; k < n && s[k] >= '0' && s[k] <= '9'; k++) { /* integer part */
        if (lead && s[k] == '0')
            continue;
        lead = 0;
        if (nd == 15)
            return 0;
        d[nd++] = s[k];
        decpt++;
    }
    if (k < n && s[k] == '.')
        for (k++; k < n && s[k] >= '0' && s[k] <= '9'; k++) {
            if (lead && s[k] == '0') {
                decpt--;
                continue;
            }
            lead = 0;
            if (nd == 15)
                return 0;
            d[nd++] = s[k];
        }
    if (k < n) { /* e / E */
        int esign = 1;
        k++;
        if (s[k] == '+' || s[k] == '-')
            esign = s[k++] == '-' ? -1 : 1;
        if (n - k > 4)
            return 0;
        for (; k < n; k++)
            exp = exp * 10 + (s[k] - '0');
        exp *= esign;
    }
    while (nd > 0 && d[nd - 1] == '0')
        nd--;
    if (nd == 0) { /* zero, signed as written */
        memcpy(f, neg ? "-0.0" : "0.0", neg ? 4 : 3);
        return neg ? 4u : 3u;
    }
    decpt += exp;
    if (decpt <= -300 || decpt >= 300)
        return 0;
    return format_digits(neg, d, nd, decpt - 1, f);
}

/* The number token s[0:n) (valid JSON grammar) in json.dumps form. `z`:
 * the token NUL-terminated, needed when it is 72 bytes or longer. */
static int put_number(tp_buf *out, const char *s, size_t n, const char *z)
{
    int is_float = 0;
    for (size_t k = 0; k < n; k++) {
        char c = s[k];
        if (c == '.' || c == 'e' || c == 'E')
            is_float = 1;
    }
    if (is_float) {
        char f[40];
        size_t fl = tp_short_float(s, n, f);
        if (fl)
            return put(out, f, fl);
        char local[72];
        if (n < sizeof local) {
            memcpy(local, s, n);
            local[n] = 0;
            z = local;
        }
        double v = strtod(z, NULL);
        if (!isfinite(v)) /* past a double: the digits as written (RFC 8259 has no range) */
            return put(out, s, n);
        fl = tp_format_double(v, f);
        return put(out, f, fl);
    }
    if (n == 2 && s[0] == '-' && s[1] == '0')
        return put(out, "0", 1);
    return put(out, s, n);
}

/* The number token so far: inline while it is shorter than the inline
 * room, else in the spill (it moved there whole when it outgrew it). */
static inline char *num_buf(tp_json *j)
{
    return j->num_len < TP_JSON_NUM_INLINE ? j->num : j->spill->num;
}

/* Appends c to the number token: 0, or -1 when the spill it moves to
 * cannot be allocated. */
static int num_push(tp_json *j, uint8_t c)
{
    uint16_t l = j->num_len;
    if (l + 1 < TP_JSON_NUM_INLINE) {
        j->num[l] = (char)c;
    } else {
        if (tp_json_spill_get(j))
            return -1;
        if (l + 1 == TP_JSON_NUM_INLINE)
            memcpy(j->spill->num, j->num, l);
        j->spill->num[l] = (char)c;
    }
    j->num_len = (uint16_t)(l + 1);
    return 0;
}

static int emit_number(tp_json *j, tp_buf *out)
{
    char *s = num_buf(j);
    s[j->num_len] = 0;
    return put_number(out, s, j->num_len, s);
}

static inline void value_done(tp_json *j)
{
    j->state = j->depth == 0 ? S_DONE : S_AFTER;
}

static inline int top_is_obj(const tp_json *j)
{
    return tp_json_nest_obj(j, j->depth - 1);
}

static size_t fail(tp_json *j, int err, size_t at)
{
    j->err_in_str = j->state >= S_STR && j->state <= S_HI_BS;
    j->state = S_ERR;
    j->err = (uint8_t)err;
    j->err_at = at;
    return at;
}

static inline int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* handles the 4th hex digit / surrogate logic. Returns 0 or -1 on output failure */
static int finish_u(tp_json *j, tp_buf *out)
{
    uint32_t cp = j->u_acc;
    if (j->hi) {
        uint32_t hi = j->hi;
        j->hi = 0;
        if (cp >= 0xDC00 && cp <= 0xDFFF) {
            j->state = S_STR;
            return put_cp(j, out, 0x10000 + ((hi - 0xD800) << 10) + (cp - 0xDC00));
        }
        if (put_cp(j, out, hi)) /* lone high surrogate */
            return -1;
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        j->hi = cp;
        j->state = S_HI;
        return 0;
    }
    j->state = S_STR;
    return put_cp(j, out, cp);
}

static int end_string(tp_json *j, tp_buf *out)
{
    if ((j->mode & TPJ_MODE_RAW_STRING)) {
        j->state = S_DONE;
        return 0;
    }
    if (put(out, "\"", 1))
        return -1;
    if (j->str_is_key) {
        j->state = S_COLON;
        return 0;
    }
    value_done(j);
    return 0;
}

#define OUT(expr) do { if (expr) return fail(j, TP_ERR_BUFFER_LIMIT, i); } while (0)

static inline __attribute__((always_inline)) size_t open_container(tp_json *j, int is_obj, size_t i, tp_buf *out)
{
    if (j->depth >= j->max_depth)
        return fail(j, TP_ERR_JSON_DEPTH, i);
    if (tp_json_nest_set(j, j->depth, is_obj))
        return fail(j, TP_ERR_NO_MEMORY, i);
    j->depth++;
    j->state = is_obj ? S_OBJ_FIRST : S_ARR_FIRST;
    OUT(put(out, is_obj ? "{" : "[", 1));
    return SIZE_MAX;
}

static size_t close_container(tp_json *j, int is_obj, size_t i, tp_buf *out)
{
    if (j->depth == 0 || top_is_obj(j) != is_obj)
        return fail(j, TP_ERR_JSON_SYNTAX, i);
    j->depth--;
    OUT(put(out, is_obj ? "}" : "]", 1));
    value_done(j);
    return SIZE_MAX;
}

/* starts a value at byte c (already known not to be whitespace) */
static size_t start_value(tp_json *j, uint8_t c, size_t i, tp_buf *out)
{
    if ((j->mode & TPJ_MODE_RAW_STRING) && c != '"')
        return fail(j, TP_ERR_BAD_NAME, i);
    switch (c) {
    case '"':
        j->str_is_key = 0;
        j->state = S_STR;
        if (!(j->mode & TPJ_MODE_RAW_STRING))
            OUT(put(out, "\"", 1));
        return SIZE_MAX;
    case '{': return open_container(j, 1, i, out);
    case '[': return open_container(j, 0, i, out);
    case 't': j->lit = "true"; break;
    case 'f': j->lit = "false"; break;
    case 'n': j->lit = "null"; break;
    case '-':
        j->state = S_NUM;
        j->num_state = N_MINUS;
        j->num[0] = '-';
        j->num_len = 1;
        return SIZE_MAX;
    default:
        if (c >= '0' && c <= '9') {
            j->state = S_NUM;
            j->num_state = c == '0' ? N_ZERO : N_INT;
            j->num[0] = (char)c;
            j->num_len = 1;
            return SIZE_MAX;
        }
        return fail(j, TP_ERR_JSON_SYNTAX, i);
    }
    j->state = S_LIT;
    j->lit_pos = 1;
    return SIZE_MAX;
}

/* Byte classes for the token fast paths: bytes that may continue a number
 * token, and whitespace. */
enum { C_NUM = 1, C_WS = 2, C_LIT = 4 };
static const uint8_t CLS[256] = {
    ['0'] = C_NUM, ['1'] = C_NUM, ['2'] = C_NUM, ['3'] = C_NUM, ['4'] = C_NUM, ['5'] = C_NUM,
    ['6'] = C_NUM, ['7'] = C_NUM, ['8'] = C_NUM, ['9'] = C_NUM, ['.'] = C_NUM, ['e'] = C_NUM,
    ['E'] = C_NUM, ['+'] = C_NUM, ['-'] = C_NUM,
    [' '] = C_WS, ['\t'] = C_WS, ['\n'] = C_WS, ['\r'] = C_WS,
    ['t'] = C_LIT, ['f'] = C_LIT, ['n'] = C_LIT,
};

int tp_json_is_number(const uint8_t *s, size_t n)
{
    size_t k = n && s[0] == '-';
    if (k < n && s[k] == '0')
        k++;
    else if (k < n && s[k] >= '1' && s[k] <= '9')
        while (k < n && s[k] >= '0' && s[k] <= '9')
            k++;
    else
        return 0;
    if (k < n && s[k] == '.') {
        size_t d = ++k;
        while (k < n && s[k] >= '0' && s[k] <= '9')
            k++;
        if (k == d)
            return 0;
    }
    if (k < n && (s[k] == 'e' || s[k] == 'E')) {
        k++;
        if (k < n && (s[k] == '+' || s[k] == '-'))
            k++;
        size_t d = k;
        while (k < n && s[k] >= '0' && s[k] <= '9')
            k++;
        if (k == d)
            return 0;
    }
    return k == n;
}

/* Fast path for a whole scalar token that lies in this chunk (a number
 * followed by its terminator, true/false/null): written in one step, with
 * the state, output and error offsets the byte-by-byte path gives (a
 * number is written at its terminator, a literal after its last byte).
 * Returns the index after the token, or i when the token is left to the
 * byte-by-byte path (cut by the chunk, long, malformed, a string or a
 * container). On an output error the state is S_ERR. */
static __attribute__((noinline)) size_t fast_number(tp_json *j, const uint8_t *p, size_t i, size_t n, tp_buf *out)
{
    size_t e;
    for (e = i + 1; e < n && (CLS[p[e]] & C_NUM); e++)
        ;
    if (e == n || e - i > 64 || !tp_json_is_number(p + i, e - i))
        return i;
    if (put_number(out, (const char *)p + i, e - i, NULL)) {
        fail(j, TP_ERR_BUFFER_LIMIT, e);
        return e;
    }
    value_done(j);
    return e;
}

static inline __attribute__((always_inline)) size_t fast_scalar(tp_json *j, const uint8_t *p, size_t i, size_t n, tp_buf *out)
{
    uint8_t c = p[i];
    size_t e;
    if (CLS[c] & C_NUM) {
        /* an integer (the common case): -?(0|[1-9][0-9]*) ended by a byte
         * that cannot continue a number token, checked as it is scanned */
        e = i + (c == '-');
        if (e < n && p[e] >= '1' && p[e] <= '9') {
            for (e++; e < n && p[e] >= '0' && p[e] <= '9'; e++)
                ;
        } else if (e < n && p[e] == '0') {
            e++;
        } else {
            e = i;
        }
        if (e > i && e < n && !(CLS[p[e]] & C_NUM) && e - i <= 64) {
            int neg0 = e - i == 2 && c == '-' && p[i + 1] == '0';
            if (neg0 ? put(out, "0", 1) : put(out, p + i, e - i)) {
                fail(j, TP_ERR_BUFFER_LIMIT, e);
                return e;
            }
            value_done(j);
            return e;
        }
        return fast_number(j, p, i, n, out);
    } else {
        const char *w = c == 't' ? "true" : c == 'f' ? "false" : c == 'n' ? "null" : NULL;
        if (!w)
            return i;
        size_t l = c == 'f' ? 5 : 4;
        uint32_t a, b;
        if (n - i < l)
            return i;
        memcpy(&a, p + i + l - 4, 4);
        memcpy(&b, w + l - 4, 4);
        if (a != b) /* the last four bytes (the first is c) */
            return i;
        e = i + l;
        if (put(out, w, l)) {
            fail(j, TP_ERR_BUFFER_LIMIT, e);
            return e;
        }
    }
    value_done(j);
    return e;
}

/* Fast path for a string: its run of plain bytes and of the escapes
 * json.dumps writes as they are read (\" \\ \b \f \n \r \t) is its own
 * output, quotes included. A whole string in this chunk is taken in one
 * step (the state is then the caller's to set); a string the chunk cuts, or
 * one with another escape or a control character, is taken up to there and
 * left in S_STR, as the byte-by-byte path leaves it. Taken only when the
 * bytes fit the buffer's capacity (which never exceeds its limit; otherwise
 * the byte-by-byte path places a limit error exactly). Returns the index
 * after what was taken, or i when not taken. */
static size_t fast_string(tp_json *j, const uint8_t *p, size_t i, size_t n, tp_buf *out, int key)
{
    size_t k = i + 1;
    if (out && out->cap - out->len >= 8) {
        /* the common case, a string without escapes: copied eight bytes at
         * a time as it is scanned, from its opening quote, while the words
         * fit the buffer's capacity (bytes past the string are scratch:
         * the length is not moved over them). Anything else goes on below
         * from the first word not looked at. */
        size_t room = out->cap - out->len, q = i;
        uint8_t *d = out->data + out->len;
        uint64_t skip = 0x80; /* the opening quote */
        while (q + 8 <= n && q - i + 8 <= room) {
            uint64_t x = tp_load8(p + q);
            memcpy(d + (q - i), &x, 8);
            uint64_t m = tp_esc8_mask(x) & ~skip;
            skip = 0;
            if (m) {
                size_t h = q + ((size_t)__builtin_ctzll(m) >> 3);
                if (p[h] == '"') { /* the closing quote, already copied */
                    out->len += h + 1 - i;
                    return h + 1;
                }
                break;
            }
            q += 8;
        }
        if (q > k)
            k = q;
    }
    for (;;) {
        k += tp_esc_scan(p + k, n - k);
        if (k + 1 < n && p[k] == '\\' && SAME_ESC[p[k + 1]]) {
            k += 2;
            continue;
        }
        break;
    }
    int whole = k < n && p[k] == '"';
    size_t l = k + (size_t)whole - i;
    if (out) {
        if (out->cap - out->len < l)
            return i;
        tp_copy(out->data + out->len, p + i, l);
        out->len += l;
    }
    if (!whole) {
        j->str_is_key = (uint8_t)key;
        j->state = S_STR;
        return k;
    }
    return k + 1;
}

/* The token loop for a chunk with an output buffer (not RAW_STRING mode):
 * from a state between tokens (S_VALUE .. S_AFTER) it takes the tokens the
 * byte-by-byte path would take without an error, writing what that path
 * writes straight into out's spare capacity (which never exceeds its
 * limit): strings of plain bytes and of the escapes written as they are
 * read (a string the chunk cuts, or one that reaches another escape or a
 * control character, is taken up to there and left in S_STR), keys with
 * their colon, whole numbers and literals, brackets and commas at the
 * first 128 levels. It stops at the chunk's end, at a finished value, or
 * at a token it leaves to the byte-by-byte path (an error, a token the
 * chunk cuts, deeper nesting, no room), then *stuck is that token's index.
 * The state is set as that path would leave it. Returns the index reached. */
static size_t fast_run(tp_json *j, const uint8_t *p, size_t i, size_t n, tp_buf *out, size_t *stuck)
{
    if (out->cap - out->len < 128 && tp_buf_reserve(out, 256)) {
        *stuck = i;
        return i;
    }
    uint8_t *o = out->data + out->len, *oe = out->data + out->cap;
    uint8_t c;
    uint8_t st; /* the state to leave at the token being read */
    int key;
    size_t q, h;
    uint32_t d, dep = j->depth; /* (j->depth at the exits: stores through o may alias j) */
    int top = dep && tp_json_nest_obj(j, dep - 1); /* the innermost container is an object */

#define FR_EXIT(s) do { j->state = (s); j->depth = dep; out->len = (size_t)(o - out->data); return i; } while (0)
#define FR_STUCK(s) do { *stuck = i; FR_EXIT(s); } while (0)
#define FR_SKIP_WS(s) do { \
        if (i == n) FR_EXIT(s); \
        c = p[i]; \
        while (ws_byte(c)) { if (++i == n) FR_EXIT(s); c = p[i]; } \
    } while (0)
    /* room for a token's fixed writes (a string checks its own) */
#define FR_ROOM(s) do { \
        if ((size_t)(oe - o) < 72) { \
            out->len = (size_t)(o - out->data); \
            if (tp_buf_reserve(out, 256)) FR_STUCK(s); \
            o = out->data + out->len, oe = out->data + out->cap; \
        } \
    } while (0)

    switch (j->state) {
    case S_VALUE: st = S_VALUE; goto value;
    case S_ARR_FIRST: goto arr_first;
    case S_OBJ_FIRST: goto obj_first;
    case S_OBJ_KEY: st = S_OBJ_KEY; goto obj_key;
    case S_COLON: goto colon;
    default: goto after;
    }

    /* (at arr_first and obj_first the room is >= 71: they follow the
     * bracket's write or the entry's check) */
arr_first:
    FR_SKIP_WS(S_ARR_FIRST);
    if (c == ']') {
        *o++ = ']';
        goto closed;
    }
    st = S_ARR_FIRST;
    goto value_c;

obj_first:
    FR_SKIP_WS(S_OBJ_FIRST);
    if (c == '}') {
        *o++ = '}';
        goto closed;
    }
    st = S_OBJ_FIRST;
    goto key_c;

obj_key:
    FR_SKIP_WS(st);
key_c:
    if (c != '"')
        FR_STUCK(st);
    FR_ROOM(st);
    key = 1;
    goto string;

colon:
    FR_SKIP_WS(S_COLON);
    if (c != ':')
        FR_STUCK(S_COLON);
    FR_ROOM(S_COLON);
    o[0] = ':', o[1] = ' ', o += 2;
    if (++i < n && p[i] == ' ') /* (the usual separator) */
        i++;
    st = S_VALUE;

value:
    FR_SKIP_WS(st);
value_c:
    FR_ROOM(st);
    if (c == '"') {
        key = 0;
        goto string;
    }
    if (c == '{' || c == '[') {
        d = dep;
        if (d >= j->max_depth || d >= TP_JSON_NEST_INLINE)
            FR_STUCK(st); /* (the depth error, or a level in the spill) */
        uint8_t m = (uint8_t)(1u << (d & 7));
        j->stack[d >> 3] = c == '{' ? (uint8_t)(j->stack[d >> 3] | m) : (uint8_t)(j->stack[d >> 3] & ~m);
        dep = d + 1;
        top = c == '{';
        *o++ = c;
        i++;
        if (c == '{')
            goto obj_first;
        goto arr_first;
    }
    if (CLS[c] & C_NUM) {
        /* an integer -?(0|[1-9][0-9]*) ended by a byte that cannot
         * continue a number token; anything else is fast_number's */
        size_t e = i + (c == '-');
        if (e < n && p[e] >= '1' && p[e] <= '9') {
            for (e++; e < n && p[e] >= '0' && p[e] <= '9'; e++)
                ;
        } else if (e < n && p[e] == '0') {
            e++;
        } else {
            FR_STUCK(st);
        }
        if (e < n && !(CLS[p[e]] & C_NUM) && e - i <= 64) {
            if (e - i == 2 && c == '-' && p[i + 1] == '0') {
                *o++ = '0';
            } else if (e - i <= 8 && i + 8 <= n) { /* (a word: room >= 72) */
                uint64_t x = tp_load8(p + i);
                memcpy(o, &x, 8);
                o += e - i;
            } else {
                tp_copy(o, p + i, e - i);
                o += e - i;
            }
            i = e;
            goto value_done;
        }
        if (e < n && p[e] == '.') {
            /* a decimal I.F that repr() writes as it is: at most 15
             * significant digits (so they are repr()'s shortest digits),
             * F without trailing zeros (but "0"), and for I = 0 at most
             * three leading zeros in F (repr() goes to e-notation below
             * 1e-4) */
            size_t f = e + 1, g;
            for (g = f; g < n && p[g] >= '0' && p[g] <= '9'; g++)
                ;
            size_t zi = e - i - (c == '-'); /* digits of I */
            int zero = zi == 1 && p[e - 1] == '0';
            size_t lz = 0;
            if (zero)
                while (f + lz < g && p[f + lz] == '0')
                    lz++;
            if (g < n && g > f && !(CLS[p[g]] & C_NUM) && (p[g - 1] != '0' || g == f + 1) &&
                (zero ? (lz <= 3 || lz == g - f) && g - f - lz <= 15 : zi + (g - f) <= 15)) {
                tp_copy(o, p + i, g - i);
                o += g - i;
                i = g;
                goto value_done;
            }
        }
        out->len = (size_t)(o - out->data);
        j->depth = dep;
        size_t r = fast_number(j, p, i, n, out);
        if (r == i)
            FR_STUCK(st);
        i = r;
        if (j->state != S_AFTER) /* done, or an output error */
            return i;
        o = out->data + out->len, oe = out->data + out->cap;
        goto after;
    }
    if (CLS[c] & C_LIT) {
        const char *w = c == 't' ? "true" : c == 'f' ? "false" : "null";
        size_t l = c == 'f' ? 5 : 4;
        uint32_t a, b;
        if (n - i < l)
            FR_STUCK(st);
        memcpy(&a, p + i + l - 4, 4);
        memcpy(&b, w + l - 4, 4);
        if (a != b) /* the last four bytes (the first is c) */
            FR_STUCK(st);
        memcpy(o, w, 4);
        o[l - 1] = (uint8_t)w[l - 1];
        o += l;
        i += l;
        goto value_done;
    }
    FR_STUCK(st);

value_done:
    if (dep == 0)
        FR_EXIT(S_DONE);
after:
    FR_SKIP_WS(S_AFTER);
    if (c == ',') {
        if (oe - o < 2)
            FR_STUCK(S_AFTER);
        o[0] = ',', o[1] = ' ', o += 2;
        if (++i < n && p[i] == ' ') /* (the usual separator) */
            i++;
        st = top ? S_OBJ_KEY : S_VALUE;
        if (top)
            goto obj_key;
        goto value;
    }
    if ((c == '}' || c == ']') && top == (c == '}') && o != oe) {
        *o++ = c;
        goto closed;
    }
    FR_STUCK(S_AFTER);

closed: /* the bracket p[i] written: the level ends */
    i++;
    dep--;
    top = dep && tp_json_nest_obj(j, dep - 1);
    goto value_done;

string:
    /* p[i] is the opening quote, room >= 72: copied eight bytes at a time
     * as it is scanned (bytes past the string are scratch: o does not move
     * over them), an escape written as read taken in passing; q: the
     * first byte not yet looked at */
    *o = '"';
    q = i + 1;
    for (;;) {
        size_t room = (size_t)(oe - o), lim = n - i < room ? n : i + room;
#ifdef TP_HAVE_ESC16
        while (q + 16 <= lim) {
            unsigned m = tp_esc16_copy(o + (q - i), p + q);
            if (m) {
                h = q + (size_t)__builtin_ctz(m);
                goto hit;
            }
            q += 16;
        }
#endif
        while (q + 8 <= lim) {
            uint64_t x = tp_load8(p + q);
            memcpy(o + (q - i), &x, 8);
            uint64_t m = tp_esc8_mask(x);
            if (m) {
                h = q + ((size_t)__builtin_ctzll(m) >> 3);
                goto hit;
            }
            q += 8;
        }
        /* the chunk's last bytes, one at a time when they all fit */
        if (n - i > room) {
            h = q;
            goto partial;
        }
        for (h = q; h < n; h++) {
            uint8_t b = p[h];
            if (b < 0x20 || b == '"' || b == '\\')
                break;
            o[h - i] = b;
        }
        if (h == n)
            goto partial;
    hit:
        /* p[h] is a quote, a backslash or a control character */
        if (p[h] == '"') {
            o[h - i] = '"';
            o += h + 1 - i;
            i = h + 1;
            if (key)
                goto colon;
            goto value_done;
        }
        if (p[h] != '\\' || h + 1 >= n || !SAME_ESC[p[h + 1]] || h + 2 - i > room)
            goto partial;
        o[h - i] = '\\';
        o[h + 1 - i] = p[h + 1];
        q = h + 2;
    }
partial:
    /* p[i:h) taken (written as it is); the string goes on at h */
    o += h - i;
    i = h;
    j->str_is_key = (uint8_t)key;
    FR_EXIT(S_STR);
#undef FR_EXIT
#undef FR_STUCK
#undef FR_SKIP_WS
#undef FR_ROOM
}

size_t tp_json_feed(tp_json *j, const uint8_t *p, size_t n, tp_buf *out)
{
    size_t i = 0, r;
    int fast = !(j->mode & TPJ_MODE_RAW_STRING);
    int fast_out = fast && out;
    size_t stuck = SIZE_MAX;
    while (i < n) {
        if (fast_out && j->state <= S_AFTER && i != stuck) {
            i = fast_run(j, p, i, n, out, &stuck);
            if (j->state == S_DONE || j->state == S_ERR)
                return i;
            continue;
        }
        uint8_t c = p[i];
        switch (j->state) {
        case S_DONE:
        case S_ERR:
            return i;
        case S_VALUE:
        value: /* (entered with i < n, c = p[i]) */
            while (CLS[c] & C_WS) {
                if (++i == n)
                    return i;
                c = p[i];
            }
            if (fast && (r = c == '"' ? fast_string(j, p, i, n, out, 0) : (CLS[c] & (C_NUM | C_LIT)) ? fast_scalar(j, p, i, n, out) : i) != i) {
                if (c == '"' && j->state != S_STR)
                    value_done(j);
                i = r;
                if (j->state == S_DONE || j->state == S_ERR)
                    return i;
                if (j->state == S_AFTER && i < n) { /* straight on, as the next pass would */
                    c = p[i];
                    goto after;
                }
                break;
            }
            if ((r = start_value(j, c, i, out)) != SIZE_MAX) return r;
            i++;
            break;
        case S_ARR_FIRST:
            while (CLS[c] & C_WS) {
                if (++i == n)
                    return i;
                c = p[i];
            }
            if (c == ']') {
                r = close_container(j, 0, i, out);
            } else {
                if (fast && (r = c == '"' ? fast_string(j, p, i, n, out, 0) : (CLS[c] & (C_NUM | C_LIT)) ? fast_scalar(j, p, i, n, out) : i) != i) {
                    if (c == '"' && j->state != S_STR)
                        value_done(j);
                    i = r;
                    if (j->state == S_ERR)
                        return i;
                    break;
                }
                r = start_value(j, c, i, out);
            }
            if (r != SIZE_MAX) return r;
            i++;
            break;
        case S_OBJ_FIRST:
        case S_OBJ_KEY:
        obj_key: /* (entered with i < n, c = p[i]) */
            while (CLS[c] & C_WS) {
                if (++i == n)
                    return i;
                c = p[i];
            }
            if (c == '"' && fast && (r = fast_string(j, p, i, n, out, 1)) != i) {
                /* the key, then its colon when it is in this chunk */
                i = r;
                if (j->state == S_STR)
                    break; /* the key goes on */
                j->state = S_COLON;
                while (i < n && (CLS[p[i]] & C_WS))
                    i++;
                if (i < n && p[i] == ':') {
                    OUT(put(out, ": ", 2));
                    j->state = S_VALUE;
                    if (++i < n) {
                        c = p[i];
                        goto value;
                    }
                }
                break;
            }
            if (c == '"') {
                j->str_is_key = 1;
                j->state = S_STR;
                OUT(put(out, "\"", 1));
            } else if (c == '}' && j->state == S_OBJ_FIRST) {
                if ((r = close_container(j, 1, i, out)) != SIZE_MAX) return r;
            } else {
                return fail(j, TP_ERR_JSON_SYNTAX, i);
            }
            i++;
            break;
        case S_COLON:
            while (CLS[c] & C_WS) {
                if (++i == n)
                    return i;
                c = p[i];
            }
            if (c != ':') return fail(j, TP_ERR_JSON_SYNTAX, i);
            OUT(put(out, ": ", 2));
            j->state = S_VALUE;
            i++;
            break;
        case S_AFTER:
        after: /* (entered with i < n, c = p[i]) */
            while (CLS[c] & C_WS) {
                if (++i == n)
                    return i;
                c = p[i];
            }
            if (c == ',') {
                OUT(put(out, ", ", 2));
                if (++i == n) {
                    j->state = top_is_obj(j) ? S_OBJ_KEY : S_VALUE;
                    return i;
                }
                c = p[i];
                if (top_is_obj(j)) {
                    j->state = S_OBJ_KEY;
                    goto obj_key;
                }
                j->state = S_VALUE;
                goto value;
            } else if (c == '}' || c == ']') {
                if ((r = close_container(j, c == '}', i, out)) != SIZE_MAX) return r;
            } else {
                return fail(j, TP_ERR_JSON_SYNTAX, i);
            }
            i++;
            break;
        case S_STR: {
            /* a run of string content, written as is; outside RAW_STRING
             * mode it takes in the escapes written as json.dumps writes
             * them (\" \\ \b \f \n \r \t), which stay as they are */
            size_t k = i;
            int pairs = !(j->mode & TPJ_MODE_RAW_STRING);
            for (;;) {
                k += tp_esc_scan(p + k, n - k);
                if (pairs && k + 1 < n && p[k] == '\\' && SAME_ESC[p[k + 1]]) {
                    k += 2;
                    continue;
                }
                break;
            }
            if (k > i) {
                if (put(out, p + i, k - i)) {
                    /* the error is at the first byte that does not fit, as
                     * if the run had come byte by byte (chunking must not
                     * move error offsets): an escape's two bytes are
                     * written at its letter */
                    size_t room = out->limit - out->len, q = i, used = 0, seg = i;
                    while (q < k) {
                        size_t w = p[q] == '\\' ? 2 : 1;
                        if (used + w > room)
                            break;
                        used += w;
                        q += w;
                        if (w == 2 || (q < k && p[q] == '\\'))
                            seg = q; /* a whole escape, or a run before one */
                    }
                    if (q >= k) /* out of memory, not the limit */
                        q = seg = i;
                    /* at the start of the character that crosses the
                     * limit (a feed holds whole characters), so the
                     * error's dropped text is whole characters */
                    size_t b = q;
                    while (b > seg && (p[b] & 0xC0) == 0x80)
                        b--;
                    if ((p[b] & 0xC0) != 0x80) /* (its first byte is in this feed) */
                        q = b;
                    /* what fits of the runs and escapes before it is
                     * written, each whole, as when they came one by one */
                    put(out, p + i, seg - i);
                    return fail(j, TP_ERR_BUFFER_LIMIT, p[q] == '\\' ? q + 1 : q);
                }
                i = k;
                if (i == n) break;
            }
            c = p[i];
            if (c == '"') {
                OUT(end_string(j, out));
                i++;
                if (j->state == S_DONE) return i;
            } else if (c == '\\') {
                j->state = S_ESC;
                i++;
            } else if (j->mode & TPJ_STRICT_CTRL) {
                return fail(j, TP_ERR_JSON_SYNTAX, i); /* raw control char */
            } else {
                /* a raw control character: read as json.loads(strict=False)
                 * reads it, written escaped as json.dumps writes it */
                OUT(put_cp(j, out, c));
                i++;
            }
            break;
        }
        case S_HI:
            if (c == '\\') {
                j->state = S_HI_BS;
                i++;
                break;
            }
            OUT(put_cp(j, out, j->hi)); /* lone high surrogate */
            j->hi = 0;
            j->state = S_STR;
            break; /* reprocess c as string content */
        case S_HI_BS:
            if (c == 'u') {
                j->state = S_U;
                j->u_n = 0;
                j->u_acc = 0;
                i++;
                break;
            }
            OUT(put_cp(j, out, j->hi));
            j->hi = 0;
            j->state = S_ESC;
            break; /* reprocess c as the escape letter */
        case S_ESC: {
            uint32_t cp;
            switch (c) {
            case '"': cp = '"'; break;
            case '\\': cp = '\\'; break;
            case '/': cp = '/'; break;
            case 'b': cp = '\b'; break;
            case 'f': cp = '\f'; break;
            case 'n': cp = '\n'; break;
            case 'r': cp = '\r'; break;
            case 't': cp = '\t'; break;
            case 'u':
                j->state = S_U;
                j->u_n = 0;
                j->u_acc = 0;
                i++;
                continue;
            default:
                return fail(j, TP_ERR_JSON_SYNTAX, i);
            }
            OUT(put_cp(j, out, cp));
            j->state = S_STR;
            i++;
            break;
        }
        case S_U: {
            int h = hexval(c);
            if (h < 0) return fail(j, TP_ERR_JSON_SYNTAX, i);
            j->u_acc = (j->u_acc << 4) | (uint32_t)h;
            i++;
            if (++j->u_n == 4)
                OUT(finish_u(j, out));
            break;
        }
        case S_NUM: {
            int ns = j->num_state, next = -1;
            int digit = c >= '0' && c <= '9';
            switch (ns) {
            case N_MINUS:
                next = c == '0' ? N_ZERO : digit ? N_INT : -1;
                break;
            case N_ZERO:
                next = c == '.' ? N_DOT : (c == 'e' || c == 'E') ? N_E : digit ? -1 : -2;
                break;
            case N_INT:
                next = digit ? N_INT : c == '.' ? N_DOT : (c == 'e' || c == 'E') ? N_E : -2;
                break;
            case N_DOT: next = digit ? N_FRAC : -1; break;
            case N_FRAC:
                next = digit ? N_FRAC : (c == 'e' || c == 'E') ? N_E : -2;
                break;
            case N_E: next = (c == '+' || c == '-') ? N_ESIGN : digit ? N_EXP : -1; break;
            case N_ESIGN: next = digit ? N_EXP : -1; break;
            case N_EXP: next = digit ? N_EXP : -2; break;
            }
            if (next == -1)
                return fail(j, TP_ERR_JSON_SYNTAX, i);
            if (next == -2) { /* terminator: number complete, reprocess c */
                OUT(emit_number(j, out));
                value_done(j);
                if (j->state == S_DONE) return i;
                break;
            }
            if (j->num_len >= TP_JSON_NUM_MAX)
                return fail(j, TP_ERR_JSON_NUMBER, i);
            if (num_push(j, c))
                return fail(j, TP_ERR_NO_MEMORY, i);
            j->num_state = (uint8_t)next;
            i++;
            break;
        }
        case S_LIT:
            if (c != (uint8_t)j->lit[j->lit_pos])
                return fail(j, TP_ERR_JSON_SYNTAX, i);
            i++;
            if (j->lit[++j->lit_pos] == 0) {
                OUT(put(out, j->lit, j->lit_pos));
                value_done(j);
                if (j->state == S_DONE) return i;
            }
            break;
        }
    }
    return i;
}

int tp_json_end(tp_json *j, tp_buf *out)
{
    if (j->state == S_NUM && j->depth == 0) {
        int ns = j->num_state;
        if (ns == N_ZERO || ns == N_INT || ns == N_FRAC || ns == N_EXP) {
            if (emit_number(j, out)) {
                j->state = S_ERR;
                j->err = TP_ERR_BUFFER_LIMIT;
                return 0;
            }
            j->state = S_DONE;
        }
    }
    return j->state == S_DONE;
}
