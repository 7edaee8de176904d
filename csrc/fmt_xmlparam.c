/* XML-parameter formats: Qwen3-Coder / Qwen3.5 ("qwen3_coder"),
 * MiniMax-M2 / M2.1 / M2.5 ("minimax_m2") and Kimi K3's XTML ("kimi_k3"),
 * one engine, tags as data.
 *
 *   qwen3_coder:  <tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n
 *                 ...</function>\n</tool_call>
 *   minimax_m2:   <minimax:tool_call>\n<invoke name="NAME">\n<parameter name="KEY">VALUE</parameter>\n
 *                 ...</invoke>\n<invoke ...>...</invoke>\n</minimax:tool_call>
 *   dots:         <dots_function_call>\n<invoke name="NAME">\n<parameter name="KEY">VALUE</parameter>\n
 *                 ...</invoke>\n</dots_function_call>  (rednote dots.llm: MiniMax's shape,
 *                 values stripped as DotsToolDetector strips them, its own typing row)
 *   minicpm5:     <function name="NAME"><param name="KEY">VALUE</param>...</function>
 *                 (OpenBMB MiniCPM: no block; values stripped, <![CDATA[...]]> unwrapped;
 *                 undeclared keys typed too, as MiniCPM5Detector types them)
 *   mimo:         <tool_call>\n<function=NAME>\n<parameter=KEY>VALUE</parameter>\n...</function>\n</tool_call>
 *                 (Xiaomi MiMo: Qwen3-Coder's tags, the value as written, typed by
 *                 Qwen3-Coder's row)
 *   kimi_k3:      <|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|>
 *                 <|open|>argument key="KEY" type="string"<|sep|>VALUE<|close|>argument<|sep|>
 *                 ...<|close|>call<|sep|>...<|close|>tools<|sep|>
 *   step3:        <｜tool_calls_begin｜>\n<｜tool_call_begin｜>\nfunction<｜tool_sep｜>
 *                 <steptml:invoke name="NAME"><steptml:parameter name="KEY">VALUE</steptml:parameter>
 *                 ...</steptml:invoke><｜tool_call_end｜>\n...<｜tool_calls_end｜>
 *                 (StepFun Step-3: the invoke is the span between <｜tool_call_begin｜> and
 *                 <｜tool_call_end｜>; its lead `function<｜tool_sep｜><steptml:invoke name="`
 *                 (blanks allowed before each part) is checked when the name is complete;
 *                 values stripped; typed by tp_rules_step3, as Step3Detector types them)
 *
 * Kimi K3 (its encoder, and SGLang's KimiK3Detector for what it leaves
 * open): the name and the key are attribute values, written with `&` as
 * `&amp;` and `"` as `&quot;` (read back, not stripped); the rest of a tag's
 * attributes (the call's index, the value's type) runs to <|sep|>. A value
 * of type "string" (or without a type) is its raw text, streamed; any other
 * type is JSON text, held to its end and written canonical, or, when it is
 * not JSON, its raw text as a string. The reply's channel framing
 * (<|open|>response<|sep|>, <|close|>response<|sep|>, <|close|>message<|sep|>)
 * is dropped from the text as SGLang drops it. Call ids are not the model's:
 * SGLang's serving layer builds them for `kimi_k3` (NAME:IDX).
 *
 * Both are a block (block_open ... block_close) of one or more invokes
 * (invoke_open NAME name_end ... invoke_close), each a list of parameters
 * (param_open KEY key_end VALUE value_end). The spellings are rows of
 * SPELLINGS below; one state machine reads them all.
 *
 * What the chat templates write, and what is read:
 *  - Values: strings raw, everything else as text (qwen3_coder: mappings
 *    and lists as JSON, other scalars with Jinja's `string`, so `True`,
 *    `3.25`, `None`; minimax_m2: `tojson`). qwen3_coder's template puts a
 *    newline after <parameter=KEY> and before </parameter>: one of each is
 *    dropped (SGLang's Qwen3CoderDetector drops the same). minimax_m2's
 *    template adds none, so none is dropped.
 *  - A value ends at its closing tag; as in SGLang's regexes, a closing tag
 *    of an enclosing element also ends it (qwen3_coder also ends it at the
 *    next <parameter=). Inside an invoke, anything else between tags is
 *    prose inside the call: bad_markup, the call stands (tp_junk.c); after an invoke, non-blank bytes before the block's end tag
 *    are prose (a block left open before the model went on writing). A
 *    missing closing tag of the invoke or block is tolerated.
 *  - A block opener followed (after blanks) by anything but an invoke
 *    opener is not a call: it is text, byte for byte.
 *
 * What streams and what is held:
 *  - The call is announced (CallStart) once its body has begun well-formed:
 *    at the first complete parameter opening tag, or at the invoke's end
 *    for a call without parameters. The name is validated there.
 *  - A parameter that is not declared non-string (declared string, not
 *    declared, undeclared tool) is a string whose only other reading is
 *    `null` (both detectors map the text "null", any case, to null). It
 *    is held while it can still be that word (at most 4 bytes), then
 *    streams as JSON string content as it is generated; only a possible
 *    partial closing tag (and qwen3_coder's template newline) is held back.
 *  - Every other value (and a string value that is the word null) is held
 *    (bounded by lim.max_buffer) until it closes and typed by
 *    tp_value_complete() with the family's row of tp_type_rules.c (the
 *    parameter's kind compiled from the schema): the core writes its JSON
 *    text, or, for the few values whose typing needs Python (e.g.
 *    ast.literal_eval), hands it over whole as one TP_EV_RAW_VALUE event
 *    that the host (sglang_toolparse/xml_types.py) types.
 *  - Errors (unknown tool, over-long name/key/value) drop the call and keep
 *    reading its structure, so the end of the call and everything after it
 *    are found the same way for every chunking; the end of the stream inside
 *    a call is an "unterminated" error.
 * Each byte is examined once; state held between feeds is bounded. */
