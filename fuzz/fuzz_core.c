/* Coverage-guided fuzz target for the C core (libFuzzer), also linked into
 * a plain driver (driver.c) for LeakSanitizer / valgrind runs.
 *
 * Input layout: byte 0 picks the format (index into tp_format_names()),
 * byte 1 the options (declared tools or any name, forward_unknown, small
 * limits, declared parameter kinds for the schema-typed formats), byte 2 the
 * chunking (0: character by character, else random cuts up to
 * 4 * (byte & 63) + 1 bytes seeded by the byte), the rest is model output.
 *
 * Checked on every input, for every format (not just survival):
 *  - the event protocol: call indices 0, 1, ... in order; at most one call
 *    open; ArgsDelta / CallEnd only for the open call; an error names the
 *    open call or none; no call left open after finish();
 *  - a call is announced only once its body has begun: a CallStart is
 *    followed directly by argument bytes (or a raw value) of that call, so
 *    no call is ever named and then dropped with nothing written;
 *  - the streamed result (merged) equals the one-shot result, error offsets
 *    included;
 *  - every call's argument deltas concatenate to strict JSON (RFC 8259,
 *    checked by a validator of its own: no NaN/Infinity, no raw control
 *    character in a string) in canonical form (normalizing it again with
 *    a second tp_json reproduces it); a raw value event (typed by the
 *    binding) counts as one JSON value;
 *  - on valid UTF-8 input cut at character boundaries (what the Python
 *    layer feeds), every event span is valid UTF-8 (surrogates allowed, as
 *    Python's "surrogatepass" decodes them), so the binding never fails to
 *    decode an event;
 *  - error offsets lie inside the stream; the bytes one feed produces are
 *    bounded by a constant times its length plus the limits, and the
 *    held-back buffers stay within their limits.
 * A violated invariant aborts, which libFuzzer reports as a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_internal.h"
#include "tp_schema.h"

#define CHECK(cond, ...)                                                         \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "invariant violated: %s (%s:%d)\n", #cond, __FILE__, \
                    __LINE__);                                                   \
            fprintf(stderr, __VA_ARGS__);                                        \
            fputc('\n', stderr);                                                 \
            abort();                                                             \
        }                                                                        \
    } while (0)

typedef struct {
    uint8_t type, code;
    int32_t call;
    uint64_t offset;
    tp_buf data;
} rec;

typedef struct {
    rec *r;
    size_t n, cap;
    /* protocol state */
    int32_t open, next_index;
    int32_t fresh; /* call just announced, no argument event yet (-1: none) */
    tp_buf args; /* arguments of the open call */
} trace;

static void trace_free(trace *t)
{
    for (size_t i = 0; i < t->n; i++)
        tp_buf_free(&t->r[i].data);
    free(t->r);
    tp_buf_free(&t->args);
    memset(t, 0, sizeof(*t));
}

#define must(ok) must_at((ok), __LINE__)
static void must_at(int ok, int line)
{
    if (!ok) {
        fprintf(stderr, "harness: call failed at fuzz_core.c:%d (out of memory?)\n", line);
        abort();
    }
}

/* UTF-8 as Python's surrogatepass decoder accepts it. */
static int wtf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k;
        uint32_t cp, min;
        if ((c & 0xE0) == 0xC0) {
            k = 1, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            k = 2, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            k = 3, cp = c & 0x07, min = 0x10000;
        } else {
            return 0;
        }
        for (size_t m = 1; m <= k; m++) {
            if (i + m >= n || (s[i + m] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + m] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF)
            return 0;
        i += k + 1;
    }
    return 1;
}

static int is_utf8_start(uint8_t c) { return (c & 0xC0) != 0x80; }

/* RFC 8259, independent of tp_json: one JSON text, no NaN/Infinity, no
 * raw control character in a string (bytes >= 0x80 pass: invalid UTF-8 in
 * the input passes through string content as lone bytes). Returns 1 if
 * s[0:n) is strict JSON. Iterative: the nesting stack is a bit array. */
