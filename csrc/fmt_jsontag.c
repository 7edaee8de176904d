/* JSON call objects with the name inside: {"name": ..., "arguments": ...}
 *
 *   qwen25, hermes: <tool_call>{"name": ..., "arguments": ...}</tool_call>
 *   llama3:         <|python_tag|>{"name": ..., "parameters": ...}; {...}
 *                   or {"name": ...} as the first thing in the output
 *   interns1:       <|action_start|><|plugin|>\n{"name": ..., "parameters": ...}<|action_end|>
 *                   (or "<|action_start|> <|plugin|>", as SGLang detokenizes)
 *   gigachat3:      <|message_sep|>\n\nfunction call<|role_sep|>\n{"name": ..., "arguments": ...}
 *                   or <|function_call|>{...} (3.1); the object's `}` ends the call
 *   inkling:        <|message_model|>NAME<|content_invoke_tool_json|>{"name": ..., "args": ...}<|end_message|>
 *                   among Inkling's other control tokens, read whole and
 *                   dropped from text (rows with `lex_lead`, below)
 *
 * One engine; the rows (ROWS below) give the tag that opens a call, the tag
 * that closes it (none for Llama 3: the object's closing `}` ends the
 * call), the byte between calls of one section (Llama 3: `;`, as SGLang's
 * Llama32Detector reads them) and whether a bare object at the start of
 * the output is a call (Llama 3.1/3.2/3.3 templates ask for plain JSON,
 * `<|python_tag|>` is optional), other spellings of the opening tag and
 * the key that holds the arguments.
 * Arcee Trinity (trinity) is the qwen25 row read after removing <think> /
 * </think> (a filter in front of the engine, at the end of this file).
 *
 *   jsonarray:      [{"name": ..., "parameters": ...}, {...}]
 *   mistral (pre-v11, taken over from fmt_deepseek.c's mistral row):
 *                   [TOOL_CALLS] [{"name": ..., "arguments": ..., "id": ...}, {...}]
 *   cohere_command4: <|START_ACTION|>[{"tool_call_id": "0", "tool_name": ...,
 *                   "parameters": ...}, ...]<|END_ACTION|>
 *   apertus2509:    <|tools_prefix|>[{"NAME": {ARGS}}, ...]<|tools_suffix|>
 *   lfm2 (JSON form, handed over by fmt_pythonic.c's lfm2 row at the block's
 *                   first `{`, handed back after the end tag):
 *                   <|tool_call_start|>[{"name": ..., "arguments": ...}, ...]<|tool_call_end|>
 *   k2_horizon (the json dialect, handed over by fmt_glm.c's k2_horizon row
 *                   at the body's `{` or `[`, handed back after the end tag):
 *                   <ifm|tool_call>{"name": ..., "arguments": ...}</ifm|tool_call>, or a
 *                   list of such objects; arguments may also be a JSON string
 *                   holding the object, or null; {"function": {...}} wraps a call
 *
 * Rows with `array` set read the calls as the elements of a JSON array:
 * the tag is the array's `[` (with a lead marker before it in rows that
 * have one), `,` is the byte between calls and the array's `]` closes the
 * section (markup, like an end tag; the whitespace before it is
 * formatting). jsonarray is what SGLang's JsonArrayParser reads: the output
 * of tool_choice="required" or a named tool when the server's detector
 * does not own its format under constraints (the JSON schema of
 * sglang/srt/function_call/utils.py get_json_schema_constraint: an array of
 * {"name", "parameters"} objects; a single bare object is read as well).
 * Rows with `array_open` have a lead tag before the array (`[TOOL_CALLS]`):
 * the tag, whitespace and the `[` are held until `{` shows a call. An
 * array row with an end tag (Cohere) expects it after the `]`; a broken
 * element is skipped to its own `}` and the next one is read. A row's
 * `name_key` names the call in place of "name" (Cohere: "tool_name";
 * "name" is read too, as SGLang's detector does); other keys
 * ("tool_call_id", Mistral's "id") are validated and dropped. Rows with
 * `name_is_key` (Apertus) read {NAME: ARGS}: the first key is the name,
 * checked as soon as its `:` is read, and its value streams as arguments.
 *
 * The call object is read key by key: "name" is decoded into a buffer and
 * checked against the tools as soon as it closes; "arguments" (or
 * "parameters") streams through the JSON normalizer straight into argument
 * events, or into a bounded pending buffer while the name is still unknown
 * (arguments written before the name). Other keys are validated and
 * dropped. Whitespace around the object is optional, so both the Qwen
 * ("<tool_call>\n{...}\n</tool_call>") and Hermes spellings are read.
 *
 * An opening tag starts a call only if the next non-whitespace byte is `{`:
 * the tag and the whitespace after it are held until that byte, and
 * released as prose when it is anything else ("use the <tool_call> tag").
 * A closing tag that follows such a prose tag (before the next call) is
 * prose as well; other stray end tags are markup that makes no call
 * (bad_markup, the tag its dropped text). At the end
 * of the stream a held tag is a cut-off call ("unterminated").
 * Llama 3: a `{` that starts the output, or follows `;` after a call, is
 * held with the whitespace after it until the next byte: `"` makes it a
 * call object, anything else releases it as prose ("{x} is a set").
 * A `;` after a call is held until the next non-whitespace byte (a call
 * object follows, or it is prose). A call that breaks (malformed JSON)
 * has no end tag to skip to: the rest of the output up to the next
 * <|python_tag|> is dropped with the reported error.
 * The call is announced (CallStart) at the first byte of its arguments
 * value once the name is known, or at the object's closing `}` when it has
 * no arguments; a call that breaks before that is reported and leaves no
 * event behind. */
#include <string.h>

#include "tp_internal.h"

enum {
    M_START,     /* nothing read yet (rows with bare_start: a leading `{`) */
    M_TEXT,      /* prose; looking for the opening tag */
    M_OPEN,      /* after the opening tag: whitespace, then '{' (else prose) */
    M_KEY_OR_END,
    M_KEY,
    M_COLON,
    M_VALUE,
    M_AFTER,     /* after a member: ',' or '}' */
    M_END_TAG,   /* call object closed: expect the closing tag */
    M_SKIP,      /* a broken call: drop everything up to its end tag */
    M_SEP,       /* no closing tag: after a call, whitespace then `;` or prose */
    M_SEMI,      /* after `;`: whitespace (held in pending), then `{` or prose */
    M_BARE,      /* a held bare `{` (in pending): whitespace, then `"` or prose */
    M_RESYNC,    /* no closing tag: a broken object, skipped to its last `}` */
    M_TOK,       /* rows with lex_lead: a control token `<|name|>` being read (in pending) */
    M_HDR,       /* rows with a header token: the header after it, held in pending */
    M_FN_OPEN,   /* rows with fn_wrapper: after "function": (an object holds the call) */
};
enum { VK_NAME, VK_ARGS, VK_SKIP,
       /* rows with args_text: before the arguments' first byte; inside a
        * JSON string holding them; inside `null` */
       VK_ARGS_FIRST, VK_ARGS_STR, VK_ARGS_NULL };

