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
}

int tp_json_done(const tp_json *j) { return j->state == S_DONE; }
int tp_json_failed(const tp_json *j) { return j->state == S_ERR; }
int tp_json_not_started(const tp_json *j) { return j->state == S_VALUE && j->depth == 0; }

/* escape letters json.dumps writes as they are read (\/ is written '/') */
static const uint8_t SAME_ESC[256] = {['"'] = 1, ['\\'] = 1, ['b'] = 1, ['f'] = 1, ['n'] = 1, ['r'] = 1, ['t'] = 1};

static inline int is_ws(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static inline int put(tp_buf *out, const void *s, size_t n)
{
    return out ? tp_buf_append(out, s, n) : 0;
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
    if (j->mode == TPJ_MODE_RAW_STRING)
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

static int emit_number(tp_json *j, tp_buf *out)
{
    int is_float = 0;
    for (uint16_t k = 0; k < j->num_len; k++) {
        char c = j->num[k];
        if (c == '.' || c == 'e' || c == 'E')
            is_float = 1;
    }
    j->num[j->num_len] = 0;
    if (is_float) {
        char f[40];
        size_t n = tp_format_double(strtod(j->num, NULL), f);
        return put(out, f, n);
    }
    if (j->num_len == 2 && j->num[0] == '-' && j->num[1] == '0')
        return put(out, "0", 1);
    return put(out, j->num, j->num_len);
}

static inline void value_done(tp_json *j)
{
    j->state = j->depth == 0 ? S_DONE : S_AFTER;
}

static inline int top_is_obj(const tp_json *j)
{
    uint32_t d = j->depth - 1;
    return (j->stack[d >> 3] >> (d & 7)) & 1;
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
    if (j->mode == TPJ_MODE_RAW_STRING) {
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

static size_t open_container(tp_json *j, int is_obj, size_t i, tp_buf *out)
{
    if (j->depth >= j->max_depth)
        return fail(j, TP_ERR_JSON_DEPTH, i);
    uint32_t d = j->depth++;
    if (is_obj)
        j->stack[d >> 3] |= (uint8_t)(1u << (d & 7));
    else
        j->stack[d >> 3] &= (uint8_t)~(1u << (d & 7));
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
    if (j->mode == TPJ_MODE_RAW_STRING && c != '"')
        return fail(j, TP_ERR_BAD_NAME, i);
    switch (c) {
    case '"':
        j->str_is_key = 0;
        j->state = S_STR;
        if (j->mode != TPJ_MODE_RAW_STRING)
            OUT(put(out, "\"", 1));
        return SIZE_MAX;
    case '{': return open_container(j, 1, i, out);
    case '[': return open_container(j, 0, i, out);
    case 't': j->lit = "true"; break;
    case 'f': j->lit = "false"; break;
    case 'n': j->lit = "null"; break;
    case 'N': j->lit = "NaN"; break;
    case 'I': j->lit = "Infinity"; break;
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

size_t tp_json_feed(tp_json *j, const uint8_t *p, size_t n, tp_buf *out)
{
    size_t i = 0, r;
    while (i < n) {
        uint8_t c = p[i];
        switch (j->state) {
        case S_DONE:
        case S_ERR:
            return i;
        case S_VALUE:
            if (is_ws(c)) { i++; break; }
            if ((r = start_value(j, c, i, out)) != SIZE_MAX) return r;
            i++;
            break;
        case S_ARR_FIRST:
            if (is_ws(c)) { i++; break; }
            if (c == ']') r = close_container(j, 0, i, out);
            else r = start_value(j, c, i, out);
            if (r != SIZE_MAX) return r;
            i++;
            break;
        case S_OBJ_FIRST:
        case S_OBJ_KEY:
            if (is_ws(c)) { i++; break; }
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
            if (is_ws(c)) { i++; break; }
            if (c != ':') return fail(j, TP_ERR_JSON_SYNTAX, i);
            OUT(put(out, ": ", 2));
            j->state = S_VALUE;
            i++;
            break;
        case S_AFTER:
            if (is_ws(c)) { i++; break; }
            if (c == ',') {
                OUT(put(out, ", ", 2));
                j->state = top_is_obj(j) ? S_OBJ_KEY : S_VALUE;
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
            int pairs = j->mode != TPJ_MODE_RAW_STRING;
            for (;;) {
                while (k + 8 <= n && !tp_esc8(tp_load8(p + k)))
                    k += 8;
                while (k < n && p[k] >= 0x20 && p[k] != '"' && p[k] != '\\')
                    k++;
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
            } else {
                return fail(j, TP_ERR_JSON_SYNTAX, i); /* raw control char */
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
                if (c == 'I') { /* -Infinity */
                    j->state = S_LIT;
                    j->lit = "-Infinity";
                    j->lit_pos = 2;
                    i++;
                    continue;
                }
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
            j->num[j->num_len++] = (char)c;
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