static int rfc8259(const uint8_t *s, size_t n)
{
    static uint8_t stack[TP_JSON_DEPTH_CAP / 8 + 1];
    size_t i = 0, depth = 0;
    int key = 0; /* the string to read is an object key */
    enum { VALUE, AFTER } st = VALUE;
#define WS() while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++
#define IS_OBJ() ((stack[(depth - 1) >> 3] >> ((depth - 1) & 7)) & 1)
    for (;;) {
        WS();
        if (st == VALUE) {
            if (i >= n)
                return 0;
            uint8_t c = s[i];
            if (c == '{' || c == '[') {
                if (depth > TP_JSON_DEPTH_CAP)
                    return 0;
                if (c == '{')
                    stack[depth >> 3] |= (uint8_t)(1u << (depth & 7));
                else
                    stack[depth >> 3] &= (uint8_t)~(1u << (depth & 7));
                depth++;
                i++;
                WS();
                if (i < n && s[i] == (c == '{' ? '}' : ']')) {
                    depth--;
                    i++;
                    st = AFTER;
                    continue;
                }
                key = c == '{';
                continue; /* a key (a string, then ':') or a value */
            }
            if (key && c != '"')
                return 0;
            if (c == '"') {
                for (i++; i < n && s[i] != '"'; i++) {
                    if (s[i] < 0x20)
                        return 0;
                    if (s[i] == '\\') {
                        i++;
                        if (i >= n)
                            return 0;
                        if (s[i] == 'u') {
                            for (int k = 1; k <= 4; k++)
                                if (i + (size_t)k >= n || !strchr("0123456789abcdefABCDEF", s[i + (size_t)k]) ||
                                    s[i + (size_t)k] == 0)
                                    return 0;
                            i += 4;
                        } else if (!strchr("\"\\/bfnrt", s[i]) || s[i] == 0) {
                            return 0;
                        }
                    }
                }
                if (i >= n)
                    return 0;
                i++;
                if (key) { /* then ':' and the key's value */
                    WS();
                    if (i >= n || s[i] != ':')
                        return 0;
                    i++;
                    key = 0;
                    continue;
                }
                st = AFTER;
                continue;
            }
            if (c == 't' || c == 'f' || c == 'n') {
                const char *w = c == 't' ? "true" : c == 'f' ? "false" : "null";
                size_t l = strlen(w);
                if (n - i < l || memcmp(s + i, w, l) != 0)
                    return 0;
                i += l;
                st = AFTER;
                continue;
            }
            /* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
            if (i < n && s[i] == '-')
                i++;
            if (i < n && s[i] == '0')
                i++;
            else if (i < n && s[i] >= '1' && s[i] <= '9')
                while (i < n && s[i] >= '0' && s[i] <= '9')
                    i++;
            else
                return 0; /* NaN, Infinity, -Infinity, anything else */
            if (i < n && s[i] == '.') {
                size_t d = ++i;
                while (i < n && s[i] >= '0' && s[i] <= '9')
                    i++;
                if (i == d)
                    return 0;
            }
            if (i < n && (s[i] == 'e' || s[i] == 'E')) {
                i++;
                if (i < n && (s[i] == '+' || s[i] == '-'))
                    i++;
                size_t d = i;
                while (i < n && s[i] >= '0' && s[i] <= '9')
                    i++;
                if (i == d)
                    return 0;
            }
            st = AFTER;
            continue;
        }
        /* AFTER a value */
        if (depth == 0)
            return i == n;
        if (i >= n)
            return 0;
        if (s[i] == ',') {
            i++;
            st = VALUE;
            key = IS_OBJ();
            continue;
        }
        if (s[i] != (IS_OBJ() ? '}' : ']'))
            return 0;
        depth--;
        i++;
    }
#undef WS
#undef IS_OBJ
}

/* The arguments of a finished call must be strict JSON (RFC 8259) and
 * canonical: normalizing them again gives the same bytes. */
static void check_args(const tp_buf *a, int32_t call)
{
    CHECK(rfc8259(a->data ? a->data : (const uint8_t *)"", a->len),
          "call %d: arguments are not strict JSON (RFC 8259): %.*s", call,
          (int)(a->len > 400 ? 400 : a->len), a->data ? (const char *)a->data : "");
    static tp_json j;
    tp_buf again;
    tp_buf_init(&again, 0);
    tp_json_init(&j, TPJ_MODE_NORMAL, TP_JSON_DEPTH_CAP);
    size_t k = tp_json_feed(&j, a->data, a->len, &again);
    if (!tp_json_done(&j))
        tp_json_end(&j, &again);
    CHECK(tp_json_done(&j) && k == a->len,
          "call %d: arguments are not one JSON value (consumed %zu of %zu, err %d): %.*s", call, k,
          a->len, j.err, (int)(a->len > 400 ? 400 : a->len), (const char *)a->data);
    CHECK(again.len == a->len && memcmp(again.data, a->data, a->len) == 0,
          "call %d: arguments not canonical: %.*s", call, (int)(a->len > 400 ? 400 : a->len),
          (const char *)a->data);
    tp_buf_free(&again);
}