typedef struct {
    const char *tag;     /* opens a call */
    const char *end_tag; /* closes it; NULL: the object's `}` ends the call */
    uint8_t sep;         /* no end tag: the byte between calls (0: none) */
    uint8_t bare_start;  /* a `{"` first in the output opens a call */
    const char *alt[2];  /* other spellings of the opening tag (NULL: none) */
    const char *args_key; /* the only key holding the arguments (NULL:
                           * "arguments" or "parameters") */
    /* built by init */
    size_t tag_len, end_len, alt_len[2];
    int text_end, skip_end, skip_open;  /* marker indices (-1: none); the
                                         * alt tags follow the tag in both */
    tp_matcher text_m;                 /* tag, stray end tag, alt tags */
    tp_matcher end_m;                  /* end tag, tag, alt tags (a missing end tag) */
    uint8_t array;       /* the calls are a JSON array's elements: `]` ends the section */
    uint8_t array_open;  /* the tag is a lead marker: whitespace and the array's `[` follow it */
    const char *name_key; /* the name's key besides "name" (NULL: none) */
    uint8_t name_is_key;  /* {NAME: ARGS}: the object's first key is the name, its value the arguments */
    /* rows whose markup is control tokens `<|name|>` (Inkling): text is read
     * for lex_lead, and each token is then read whole: `tag` opens a call,
     * one of `tokens` (a NULL-terminated list of spellings, the tags among
     * them) is markup dropped from text, any other `<|...` is text. The
     * text after `header` up to the next control token is held: it is the
     * message's author name (markup) when a control token closes it, text
     * when the stream ends first or it outgrows max_name. */
    const char *lex_lead;
    const char *const *tokens;
    const char *header;
    uint8_t hand_back;    /* entered from another engine, which reads on after the end tag (lfm2) */
    uint8_t open_any;     /* (an array row entered at its tag) a call object alone or an array of them (k2_horizon) */
    /* the arguments are an object, or (K2V3Detector) a JSON string whose
     * text is one (blank: {}), or null ({}); anything else breaks the call */
    uint8_t args_text;
    /* {"function": {"name": ..., "arguments": ...}, ...}: the call is read
     * inside the wrapper, other keys around it are dropped (nx_depth: 1
     * inside it, 2 after it) */
    uint8_t fn_wrapper;
} jt_row;

/* Inkling's control tokens (SGLang's INKLING_CONTROL_TOKENS: the TMLv0
 * framing tokens and two the model can emit without a framing id) */
static const char *const INKLING_TOKENS[] = {
    "<|endoftext|>", "<|message_user|>", "<|message_model|>", "<|message_system|>", "<|message_tool|>",
    "<|content_text|>", "<|content_image|>", "<|content_model_end_sampling|>", "<|content_thinking|>",
    "<|content_audio_input|>", "<|content_tool_error|>", "<|content_xml|>", "<|content_invoke_tool_json|>",
    "<|content_invoke_tool_text|>", "<|end_message|>", "<|audio_end|>", "<|content_invoke_tool|>",
    "<|model_trigger_generation|>", NULL,
};
#define LEX_NAME_MAX 32 /* longest token name read (the longest is 26 bytes) */

static jt_row ROWS[] = {
    {.tag = "<tool_call>", .end_tag = "</tool_call>"},             /* qwen25, hermes */
    {.tag = "<|python_tag|>", .sep = ';', .bare_start = 1},         /* llama3 */
    {.tag = "[", .sep = ',', .bare_start = 1, .array = 1},           /* jsonarray */
    {.tag = "[TOOL_CALLS]", .sep = ',', .array = 1, .array_open = 1}, /* mistral, pre-v11 array form */
    {.tag = "<|START_ACTION|>", .end_tag = "<|END_ACTION|>", .sep = ',', .array = 1, .array_open = 1,
     .name_key = "tool_name"},                                        /* cohere_command4 */
    {.tag = "<|tools_prefix|>", .end_tag = "<|tools_suffix|>", .sep = ',', .array = 1, .array_open = 1,
     .name_is_key = 1},                                               /* apertus2509 */
    /* interns1: the template writes the two tokens adjacent; SGLang's
     * default detokenization (spaces_between_special_tokens) puts a space
     * between them */
    {.tag = "<|action_start|><|plugin|>", .end_tag = "<|action_end|>",
     .alt = {"<|action_start|> <|plugin|>"}},
    /* gigachat3: GigaChat 3.1's token; GigaChat 3's message separator and
     * role header (the header also alone, as SGLang reads it); the
     * object's `}` ends the call; the arguments are under "arguments" */
    {.tag = "<|function_call|>",
     .alt = {"<|message_sep|>\n\nfunction call<|role_sep|>\n", "function call<|role_sep|>\n"},
     .args_key = "arguments"},
    /* inkling: <|message_model|>NAME<|content_invoke_tool_json|>{"name": ..., "args": {...}}<|end_message|>
     * (the vendor's TMLv0 renderer); every other control token is markup,
     * the text between them is text */
    {.tag = "<|content_invoke_tool_json|>", .end_tag = "<|end_message|>", .args_key = "args",
     .lex_lead = "<|", .tokens = INKLING_TOKENS, .header = "<|message_model|>"},
    /* lfm2: the JSON form of an LFM2 block, handed over by fmt_pythonic.c's
     * lfm2 row at the block's first `{` and back after its end tag */
    {.tag = "<|tool_call_start|>", .end_tag = "<|tool_call_end|>", .sep = ',', .array = 1, .array_open = 1,
     .hand_back = 1},
    /* k2_horizon: the JSON dialect of K2 Horizon's chat template,
     * <ifm|tool_call>{"name": ..., "arguments": {...}}</ifm|tool_call>
     * (or a list of such objects, as SGLang's K2V3Detector reads it),
     * handed over by fmt_glm.c's k2_horizon row at the body's `{` or `[`
     * and back after the end tag */
    {.tag = "<ifm|tool_call>", .end_tag = "</ifm|tool_call>", .sep = ',', .array = 1, .hand_back = 1,
     .open_any = 1, .args_text = 1, .fn_wrapper = 1},
};
enum { ROW_TOOL_CALL, ROW_LLAMA3, ROW_JSONARRAY, ROW_MISTRAL_ARRAY, ROW_COHERE4, ROW_APERTUS, ROW_INTERNS1,
       ROW_GIGACHAT3, ROW_INKLING, ROW_LFM2, ROW_K2 };

