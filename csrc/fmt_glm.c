/* The GLM engine: a tool name, then <arg_key>/<arg_value> pairs, one state
 * machine for every family that writes this shape; each family is a row of
 * ROWS (tag spellings, the tokens that end a name, an optional wrapper
 * block), as fmt_dsml.c and fmt_xmlparam.c take their spellings.
 *
 *   GLM-4.5/4.6 ("glm45") and GLM-4.7/5 ("glm47"):
 *   <tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n...</tool_call>
 *   <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>
 *
 * Both spellings are read by one state machine: the name ends at <arg_key>,
 * </tool_call>, a newline or a literal "\n" escape (surrounding whitespace
 * is stripped), or at a row's own separator token (Hunyuan's <tool_sep>);
 * between the parts, whitespace and literal "\n" escapes are formatting;
 * anything else there is prose inside the call: bad_markup, the call
 * stands (tp_junk.c; SGLang's regexes skip it). Zero-argument calls give
 * {}. A missing </tool_call> before the next <tool_call> is tolerated; the
 * end of the stream inside a call is an "unterminated" error. A row with a
 * wrapper block (Hunyuan's <tool_calls>...</tool_calls>) reads calls only
 * inside it; the block's tags are markup, and prose inside it is text.
 * K2 Horizon's row has an optional group instead (its tags where they make
 * no call are bad_markup carrying them), hands a JSON body to
 * fmt_jsontag.c's k2_horizon row (its template's json dialect) and reads
 * think blocks that lead the stream as text.
 * A block tag that no call stands next to is markup of no call, reported
 * with its bytes (bad_markup): a block that closes with no call in it (the
 * whole block), an opener followed by prose (the opener and the blanks
 * after it), a closer or stray end tag after prose (the tag); a block cut
 * off before its first call is text (and "unterminated"), as a call cut
 * off before its announcement is; a partial tag the stream ends with after
 * a call is "unterminated" with those bytes.
 *
 * Values are raw text whose JSON type comes from the tool's schema,
 * compiled once per tool list into a kind per parameter (tp_types.h). This
 * module only decides *how to stream* a value:
 *
 *  - A parameter declared TP_PARAM_STRING is its raw text, as the chat
 *    templates render a string argument (`v` if it is a string, `tojson`
 *    otherwise): it streams as JSON-escaped string content while it is
 *    generated, holding back only a possible partial </arg_value>;
 *    whitespace inside the value is kept. (SGLang also un-quotes and
 *    JSON-decodes declared strings; see docs/PARSERS.md.) So does any value
 *    whose kind the family's row types with no step at all (its raw text
 *    whatever it is: Hunyuan's undeclared keys).
 *  - Every other value (declared non-string, undeclared key, forwarded
 *    unknown tool, no tool list) is held (bounded by lim.max_buffer) until
 *    </arg_value> and given to tp_value_complete(), which writes its JSON
 *    text by the family's rules (tp_type_rules.c) or hands it to the host.
 *
 * The core writes '{', '"key": ', ', ', streamed strings and '}' itself, so
 * one-shot and streamed results are the same for every chunking. Each byte
 * is examined once; state held between feeds is bounded by the limits. */
#include <string.h>

#include "tp_internal.h"

enum {
    M_TEXT,      /* prose; looking for the call (or block) opener */
    M_NAME,      /* tool name */
    M_BETWEEN,   /* before <arg_key> or </tool_call> */
    M_KEY,       /* inside <arg_key>...</arg_key> */
    M_AFTER_KEY, /* before <arg_value> */
    M_VALUE,     /* inside <arg_value>...</arg_value> */
    M_SKIP,      /* a broken call: drop everything up to its end tag */
    M_BLOCK,     /* inside a wrapper block, between calls */
    M_TYPE,      /* inside a row's type tag (k2_horizon's <ifm|arg_type>) */
    M_THINK,     /* inside a think block that leads the stream (k2_horizon): text */
};
enum { VK_DROP, VK_RAW, VK_STREAM };
/* fstate in M_BLOCK: prose began (blanks are then text, not formatting);
 * block rows: the raw record (p->raw_on) is the block's, from its opener,
 * with nothing but blanks (and markup of no call) since */
enum { FS_PROSE = 1, FS_OPEN = 2 };

/* marker indices of each matcher (the block ones only in a block row) */
enum { T_OPEN, T_STRAY, T_GOPEN, T_GCLOSE, T_THINK }; /* text_m: call (block) opener, stray closer; an optional
                                                       * group's tags; think openers (rows with a group) */
enum { B_CALL, B_END, B_STRAY, B_NESTED };  /* block_m */
enum { N_KEY, N_CLOSE, N_SEP };             /* name_m: then the row's separators */
enum { W_KEY, W_CLOSE, W_CALL, W_BLOCK_END };             /* between_m */
enum { A_VALUE, A_KEY, A_CLOSE, A_CALL, A_BLOCK_END };    /* akey_m */
enum { S_CLOSE, S_CALL, S_BLOCK_END };                    /* skip_m */

#define MAX_SEPS 4
#define MAX_THINK 3

