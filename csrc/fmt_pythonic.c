/* Pythonic tool calls (Llama 4, some Llama 3.2 prompts): a Python list of
 * calls with keyword arguments whose values are Python literals.
 *
 *   [get_weather(city="Paris", days=3), search(q='a\'b', tags=["x"], opts={"k": None})]
 *   optionally inside <|python_start|> ... <|python_end|> (dropped)
 *
 * SGLang's PythonicDetector parses the list with `ast` and converts each
 * keyword value (ast.Constant str/int/float/bool/None, ast.List, ast.Dict)
 * with json.dumps; this engine does the same conversion while the text
 * streams: string content is written as JSON string content as it arrives
 * (Python escapes decoded; adjacent literals concatenated, so '''x''' reads
 * as Python reads it when x has no quote), numbers are written as json.dumps
 * writes int(x) / float(x) (negative numbers included: SGLang's converter
 * rejects the unary minus), True/False/None as true/false/null.
 *
 * A `[` in prose is held, with what follows it, until the text shows a
 * call list: `[NAME(` and then `)` or the first `KEY=`. Anything else
 * releases it as prose ("[1]", "[see(1)]", "[note(s)]"), so an unmatched
 * `[` never swallows the reply. The call is announced when committed, its
 * arguments stream from there. After `)`, `,` starts the next call of the
 * list (committed at its `(`), `]` ends the list. A call that turns out
 * malformed (a positional argument, a tuple, a call as a value, a string
 * prefix other than r/u, a non-string dict key, a number Python would not
 * read, a non-finite float) is reported and skipped to its `)` by counting
 * brackets outside Python strings; the list goes on (SGLang also drops only
 * that call). A list that breaks between calls is skipped to its `]`. */
/* Liquid LFM2 / LFM2.5 (lfm2) is a row of this engine: the list is the
 * body of a call block,
 *
 *   <|tool_call_start|>[get_weather(city='Paris', days=3), now()]<|tool_call_end|>
 *
 * written by the template's render_tool_calls: strings as Python literals
 * (LFM2.5: '...' with \\, \', \n, \r escaped; LFM2: "..." as is), lists
 * and dicts with `tojson` (so true/false/null appear inside them: read as
 * JSON's literals, as SGLang's Lfm2Detector does), other values with
 * `string` (True, None, 3, 1.5). Only the block tag starts a call: a `[`
 * in prose is prose. Inside the block SGLang also reads a bare call
 * (`f(a=1)`, no list) and JSON calls (`[{"name": ..., "arguments": ...}]`
 * or one bare object): at a `{` the block is handed to fmt_jsontag.c's
 * lfm2 row, which hands it back after the end tag. Bytes between the
 * list's `]` and the end tag are reported (trailing_content); a broken
 * call is skipped to its `)` as above, or to the block's end tag, which
 * always ends a skip. */
#include <stdlib.h>
#include <string.h>

#include "tp_internal.h"
#include "tp_swar.h"

#define PY_START "<|python_start|>"
#define PY_END "<|python_end|>"

typedef struct {
    const char *pats[3]; /* markers in prose */
    int npats;
    int list_pat;          /* the marker that is a list's `[` (-1: none) */
    int block_pat;         /* the marker that opens a call block (-1: none) */
    const char *block_end; /* the block's end tag (NULL: no block) */
    uint8_t json_words;    /* true/false/null are JSON's literals */
    uint8_t json_calls;    /* `{` in the block: JSON call objects (fmt_jsontag.c) */
    /* built by init */
    size_t end_len;
    tp_matcher text_m, end_m;
} py_row;

static py_row ROWS[] = {
    /* pythonic: a `[` in prose opens the list; the python tokens are dropped */
    {.pats = {"[", PY_START, PY_END}, .npats = 3, .list_pat = 0, .block_pat = -1},
    /* lfm2 */
    {.pats = {"<|tool_call_start|>"}, .npats = 1, .list_pat = -1, .block_pat = 0,
     .block_end = "<|tool_call_end|>", .json_words = 1, .json_calls = 1},
};
enum { ROW_PYTHONIC, ROW_LFM2 };

enum {
    P_TEXT,      /* prose: `[` and the python tokens are watched for */
    P_OPEN,      /* a held `[NAME(KEY` (pending): not committed yet */
    P_KEY,       /* committed: a keyword, or `)` */
    P_VALUE,     /* a keyword's value (vkind: V_*) */
    P_AFTER_ARG, /* `,` or `)` */
    P_AFTER_CALL,/* `,` (another call) or `]` */
    P_RESYNC,    /* a broken call: to the list's closing bracket */
    P_BLOCK,     /* block rows: after the block tag, `[`, a call or `{` */
    P_LIST0,     /* block rows: after the list's `[`: a call, `{` or `]` */
    P_END,       /* block rows: to the block's end tag */
};
/* P_OPEN steps (fstate) */
enum { O_WS, O_NAME, O_NAME_WS, O_PAREN_WS, O_KEY, O_KEY_WS };
/* value machine (vkind) */
enum { V_START, V_KEY_START, V_STR, V_STR_END, V_WORD, V_NUM, V_AFTER, V_COLON };
/* escape steps inside a string (js.num_state) */
enum { E_NONE, E_BS, E_HEX, E_OCT, E_CR };

