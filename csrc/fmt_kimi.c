/* Kimi-K2 / K2.5 tool calls.
 *
 *   <|tool_calls_section_begin|>
 *   <|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{ARGS}<|tool_call_end|>
 *   <|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{ARGS}<|tool_call_end|>
 *   <|tool_calls_section_end|>
 *
 * The text between <|tool_call_begin|> and <|tool_call_argument_begin|> is
 * the call id the model writes, `functions.NAME:IDX` (its chat template
 * renders the id of an earlier call back in the same place). The id may
 * also be `NAME:IDX` (no `functions.`), or a bare counter `IDX`; whitespace
 * may surround it and every other part. The id is kept and reported with
 * the call (the CALL_START event's span is the name followed by the id; the
 * event's offset field holds the length of the name).
 *
 * What streams and what is held: the special tokens are matched with the
 * marker automaton, a token split across chunks is held back while it can
 * still complete. The id is held (bounded by max_name) until
 * <|tool_call_argument_begin|>, then split into name and index and the name
 * checked against the tools. The call is announced at the `{` of its
 * arguments (SGLang's parser requires a JSON object there), and the
 * arguments stream through the JSON normalizer as they are generated. The
 * call ends when its JSON value closes; anything but whitespace from there
 * to <|tool_call_end|> is reported as trailing content.
 *
 * A bare counter names no tool. As SGLang does, the name is then inferred:
 * with one declared tool it is that tool (the call streams as usual); with
 * several, the arguments are held (bounded by max_buffer) until they close
 * and the tool whose declared properties best match the argument keys
 * (matches minus unknown keys, first best wins, tools without properties
 * skipped) is chosen; no tool scoring at least 0 drops the call.
 *
 * Inside the section, blanks after its token or a call are template
 * formatting; anything else is prose the model wrote there and is text
 * (issue 18: no byte lost): prose before the section's first call shows
 * the section token made no call (bad_markup with its bytes), the
 * section's end token after prose is a Markup event, an end or argument
 * token there closing no call is bad_markup, another section token is
 * read as the section's. Prose before and after the section is kept. A bare
 * <|tool_call_begin|> without the section token is a call too (SGLang's
 * streaming path reads it so). Stray end / argument tokens in prose are
 * markup and are dropped, as SGLang strips them. */
#include <stdlib.h>
#include <string.h>

#include "tp_internal.h"

#define SECTION_BEGIN "<|tool_calls_section_begin|>"
#define SECTION_END "<|tool_calls_section_end|>"
#define CALL_BEGIN "<|tool_call_begin|>"
#define CALL_END "<|tool_call_end|>"
#define ARG_BEGIN "<|tool_call_argument_begin|>"

enum {
    K_TEXT,  /* prose */
    K_BLOCK, /* inside the section: between calls */
    K_HEAD,  /* the call id, up to <|tool_call_argument_begin|> */
    K_OPEN,  /* whitespace before the `{` of the arguments */
    K_JSON,  /* the arguments */
    K_TAIL,  /* after the arguments, up to <|tool_call_end|> */
    K_SKIP,  /* a dropped call: up to its end */
};

/* markers, in one order for every matcher (indices are shared) */
enum { M_CALL_END, M_CALL_BEGIN, M_SECTION_END, M_SECTION_BEGIN, M_ARG_BEGIN, NMARK };
static const char *const MARKS[NMARK] = {CALL_END, CALL_BEGIN, SECTION_END, SECTION_BEGIN, ARG_BEGIN};

static tp_matcher all_m;   /* text, the id: every token */
static tp_matcher block_m; /* between calls, skipping: the tokens that end or start a call */

/* per-parser state kept in the generic fields:
 *   mode      K_* state
 *   first     1 inside a <|tool_calls_section_begin|> section
 *   name      the id while it is read; then the tool name
 *   key       the id (stripped)
 *   vkind     1: the name is to be inferred when the arguments close
 *   fstate    1: ... among the tools fitting a misspelled id (misspelled_id);
 *             K_BLOCK: prose began
 *   pending   the normalized arguments of such a call
 *   call_off  where the call's id / arguments start (limit errors go there)
 *   trailing_reported  trailing content after this call was reported
 *   discard   the call was refused at its `{`: its JSON is only read to its
 *             end (a token inside a string of it does not end the call) */

