/* Schema graphs (tp_schema.h). The blob, little-endian, every count and
 * length a u32, every node id an i32:
 *
 *   nnodes, then per node: flags (u8), mask (u8), extra, rest,
 *     nprefix, nprefix ids, nprops, per property: name length, name, id
 *   ntools, per tool: name length, name, root id
 *
 * Every id is checked to be a node or TP_SN_NONE / TP_SN_NULL_PROP. */
#include "tp_schema.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const uint8_t *p;
    size_t n, i;
    int bad;
} rd_t;

static uint32_t rd_u32(rd_t *r)
{
    if (r->n - r->i < 4) {
        r->bad = 1;
        return 0;
    }
    uint32_t v = (uint32_t)r->p[r->i] | (uint32_t)r->p[r->i + 1] << 8 | (uint32_t)r->p[r->i + 2] << 16 |
                 (uint32_t)r->p[r->i + 3] << 24;
    r->i += 4;
    return v;
}

static uint8_t rd_u8(rd_t *r)
{
    if (r->i >= r->n) {
        r->bad = 1;
        return 0;
    }
    return r->p[r->i++];
}

static int32_t rd_id(rd_t *r, uint32_t nnodes, int null_ok)
{
    int32_t v = (int32_t)rd_u32(r);
    if (v < TP_SN_NULL_PROP || (v == TP_SN_NULL_PROP && !null_ok) || (v >= 0 && (uint32_t)v >= nnodes))
        r->bad = 1;
    return v;
}

static const uint8_t *rd_bytes(rd_t *r, uint32_t *len)
{
    *len = rd_u32(r);
    if (r->bad || r->n - r->i < *len) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *s = r->p + r->i;
    r->i += *len;
    return s;
}

static void id_key(int32_t id, uint8_t out[4]) { memcpy(out, &id, 4); }

/* grows *arr (elements of `size` bytes) to hold index `at` */
static int grow(void *arr, uint32_t *cap, uint32_t at, size_t size)
{
    if (at < *cap)
        return 0;
    uint32_t c = *cap ? *cap : 16;
    while (c <= at)
        c *= 2;
    void *g = realloc(*(void **)arr, (size_t)c * size);
    if (!g)
        return -1;
    *(void **)arr = g;
    *cap = c;
    return 0;
}

tp_schema *tp_schema_load(const uint8_t *blob, size_t n)
{
    tp_schema *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    rd_t r = {blob, n, 0, 0};
    uint32_t nn = rd_u32(&r);
    if (r.bad || nn > n / 18) /* a node takes at least 18 bytes */
        goto bad;
    s->nodes = calloc(nn ? nn : 1, sizeof(tp_snode));
    if (!s->nodes)
        goto bad;
    s->n = nn;
    uint32_t pcap = 0, ncap = 0;
    for (uint32_t k = 0; k < nn && !r.bad; k++) {
        tp_snode *d = &s->nodes[k];
        d->flags = rd_u8(&r);
        d->mask = rd_u8(&r);
        d->extra = rd_id(&r, nn, 0);
        d->rest = rd_id(&r, nn, 0);
        uint32_t np = rd_u32(&r);
        if (r.bad || np > (n - r.i) / 4)
            goto bad;
        d->prefix_at = s->nprefix;
        d->prefix_n = np;
        for (uint32_t j = 0; j < np; j++) {
            if (grow(&s->prefix, &pcap, s->nprefix, sizeof(int32_t)))
                goto bad;
            s->prefix[s->nprefix++] = rd_id(&r, nn, 0);
        }
        uint32_t nprops = rd_u32(&r);
        for (uint32_t j = 0; j < nprops && !r.bad; j++) {
            uint32_t len;
            const uint8_t *name = rd_bytes(&r, &len);
            int32_t id = rd_id(&r, nn, 1);
            if (r.bad)
                goto bad;
            uint8_t key[4];
            id_key((int32_t)k, key);
            uint32_t before = s->props.n;
            int e = tp_strset_add(&s->props, key, 4, name, len);
            if (e < 0 || grow(&s->prop_node, &ncap, (uint32_t)e, sizeof(int32_t)))
                goto bad;
            if (s->props.n != before) /* a repeated name keeps its first schema */
                s->prop_node[e] = id;
        }
    }
    uint32_t nt = rd_u32(&r), tcap = 0;
    for (uint32_t j = 0; j < nt && !r.bad; j++) {
        uint32_t len;
        const uint8_t *name = rd_bytes(&r, &len);
        int32_t id = rd_id(&r, nn, 0);
        if (r.bad)
            goto bad;
        uint32_t before = s->tools.n;
        int e = tp_strset_add(&s->tools, name, len, NULL, 0);
        if (e < 0 || grow(&s->tool_root, &tcap, (uint32_t)e, sizeof(int32_t)))
            goto bad;
        if (s->tools.n != before) /* the first tool of a name */
            s->tool_root[e] = id;
    }
    if (r.bad || r.i != n)
        goto bad;
    return s;
bad:
    tp_schema_free(s);
    return NULL;
}

void tp_schema_free(tp_schema *s)
{
    if (!s)
        return;
    free(s->nodes);
    free(s->prefix);
    free(s->prop_node);
    free(s->tool_root);
    tp_strset_free(&s->props);
    tp_strset_free(&s->tools);
    free(s);
}

int tp_schema_tool(const tp_schema *s, const uint8_t *name, size_t len)
{
    if (!s)
        return TP_SN_NONE;
    int e = tp_strset_find(&s->tools, name, len, NULL, 0);
    return e < 0 ? TP_SN_NONE : s->tool_root[e];
}

static int prop(const tp_schema *s, int node, const uint8_t *name, size_t len, int *found)
{
    uint8_t key[4];
    id_key(node, key);
    int e = s->props.n ? tp_strset_find(&s->props, key, 4, name, len) : -1;
    *found = e >= 0;
    return e >= 0 ? s->prop_node[e] : TP_SN_NONE;
}

int tp_schema_param(const tp_schema *s, int root, const uint8_t *key, size_t len)
{
    if (!s || root < 0)
        return TP_SN_NONE;
    int found, id = prop(s, root, key, len, &found);
    if (found && id != TP_SN_NULL_PROP)
        return id;
    return s->nodes[root].extra;
}

int tp_schema_child(const tp_schema *s, int node, const uint8_t *tag, size_t len, size_t index)
{
    if (!s || node < 0)
        return TP_SN_NONE;
    const tp_snode *d = &s->nodes[node];
    if ((d->flags & TP_SN_ARRAY) && len == 4 && memcmp(tag, "item", 4) == 0) {
        if (index < d->prefix_n)
            return s->prefix[d->prefix_at + index];
        return d->rest;
    }
    int found, id = prop(s, node, tag, len, &found);
    if (found)
        return id == TP_SN_NULL_PROP ? TP_SN_NONE : id;
    return d->extra;
}