/* the input of the run, for the dropped-text check (a format whose input
 * filter takes tags out, trinity, records what its engine read instead) */
static const uint8_t *g_input;
static int g_filtered;

static void add_event(trace *t, const tp_event *e, const uint8_t *out, uint64_t total, int check_utf8)
{
    const uint8_t *span = e->len ? out + e->start : (const uint8_t *)"";
    if (check_utf8 && (e->type == TP_EV_RAW_VALUE || (e->type == TP_EV_CALL_START && e->offset)))
        /* decoded as key, value / as name, call id */
        CHECK(e->offset <= e->len && wtf8_valid(span, (size_t)e->offset) &&
                  wtf8_valid(span + e->offset, e->len - (size_t)e->offset),
              "raw value / call start: key or value / name or id is not valid UTF-8");
    else if (check_utf8)
        CHECK(wtf8_valid(span, e->len), "event type %d: span is not valid UTF-8", e->type);
    /* protocol */
    if (t->fresh >= 0) {
        CHECK((e->type == TP_EV_ARGS || e->type == TP_EV_RAW_VALUE) && e->call == t->fresh,
              "call %d announced before its body began (next event type %d)", t->fresh, e->type);
        t->fresh = -1;
    }
    switch (e->type) {
    case TP_EV_TEXT:
        CHECK(e->len > 0, "empty text event");
        break;
    case TP_EV_REASONING: /* gpt_oss: the analysis channel, never inside a call */
        CHECK(e->len > 0, "empty reasoning event");
        CHECK(t->open < 0, "reasoning while call %d is open", t->open);
        break;
    case TP_EV_CALL_START:
        CHECK(t->open < 0, "call %d starts while %d is open", e->call, t->open);
        CHECK(e->call == t->next_index, "call index %d, expected %d", e->call, t->next_index);
        CHECK(e->len > 0, "empty tool name");
        /* offset: length of the name when a call id follows it (kimi_k2) */
        CHECK(e->offset < e->len, "call start: name length %llu, span %zu",
              (unsigned long long)e->offset, e->len);
        t->open = e->call;
        t->fresh = e->call;
        t->next_index++;
        tp_buf_clear(&t->args);
        break;
    case TP_EV_ARGS:
        CHECK(e->call == t->open && e->call >= 0, "args for %d while %d is open", e->call, t->open);
        must(tp_buf_append(&t->args, span, e->len) == 0);
        break;
    case TP_EV_RAW_VALUE:
        /* a value the binding types with the schema rules and puts here in
         * the argument stream as one JSON value: "null" stands in for it */
        CHECK(e->call == t->open && e->call >= 0, "raw value for %d while %d is open", e->call,
              t->open);
        CHECK(e->offset <= e->len, "raw value key length %llu > span %zu",
              (unsigned long long)e->offset, e->len);
        must(tp_buf_append(&t->args, "null", 4) == 0);
        break;
    case TP_EV_CALL_END:
        CHECK(e->call == t->open && e->call >= 0, "end of %d while %d is open", e->call, t->open);
        /* valid JSON for any input bytes (invalid UTF-8 passes through
         * string content as lone bytes, never with a control character) */
        check_args(&t->args, e->call);
        t->open = -1;
        break;
    case TP_EV_ERROR:
        CHECK(e->code > 0 && e->code < TP_ERR__COUNT, "error code %d", e->code);
        CHECK(e->call == -1 || e->call == t->open, "error for %d while %d is open", e->call, t->open);
        CHECK(e->offset <= total, "error offset %llu past the stream (%llu)",
              (unsigned long long)e->offset, (unsigned long long)total);
        if (e->call >= 0)
            t->open = -1;
        break;
    case TP_EV_DROPPED: /* an error's raw text: the input's bytes at their offset */
        CHECK(e->len > 0 && e->offset <= total && e->len <= total - e->offset,
              "dropped text at %llu (%zu bytes) past the stream (%llu)", (unsigned long long)e->offset, e->len,
              (unsigned long long)total);
        CHECK(g_filtered || memcmp(g_input + e->offset, span, e->len) == 0,
              "dropped text at %llu is not the input's bytes there", (unsigned long long)e->offset);
        break;
    case TP_EV_MARKUP: /* framing, or markup next to no call: the input's bytes at their offset */
        CHECK(e->len > 0 && e->offset <= total && e->len <= total - e->offset,
              "markup at %llu (%zu bytes) past the stream (%llu)", (unsigned long long)e->offset, e->len,
              (unsigned long long)total);
        CHECK(g_filtered || memcmp(g_input + e->offset, span, e->len) == 0,
              "markup at %llu is not the input's bytes there", (unsigned long long)e->offset);
        CHECK(t->open < 0, "markup while call %d is open", t->open);
        break;
    default:
        CHECK(0, "unknown event type %d", e->type);
    }
    /* merged record */
    if (t->n) {
        rec *last = &t->r[t->n - 1];
        if (((e->type == TP_EV_TEXT || e->type == TP_EV_ARGS || e->type == TP_EV_REASONING) ||
             ((e->type == TP_EV_DROPPED || e->type == TP_EV_MARKUP) &&
              (last->offset + last->data.len == e->offset || g_filtered))) && /* (trinity: the view's bytes) */
            last->type == e->type && last->call == e->call) {
            must(tp_buf_append(&last->data, span, e->len) == 0);
            return;
        }
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->r = realloc(t->r, t->cap * sizeof(rec));
        must(t->r != NULL);
    }
    rec *r = &t->r[t->n++];
    r->type = e->type;
    r->code = e->code;
    r->call = e->call;
    r->offset = e->offset;
    tp_buf_init(&r->data, 0);
    must(tp_buf_append(&r->data, span, e->len) == 0);
}