typedef struct {
    const tp_format *fmt;
    const char *block_open, *block_close; /* NULL: calls stand alone */
    /* an optional group (k2_horizon): calls inside it or alone; its tags are
     * markup wherever they stand, blanks inside it (after its opener or a
     * call) are formatting */
    const char *group_open, *group_close;
    /* a type tag between a key and its value (k2_horizon's xml_typed): the
     * value of a parameter the schema leaves untyped or a union is its raw
     * text when the tag says "string" or "any" */
    const char *type_open, *type_close;
    uint8_t ws_text; /* blanks before a call or group tag and after a call are text */
    /* a body that starts with '{' or '[' (K2 Horizon's json dialect) is
     * read by fmt_jsontag.c's k2_horizon row, handed back after its end tag */
    uint8_t json_body;
    /* think blocks that may lead the stream (blanks around them): their
     * text is text, no call is read in them (K2V3Detector passes them
     * through); elsewhere an opener is text too */
    const char *think_open[MAX_THINK], *think_close[MAX_THINK];
    uint8_t nthink;
    const char *call_open, *call_close;
    const char *key_open, *key_close, *value_open, *value_close;
    /* more tokens that end a name; with nl_seps the first two are "\n" and
     * "\\n" (blank lines before a name are skipped) */
    const char *seps[MAX_SEPS];
    uint8_t nseps, nl_seps;
    /* between_m / akey_m index of the literal "\n" escape (nl_seps rows:
     * formatting between the parts, as a blank is), 0xFF: none */
    uint8_t w_esc, a_esc;
    tp_matcher text_m, block_m, name_m, between_m, key_m, akey_m, value_m, skip_m, type_m, think_m;
} glm_row;

#define GLM_TAGS                                                                     \
    .call_open = "<tool_call>", .call_close = "</tool_call>", .key_open = "<arg_key>", \
    .key_close = "</arg_key>", .value_open = "<arg_value>", .value_close = "</arg_value>"
#define NL_SEPS .seps = {"\n", "\\n"}, .nseps = 2, .nl_seps = 1

static glm_row ROWS[] = {
    {.fmt = &tp_fmt_glm45, GLM_TAGS, NL_SEPS},
    {.fmt = &tp_fmt_glm47, GLM_TAGS, NL_SEPS},
    /* inclusionAI Ling-3 / Ring: GLM-4.5's spelling; the name may also end
     * at <arg_key> or </tool_call> (every row reads that) */
    {.fmt = &tp_fmt_ling3, GLM_TAGS, NL_SEPS},
    /* IQuest Coder: GLM-4.7's spelling inside its own call tags */
    {.fmt = &tp_fmt_iquest_q1, .call_open = "<iquest_tool_call>", .call_close = "</iquest_tool_call>",
     .key_open = "<arg_key>", .key_close = "</arg_key>", .value_open = "<arg_value>", .value_close = "</arg_value>",
     NL_SEPS},
    /* Poolside Laguna: GLM-4.5's spelling */
    {.fmt = &tp_fmt_poolside_v1, GLM_TAGS, NL_SEPS},
    /* iFlytek Spark 2.5: GLM's tags, a newline after the name */
    {.fmt = &tp_fmt_spark25, GLM_TAGS, NL_SEPS},
    /* Tencent Hunyuan (Hy3/Hy4): calls inside <tool_calls>, the name ends at
     * <tool_sep> (Hy4 writes none: at <arg_key> or </tool_call>); the
     * shipping tokenizers spell every tag with a ":opensource" suffix */
    {.fmt = &tp_fmt_hunyuan, .block_open = "<tool_calls>", .block_close = "</tool_calls>", GLM_TAGS,
     .seps = {"<tool_sep>"}, .nseps = 1},
    {.fmt = &tp_fmt_hunyuan_os, .block_open = "<tool_calls:opensource>", .block_close = "</tool_calls:opensource>",
     .call_open = "<tool_call:opensource>", .call_close = "</tool_call:opensource>",
     .key_open = "<arg_key:opensource>", .key_close = "</arg_key:opensource>",
     .value_open = "<arg_value:opensource>", .value_close = "</arg_value:opensource>",
     .seps = {"<tool_sep:opensource>", "<tool_sep>"}, .nseps = 2},
    /* MBZUAI/LLM360 K2 Horizon (the chat template's xml and xml_typed
     * tool_call_format): <ifm|tool_calls>\n<ifm|tool_call>NAME\n
     * <ifm|arg_key>K</ifm|arg_key>\n[<ifm|arg_type>T</ifm|arg_type>\n]
     * <ifm|arg_value>V</ifm|arg_value>\n</ifm|tool_call>\n</ifm|tool_calls>;
     * the name ends at <ifm|arg_key> or </ifm|tool_call> */
    {.fmt = &tp_fmt_k2_horizon, .group_open = "<ifm|tool_calls>", .group_close = "</ifm|tool_calls>",
     .call_open = "<ifm|tool_call>", .call_close = "</ifm|tool_call>", .key_open = "<ifm|arg_key>",
     .key_close = "</ifm|arg_key>", .value_open = "<ifm|arg_value>", .value_close = "</ifm|arg_value>",
     .type_open = "<ifm|arg_type>", .type_close = "</ifm|arg_type>", .ws_text = 1, .json_body = 1,
     .think_open = {"<ifm|think>", "<ifm|think_fast>", "<ifm|think_faster>"},
     .think_close = {"</ifm|think>", "</ifm|think_fast>", "</ifm|think_faster>"}, .nthink = 3},
};
#define NROWS (sizeof(ROWS) / sizeof(ROWS[0]))