int tp_fmt_kimi_init(void)
{
    if (tp_matcher_build(&all_m, MARKS, NMARK))
        return -1;
    return tp_matcher_build(&block_m, MARKS, 4); /* all but ARG_BEGIN */
}

/* Runs the matcher, appending the text it passes over to dst. *over is set
 * when dst would exceed its limit. */
static size_t scan_into(tp_parser *p, const uint8_t *s, size_t n, tp_buf *dst, int *match, int *over)
{
    tp_scan_res r;
    uint8_t old = p->node;
    tp_matcher_scan(&all_m, &p->node, s, n, &r);
    if (r.held_text) {
        size_t hl;
        const uint8_t *held = tp_matcher_path(&all_m, old, &hl);
        if (tp_buf_append(dst, held, r.held_text))
            *over = 1;
    }
    if (r.text_len && tp_buf_append(dst, s, r.text_len))
        *over = 1;
    *match = r.match;
    return r.consumed;
}

static void begin_call(tp_parser *p, uint64_t off)
{
    if (!p->raw_on) /* (a section's first call: recorded from the section's token) */
        tp_raw_begin(p, CALL_BEGIN, sizeof CALL_BEGIN - 1, (size_t)(off - p->base));
    p->call_off = off;
    p->mode = K_HEAD;
    p->node = 0;
    p->vkind = 0;
    p->fstate = 0;
    p->discard = 0;
    p->trailing_reported = 0;
    tp_buf_clear(&p->name);
    tp_buf_clear(&p->key);
    tp_buf_clear(&p->pending);
}

static void call_over(tp_parser *p)
{
    tp_raw_end(p); /* no call is open */
    p->mode = p->first ? K_BLOCK : K_TEXT;
    p->node = 0;
    p->fstate = 0; /* K_BLOCK: no prose yet */
    p->after_call = 1;
}

/* A marker seen where no call, or an incomplete one, was open. */
static void on_marker(tp_parser *p, int match, uint64_t off)
{
    tp_raw_end(p); /* a call open here was complete or reported */
    if (match == M_CALL_BEGIN) {
        begin_call(p, off);
    } else if (match == M_SECTION_END) {
        p->first = 0;
        call_over(p);
    } else if (match == M_SECTION_BEGIN) {
        p->first = 1;
        call_over(p);
    } else {
        call_over(p);
    }
}

/* Drops the call: the rest of it, up to <|tool_call_end|> or the next
 * call or section token, is skipped. */
static void skip_call(tp_parser *p)
{
    tp_raw_end(p); /* the call was dropped (and reported) */
    p->mode = K_SKIP;
    p->node = 0;
}

static void fail(tp_parser *p, int code, uint64_t off)
{
    tp_call_fail(p, code, off);
    skip_call(p);
}