/* This engine runs no JSON scanner; p->js keeps the value machine's state:
 *   js.depth, js.stack  open containers (bit 1: dict)
 *   js.lit_pos          the quote of the string being read
 *   js.str_is_key       bit 1: raw string, bit 2: the string is a dict key
 *   js.num_state        escape step; js.u_n / js.u_acc: its digits */
#define STR_RAW 1
#define STR_KEY 2

int tp_fmt_pythonic_init(void)
{
    for (size_t r = 0; r < sizeof(ROWS) / sizeof(ROWS[0]); r++) {
        py_row *w = &ROWS[r];
        if (tp_matcher_build(&w->text_m, w->pats, w->npats))
            return -1;
        if (w->block_end) {
            const char *end[] = {w->block_end};
            w->end_len = strlen(w->block_end);
            if (tp_matcher_build(&w->end_m, end, 1))
                return -1;
        }
    }
    return 0;
}

static int is_id0(uint8_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
/* after the first letter: ASCII word characters, and any non-ASCII byte
 * (Python identifiers, and SGLang's `\w`, take Unicode letters) */
static int is_id(uint8_t c) { return is_id0(c) || (c >= '0' && c <= '9') || c >= 0x80; }

/* argument bytes of the open call (none while a dropped call is read) */
static void out(tp_parser *p, const char *s, size_t n)
{
    if (!p->discard)
        tp_ev_args(p, (const uint8_t *)s, n);
}

static void out_surrogate(tp_parser *p, uint32_t cp)
{
    char e[8];
    static const char hex[] = "0123456789abcdef";
    e[0] = '\\', e[1] = 'u';
    for (int k = 0; k < 4; k++)
        e[2 + k] = hex[(cp >> (12 - 4 * k)) & 15];
    out(p, e, 6);
}

/* a high surrogate from an escape is held (js.hi) until the string's next
 * content: a low one after it would read as a pair in JSON, so the pair is
 * written as the character it makes (as the JSON normalizer writes it);
 * anything else writes it as a lone escape first */
static void flush_hi(tp_parser *p)
{
    if (p->js.hi) {
        uint32_t hi = p->js.hi;
        p->js.hi = 0;
        out_surrogate(p, hi);
    }
}

static void out_esc(tp_parser *p, const uint8_t *s, size_t n)
{
    if (n)
        flush_hi(p);
    if (!p->discard && n)
        tp_ev_args_escaped(p, s, n);
}

/* a code point decoded from an escape, as JSON string content */
static void out_cp(tp_parser *p, uint32_t cp)
{
    uint8_t b[4];
    size_t n;
    if (p->js.hi && cp >= 0xDC00 && cp <= 0xDFFF) {
        cp = 0x10000 + ((p->js.hi - 0xD800) << 10) + (cp - 0xDC00);
        p->js.hi = 0;
    } else {
        flush_hi(p);
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            p->js.hi = cp;
            return;
        }
        if (cp >= 0xDC00 && cp <= 0xDFFF) { /* a lone low surrogate: a JSON escape */
            out_surrogate(p, cp);
            return;
        }
    }
    if (cp < 0x80) {
        b[0] = (uint8_t)cp, n = 1;
    } else if (cp < 0x800) {
        b[0] = (uint8_t)(0xC0 | (cp >> 6)), b[1] = (uint8_t)(0x80 | (cp & 63)), n = 2;
    } else if (cp < 0x10000) {
        b[0] = (uint8_t)(0xE0 | (cp >> 12)), b[1] = (uint8_t)(0x80 | ((cp >> 6) & 63));
        b[2] = (uint8_t)(0x80 | (cp & 63)), n = 3;
    } else {
        b[0] = (uint8_t)(0xF0 | (cp >> 18)), b[1] = (uint8_t)(0x80 | ((cp >> 12) & 63));
        b[2] = (uint8_t)(0x80 | ((cp >> 6) & 63)), b[3] = (uint8_t)(0x80 | (cp & 63)), n = 4;
    }
    out_esc(p, b, n);
}

static int in_dict(const tp_parser *p)
{
    return p->js.depth && tp_json_nest_obj(&p->js, p->js.depth - 1);
}

/* the list broke at `off`: report, then skip `depth` brackets (to the
 * call's `)` inside its arguments, else to the list's `]`) */
static void broken(tp_parser *p, int code, uint64_t off, uint32_t depth, uint8_t quote)
{
    p->have_name = p->mode == P_KEY || p->mode == P_VALUE || p->mode == P_AFTER_ARG;
    if (p->discard)
        p->discard = 0;
    else
        tp_call_fail(p, code, off);
    tp_buf_clear(&p->pending);
    p->resync_depth = depth;
    p->resync_str = quote; /* the quote of an open string, 0 if none */
    p->js.num_state = E_NONE;
    p->nx_pos = 0; /* block rows: bytes of the end tag matched */
    p->mode = P_RESYNC;
}