#include <string.h>

#include "tp_internal.h"

enum {
    M_TEXT,   /* prose; looking for block_open */
    M_OPEN,   /* after block_open: blanks, then invoke_open or it is text */
    M_BLOCK,  /* inside a block, between invokes */
    M_NAME,   /* tool name, up to name_end */
    M_INV,    /* inside an invoke, between parameters */
    M_KEY,    /* parameter name, up to key_end */
    M_VALUE,  /* parameter value, up to a value end tag */
    M_VATTR,  /* the rest of a value's opening tag (kimi_k3: type="..."), up to value_start */
};
enum { VK_DROP, VK_RAW, VK_HOLD, VK_STREAM, VK_JSON };
/* what a value's end tag does */
enum { A_PARAM_END, A_PARAM_NEXT, A_INVOKE_END, A_BLOCK_END };
/* markers of inv_m / block_m, by index */
enum { I_PARAM, I_INVOKE_END, I_BLOCK_END, I_INVOKE, I_BLOCK, I_TAIL, I_HEAD };
enum { B_INVOKE, B_BLOCK_END, B_BLOCK };

#define MAX_VALUE_END 8
#define MAX_TEXT_DROP 3
#define MAX_NAME_LEAD 3
#define VATTR_KEEP 128 /* bytes of a value tag's attributes read for its type */

typedef struct {
    const tp_format *fmt;
    const char *block_open, *block_close;
    const char *invoke_open, *name_end, *invoke_close;
    const char *param_open, *key_end;
    const char *value_end[MAX_VALUE_END];
    uint8_t value_act[MAX_VALUE_END];
    uint8_t nvalue_end;
    uint8_t trim_nl; /* one newline after the value's opening tag is the template's */
    uint8_t strip;   /* leading and trailing blanks are not part of a value (str.strip) */
    uint8_t bare;    /* calls stand in the text, without a block (block_open/close unused) */
    uint8_t cdata;   /* a value <![CDATA[...]]> is its content */
    uint8_t typed_undeclared; /* an undeclared key's value is typed by the row, not a string */
    uint8_t inv_kind[7]; /* inv_m's pattern index -> I_* (bare rows have fewer patterns) */
    /* step3: a tag the template writes after the last parameter, before
     * invoke_close (markup of the call, between its tags); kimi_k3: the
     * end of the call tag, whose attributes run to it after the name */
    const char *inv_tail, *inv_head;
    /* kimi_k3: name and key are attribute values (&amp; / &quot;, not
     * stripped); a value tag's attributes run to value_start and its type
     * attribute types the value; text markers of the reply's framing */
    uint8_t attr_values;
    const char *value_start;
    const char *text_drop[MAX_TEXT_DROP];
    uint8_t ntext_drop;
    /* step3: the parts (each after optional blanks) between invoke_open and
     * the name; read with the name, up to name_end, and checked there */
    const char *name_lead[MAX_NAME_LEAD];
    uint8_t nname_lead;
    tp_matcher text_m, block_m, name_m, inv_m, key_m, value_m, vattr_m;
} xml_spelling;

