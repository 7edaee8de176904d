/* Compiled tools (names; per (tool, parameter) a kind and a union mask) and
 * JSON string escaping. A tp_tools is built once per distinct tool list by
 * the binding and then only read, so any number of parsers (in any thread)
 * may share it. */
#include "tp_types.h"
#include "tp_schema.h"
#include "tp_swar.h"

#include <stdlib.h>
#include <string.h>

#define KEY_MAX 4096u /* longest parameter name accepted (bytes) */

void tp_tools_init(tp_tools *t) { memset(t, 0, sizeof(*t)); }

void tp_tools_free(tp_tools *t)
{
    tp_strset_free(&t->names);
    tp_strset_free(&t->params);
    free(t->kind);
    free(t->mask);
    free(t->tool_kind);
    tp_schema_free(t->schema);
    memset(t, 0, sizeof(*t));
}

int tp_tools_find(const tp_tools *t, const uint8_t *name, size_t len)
{
    return tp_strset_find(&t->names, name, len, NULL, 0);
}

int tp_tools_add(tp_tools *t, const uint8_t *name, size_t len)
{
    int id = tp_strset_add(&t->names, name, len, NULL, 0);
    if (id < 0)
        return -1;
    if ((uint32_t)id >= t->tool_cap) {
        uint32_t cap = t->tool_cap ? t->tool_cap * 2 : 8;
        while (cap <= (uint32_t)id)
            cap *= 2;
        uint8_t *k = realloc(t->tool_kind, cap);
        if (!k)
            return -1;
        memset(k + t->tool_cap, TP_KIND_UNTYPED, cap - t->tool_cap);
        t->tool_kind = k;
        t->tool_cap = cap;
    }
    return id;
}

int tp_tools_set_default(tp_tools *t, int id, int kind)
{
    if (id < 0 || (uint32_t)id >= t->names.n || kind < 0 || kind >= TP_KIND__COUNT)
        return -1;
    t->tool_kind[id] = (uint8_t)kind;
    return 0;
}

static void id_bytes(int id, uint8_t out[4])
{
    uint32_t v = (uint32_t)id;
    memcpy(out, &v, 4);
}

int tp_tools_add_param(tp_tools *t, int id, const uint8_t *name, size_t len, int kind, unsigned mask)
{
    if (id < 0 || (uint32_t)id >= t->names.n || len > KEY_MAX || kind < 0 || kind >= TP_KIND__COUNT)
        return -1;
    uint8_t key[4];
    id_bytes(id, key);
    uint32_t before = t->params.n;
    int e = tp_strset_add(&t->params, key, 4, name, len);
    if (e < 0)
        return -1;
    if (t->params.n != before) { /* a new key: grow the columns alongside */
        uint8_t *k = realloc(t->kind, t->params.cap);
        if (!k)
            return -1;
        t->kind = k;
        uint8_t *m = realloc(t->mask, t->params.cap);
        if (!m)
            return -1;
        t->mask = m;
    }
    t->kind[e] = (uint8_t)kind;
    t->mask[e] = (uint8_t)mask;
    return 0;
}

int tp_tools_kind(const tp_tools *t, int id, const uint8_t *name, size_t len, unsigned *mask)
{
    *mask = 0;
    if (id < 0 || (uint32_t)id >= t->names.n)
        return TP_KIND_UNTYPED;
    if (t->tool_kind[id] == TP_KIND_HOST)
        return TP_KIND_HOST;
    if (len > KEY_MAX || t->params.n == 0)
        return t->tool_kind[id];
    uint8_t key[4];
    id_bytes(id, key);
    int e = tp_strset_find(&t->params, key, 4, name, len);
    if (e < 0)
        return t->tool_kind[id];
    *mask = t->mask[e];
    return t->kind[e];
}

/* ---- JSON string escaping (json.dumps(s, ensure_ascii=False) form) ---- */

static const char HEX[] = "0123456789abcdef";

/* bytes that may need escaping: controls, '"', '\\', and 0xED (which may
 * begin a lone surrogate); the value is how many bytes its escape adds at
 * most (a surrogate's three bytes become six) */
static const uint8_t SPECIAL[256] = {
    5, 5, 5, 5, 5, 5, 5, 5, 1, 1, 1, 5, 1, 1, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
    ['"'] = 1, ['\\'] = 1, [0xED] = 3,
};

/* Where the first byte of s[0:n) that SPECIAL marks, or any byte of 0x80
 * or above, is (n if none): eight bytes at a time, then byte by byte. */
static size_t plain_run(const uint8_t *s, size_t n)
{
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        uint64_t x = tp_load8(s + k);
        uint64_t m = tp_esc8_mask(x) | (x & TP_HIGHS); /* (the lowest set bit of each is exact) */
        if (m)
            return k + ((size_t)__builtin_ctzll(m) >> 3);
    }
    while (k < n && s[k] < 0x80 && !SPECIAL[s[k]])
        k++;
    return k;
}

int tp_json_escape(tp_buf *b, const uint8_t *s, size_t n)
{
    if (n == 0)
        return 0; /* s may be NULL (an empty buffer): no pointer arithmetic on it */
    /* pass 1: room for what the escapes add at most (proportional: a run
     * of newlines reserves twice its length, not six times), read byte by
     * byte from the first byte that may need it */
    size_t first = plain_run(s, n), extra = 0;
    for (size_t i = first; i < n; i++)
        extra += SPECIAL[s[i]];
    if (tp_buf_reserve(b, n + extra))
        return -1;
    uint8_t *o = b->data + b->len;
    if (extra == 0) {
        memcpy(o, s, n);
        b->len += n;
        return 0;
    }
    memcpy(o, s, first);
    o += first;
    for (size_t i = first; i < n; i++) {
        uint8_t c = s[i];
        if (!SPECIAL[c]) {
            *o++ = c;
            continue;
        }
        if (c == '"' || c == '\\') {
            *o++ = '\\';
            *o++ = c;
        } else if (c < 0x20) {
            *o++ = '\\';
            switch (c) {
            case '\b': *o++ = 'b'; break;
            case '\f': *o++ = 'f'; break;
            case '\n': *o++ = 'n'; break;
            case '\r': *o++ = 'r'; break;
            case '\t': *o++ = 't'; break;
            default:
                *o++ = 'u';
                *o++ = '0';
                *o++ = '0';
                *o++ = (uint8_t)HEX[c >> 4];
                *o++ = (uint8_t)HEX[c & 0xF];
            }
        } else if (i + 5 < n && tp_sur_high(s + i) && tp_sur_low(s + i + 3)) {
            tp_sur_pair(s + i, s + i + 3, o); /* a pair: its character */
            o += 4;
            i += 5;
        } else if (i + 2 < n && s[i + 1] >= 0xA0 && s[i + 1] <= 0xBF && (s[i + 2] & 0xC0) == 0x80) {
            /* 0xED: a lone surrogate (surrogatepass input) stays escaped */
            uint32_t cp = 0xD000u | ((uint32_t)(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3Fu);
            *o++ = '\\';
            *o++ = 'u';
            *o++ = (uint8_t)HEX[(cp >> 12) & 0xF];
            *o++ = (uint8_t)HEX[(cp >> 8) & 0xF];
            *o++ = (uint8_t)HEX[(cp >> 4) & 0xF];
            *o++ = (uint8_t)HEX[cp & 0xF];
            i += 2;
        } else {
            *o++ = c; /* 0xED starting an ordinary character */
        }
    }
    b->len = (size_t)(o - b->data);
    return 0;
}