/* broken inside a call's arguments: the call's `(` and the open
 * containers enclose the point of failure */
static void bad_value(tp_parser *p, uint64_t off, uint8_t quote)
{
    broken(p, TP_ERR_JSON_SYNTAX, off, 1 + p->js.depth, quote);
}

static void start_args(tp_parser *p, uint64_t off)
{
    uint64_t mark = p->drop_mark;
    if (p->ws.len && mark != UINT64_MAX && p->ws_end == mark && p->ws_start == mark - p->ws.len)
        tp_drop_mark(p, p->ws_start); /* a refused call's text: with the whitespace held before it */
    tp_text_call_starts(p);
    tp_buf_clear(&p->pending);
    p->discard = !tp_call_open(p, p->name.data, p->name.len, off);
    if (!p->discard) {
        tp_drop_mark(p, UINT64_MAX);
        tp_call_announce(p);
    }
    out(p, "{", 1);
    p->first = 1;
}

/* `KEY=`: the keyword, then its value */
static void key_done(tp_parser *p)
{
    if (!p->first)
        out(p, ", ", 2);
    p->first = 0;
    out(p, "\"", 1);
    out_esc(p, p->key.data, p->key.len);
    out(p, "\": ", 3);
    tp_buf_clear(&p->key);
    p->mode = P_VALUE;
    p->vkind = V_START;
    p->js.depth = 0;
    p->have_args = 0; /* a `,` seen in the current container */
}

static void call_done(tp_parser *p, uint64_t end)
{
    out(p, "}", 1);
    if (p->discard) {
        /* the refused call's dropped text runs on through the list's
         * `, ` or `]` (markup of no call), to the next call's name or
         * the text after the list */
        (void)end;
        p->discard = 0;
    }
    else
        tp_call_close(p);
    p->mode = P_AFTER_CALL;
}

/* a held `[...` that is not a call list: prose */
static void not_a_list(tp_parser *p)
{
    /* at its stream offset (the `[`'s), so a blank it ends with that a
     * call's marker follows is known to be next to it */
    tp_text_at(p, p->pending.data, p->pending.len, p->call_off);
    tp_buf_clear(&p->pending);
    p->mode = P_TEXT;
    p->node = 0;
}

/* P_OPEN: one byte of `[NAME(KEY=`; the list is committed at `(` when a
 * call of it has already been read (trailing_reported: in a list) */
static void open_step(tp_parser *p, uint8_t c, uint64_t off, int *consumed)
{
    int in_list = p->trailing_reported;
    *consumed = 1;
    /* A head read undecided (the list's `[` on, or in a list a call's name
     * and the blanks after it) is at most TP_DROP_TAIL bytes: a refused
     * call's dropped text begins there, and of bytes before the chunk the
     * dropped-text layer has only the last TP_DROP_TAIL (its ring). A longer
     * head (blanks) makes no call, decided at a stream offset, so the same
     * for any chunking (it was dropped text one-shot, lost streamed: fuzz
     * finding, regress inputs pythonic--head-blanks-past-drop-ring*). */
    uint64_t head = in_list ? (p->fstate == O_NAME || p->fstate == O_NAME_WS ? p->drop_mark : UINT64_MAX)
                            : p->call_off;
    if (head != UINT64_MAX && p->ws.len && p->ws_end == head && p->ws_start == head - p->ws.len)
        head = p->ws_start; /* with the whitespace held before it (start_args) */
    if (head <= off && off - head >= TP_DROP_TAIL) {
        *consumed = 0;
        if (in_list)
            broken(p, TP_ERR_BAD_MARKUP, off, 1, 0);
        else
            not_a_list(p);
        return;
    }
    if (!in_list && tp_buf_push(&p->pending, c)) {
        *consumed = 0;
        not_a_list(p);
        return;
    }
    switch (p->fstate) {
    case O_WS:
        if (tp_is_ws(c))
            return;
        if (is_id0(c)) {
            p->fstate = O_NAME;
            if (in_list) /* a refused or broken call before it: its dropped text ends here */
                tp_drop_end_off(p, off);
            tp_drop_mark(p, in_list ? off : p->call_off); /* the list's `[` is its first call's */
            tp_buf_clear(&p->name);
            if (tp_buf_push(&p->name, c) == 0)
                return;
        }
        break;
    case O_NAME:
        if (is_id(c)) {
            if (tp_buf_push(&p->name, c) == 0)
                return;
            break;
        }
        p->fstate = O_NAME_WS;
        /* fall through */
    case O_NAME_WS:
        if (tp_is_ws(c))
            return;
        if (c == '(') {
            p->fstate = O_PAREN_WS;
            if (in_list) {
                start_args(p, off);
                tp_buf_clear(&p->key);
                p->fstate = 0;
                p->mode = P_KEY;
            }
            return;
        }
        break;
    case O_PAREN_WS:
        if (tp_is_ws(c))
            return;
        if (c == ')') { /* a call without arguments */
            start_args(p, off);
            call_done(p, off + 1);
            return;
        }
        if (is_id0(c)) {
            p->fstate = O_KEY;
            tp_buf_clear(&p->key);
            if (tp_buf_push(&p->key, c) == 0)
                return;
        }
        break;
    case O_KEY:
        if (is_id(c)) {
            if (tp_buf_push(&p->key, c) == 0)
                return;
            break;
        }
        p->fstate = O_KEY_WS;
        /* fall through */
    case O_KEY_WS:
        if (tp_is_ws(c))
            return;
        if (c == '=') {
            start_args(p, off);
            key_done(p);
            return;
        }
        break;
    }
    *consumed = 0; /* the byte is read again, as prose or by the resync */
    if (in_list) {
        /* a name or keyword over max_name: at the start of the character
         * that did not fit (a broken call's dropped text is whole characters) */
        if (p->fstate == O_NAME || p->fstate == O_KEY)
            off = tp_buf_char_start(p->fstate == O_KEY ? &p->key : &p->name, c, off);
        broken(p, TP_ERR_BAD_MARKUP, off, 1, 0);
    } else {
        p->pending.len--;
        not_a_list(p);
    }
}

