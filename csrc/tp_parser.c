/* Parser lifecycle, tool set and format registry. */
#include <stddef.h>
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
    &tp_fmt_kimi_k2,
    &tp_fmt_qwen3_coder,
    &tp_fmt_minimax_m2,
    &tp_fmt_llama3,
    &tp_fmt_mistral,
    &tp_fmt_pythonic,
    &tp_fmt_gpt_oss,
    &tp_fmt_ling3,
    &tp_fmt_iquest_q1,
    &tp_fmt_poolside_v1,
    &tp_fmt_spark25,
    &tp_fmt_hunyuan,
    &tp_fmt_hunyuan_os,
    &tp_fmt_mimo,
    &tp_fmt_dots,
    &tp_fmt_trinity,
    &tp_fmt_gigachat35,
    &tp_fmt_minicpm5,
    &tp_fmt_kimi_k3,
    &tp_fmt_minimax_m3,
    &tp_fmt_jsonarray,
    &tp_fmt_cohere_command4,
    &tp_fmt_apertus2509,
    &tp_fmt_step3,
    &tp_fmt_interns1,
    &tp_fmt_gigachat3,
    &tp_fmt_gemma4,
    &tp_fmt_inkling,
    &tp_fmt_lfm2,
    &tp_fmt_k2_horizon,
    &tp_fmt_muse,
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
    if (tp_fmt_glm_init() || tp_fmt_deepseek_init() || tp_fmt_dsml_init() ||
        tp_fmt_kimi_init() || tp_fmt_xmlparam_init() || tp_fmt_trinity_init() ||
        tp_fmt_pythonic_init())
        return -1;
    if (tp_fmt_nsxml_init())
        return -1;
    if (tp_fmt_harmony_init())
        return -1;
    if (tp_fmt_kvcall_init())
        return -1;
    if (tp_fmt_channel_init())
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

/* Zeroes the parser but its large scratch arrays: the JSON scanners'
 * number and nesting buffers (written before they are read: num up to
 * num_len, a nesting bit when its level opens). They are most of the
 * struct: zeroing them was most of a one-shot parse's setup. */
#define TP_JS_SCRATCH(f) (offsetof(tp_parser, f) + offsetof(tp_json, num))
#define TP_JS_END(f) (offsetof(tp_parser, f) + offsetof(tp_json, stack) + sizeof(((tp_json *)0)->stack))
_Static_assert(offsetof(tp_json, stack) == offsetof(tp_json, num) + sizeof(((tp_json *)0)->num),
               "tp_json's scratch arrays are its last fields, num then stack");
_Static_assert(TP_JS_END(js) <= TP_JS_SCRATCH(ks), "js before ks in tp_parser");

static void zero_parser(tp_parser *p)
{
    uint8_t *b = (uint8_t *)p;
    memset(b, 0, TP_JS_SCRATCH(js));
    memset(b + TP_JS_END(js), 0, TP_JS_SCRATCH(ks) - TP_JS_END(js));
    memset(b + TP_JS_END(ks), 0, sizeof(*p) - TP_JS_END(ks));
}

/* tp_parser_init; `rules`: the format's typing rules when known (else
 * looked up by its name). */
static int parser_setup(tp_parser *p, const tp_format *fmt, const tp_limits *lim, uint32_t flags,
                        const tp_type_rules *rules)
{
    zero_parser(p);
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
    p->drop_mark = UINT64_MAX;
    p->rules = rules ? rules : tp_rules_for(fmt);
    tp_buf_init(&p->out, 0);
    tp_buf_init(&p->ws, TP_WS_HOLD_MAX);
    tp_buf_init(&p->name, p->lim.max_name);
    tp_buf_init(&p->key, p->lim.max_name);
    tp_buf_init(&p->callname, p->lim.max_name);
    tp_buf_init(&p->callid, p->lim.max_name);
    tp_buf_init(&p->pending, p->lim.max_buffer);
    size_t raw_min = (size_t)TP_RAW_FLOOR + p->lim.max_name;
    tp_buf_init(&p->raw, p->lim.max_buffer > raw_min ? p->lim.max_buffer : raw_min);
    p->cp_next = TP_CHECKPOINT;
    tp_buf_init(&p->drop, 2 * TP_DROP_KEEP);
    tp_buf_init(&p->junk_spans, TP_JUNK_SPANS * 2 * sizeof(uint64_t));
    tp_buf_init(&p->ftags, 0);
    return 0;
}

int tp_parser_init(tp_parser *p, const tp_format *fmt, const tp_limits *lim, uint32_t flags)
{
    if (parser_setup(p, fmt, lim, flags, NULL) != 0)
        return -1;
    if (!(p->tail = malloc(TP_DROP_TAIL))) { /* (with the parser: a feed allocates nothing for it) */
        tp_parser_free(p);
        return -1;
    }
    return 0;
}

