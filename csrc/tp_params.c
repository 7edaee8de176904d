/* The parser's view of its tools: its own (tp_parser_add_tool/add_param)
 * or a shared compiled list (tp_parser_use_tools). */
#include "tp_internal.h"

const tp_tools *tp_parser_tools(const tp_parser *p) { return p->shared ? p->shared : &p->own; }

void tp_parser_use_tools(tp_parser *p, const tp_tools *t) { p->shared = t; }

int tp_parser_find_tool(const tp_parser *p, const uint8_t *name, size_t len)
{
    return tp_tools_find(tp_parser_tools(p), name, len);
}

int tp_parser_add_tool(tp_parser *p, const uint8_t *name, size_t len)
{
    return p->shared ? -1 : tp_tools_add(&p->own, name, len);
}

int tp_parser_param_kind_mask(const tp_parser *p, int tool_id, const uint8_t *name, size_t len,
                              unsigned *mask)
{
    return tp_tools_kind(tp_parser_tools(p), tool_id, name, len, mask);
}

int tp_parser_param_kind(const tp_parser *p, int tool_id, const uint8_t *name, size_t len)
{
    unsigned mask;
    return tp_tools_kind(tp_parser_tools(p), tool_id, name, len, &mask);
}

int tp_parser_add_param(tp_parser *p, int tool_id, const uint8_t *name, size_t len, int kind)
{
    return p->shared ? -1 : tp_tools_add_param(&p->own, tool_id, name, len, kind, 0);
}