/* a value is complete: what may follow it */
static void value_done(tp_parser *p)
{
    p->vkind = p->js.depth ? V_AFTER : V_START;
    if (!p->js.depth)
        p->mode = P_AFTER_ARG;
}

static void open_container(tp_parser *p, int dict, uint64_t off)
{
    if (p->js.depth >= p->lim.max_depth) {
        broken(p, TP_ERR_JSON_DEPTH, off, 1 + p->js.depth, 0);
        return;
    }
    if (tp_json_nest_set(&p->js, p->js.depth, dict)) {
        broken(p, TP_ERR_NO_MEMORY, off, 1 + p->js.depth, 0);
        return;
    }
    p->js.depth++;
    out(p, dict ? "{" : "[", 1);
    p->vkind = dict ? V_KEY_START : V_START;
}

static int close_container(tp_parser *p, uint8_t c)
{
    if (!p->js.depth || (c == '}') != in_dict(p))
        return -1;
    p->js.depth--;
    out(p, c == '}' ? "}" : "]", 1);
    p->have_args = 0;
    value_done(p);
    return 0;
}

static void begin_string(tp_parser *p, uint8_t quote, uint8_t flags)
{
    p->js.lit_pos = quote;
    p->js.str_is_key = flags;
    p->js.num_state = E_NONE;
    p->js.hi = 0;
    p->vkind = V_STR;
    out(p, "\"", 1);
}

/* a number or a word (True, False, None) in pending, ended by `c` */
static int word_done(tp_parser *p, const py_row *row)
{
    const uint8_t *w = p->pending.data;
    size_t n = p->pending.len;
    if (n == 4 && (memcmp(w, "True", 4) == 0 || (row->json_words && memcmp(w, "true", 4) == 0)))
        out(p, "true", 4);
    else if (n == 5 && (memcmp(w, "False", 5) == 0 || (row->json_words && memcmp(w, "false", 5) == 0)))
        out(p, "false", 5);
    else if (n == 4 && (memcmp(w, "None", 4) == 0 || (row->json_words && memcmp(w, "null", 4) == 0)))
        out(p, "null", 4);
    else
        return -1;
    return 0;
}

/* Python's int() / float() of a decimal literal (with a sign, `_` between
 * digits), written as json.dumps writes it */