int tp_fmt_glm_init(void)
{
    for (size_t i = 0; i < NROWS; i++) {
        glm_row *r = &ROWS[i];
        const char *bc = r->block_close ? r->block_close : r->group_close;
        int nb = bc ? 1 : 0;
        int ng = r->group_open ? 2 : 0;
        const char *text_p[4 + MAX_THINK] = {r->block_open ? r->block_open : r->call_open,
                                             r->block_close ? r->block_close : r->call_close, r->group_open,
                                             r->group_close};
        int nthink = ng ? r->nthink : 0; /* (think openers follow the group's tags) */
        for (int k = 0; k < nthink; k++)
            text_p[4 + k] = r->think_open[k];
        const char *block_p[] = {r->call_open, bc, r->call_close, r->block_open ? r->block_open : r->group_open};
        const char *name_p[2 + MAX_SEPS] = {r->key_open, r->call_close};
        for (int k = 0; k < r->nseps; k++)
            name_p[2 + k] = r->seps[k];
        const char *between_p[5] = {r->key_open, r->call_close, r->call_open, bc};
        int nbetween = 3 + nb;
        r->w_esc = r->a_esc = 0xFF;
        if (r->nl_seps) { /* the literal "\n" escape: formatting, as a blank is */
            r->w_esc = (uint8_t)nbetween;
            between_p[nbetween++] = r->seps[1];
        }
        const char *key_p[] = {r->key_close};
        const char *akey_p[7] = {r->value_open, r->key_open, r->call_close, r->call_open, bc};
        int nakey = 4 + nb;
        if (r->type_open)
            akey_p[nakey++] = r->type_open;
        if (r->nl_seps) {
            r->a_esc = (uint8_t)nakey;
            akey_p[nakey++] = r->seps[1];
        }
        const char *type_p[] = {r->type_close};
        const char *value_p[] = {r->value_close};
        const char *skip_p[] = {r->call_close, r->call_open, bc};
        if (tp_matcher_build(&r->text_m, text_p, 2 + ng + nthink) ||
            (nthink && tp_matcher_build(&r->think_m, r->think_close, nthink)) || (nb && tp_matcher_build(&r->block_m, block_p, 4)) ||
            tp_matcher_build(&r->name_m, name_p, 2 + r->nseps) ||
            tp_matcher_build(&r->between_m, between_p, nbetween) || tp_matcher_build(&r->key_m, key_p, 1) ||
            tp_matcher_build(&r->akey_m, akey_p, nakey) || tp_matcher_build(&r->value_m, value_p, 1) ||
            tp_matcher_build(&r->skip_m, skip_p, 2 + nb) || (r->type_open && tp_matcher_build(&r->type_m, type_p, 1)))
            return -1;
    }
    return 0;
}

static const glm_row *row_of(const tp_parser *p)
{
    for (size_t i = 0; i < NROWS; i++)
        if (ROWS[i].fmt == p->fmt)
            return &ROWS[i];
    return &ROWS[0];
}

/* where a call's end leads: back to prose, or into the block */
static void go_home(tp_parser *p, const glm_row *r)
{
    p->mode = r->block_open || p->fgroup ? M_BLOCK : M_TEXT;
    p->fstate = 0; /* block: leading blanks are formatting */
}

static int is_blank(uint8_t c) { return tp_is_ws(c) || c == '\v' || c == '\f'; }

static void args_lit(tp_parser *p, const char *s)
{
    if (!p->discard)
        tp_ev_args(p, (const uint8_t *)s, strlen(s));
}

/* ---- call lifecycle ---- */

/* A <tool_call> tag. Until its name shows whether it opens a call, every
 * byte after it is kept raw in `pending`; the whitespace before it stays
 * held by the text layer. */
static int block_record(const tp_parser *p) { return (p->fstate & FS_OPEN) && p->raw_on; }

static void start_call(tp_parser *p, uint64_t off)
{
    const glm_row *r = row_of(p);
    const size_t tag_len = strlen(r->call_open);
    if (p->fgroup == 2 && p->raw_on) {
        p->fgroup = 3; /* the group opener's record runs on: the call's (its first marker) */
    } else {
        if (p->fgroup == 2)
            p->fgroup = 1;
        /* the tag ended at chunk index off + tag_len - base: recorded from there
         * (a block's first call: on from the block's opener) */
        if (!block_record(p))
            tp_raw_begin(p, r->call_open, tag_len, (size_t)(off + tag_len - p->base));
    }
    p->mode = M_NAME;
    p->have_name = 0; /* a blank followed the name's first bytes */
    p->have_args = 0; /* ... and then more of it: the tag was prose */
    p->node = 0;
    p->call_off = off;
    p->discard = 0;
    p->first = 1;
    p->tool_id = -1;
    tp_buf_clear(&p->name);
    tp_buf_clear(&p->key);
    tp_buf_clear(&p->pending);
}

/* an error inside the call: report it and skip to the end tag */
static void broken(tp_parser *p, int code, uint64_t off)
{
    if (p->fgroup == 3)
        p->fgroup = 1; /* the group opener's record is this call's */
    p->trailing_reported = 0; /* the tag opened a call (as name_done): a </tool_call> after it closes no prose tag */
    tp_call_fail(p, code, off);
    tp_buf_clear(&p->pending);
    tp_buf_shrink(&p->pending, 0);
    p->mode = M_SKIP;
    p->node = 0;
    p->after_call = 1;
}