static void collect(trace *t, tp_parser *p, uint64_t total, int check_utf8, size_t fed)
{
    size_t n;
    const tp_event *ev = tp_parser_events(p, &n);
    const uint8_t *out = tp_parser_output(p);
    /* bounded output and held-back memory */
    CHECK(p->out.len <= 32 * fed + p->lim.max_buffer + 65536,
          "a feed of %zu bytes produced %zu bytes", fed, p->out.len);
    CHECK(p->ws.cap <= TP_WS_HOLD_MAX && p->name.cap <= p->lim.max_name &&
              p->key.cap <= p->lim.max_name && p->pending.cap <= p->lim.max_buffer,
          "held buffers over their limits: ws %zu name %zu key %zu pending %zu", p->ws.cap,
          p->name.cap, p->key.cap, p->pending.cap);
    /* memory kept for the batch is proportional to the batch */
    CHECK(p->evcap <= 1024 || p->evcap <= 2 * n, "event array of %zu for %zu events", p->evcap, n);
    CHECK(p->out.cap <= (1u << 16) || p->out.cap <= 2 * p->out.len + 64,
          "output buffer of %zu for %zu bytes", p->out.cap, p->out.len);
    for (size_t i = 0; i < n; i++)
        add_event(t, &ev[i], out, total, check_utf8);
}

typedef struct {
    uint32_t s;
} rng;
static uint32_t rng_next(rng *r)
{
    uint32_t x = r->s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return r->s = x ? x : 0x9E3779B9u;
}

static const char *const TOOLS[] = {"get_weather", "search", "f", "a_very_long_tool_name"};
static const struct {
    const char *name;
    int kind;
    unsigned mask;
} PARAMS[] = {{"city", TP_PARAM_STRING, 0}, {"s", TP_PARAM_STRING, 0}, {"q", TP_PARAM_STRING, 0},
              {"n", TP_PARAM_OTHER, 0}, {"a", TP_PARAM_OTHER, 0}, {"unit", TP_PARAM_STRING, 0},
              /* every kind of the typed-value layer (tp_types.h) */
              {"i", TP_KIND_INTEGER, 0}, {"x", TP_KIND_NUMBER, 0}, {"b", TP_KIND_BOOLEAN, 0},
              {"o", TP_KIND_OBJECT, 0}, {"l", TP_KIND_ARRAY, 0}, {"z", TP_KIND_NULL, 0},
              {"u", TP_KIND_UNION, TP_JT_STRING | TP_JT_INTEGER}, {"v", TP_KIND_UNION, TP_JT_OBJECT},
              /* MiniMax-M2's tries in order (TP_R_BY_MASK) */
              {"m", TP_KIND_UNION, TP_JT_NUMBER | TP_JT_BOOLEAN | TP_JT_ARRAY},
              {"h", TP_KIND_HOST, 0}};