int tp_fmt_jsontag_init(void)
{
    for (size_t r = 0; r < sizeof(ROWS) / sizeof(ROWS[0]); r++) {
        jt_row *w = &ROWS[r];
        const char *text_pats[4], *end_pats[4];
        int nt = 0, ne = 0;
        int have_end = w->end_tag != NULL;
        w->tag_len = strlen(w->tag);
        w->end_len = have_end ? strlen(w->end_tag) : 0;
        text_pats[nt++] = w->lex_lead ? w->lex_lead : w->tag; /* (lex rows: the lead alone) */
        if (have_end) {
            end_pats[ne++] = w->end_tag;
            text_pats[nt++] = w->end_tag;
        }
        if (w->lex_lead)
            nt = 1;
        w->text_end = have_end && !w->lex_lead ? 1 : -1;
        w->skip_end = have_end ? 0 : -1;
        w->skip_open = ne;
        end_pats[ne++] = w->tag;
        for (int a = 0; a < 2 && w->alt[a]; a++) {
            w->alt_len[a] = strlen(w->alt[a]);
            end_pats[ne++] = w->alt[a];
            if (!w->lex_lead)
                text_pats[nt++] = w->alt[a];
        }
        if (tp_matcher_build(&w->text_m, text_pats, nt) ||
            tp_matcher_build(&w->end_m, end_pats, ne))
            return -1;
    }
    return 0;
}

/* which spelling of the opening tag marker `match` of a matcher is (0:
 * the tag, 1, 2: alt[0], alt[1]; -1: none), given the tag's index there */
static int opener_of(int match, int tag_at)
{
    return match >= tag_at && match <= tag_at + 2 ? match - tag_at : -1;
}

static const char *opener(const jt_row *w, int k, size_t *len)
{
    *len = k ? w->alt_len[k - 1] : w->tag_len;
    return k ? w->alt[k - 1] : w->tag;
}

/* an opening tag: held (with the whitespace after it, in pending) until
 * the next byte shows whether it opens a call object. The caller starts
 * the call's raw record (tp_raw_begin) at its first marker: the tag, or a
 * held bare `{` (Llama 3) with what was held before it. */
static void start_call(tp_parser *p, uint64_t off, int alt)
{
    p->fstate = 0;
    p->mode = M_OPEN;
    p->vkind = (uint8_t)alt; /* in M_OPEN: which spelling of the tag opened */
    p->call_off = off;
    p->discard = 0;
    p->have_name = 0;
    p->have_args = 0;
    p->first = 1;
    p->trailing_reported = 0;
    p->nx_depth = 0;
    tp_buf_clear(&p->name);
    tp_buf_clear(&p->pending);
}

/* an error inside the call: report it and skip to the end tag; a row
 * without one skips the rest of the object instead, counting brackets
 * outside strings from where the scanner stopped (lenient: the object is
 * known to be malformed) */
static void broken(tp_parser *p, const jt_row *w, int code, uint64_t off)
{
    const tp_json *j = NULL;
    if (p->mode == M_KEY || (p->mode == M_VALUE && (p->vkind == VK_NAME || p->vkind == VK_ARGS_STR)))
        j = &p->ks;
    else if (p->mode == M_VALUE)
        j = &p->js;
    tp_call_fail(p, code, off);
    tp_buf_clear(&p->pending);
    tp_buf_shrink(&p->pending, 0);
    /* an array's element is skipped to its own end: the next one is read */
    p->mode = w->end_tag && (!w->array || w->open_any) ? M_SKIP : M_RESYNC; /* (open_any: to the call's end tag) */
    p->node = 0;
    tp_resync_start(p, j, 1 + (p->nx_depth == 1)); /* the call object (and a wrapper) encloses the value */
}

static int key_is(const tp_parser *p, const char *k)
{
    size_t n = strlen(k);
    return p->key.len == n && memcmp(p->key.data, k, n) == 0;
}

static void name_done(tp_parser *p, uint64_t off)
{
    p->have_name = 1;
    if (!tp_call_open(p, p->name.data, p->name.len, off)) {
        p->discard = 1; /* reported; read on to find the end of the call */
        tp_buf_clear(&p->pending);
        return;
    }
    if (p->pending.len) { /* the arguments came first, and were well-formed */
        tp_call_announce(p);
        tp_ev_args(p, p->pending.data, p->pending.len);
        tp_buf_clear(&p->pending);
        tp_buf_shrink(&p->pending, 0);
    }
}

static void object_done(tp_parser *p, const jt_row *w, uint64_t off)
{
    if (!p->have_name) {
        tp_buf_clear(&p->pending);
        broken(p, w, TP_ERR_MISSING_NAME, off);
        if (!w->end_tag || w->array) { /* the object is complete: nothing to skip */
            p->after_call = 1;
            p->mode = M_SEP;
            if (!w->array) /* (an array's record runs on through its `,`/`]`) */
                tp_drop_end_off(p, off + 1); /* the error dropped the object */
        }
        return;
    }
    if (!p->discard) {
        if (!p->have_args) {
            tp_call_announce(p); /* {"name": ...}: a call without arguments */
            tp_ev_args(p, (const uint8_t *)"{}", 2);
        }
        tp_call_close(p);
    } else {
        p->after_call = 1;
        if (!w->end_tag && !w->array) /* (an array's record runs on through its `,`/`]`) */
            tp_drop_end_off(p, off + 1); /* the refused call's object ends here */
    }
    p->mode = w->end_tag && !w->array ? M_END_TAG : M_SEP;
    p->node = 0;
}

/* fn_wrapper rows: the wrapper object closed; keys after it are dropped */
static void wrapper_done(tp_parser *p)
{
    p->nx_depth = 2;
    p->first = 0;
    p->mode = M_AFTER;
}

/* the object's first key begins: a call (held whitespace before it is
 * formatting) */
static void object_begins(tp_parser *p)
{
    tp_text_call_starts(p);
    tp_buf_clear(&p->pending);
    p->fstate = 0;
    p->nx_depth = 0;
    if (p->fgroup == 3)
        p->fgroup = 1; /* (k2_horizon) the group opener's record is this call's */
    p->mode = M_KEY_OR_END;
}

/* bytes held in pending were not a call after all: prose */
/* the held bytes (the input's bytes just before stream offset `end`) are
 * prose: their offset goes with them, so whitespace among them that a
 * call's marker follows is that call's (its raw record) */
static void held_is_prose(tp_parser *p, uint64_t end)
{
    tp_text_at(p, p->pending.data, p->pending.len, end >= p->pending.len ? end - p->pending.len : UINT64_MAX);
    tp_buf_clear(&p->pending);
    p->mode = M_TEXT;
    p->node = 0;
}

/* a call's first marker, the tag t (tl bytes), ended at chunk index `at`.
 * Lex rows: the tag is a control token, never text, so the raw record (the
 * call's text if the stream ends before it is announced) starts after it,
 * and what follows is no longer after an earlier call: the record's blanks
 * are text then, wherever the token was read (after a call's object too:
 * fuzz finding, they were dropped as formatting after a call) */