static void end_call(tp_parser *p, const glm_row *r)
{
    if (!p->discard) {
        tp_call_announce(p); /* announce point: the end of a call without arguments */
        args_lit(p, p->first ? "{}" : "}");
        tp_call_close(p);
    } else {
        p->after_call = 1;
    }
    go_home(p, r);
    p->node = 0;
    tp_buf_clear(&p->pending);
    tp_buf_shrink(&p->pending, 0);
}

static void strip(tp_buf *b, size_t *from)
{
    size_t a = 0;
    while (a < b->len && is_blank(b->data[a]))
        a++;
    while (b->len > a && is_blank(b->data[b->len - 1]))
        b->len--;
    *from = a;
}

/* the name is complete; `match` is the name_m marker that ended it */
static void name_done(tp_parser *p, const glm_row *r, int match, uint64_t off)
{
    size_t a;
    strip(&p->name, &a);
    if (p->name.len == a && r->nl_seps && (match == N_SEP || match == N_SEP + 1)) { /* blank line before the name */
        const char *nl = r->seps[match - N_SEP];
        if (tp_buf_append(&p->pending, nl, strlen(nl)))
            broken(p, TP_ERR_BAD_NAME, off - strlen(nl));
        return;
    }
    /* the tag opened a call (well-formed or not) */
    if (p->fgroup == 3)
        p->fgroup = 1; /* the group opener's record is this call's */
    tp_text_call_starts(p);
    tp_buf_clear(&p->pending);
    p->trailing_reported = 0;
    if (p->name.len == a) {
        if (match == N_CLOSE) { /* <tool_call></tool_call> */
            tp_ev_error(p, TP_ERR_BAD_NAME, off, -1, NULL, 0);
            go_home(p, r);
            p->after_call = 1;
        } else {
            broken(p, TP_ERR_BAD_NAME, off);
        }
        return;
    }
    const uint8_t *name = p->name.data + a;
    size_t len = p->name.len - a;
    if (tp_call_open(p, name, len, p->call_off)) {
        p->tool_id = tp_parser_find_tool(p, name, len);
    } else {
        p->discard = 1; /* reported; read on to find the end of the call */
    }
    if (match == N_KEY)
        p->mode = M_KEY;
    else if (match == N_CLOSE)
        end_call(p, r);
    else
        p->mode = M_BETWEEN;
    tp_buf_clear(&p->key);
    tp_buf_clear(&p->name); /* from here on: the type tag of the key being read */
}

/* the type tag read for this key says the value is text ("string" or
 * "any", blanks around it ignored) */
static int type_is_text(const tp_buf *t)
{
    size_t a = 0, b = t->len;
    while (a < b && is_blank(t->data[a]))
        a++;
    while (b > a && is_blank(t->data[b - 1]))
        b--;
    return (b - a == 6 && memcmp(t->data + a, "string", 6) == 0) ||
           (b - a == 3 && memcmp(t->data + a, "any", 3) == 0);
}

/* <arg_value> opens the value of the key just read */
static void value_open(tp_parser *p, const glm_row *r)
{
    unsigned mask;
    int kind;
    p->mode = M_VALUE;
    p->fstate = 0;
    tp_buf_clear(&p->pending);
    if (p->discard) {
        p->vkind = VK_DROP;
        return;
    }
    size_t a;
    strip(&p->key, &a);
    if (a) {
        memmove(p->key.data, p->key.data + a, p->key.len - a);
        p->key.len -= a;
    }
    tp_call_announce(p); /* announce point: <arg_key>K</arg_key><arg_value> */
    args_lit(p, p->first ? "{\"" : ", \"");
    p->first = 0;
    tp_ev_args_escaped(p, p->key.data, p->key.len);
    args_lit(p, "\": ");
    kind = tp_parser_param_kind_mask(p, p->tool_id, p->key.data, p->key.len, &mask);
    if (kind < 0 && p->rules->untyped_tools)
        kind = TP_KIND_UNTYPED;
    /* the schema decides; where it leaves the type open, the model's tag */
    int wire_text = r->type_open && (kind < 0 || kind == TP_KIND_UNTYPED || kind == TP_KIND_UNION) &&
                    type_is_text(&p->name);
    if (kind == TP_PARAM_STRING || wire_text ||
        (kind >= 0 && kind < TP_KIND__COUNT && kind != TP_KIND_HOST && p->rules->steps[kind] == 0)) {
        args_lit(p, "\""); /* the raw text, streamed as it is generated */
        p->vkind = VK_STREAM;
    } else {
        p->vkind = VK_RAW; /* held until </arg_value>, then typed */
    }
}

static void hold(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (tp_buf_append(&p->pending, s, n))
        broken(p, TP_ERR_BUFFER_LIMIT, tp_buf_limit_at(&p->pending, s, off, n));
}

static void value_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (n == 0)
        return;
    switch (p->vkind) {
    case VK_DROP:
        break;
    case VK_STREAM:
        tp_ev_args_escaped(p, s, n);
        break;
    case VK_RAW:
        hold(p, s, n, off);
        break;
    }
}

static void value_close(tp_parser *p)
{
    p->mode = M_BETWEEN;
    if (p->vkind == VK_STREAM) {
        args_lit(p, "\"");
    } else if (p->vkind == VK_RAW) {
        tp_value_complete(p, p->key.data, p->key.len, p->pending.data, p->pending.len);
    }
    tp_buf_clear(&p->pending);
    tp_buf_shrink(&p->pending, 1u << 16);
}

