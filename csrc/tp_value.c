/* tp_value_complete: one complete, non-streamed parameter value of the open
 * call becomes JSON text in the argument stream, by its kind (compiled
 * tools) and the format family's rules (tp_type_rules.c). A value the rules
 * hand to the host becomes a TP_EV_RAW_VALUE event instead. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tp_internal.h"

/* where a decided value goes */
enum { TO_TEXT, TO_HOST };

static void to_host(tp_parser *p, const uint8_t *key, size_t klen, const uint8_t *raw, size_t n)
{
    size_t start = p->out.len;
    if (tp_buf_append(&p->out, key, klen) || tp_buf_append(&p->out, raw, n)) {
        p->oom = 1;
        return;
    }
    tp_ev_mark(p, TP_EV_RAW_VALUE, p->cur, start);
    if (!p->oom)
        p->ev[p->nev - 1].offset = klen;
}

static void to_string(tp_parser *p, const uint8_t *s, size_t n)
{
    size_t start = p->out.len;
    if (tp_buf_push(&p->out, '"') || tp_json_escape(&p->out, s, n) || tp_buf_push(&p->out, '"')) {
        p->oom = 1;
        return;
    }
    tp_ev_args_from(p, start);
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
static int dup_in(cur_t *c, unsigned depth)
{
    if (depth > 4096)
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
    size_t nk = 0, cap = 16;
    size_t local[2 * 16];
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
        if (s[k] == '.' || s[k] == 'e' || s[k] == 'N' || s[k] == 'I')
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

/* The whole value as JSON, written canonically to p->out from `start`.
 * 1: written; 0: not JSON; -1: let the host decide (beyond the core's
 * limits, or an object with a repeated key). */
static int json_value(tp_parser *p, const uint8_t *raw, size_t n)
{
    size_t start = p->out.len;
    tp_json_init(&p->js, TPJ_MODE_NORMAL, p->lim.max_depth);
    size_t k = tp_json_feed(&p->js, raw, n, &p->out);
    if (!tp_json_failed(&p->js) && !tp_json_done(&p->js))
        tp_json_end(&p->js, &p->out);
    if (tp_json_failed(&p->js)) {
        if (p->js.err == TP_ERR_NO_MEMORY)
            p->oom = 1;
        return p->js.err == TP_ERR_JSON_DEPTH || p->js.err == TP_ERR_JSON_NUMBER ? -1 : 0;
    }
    if (!tp_json_done(&p->js))
        return 0;
    for (; k < n; k++)
        if (!tp_is_ws(raw[k]))
            return 0;
    if (has_dup_keys(p->out.data + start, p->out.len - start) ||
        has_surrogate(p->out.data + start, p->out.len - start))
        return -1;
    return 1;
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

void tp_value_complete(tp_parser *p, const uint8_t *key, size_t klen, const uint8_t *raw, size_t n)
{
    if (p->oom)
        return;
    unsigned mask = 0;
    int kind = tp_parser_param_kind_mask(p, p->tool_id, key, klen, &mask);
    const tp_type_rules *r = p->rules;
    unsigned steps = r->steps[kind];
    static const uint8_t EMPTY[1] = {0};
    if (!raw)
        raw = EMPTY; /* an empty value held in an unallocated buffer */
    if (kind == TP_KIND_HOST) {
        to_host(p, key, klen, raw, n);
        return;
    }
    if (steps & TP_R_JSON) {
        size_t start = p->out.len;
        int res = json_value(p, raw, n);
        if (p->oom)
            return;
        if (res == 1) {
            unsigned jt = json_type(p->out.data + start, p->out.len - start);
            if (jt == TP_JT_STRING && (steps & TP_R_JSON_STR_HOST)) {
                p->out.len = start;
                to_host(p, key, klen, raw, n);
            } else if ((steps & TP_R_UNION_STRING) && !(jt & mask) && (mask & TP_JT_STRING)) {
                p->out.len = start;
                to_string(p, raw, n);
            } else {
                tp_ev_args_from(p, start);
            }
            return;
        }
        p->out.len = start;
        if (res < 0) {
            to_host(p, key, klen, raw, n);
            return;
        }
    }
    if ((steps & TP_R_UNESCAPE_HOST) && (memchr(raw, '\\', n) || memchr(raw, '"', n))) {
        to_host(p, key, klen, raw, n);
        return;
    }
    if ((steps & TP_R_STRIP_QUOTES) && n >= 2 && raw[0] == raw[n - 1] && (raw[0] == '"' || raw[0] == '\'')) {
        to_string(p, raw + 1, n - 2);
        return;
    }
    if ((steps & TP_R_LITERAL_HOST) && maybe_literal(raw, n)) {
        to_host(p, key, klen, raw, n);
        return;
    }
    to_string(p, raw, n);
}