static void call_marker(tp_parser *p, const jt_row *w, const char *t, size_t tl, size_t at)
{
    if (w->lex_lead) {
        tp_drop_end(p, at, tl);
        tp_raw_begin(p, "", 0, at);
        p->after_call = 0;
    } else {
        tp_raw_begin(p, t, tl, at);
    }
}

/* ---- lex rows: control tokens read whole in text (Inkling) ---- */
static int lex_is(const tp_parser *p, const char *t)
{
    size_t n = strlen(t);
    return p->pending.len - p->lex_at == n && memcmp(p->pending.data + p->lex_at, t, n) == 0;
}

static int lex_control(const tp_parser *p, const jt_row *w)
{
    for (const char *const *t = w->tokens; *t; t++)
        if (lex_is(p, *t))
            return 1;
    return 0;
}

/* the held bytes (a header, a `<|...` that is no token) are text */
static void lex_release(tp_parser *p, size_t n)
{
    tp_text(p, p->pending.data, n);
    tp_buf_clear(&p->pending);
    p->mode = M_TEXT;
    p->node = 0;
}

/* a byte of a header: held while it could still be one (max_name bytes) */
static void lex_hdr_byte(tp_parser *p, uint8_t c)
{
    if (p->pending.len >= p->lim.max_name || tp_buf_push(&p->pending, c))
        lex_release(p, p->pending.len); /* too long for a header: text (c is read again) */
}

/* the held header and the token that closes it (pending, the model's
 * bytes up to chunk index i) are markup of the message (TP_EV_MARKUP): out
 * of the text as the vendor's parser and SGLang take them out */
static void lex_markup(tp_parser *p, size_t i)
{
    tp_ev_markup(p, p->base + i + 1 - p->pending.len, p->pending.data, p->pending.len);
}

/* the token in pending[lex_at:] is complete (its `>` at chunk index i) */
static void lex_token(tp_parser *p, const jt_row *w, size_t i)
{
    if (lex_is(p, w->tag)) { /* a call (the header before it names it: markup) */
        tp_text_flush_ws(p);
        lex_markup(p, i);
        tp_buf_clear(&p->pending);
        call_marker(p, w, w->tag, w->tag_len, i + 1);
        start_call(p, p->base + i + 1 - w->tag_len, 0);
        return;
    }
    if (!lex_control(p, w)) { /* `<|x|>`: text, or a header's bytes */
        if (p->lex_hdr)
            p->mode = M_HDR;
        else
            lex_release(p, p->pending.len);
        return;
    }
    int header = w->header && lex_is(p, w->header);
    /* (a header closed by a token is the message's author name: markup) */
    tp_text_flush_ws(p); /* whitespace before a token is the text's */
    lex_markup(p, i);
    tp_buf_clear(&p->pending);
    p->lex_hdr = (uint8_t)header;
    p->lex_at = 0;
    p->mode = header ? M_HDR : M_TEXT;
    p->node = 0;
}

/* a hand_back row's block is over: the other engine reads on */
static int handed_back(tp_parser *p, const jt_row *w)
{
    if (!w->hand_back || p->mode != M_TEXT)
        return 0;
    p->engine_alt = 0;
    return 1;
}

/* ---- rows with args_text (k2_horizon): arguments as K2V3Detector reads them ---- */

/* decoded text d[0:m) of a string holding the arguments (fstate: 0 before
 * its first non-blank byte, 1 inside the object, 2 after it, 3 broken: the
 * error, code in lex_hdr, is reported where the string closes, so its
 * offset does not depend on how escapes fall across chunks) */
static void args_text_inner(tp_parser *p, const uint8_t *d, size_t m)
{
    size_t a = 0;
    if (p->fstate == 0) {
        while (a < m && tp_is_ws(d[a]))
            a++;
        if (a == m)
            return;
        if (d[a] != '{') {
            p->fstate = 3;
            p->lex_hdr = TP_ERR_JSON_SYNTAX;
            return;
        }
        p->fstate = 1;
    }
    if (p->fstate == 1) {
        size_t used;
        int st = tp_call_json_args(p, d + a, m - a, &used);
        if (st < 0) {
            p->fstate = 3;
            p->lex_hdr = p->js.err;
            return;
        }
        a += used;
        if (st > 0)
            p->fstate = 2;
    }
    for (; p->fstate == 2 && a < m; a++)
        if (!tp_is_ws(d[a])) {
            p->fstate = 3;
            p->lex_hdr = TP_ERR_TRAILING;
        }
}

static size_t args_text_step(tp_parser *p, const jt_row *w, const uint8_t *s, size_t n, uint64_t off)
{
    if (p->vkind == VK_ARGS_FIRST) {
        if (tp_is_ws(s[0]))
            return 1;
        if (s[0] == '{' || p->discard) { /* an object (a refused call's value: validated) */
            p->vkind = VK_ARGS;
            return 0;
        }
        if (!p->have_name) { /* (arguments before the name: an object only) */
            broken(p, w, TP_ERR_BAD_MARKUP, off);
            return 0;
        }
        if (s[0] == '"' && p->ws.len == 0) { /* (the scanner reads the quote) */
            p->vkind = VK_ARGS_STR;
            p->fstate = 0;
            tp_json_init(&p->ks, TPJ_MODE_RAW_STRING, 1);
            return 0;
        }
        if (s[0] == 'n') {
            p->vkind = VK_ARGS_NULL;
            p->fstate = 1;
            return 1;
        }
        broken(p, w, TP_ERR_JSON_SYNTAX, off);
        return 0;
    }
    if (p->vkind == VK_ARGS_NULL) {
        if (s[0] != "null"[p->fstate]) {
            broken(p, w, TP_ERR_JSON_SYNTAX, off);
            return 0;
        }
        if (++p->fstate == 4) { /* null: no arguments */
            tp_call_announce(p);
            tp_ev_args(p, (const uint8_t *)"{}", 2);
            p->mode = M_AFTER;
        }
        return 1;
    }
    /* VK_ARGS_STR: decoded a slice at a time into ws (empty inside a call) */
    size_t slice = n < 1024 ? n : 1024;
    size_t k = tp_json_feed(&p->ks, s, slice, &p->ws);
    if (p->fstate != 3) /* (the text decoded before an error too: the same for any chunking) */
        args_text_inner(p, p->ws.data, p->ws.len);
    tp_buf_clear(&p->ws);
    if (tp_json_failed(&p->ks)) {
        broken(p, w, p->ks.err, off + p->ks.err_at);
        return k;
    }
    if (tp_json_done(&p->ks)) { /* the string's closing quote */
        p->mode = M_AFTER;
        if (p->fstate == 0) { /* blank: no arguments */
            tp_call_announce(p);
            tp_ev_args(p, (const uint8_t *)"{}", 2);
        } else if (p->fstate != 2) {
            broken(p, w, p->fstate == 3 ? p->lex_hdr : TP_ERR_JSON_SYNTAX, off + k - 1);
        }
    }
    return k;
}

