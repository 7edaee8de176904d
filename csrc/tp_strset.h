/* A set of byte strings with dense ids (0, 1, ...): tool names, and
 * (tool id, parameter name) pairs. Open addressing over FNV-1a. A key is
 * given in two parts, a ++ b, so composite keys need no copy. */
#ifndef TP_STRSET_H
#define TP_STRSET_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *keys;   /* concatenated keys */
    uint32_t *off;   /* offset of key i; off[n] = end */
    uint32_t *slots; /* id + 1, 0 = empty */
    uint32_t n, cap, nslots;
    size_t keys_len, keys_cap;
} tp_strset;

/* id of key a ++ b, or -1 */
int tp_strset_find(const tp_strset *t, const uint8_t *a, size_t na, const uint8_t *b, size_t nb);
/* id of key a ++ b, added if absent; -1 on allocation failure / size limits */
int tp_strset_add(tp_strset *t, const uint8_t *a, size_t na, const uint8_t *b, size_t nb);
void tp_strset_free(tp_strset *t);

#endif
