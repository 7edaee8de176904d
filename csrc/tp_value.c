/* tp_type_value: what one complete raw value becomes, by its kind and a
 * family's rules (tp_type_rules.c) - JSON text, or "the host decides". A
 * pure function of its inputs (no parser), so it is tested directly.
 * tp_value_complete: the same for a value of the open call, written into
 * the argument stream (or handed over as a TP_EV_RAW_VALUE event). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_internal.h"

static int put_string(tp_buf *out, const uint8_t *s, size_t n)
{
    return tp_buf_push(out, '"') || tp_json_escape(out, s, n) || tp_buf_push(out, '"') ? -1 : 0;
}

/* ---- duplicate object keys in canonical JSON (json.loads keeps the last,
 * so such a value is typed by the host) ---- */

typedef struct {
    const uint8_t *s;
    size_t n, i;
} cur_t;

/* skips a canonical string starting at s[i] == '"'; returns its length */
static size_t skip_string(cur_t *c)
{
    size_t a = c->i++;
    while (c->i < c->n && c->s[c->i] != '"')
        c->i += c->s[c->i] == '\\' ? 2 : 1;
    c->i++;
    return c->i - a;
}

/* 1 if some object in the value at c->i repeats a key (or the check could
 * not run), else 0. Canonical input: ", " and ": " separators. */
#define DUP_DEPTH 64 /* deeper values are checked by the host: the stack stays small */

static int dup_in(cur_t *c, unsigned depth)
{
    if (depth > DUP_DEPTH)
        return 1;
    uint8_t ch = c->s[c->i];
    if (ch == '"') {
        skip_string(c);
        return 0;
    }
    if (ch != '{' && ch != '[') {
        while (c->i < c->n && c->s[c->i] != ',' && c->s[c->i] != ']' && c->s[c->i] != '}')
            c->i++;
        return 0;
    }
    int obj = ch == '{';
    size_t nk = 0, cap = 8;
    size_t local[2 * 8];
    size_t *ks = local; /* (start, len) pairs */
    int res = 0;
    c->i++;
    if (c->i < c->n && c->s[c->i] == (obj ? '}' : ']')) {
        c->i++;
        return 0;
    }
    for (;;) {
        if (obj) {
            size_t a = c->i, l = skip_string(c);
            for (size_t k = 0; k < nk && !res; k++)
                if (ks[2 * k + 1] == l && memcmp(c->s + ks[2 * k], c->s + a, l) == 0)
                    res = 1;
            if (res)
                break;
            if (nk == cap) {
                size_t *g = malloc(4 * cap * sizeof(size_t));
                if (!g) {
                    res = 1;
                    break;
                }
                memcpy(g, ks, 2 * nk * sizeof(size_t));
                if (ks != local)
                    free(ks);
                ks = g;
                cap *= 2;
            }
            ks[2 * nk] = a;
            ks[2 * nk + 1] = l;
            nk++;
            c->i += 2; /* ": " */
        }
        if (dup_in(c, depth + 1)) {
            res = 1;
            break;
        }
        if (c->i >= c->n || c->s[c->i] != ',') {
            c->i++; /* the closing bracket */
            break;
        }
        c->i += 2; /* ", " */
    }
    if (ks != local)
        free(ks);
    return res;
}

static int has_dup_keys(const uint8_t *s, size_t n)
{
    if (!memchr(s, '{', n))
        return 0;
    cur_t c = {s, n, 0};
    return dup_in(&c, 0);
}

/* a raw lone surrogate (WTF-8, from surrogatepass input) inside a string:
 * the host writes it \u-escaped */
static int has_surrogate(const uint8_t *s, size_t n)
{
    for (const uint8_t *q = s; (q = memchr(q, 0xED, n - (size_t)(q - s))) != NULL; q++)
        if ((size_t)(q - s) + 1 < n && q[1] >= 0xA0 && q[1] <= 0xBF)
            return 1;
    return 0;
}

