#include "tp_strset.h"

#include <stdlib.h>
#include <string.h>

static uint32_t hash2(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < na; i++)
        h = (h ^ a[i]) * 16777619u;
    for (size_t i = 0; i < nb; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

static uint32_t hash_key(const tp_strset *t, uint32_t id)
{
    return hash2(t->keys ? t->keys + t->off[id] : NULL, t->off[id + 1] - t->off[id], NULL, 0);
}

int tp_strset_find(const tp_strset *t, const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    if (!t->nslots)
        return -1;
    uint32_t mask = t->nslots - 1;
    for (uint32_t h = hash2(a, na, b, nb) & mask;; h = (h + 1) & mask) {
        uint32_t id = t->slots[h];
        if (!id)
            return -1;
        id--;
        const uint8_t *k = t->keys ? t->keys + t->off[id] : NULL; /* (only empty keys stored yet) */
        if (t->off[id + 1] - t->off[id] == na + nb && (na == 0 || memcmp(k, a, na) == 0) &&
            (nb == 0 || memcmp(k + na, b, nb) == 0))
            return (int)id;
    }
}

static int rehash(tp_strset *t, uint32_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof(uint32_t));
    if (!slots)
        return -1;
    for (uint32_t id = 0; id < t->n; id++) {
        uint32_t h = hash_key(t, id) & (nslots - 1);
        while (slots[h])
            h = (h + 1) & (nslots - 1);
        slots[h] = id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return 0;
}

int tp_strset_add(tp_strset *t, const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    int found = tp_strset_find(t, a, na, b, nb);
    if (found >= 0)
        return found;
    size_t len = na + nb;
    if (len > UINT32_MAX / 4 || t->keys_len + len > UINT32_MAX / 2 || t->n >= (1u << 24))
        return -1;
    if (t->keys_len + len > t->keys_cap) {
        size_t cap = (t->keys_cap + len) * 2;
        uint8_t *k = realloc(t->keys, cap ? cap : 1);
        if (!k)
            return -1;
        t->keys = k;
        t->keys_cap = cap;
    }
    if (t->n + 2 > t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 16;
        uint32_t *off = realloc(t->off, cap * sizeof(uint32_t));
        if (!off)
            return -1;
        t->off = off;
        t->cap = cap;
    }
    if ((t->n + 1) * 2 > t->nslots && rehash(t, t->nslots ? t->nslots * 2 : 32))
        return -1;
    if (na)
        memcpy(t->keys + t->keys_len, a, na);
    if (nb)
        memcpy(t->keys + t->keys_len + na, b, nb);
    t->off[t->n] = (uint32_t)t->keys_len;
    t->keys_len += len;
    t->off[t->n + 1] = (uint32_t)t->keys_len;
    uint32_t mask = t->nslots - 1;
    uint32_t h = hash2(a, na, b, nb) & mask;
    while (t->slots[h])
        h = (h + 1) & mask;
    t->slots[h] = ++t->n;
    return (int)(t->n - 1);
}

void tp_strset_free(tp_strset *t)
{
    free(t->keys);
    free(t->off);
    free(t->slots);
    memset(t, 0, sizeof(*t));
}