static xml_spelling SPELLINGS[] = {
    {
        .fmt = &tp_fmt_qwen3_coder,
        .block_open = "<tool_call>", .block_close = "</tool_call>",
        .invoke_open = "<function=", .name_end = ">", .invoke_close = "</function>",
        .param_open = "<parameter=", .key_end = ">",
        /* "\n" + tag first: the newline before a closing tag is the template's */
        .value_end = {"\n</parameter>", "</parameter>", "\n<parameter=", "<parameter=",
                      "\n</function>", "</function>", "\n</tool_call>", "</tool_call>"},
        .value_act = {A_PARAM_END, A_PARAM_END, A_PARAM_NEXT, A_PARAM_NEXT, A_INVOKE_END,
                      A_INVOKE_END, A_BLOCK_END, A_BLOCK_END},
        .nvalue_end = 8,
        .trim_nl = 1,
    },
    {
        .fmt = &tp_fmt_minimax_m2,
        .block_open = "<minimax:tool_call>", .block_close = "</minimax:tool_call>",
        .invoke_open = "<invoke name=\"", .name_end = "\">", .invoke_close = "</invoke>",
        .param_open = "<parameter name=\"", .key_end = "\">",
        .value_end = {"</parameter>", "</invoke>", "</minimax:tool_call>"},
        .value_act = {A_PARAM_END, A_INVOKE_END, A_BLOCK_END},
        .nvalue_end = 3,
        .trim_nl = 0,
    },
    {   /* no block: each call is a <function name="..."> element */
        .fmt = &tp_fmt_minicpm5,
        .invoke_open = "<function name=\"", .name_end = "\">", .invoke_close = "</function>",
        .param_open = "<param name=\"", .key_end = "\">",
        .value_end = {"</param>", "</function>"},
        .value_act = {A_PARAM_END, A_INVOKE_END},
        .nvalue_end = 2,
        .strip = 1, .bare = 1, .cdata = 1, .typed_undeclared = 1,
    },
    {   /* MiniMax's shape in another block; values stripped */
        .fmt = &tp_fmt_dots,
        .block_open = "<dots_function_call>", .block_close = "</dots_function_call>",
        .invoke_open = "<invoke name=\"", .name_end = "\">", .invoke_close = "</invoke>",
        .param_open = "<parameter name=\"", .key_end = "\">",
        .value_end = {"</parameter>", "</invoke>", "</dots_function_call>"},
        .value_act = {A_PARAM_END, A_INVOKE_END, A_BLOCK_END},
        .nvalue_end = 3,
        .strip = 1,
    },
    {   /* Qwen3-Coder's tags; the value is the text between them, as written */
        .fmt = &tp_fmt_mimo,
        .block_open = "<tool_call>", .block_close = "</tool_call>",
        .invoke_open = "<function=", .name_end = ">", .invoke_close = "</function>",
        .param_open = "<parameter=", .key_end = ">",
        .value_end = {"</parameter>", "</function>", "</tool_call>"},
        .value_act = {A_PARAM_END, A_INVOKE_END, A_BLOCK_END},
        .nvalue_end = 3,
        .trim_nl = 0,
    },
    {
        .fmt = &tp_fmt_kimi_k3,
        .block_open = "<|open|>tools<|sep|>", .block_close = "<|close|>tools<|sep|>",
        .invoke_open = "<|open|>call tool=\"", .name_end = "\"", .invoke_close = "<|close|>call<|sep|>",
        .param_open = "<|open|>argument key=\"", .key_end = "\"",
        .value_end = {"<|close|>argument<|sep|>", "<|close|>call<|sep|>", "<|close|>tools<|sep|>"},
        .value_act = {A_PARAM_END, A_INVOKE_END, A_BLOCK_END},
        .nvalue_end = 3,
        .trim_nl = 0,
        .attr_values = 1,
        .value_start = "<|sep|>",
        .inv_head = "<|sep|>",
        .text_drop = {"<|open|>response<|sep|>", "<|close|>response<|sep|>", "<|close|>message<|sep|>"},
        .ntext_drop = 3,
    },
    {   /* the invoke spans <｜tool_call_begin｜> ... <｜tool_call_end｜>; its
         * </steptml:invoke> is markup between parameters */
        .fmt = &tp_fmt_step3,
        .block_open = "<\xef\xbd\x9ctool_calls_begin\xef\xbd\x9c>",
        .block_close = "<\xef\xbd\x9ctool_calls_end\xef\xbd\x9c>",
        .invoke_open = "<\xef\xbd\x9ctool_call_begin\xef\xbd\x9c>", .name_end = "\">",
        .invoke_close = "<\xef\xbd\x9ctool_call_end\xef\xbd\x9c>",
        .name_lead = {"function", "<\xef\xbd\x9ctool_sep\xef\xbd\x9c>", "<steptml:invoke name=\""},
        .nname_lead = 3,
        .inv_tail = "</steptml:invoke>",
        .param_open = "<steptml:parameter name=\"", .key_end = "\">",
        .value_end = {"</steptml:parameter>", "</steptml:invoke>", "<\xef\xbd\x9ctool_call_end\xef\xbd\x9c>",
                      "<\xef\xbd\x9ctool_calls_end\xef\xbd\x9c>"},
        .value_act = {A_PARAM_END, A_PARAM_END, A_INVOKE_END, A_BLOCK_END},
        .nvalue_end = 4,
        .strip = 1,
    },
};
#define NSPELLINGS (sizeof(SPELLINGS) / sizeof(SPELLINGS[0]))

int tp_fmt_xmlparam_init(void)
{
    for (size_t i = 0; i < NSPELLINGS; i++) {
        xml_spelling *s = &SPELLINGS[i];
        if (s->bare) /* no block: the invoke opener starts a call in text */
            s->block_open = s->block_close = s->invoke_open;
        const char *text_p[1 + MAX_TEXT_DROP] = {s->block_open};
        for (size_t k = 0; k < s->ntext_drop; k++)
            text_p[1 + k] = s->text_drop[k]; /* marker 1 + k: dropped */
        const char *vattr_p[] = {s->value_start ? s->value_start : s->key_end};
        const char *block_p[] = {s->invoke_open, s->block_close, s->block_open};
        const char *name_p[] = {s->name_end};
        const char *inv_p[7] = {s->param_open, s->invoke_close, s->block_close, s->invoke_open, s->block_open};
        const char *bare_p[7] = {s->param_open, s->invoke_close, s->invoke_open};
        static const uint8_t ALL[] = {I_PARAM, I_INVOKE_END, I_BLOCK_END, I_INVOKE, I_BLOCK};
        static const uint8_t BARE[] = {I_PARAM, I_INVOKE_END, I_INVOKE};
        int ninv = s->bare ? 3 : 5;
        memcpy(s->inv_kind, s->bare ? BARE : ALL, (size_t)ninv);
        const char **own = s->bare ? bare_p : inv_p;
        if (s->inv_tail) {
            own[ninv] = s->inv_tail;
            s->inv_kind[ninv++] = I_TAIL;
        }
        if (s->inv_head) {
            own[ninv] = s->inv_head;
            s->inv_kind[ninv++] = I_HEAD;
        }
        const char *key_p[] = {s->key_end};
        if (tp_matcher_build(&s->text_m, text_p, 1 + s->ntext_drop) || tp_matcher_build(&s->vattr_m, vattr_p, 1) ||
            tp_matcher_build(&s->block_m, block_p, 3) || tp_matcher_build(&s->name_m, name_p, 1) ||
            tp_matcher_build(&s->inv_m, s->bare ? bare_p : inv_p, ninv) ||
            tp_matcher_build(&s->key_m, key_p, 1) ||
            tp_matcher_build(&s->value_m, s->value_end, s->nvalue_end))
            return -1;
    }
    return 0;
}

static const xml_spelling *spelling(const tp_parser *p)
{
    for (size_t i = 1; i < NSPELLINGS; i++)
        if (SPELLINGS[i].fmt == p->fmt)
            return &SPELLINGS[i];
    return &SPELLINGS[0];
}

/* ---- argument output ---- */

static void args_lit(tp_parser *p, const char *s)
{
    if (!p->discard)
        tp_ev_args(p, (const uint8_t *)s, strlen(s));
}