static int all_digits(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* ---- ids the model misspells ----
 * Kimi-K2 sometimes drops the `:` or the `.` of `functions.NAME:IDX`
 * (`functionsexec5`, `functions.exec5`) or writes a counter of its own
 * (`call00003`). Such an id is read with the bare counter's rules: a
 * `call` + digits id names no tool (the name is inferred as for a bare
 * counter); `functions` + NAME + digits names the declared tools that fit
 * (the id is `functions`, an optional `.`, the tool's name, then only
 * digits): exactly one fitting tool is the call's tool, several are decided
 * by the argument keys as a bare counter is, among those tools only
 * (p->fstate = 1). No tool fitting drops the call with `bad_name` (the id
 * as detail). Without a tool list, the name is the id's text without its
 * trailing digits. */

#define FUNCTIONS "functions"

/* s[0:n) (an id without `functions` and `.`) is tool t's name + digits */
static int fits(const uint8_t *s, size_t n, const uint8_t *t, size_t tl)
{
    return tl > 0 && tl <= n && memcmp(s, t, tl) == 0 && all_digits(s + tl, n - tl);
}

/* The NAME+digits part of a misspelled `functions…` id in p->key. */
static const uint8_t *misspelled_rest(const tp_parser *p, size_t *n)
{
    const uint8_t *s = p->key.data + (sizeof FUNCTIONS - 1);
    *n = p->key.len - (sizeof FUNCTIONS - 1);
    if (*n && s[0] == '.') {
        s++;
        (*n)--;
    }
    return s;
}

static int misspelled_id(tp_parser *p, const uint8_t *s, size_t n)
{
    static const char call[] = "call";
    if (n > sizeof call - 1 && memcmp(s, call, sizeof call - 1) == 0 &&
        all_digits(s + sizeof call - 1, n - (sizeof call - 1))) {
        p->vkind = 1; /* `callNNNNN`: a counter */
        tp_buf_clear(&p->name);
        return 0;
    }
    if (n <= sizeof FUNCTIONS - 1 || memcmp(s, FUNCTIONS, sizeof FUNCTIONS - 1) != 0)
        return -1;
    size_t rn;
    const uint8_t *rest = misspelled_rest(p, &rn);
    size_t nl = rn;
    while (nl && rest[nl - 1] >= '0' && rest[nl - 1] <= '9')
        nl--;
    if (nl == 0)
        return -1;
    if (p->flags & TP_FLAG_ACCEPT_ANY || tp_parser_tools(p)->names.n == 0) {
        tp_buf_clear(&p->name);
        return tp_buf_append(&p->name, rest, nl) ? -1 : 0;
    }
    const tp_strset *ts = &tp_parser_tools(p)->names;
    uint32_t found = 0, which = 0;
    for (uint32_t t = 0; t < ts->n; t++)
        if (fits(rest, rn, ts->keys + ts->off[t], ts->off[t + 1] - ts->off[t])) {
            found++;
            which = t;
        }
    if (found == 0)
        return -1;
    tp_buf_clear(&p->name);
    if (found > 1) { /* decided by the argument keys, among the fitting tools */
        p->vkind = 1;
        p->fstate = 1;
        return 0;
    }
    return tp_buf_append(&p->name, ts->keys + ts->off[which], ts->off[which + 1] - ts->off[which]) ? -1
                                                                                                    : 0;
}

/* bytes an id may not hold inside (after its surrounding blanks are
 * stripped): blanks, and the `<` and `|` of special tokens */
static const uint8_t ID_BAD[256] = {[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1, ['<'] = 1, ['|'] = 1};

/* Splits the id held in p->name: p->key gets the stripped id, p->name the
 * tool name (empty for a bare counter / empty id: vkind = 1). Returns 0, or
 * -1 when the id is not one of the accepted forms. */
static int split_id(tp_parser *p)
{
    uint8_t *s = p->name.data;
    size_t n = p->name.len;
    while (n && tp_is_ws(s[0])) {
        s++;
        n--;
    }
    while (n && tp_is_ws(s[n - 1]))
        n--;
    uint8_t bad = 0; /* (one pass without a branch per byte) */
    for (size_t i = 0; i < n; i++)
        bad |= ID_BAD[s[i]];
    if (bad)
        return -1;
    tp_buf_clear(&p->key);
    if (n && tp_buf_append(&p->key, s, n))
        return -1;
    s = p->key.data;
    if (n == 0 || all_digits(s, n)) { /* empty or a bare counter */
        p->vkind = 1;
        tp_buf_clear(&p->name);
        return 0;
    }
    size_t colon = n;
    while (colon > 0 && s[colon - 1] != ':')
        colon--;
    if (colon == 0)
        return misspelled_id(p, s, n);
    if (colon == n || !all_digits(s + colon, n - colon))
        return -1; /* no `:IDX` */
    size_t a = 0, b = colon - 1;
    static const char pre[] = "functions.";
    if (b > sizeof pre - 1 && memcmp(s, pre, sizeof pre - 1) == 0)
        a = sizeof pre - 1;
    if (b == a)
        return -1;
    tp_buf_clear(&p->name);
    return tp_buf_append(&p->name, s + a, b - a) ? -1 : 0;
}

/* Opens the call for the name in p->name and attaches the id. */
static int open_call(tp_parser *p, uint64_t off)
{
    if (!tp_call_open(p, p->name.data, p->name.len, off))
        return 0;
    tp_call_set_id(p, p->key.data, p->key.len); /* p->key is bounded by max_name too */
    tp_call_announce(p); /* announce point: the `{` of the arguments */
    return 1;
}

/* ---- name inference for a bare counter (held arguments) ---- */

/* Top-level keys of the normalized JSON object in s[0:n) (the normalizer's
 * canonical form: `{"k": v, "k2": v}`), each as its escaped bytes, added to
 * `keys`. Returns the number of distinct keys, or -1 if s is not an object
 * or memory ran out. */
static long object_keys(const uint8_t *s, size_t n, tp_strset *keys)
{
    if (n < 2 || s[0] != '{')
        return -1;
    size_t depth = 0;
    int expect_key = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c == '"') {
            size_t j = i + 1;
            while (j < n && s[j] != '"')
                j += s[j] == '\\' ? 2 : 1;
            if (j > n)
                j = n;
            if (depth == 1 && expect_key) {
                if (tp_strset_add(keys, s + i + 1, j - i - 1, (const uint8_t *)"", 0) < 0)
                    return -1;
                expect_key = 0;
            }
            i = j;
        } else if (c == '{' || c == '[') {
            depth++;
            expect_key = c == '{' && depth == 1;
        } else if (c == '}' || c == ']') {
            depth--;
        } else if (c == ',' && depth == 1) {
            expect_key = 1;
        }
    }
    return (long)keys->n;
}

