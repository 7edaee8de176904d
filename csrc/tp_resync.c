/* Skipping the rest of a malformed JSON value, for formats whose calls have
 * no end tag to resume at (Llama 3, Mistral v11+): brackets are counted
 * outside strings from where the scanner gave up, leniently (the value is
 * known to be broken), until the value's outermost bracket closes. The
 * skipped bytes are the error's dropped text (tp_dropped.c): its record
 * ends there. */
#include "tp_internal.h"

void tp_resync_start(tp_parser *p, const tp_json *j, uint32_t outer)
{
    int failed = j && tp_json_failed(j);
    p->resync_depth = outer + (failed ? j->depth : 0);
    p->resync_str = failed && j->err_in_str;
}

size_t tp_resync(tp_parser *p, const uint8_t *s, size_t n, int end_drop)
{
    size_t k = 0;
    for (; k < n && p->resync_depth; k++) {
        uint8_t c = s[k];
        if (p->resync_str == 2)
            p->resync_str = 1;
        else if (p->resync_str)
            p->resync_str = c == '\\' ? 2 : c != '"';
        else if (c == '"')
            p->resync_str = 1;
        else if (c == '{' || c == '[')
            p->resync_depth++;
        else if (c == '}' || c == ']')
            p->resync_depth--;
    }
    if (!p->resync_depth && end_drop)
        tp_drop_end_at(p, s + k, 0); /* the error's record ends with the value */
    return k;
}