/* ---- call lifecycle ---- */

/* An error inside the invoke: report it (naming the call if it was
 * announced) and drop the call; its structure is still read to its end. */
static void fail(tp_parser *p, int code, uint64_t off)
{
    if (!p->discard)
        tp_call_fail(p, code, off);
    p->discard = 1;
    p->vkind = VK_DROP;
    tp_buf_clear(&p->pending);
}

/* The announce point: the body has begun well-formed. p->have_args marks
 * that it was reached (whether the call opened or was refused). */
static void announce(tp_parser *p)
{
    if (p->have_args)
        return;
    p->have_args = 1;
    if (p->discard)
        return;
    if (tp_call_open(p, p->name.data, p->name.len, p->call_off))
        tp_call_announce(p);
    else
        p->discard = 1; /* reported; the call is read to its end and dropped */
}

static void invoke_begins(tp_parser *p, uint64_t off)
{
    tp_text_call_starts(p);
    p->mode = M_NAME;
    p->node = 0;
    p->call_off = off;
    p->discard = 0;
    p->have_args = 0;
    p->first = 1;
    p->tool_id = -1;
    p->vkind = VK_DROP;
    tp_buf_clear(&p->name);
    tp_buf_clear(&p->key);
    tp_buf_clear(&p->pending);
}

/* p->fstate in M_BLOCK: prose began there; the invoke before was refused
 * or broke (no call's events end right before what follows) */
enum { F_PROSE = 1, F_DROPPED = 2 };

/* Returns the M_BLOCK state after it (p->fstate): 0 when it made a call,
 * else F_DROPPED. */
static uint8_t end_invoke(tp_parser *p)
{
    announce(p); /* a call without parameters is announced at its end */
    uint8_t st = 0;
    if (!p->discard) {
        args_lit(p, p->first ? "{}" : "}");
        tp_call_close(p);
    } else {
        p->after_call = 1;
        st = F_DROPPED;
    }
    p->discard = 0;
    tp_buf_clear(&p->pending);
    tp_buf_shrink(&p->pending, 1u << 16);
    return st;
}

/* in_block: the opener came inside a block, right after a call (1) or
 * after prose or a refused invoke there (2; p->have_name marks it while in
 * M_OPEN): if no invoke follows, it was the model closing the block with a
 * second opener, markup, not prose (where no call's events stand next to
 * it, reported as such: tp_block_markup). `at`: the opener's stream
 * offset. */
static void start_block(tp_parser *p, int in_block, uint64_t at)
{
    p->mode = M_OPEN;
    p->fstate = 0; /* bytes of invoke_open matched */
    p->have_name = (uint8_t)in_block;
    p->call_off = at; /* invoke_begins sets it again */
    tp_buf_clear(&p->pending);
}

/* A block opener that turned out not to start a call: it (unless it closed
 * a block, see start_block), the blanks after it and the matched part of an
 * invoke opener are text, scanned as text. */
static void not_a_call(tp_parser *p, const xml_spelling *sp)
{
    int match;
    p->mode = M_TEXT;
    p->node = 0;
    tp_raw_end(p);
    const size_t bl = strlen(sp->block_open);
    /* at their stream offsets (p->call_off: the opener's), so blanks it
     * ends with that a call's marker follows are known to be next to it */
    if (!p->have_name)
        tp_text_at(p, (const uint8_t *)sp->block_open, bl, p->call_off);
    else if (p->have_name == 2)
        tp_block_markup(p, sp->block_open, bl, p->call_off);
    p->have_name = 0;
    tp_text_at(p, p->pending.data, p->pending.len, p->call_off + bl);
    tp_buf_clear(&p->pending);
    /* an invoke opener prefix cannot hold a whole block opener: no match */
    tp_scan_text(p, &sp->text_m, (const uint8_t *)sp->invoke_open, p->fstate, &match);
    p->fstate = 0;
}

static size_t open_bytes(tp_parser *p, const xml_spelling *sp, const uint8_t *s, size_t n,
                         uint64_t off)
{
    const char *io = sp->invoke_open;
    size_t iol = strlen(io);
    size_t i = 0;
    while (i < n) {
        if (p->fstate == 0 && tp_is_ws(s[i])) {
            size_t k = i;
            while (k < n && tp_is_ws(s[k]))
                k++;
            if (p->pending.len + (k - i) > TP_WS_HOLD_MAX ||
                tp_buf_append(&p->pending, s + i, k - i)) {
                not_a_call(p, sp); /* a blank run too long to be formatting */
                return i;
            }
            i = k;
            continue;
        }
        if ((uint8_t)io[p->fstate] != s[i]) {
            not_a_call(p, sp);
            return i; /* the deciding byte is scanned again as text */
        }
        i++;
        if (++p->fstate == iol) {
            p->have_name = 0;
            invoke_begins(p, off + i - iol);
            return i;
        }
    }
    return n;
}

/* ---- names and keys ---- */

static int is_blank(uint8_t c) { return tp_is_ws(c) || c == '\v' || c == '\f'; }

static void strip(tp_buf *b)
{
    size_t a = 0;
    while (a < b->len && is_blank(b->data[a]))
        a++;
    while (b->len > a && is_blank(b->data[b->len - 1]))
        b->len--;
    if (a) {
        memmove(b->data, b->data + a, b->len - a);
        b->len -= a;
    }
}

static void name_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (!p->discard && tp_buf_append(&p->name, s, n))
        fail(p, TP_ERR_BAD_NAME, tp_buf_limit_at(&p->name, s, off, n));
}

/* An attribute value as written: `&quot;` then `&amp;` read back, in that
 * order (as SGLang's KimiK3Detector reads them), in place. */