/* The declared tool best matching the held arguments, or -1. */
static int infer_tool(tp_parser *p)
{
    const tp_tools *tt = tp_parser_tools(p);
    uint32_t ntools = tt->names.n;
    if (ntools == 1)
        return 0;
    if (ntools == 0)
        return -1;
    tp_strset keys;
    memset(&keys, 0, sizeof keys);
    long nkeys = object_keys(p->pending.data, p->pending.len, &keys);
    int best = -1;
    long best_score = -1;
    long *overlap = nkeys < 0 ? NULL : calloc(ntools, sizeof *overlap);
    uint8_t *has = overlap ? calloc(ntools, 1) : NULL;
    if (has) {
        for (uint32_t e = 0; e < tt->params.n; e++) {
            const uint8_t *k = tt->params.keys + tt->params.off[e];
            size_t kl = tt->params.off[e + 1] - tt->params.off[e];
            uint32_t tid;
            memcpy(&tid, k, 4);
            if (tid >= ntools)
                continue;
            has[tid] = 1;
            if (tp_strset_find(&keys, k + 4, kl - 4, (const uint8_t *)"", 0) >= 0)
                overlap[tid]++;
        }
        size_t rn = 0;
        const uint8_t *rest = p->fstate ? misspelled_rest(p, &rn) : NULL;
        const tp_strset *ts = &tt->names;
        for (uint32_t t = 0; t < ntools; t++) {
            long score = overlap[t] - (nkeys - overlap[t]);
            if (rest && !fits(rest, rn, ts->keys + ts->off[t], ts->off[t + 1] - ts->off[t]))
                continue;
            if (has[t] && score > best_score) {
                best_score = score;
                best = (int)t;
            }
        }
    } else if (nkeys >= 0) {
        p->oom = 1;
    }
    free(overlap);
    free(has);
    tp_strset_free(&keys);
    return best;
}

/* The held arguments of a bare-counter call closed: name it, then emit it
 * whole. */
static void close_inferred(tp_parser *p, uint64_t off)
{
    int t = infer_tool(p);
    if (t < 0) {
        tp_ev_error(p, TP_ERR_MISSING_NAME, p->call_off, -1, p->key.data, p->key.len);
        return;
    }
    const tp_strset *ts = &tp_parser_tools(p)->names;
    tp_buf_clear(&p->name);
    if (tp_buf_append(&p->name, ts->keys + ts->off[t], ts->off[t + 1] - ts->off[t])) {
        tp_ev_error(p, TP_ERR_BAD_NAME, p->call_off, -1, p->key.data, p->key.len);
        return;
    }
    if (!open_call(p, off))
        return;
    tp_ev_args(p, p->pending.data, p->pending.len);
    tp_call_close(p);
}