/* A schema graph for the tools (tp_schema.c's blob), so the nested values
 * of namespaced-XML rows (MiniMax-M3) are typed by it: every leaf kind, a
 * nullable integer and string, an object with additionalProperties, an
 * array with prefixItems then objects, a recursive object, a null property. */
static void blob_u32(tp_buf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    must(tp_buf_append(b, x, 4) == 0);
}

static void blob_node(tp_buf *b, uint8_t flags, uint8_t mask, int32_t extra, int32_t rest, const int32_t *prefix,
                      uint32_t np, const char *const *names, const int32_t *ids, uint32_t nprops)
{
    must(tp_buf_push(b, flags) == 0 && tp_buf_push(b, mask) == 0);
    blob_u32(b, (uint32_t)extra);
    blob_u32(b, (uint32_t)rest);
    blob_u32(b, np);
    for (uint32_t k = 0; k < np; k++)
        blob_u32(b, (uint32_t)prefix[k]);
    blob_u32(b, nprops);
    for (uint32_t k = 0; k < nprops; k++) {
        blob_u32(b, (uint32_t)strlen(names[k]));
        must(tp_buf_append(b, names[k], strlen(names[k])) == 0);
        blob_u32(b, (uint32_t)ids[k]);
    }
}

static tp_schema *fuzz_schema(const char *const *tools, size_t nt)
{
    enum { C = TP_SN_CONTAINER, S = TP_SN_SCALAR, A = TP_SN_ARRAY | TP_SN_CONTAINER };
    static const char *const ROOT[] = {"i", "x", "b", "o", "l", "z", "u", "v", "m", "h", "item", "s"};
    static const int32_t ROOT_ID[] = {2, 3, 4, 5, 6, 7, 8, 9, 10, TP_SN_NULL_PROP, 6, 11};
    static const char *const OBJ[] = {"i", "l", "o", "s"};
    static const int32_t OBJ_ID[] = {2, 6, 5, 11};
    static const int32_t PREFIX[] = {2, 11};
    tp_buf b;
    tp_buf_init(&b, 0);
    blob_u32(&b, 13);
    blob_node(&b, C, 0, 1, -1, NULL, 0, ROOT, ROOT_ID, 12);                       /* 0: the parameters */
    blob_node(&b, S, TP_JT_INTEGER, -1, -1, NULL, 0, NULL, NULL, 0);             /* 1 */
    blob_node(&b, S, TP_JT_INTEGER, -1, -1, NULL, 0, NULL, NULL, 0);             /* 2 */
    blob_node(&b, S, TP_JT_NUMBER, -1, -1, NULL, 0, NULL, NULL, 0);              /* 3 */
    blob_node(&b, S, TP_JT_BOOLEAN, -1, -1, NULL, 0, NULL, NULL, 0);             /* 4 */
    blob_node(&b, C, 0, -1, -1, NULL, 0, OBJ, OBJ_ID, 4);                        /* 5: recursive */
    blob_node(&b, A, 0, -1, 5, PREFIX, 2, NULL, NULL, 0);                        /* 6 */
    blob_node(&b, S, TP_JT_INTEGER | TP_JT_NULL, -1, -1, NULL, 0, NULL, NULL, 0); /* 7 */
    blob_node(&b, S, TP_JT_STRING | TP_JT_NULL, -1, -1, NULL, 0, NULL, NULL, 0);  /* 8 */
    blob_node(&b, C, 0, 4, -1, NULL, 0, NULL, NULL, 0);                          /* 9 */
    blob_node(&b, A, TP_JT_NUMBER | TP_JT_BOOLEAN, -1, -1, NULL, 0, NULL, NULL, 0); /* 10 */
    blob_node(&b, S, TP_JT_STRING, -1, -1, NULL, 0, NULL, NULL, 0);              /* 11 */
    blob_node(&b, TP_SN_UNTYPED, 0, -1, -1, NULL, 0, NULL, NULL, 0);             /* 12 */
    blob_u32(&b, (uint32_t)nt);
    for (size_t k = 0; k < nt; k++) {
        blob_u32(&b, (uint32_t)strlen(tools[k]));
        must(tp_buf_append(&b, tools[k], strlen(tools[k])) == 0);
        blob_u32(&b, 0);
    }
    tp_schema *sc = tp_schema_load(b.data, b.len);
    must(sc != NULL);
    tp_buf_free(&b);
    return sc;
}