/* JSON type (TP_JT_*) of a canonical value */
static unsigned json_type(const uint8_t *s, size_t n)
{
    switch (s[0]) {
    case '{': return TP_JT_OBJECT;
    case '[': return TP_JT_ARRAY;
    case '"': return TP_JT_STRING;
    case 't': case 'f': return TP_JT_BOOLEAN;
    case 'n': return TP_JT_NULL;
    default: break;
    }
    int is_float = 0;
    for (size_t k = 0; k < n; k++)
        if (s[k] == '.' || s[k] == 'e' || s[k] == 'E')
            is_float = 1;
    if (!is_float)
        return TP_JT_INTEGER;
    char buf[64];
    if (n >= sizeof(buf))
        return TP_JT_NUMBER;
    memcpy(buf, s, n);
    buf[n] = 0;
    double v = strtod(buf, NULL);
    return isfinite(v) && floor(v) == v ? TP_JT_INTEGER : TP_JT_NUMBER;
}

/* The whole value as JSON, appended canonically to `out`. 1: written;
 * 0: not JSON; -1: let the host decide (beyond the core's limits, or an
 * object with a repeated key, or a raw lone surrogate); -2: out of memory. */
static int json_value(tp_json *js, uint32_t max_depth, const uint8_t *raw, size_t n, tp_buf *out)
{
    size_t start = out->len;
    tp_json_init(js, TPJ_MODE_NORMAL | TPJ_STRICT_CTRL, max_depth); /* json.loads as SGLang calls it */
    size_t k = tp_json_feed(js, raw, n, out);
    if (!tp_json_failed(js) && !tp_json_done(js))
        tp_json_end(js, out);
    if (tp_json_failed(js)) {
        if (js->err == TP_ERR_NO_MEMORY)
            return -2;
        return js->err == TP_ERR_JSON_DEPTH || js->err == TP_ERR_JSON_NUMBER ? -1 : 0;
    }
    if (!tp_json_done(js))
        return 0;
    for (; k < n; k++)
        if (!tp_is_ws(raw[k]))
            return 0;
    if (has_dup_keys(out->data + start, out->len - start) || has_surrogate(out->data + start, out->len - start))
        return -1;
    return 1;
}

int tp_json_value(tp_json *js, uint32_t max_depth, const uint8_t *raw, size_t n, tp_buf *out)
{
    return json_value(js, max_depth, raw, n, out);
}

/* could ast.literal_eval(s) succeed? (0 only when it surely fails, so the
 * value is its raw text either way) */
static int maybe_literal(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i == n)
        return 0;
    uint8_t c = s[i];
    if (c >= 0x80)
        return 0; /* an identifier or a syntax error */
    if (strchr("0123456789+-.'\"([{#\\\n\r\v\f", c))
        return 1;
    if (c == 'T' || c == 'F' || c == 'N')
        return 1; /* True, False, None */
    if (strchr("bBrRuUfF", c)) { /* a string prefix */
        size_t j = i + 1;
        if (j < n && strchr("bBrRuUfF", s[j]))
            j++;
        return j < n && (s[j] == '\'' || s[j] == '"');
    }
    return 0;
}

/* ---- Python's words and numbers (Qwen3-Coder, MiniMax-M2) ---- */

static int lower_eq(const uint8_t *s, size_t n, const char *w)
{
    size_t k = 0;
    for (; k < n && w[k]; k++) {
        uint8_t c = s[k] >= 'A' && s[k] <= 'Z' ? (uint8_t)(s[k] + 32) : s[k];
        if (c != (uint8_t)w[k])
            return 0;
    }
    return k == n && w[k] == 0;
}