/* Scans s[0:n) with m; non-marker bytes (including held-back bytes that
 * turned out to be content) go to `sink` (NULL: dropped). */
typedef void (*sink_fn)(tp_parser *p, const uint8_t *s, size_t n, uint64_t off);

static size_t scan(tp_parser *p, const glm_row *row, const tp_matcher *m, const uint8_t *s, size_t n,
                   int *match, sink_fn sink, uint64_t off)
{
    tp_scan_res r;
    uint8_t old = p->node;
    uint8_t mode = p->mode;
    size_t hl = 0;
    const uint8_t *held = tp_matcher_path(m, old, &hl);
    tp_matcher_scan(m, &p->node, s, n, &r);
    if (sink) {
        if (r.held_text)
            sink(p, held, r.held_text, off - hl); /* held bytes came before this chunk */
        if (r.text_len && p->mode == mode)
            sink(p, s, r.text_len, off);
    }
    *match = r.match;
    if (p->mode != mode && p->nev && p->ev[p->nev - 1].type == TP_EV_ERROR) {
        /* a limit error: the call is skipped from the first byte that did
         * not fit, wherever the chunk boundaries are */
        uint64_t at = p->ev[p->nev - 1].offset;
        *match = -1;
        if (at < off) {
            int mm, junk;
            size_t junk_at;
            size_t from = (size_t)(at - (off - hl));
            tp_scan_skip(p, &row->skip_m, held + from, hl - from, &mm, &junk, &junk_at);
            return 0;
        }
        return (size_t)(at - off);
    }
    return r.consumed;
}

/* Name bytes (fed at most a byte plus a released partial marker at a time).
 * A name is one word: a blank inside it followed by more text means the
 * <tool_call> was prose ("use the <tool_call> tag like this"); have_args
 * records that decision for the caller, which releases the tag as text. */
static void name_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (tp_buf_append(&p->pending, s, n)) {
        broken(p, TP_ERR_BAD_NAME, tp_buf_limit_at(&p->pending, s, off, n));
        return;
    }
    for (size_t k = 0; k < n && !p->have_args; k++) {
        uint8_t c = s[k];
        if (is_blank(c)) {
            if (p->name.len == 0)
                continue; /* leading blanks */
            p->have_name = 1;
        } else if (p->name.len == 0 && (c == '{' || c == '[') && row_of(p)->json_body) {
            p->have_args = 2; /* a JSON body (K2's json dialect): fmt_jsontag.c reads it */
            return;
        } else if (p->have_name) {
            p->have_args = 1;
            return;
        }
        if (tp_buf_push(&p->name, c)) {
            broken(p, TP_ERR_BAD_NAME, off + k);
            return;
        }
    }
}

static size_t room(const tp_buf *b) { return b->limit > b->len ? b->limit - b->len : 0; }

/* How many bytes of s[0:n) (n > 0) M_NAME scans in one step: the run of
 * word bytes inside a name (none a blank, '{' or '[', nor a marker's first
 * byte, the matcher at its root), which cannot show the tag to be prose
 * nor end a marker (so name_bytes takes them all as name), short of the
 * name's and the held bytes' limits (which a byte at a time meets in
 * order); else 1. */
static size_t name_run(const tp_parser *p, const tp_matcher *m, const uint8_t *s, size_t n)
{
    if (p->node != 0 || p->name.len == 0 || p->have_name)
        return 1;
    size_t lim = room(&p->name) < room(&p->pending) ? room(&p->name) : room(&p->pending);
    if (n >= lim)
        n = lim ? lim - 1 : 0;
    size_t k = 0;
    while (k < n && !is_blank(s[k]) && s[k] != '{' && s[k] != '[' && m->next[0][s[k]] == 0)
        k++;
    return k ? k : 1;
}

/* An optional group's opener (with the blanks after it) is recorded as
 * the first call's raw text (fgroup 2; 3 once a call tag follows it). Text
 * in the group before a call, at stream offset `at`, shows that it made no
 * call: bad_markup, its record the error's dropped text, up to `at`. */
static void group_made_no_call(tp_parser *p, uint64_t at)
{
    p->fgroup = 1;
    tp_ev_error(p, TP_ERR_BAD_MARKUP, at, -1, (const uint8_t *)"a group opener with no call", 27);
}

/* A block's opener (a row with a wrapper block) ended at chunk index `at`:
 * recorded from there, as a call's first marker is, until a call or prose
 * shows what it was (an opener while the block's record is on joins it). */
static void open_block(tp_parser *p, const glm_row *r, size_t at)
{
    if (!block_record(p)) {
        tp_raw_begin(p, r->block_open, strlen(r->block_open), at);
        tp_text_call_starts(p); /* the whitespace held before it is in the record */
    }
    go_home(p, r);
    p->fstate = FS_OPEN;
    p->trailing_reported = 0; /* a </tool_call> in it closes no prose tag of before */
}

/* Prose at stream offset `at` in a block whose record is still the
 * block's: its opener (with the blanks after it) made no call. */
static void opener_no_call(tp_parser *p, uint64_t at)
{
    p->fstate &= (uint8_t)~FS_OPEN;
    tp_raw_made_no_call(p, at);
}

/* The call opener turned out to be prose: it and the bytes after it are
 * text, and a partial marker held at this point is scanned as text would
 * (in a block, where the opener and what follows are text, it is text). */