static int number_done(tp_parser *p)
{
    char buf[TP_JSON_NUM_MAX + 2];
    const uint8_t *s = p->pending.data;
    size_t n = p->pending.len, k = 0, i = 0, digits = 0;
    int neg = 0, is_float = 0;
    if (n > TP_JSON_NUM_MAX)
        return -1;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (neg)
        buf[k++] = '-';
    size_t int_start = k;
    uint8_t prev = 0;
    for (; i < n; i++) {
        uint8_t c = s[i];
        if (c == '_') {
            if (!(prev >= '0' && prev <= '9') || i + 1 >= n || !(s[i + 1] >= '0' && s[i + 1] <= '9'))
                return -1;
        } else if (c >= '0' && c <= '9') {
            buf[k++] = (char)c;
            digits += !is_float;
        } else if (c == '.' || c == 'e' || c == 'E' || ((c == '+' || c == '-') && (prev == 'e' || prev == 'E'))) {
            buf[k++] = (char)c;
            is_float = 1;
        } else {
            return -1;
        }
        prev = c;
    }
    buf[k] = 0;
    if (!is_float) {
        if (!digits)
            return -1;
        const char *d = buf + int_start;
        size_t dn = k - int_start;
        size_t z = 0;
        while (z + 1 < dn && d[z] == '0')
            z++;
        if (z && d[0] == '0') { /* "007": not Python; "000" is 0 */
            for (size_t q = 0; q < dn; q++)
                if (d[q] != '0')
                    return -1;
        }
        if (dn - z == 1 && d[z] == '0')
            neg = 0; /* -0 is 0 */
        if (neg)
            out(p, "-", 1);
        out(p, d + z, dn - z);
        return 0;
    }
    /* float: digits around one '.', an optional exponent with digits */
    char *end;
    double v = strtod(buf, &end);
    if (end != buf + k || k == (size_t)neg)
        return -1;
    const char *dot = strchr(buf, '.');
    const char *e = strpbrk(buf, "eE");
    if (e && (e == buf + neg || !(e[1] == '+' || e[1] == '-' ? e[2] : e[1])))
        return -1;
    if (dot && e && dot > e)
        return -1;
    if (v - v != 0) /* inf: json.dumps(allow_nan=False) refuses it */
        return -1;
    char num[40];
    size_t len = tp_short_float(buf, k, num); /* (no printf for a float such as 12.5) */
    if (!len)
        len = tp_format_double(v, num);
    out(p, num, len);
    return 0;
}

/* Index of the first `q` or backslash in s[0:n) (n if none): eight bytes
 * at a time (the lowest flagged byte of a word is exact), then one by one. */
static size_t quote_or_backslash(const uint8_t *s, size_t n, uint8_t q)
{
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        uint64_t x = tp_load8(s + k), a = x ^ (TP_ONES * q), b = x ^ (TP_ONES * '\\');
        uint64_t m = (((a - TP_ONES) & ~a) | ((b - TP_ONES) & ~b)) & TP_HIGHS;
        if (m)
            return k + ((size_t)__builtin_ctzll(m) >> 3);
    }
    while (k < n && s[k] != q && s[k] != '\\')
        k++;
    return k;
}

/* One byte of a string's content. Returns 1 when the byte closed it. */
static size_t string_run(tp_parser *p, const uint8_t *s, size_t n, uint64_t base)
{
    size_t i = 0;
    uint8_t q = p->js.lit_pos;
    int raw = p->js.str_is_key & STR_RAW;
    while (i < n && p->mode == P_VALUE && p->vkind == V_STR) {
        if (p->js.num_state == E_NONE) {
            size_t k = i + quote_or_backslash(s + i, n - i, q);
            out_esc(p, s + i, k - i);
            i = k;
            if (i == n)
                break;
            if (s[i] == q) {
                i++;
                p->vkind = V_STR_END;
                break;
            }
            i++;
            p->js.num_state = E_BS;
            continue;
        }
        uint8_t c = s[i];
        if (p->js.num_state == E_BS) {
            p->js.num_state = E_NONE;
            i++;
            if (raw) { /* r"...": the backslash stays, the next byte too */
                uint8_t b[2] = {'\\', c};
                out_esc(p, b, 2);
                continue;
            }
            static const char from[] = "ntr\\'\"abfv0";
            static const char to[] = "\n\t\r\\'\"\a\b\f\v";
            const char *f = memchr(from, c, sizeof from - 1);
            if (f && c != '0') {
                out_esc(p, (const uint8_t *)&to[f - from], 1);
            } else if (c == '\n') { /* a line continuation */
            } else if (c == '\r') {
                p->js.num_state = E_CR;
            } else if (c == 'x' || c == 'u' || c == 'U') {
                p->js.num_state = E_HEX;
                p->js.u_n = c == 'x' ? 2 : c == 'u' ? 4 : 8;
                p->js.u_acc = 0;
            } else if (c >= '0' && c <= '7') {
                p->js.num_state = E_OCT;
                p->js.u_n = 2;
                p->js.u_acc = (uint32_t)(c - '0');
            } else { /* an unknown escape: Python keeps the backslash */
                uint8_t b[2] = {'\\', c};
                if (c == 'N') { /* \N{...}: not read here */
                    bad_value(p, base + i - 1, q);
                    return i;
                }
                out_esc(p, b, 2);
            }
        } else if (p->js.num_state == E_CR) {
            p->js.num_state = E_NONE;
            if (c == '\n')
                i++;
        } else if (p->js.num_state == E_HEX) {
            int h = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (h < 0) {
                bad_value(p, base + i, q);
                return i;
            }
            i++;
            p->js.u_acc = p->js.u_acc * 16 + (uint32_t)h;
            if (--p->js.u_n == 0) {
                p->js.num_state = E_NONE;
                if (p->js.u_acc > 0x10FFFF) {
                    bad_value(p, base + i - 1, q);
                    return i;
                }
                out_cp(p, p->js.u_acc);
            }
        } else { /* E_OCT: up to three octal digits */
            if (c >= '0' && c <= '7' && p->js.u_n) {
                p->js.u_acc = p->js.u_acc * 8 + (uint32_t)(c - '0');
                p->js.u_n--;
                i++;
            } else {
                p->js.u_n = 0;
            }
            if (!p->js.u_n) {
                p->js.num_state = E_NONE;
                out_cp(p, p->js.u_acc);
            }
        }
    }
    return i;
}

