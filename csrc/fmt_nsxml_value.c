/* A held parameter value of a namespaced-XML row (fmt_nsxml.c: MiniMax-M3)
 * as JSON text, typed by the tool's schema (tp_schema.h).
 *
 * The value is the raw text between NS<KEY> and NS</KEY>, inner tags
 * included, as M3's chat template writes it (macro to_xml): a mapping as
 * one element per key, a sequence as one `item` element per entry, a
 * scalar as its text. Read as SGLang's MinimaxM3Detector reads it where the
 * template leaves it open (docs/PARSERS.md, "MiniMax-M3"):
 *  - an inner tag is NS, blanks (" \t\r\n"), `<`, at most 1023 characters
 *    without `]`, `<`, `>`, then `>`; an NS not starting one is text. An
 *    opening tag's name is its text str.strip()ped; a closing tag (`/name`)
 *    closes the innermost open element of that name (and those inside it),
 *    and is ignored when none is open;
 *  - an element with children is a container: a list when its schema is
 *    an array, or untyped with only `item` children (an item's schema by
 *    position: prefixItems, then the rest); else an object (a child's
 *    schema: its property, else additionalProperties), where a repeated
 *    key collects its values into a list (appended to the first value when
 *    that is a list); text between children is ignored;
 *  - an element without children is a leaf: its text (the pieces between
 *    its tags, joined) typed by the minimax_m3 row of tp_type_rules.c; a
 *    blank one whose schema is not a scalar type is an empty container;
 *  - the parameter itself, without elements: blank is a leaf (scalar) or
 *    an empty container; a container type reads it as JSON (json.loads:
 *    a number past a double, NaN or Infinity makes it its text), else its
 *    text; otherwise a leaf;
 *  - deeper than max_depth elements: the value is its raw text.
 * JSON is written as json.dumps(ensure_ascii=False) writes it. Only a JSON
 * text the core cannot read as Python does (tp_json_value: a repeated key,
 * beyond its limits) goes to the host. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tp_internal.h"
#include "tp_schema.h"

#define TAG_CHARS_MAX 1023u
#define LINEAR_KEYS 32u /* objects with more children find repeated keys by hash */

typedef struct {
    uint32_t tag_at, tag_len;
    int32_t first, last, next; /* children; next sibling */
    int32_t span;              /* first text piece (leaves), -1 none */
    uint32_t nchild;
} el_t;

typedef struct {
    uint32_t at, len;
    int32_t next;
} span_t;

typedef struct {
    const uint8_t *raw;
    const tp_schema *sc;
    tp_json *js;
    uint32_t max_depth;
    tp_buf *out;
    tp_buf scratch; /* a leaf's joined text */
    el_t *el;
    uint32_t nel, elcap;
    span_t *sp;
    uint32_t nsp, spcap;
    int32_t *stack;
    uint32_t depth, stcap, deepest;
    int32_t *lastspan; /* per element: its last span (to append) */
} tree_t;

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    uint32_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *g = realloc(*arr, (size_t)c * size);
    if (!g)
        return -1;
    *arr = g;
    *cap = c;
    return 0;
}

static void tree_free(tree_t *t)
{
    free(t->el);
    free(t->sp);
    free(t->stack);
    free(t->lastspan);
    tp_buf_free(&t->scratch);
}

static int new_el(tree_t *t, uint32_t at, uint32_t len)
{
    uint32_t cap = t->elcap;
    if (grow((void **)&t->el, &t->elcap, t->nel + 1, sizeof(el_t)))
        return -1;
    if (t->elcap != cap) {
        uint32_t c2 = cap;
        if (grow((void **)&t->lastspan, &c2, t->elcap, sizeof(int32_t)))
            return -1;
    }
    el_t *e = &t->el[t->nel];
    *e = (el_t){at, len, -1, -1, -1, -1, 0};
    t->lastspan[t->nel] = -1;
    return (int)t->nel++;
}

static int add_text(tree_t *t, int32_t e, size_t at, size_t len)
{
    if (!len)
        return 0;
    if (grow((void **)&t->sp, &t->spcap, t->nsp + 1, sizeof(span_t)))
        return -1;
    t->sp[t->nsp] = (span_t){(uint32_t)at, (uint32_t)len, -1};
    if (t->lastspan[e] < 0)
        t->el[e].span = (int32_t)t->nsp;
    else
        t->sp[t->lastspan[e]].next = (int32_t)t->nsp;
    t->lastspan[e] = (int32_t)t->nsp++;
    return 0;
}

/* Is there a tag at raw[j] (an NS)? Its text's start and length, and the
 * end of the tag. */
