/* Call lifecycle shared by every format: name validation, indices, errors. */
#include "tp_internal.h"

int tp_call_open(tp_parser *p, const uint8_t *name, size_t len, uint64_t offset)
{
    if (len == 0) {
        tp_ev_error(p, TP_ERR_BAD_NAME, offset, -1, NULL, 0);
        return 0;
    }
    if (!(p->flags & (TP_FLAG_ACCEPT_ANY | TP_FLAG_FORWARD_UNKNOWN)) &&
        tp_parser_find_tool(p, name, len) < 0) {
        tp_ev_error(p, TP_ERR_UNKNOWN_TOOL, offset, -1, name, len);
        return 0;
    }
    if ((uint32_t)p->ncalls >= p->lim.max_calls) {
        tp_ev_error(p, TP_ERR_CALL_LIMIT, offset, -1, name, len);
        return 0;
    }
    p->cur = p->ncalls++;
    size_t start = p->out.len;
    if (tp_buf_append(&p->out, name, len)) {
        p->oom = 1;
        return 0;
    }
    tp_ev_mark(p, TP_EV_CALL_START, p->cur, start);
    return 1;
}

void tp_call_close(tp_parser *p)
{
    if (p->cur >= 0)
        tp_ev_mark(p, TP_EV_CALL_END, p->cur, p->out.len);
    p->cur = -1;
    p->after_call = 1;
}

int tp_call_json_args(tp_parser *p, const uint8_t *s, size_t n, size_t *used)
{
    size_t start = p->out.len;
    *used = tp_json_feed(&p->js, s, n, &p->out);
    tp_ev_args_from(p, start);
    if (tp_json_failed(&p->js))
        return -1;
    return tp_json_done(&p->js) ? 1 : 0;
}

void tp_call_unterminated(tp_parser *p)
{
    p->node = 0;
    tp_buf_clear(&p->pending);
    tp_call_fail(p, TP_ERR_UNTERMINATED, p->base);
    p->after_call = 1;
}

void tp_call_fail(tp_parser *p, int code, uint64_t offset)
{
    tp_ev_error(p, code, offset, p->cur, NULL, 0);
    p->cur = -1;
}