/* Python str.isspace() for an ASCII byte */
static int py_space(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

/* 0 when Python surely rejects s (an ASCII byte outside `chars`, or
 * nothing at all), else 1 (the host decides: e.g. "1_000", " 5", or
 * non-ASCII digits and spaces) */
static int maybe_chars(const uint8_t *s, size_t n, const char *chars)
{
    if (n == 0)
        return 0;
    for (size_t k = 0; k < n; k++)
        if (s[k] < 0x80 && (s[k] == 0 || !strchr(chars, s[k])) && !py_space(s[k]))
            return 0;
    return 1;
}

/* Python int(s) (base 10). 1: its decimal text written; 0: int() fails;
 * -1: the host decides. */
static int py_int(const uint8_t *s, size_t n, tp_buf *out)
{
    size_t i = n && (s[0] == '+' || s[0] == '-') ? 1 : 0, k = i;
    while (k < n && s[k] >= '0' && s[k] <= '9')
        k++;
    if (k == n && k > i && n - i <= 4000) { /* Python's int() refuses over 4300 digits */
        while (i < n - 1 && s[i] == '0')
            i++;
        if (s[0] == '-' && !(n - i == 1 && s[i] == '0') && tp_buf_push(out, '-'))
            return -2;
        return tp_buf_append(out, s + i, n - i) ? -2 : 1;
    }
    return maybe_chars(s, n, "0123456789+-_") ? -1 : 0;
}

/* int() of text tp_py_number_text made ASCII: [+-]digits, at most 4300
 * digits (Python's default limit). 1 written, 0 fails, -2 out of memory. */
static int py_int_exact(const uint8_t *s, size_t n, tp_buf *out)
{
    size_t i = n && (s[0] == '+' || s[0] == '-') ? 1 : 0, k = i;
    while (k < n && s[k] >= '0' && s[k] <= '9')
        k++;
    if (k != n || k == i || n - i > 4300)
        return 0;
    while (i < n - 1 && s[i] == '0')
        i++;
    if (n - i + (s[0] == '-') > TP_JSON_NUM_MAX)
        return 0; /* no number longer than a JSON number token (tp_json reads it back): the text */
    if (s[0] == '-' && !(n - i == 1 && s[i] == '0') && tp_buf_push(out, '-'))
        return -2;
    return tp_buf_append(out, s + i, n - i) ? -2 : 1;
}

/* the integral double v as Python's int(v) writes it */
static int put_int_of(tp_buf *out, double v)
{
    char buf[400]; /* DBL_MAX has 309 digits */
    int len = v == 0 ? snprintf(buf, sizeof buf, "0") : snprintf(buf, sizeof buf, "%.0f", v);
    return len > 0 && (size_t)len < sizeof buf && !tp_buf_append(out, buf, (size_t)len) ? 1 : -2;
}

/* Python float(s). 1: written (an integral value as an int when
 * `as_written` is 0, or when s has neither "." nor "e"; a value past a
 * double with the digits of s when they are a JSON number, since Python's
 * inf is not JSON; by the host when longer than a number token the core
 * reads, TP_JSON_NUM_MAX); 0: fails (also a value past a double written
 * otherwise, e.g. "+1e400" or "inf"); -1: the host decides; -2: out of
 * memory. */
static int py_float(const uint8_t *s, size_t n, int as_written, int finite, tp_buf *out)
{
    size_t i = n && (s[0] == '+' || s[0] == '-') ? 1 : 0, k = i, d = 0;
    int point = 0;
    while (k < n && s[k] >= '0' && s[k] <= '9')
        k++, d++;
    if (k < n && s[k] == '.') {
        point = 1;
        k++;
        while (k < n && s[k] >= '0' && s[k] <= '9')
            k++, d++;
    }
    int plain = d > 0;
    if (plain && k < n && (s[k] == 'e' || s[k] == 'E')) {
        point = 1;
        k++;
        if (k < n && (s[k] == '+' || s[k] == '-'))
            k++;
        size_t e = k;
        while (k < n && s[k] >= '0' && s[k] <= '9')
            k++;
        plain = k > e;
    }
    if (!plain || k != n)
        return maybe_chars(s, n, "0123456789+-._eEinftyaINFTYA") ? -1 : 0;
    char local[128], *buf = n < sizeof local ? local : malloc(n + 1);
    if (!buf)
        return -2;
    memcpy(buf, s, n);
    buf[n] = 0;
    double v = strtod(buf, NULL);
    if (buf != local)
        free(buf);
    if (!isfinite(v) && !finite && n > TP_JSON_NUM_MAX && tp_json_is_number(s, n))
        return -1; /* longer than a number token the core reads (tp_json): the host writes it */
    if (!isfinite(v))
        return !finite && tp_json_is_number(s, n) ? (tp_buf_append(out, s, n) ? -2 : 1) : 0;
    if (floor(v) == v && (!as_written || !point))
        return put_int_of(out, v);
    char f[40];
    size_t fl = tp_format_double(v, f);
    return tp_buf_append(out, f, fl) ? -2 : 1;
}

/* Boolean words: the first `nw` of T (true) and F (false), in any case,
 * stripped as str.strip() does when `strip`. 1 written, 0 not a boolean
 * word, -1 the host's. MiniMax: true/1/yes/on, false/0/no/off; Spark: the
 * first two; Hunyuan: true/false as written. */
static int bool_words_n(const uint8_t *s, size_t n, int nw, int strip, tp_buf *out)
{
    static const char *const T[] = {"true", "1", "yes", "on"}, *const F[] = {"false", "0", "no", "off"};
    for (size_t k = 0; k < n; k++)
        if (s[k] >= 0x80)
            return strip ? -1 : 0; /* str.strip() also strips Unicode spaces */
    while (strip && n && py_space(s[0]))
        s++, n--;
    while (strip && n && py_space(s[n - 1]))
        n--;
    for (int k = 0; k < nw; k++) {
        if (lower_eq(s, n, T[k]))
            return tp_buf_append(out, "true", 4) ? -2 : 1;
        if (lower_eq(s, n, F[k]))
            return tp_buf_append(out, "false", 5) ? -2 : 1;
    }
    return 0;
}

/* PY_EXACT: int() (as_int) or float() of any text, as Python reads it:
 * 1 written, 0 no number, -2 out of memory. The ASCII text is written past
 * the output, then replaced by the number. */
static int py_number_exact(const uint8_t *s, size_t n, int as_int, tp_buf *out)
{
    size_t start = out->len;
    int res = tp_py_number_text(s, n, out);
    if (res == 1) {
        size_t tl = out->len - start;
        uint8_t local[64], *t = tl <= sizeof local ? local : malloc(tl);
        if (!t)
            return -2;
        memcpy(t, out->data + start, tl);
        out->len = start;
        res = as_int ? py_int_exact(t, tl, out) : py_float(t, tl, 0, 1, out);
        if (res == -1)
            res = 0; /* ASCII text py_float does not read is no number (inf, nan) */
        if (t != local)
            free(t);
    }
    if (res != 1)
        out->len = start;
    return res < 0 ? -2 : res;
}

/* BOOL_WORDS under PY_EXACT: str.strip().lower() among the words */
static int bool_words_exact(const uint8_t *s, size_t n, tp_buf *out)
{
    n = tp_py_strip(&s, n);
    int res = bool_words_n(s, n, 4, 0, out);
    return res == -1 ? 0 : res; /* (a non-ASCII character left lowers to no word) */
}

int tp_type_value(const tp_type_rules *r, int kind, unsigned mask, const uint8_t *raw, size_t n,
                  tp_json *js, uint32_t max_depth, tp_buf *out)
{
    static const uint8_t EMPTY[1] = {0};
    if (!raw)
        raw = EMPTY; /* an empty value held in an unallocated buffer */
    if (kind < 0 || kind >= TP_KIND__COUNT || kind == TP_KIND_HOST)
        return TP_TV_HOST;
    uint32_t steps = r->steps[kind];
    size_t start = out->len;
    int res;
    if (((steps & TP_R_NULL_WORD) && lower_eq(raw, n, "null")) ||
        ((steps & TP_R_NULL_NIL) && (lower_eq(raw, n, "none") || lower_eq(raw, n, "nil"))) ||
        ((steps & TP_R_NULL_NONE) && n == 4 && memcmp(raw, "None", 4) == 0))
        return tp_buf_append(out, "null", 4) ? -1 : TP_TV_TEXT;
    if (steps & TP_R_LITERAL_WORDS) {
        const uint8_t *w = raw;
        size_t wl = tp_py_strip(&w, n);
        static const char *const LIT[] = {"true", "false", "null"};
        for (int k = 0; k < 3; k++)
            if (wl == strlen(LIT[k]) && memcmp(w, LIT[k], wl) == 0)
                return tp_buf_append(out, LIT[k], wl) ? -1 : TP_TV_TEXT;
    }
    /* MiniMax: a step runs only for a type the union allows */
    int gate = (steps & TP_R_BY_MASK) != 0;
    if ((steps & TP_R_STRING_FIRST) && (mask & TP_JT_STRING))
        return put_string(out, raw, n) ? -1 : TP_TV_TEXT;
    if ((steps & TP_R_NULL_CASES) && (mask & TP_JT_NULL) &&
        (n == 0 || (n == 4 && (!memcmp(raw, "null", 4) || !memcmp(raw, "Null", 4) || !memcmp(raw, "NULL", 4)))))
        return tp_buf_append(out, "null", 4) ? -1 : TP_TV_TEXT;
    if (steps & TP_R_PY_EXACT) {
        for (int b = 0; b < 3; b++) {
            static const uint32_t STEP[] = {TP_R_PY_INT, TP_R_PY_FLOAT, TP_R_BOOL_WORDS};
            static const unsigned TYPE[] = {TP_JT_INTEGER, TP_JT_NUMBER, TP_JT_BOOLEAN};
            if ((steps & STEP[b]) && (!gate || (mask & TYPE[b]))) {
                res = b < 2 ? py_number_exact(raw, n, b == 0, out) : bool_words_exact(raw, n, out);
                if (res != 0)
                    return res == 1 ? TP_TV_TEXT : -1;
            }
        }
        steps &= ~(uint32_t)(TP_R_PY_INT | TP_R_PY_FLOAT | TP_R_BOOL_WORDS);
    }
    if ((steps & TP_R_PY_INT) && (!gate || (mask & TP_JT_INTEGER))) {
        res = py_int(raw, n, out);
        if (res != 0)
            return res == 1 ? TP_TV_TEXT : res == -1 ? TP_TV_HOST : -1;
    }
    if ((steps & TP_R_PY_FLOAT) && (!gate || (mask & TP_JT_NUMBER))) {
        res = py_float(raw, n, (steps & TP_R_FLOAT_AS_WRITTEN) != 0, 0, out);
        if (res != 0)
            return res == 1 ? TP_TV_TEXT : res == -1 ? TP_TV_HOST : -1;
    }
    if (steps & TP_R_TRUE_WORD) {
        int t = lower_eq(raw, n, "true") || ((steps & TP_R_TRUE_ONE) && n == 1 && raw[0] == '1');
        return (t ? tp_buf_append(out, "true", 4) : tp_buf_append(out, "false", 5)) ? -1 : TP_TV_TEXT;
    }
    for (int b = 0; b < 3; b++) {
        static const uint32_t STEP[] = {TP_R_BOOL_WORDS, TP_R_BOOL_01, TP_R_BOOL_TF};
        static const uint8_t NW[] = {4, 2, 1}, STRIP[] = {1, 1, 0};
        if ((steps & STEP[b]) && (!gate || (mask & TP_JT_BOOLEAN))) {
            res = bool_words_n(raw, n, NW[b], STRIP[b], out);
            if (res != 0)
                return res == 1 ? TP_TV_TEXT : res == -1 ? TP_TV_HOST : -1;
        }
    }
    if ((steps & TP_R_JSON) && (!gate || (mask & (TP_JT_OBJECT | TP_JT_ARRAY)))) {
        res = json_value(js, max_depth, raw, n, out);
        if (res == -2)
            return -1;
        if (res == 1) {
            unsigned jt = json_type(out->data + start, out->len - start);
            if (jt == TP_JT_STRING && (steps & TP_R_JSON_STR_HOST)) {
                out->len = start;
                return TP_TV_HOST;
            }
            if ((steps & TP_R_UNION_STRING) && !(jt & mask) && (mask & TP_JT_STRING)) {
                out->len = start;
                return put_string(out, raw, n) ? -1 : TP_TV_TEXT;
            }
            return TP_TV_TEXT;
        }
        out->len = start;
        if (res < 0)
            return TP_TV_HOST;
    }
    if ((steps & TP_R_UNESCAPE_HOST) && (memchr(raw, '\\', n) || memchr(raw, '"', n)))
        return TP_TV_HOST;
    if ((steps & TP_R_STRIP_QUOTES) && n >= 2 && raw[0] == raw[n - 1] && (raw[0] == '"' || raw[0] == '\''))
        return put_string(out, raw + 1, n - 2) ? -1 : TP_TV_TEXT;
    if ((steps & TP_R_LITERAL_HOST) && maybe_literal(raw, n))
        return TP_TV_HOST;
    if ((steps & TP_R_JSON_ELSE) && !(mask & TP_JT_STRING)) {
        res = json_value(js, max_depth, raw, n, out);
        if (res == -2)
            return -1;
        if (res == 1)
            return TP_TV_TEXT;
        out->len = start;
        if (res < 0)
            return TP_TV_HOST;
    }
    return put_string(out, raw, n) ? -1 : TP_TV_TEXT;
}

void tp_value_complete(tp_parser *p, const uint8_t *key, size_t klen, const uint8_t *raw, size_t n)
{
    if (p->oom)
        return;
    unsigned mask = 0;
    int kind = tp_parser_param_kind_mask(p, p->tool_id, key, klen, &mask);
    if (kind < 0 && p->rules->untyped_tools)
        kind = TP_KIND_UNTYPED;
    size_t start = p->out.len;
    int res = tp_type_value(p->rules, kind, mask, raw, n, &p->js, p->lim.max_depth, &p->out);
    if (res < 0) {
        p->oom = 1;
    } else if (res == TP_TV_TEXT) {
        tp_ev_args_from(p, start);
    } else { /* the host types it: key bytes then the raw value */
        if (tp_buf_append(&p->out, key, klen) || (n && tp_buf_append(&p->out, raw, n))) {
            p->oom = 1;
            return;
        }
        tp_ev_mark(p, TP_EV_RAW_VALUE, p->cur, start);
        if (!p->oom)
            p->ev[p->nev - 1].offset = klen;
    }
}

void tp_value_json_or_text(tp_parser *p, const uint8_t *raw, size_t n)
{
    static const uint8_t EMPTY[1] = {0};
    if (!raw)
        raw = EMPTY; /* an empty value held in an unallocated buffer */
    size_t start = p->out.len;
    int res = tp_type_value(p->rules, TP_KIND_OTHER, 0, raw, n, &p->js, p->lim.max_depth, &p->out);
    if (res < 0) {
        p->oom = 1;
    } else if (res == TP_TV_TEXT) {
        tp_ev_args_from(p, start);
    } else {
        p->out.len = start;
        tp_ev_args(p, (const uint8_t *)"\"", 1);
        tp_ev_args_escaped(p, raw, n);
        tp_ev_args(p, (const uint8_t *)"\"", 1);
    }
}