/* The `{` of the arguments: the call's body has begun. */
static int args_begin(tp_parser *p, uint64_t off)
{
    tp_json_init(&p->js, TPJ_MODE_NORMAL, p->lim.max_depth);
    p->call_off = off;
    if (p->vkind) {
        if (tp_parser_tools(p)->names.n == 1) {
            p->vkind = 0; /* the only tool */
            const tp_strset *ts = &tp_parser_tools(p)->names;
            if (tp_buf_append(&p->name, ts->keys + ts->off[0], ts->off[1] - ts->off[0]))
                return 0;
        } else if (tp_parser_tools(p)->names.n == 0) {
            tp_ev_error(p, TP_ERR_MISSING_NAME, off, -1, p->key.data, p->key.len);
            return 0; /* no tool to infer from */
        } else {
            return 1; /* held until the arguments close */
        }
    }
    return open_call(p, off);
}

static void kimi_feed(tp_parser *p, const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n && !p->oom) {
        uint64_t off = p->base + i;
        switch (p->mode) {
        case K_TEXT: {
            int match;
            i += tp_scan_text(p, &all_m, s + i, n - i, &match);
            if (match == M_SECTION_BEGIN) {
                tp_raw_begin(p, SECTION_BEGIN, sizeof SECTION_BEGIN - 1, i);
                tp_text_call_starts(p);
                p->first = 1;
                p->mode = K_BLOCK;
                p->fstate = 0;
            } else if (match == M_CALL_BEGIN) {
                tp_raw_begin(p, CALL_BEGIN, sizeof CALL_BEGIN - 1, i);
                tp_text_call_starts(p);
                p->first = 0;
                begin_call(p, p->base + i);
            } else if (match >= 0) { /* a stray end / argument token: markup of no call */
                tp_stray_markup(p, all_m.patlen[match], i);
            }
            break;
        }
        case K_BLOCK: {
            /* blanks after the section token or a call: formatting; prose: text */
            int match;
            i += tp_scan_block(p, &all_m, s + i, n - i, &match, &p->fstate);
            if (match == M_CALL_BEGIN) {
                begin_call(p, p->base + i);
                tp_text_call_starts(p); /* blanks after prose: the call's record */
            } else if (match == M_SECTION_END) {
                int prose = p->fstate;
                if (p->raw_on) /* a section with no call: markup of no call */
                    tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + i, -1, (const uint8_t *)"a section with no call", 22);
                else if (prose) /* after prose: it closes the section, next to no call */
                    tp_block_markup(p, SECTION_END, sizeof SECTION_END - 1, p->base + i - (sizeof SECTION_END - 1));
                on_marker(p, match, p->base + i);
                if (prose)
                    p->after_call = 0; /* the blanks after it are text */
            } else if (match == M_SECTION_BEGIN && !p->raw_on) {
                /* another section token: markup, read as the section's (a
                 * call takes it into its record; prose shows it made none) */
                tp_raw_begin(p, SECTION_BEGIN, sizeof SECTION_BEGIN - 1, i);
                tp_text_call_starts(p);
                p->fstate = 0;
            } else if (match >= 0 && !p->raw_on) { /* an end or argument token that closes no call */
                tp_stray_markup(p, all_m.patlen[match], i);
            } /* (else: in the section token's record, the first call's text) */
            break;
        }
        case K_HEAD: {
            int match, over = 0;
            i += scan_into(p, s + i, n - i, &p->name, &match, &over);
            if (over) {
                /* (the raw record, from the section's or call's first token, is the error's dropped text) */
                tp_ev_error(p, TP_ERR_BAD_NAME, p->call_off, -1, NULL, 0);
                tp_raw_end(p);
                if (match < 0) {
                    /* keep a partial token: K_SKIP must see it complete */
                    tp_matcher_switch(p, &all_m, &block_m);
                    p->mode = K_SKIP;
                } else if (match == M_ARG_BEGIN) {
                    skip_call(p);
                } else {
                    on_marker(p, match, p->base + i);
                }
                break;
            }
            if (match == M_ARG_BEGIN) {
                if (split_id(p) == 0) {
                    p->mode = K_OPEN;
                } else {
                    tp_ev_error(p, TP_ERR_BAD_NAME, p->call_off, -1, p->name.data, p->name.len);
                    skip_call(p);
                }
            } else if (match >= 0) {
                tp_ev_error(p, TP_ERR_BAD_MARKUP, p->base + i, -1, NULL, 0);
                on_marker(p, match, p->base + i);
            }
            break;
        }
        case K_OPEN: {
            uint8_t c = s[i];
            if (tp_is_ws(c)) {
                i++;
            } else if (c == '{') {
                /* the `{` is fed to the normalizer; a refused call's JSON is
                 * read to its end, then skipped to its end token */
                p->discard = !args_begin(p, off);
                p->mode = K_JSON;
            } else {
                /* not an object (or a token): the call is dropped; the byte
                 * is scanned again for a token */
                tp_ev_error(p, TP_ERR_BAD_MARKUP, off, -1, NULL, 0);
                skip_call(p);
            }
            break;
        }
        case K_JSON: {
            size_t k;
            int st;
            if (p->discard || p->vkind) {
                k = tp_json_feed(&p->js, s + i, n - i, p->discard ? NULL : &p->pending);
                st = tp_json_failed(&p->js) ? -1 : tp_json_done(&p->js);
            } else {
                st = tp_call_json_args(p, s + i, n - i, &k);
            }
            if (st < 0) {
                uint64_t at = p->js.err == TP_ERR_BUFFER_LIMIT ? p->call_off : p->base + i + p->js.err_at;
                i += k;
                if (p->discard) /* reported when it was refused */
                    skip_call(p);
                else if (p->vkind)
                    tp_ev_error(p, p->js.err, at, -1, NULL, 0), skip_call(p);
                else
                    fail(p, p->js.err, at);
                break;
            }
            i += k;
            if (st > 0) {
                if (p->discard)
                    p->trailing_reported = 1; /* what follows is in its dropped text */
                else if (p->vkind)
                    close_inferred(p, p->base + i);
                else
                    tp_call_close(p);
                p->discard = 0;
                p->after_call = 1;
                p->mode = K_TAIL;
                p->node = 0;
            }
            break;
        }
        case K_TAIL:
        case K_SKIP: {
            int match, junk;
            size_t junk_at = 0;
            size_t k = tp_scan_skip(p, &block_m, s + i, n - i, &match, &junk, &junk_at);
            if (junk && p->mode == K_TAIL && !p->trailing_reported) {
                p->trailing_reported = 1;
                tp_ev_error(p, TP_ERR_TRAILING, p->base + i + junk_at, -1, NULL, 0);
            }
            i += k;
            if (match >= 0)
                on_marker(p, match, p->base + i);
            break;
        }
        }
    }
}