static size_t jt_feed_upto(tp_parser *p, const jt_row *w, const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n && !p->oom) {
        uint64_t off = p->base + i;
        if (handed_back(p, w))
            return i;
        switch (p->mode) {
        case M_START:
            if (!w->bare_start) {
                p->mode = M_TEXT;
            } else if (tp_is_ws(s[i])) {
                tp_text(p, s + i, 1); /* held by the text layer */
                i++;
            } else if (s[i] == '{') {
                p->call_off = off;
                tp_buf_clear(&p->pending);
                tp_buf_push(&p->pending, '{');
                p->mode = M_BARE;
                i++;
            } else {
                p->mode = M_TEXT;
            }
            break;
        case M_TEXT: {
            int match;
            i += tp_scan_text(p, &w->text_m, s + i, n - i, &match);
            if (w->lex_lead) {
                if (match == 0) { /* `<|`: a token begins (held) */
                    tp_buf_clear(&p->pending);
                    p->lex_hdr = 0;
                    p->lex_at = 0;
                    p->fstate = 0;
                    p->mode = M_TOK;
                    if (tp_buf_append(&p->pending, w->lex_lead, strlen(w->lex_lead)))
                        lex_release(p, 0);
                }
                break;
            }
            int k = match == 0 ? 0 : match > 0 && match != w->text_end ? match - (w->text_end > 0) : -1;
            if (k >= 0) {
                /* the tag ended at chunk index i: recorded from there */
                size_t tl;
                const char *t = opener(w, k, &tl);
                tp_raw_begin(p, t, tl, i);
                start_call(p, p->base + i - tl, k);
            }
            else if (match == w->text_end && p->fstate) /* closes a tag that was prose */
                tp_text(p, (const uint8_t *)w->end_tag, w->end_len);
            else if (w->text_end > 0 && match == w->text_end) /* a stray end tag */
                tp_stray_markup(p, w->text_m.patlen[match], i);
            break;
        }
        case M_HDR:
            if (s[i] == '<') { /* a token may begin: pending[lex_at:] */
                p->lex_at = p->pending.len;
                p->fstate = 0;
                if (tp_buf_push(&p->pending, '<')) {
                    lex_release(p, p->pending.len);
                    break;
                }
                p->mode = M_TOK;
            } else {
                lex_hdr_byte(p, s[i]);
                if (p->mode != M_HDR)
                    break; /* released: s[i] is read again as text */
            }
            i++;
            break;
        case M_TOK: {
            /* pending[lex_at:] is `<`, `<|`, `<|name` or `<|name|` (fstate) */
            uint8_t c = s[i];
            size_t k = p->pending.len - p->lex_at;
            int ok;
            if (k == 1)
                ok = c == '|';
            else if (p->fstate)
                ok = c == '>';
            else
                ok = (c == '|' && k > 2) || ((c == '_' || (c >= 'a' && c <= 'z')) && k - 2 < LEX_NAME_MAX);
            if (!ok || tp_buf_push(&p->pending, c)) {
                /* no control token: its bytes are text (or a header's), and
                 * s[i] is read again */
                if (p->lex_hdr && p->pending.len <= p->lim.max_name)
                    p->mode = M_HDR;
                else
                    lex_release(p, p->pending.len);
                break;
            }
            i++;
            if (c == '|' && k > 1)
                p->fstate = 1;
            else if (c == '>')
                lex_token(p, w, i - 1);
            break;
        }
        case M_SEP: /* Llama 3: `;` continues the section, anything else is prose */
            if (tp_is_ws(s[i]) && w->array && (p->drop_on || w->open_any)) {
                i++; /* an array's formatting after a refused element: its dropped text */
            } else if (tp_is_ws(s[i])) {
                size_t k = i;
                while (k < n && tp_is_ws(s[k]))
                    k++;
                tp_text(p, s + i, k - i);
                i = k;
            } else if (w->array && s[i] == ']' && p->ws_long) {
                /* a blank run too long to hold came before it: it was
                 * text, so the array ended there as before prose, and the
                 * `]` is prose (it was in nothing: random-seed fuzz finding) */
                p->mode = M_TEXT;
            } else if (w->array && s[i] == ']') {
                /* the array closes: markup, and the whitespace held
                 * before it formatting (after_call stays set: whitespace
                 * up to the end of the stream is formatting too) */
                tp_buf_clear(&p->ws);
                p->ws_long = 0;
                p->mode = w->end_tag ? M_END_TAG : M_TEXT;
                p->node = 0;
                i++;
            } else if (w->sep && s[i] == w->sep) {
                tp_buf_clear(&p->pending);
                tp_buf_push(&p->pending, s[i]);
                p->mode = M_SEMI;
                i++;
            } else if (w->hand_back) { /* a bare object: its block's end tag follows */
                /* the whitespace held after the object is the block's
                 * formatting (as before the array's `]`), not text after
                 * the block (lfm2 fuzz finding) */
                tp_buf_clear(&p->ws);
                p->ws_long = 0;
                p->mode = M_END_TAG;
                p->node = 0;
            } else {
                p->mode = M_TEXT;
            }
            break;
        case M_RESYNC:
            /* (an array row's record runs on through the array's `,`/`]`: markup of
             * no call, up to the next element or the text after the array) */
            i += tp_resync(p, s + i, n - i, !w->array);
            if (!p->resync_depth) {
                p->after_call = 1;
                p->mode = M_SEP;
            }
            break;
        case M_SEMI:
        case M_BARE:
            if (tp_is_ws(s[i]) && p->pending.len < TP_WS_HOLD_MAX &&
                tp_buf_push(&p->pending, s[i]) == 0) {
                i++;
            } else if (p->mode == M_SEMI && s[i] == '{' && tp_buf_push(&p->pending, '{') == 0) {
                p->call_off = off;
                p->mode = M_BARE;
                i++;
            } else if (p->mode == M_BARE && s[i] == '"') {
                /* the held `{` (and `;`, whitespace) is the call's first marker */
                tp_raw_begin(p, (const char *)p->pending.data, p->pending.len, i);
                start_call(p, p->call_off, 0);
                object_begins(p);
            } else {
                /* (an array's record, run on after a refused element, ends
                 * where the held bytes begin: they are text) */
                tp_drop_end_at(p, s + i, p->pending.len);
                held_is_prose(p, p->base + i);
            }
            break;
        case M_OPEN:
            /* the whitespace is held up to TP_WS_HOLD_MAX (and max_buffer)
             * bytes; a longer run makes the tag prose */
            if (tp_is_ws(s[i]) && p->pending.len < TP_WS_HOLD_MAX &&
                tp_buf_push(&p->pending, s[i]) == 0) {
                i++;
            } else if ((w->array_open || w->open_any) && s[i] == '[' && !p->fstate &&
                       tp_buf_push(&p->pending, '[') == 0) {
                p->fstate = 1; /* the array's `[` after the lead tag (held as the whitespace is) */
                i++;
            } else if (s[i] == '{' && (!w->array_open || p->fstate)) {
                object_begins(p); /* whitespace before the tag: formatting */
                i++;
            } else {
                /* not a call: the tag and what followed it are prose */
                size_t tl;
                const char *t = opener(w, p->vkind, &tl);
                if (p->fgroup == 3) { /* (k2_horizon) the group opener's record ran on into this tag: it made no call */
                    uint64_t here = p->base + i;
                    p->fgroup = 1;
                    tp_ev_error(p, TP_ERR_BAD_MARKUP, p->call_off, -1, (const uint8_t *)"a group opener with no call",
                                27);
                    tp_drop_end(p, i, here > p->call_off ? (size_t)(here - p->call_off) : 0);
                }
                tp_raw_end(p);
                if (w->lex_lead) { /* a control token: markup even where it opens no call */
                    held_is_prose(p, p->base + i);
                    break;
                }
                tp_text(p, (const uint8_t *)t, tl);
                held_is_prose(p, p->base + i);
                p->fstate = 1; /* an end tag after it is prose too */
            }
            break;
        case M_FN_OPEN:
            if (tp_is_ws(s[i])) {
                i++;
            } else if (s[i] == '{') { /* the wrapper: its keys are the call's */
                i++;
                p->nx_depth = 1;
                p->first = 1;
                p->mode = M_KEY_OR_END;
            } else { /* not an object: validated and dropped (then no name) */
                p->mode = M_VALUE;
                p->vkind = VK_SKIP;
                tp_json_init(&p->js, TPJ_MODE_NORMAL, p->lim.max_depth);
            }
            break;
        case M_KEY_OR_END:
            if (tp_is_ws(s[i])) {
                i++;
            } else if (s[i] == '"') {
                tp_json_init(&p->ks, TPJ_MODE_RAW_STRING, 1);
                tp_buf_clear(&p->key);
                p->mode = M_KEY;
                /* the scanner reads the opening quote itself */
            } else if (s[i] == '}' && p->first) {
                i++;
                if (p->nx_depth == 1) /* the wrapper closes: the call object goes on */
                    wrapper_done(p);
                else
                    object_done(p, w, off);
            } else {
                broken(p, w, TP_ERR_JSON_SYNTAX, off);
            }
            break;
        case M_KEY: {
            size_t k = tp_json_feed(&p->ks, s + i, n - i, &p->key);
            if (tp_json_failed(&p->ks)) {
                broken(p, w, p->ks.err, p->base + i + p->ks.err_at);
                i += k;
                break;
            }
            i += k;
            if (tp_json_done(&p->ks))
                p->mode = M_COLON;
            break;
        }
        case M_COLON:
            if (tp_is_ws(s[i])) {
                i++;
                break;
            }
            if (s[i] != ':') {
                broken(p, w, TP_ERR_JSON_SYNTAX, off);
                break;
            }
            i++;
            p->first = 0;
            p->mode = M_VALUE;
            if (p->nx_depth == 2) { /* after the wrapper: dropped */
                p->vkind = VK_SKIP;
                tp_json_init(&p->js, TPJ_MODE_NORMAL, p->lim.max_depth);
            } else if (w->fn_wrapper && !p->nx_depth && !p->have_name && !p->have_args && key_is(p, "function")) {
                p->mode = M_FN_OPEN;
            } else if (w->name_is_key && !p->have_name) {
                /* {NAME: ARGS}: the key is the name, checked now; its value
                 * is the arguments (later keys are validated and dropped) */
                tp_buf_clear(&p->name);
                if (tp_buf_append(&p->name, p->key.data, p->key.len)) {
                    broken(p, w, TP_ERR_BAD_NAME, off);
                    break;
                }
                name_done(p, off);
                p->have_args = 1;
                p->vkind = VK_ARGS;
                tp_json_init(&p->js, TPJ_MODE_NORMAL, p->lim.max_depth);
            } else if (key_is(p, "name") || (w->name_key && key_is(p, w->name_key))) {
                if (p->have_name) {
                    broken(p, w, TP_ERR_BAD_NAME, off);
                    break;
                }
                p->vkind = VK_NAME;
                tp_json_init(&p->ks, TPJ_MODE_RAW_STRING, 1);
                tp_buf_clear(&p->name);
            } else if (w->args_key ? key_is(p, w->args_key)
                                   : key_is(p, "arguments") || key_is(p, "parameters")) {
                if (p->have_args) {
                    broken(p, w, TP_ERR_BAD_MARKUP, off);
                    break;
                }
                p->have_args = 1;
                p->vkind = w->args_text ? VK_ARGS_FIRST : VK_ARGS;
                tp_json_init(&p->js, TPJ_MODE_NORMAL, p->lim.max_depth);
            } else {
                p->vkind = VK_SKIP;
                tp_json_init(&p->js, TPJ_MODE_NORMAL, p->lim.max_depth);
            }
            break;
        case M_VALUE: {
            if (p->vkind >= VK_ARGS_FIRST) {
                i += args_text_step(p, w, s + i, n - i, off);
                break;
            }
            if (p->vkind == VK_ARGS && p->have_name && !p->discard) {
                size_t k;
                int st = tp_call_json_args(p, s + i, n - i, &k);
                if (st < 0) {
                    broken(p, w, p->js.err, p->base + i + p->js.err_at);
                    i += k;
                    break;
                }
                i += k;
                if (st > 0)
                    p->mode = M_AFTER;
                break;
            }
            tp_json *j = p->vkind == VK_NAME ? &p->ks : &p->js;
            tp_buf *dst = NULL;
            if (p->vkind == VK_NAME)
                dst = &p->name;
            else if (p->vkind == VK_ARGS && !p->discard)
                dst = &p->pending; /* arguments before the name */
            size_t k = tp_json_feed(j, s + i, n - i, dst);
            if (tp_json_failed(j)) {
                int code = j->err;
                if (code == TP_ERR_BUFFER_LIMIT && dst == &p->name)
                    code = TP_ERR_BAD_NAME;
                broken(p, w, code, p->base + i + j->err_at);
                i += k;
                break;
            }
            i += k;
            if (tp_json_done(j)) {
                p->mode = M_AFTER;
                if (p->vkind == VK_NAME)
                    name_done(p, p->base + i);
            }
            break;
        }
        case M_AFTER:
            if (tp_is_ws(s[i])) {
                i++;
            } else if (s[i] == ',') {
                p->mode = M_KEY_OR_END;
                i++;
            } else if (s[i] == '}') {
                i++;
                if (p->nx_depth == 1) /* the wrapper closes: the call object goes on */
                    wrapper_done(p);
                else
                    object_done(p, w, off);
            } else {
                broken(p, w, TP_ERR_JSON_SYNTAX, off);
            }
            break;
        case M_END_TAG:
        case M_SKIP: {
            int match, junk;
            size_t junk_at = 0;
            size_t k = tp_scan_skip(p, &w->end_m, s + i, n - i, &match, &junk, &junk_at);
            if (junk && p->mode == M_END_TAG && !p->trailing_reported) {
                p->trailing_reported = 1;
                tp_ev_error(p, TP_ERR_TRAILING, p->base + i + junk_at, -1, NULL, 0);
            }
            i += k;
            if (match >= 0 && match == w->skip_end) {
                p->mode = M_TEXT;
                p->after_call = !w->lex_lead; /* (lex rows: whitespace after it is text) */
            } else if (opener_of(match, w->skip_open) >= 0) {
                int k = opener_of(match, w->skip_open);
                size_t tl;
                const char *t = opener(w, k, &tl);
                call_marker(p, w, t, tl, i);
                if (w->lex_lead) /* the tag is the message's framing (lex_markup's; fuzz finding) */
                    tp_ev_markup(p, p->base + i - tl, (const uint8_t *)t, tl);
                start_call(p, p->base + i - tl, k);
            }
            break;
        }
        }
    }
    handed_back(p, w);
    return i;
}

