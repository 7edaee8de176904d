/* Parameter kinds of declared tools (schema-typed formats such as GLM):
 * a string set keyed by (tool id, parameter name), the key bytes being the
 * tool id (4 bytes, host order) followed by the name; each entry carries a
 * TP_PARAM_* kind. */
#include <stdlib.h>
#include <string.h>

#include "tp_internal.h"

#define KEY_MAX 4096u /* longest parameter name accepted (bytes) */

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
    int e = tp_strset_find(&p->params, id, 4, name, len);
    return e < 0 ? TP_PARAM_UNKNOWN : p->param_kind[e];
}

int tp_parser_add_param(tp_parser *p, int tool_id, const uint8_t *name, size_t len, int kind)
{
    if (tool_id < 0 || (uint32_t)tool_id >= p->tools.n || len > KEY_MAX || kind < 0 || kind > 255)
        return -1;
    uint8_t id[4];
    id_bytes(tool_id, id);
    uint32_t before = p->params.n;
    int e = tp_strset_add(&p->params, id, 4, name, len);
    if (e < 0)
        return -1;
    if (p->params.n != before) { /* a new key: grow the kinds alongside */
        uint8_t *kinds = realloc(p->param_kind, p->params.cap);
        if (!kinds)
            return -1;
        p->param_kind = kinds;
    }
    p->param_kind[e] = (uint8_t)kind;
    return 0;
}

void tp_params_free(tp_parser *p)
{
    tp_strset_free(&p->params);
    free(p->param_kind);
    p->param_kind = NULL;
}
