/* Parser lifecycle, tool set and format registry. */
#include <stdlib.h>
#include <string.h>

#include "tp_internal.h"

static const tp_format *const FORMATS[] = {
    &tp_fmt_qwen25,
    &tp_fmt_hermes,
    &tp_fmt_glm45,
    &tp_fmt_glm47,
    &tp_fmt_deepseekv3,
    &tp_fmt_deepseekv31,
    &tp_fmt_deepseekv32,
    &tp_fmt_deepseekv4,
    &tp_fmt_deepseekv41,
};
#define NFORMATS (sizeof(FORMATS) / sizeof(FORMATS[0]))
static const char *FORMAT_NAMES[NFORMATS + 1];
static int initialized;

int tp_global_init(void)
{
    if (initialized)
        return 0;
    if (tp_fmt_jsontag_init())
        return -1;
    if (tp_fmt_glm_init() || tp_fmt_deepseek_init() || tp_fmt_dsml_init())
        return -1;
    for (size_t i = 0; i < NFORMATS; i++)
        FORMAT_NAMES[i] = FORMATS[i]->name;
    FORMAT_NAMES[NFORMATS] = NULL;
    initialized = 1;
    return 0;
}

const tp_format *tp_format_find(const char *name)
{
    for (size_t i = 0; i < NFORMATS; i++)
        if (strcmp(FORMATS[i]->name, name) == 0)
            return FORMATS[i];
    return NULL;
}

const char *const *tp_format_names(void) { return FORMAT_NAMES; }

static const char *const ERROR_NAMES[TP_ERR__COUNT] = {
    "ok", "json_syntax", "json_depth", "json_number", "buffer_limit", "unknown_tool",
    "missing_name", "bad_name", "unterminated", "trailing_content", "call_limit",
    "bad_markup", "no_memory",
};

const char *tp_error_name(int code)
{
    return code >= 0 && code < TP_ERR__COUNT ? ERROR_NAMES[code] : "unknown";
}

void tp_limits_default(tp_limits *lim)
{
    lim->max_buffer = TP_DEFAULT_MAX_BUFFER;
    lim->max_depth = TP_DEFAULT_MAX_DEPTH;
    lim->max_calls = TP_DEFAULT_MAX_CALLS;
    lim->max_name = TP_DEFAULT_MAX_NAME;
}

int tp_parser_init(tp_parser *p, const tp_format *fmt, const tp_limits *lim, uint32_t flags)
{
    memset(p, 0, sizeof(*p));
    if (!fmt || tp_global_init())
        return -1;
    p->fmt = fmt;
    if (lim)
        p->lim = *lim;
    else
        tp_limits_default(&p->lim);
    if (p->lim.max_depth == 0 || p->lim.max_depth > TP_JSON_DEPTH_CAP)
        p->lim.max_depth = TP_JSON_DEPTH_CAP;
    if (p->lim.max_buffer == 0)
        p->lim.max_buffer = TP_DEFAULT_MAX_BUFFER;
    if (p->lim.max_name == 0)
        p->lim.max_name = TP_DEFAULT_MAX_NAME;
    p->flags = flags;
    p->cur = -1;
    p->tool_id = -1;
    tp_buf_init(&p->out, 0);
    tp_buf_init(&p->ws, TP_WS_HOLD_MAX);
    tp_buf_init(&p->name, p->lim.max_name);
    tp_buf_init(&p->key, p->lim.max_name);
    tp_buf_init(&p->pending, p->lim.max_buffer);
    return 0;
}

void tp_parser_free(tp_parser *p)
{
    free(p->ev);
    p->ev = NULL;
    p->nev = p->evcap = 0;
    tp_buf_free(&p->out);
    tp_buf_free(&p->ws);
    tp_buf_free(&p->name);
    tp_buf_free(&p->key);
    tp_buf_free(&p->pending);
    free(p->tools.names);
    free(p->tools.off);
    free(p->tools.slots);
    memset(&p->tools, 0, sizeof(p->tools));
    tp_params_free(p);
}

/* ---- tool set: open addressing over FNV-1a ---- */

static uint32_t fnv1a(const uint8_t *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 16777619u;
    return h;
}

int tp_parser_find_tool(const tp_parser *p, const uint8_t *name, size_t len)
{
    const tp_toolset *t = &p->tools;
    if (!t->nslots)
        return -1;
    uint32_t mask = t->nslots - 1;
    for (uint32_t h = fnv1a(name, len) & mask;; h = (h + 1) & mask) {
        uint32_t id = t->slots[h];
        if (!id)
            return -1;
        id--;
        size_t l = t->off[id + 1] - t->off[id];
        if (l == len && memcmp(t->names + t->off[id], name, len) == 0)
            return (int)id;
    }
}

static int rehash(tp_toolset *t, uint32_t nslots)
{
    uint32_t *slots = calloc(nslots, sizeof(uint32_t));
    if (!slots)
        return -1;
    for (uint32_t id = 0; id < t->n; id++) {
        const uint8_t *s = t->names + t->off[id];
        uint32_t h = fnv1a(s, t->off[id + 1] - t->off[id]) & (nslots - 1);
        while (slots[h])
            h = (h + 1) & (nslots - 1);
        slots[h] = id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return 0;
}

int tp_parser_add_tool(tp_parser *p, const uint8_t *name, size_t len)
{
    tp_toolset *t = &p->tools;
    int found = tp_parser_find_tool(p, name, len);
    if (found >= 0)
        return found;
    if (len > UINT32_MAX / 4 || t->names_len + len > UINT32_MAX / 2 || t->n >= (1u << 24))
        return -1;
    if (t->names_len + len > t->names_cap) {
        size_t cap = (t->names_cap + len) * 2;
        uint8_t *nn = realloc(t->names, cap ? cap : 1);
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
        t->cap = cap;
    }
    if ((t->n + 1) * 2 > t->nslots && rehash(t, t->nslots ? t->nslots * 2 : 32))
        return -1;
    if (len)
        memcpy(t->names + t->names_len, name, len);
    t->off[t->n] = (uint32_t)t->names_len;
    t->names_len += len;
    t->off[t->n + 1] = (uint32_t)t->names_len;
    uint32_t mask = t->nslots - 1;
    uint32_t h = fnv1a(name, len) & mask;
    while (t->slots[h])
        h = (h + 1) & mask;
    t->slots[h] = ++t->n;
    return (int)(t->n - 1);
}

/* ---- feeding ---- */

static void begin_batch(tp_parser *p)
{
    p->nev = 0;
    tp_buf_clear(&p->out);
    tp_buf_shrink(&p->out, 1u << 16);
    if (p->evcap > 1024) { /* one huge batch must not pin its event array */
        free(p->ev);
        p->ev = NULL;
        p->evcap = 0;
    }
}

int tp_parser_feed(tp_parser *p, const uint8_t *data, size_t n)
{
    begin_batch(p);
    if (p->oom)
        return -1;
    if (p->finished || n == 0)
        return 0;
    p->fmt->feed(p, data, n);
    p->base += n;
    return p->oom ? -1 : 0;
}

int tp_parser_finish(tp_parser *p)
{
    begin_batch(p);
    if (p->oom)
        return -1;
    if (p->finished)
        return 0;
    p->finished = 1;
    p->fmt->finish(p);
    return p->oom ? -1 : 0;
}