/* P_VALUE: one step of the value machine; returns the bytes consumed */
static size_t value_step(tp_parser *p, const py_row *row, const uint8_t *s, size_t n, uint64_t off)
{
    uint8_t c = s[0];
    switch (p->vkind) {
    case V_STR:
        return string_run(p, s, n, off);
    case V_STR_END: /* adjacent literals are one string */
        if (tp_is_ws(c))
            return 1;
        if (c == '"' || c == '\'') {
            p->js.lit_pos = c;
            p->js.str_is_key &= (uint8_t)~STR_RAW;
            p->js.num_state = E_NONE;
            p->vkind = V_STR;
            return 1;
        }
        flush_hi(p);
        out(p, "\"", 1);
        if (p->js.str_is_key & STR_KEY) {
            p->vkind = V_COLON;
        } else {
            value_done(p);
        }
        return 0;
    case V_COLON:
        if (tp_is_ws(c))
            return 1;
        if (c != ':') {
            bad_value(p, off, 0);
            return 0;
        }
        out(p, ": ", 2);
        p->vkind = V_START;
        return 1;
    case V_AFTER:
        if (tp_is_ws(c))
            return 1;
        if (c == ',') {
            p->have_args = 1;
            p->vkind = in_dict(p) ? V_KEY_START : V_START;
            return 1;
        }
        if (c == ']' || c == '}') {
            if (close_container(p, c))
                bad_value(p, off, 0);
            return 1;
        }
        bad_value(p, off, 0);
        return 0;
    case V_WORD:
    case V_NUM:
        if (is_id(c) || c == '.' || (p->vkind == V_NUM && (c == '+' || c == '-'))) {
            if (tp_buf_push(&p->pending, c)) { /* at the start of the character that did not fit */
                broken(p, TP_ERR_BUFFER_LIMIT, tp_buf_char_start(&p->pending, c, off), 1 + p->js.depth, 0);
                return 0;
            }
            return 1;
        }
        if (p->vkind == V_WORD && (c == '"' || c == '\'') && p->pending.len == 1 &&
            (p->pending.data[0] | 0x20) == 'r') {
            begin_string(p, c, STR_RAW | (p->js.str_is_key & STR_KEY));
            tp_buf_clear(&p->pending);
            return 1;
        }
        if (p->vkind == V_WORD && (c == '"' || c == '\'') && p->pending.len == 1 &&
            (p->pending.data[0] | 0x20) == 'u') {
            begin_string(p, c, p->js.str_is_key & STR_KEY);
            tp_buf_clear(&p->pending);
            return 1;
        }
        if ((p->js.str_is_key & STR_KEY) || (p->vkind == V_WORD ? word_done(p, row) : number_done(p))) {
            bad_value(p, off, 0);
            return 0;
        }
        tp_buf_clear(&p->pending);
        value_done(p);
        return 0;
    case V_KEY_START:
    case V_START:
        if (tp_is_ws(c))
            return 1;
        if ((c == ']' || c == '}') && p->js.depth && (p->have_args || p->vkind == V_KEY_START ||
                                                      !in_dict(p))) {
            /* empty container, or a trailing comma */
            if (close_container(p, c))
                bad_value(p, off, 0);
            return 1;
        }
        if (p->have_args && p->js.depth) {
            out(p, ", ", 2);
            p->have_args = 0;
        }
        p->js.str_is_key = p->vkind == V_KEY_START ? STR_KEY : 0;
        if (c == '"' || c == '\'') {
            begin_string(p, c, p->js.str_is_key);
            return 1;
        }
        if (p->vkind == V_KEY_START) { /* only string keys */
            if (c == 'r' || c == 'u' || c == 'R' || c == 'U') {
                p->vkind = V_WORD;
                tp_buf_clear(&p->pending);
                tp_buf_push(&p->pending, c);
                return 1;
            }
            bad_value(p, off, 0);
            return 0;
        }
        if (c == '[' || c == '{') {
            open_container(p, c == '{', off);
            return 1;
        }
        tp_buf_clear(&p->pending);
        if (is_id0(c)) {
            p->vkind = V_WORD;
        } else if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.') {
            p->vkind = V_NUM;
        } else {
            bad_value(p, off, 0);
            return 0;
        }
        tp_buf_push(&p->pending, c);
        return 1;
    }
    return 1;
}

/* block rows: the list (or a bare call) is over; the end tag follows */
static void to_end_tag(tp_parser *p, int reported)
{
    p->mode = P_END;
    p->node = 0;
    p->trailing_reported = (uint8_t)reported; /* bytes before the end tag: reported once */
}