static void prose_tag(tp_parser *p, const glm_row *r, size_t at)
{
    size_t hl;
    const uint8_t *held = tp_matcher_path(&r->name_m, p->node, &hl);
    int match;
    p->node = 0;
    if (p->fgroup == 3) { /* the group opener's record ran on into this tag: it made no call */
        group_made_no_call(p, p->call_off);
        uint64_t here = p->base + at;
        tp_drop_end(p, at, here > p->call_off ? (size_t)(here - p->call_off) : 0);
    }
    if (block_record(p))
        opener_no_call(p, p->call_off);
    else
        tp_raw_end(p);
    /* the tag and every byte after it (pending) at their stream offsets, so
     * that a blank they end with goes with a block opener that follows */
    size_t tl = strlen(r->call_open);
    tp_text_at(p, (const uint8_t *)r->call_open, tl, p->call_off);
    tp_text_at(p, p->pending.data, p->pending.len, p->call_off + tl);
    tp_buf_clear(&p->pending);
    go_home(p, r);
    p->fstate = FS_PROSE;
    p->trailing_reported = 1; /* a </tool_call> after it is prose too */
    if (hl && !r->block_open && !p->fgroup)
        tp_scan_text(p, &r->text_m, held, hl, &match);
    else if (hl)
        tp_text(p, held, hl);
}

/* prose inside a block: blanks after its opener or a call are formatting */
static void block_text(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (!(p->fstate & FS_PROSE)) {
        while (n && tp_is_ws(*s))
            s++, n--, off++;
        if (!n)
            return;
        if (block_record(p))
            opener_no_call(p, off);
        p->fstate = FS_PROSE;
    }
    if (p->fgroup == 2)
        group_made_no_call(p, off); /* (the text ends its dropped text) */
    tp_text(p, s, n);
}

static void key_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (tp_buf_append(&p->key, s, n))
        broken(p, TP_ERR_BUFFER_LIMIT, tp_buf_limit_at(&p->key, s, off, n));
}

static void type_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (tp_buf_append(&p->name, s, n))
        broken(p, TP_ERR_BUFFER_LIMIT, tp_buf_limit_at(&p->name, s, off, n));
}

/* a <arg_key>: the key (and its type tag) start afresh */
static void key_start(tp_parser *p)
{
    p->mode = M_KEY;
    tp_buf_clear(&p->key);
    tp_buf_clear(&p->name);
}

/* a call closer read as text (it closes a prose tag), ending at chunk index
 * `at`: an error's dropped text ends before it */
static void closer_text(tp_parser *p, const glm_row *r, size_t at)
{
    size_t n = strlen(r->call_close);
    tp_drop_end(p, at, n);
    tp_text(p, (const uint8_t *)r->call_close, n);
}

/* the text at the stream's start (rows with think blocks): blanks, and a
 * `<` read a byte at a time while it may become a think opener; returns
 * the bytes read, 0 once the start is over (past_lead: read on as text) */
static size_t lead_step(tp_parser *p, const glm_row *r, const uint8_t *s, size_t n, int *match)
{
    *match = -1;
    if (p->node == 0 && is_blank(s[0])) {
        tp_text(p, s, 1);
        return 1;
    }
    if (p->node == 0 && s[0] != '<') {
        p->past_lead = 1;
        return 0;
    }
    size_t h0, h1;
    tp_matcher_path(&r->text_m, p->node, &h0);
    size_t k = tp_scan_text(p, &r->text_m, s, 1, match);
    tp_matcher_path(&r->text_m, p->node, &h1);
    if (*match >= 0 ? *match < T_THINK : h1 != h0 + 1)
        p->past_lead = 1; /* a call or group tag, or held bytes released as text */
    return k;
}

/* Reads s[0:n); returns the bytes read: all of them, unless a JSON body
 * was handed to fmt_jsontag.c (p->engine_alt) */