/* The parser's buffers: what tp_parser_free frees and tp_parser_reset
 * keeps the memory of (a buffer added to tp_parser goes here). */
#define TP_NBUFS 11
static void parser_bufs(tp_parser *p, tp_buf *b[TP_NBUFS])
{
    b[0] = &p->out;
    b[1] = &p->ws;
    b[2] = &p->name;
    b[3] = &p->key;
    b[4] = &p->callname;
    b[5] = &p->callid;
    b[6] = &p->pending;
    b[7] = &p->raw;
    b[8] = &p->drop;
    b[9] = &p->ftags;
    b[10] = &p->junk_spans;
}

/* What the parser owns besides its buffers and event array. */
static void free_owned(tp_parser *p)
{
    tp_tools_free(&p->own);
    p->shared = NULL;
    tp_json_free(&p->js); /* (their spills: a long number, deep nesting) */
    tp_json_free(&p->ks);
}

void tp_parser_free(tp_parser *p)
{
    tp_buf *b[TP_NBUFS];
    free(p->ev);
    p->ev = NULL;
    p->nev = p->evcap = 0;
    parser_bufs(p, b);
    for (size_t i = 0; i < TP_NBUFS; i++)
        tp_buf_free(b[i]);
    free(p->tail);
    p->tail = NULL;
    free_owned(p);
}

int tp_parser_reset(tp_parser *p, const tp_format *fmt, const tp_limits *lim, uint32_t flags)
{
    tp_buf *b[TP_NBUFS];
    tp_buf kept[TP_NBUFS];
    tp_event *ev = p->ev;
    size_t evcap = p->evcap;
    uint8_t *tail = p->tail; /* (the ring: kept, its bytes are read only once written again) */
    const tp_type_rules *rules = fmt && p->fmt == fmt ? p->rules : NULL; /* (found by name otherwise) */
    if (evcap > 1024) { /* as begin_batch: a huge batch's array is not kept */
        free(ev);
        ev = NULL;
        evcap = 0;
    }
    parser_bufs(p, b);
    for (size_t i = 0; i < TP_NBUFS; i++) {
        b[i]->len = 0;
        tp_buf_shrink(b[i], TP_RESET_KEEP);
        kept[i] = *b[i];
    }
    free_owned(p);
    p->ev = NULL;
    if (parser_setup(p, fmt, lim, flags, rules) != 0) {
        free(ev);
        free(tail);
        for (size_t i = 0; i < TP_NBUFS; i++)
            tp_buf_free(&kept[i]);
        return -1;
    }
    p->ev = ev;
    p->evcap = evcap;
    p->tail = tail ? tail : malloc(TP_DROP_TAIL);
    if (!p->tail) {
        tp_parser_free(p);
        return -1;
    }
    parser_bufs(p, b);
    for (size_t i = 0; i < TP_NBUFS; i++) {
        b[i]->data = kept[i].data;
        b[i]->cap = kept[i].cap;
    }
    return 0;
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

/* After the format read a piece: the checkpoint at its end (if any), the
 * raw and dropped records take their bytes from it, and its last bytes go
 * into the tail ring. Each step's usual case (no checkpoint, no record
 * on) is a check here, not a call. */
static void feed_piece(tp_parser *p, const uint8_t *data, size_t n)
{
    p->raw_at = 0;
    p->chunk = data;
    p->chunk_n = n;
    p->fmt->feed(p, data, n);
    if (!p->filtered) { /* (a filter runs the checkpoints and keeps the ring of its view) */
        uint64_t end = p->base + n;
        if (end >= p->cp_next)
            tp_piece_end(p, end, data, n);
        if (p->raw_on || p->drop_on)
            tp_raw_chunk_end(p, data, n);
        else
            p->raw_at = p->drop_at = 0; /* (what tp_raw_chunk_end does then) */
        tp_drop_keep_tail(p, data, n);
    } else {
        tp_raw_chunk_end(p, data, n);
    }
    p->chunk = NULL;
    p->base += n;
}

int tp_parser_feed(tp_parser *p, const uint8_t *data, size_t n)
{
    begin_batch(p);
    if (p->oom)
        return -1;
    if (p->finished || n == 0)
        return 0;
    /* the batch's output is about the chunk's size (a whole reply fed at
     * once: one allocation instead of one per doubling); only a hint, an
     * allocation that fails here fails again where the output needs it */
    if (p->out.cap < n)
        (void)tp_buf_reserve(&p->out, n < (1u << 16) ? n : (1u << 16));
    while (n) {
        /* (a checkpoint inside the chunk: tp_piece cuts there) */
        size_t k = p->filtered || p->cp_next - p->base >= n ? n : tp_piece(p, p->base, data, n);
        feed_piece(p, data, k);
        data += k;
        n -= k;
    }
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
    p->chunk = NULL;
    p->fmt->finish(p);
    tp_drop_finish(p);
    return p->oom ? -1 : 0;
}