/* block rows: the end tag closed the block */
static void block_over(tp_parser *p)
{
    tp_raw_end(p); /* (a block without a call: markup) */
    p->mode = P_TEXT;
    p->node = 0;
    p->after_call = 1;
}

/* Reads s[0:n); returns the bytes read: all of them, unless the block was
 * handed to fmt_jsontag.c (p->engine_alt) at a `{` */
static size_t py_feed_upto(tp_parser *p, const py_row *w, const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n && !p->oom) {
        uint64_t off = p->base + i;
        uint8_t c = s[i];
        switch (p->mode) {
        case P_TEXT: {
            int match;
            i += tp_scan_text(p, &w->text_m, s + i, n - i, &match);
            if (match >= 0 && match == w->list_pat) {
                p->mode = P_OPEN;
                p->fstate = O_WS;
                p->trailing_reported = 0;
                p->call_off = p->base + i - 1;
                tp_buf_clear(&p->pending);
                tp_buf_push(&p->pending, '[');
            } else if (match >= 0 && match == w->block_pat) {
                size_t ml = strlen(w->pats[match]);
                tp_raw_begin(p, w->pats[match], ml, i); /* the block's text, until a call is announced */
                tp_text_call_starts(p); /* (the whitespace held before the tag is in that record) */
                p->call_off = p->base + i - ml;
                p->mode = P_BLOCK;
            } else if (match >= 0) {
                /* <|python_start|>, <|python_end|>: framing of the message
                 * (Llama 4's template writes them around the content), out
                 * of the text as SGLang takes them out: markup. The
                 * whitespace held before one is text, as in SGLang's
                 * text (a token is no call: nothing to hold it for) */
                size_t ml = strlen(w->pats[match]);
                tp_text_flush_ws(p);
                tp_ev_markup(p, p->base + i - ml, (const uint8_t *)w->pats[match], ml);
            }
            break;
        }
        case P_BLOCK:
        case P_LIST0:
            if (tp_is_ws(c)) {
                i++;
            } else if (c == '[' && p->mode == P_BLOCK) {
                p->mode = P_LIST0;
                i++;
            } else if (c == ']' && p->mode == P_LIST0) { /* an empty list */
                i++;
                to_end_tag(p, 0);
            } else if (c == '{' && w->json_calls) {
                i++;
                p->engine_alt = 1;
                tp_jsontag_lfm2_enter(p, p->call_off);
                return i;
            } else { /* a call (what is not one is reported by P_OPEN) */
                p->mode = P_OPEN;
                p->fstate = O_WS;
                p->trailing_reported = 1; /* in the block: committed at `(` */
                tp_buf_clear(&p->pending);
            }
            break;
        case P_OPEN: {
            int used;
            open_step(p, c, off, &used);
            i += (size_t)used;
            break;
        }
        case P_KEY: /* fstate: 1 once the keyword has ended */
            if (tp_is_ws(c)) {
                p->fstate = p->key.len != 0;
                i++;
            } else if (c == ')' && p->key.len == 0) {
                i++;
                call_done(p, p->base + i);
            } else if (is_id(c) && !p->fstate && (p->key.len || is_id0(c))) {
                if (tp_buf_push(&p->key, c)) { /* at the start of the character that did not fit */
                    broken(p, TP_ERR_BAD_NAME, tp_buf_char_start(&p->key, c, off), 1, 0);
                    break;
                }
                i++;
            } else if (c == '=' && p->key.len) {
                i++;
                key_done(p);
            } else {
                broken(p, TP_ERR_BAD_MARKUP, off, 1, 0);
            }
            break;
        case P_VALUE:
            i += value_step(p, w, s + i, n - i, off);
            break;
        case P_AFTER_ARG:
            if (tp_is_ws(c)) {
                i++;
            } else if (c == ',') {
                i++;
                tp_buf_clear(&p->key);
                p->fstate = 0;
                p->mode = P_KEY;
            } else if (c == ')') {
                i++;
                call_done(p, p->base + i);
            } else {
                broken(p, TP_ERR_BAD_MARKUP, off, 1, 0);
            }
            break;
        case P_AFTER_CALL:
            if (tp_is_ws(c)) {
                i++;
            } else if (c == ',') {
                i++;
                p->mode = P_OPEN;
                p->fstate = O_WS;
                p->trailing_reported = 1; /* in a list: committed at `(` */
                tp_buf_clear(&p->pending);
            } else if (c == ']') {
                i++;
                if (w->block_end) {
                    to_end_tag(p, 0);
                } else {
                    p->mode = P_TEXT;
                    p->node = 0;
                    p->after_call = 1;
                }
            } else if (w->block_end) {
                to_end_tag(p, 0); /* a bare call (or a list without its `]`) */
            } else {
                broken(p, TP_ERR_BAD_MARKUP, off, 1, 0);
            }
            break;
        case P_END: {
            int match, junk;
            size_t junk_at = 0;
            size_t k = tp_scan_skip(p, &w->end_m, s + i, n - i, &match, &junk, &junk_at);
            if (junk && !p->trailing_reported) {
                p->trailing_reported = 1;
                tp_ev_error(p, TP_ERR_TRAILING, p->base + i + junk_at, -1, NULL, 0);
            }
            i += k;
            if (match == 0) {
                if (p->raw_on) /* a block that closes with no call (`[]`): markup of no call */
                    tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + i, -1, (const uint8_t *)"a block with no call", 20);
                block_over(p);
            }
            break;
        }
        case P_RESYNC: {
            /* brackets outside Python strings (' or "), to the list's `]`;
             * in a block, its end tag ends the skip wherever it comes */
            size_t k = i;
            int ended = 0;
            for (; k < n && p->resync_depth; k++) {
                uint8_t b = s[k];
                if (w->block_end) {
                    p->nx_pos = b == (uint8_t)w->block_end[p->nx_pos] ? p->nx_pos + 1
                              : b == (uint8_t)w->block_end[0];
                    if (p->nx_pos == w->end_len) {
                        k++;
                        ended = 1;
                        break;
                    }
                }
                if (p->js.num_state == E_BS)
                    p->js.num_state = E_NONE;
                else if (p->resync_str && b == '\\')
                    p->js.num_state = E_BS;
                else if (p->resync_str)
                    p->resync_str = b == p->resync_str ? 0 : p->resync_str;
                else if (b == '"' || b == '\'')
                    p->resync_str = b;
                else if (b == '[' || b == '(' || b == '{')
                    p->resync_depth++;
                else if (b == ']' || b == ')' || b == '}')
                    p->resync_depth--;
            }
            i = k;
            if (ended) {
                block_over(p);
            } else if (!p->resync_depth && p->have_name) {
                /* the broken call's `)`: its dropped text runs on (as a
                 * refused call's does, call_done) to the list's next call,
                 * which records from its own first byte */
                p->mode = P_AFTER_CALL; /* the list goes on */
            } else if (!p->resync_depth && w->block_end) {
                to_end_tag(p, 1); /* (the error was reported) */
            } else if (!p->resync_depth) {
                p->mode = P_TEXT;
                p->node = 0;
                p->after_call = 1;
            }
            break;
        }
        }
    }
    return i;
}