static void replace_all(tp_buf *b, const char *from, char to)
{
    size_t fl = strlen(from), w = 0;
    for (size_t r = 0; r < b->len;) {
        if (b->len - r >= fl && memcmp(b->data + r, from, fl) == 0) {
            b->data[w++] = (uint8_t)to;
            r += fl;
        } else {
            b->data[w++] = b->data[r++];
        }
    }
    b->len = w;
}

static void attr_value(tp_buf *b)
{
    replace_all(b, "&quot;", '"');
    replace_all(b, "&amp;", '&');
}

/* step3: the row's name lead (each part after optional blanks) read off
 * the front of the name; 0 when the name does not begin with it. */
static int take_lead(tp_buf *b, const xml_spelling *sp)
{
    size_t i = 0;
    for (size_t k = 0; k < sp->nname_lead; k++) {
        size_t l = strlen(sp->name_lead[k]);
        while (i < b->len && is_blank(b->data[i]))
            i++;
        if (b->len - i < l || memcmp(b->data + i, sp->name_lead[k], l) != 0)
            return 0;
        i += l;
    }
    memmove(b->data, b->data + i, b->len - i);
    b->len -= i;
    return 1;
}

static void name_done(tp_parser *p, const xml_spelling *sp)
{
    p->mode = M_INV;
    if (sp->inv_head)
        p->junk = 5; /* the call tag's attributes (tp_junk.c) */
    if (p->discard)
        return;
    if (sp->nname_lead) { /* then the name as written (Step3Detector: [^"]+) */
        if (!take_lead(&p->name, sp)) {
            fail(p, TP_ERR_BAD_NAME, p->call_off); /* not a function invoke */
            return;
        }
    } else if (sp->attr_values)
        attr_value(&p->name);
    else
        strip(&p->name);
    if (p->name.len == 0) {
        fail(p, TP_ERR_BAD_NAME, p->call_off); /* where the invoke began */
        return;
    }
    p->tool_id = tp_parser_find_tool(p, p->name.data, p->name.len);
}

static void key_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (!p->discard && tp_buf_append(&p->key, s, n))
        fail(p, TP_ERR_BUFFER_LIMIT, tp_buf_limit_at(&p->key, s, off, n));
}

/* ---- values ---- */

/* a value tag's attributes: the first VATTR_KEEP bytes are kept for its type */
static void vattr_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    size_t room = p->pending.len < VATTR_KEEP ? VATTR_KEEP - p->pending.len : 0;
    size_t m = n < room ? n : room;
    if (m && tp_buf_append(&p->pending, s, m))
        fail(p, TP_ERR_BUFFER_LIMIT, tp_buf_limit_at(&p->pending, s, off, m));
}

/* The value tag's attributes (p->pending, at most VATTR_KEEP bytes): is
 * its type "string" (or absent)? Read as SGLang's attribute regex reads
 * them, `(\w+)="([^"]*)"` left to right, the last `type` winning; bytes
 * >= 0x80 count as word characters (Python's \w takes letters beyond
 * ASCII). */
static int is_word(uint8_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           c >= 0x80;
}

static int type_is_string(const tp_buf *b)
{
    const uint8_t *d = b->data;
    size_t n = b->len, i = 0;
    int string = 1;
    while (i < n) {
        size_t j = i;
        while (j < n && is_word(d[j]))
            j++;
        if (j > i && j + 1 < n && d[j] == '=' && d[j + 1] == '"') {
            size_t k = j + 2;
            while (k < n && d[k] != '"')
                k++;
            if (k < n) {
                if (j - i == 4 && memcmp(d + i, "type", 4) == 0)
                    string = k - (j + 2) == 6 && memcmp(d + j + 2, "string", 6) == 0;
                i = k + 1;
                continue;
            }
        }
        i = j > i ? j : i + 1;
    }
    return string;
}

static void value_open(tp_parser *p, const xml_spelling *sp)
{
    /* kimi_k3: the type, from the attributes read in M_VATTR */
    int attr_string = sp->value_start ? type_is_string(&p->pending) : -1;
    p->mode = M_VALUE;
    /* 1: a leading newline is still to be dropped; 2: leading blanks are;
     * 4: the value may still open with <![CDATA[ (have_name: bytes of it
     * matched; trailing_reported: inside the section) */
    p->fstate = sp->trim_nl | (sp->strip ? 2u : 0u) | (sp->cdata ? 4u : 0u);
    p->have_name = 0;
    p->trailing_reported = 0;
    tp_buf_clear(&p->pending);
    if (!p->discard) {
        if (sp->attr_values)
            attr_value(&p->key);
        else
            strip(&p->key);
    }
    announce(p);
    if (p->discard) {
        p->vkind = VK_DROP;
        return;
    }
    args_lit(p, p->first ? "{\"" : ", \"");
    p->first = 0;
    tp_ev_args_escaped(p, p->key.data, p->key.len);
    args_lit(p, "\": ");
    if (attr_string >= 0) { /* typed by the model: a string streams, the rest is JSON text */
        if (attr_string)
            args_lit(p, "\"");
        p->vkind = attr_string ? VK_STREAM : VK_JSON;
        return;
    }
    /* a declared string, an undeclared key or tool: streamed as a string
     * (both SGLang detectors read those as strings); any other kind is typed
     * when it closes */
    int kind = tp_parser_param_kind(p, p->tool_id, p->key.data, p->key.len);
    int str = kind == TP_PARAM_STRING || (kind == TP_PARAM_UNKNOWN && !sp->typed_undeclared);
    p->vkind = str ? VK_HOLD : VK_RAW;
}

static void hold(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (tp_buf_append(&p->pending, s, n))
        fail(p, TP_ERR_BUFFER_LIMIT, tp_buf_limit_at(&p->pending, s, off, n));
}