static void jt_feed(tp_parser *p, const jt_row *w, const uint8_t *s, size_t n) { jt_feed_upto(p, w, s, n); }

static void jt_finish(tp_parser *p, const jt_row *w)
{
    switch (p->mode) {
    case M_START:
    case M_SEP:
    case M_RESYNC: /* reported when it broke */
        break;
    case M_TEXT:
        tp_release_held(p, &w->text_m);
        break;
    case M_TOK: /* a token or header cut off: text */
    case M_HDR:
        lex_release(p, p->pending.len);
        break;
    case M_SEMI:
    case M_BARE: /* a `;` or bare `{` and then the end: prose */
        held_is_prose(p, p->base);
        break;
    case M_END_TAG:
    case M_SKIP:
        p->node = 0; /* a partial end tag: markup, not prose */
        break;
    case M_OPEN: /* <tool_call> and then the end: a call cut off */
        tp_text_call_starts(p);
        tp_buf_clear(&p->pending);
        tp_call_unterminated(p);
        break;
    default: /* end of stream inside the call object */
        tp_call_unterminated(p);
        break;
    }
    tp_text_finish(p);
}

static void tool_call_feed(tp_parser *p, const uint8_t *s, size_t n) { jt_feed(p, &ROWS[ROW_TOOL_CALL], s, n); }
static void tool_call_finish(tp_parser *p) { jt_finish(p, &ROWS[ROW_TOOL_CALL]); }
static void llama3_feed(tp_parser *p, const uint8_t *s, size_t n) { jt_feed(p, &ROWS[ROW_LLAMA3], s, n); }
static void llama3_finish(tp_parser *p) { jt_finish(p, &ROWS[ROW_LLAMA3]); }
static void jsonarray_feed(tp_parser *p, const uint8_t *s, size_t n) { jt_feed(p, &ROWS[ROW_JSONARRAY], s, n); }
static void cohere4_feed(tp_parser *p, const uint8_t *s, size_t n) { jt_feed(p, &ROWS[ROW_COHERE4], s, n); }
static void cohere4_finish(tp_parser *p) { jt_finish(p, &ROWS[ROW_COHERE4]); }
static void apertus_feed(tp_parser *p, const uint8_t *s, size_t n) { jt_feed(p, &ROWS[ROW_APERTUS], s, n); }
static void apertus_finish(tp_parser *p) { jt_finish(p, &ROWS[ROW_APERTUS]); }
static void jsonarray_finish(tp_parser *p) { jt_finish(p, &ROWS[ROW_JSONARRAY]); }