static void py_finish_row(tp_parser *p, const py_row *w)
{
    switch (p->mode) {
    case P_TEXT:
        tp_release_held(p, &w->text_m);
        break;
    case P_OPEN:
        /* in a list: a call's name (and what followed it) cut off: its bytes
         * are the error's dropped text (after a call's end or a refused
         * call's dropped text they would be in nothing; a block's record
         * on: a block cut off before its first call, its text is text) */
        if (!p->trailing_reported)
            not_a_list(p); /* a `[` and the end: prose */
        else if (p->raw_on || !tp_drop_mark_at_end(p, TP_ERR_UNTERMINATED))
            tp_call_unterminated(p);
        break;
    case P_BLOCK:
    case P_LIST0: /* the block tag and the end: a call cut off */
        tp_call_unterminated(p);
        break;
    case P_END: /* the calls are complete, the end tag missing */
        p->node = 0; /* (a partial end tag: markup) */
        if (p->raw_on) /* a block without a call */
            tp_call_unterminated(p);
        break;
    case P_RESYNC:
    case P_AFTER_CALL: /* calls complete, the list's `]` missing */
        break;
    default:
        if (p->discard)
            p->discard = 0;
        else
            tp_call_unterminated(p);
        break;
    }
    tp_text_finish(p);
}

static void py_feed(tp_parser *p, const uint8_t *s, size_t n) { py_feed_upto(p, &ROWS[ROW_PYTHONIC], s, n); }
static void py_finish(tp_parser *p) { py_finish_row(p, &ROWS[ROW_PYTHONIC]); }

const tp_format tp_fmt_pythonic = {"pythonic", py_feed, py_finish};

/* lfm2: the block moves between this engine and fmt_jsontag.c's lfm2 row
 * (JSON calls); each hand-over ends a piece of the chunk as a chunk's end
 * does (the raw and dropped-text records), so each engine reads its piece
 * at its own stream offset */
static void lfm2_feed(tp_parser *p, const uint8_t *s, size_t n)
{
    const uint8_t *s0 = s;
    size_t n0 = n;
    uint64_t base0 = p->base;
    for (;;) {
        int alt = p->engine_alt;
        size_t i = alt ? tp_jsontag_lfm2_feed(p, s, n) : py_feed_upto(p, &ROWS[ROW_LFM2], s, n);
        if (alt && !p->engine_alt) { /* the JSON block ended: prose again */
            p->mode = P_TEXT;
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

static void lfm2_finish(tp_parser *p)
{
    if (p->engine_alt)
        tp_jsontag_lfm2_finish(p);
    else
        py_finish_row(p, &ROWS[ROW_LFM2]);
}

const tp_format tp_fmt_lfm2 = {"lfm2", lfm2_feed, lfm2_finish};