/* The tail a stripping row holds back while a string streams: the blanks
 * that may end the value and, in a CDATA section, the "]]>" (or its start)
 * with the blanks around it: b1 blanks, x bytes of "]]>", b2 blanks. It is
 * the same for any split of the value; it is bounded by max_buffer, and a
 * tail over it is a buffer_limit error at the byte that crosses it, whether
 * the bytes came in pieces or in one chunk with what follows. */
typedef struct {
    size_t b1, b2;
    size_t x; /* 0..3: "", "]", "]]", "]]>" */
} held_tail;

static size_t tail_len(const held_tail *h) { return h->b1 + h->x + h->b2; }

static void tail_step(held_tail *h, uint8_t c, int cdata)
{
    if (is_blank(c)) {
        if (h->x)
            h->b2++;
        else
            h->b1++;
    } else if (cdata && c == ']') {
        if (h->b2 == 0 && h->x == 1) {
            h->x = 2;
        } else if (h->b2 == 0 && h->x >= 2) { /* "]]]" / "]]>]": only the last ones */
            h->x = h->x == 2 ? 2 : 1;
            h->b1 = 0;
        } else {
            h->b1 = h->x ? h->b2 : h->b1;
            h->x = 1;
            h->b2 = 0;
        }
    } else if (cdata && c == '>' && h->x == 2 && h->b2 == 0) {
        h->x = 3;
    } else {
        h->b1 = h->b2 = h->x = 0;
    }
}

/* the tail `pending` holds (it is one: b1 blanks, x non-blanks, b2 blanks) */
static held_tail tail_of(const tp_buf *b, int cdata)
{
    held_tail h = {0, 0, 0};
    size_t r = b->len;
    if (!cdata) {
        h.b1 = r;
        return h;
    }
    while (r && is_blank(b->data[r - 1]))
        r--;
    h.b2 = b->len - r;
    while (r && !is_blank(b->data[r - 1]))
        r--, h.x++;
    h.b1 = r;
    if (!h.x) {
        h.b1 = h.b2;
        h.b2 = 0;
    }
    return h;
}

/* writes the first k bytes of pending + s (pending is cleared of them) */
static void write_upto(tp_parser *p, const uint8_t *s, size_t k)
{
    tp_buf *b = &p->pending;
    size_t from_held = k < b->len ? k : b->len;
    if (from_held) {
        tp_ev_args_escaped(p, b->data, from_held);
        memmove(b->data, b->data + from_held, b->len - from_held);
        b->len -= from_held;
    }
    if (k > from_held)
        tp_ev_args_escaped(p, s, k - from_held);
}

/* A held prefix (hold_string's "null" start) becomes a streamed string:
 * what cannot end the value is written, its tail stays held. */
static void held_to_tail(tp_parser *p, const xml_spelling *sp)
{
    held_tail h = {0, 0, 0};
    int cdata = p->trailing_reported;
    if (sp->strip || cdata)
        for (size_t i = 0; i < p->pending.len; i++)
            tail_step(&h, p->pending.data[i], cdata);
    write_upto(p, NULL, p->pending.len - tail_len(&h));
}

/* Streamed string bytes. A stripping row holds the tail that may end the
 * value in `pending` (it ends the value, or is written when more text
 * follows). */
static void stream_bytes(tp_parser *p, const xml_spelling *sp, const uint8_t *s, size_t n, uint64_t off)
{
    int cdata = p->trailing_reported; /* in a CDATA section: its "]]>" (and blanks) may end the value */
    if (!sp->strip && !cdata) {
        tp_ev_args_escaped(p, s, n);
        return;
    }
    held_tail h = tail_of(&p->pending, cdata);
    size_t held = p->pending.len, t = tail_len(&h);
    for (size_t i = 0; i < n; i++) {
        tail_step(&h, s[i], cdata);
        size_t t2 = tail_len(&h);
        if (t2 > p->pending.limit) {
            /* what came before the tail was written, the tail is dropped */
            write_upto(p, s, held + i - t);
            fail(p, TP_ERR_BUFFER_LIMIT, off + i);
            return;
        }
        t = t2;
    }
    write_upto(p, s, held + n - t);
    if (t > n) { /* part of the tail was held already */
        hold(p, s, n, off);
    } else {
        tp_buf_clear(&p->pending);
        hold(p, s + n - t, t, off + n - t);
    }
}

static void hold_string(tp_parser *p, const xml_spelling *sp, const uint8_t *s, size_t n, uint64_t off)
{
    static const char NUL_WORD[] = "null";
    for (size_t i = 0; i < n; i++) {
        size_t j = p->pending.len + i;
        uint8_t c = s[i] >= 'A' && s[i] <= 'Z' ? (uint8_t)(s[i] + 32) : s[i];
        if ((j >= 4 && sp->strip && is_blank(c)) || (j < 4 && c == (uint8_t)NUL_WORD[j])) {
            /* "null" and blanks: still null once stripped; held, bounded
             * however the bytes are split */
            if (j >= p->pending.limit) {
                fail(p, TP_ERR_BUFFER_LIMIT, off + i);
                return;
            }
            continue;
        }
        /* the held prefix is written (but a tail that may end the
         * value); this chunk's bytes stream */
        args_lit(p, "\"");
        p->vkind = VK_STREAM;
        held_to_tail(p, sp);
        stream_bytes(p, sp, s, n, off);
        return;
    }
    hold(p, s, n, off);
}

static void value_content(tp_parser *p, const xml_spelling *sp, const uint8_t *s, size_t n, uint64_t off);