/* Mistral's pre-v11 form, `[TOOL_CALLS] [{"name": ..., "arguments": ...}, ...]`:
 * fmt_deepseek.c's mistral row reads `[TOOL_CALLS]` and, where `[{` follows
 * it, hands the stream over to this row from the first key of the call
 * object on (the rest of the output is read in the array form) */
void tp_jsontag_mistral_array_enter(tp_parser *p, uint64_t call_off)
{
    start_call(p, call_off, 0);
    object_begins(p);
}
void tp_jsontag_mistral_array_feed(tp_parser *p, const uint8_t *s, size_t n) { jt_feed(p, &ROWS[ROW_MISTRAL_ARRAY], s, n); }
void tp_jsontag_mistral_array_finish(tp_parser *p) { jt_finish(p, &ROWS[ROW_MISTRAL_ARRAY]); }
/* LFM2's JSON form: fmt_pythonic.c's lfm2 row reads the block tag and
 * hands the block over at its first `{` (the object's first byte read) */
void tp_jsontag_lfm2_enter(tp_parser *p, uint64_t call_off)
{
    start_call(p, call_off, 0);
    object_begins(p);
}
size_t tp_jsontag_lfm2_feed(tp_parser *p, const uint8_t *s, size_t n) { return jt_feed_upto(p, &ROWS[ROW_LFM2], s, n); }
void tp_jsontag_lfm2_finish(tp_parser *p) { jt_finish(p, &ROWS[ROW_LFM2]); }
/* K2 Horizon's JSON dialect: fmt_glm.c's k2_horizon row hands the call over
 * at the body's first byte (not read yet), the blanks before it in pending */
void tp_jsontag_k2_enter(tp_parser *p, uint64_t call_off)
{
    size_t blanks = p->pending.len; /* the blanks read after the tag: held on, as M_OPEN holds them */
    start_call(p, call_off, 0);
    p->pending.len = blanks;
}
size_t tp_jsontag_k2_feed(tp_parser *p, const uint8_t *s, size_t n) { return jt_feed_upto(p, &ROWS[ROW_K2], s, n); }
void tp_jsontag_k2_finish(tp_parser *p) { jt_finish(p, &ROWS[ROW_K2]); }
static void interns1_feed(tp_parser *p, const uint8_t *s, size_t n) { jt_feed(p, &ROWS[ROW_INTERNS1], s, n); }
static void interns1_finish(tp_parser *p) { jt_finish(p, &ROWS[ROW_INTERNS1]); }
static void gigachat3_feed(tp_parser *p, const uint8_t *s, size_t n) { jt_feed(p, &ROWS[ROW_GIGACHAT3], s, n); }
static void gigachat3_finish(tp_parser *p) { jt_finish(p, &ROWS[ROW_GIGACHAT3]); }
static void inkling_feed(tp_parser *p, const uint8_t *s, size_t n) { jt_feed(p, &ROWS[ROW_INKLING], s, n); }
static void inkling_finish(tp_parser *p) { jt_finish(p, &ROWS[ROW_INKLING]); }