static int tag_at(const uint8_t *raw, size_t n, size_t j, size_t nsl, size_t *ts, size_t *tl, size_t *end)
{
    size_t k = j + nsl;
    while (k < n && tp_is_ws(raw[k]))
        k++;
    if (k >= n || raw[k] != '<')
        return 0;
    size_t a = ++k, chars = 0;
    while (k < n && raw[k] != ']' && raw[k] != '<' && raw[k] != '>') {
        chars += (raw[k] & 0xC0) != 0x80;
        if (chars > TAG_CHARS_MAX)
            return 0;
        k++;
    }
    if (k >= n || raw[k] != '>')
        return 0;
    *ts = a;
    *tl = k - a;
    *end = k + 1;
    return 1;
}

/* the first NS in s[0:n), or NULL */
static const uint8_t *find_ns(const uint8_t *s, size_t n, const char *ns, size_t nsl)
{
    for (const uint8_t *q = s, *e = s + n; (size_t)(e - q) >= nsl; q++) {
        q = memchr(q, (uint8_t)ns[0], (size_t)(e - q) - nsl + 1);
        if (!q)
            return NULL;
        if (memcmp(q, ns, nsl) == 0)
            return q;
    }
    return NULL;
}

static int same(const tree_t *t, const el_t *e, const uint8_t *s, size_t n)
{
    return e->tag_len == n && memcmp(t->raw + e->tag_at, s, n) == 0;
}

/* the element tree of raw (element 0: the root). 0, or -1 out of memory. */
static int build(tree_t *t, size_t n, const char *ns, size_t nsl)
{
    const uint8_t *raw = t->raw;
    if (new_el(t, 0, 0) < 0 || grow((void **)&t->stack, &t->stcap, 1, sizeof(int32_t)))
        return -1;
    t->stack[0] = 0;
    t->depth = 1;
    size_t pos = 0, from = 0;
    const uint8_t *q;
    while (from + nsl <= n && (q = find_ns(raw + from, n - from, ns, nsl)) != NULL) {
        size_t j = (size_t)(q - raw), ts, tl, end;
        if (!tag_at(raw, n, j, nsl, &ts, &tl, &end)) {
            from = j + 1;
            continue;
        }
        int32_t top = t->stack[t->depth - 1];
        if (add_text(t, top, pos, j - pos))
            return -1;
        pos = from = end;
        const uint8_t *name = raw + ts;
        if (tl && name[0] == '/') {
            name++;
            size_t nl = tp_py_strip(&name, tl - 1);
            for (uint32_t d = t->depth - 1; d > 0; d--)
                if (same(t, &t->el[t->stack[d]], name, nl)) {
                    t->depth = d;
                    break;
                }
            continue; /* a closing tag that matches nothing is ignored */
        }
        size_t nl = tp_py_strip(&name, tl);
        int e = new_el(t, (uint32_t)(name - raw), (uint32_t)nl);
        if (e < 0 || grow((void **)&t->stack, &t->stcap, t->depth + 1, sizeof(int32_t)))
            return -1;
        el_t *pe = &t->el[top];
        if (pe->last < 0)
            pe->first = e;
        else
            t->el[pe->last].next = e;
        pe->last = e;
        pe->nchild++;
        t->stack[t->depth++] = e;
        if (t->depth > t->deepest)
            t->deepest = t->depth;
    }
    return add_text(t, t->stack[t->depth - 1], pos, n - pos);
}

/* ---- typing ---- */

static int put_text(tp_buf *out, const uint8_t *s, size_t n)
{
    return tp_buf_push(out, '"') || tp_json_escape(out, s, n) || tp_buf_push(out, '"') ? -1 : 0;
}

static uint8_t flags_of(const tree_t *t, int node)
{
    return node < 0 ? TP_SN_UNTYPED : t->sc->nodes[node].flags;
}

static int leaf(tree_t *t, int node, const uint8_t *s, size_t n)
{
    int untyped = flags_of(t, node) & TP_SN_UNTYPED;
    unsigned mask = node < 0 ? 0 : t->sc->nodes[node].mask;
    int res = tp_type_value(&tp_rules_minimax_m3, untyped ? TP_KIND_UNTYPED : TP_KIND_UNION, mask, s, n, t->js,
                            t->max_depth, t->out);
    if (res == TP_TV_HOST) /* (the row never asks the host) */
        return put_text(t->out, s, n);
    return res;
}


static int put_lit(tree_t *t, const char *s) { return tp_buf_append(t->out, s, strlen(s)); }

static int empty(tree_t *t, int node) { return put_lit(t, flags_of(t, node) & TP_SN_ARRAY ? "[]" : "{}"); }