/* Runs one stream. chunking: 0 = one shot, 1 = byte by byte, else random
 * cuts of 1..max_chunk bytes seeded by `seed`. */
static void run(trace *t, const tp_format *fmt, uint8_t opts, const uint8_t *s, size_t n,
                int chunking, size_t max_chunk, uint32_t seed, int utf8)
{
    g_input = s;
    g_filtered = strcmp(fmt->name, "trinity") == 0;
    tp_parser p;
    tp_limits lim;
    tp_limits_default(&lim);
    if (opts & 4) { /* small limits reach the limit paths with short inputs */
        lim.max_buffer = 64;
        lim.max_depth = 8;
        lim.max_calls = 2;
        lim.max_name = 16;
    }
    uint32_t flags = 0;
    if (opts & 1)
        flags |= TP_FLAG_ACCEPT_ANY;
    if (opts & 2)
        flags |= TP_FLAG_FORWARD_UNKNOWN;
    must(tp_parser_init(&p, fmt, &lim, flags) == 0);
    /* opts & 16: the tools as a shared compiled table (tp_parser_use_tools) */
    tp_tools shared;
    tp_tools_init(&shared);
    if (!(opts & 1))
        for (size_t i = 0; i < sizeof(TOOLS) / sizeof(TOOLS[0]); i++) {
            const uint8_t *tn = (const uint8_t *)TOOLS[i];
            int id = (opts & 16) ? tp_tools_add(&shared, tn, strlen(TOOLS[i]))
                                 : tp_parser_add_tool(&p, tn, strlen(TOOLS[i]));
            must(id >= 0);
            if (opts & 8) /* parameter kinds (schema-typed formats); kimi_k2: names for bare counters */
                for (size_t k = 0; k < sizeof(PARAMS) / sizeof(PARAMS[0]); k++) {
                    const uint8_t *pn = (const uint8_t *)PARAMS[k].name;
                    size_t pl = strlen(PARAMS[k].name);
                    must(((opts & 16) ? tp_tools_add_param(&shared, id, pn, pl, PARAMS[k].kind, PARAMS[k].mask)
                                      : tp_parser_add_param(&p, id, pn, pl, PARAMS[k].kind)) == 0);
                }
        }
    if (opts & 16)
        tp_parser_use_tools(&p, &shared);
    if ((opts & 24) == 24) /* nested values typed by a schema graph */
        shared.schema = fuzz_schema(TOOLS, sizeof(TOOLS) / sizeof(TOOLS[0]));
    t->open = -1;
    t->fresh = -1;
    t->next_index = 0;
    tp_buf_init(&t->args, 0);
    rng r = {seed * 2654435761u + 1};
    size_t i = 0;
    while (i < n) {
        size_t k = n - i;
        if (chunking == 1)
            k = 1;
        else if (chunking == 2 && max_chunk < k)
            k = 1 + rng_next(&r) % max_chunk;
        if (k > n - i)
            k = n - i;
        /* cut at character boundaries, as the Python layer does (for
         * invalid UTF-8: never before a continuation byte). Splitting a
         * character between feeds is outside the contract: the GLM writer
         * escapes an encoded lone surrogate only when its three bytes
         * arrive in one feed. */
        while (i + k < n && !is_utf8_start(s[i + k]))
            k++;
        must(tp_parser_feed(&p, s + i, k) == 0);
        i += k;
        collect(t, &p, n, utf8, k);
    }
    must(tp_parser_finish(&p) == 0);
    collect(t, &p, n, utf8, 0);
    CHECK(t->open < 0, "call %d left open after finish()", t->open);
    CHECK(t->fresh < 0, "call %d announced with nothing after it", t->fresh);
    /* feeding after finish is a no-op */
    must(tp_parser_feed(&p, (const uint8_t *)"x", 1) == 0);
    size_t nev;
    tp_parser_events(&p, &nev);
    CHECK(nev == 0, "events after finish");
    tp_parser_free(&p);
    tp_tools_free(&shared);
}