/* ---- Trinity: the same format read after removing <think> and </think> ----
 * SGLang's TrinityDetector removes every <think> and </think> from the
 * text before Qwen2.5's parse, so reasoning tags around (or inside) a call
 * vanish. Here the removal is a filter in front of the engine, matched
 * across chunk boundaries (a partial tag is held; its bytes are the
 * matcher's static path), so what the engine sees does not depend on the
 * chunking. The engine reads the filter's view: its stream offsets, the
 * tail ring and its records are the view's (p->fview bytes so far), so a
 * marker or a held run across a removed tag is where the engine read it;
 * the offsets of its events are mapped back to the input's (the input
 * byte a view byte was, past the tags taken out before it). */
static tp_matcher think_m;

typedef struct {
    uint64_t at;      /* view offset where a tag was taken out */
    uint64_t removed; /* bytes taken out up to there, that tag's included */
} ftag;
#define FTAGS_KEEP 4096 /* entries kept: older view offsets (a record with
                         * more tags than this in it) map as the oldest kept */

static uint64_t to_input(const tp_parser *p, uint64_t v)
{
    const ftag *t = (const ftag *)p->ftags.data;
    size_t lo = 0, hi = p->ftags.len / sizeof(ftag);
    while (lo < hi) { /* the tags taken out at or before view byte v */
        size_t mid = lo + (hi - lo) / 2;
        if (t[mid].at <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return v + (lo ? t[lo - 1].removed : p->fdropped);
}

/* the events from k0 on carry view offsets: the input's */
static void map_events(tp_parser *p, size_t k0)
{
    for (size_t k = k0; k < p->nev; k++) {
        tp_event *e = &p->ev[k];
        if (e->type == TP_EV_ERROR || e->type == TP_EV_DROPPED || e->type == TP_EV_MARKUP)
            e->offset = to_input(p, e->offset);
    }
}

static void tag_removed(tp_parser *p, size_t len)
{
    size_t n = p->ftags.len / sizeof(ftag);
    ftag e = {p->fview, (n ? ((const ftag *)p->ftags.data)[n - 1].removed : p->fdropped) + len};
    if (n >= FTAGS_KEEP) { /* the older half goes */
        size_t drop = n / 2;
        p->fdropped = ((const ftag *)p->ftags.data)[drop - 1].removed;
        memmove(p->ftags.data, p->ftags.data + drop * sizeof(ftag), (n - drop) * sizeof(ftag));
        p->ftags.len = (n - drop) * sizeof(ftag);
    }
    if (n && ((ftag *)p->ftags.data)[p->ftags.len / sizeof(ftag) - 1].at == e.at) {
        ((ftag *)p->ftags.data)[p->ftags.len / sizeof(ftag) - 1].removed = e.removed; /* tags back to back */
        return;
    }
    if (tp_buf_append(&p->ftags, (const uint8_t *)&e, sizeof(e)))
        p->oom = 1;
}

/* the engine reads view bytes s[0:n), in pieces its checkpoints end (in
 * the view: tp_piece) */
static void feed_view_piece(tp_parser *p, const uint8_t *s, size_t n);

static void feed_view(tp_parser *p, const uint8_t *s, size_t n)
{
    while (n && !p->oom) {
        size_t k = tp_piece(p, p->fview, s, n);
        feed_view_piece(p, s, k);
        s += k;
        n -= k;
    }
}

static void feed_view_piece(tp_parser *p, const uint8_t *s, size_t n)
{
    size_t k0 = p->nev;
    p->base = p->fview;
    p->chunk = s; /* the engine's chunk (a dropped record's positions are in it) */
    p->chunk_n = n;
    tool_call_feed(p, s, n);
    tp_piece_end(p, p->fview + n, s, n);
    /* a call's raw text (released as text if the stream ends before the
     * call is announced) and a dropped record are recorded from the bytes
     * the engine saw, span by span: the tags taken out are not in them */
    tp_raw_chunk_end(p, s, n);
    tp_drop_keep_tail(p, s, n);
    p->fview += n;
    map_events(p, k0);
}

static void trinity_feed(tp_parser *p, const uint8_t *s, size_t n)
{
    uint64_t base = p->base;
    size_t i = 0;
    p->filtered = 1;
    while (i < n && !p->oom) {
        tp_scan_res r;
        size_t hl = 0;
        const uint8_t *held = tp_matcher_path(&think_m, p->filter_node, &hl);
        tp_matcher_scan(&think_m, &p->filter_node, s + i, n - i, &r);
        if (r.held_text) /* held bytes that were no tag: they came before s + i */
            feed_view(p, held, r.held_text);
        if (r.text_len)
            feed_view(p, s + i, r.text_len);
        if (r.match >= 0)
            tag_removed(p, strlen(think_m.pats[r.match]));
        i += r.consumed;
    }
    p->base = base;
    p->chunk = NULL; /* recorded span by span above: nothing of the whole chunk is added after this feed */
    p->raw_at = n;
    p->drop_at = n;
}

static void trinity_finish(tp_parser *p)
{
    size_t hl = 0;
    const uint8_t *held = tp_matcher_path(&think_m, p->filter_node, &hl);
    uint64_t base = p->base;
    p->filtered = 1;
    p->filter_node = 0;
    if (hl) /* a partial tag at the end: text */
        feed_view(p, held, hl);
    size_t k0 = p->nev;
    p->base = p->fview;
    p->chunk = NULL;
    tool_call_finish(p);
    tp_drop_finish(p); /* (its last piece at a view offset too) */
    map_events(p, k0);
    p->base = base;
}

int tp_fmt_trinity_init(void)
{
    static const char *const pats[] = {"<think>", "</think>"};
    return tp_matcher_build(&think_m, pats, 2);
}

const tp_format tp_fmt_qwen25 = {"qwen25", tool_call_feed, tool_call_finish};
const tp_format tp_fmt_hermes = {"hermes", tool_call_feed, tool_call_finish};
const tp_format tp_fmt_llama3 = {"llama3", llama3_feed, llama3_finish};
const tp_format tp_fmt_trinity = {"trinity", trinity_feed, trinity_finish};
const tp_format tp_fmt_jsonarray = {"jsonarray", jsonarray_feed, jsonarray_finish};
const tp_format tp_fmt_cohere_command4 = {"cohere_command4", cohere4_feed, cohere4_finish};
const tp_format tp_fmt_apertus2509 = {"apertus2509", apertus_feed, apertus_finish};
const tp_format tp_fmt_interns1 = {"interns1", interns1_feed, interns1_finish};
const tp_format tp_fmt_gigachat3 = {"gigachat3", gigachat3_feed, gigachat3_finish};
const tp_format tp_fmt_inkling = {"inkling", inkling_feed, inkling_finish};
