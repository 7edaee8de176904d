/* Parameter kinds of declared tools (schema-typed formats such as GLM).
 *
 * A string set keyed by (tool id, parameter name): the key bytes are the
 * tool id (4 bytes, host order) followed by the name. Open addressing over
 * FNV-1a, like the tool set; each entry carries a TP_PARAM_* kind. */
#include <stdlib.h>
#include <string.h>

#include "tp_internal.h"

#define KEY_MAX 4096u /* longest parameter name accepted (bytes) */

static uint32_t fnv1a2(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < na; i++)
        h = (h ^ a[i]) * 16777619u;
    for (size_t i = 0; i < nb; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

static int find(const tp_toolset *t, const uint8_t id[4], const uint8_t *name, size_t len)
{
    if (!t->nslots)
        return -1;
    uint32_t mask = t->nslots - 1;
    for (uint32_t h = fnv1a2(id, 4, name, len) & mask;; h = (h + 1) & mask) {
        uint32_t e = t->slots[h];
        if (!e)
            return -1;
        e--;
        const uint8_t *k = t->names + t->off[e];
        size_t l = t->off[e + 1] - t->off[e];
        if (l == len + 4 && memcmp(k, id, 4) == 0 && memcmp(k + 4, name, len) == 0)
            return (int)e;
    }
}

static int rehash(tp_toolset *t, uint32_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof(uint32_t));
    if (!slots)
        return -1;
    for (uint32_t e = 0; e < t->n; e++) {
        const uint8_t *k = t->names + t->off[e];
        uint32_t h = fnv1a2(k, 4, k + 4, t->off[e + 1] - t->off[e] - 4) & (nslots - 1);
        while (slots[h])
            h = (h + 1) & (nslots - 1);
        slots[h] = e + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return 0;
}

static void id_bytes(int tool_id, uint8_t out[4])
{
    uint32_t v = (uint32_t)tool_id;
    memcpy(out, &v, 4);
}

int tp_parser_param_kind(const tp_parser *p, int tool_id, const uint8_t *name, size_t len)
{
    if (tool_id < 0 || len > KEY_MAX)
        return TP_PARAM_UNKNOWN;
    uint8_t id[4];
    id_bytes(tool_id, id);
    int e = find(&p->params, id, name, len);
    return e < 0 ? TP_PARAM_UNKNOWN : p->param_kind[e];
}

int tp_parser_add_param(tp_parser *p, int tool_id, const uint8_t *name, size_t len, int kind)
{
    tp_toolset *t = &p->params;
    if (tool_id < 0 || (uint32_t)tool_id >= p->tools.n || len > KEY_MAX || kind < 0 || kind > 255)
        return -1;
    uint8_t id[4];
    id_bytes(tool_id, id);
    int e = find(t, id, name, len);
    if (e >= 0) {
        p->param_kind[e] = (uint8_t)kind;
        return 0;
    }
    size_t klen = len + 4;
    if (t->names_len + klen > UINT32_MAX / 2 || t->n >= (1u << 24))
        return -1;
    if (t->names_len + klen > t->names_cap) {
        size_t cap = (t->names_cap + klen) * 2;
        uint8_t *nn = realloc(t->names, cap);
        if (!nn)
            return -1;
        t->names = nn;
        t->names_cap = cap;
    }
    if (t->n + 2 > t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 16;
        uint32_t *off = realloc(t->off, cap * sizeof(uint32_t));
        if (!off)
            return -1;
        t->off = off;
        uint8_t *kinds = realloc(p->param_kind, cap);
        if (!kinds)
            return -1;
        p->param_kind = kinds;
        t->cap = cap;
    }
    if ((t->n + 1) * 2 > t->nslots && rehash(t, t->nslots ? t->nslots * 2 : 32))
        return -1;
    memcpy(t->names + t->names_len, id, 4);
    if (len)
        memcpy(t->names + t->names_len + 4, name, len);
    t->off[t->n] = (uint32_t)t->names_len;
    t->names_len += klen;
    t->off[t->n + 1] = (uint32_t)t->names_len;
    p->param_kind[t->n] = (uint8_t)kind;
    uint32_t mask = t->nslots - 1;
    uint32_t h = fnv1a2(id, 4, name, len) & mask;
    while (t->slots[h])
        h = (h + 1) & mask;
    t->slots[h] = ++t->n;
    return 0;
}

void tp_params_free(tp_parser *p)
{
    free(p->params.names);
    free(p->params.off);
    free(p->params.slots);
    free(p->param_kind);
    memset(&p->params, 0, sizeof(p->params));
    p->param_kind = NULL;
}