static size_t glm_feed_upto(tp_parser *p, const glm_row *r, const uint8_t *s, size_t n)
{
    const size_t open_len = strlen(r->call_open);
    size_t i = 0;
    while (i < n && !p->oom && !p->engine_alt) {
        uint64_t off = p->base + i;
        int match;
        switch (p->mode) {
        case M_TEXT:
            if (r->nthink && !p->past_lead) {
                size_t k = lead_step(p, r, s + i, n - i, &match);
                i += k;
                if (!k || match < 0)
                    break;
            } else {
                i += tp_scan_text(p, &r->text_m, s + i, n - i, &match);
            }
            if (match >= 0 && r->ws_text)
                tp_text_flush_ws(p); /* blanks before a tag: text */
            if (match >= T_THINK) { /* a think opener: text; at the start, a block of text */
                const char *t = r->think_open[match - T_THINK];
                tp_text(p, (const uint8_t *)t, strlen(t));
                if (!p->past_lead) {
                    p->mode = M_THINK;
                    p->vkind = (uint8_t)(match - T_THINK);
                }
            } else if (match == T_OPEN && r->block_open)
                open_block(p, r, i); /* the block's opener: markup */
            else if (match == T_OPEN)
                start_call(p, p->base + i - open_len);
            else if (match == T_STRAY && (p->trailing_reported || r->ws_text) && !r->block_open)
                closer_text(p, r, i); /* closes a prose tag */
            else if (match == T_GOPEN) { /* an optional group's opener: markup, the first call's record */
                tp_raw_begin(p, r->group_open, strlen(r->group_open), i);
                p->fgroup = 2;
                go_home(p, r);
            } else if (match == T_STRAY || match == T_GCLOSE) /* a stray closer: markup of no call */
                tp_stray_markup(p, r->text_m.patlen[match], i);
            break;
        case M_THINK: /* up to the closer of its opener (vkind): text */
            i += tp_scan_text(p, &r->think_m, s + i, n - i, &match);
            if (match >= 0) {
                tp_text(p, (const uint8_t *)r->think_close[match], strlen(r->think_close[match]));
                if (match == p->vkind)
                    p->mode = M_TEXT; /* still the start: blanks, another think block */
            }
            break;
        case M_BLOCK:
            i += scan(p, r, &r->block_m, s + i, n - i, &match, block_text, off);
            if (match >= 0 && r->ws_text)
                tp_text_flush_ws(p); /* blanks after prose in the group: text */
            if (match == B_CALL)
                start_call(p, p->base + i - open_len);
            else if (match == B_END && r->block_open && block_record(p)) { /* a block with no call */
                tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + i, -1, (const uint8_t *)"a block with no call", 20);
                p->mode = M_TEXT;
            } else if (match == B_END && r->block_open && (p->fstate & FS_PROSE)) { /* after prose: no call's */
                p->after_call = 1; /* the blanks before it: the template's, with it */
                tp_stray_markup(p, r->block_m.patlen[match], i);
                p->mode = M_TEXT;
            } else if (match == B_END) {
                if (p->fgroup == 2) /* a group with no call: markup of no call, the whole group */
                    tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + i, -1, (const uint8_t *)"a group with no call", 20);
                else if (r->group_open && p->fstate) /* after prose in the group: it closes no call */
                    tp_stray_markup(p, r->block_m.patlen[match], i);
                else
                    tp_text_call_starts(p); /* blanks before the block's end: formatting */
                p->mode = M_TEXT;
                p->fgroup = 0;
            } else if (match == B_STRAY && (p->trailing_reported || r->ws_text)) { /* closes a prose tag */
                if (p->fgroup == 2)
                    group_made_no_call(p, p->base + i - r->block_m.patlen[match]);
                closer_text(p, r, i);
                if (r->group_open)
                    p->fstate = 1; /* text in the group: the blanks after it are text */
            } else if (match == B_STRAY && r->block_open && !block_record(p)) { /* closes nothing */
                tp_stray_markup(p, r->block_m.patlen[match], i);
            } else if (match == B_NESTED && r->group_open && p->fgroup != 2) {
                /* another group opener (after a call or prose): the next call's record */
                tp_raw_begin(p, r->group_open, strlen(r->group_open), i);
                p->fgroup = 2;
                p->fstate = 0;
            } else if (match == B_NESTED && r->block_open) {
                open_block(p, r, i); /* another opener: read as a block's */
            }
            break;
        case M_NAME:
            /* a byte at a time, or a run of the word (name_run): the byte
             * that shows the tag is prose must not be scanned past */
            i += scan(p, r, &r->name_m, s + i, name_run(p, &r->name_m, s + i, n - i), &match, name_bytes, off);
            if (p->mode != M_NAME)
                break;
            if (p->have_args == 2) { /* a JSON body: fmt_jsontag.c reads the call from its first byte */
                i--;
                p->pending.len--; /* (the blanks before it stay held) */
                p->node = 0;
                p->engine_alt = 1; /* (fgroup 3 stays: the body may still show the tag was prose) */
                tp_jsontag_k2_enter(p, p->call_off);
            } else if (p->have_args) {
                prose_tag(p, r, i);
                if (match >= 0) /* a one-byte separator that matched as the tag showed to be prose: text */
                    tp_text_at(p, (const uint8_t *)r->name_m.pats[match], r->name_m.patlen[match],
                               p->base + i - r->name_m.patlen[match]);
            } else if (match >= 0)
                name_done(p, r, match, p->base + i);
            break;
        case M_BETWEEN:
            /* prose between the call's tags: bad_markup (tp_junk.c) */
            i += scan(p, r, &r->between_m, s + i, n - i, &match, tp_junk_bytes, off);
            if (match >= 0)
                tp_junk_tag(p, s + i, r->between_m.patlen[match]);
            if (match == r->w_esc) {
                /* (formatting) */
            } else if (match == W_KEY) {
                key_start(p);
            } else if (match >= 0) {
                end_call(p, r);
                if (match == W_CALL)
                    start_call(p, p->base + i - open_len);
                else if (match == W_BLOCK_END) {
                    p->mode = M_TEXT;
                    p->fgroup = 0;
                }
            }
            break;
        case M_KEY:
            i += scan(p, r, &r->key_m, s + i, n - i, &match, key_bytes, off);
            if (match == 0 && p->mode == M_KEY)
                p->mode = M_AFTER_KEY;
            break;
        case M_AFTER_KEY:
            i += scan(p, r, &r->akey_m, s + i, n - i, &match, tp_junk_bytes, off);
            if (match >= 0)
                tp_junk_tag(p, s + i, r->akey_m.patlen[match]);
            if (match == r->a_esc) {
                /* (formatting) */
            } else if (match == A_VALUE) {
                value_open(p, r);
            } else if (match == A_KEY) {
                key_start(p);
            } else if (match == A_BLOCK_END + (r->block_close || r->group_close ? 1 : 0) && r->type_open) {
                p->mode = M_TYPE; /* <arg_type>: read anew */
                tp_buf_clear(&p->name);
            } else if (match >= 0) {
                end_call(p, r);
                if (match == A_CALL)
                    start_call(p, p->base + i - open_len);
                else if (match == A_BLOCK_END) {
                    p->mode = M_TEXT;
                    p->fgroup = 0;
                }
            }
            break;
        case M_TYPE:
            i += scan(p, r, &r->type_m, s + i, n - i, &match, type_bytes, off);
            if (match == 0 && p->mode == M_TYPE)
                p->mode = M_AFTER_KEY;
            break;
        case M_VALUE:
            i += scan(p, r, &r->value_m, s + i, n - i, &match, value_bytes, off);
            if (match == 0 && p->mode == M_VALUE)
                value_close(p);
            break;
        case M_SKIP: {
            int junk;
            size_t junk_at = 0;
            i += tp_scan_skip(p, &r->skip_m, s + i, n - i, &match, &junk, &junk_at);
            if (match == S_CLOSE) {
                go_home(p, r);
                p->after_call = 1;
            } else if (match == S_CALL) {
                start_call(p, p->base + i - open_len);
            } else if (match == S_BLOCK_END) {
                p->mode = M_TEXT;
                p->fgroup = 0;
                p->after_call = 1;
            }
            break;
        }
        }
    }
    return i;
}