static void value_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    const xml_spelling *sp = spelling(p);
    if (n && (p->fstate & 1)) {
        p->fstate &= ~1u;
        if (s[0] == '\n') { /* the template's newline after the opening tag */
            s++;
            n--;
            off++;
        }
    }
    static const char CDATA_OPEN[] = "<![CDATA[";
    for (;;) {
        if (p->fstate & 2) { /* leading blanks of a stripping row's value */
            while (n && is_blank(*s)) {
                s++;
                n--;
                off++;
            }
            if (n == 0)
                return;
            p->fstate &= ~2u;
        }
        if (!(p->fstate & 4))
            break;
        while (n && p->have_name < 9 && *s == (uint8_t)CDATA_OPEN[p->have_name]) {
            p->have_name++;
            s++;
            n--;
            off++;
        }
        if (p->have_name == 9) { /* a CDATA section: its content is the value (stripped) */
            p->fstate = (uint8_t)((p->fstate & ~4u) | 2u);
            p->trailing_reported = 1;
            continue;
        }
        if (n == 0)
            return; /* still a prefix of <![CDATA[ */
        p->fstate &= ~4u; /* not one: the bytes matched are the value's */
        if (p->have_name)
            value_content(p, sp, (const uint8_t *)CDATA_OPEN, p->have_name, off - p->have_name);
        p->have_name = 0;
        break;
    }
    if (n)
        value_content(p, sp, s, n, off);
}

static void value_content(tp_parser *p, const xml_spelling *sp, const uint8_t *s, size_t n, uint64_t off)
{
    switch (p->vkind) {
    case VK_DROP:
        break;
    case VK_STREAM:
        stream_bytes(p, sp, s, n, off);
        break;
    case VK_RAW:
    case VK_JSON:
        hold(p, s, n, off);
        break;
    case VK_HOLD:
        hold_string(p, sp, s, n, off);
        break;
    }
}

static void value_close(tp_parser *p)
{
    const xml_spelling *sp = spelling(p);
    if ((p->fstate & 4) && p->have_name) /* a value that was only the start of <![CDATA[ */
        value_content(p, sp, (const uint8_t *)"<![CDATA[", p->have_name, p->base);
    if (sp->strip && p->vkind != VK_DROP) { /* trailing blanks (and a CDATA end) end the value */
        tp_buf *b = &p->pending;
        while (b->len && is_blank(b->data[b->len - 1]))
            b->len--;
        if (p->trailing_reported && b->len >= 3 && memcmp(b->data + b->len - 3, "]]>", 3) == 0) {
            b->len -= 3;
            while (b->len && is_blank(b->data[b->len - 1]))
                b->len--;
        }
    }
    p->have_name = 0;
    p->trailing_reported = 0;
    if (p->vkind == VK_JSON) { /* kimi_k3: a value of a type other than string */
        tp_value_json_or_text(p, p->pending.data, p->pending.len);
    } else if (p->vkind == VK_STREAM) {
        if (p->pending.len) /* a held "]]" that was content */
            tp_ev_args_escaped(p, p->pending.data, p->pending.len);
        args_lit(p, "\"");
    }
    else if (p->vkind == VK_RAW || p->vkind == VK_HOLD) /* typed by the family's row */
        tp_value_complete(p, p->key.data, p->key.len, p->pending.data, p->pending.len);
    p->vkind = VK_DROP;
    tp_buf_clear(&p->pending);
    tp_buf_shrink(&p->pending, 1u << 16);
}

/* Bytes between a call's end and the block's end tag: the template puts
 * only blanks there; anything else is prose the model wrote after its last
 * call without closing the block, and is kept (p->fstate & F_PROSE: prose
 * began). */
static void block_text(tp_parser *p, const uint8_t *s, size_t n, uint64_t off)
{
    if (!(p->fstate & F_PROSE)) {
        while (n && tp_is_ws(*s)) {
            s++;
            n--;
            off++;
        }
        if (!n)
            return;
        p->fstate |= F_PROSE;
    }
    /* text is read again: a drop ends where it begins, also when these are
     * bytes a partial tag held from earlier chunks (tp_text finds only
     * the chunk's own bytes) */
    if (p->drop_on && p->chunk)
        tp_drop_end(p, off >= p->base ? (size_t)(off - p->base) : 0, off >= p->base ? 0 : (size_t)(p->base - off));
    tp_text(p, s, n);
}

/* ---- scanning ---- */

/* Scans s[0:n) with m; non-marker bytes (including held-back bytes that
 * turned out to be content) go to `sink` (NULL: ignored). */
typedef void (*sink_fn)(tp_parser *p, const uint8_t *s, size_t n, uint64_t off);

static size_t scan(tp_parser *p, const tp_matcher *m, const uint8_t *s, size_t n, int *match,
                   sink_fn sink, uint64_t off)
{
    tp_scan_res r;
    size_t hl = 0;
    const uint8_t *held = tp_matcher_path(m, p->node, &hl); /* static marker text */
    tp_matcher_scan(m, &p->node, s, n, &r);
    if (sink) {
        if (r.held_text)
            sink(p, held, r.held_text, off - hl); /* held bytes came before this chunk */
        if (r.text_len)
            sink(p, s, r.text_len, off);
    }
    *match = r.match;
    return r.consumed;
}