static void compare(const trace *a, const trace *b)
{
    size_t n = a->n < b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++) {
        const rec *x = &a->r[i], *y = &b->r[i];
        CHECK(x->type == y->type && x->code == y->code && x->call == y->call &&
                  ((x->type != TP_EV_ERROR && x->type != TP_EV_RAW_VALUE && x->type != TP_EV_CALL_START &&
                    x->type != TP_EV_DROPPED && x->type != TP_EV_MARKUP) ||
                   x->offset == y->offset) &&
                  x->data.len == y->data.len &&
                  (x->data.len == 0 || memcmp(x->data.data, y->data.data, x->data.len) == 0),
              "streamed differs from one-shot at event %zu: type %d/%d code %d/%d call %d/%d "
              "offset %llu/%llu len %zu/%zu",
              i, x->type, y->type, x->code, y->code, x->call, y->call,
              (unsigned long long)x->offset, (unsigned long long)y->offset, x->data.len,
              y->data.len);
    }
    CHECK(a->n == b->n, "one-shot has %zu events, streamed %zu", a->n, b->n);
}

/* ---- every input byte is text, dropped text or a call's ----
 * The one-shot trace tiles the input: between two Dropped or Markup
 * records (at their offsets: an error's raw text, the message's framing)
 * and the ends, the text records are the input's bytes,
 * back to back, except where a call's events stand (its markup, name,
 * arguments and the template whitespace around it may lie there). Markup
 * that made no call must be text or dropped text; markup next to no call's
 * events (a block's end tag after prose inside it) a TP_EV_MARKUP record,
 * which anchors as a Dropped one does. Trinity's view of the input (its
 * filter takes <think> and </think> out, think_view) tiles the same way.
 * tests/test_lossless.py checks the same (check_tiled); both exempt the
 * formats below, which still consume some markup of no call silently
 * (docs/SEMANTICS.md, "Dropped text"). */
static const char *const UNTILED[] = {
    NULL}; /* none: every format tiles */

static int untiled(const char *name)
{
    for (size_t i = 0; UNTILED[i]; i++)
        if (strcmp(UNTILED[i], name) == 0)
            return 1;
    return 0;
}

static int bytes_at(const uint8_t *seg, size_t len, size_t k, const tp_buf *g)
{
    return k <= len && g->len <= len - k && memcmp(seg + k, g->data, g->len) == 0;
}

/* seg is groups g[0..m) in order, a star (anything) before group i when
 * star[i], after the last when star[m] */
static int seg_tiles(const uint8_t *seg, size_t len, const tp_buf *g, const int *star, size_t m)
{
    if (m == 0)
        return len == 0 || star[0];
    size_t lo = 0, hi = len, first = 0, last = m;
    if (!star[0]) {
        if (!bytes_at(seg, len, 0, &g[0]))
            return 0;
        lo = g[0].len;
        first = 1;
    }
    if (!star[m]) {
        if (first == m) /* one group, no star: all of it */
            return lo == len;
        if (g[m - 1].len > len - lo || !bytes_at(seg, len, len - g[m - 1].len, &g[m - 1]))
            return 0;
        hi = len - g[m - 1].len;
        last = m - 1;
    }
    for (size_t i = first; i < last; i++) { /* stars on both sides: leftmost */
        size_t k = lo;
        while (k <= hi && !(g[i].len <= hi - k && memcmp(seg + k, g[i].data, g[i].len) == 0))
            k++;
        if (k > hi)
            return 0;
        lo = k + g[i].len;
    }
    return lo <= hi;
}

/* Trinity's view: the input less the <think> and </think> its filter takes
 * out before the engine reads (csrc/fmt_jsontag.c); rm[o] is the number of
 * bytes taken out before input offset o, so an event at input offset o
 * stands at o - rm[o] in the view. Returns the view's length. */