static void glm_feed(tp_parser *p, const uint8_t *s, size_t n) { glm_feed_upto(p, row_of(p), s, n); }

static void glm_finish(tp_parser *p)
{
    const glm_row *r = row_of(p);
    switch (p->mode) {
    case M_TEXT:
        tp_release_held(p, &r->text_m);
        break;
    case M_THINK:
        tp_release_held(p, &r->think_m);
        break;
    case M_BLOCK:
        if (p->fgroup == 2 || (r->block_open && block_record(p))) {
            /* a group or block cut off before its first call: its text is text */
            p->node = 0;
            tp_call_unterminated(p);
        } else if (r->group_open || (r->block_open && (p->fstate & FS_PROSE))) {
            tp_release_held(p, &r->block_m); /* a partial tag (in a block: after prose): text */
        } else if (r->block_open && p->node) { /* after a call: markup of no call */
            size_t hl;
            const uint8_t *held = tp_matcher_path(&r->block_m, p->node, &hl);
            tp_drop_held_at_end(p, TP_ERR_UNTERMINATED, held, hl);
        }
        p->node = 0; /* a partial tag: markup, not prose */
        break;
    case M_SKIP:
        p->node = 0; /* a partial tag: markup (the skip's error holds it) */
        break;
    case M_NAME: /* <tool_call> and a name cut off: a call */
        tp_text_call_starts(p);
        tp_call_unterminated(p);
        break;
    default: /* end of stream inside a call */
        tp_call_unterminated(p);
        break;
    }
    if (r->ws_text)
        p->after_call = 0; /* blanks after a call: text */
    tp_text_finish(p);
}

const tp_format tp_fmt_glm45 = {"glm45", glm_feed, glm_finish};
const tp_format tp_fmt_glm47 = {"glm47", glm_feed, glm_finish};
const tp_format tp_fmt_ling3 = {"ling3", glm_feed, glm_finish};
const tp_format tp_fmt_iquest_q1 = {"iquest_q1", glm_feed, glm_finish};
const tp_format tp_fmt_poolside_v1 = {"poolside_v1", glm_feed, glm_finish};
const tp_format tp_fmt_spark25 = {"spark25", glm_feed, glm_finish};
const tp_format tp_fmt_hunyuan = {"hunyuan", glm_feed, glm_finish};
const tp_format tp_fmt_hunyuan_os = {"hunyuan_os", glm_feed, glm_finish};
/* k2_horizon: a call moves between this engine and fmt_jsontag.c's
 * k2_horizon row (a JSON body); each hand-over ends a piece of the chunk as
 * a chunk's end does (the raw and dropped-text records), so each engine
 * reads its piece at its own stream offset */
static void k2_feed(tp_parser *p, const uint8_t *s, size_t n)
{
    const glm_row *r = row_of(p);
    const uint8_t *s0 = s;
    size_t n0 = n;
    uint64_t base0 = p->base;
    for (;;) {
        int alt = p->engine_alt;
        size_t i = alt ? tp_jsontag_k2_feed(p, s, n) : glm_feed_upto(p, r, s, n);
        if (alt && !p->engine_alt) { /* the call's end tag: the group, or prose, again */
            uint8_t prose = !p->after_call; /* (the tag was prose: text in the group follows) */
            go_home(p, r);
            p->fstate = prose;
            p->node = 0;
            p->discard = 0;
        }
        if (i >= n || p->oom || alt == p->engine_alt)
            break;
        tp_raw_chunk_end(p, s, i);
        tp_drop_keep_tail(p, s, i);
        p->base += i;
        s += i;
        n -= i;
        p->chunk = s;
        p->chunk_n = n;
    }
    if (s != s0) {
        tp_raw_chunk_end(p, s, n);
        p->base = base0;
        p->chunk = s0;
        p->chunk_n = n0;
        p->raw_at = n0; /* recorded piece by piece: nothing more of this chunk */
        p->drop_at = n0;
    }
}

static void k2_finish(tp_parser *p)
{
    if (p->engine_alt)
        tp_jsontag_k2_finish(p);
    else
        glm_finish(p);
}

const tp_format tp_fmt_k2_horizon = {"k2_horizon", k2_feed, k2_finish};