static void kimi_finish(tp_parser *p)
{
    switch (p->mode) {
    case K_TEXT:
        tp_release_held(p, &all_m);
        break;
    case K_BLOCK:
        if (p->raw_on) { /* a section cut off before its first call: as a call cut off before its announcement */
            tp_call_unterminated(p);
            break;
        }
        if (p->fstate) { /* after prose in the section, a partial token is prose */
            tp_release_held(p, &all_m);
            break;
        }
        if (p->node) { /* a partial token after a call: markup of no call */
            size_t hl;
            const uint8_t *held = tp_matcher_path(&all_m, p->node, &hl);
            tp_drop_held_at_end(p, TP_ERR_UNTERMINATED, held, hl);
            p->node = 0;
        }
        break;
    case K_TAIL:
    case K_SKIP: {
        /* a partial token here is markup of no call: an error carries it
         * (a skip's dropped text already does) */
        size_t hl;
        const uint8_t *held = tp_matcher_path(&block_m, p->node, &hl);
        if (p->node)
            tp_drop_held_at_end(p, TP_ERR_UNTERMINATED, held, hl);
        p->node = 0;
        break;
    }
    case K_HEAD:
    case K_OPEN:
    case K_JSON:
        if (p->discard) /* refused (reported): its dropped text runs to the end */
            break;
        tp_call_unterminated(p);
        break;
    }
    tp_text_finish(p);
}

const tp_format tp_fmt_kimi_k2 = {"kimi_k2", kimi_feed, kimi_finish};