static size_t think_view(const uint8_t *s, size_t n, uint8_t *view, size_t *rm)
{
    size_t i = 0, m = 0;
    while (i < n) {
        size_t tl = n - i >= 7 && memcmp(s + i, "<think>", 7) == 0    ? 7
                  : n - i >= 8 && memcmp(s + i, "</think>", 8) == 0 ? 8
                                                                      : 0;
        for (size_t k = 0; k < (tl ? tl : 1); k++)
            rm[i + k] = i - m;
        if (tl) {
            i += tl;
        } else {
            view[m++] = s[i++];
        }
    }
    rm[n] = n - m;
    return m;
}

/* in[0:total) is the input (or Trinity's view of it: rm maps input offsets
 * into it, NULL for every other format) */
static void check_tiled(const trace *t, const uint8_t *in, size_t total, const size_t *rm)
{
    size_t cap = 2 * t->n + 2, m = 0;
    tp_buf *g = calloc(cap, sizeof(tp_buf));
    int *star = calloc(cap + 1, sizeof(int));
    must(g && star);
    uint64_t pos = 0;
    int32_t open_call = -1; /* a call's events stand for the bytes of its extent */
    for (size_t i = 0; i <= t->n; i++) {
        const rec *r = i < t->n ? &t->r[i] : NULL;
        if (!r || r->type == TP_EV_DROPPED || r->type == TP_EV_MARKUP) { /* input bytes at their offset */
            uint64_t end = !r ? total : rm ? r->offset - rm[r->offset] : r->offset;
            CHECK(end >= pos && seg_tiles(in + pos, (size_t)(end - pos), g, star, m),
                  "bytes %llu..%llu are neither text, dropped text nor a call's",
                  (unsigned long long)pos, (unsigned long long)end);
            for (size_t k = 0; k < m; k++)
                tp_buf_free(&g[k]);
            memset(star, 0, (cap + 1) * sizeof(int));
            m = 0;
            /* inside an open call (prose between its tags, an error's
             * dropped text): its markup lies on either side */
            star[0] = open_call >= 0;
            if (r) {
                CHECK(!rm || (end <= total && r->data.len <= total - end &&
                              memcmp(in + end, r->data.data, r->data.len) == 0),
                      "trinity: dropped text at %llu is not the filtered input's bytes there",
                      (unsigned long long)r->offset);
                pos = end + r->data.len;
            }
        } else if (r->type == TP_EV_TEXT || r->type == TP_EV_REASONING) {
            if (m == 0 || star[m]) { /* a new group */
                tp_buf_init(&g[m], 0);
                m++;
            }
            must(tp_buf_append(&g[m - 1], r->data.data, r->data.len) == 0);
        } else if (r->type != TP_EV_ERROR || r->call >= 0) {
            star[m] = 1; /* a call stands here */
            if (r->type == TP_EV_CALL_START)
                open_call = r->call;
            else if (r->type == TP_EV_CALL_END || r->type == TP_EV_ERROR)
                open_call = -1;
        }
    }
    free(g);
    free(star);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (tp_global_init())
        abort();
    if (size < 3)
        return 0;
    const char *const *names = tp_format_names();
    size_t nfmt = 0;
    while (names[nfmt])
        nfmt++;
    const tp_format *fmt = tp_format_find(names[data[0] % nfmt]);
    uint8_t opts = data[1];
    uint8_t ch = data[2];
    const uint8_t *s = data + 3;
    size_t n = size - 3;
    int utf8 = wtf8_valid(s, n);

    trace one = {0}, streamed = {0};
    run(&one, fmt, opts, s, n, 0, 0, 0, utf8);
    if (ch == 0)
        run(&streamed, fmt, opts, s, n, 1, 1, 0, utf8);
    else
        run(&streamed, fmt, opts, s, n, 2, 4 * (size_t)(ch & 63) + 1, ch, utf8);
    compare(&one, &streamed);
    if (g_filtered) { /* trinity: its view of the input tiles */
        uint8_t *view = malloc(n + 1);
        size_t *rm = malloc((n + 1) * sizeof(size_t));
        must(view && rm);
        check_tiled(&one, view, think_view(s, n, view, rm), rm);
        free(view);
        free(rm);
    } else if (!untiled(fmt->name)) {
        check_tiled(&one, s, n, NULL);
    }
    trace_free(&one);
    trace_free(&streamed);
    return 0;
}