static int blank(const uint8_t *s, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!tp_is_ws(s[k]))
            return 0;
    return 1;
}

static int container(tree_t *t, int32_t e, int node);

static int value(tree_t *t, int32_t e, int node)
{
    const el_t *x = &t->el[e];
    if (x->nchild)
        return container(t, e, node);
    const uint8_t *s = (const uint8_t *)"";
    size_t n = 0;
    if (x->span >= 0 && t->sp[x->span].next < 0) { /* one piece: in place */
        s = t->raw + t->sp[x->span].at;
        n = t->sp[x->span].len;
    } else if (x->span >= 0) {
        tp_buf_clear(&t->scratch);
        for (int32_t k = x->span; k >= 0; k = t->sp[k].next)
            if (tp_buf_append(&t->scratch, t->raw + t->sp[k].at, t->sp[k].len))
                return -1;
        s = t->scratch.data;
        n = t->scratch.len;
    }
    if (!(flags_of(t, node) & TP_SN_SCALAR) && blank(s, n))
        return empty(t, node);
    return leaf(t, node, s, n);
}

static int put_key(tree_t *t, const el_t *x)
{
    return tp_buf_push(t->out, '"') || tp_json_escape(t->out, t->raw + x->tag_at, x->tag_len) ||
           put_lit(t, "\": ");
}

/* the group of each child of an object: group[k] = the index (among the
 * children) of the first child with its tag */
static int groups(tree_t *t, const el_t *x, uint32_t *group, int32_t *kids)
{
    uint32_t k = 0;
    for (int32_t c = x->first; c >= 0; c = t->el[c].next)
        kids[k++] = c;
    if (x->nchild <= LINEAR_KEYS) {
        for (k = 0; k < x->nchild; k++) {
            group[k] = k;
            for (uint32_t j = 0; j < k; j++)
                if (group[j] == j && same(t, &t->el[kids[j]], t->raw + t->el[kids[k]].tag_at, t->el[kids[k]].tag_len)) {
                    group[k] = j;
                    break;
                }
        }
        return 0;
    }
    tp_strset seen;
    memset(&seen, 0, sizeof seen);
    uint32_t *first = malloc(x->nchild * sizeof(uint32_t));
    int res = first ? 0 : -1;
    for (k = 0; k < x->nchild && !res; k++) {
        const el_t *c = &t->el[kids[k]];
        uint32_t before = seen.n;
        int id = tp_strset_add(&seen, t->raw + c->tag_at, c->tag_len, NULL, 0);
        if (id < 0) {
            res = -1;
            break;
        }
        if (seen.n != before)
            first[id] = k;
        group[k] = first[id];
    }
    free(first);
    tp_strset_free(&seen);
    return res;
}

static int object(tree_t *t, const el_t *x, int node)
{
    uint32_t nc = x->nchild;
    uint32_t *group = malloc(nc * sizeof(uint32_t));
    int32_t *kids = malloc(nc * sizeof(int32_t));
    uint32_t *next = malloc(nc * sizeof(uint32_t)); /* the next child of the same key, or nc */
    uint32_t *tail = malloc(nc * sizeof(uint32_t));  /* by first child of a key: its last so far */
    int res = !group || !kids || !next || !tail || groups(t, x, group, kids) || tp_buf_push(t->out, '{') ? -1 : 0;
    for (uint32_t k = 0; k < nc && !res; k++) {
        next[k] = nc;
        if (group[k] != k)
            next[tail[group[k]]] = k;
        tail[group[k]] = k;
    }
    for (uint32_t k = 0; k < nc && !res; k++) {
        if (group[k] != k)
            continue;
        const el_t *c = &t->el[kids[k]];
        if ((k && put_lit(t, ", ")) || put_key(t, c)) {
            res = -1;
            break;
        }
        int child = tp_schema_child(t->sc, node, t->raw + c->tag_at, c->tag_len, 0);
        if (next[k] == nc) {
            res = value(t, kids[k], child);
            continue;
        }
        /* a repeated key: [first, second, ...], or the first (a list) with
         * the others appended */
        size_t at = t->out->len;
        if (tp_buf_push(t->out, '[') || value(t, kids[k], child)) {
            res = -1;
            break;
        }
        uint8_t *o = t->out->data;
        int sep = 1;
        if (o[at + 1] == '[') { /* a list: its items, then the others */
            memmove(o + at, o + at + 1, t->out->len - at - 1);
            t->out->len -= 2; /* (and its ']') */
            sep = t->out->len > at + 1;
        }
        for (uint32_t j = next[k]; j < nc && !res; j = next[j]) {
            if (sep && put_lit(t, ", "))
                res = -1;
            else
                res = value(t, kids[j], child);
            sep = 1;
        }
        if (!res && tp_buf_push(t->out, ']'))
            res = -1;
    }
    if (!res && tp_buf_push(t->out, '}'))
        res = -1;
    free(group);
    free(kids);
    free(next);
    free(tail);
    return res;
}