static void xml_feed(tp_parser *p, const uint8_t *s, size_t n)
{
    const xml_spelling *sp = spelling(p);
    size_t i = 0;
    while (i < n && !p->oom) {
        uint64_t off = p->base + i;
        int match;
        switch (p->mode) {
        case M_TEXT:
            i += tp_scan_text(p, &sp->text_m, s + i, n - i, &match);
            if (match == 0 && sp->bare) {
                tp_raw_begin(p, sp->invoke_open, strlen(sp->invoke_open), i);
                invoke_begins(p, p->base + i - strlen(sp->invoke_open));
            } else if (match == 0) {
                tp_raw_begin(p, sp->block_open, strlen(sp->block_open), i);
                start_block(p, 0, p->base + i - strlen(sp->block_open));
            }
            else if (match > 0) {
                /* the reply's framing (kimi_k3): out of the text, as SGLang
                 * takes it out; markup of the message (TP_EV_MARKUP). The
                 * whitespace held before it is the channel's text */
                const char *fr = sp->text_drop[match - 1];
                tp_text_flush_ws(p);
                tp_ev_markup(p, p->base + i - strlen(fr), (const uint8_t *)fr, strlen(fr));
            }
            break;
        case M_OPEN:
            i += open_bytes(p, sp, s + i, n - i, off);
            break;
        case M_BLOCK:
            i += scan(p, &sp->block_m, s + i, n - i, &match, block_text, off);
            if (match == B_INVOKE) {
                tp_raw_begin(p, sp->invoke_open, strlen(sp->invoke_open), i);
                invoke_begins(p, p->base + i - strlen(sp->invoke_open));
            } else if (match == B_BLOCK_END) {
                if (p->fstate & F_PROSE) /* after prose: it closes the block, next to no call */
                    tp_block_markup(p, sp->block_close, strlen(sp->block_close),
                                    p->base + i - strlen(sp->block_close));
                p->mode = M_TEXT;
            } else if (match == B_BLOCK) {
                tp_raw_begin(p, sp->block_open, strlen(sp->block_open), i);
                start_block(p, p->fstate ? 2 : 1, p->base + i - strlen(sp->block_open));
            }
            break;
        case M_NAME:
            i += scan(p, &sp->name_m, s + i, n - i, &match, name_bytes, off);
            if (match == 0)
                name_done(p, sp);
            break;
        case M_INV:
            /* prose between the call's tags: bad_markup (tp_junk.c) */
            i += scan(p, &sp->inv_m, s + i, n - i, &match, tp_junk_bytes, off);
            int in_head = p->junk == 5;
            if (match >= 0) {
                size_t tl = sp->inv_m.patlen[match];
                match = sp->inv_kind[match];
                if (match != I_HEAD || in_head)
                    tp_junk_tag(p, s + i, tl);
            }
            if (match == I_HEAD && !in_head) { /* not after the name: prose */
                tp_junk_bytes(p, (const uint8_t *)sp->inv_head, strlen(sp->inv_head),
                              p->base + i - strlen(sp->inv_head));
            } else if (match == I_TAIL || match == I_HEAD) {
                /* (the call's markup: nothing to do) */
            } else if (match == I_PARAM) {
                p->mode = M_KEY;
                tp_buf_clear(&p->key);
            } else if (match >= 0) {
                p->fstate = end_invoke(p);
                p->mode = match == I_INVOKE_END && !sp->bare ? M_BLOCK : M_TEXT;
                if (match == I_INVOKE) {
                    tp_raw_begin(p, sp->invoke_open, strlen(sp->invoke_open), i);
                    invoke_begins(p, p->base + i - strlen(sp->invoke_open));
                } else if (match == I_BLOCK) {
                    tp_raw_begin(p, sp->block_open, strlen(sp->block_open), i);
                    start_block(p, p->fstate ? 2 : 1, p->base + i - strlen(sp->block_open));
                }
            }
            break;
        case M_KEY:
            i += scan(p, &sp->key_m, s + i, n - i, &match, key_bytes, off);
            if (match == 0) {
                if (sp->value_start) {
                    p->mode = M_VATTR;
                    tp_buf_clear(&p->pending);
                } else {
                    value_open(p, sp);
                }
            }
            break;
        case M_VATTR:
            i += scan(p, &sp->vattr_m, s + i, n - i, &match, vattr_bytes, off);
            if (match == 0)
                value_open(p, sp);
            break;
        case M_VALUE:
            i += scan(p, &sp->value_m, s + i, n - i, &match, value_bytes, off);
            if (match < 0)
                break;
            value_close(p);
            switch (sp->value_act[match]) {
            case A_PARAM_END:
                p->mode = M_INV;
                break;
            case A_PARAM_NEXT:
                p->mode = M_KEY;
                tp_buf_clear(&p->key);
                break;
            case A_INVOKE_END:
                p->fstate = end_invoke(p);
                p->mode = sp->bare ? M_TEXT : M_BLOCK;
                break;
            default:
                end_invoke(p);
                p->mode = M_TEXT;
                break;
            }
            break;
        }
    }
}

static void xml_finish(tp_parser *p)
{
    const xml_spelling *sp = spelling(p);
    switch (p->mode) {
    case M_TEXT:
        tp_release_held(p, &sp->text_m);
        break;
    case M_OPEN: /* a block opener that started no call: text */
        not_a_call(p, sp);
        tp_release_held(p, &sp->text_m);
        break;
    case M_BLOCK: /* the calls are complete; a partial tag is markup, or prose after prose */
        if (p->fstate & F_PROSE)
            tp_release_held(p, &sp->block_m);
        p->node = 0;
        break;
    default: /* end of stream inside an invoke: reported; one not announced yet is text */
        p->node = 0;
        if (!p->discard)
            tp_call_unterminated(p);
        else
            p->after_call = 1;
        break;
    }
    tp_text_finish(p);
}

const tp_format tp_fmt_qwen3_coder = {"qwen3_coder", xml_feed, xml_finish};
const tp_format tp_fmt_minimax_m2 = {"minimax_m2", xml_feed, xml_finish};
const tp_format tp_fmt_mimo = {"mimo", xml_feed, xml_finish};
const tp_format tp_fmt_dots = {"dots", xml_feed, xml_finish};
const tp_format tp_fmt_minicpm5 = {"minicpm5", xml_feed, xml_finish};
const tp_format tp_fmt_kimi_k3 = {"kimi_k3", xml_feed, xml_finish};
const tp_format tp_fmt_step3 = {"step3", xml_feed, xml_finish};