static int container(tree_t *t, int32_t e, int node)
{
    const el_t *x = &t->el[e];
    uint8_t f = flags_of(t, node);
    int list = (f & TP_SN_ARRAY) != 0;
    if (!list && (f & TP_SN_UNTYPED)) {
        list = 1;
        for (int32_t c = x->first; c >= 0 && list; c = t->el[c].next)
            list = same(t, &t->el[c], (const uint8_t *)"item", 4);
    }
    if (!list)
        return object(t, x, node);
    if (tp_buf_push(t->out, '['))
        return -1;
    size_t i = 0;
    for (int32_t c = x->first; c >= 0; c = t->el[c].next, i++) {
        int child = tp_schema_child(t->sc, node, t->raw + t->el[c].tag_at, t->el[c].tag_len, i);
        if ((i && put_lit(t, ", ")) || value(t, c, child))
            return -1;
    }
    return tp_buf_push(t->out, ']');
}

/* a JSON number token in canonical JSON past a double (Python's json.loads
 * reads it as inf) */
static int past_double(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"') {
            for (i++; i < n && s[i] != '"'; i++)
                i += s[i] == '\\';
            continue;
        }
        if (!(s[i] == '-' || (s[i] >= '0' && s[i] <= '9')))
            continue;
        size_t a = i;
        int fl = 0;
        while (i < n && (s[i] == '-' || s[i] == '+' || s[i] == '.' || s[i] == 'e' || s[i] == 'E' ||
                         (s[i] >= '0' && s[i] <= '9'))) {
            fl |= s[i] == '.' || s[i] == 'e' || s[i] == 'E';
            i++;
        }
        if (fl) {
            char local[64], *buf = i - a < sizeof local ? local : malloc(i - a + 1);
            if (!buf)
                return 1;
            memcpy(buf, s + a, i - a);
            buf[i - a] = 0;
            double v = strtod(buf, NULL);
            if (buf != local)
                free(buf);
            if (!isfinite(v))
                return 1;
        }
        i--;
    }
    return 0;
}

int tp_nsxml_value(const tp_schema *sc, int node, const char *ns, const uint8_t *raw, size_t n, tp_json *js,
                   uint32_t max_depth, tp_buf *out)
{
    static const uint8_t EMPTY[1] = {0};
    if (!raw)
        raw = EMPTY;
    if (!sc)
        node = TP_SN_NONE;
    size_t start = out->len, nsl = strlen(ns);
    tree_t t;
    memset(&t, 0, sizeof t);
    t.raw = raw;
    t.sc = sc;
    t.js = js;
    t.max_depth = max_depth;
    t.out = out;
    tp_buf_init(&t.scratch, 0);
    uint8_t f = node < 0 ? TP_SN_UNTYPED : sc->nodes[node].flags;
    int res;
    if (find_ns(raw, n, ns, nsl)) {
        res = build(&t, n, ns, nsl);
        if (!res && t.el[0].nchild) {
            if (t.deepest > max_depth) /* (the value is its text) */
                res = put_text(out, raw, n);
            else
                res = container(&t, 0, node);
            tree_free(&t);
            if (res)
                out->len = start;
            return res ? -1 : TP_TV_TEXT;
        }
        tree_free(&t);
        if (res)
            return -1;
    } else {
        tree_free(&t);
    }
    if (blank(raw, n)) {
        t.out = out;
        t.sc = sc;
        t.js = js;
        res = f & TP_SN_SCALAR ? leaf(&t, node, raw, n) : empty(&t, node);
        return res ? -1 : TP_TV_TEXT;
    }
    if (f & TP_SN_CONTAINER) {
        res = tp_json_value(js, max_depth, raw, n, out);
        if (res == -2)
            return -1;
        if (res < 0) {
            out->len = start;
            return TP_TV_HOST;
        }
        if (res == 1 && !past_double(out->data + start, out->len - start))
            return TP_TV_TEXT;
        out->len = start;
        return put_text(out, raw, n) ? -1 : TP_TV_TEXT;
    }
    t.out = out;
    t.sc = sc;
    t.js = js;
    return leaf(&t, node, raw, n) ? -1 : TP_TV_TEXT;
}
