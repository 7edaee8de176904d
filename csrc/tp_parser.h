/* Public C API of the streaming tool-call parser core.
 *
 * The caller owns a tp_parser (it may embed it), creates it for one format,
 * declares the tools, then feeds chunks of UTF-8 text. Each feed produces a
 * batch of events that refer to spans of one output buffer owned by the
 * parser; the batch stays valid until the next feed/finish/free. No Python
 * API is used here. */
#ifndef TP_PARSER_H
#define TP_PARSER_H

#include <stddef.h>
#include <stdint.h>

#include "tp_buf.h"
#include "tp_errors.h"
#include "tp_json.h"
#include "tp_strset.h"
#include "tp_types.h"

typedef enum {
    TP_EV_TEXT = 1,       /* span: plain text for the user */
    TP_EV_CALL_START = 2, /* call: index; span: tool name, then the call id the
                           * model wrote (formats with ids: kimi_k2); offset:
                           * length of the name, 0 when there is no id */
    TP_EV_ARGS = 3,       /* call: index; span: next bytes of the JSON arguments */
    TP_EV_CALL_END = 4,   /* call: index; arguments are complete */
    TP_EV_ERROR = 5,      /* code, offset, call (or -1); span: detail text */
    TP_EV_RAW_VALUE = 6,  /* call: index; span: key bytes then the raw value text;
                           * offset: key length. A value whose typing needs the
                           * host's rules (Python literal syntax, see tp_types.h):
                           * the binding converts it to JSON text, which takes
                           * the event's place in the argument stream. */
    TP_EV_REASONING = 7,  /* span: reasoning text (Harmony's analysis channel) */
    TP_EV_DROPPED = 8,    /* span: model text an error dropped (neither text nor
                           * a call's), from stream byte `offset`; call: the
                           * error's call (or -1). It follows its TP_EV_ERROR,
                           * emitted where the format resumes (tp_dropped.c). */
    TP_EV_MARKUP = 9,     /* span: markup from stream byte `offset` that is neither
                           * text, a call's nor an error's: the message's framing
                           * (tokens the reference decoder and SGLang take out of
                           * the text: Llama 4's <|python_start|>, Harmony's
                           * headers), or a block's end tag after prose inside
                           * the block. So that the events tile the input
                           * (docs/SEMANTICS.md, "Dropped text"); hosts may ignore
                           * it (tp_ev_markup, tp_block_markup) */
} tp_event_type;

typedef struct {
    uint8_t type;
    uint8_t code;
    int32_t call;
    uint64_t offset; /* stream byte offset where an error was detected */
    size_t start;    /* span into tp_parser_output() */
    size_t len;
} tp_event;

typedef struct {
    size_t max_buffer;   /* any held-back buffer (pending args, values) */
    uint32_t max_depth;  /* JSON nesting limit (<= TP_JSON_DEPTH_CAP) */
    uint32_t max_calls;  /* calls per stream */
    uint32_t max_name;   /* tool name / key length */
} tp_limits;

#define TP_DEFAULT_MAX_BUFFER (1u << 20)
#define TP_DEFAULT_MAX_DEPTH 512u
#define TP_DEFAULT_MAX_CALLS 100000u
#define TP_DEFAULT_MAX_NAME 1024u
#define TP_DROP_TAIL 4096u /* > a header of max_name (default) and its tokens */
#define TP_WS_HOLD_MAX 4096u /* a longer whitespace run is always kept as text */
/* dropped text kept back for a trim (a marker held across chunks, held
 * whitespace or a held separator): the rest streams (tp_dropped.c) */
#define TP_DROP_KEEP (2 * TP_DROP_TAIL + TP_WS_HOLD_MAX)
/* spans of prose inside a call before its announcement kept apart (more
 * join the last one: tp_junk.c) */
#define TP_JUNK_SPANS 64u
/* a call's raw record (its text before its announcement) holds at least
 * this much more than max_name, whatever max_buffer is: more than a format
 * holds while a marker may still be prose (whitespace runs, a name, a
 * header), so a record outgrows its bound only inside a call */
#define TP_RAW_FLOOR (4 * TP_DROP_TAIL)
/* every stream offset that is a multiple of this (moved to the next
 * character start) ends a piece of the feed, where a raw record over its
 * bound is refused (tp_raw_checkpoint): at the same offsets for any
 * chunking, and close enough that the bytes since the record stopped are
 * still in the ring */
#define TP_CHECKPOINT 2048u

enum {
    TP_FLAG_FORWARD_UNKNOWN = 1, /* emit calls to undeclared tools */
    TP_FLAG_ACCEPT_ANY = 2,      /* no tool list: every name is valid */
};

typedef struct tp_parser tp_parser;

typedef struct {
    const char *name;
    void (*feed)(tp_parser *p, const uint8_t *data, size_t n);
    void (*finish)(tp_parser *p);
} tp_format;

struct tp_parser {
    const tp_format *fmt;
    tp_limits lim;
    uint32_t flags;
    tp_tools own;             /* tools declared on this parser (tp_parser_add_tool) */
    const tp_tools *shared;   /* or a compiled tool list shared by parsers */

    /* output batch */
    tp_event *ev;
    size_t nev, evcap;
    tp_buf out;
    uint64_t base; /* stream offset of the chunk being fed */
    int oom;
    int finished;

    /* text layer */
    uint8_t node;       /* marker matcher state */
    uint8_t after_call; /* nothing but whitespace since the last call ended */
    uint8_t ws_long;    /* inside a whitespace run too long to hold */
    tp_buf ws;          /* held whitespace run */
    uint64_t ws_start, ws_end; /* stream offsets of its first byte and its end
                                * (UINT64_MAX: not known) */

    /* call layer */
    int32_t ncalls; /* indices handed out (to announced calls only) */
    int32_t cur;    /* announced open call's index, -1 if none */
    uint8_t held;   /* a call is open (tp_call_open) but not yet announced */
    tp_buf callname; /* its name, held until tp_call_announce */
    tp_buf callid;   /* the id the model wrote for it (tp_call_set_id), if any */
    uint8_t mode;   /* format state */
    uint8_t vkind;  /* what the value being scanned is */
    uint8_t discard;
    uint8_t have_name;
    uint8_t have_args;
    uint8_t first;
    uint8_t trailing_reported;
    uint8_t fstate; /* spare format-specific state */
    uint8_t filter_node; /* matcher state of a format's input filter (trinity) */
    uint8_t engine_alt;  /* a format read by two engines: the second has taken over (mistral's array form) */
    uint8_t fgroup;      /* inside a row's optional call group (fmt_glm.c: k2_horizon; 2: its opener's record
                          * is on, no call yet; 3: that record ran into a call tag) */
    uint64_t call_off;
    tp_buf name, key, pending;
    uint32_t resync_depth; /* fmt_jsontag.c, rows without an end tag: nesting
                            * of a broken call object being skipped */
    uint8_t resync_str;    /* ... 1 inside a string, 2 after a backslash there */

    int32_t tool_id; /* declared tool of the open call, -1 if none */
    const tp_type_rules *rules; /* the format's value typing (tp_rules_for) */

    /* The model's text of a call not announced yet, from its first marker
     * (with the whitespace held before it): if the stream ends before the
     * announcement, it is released as text (tp_raw_*, tp_calls.c). Bounded
     * by lim.max_buffer, at least TP_RAW_FLOOR + max_name (past it,
     * raw_over: the call is refused at the next checkpoint, or a cut-off
     * one reported "unterminated" with its text). */
    tp_buf raw;
    uint8_t raw_on, raw_over;
    size_t raw_at; /* where recording resumes in the chunk being fed */

    /* fmt_nsxml.c: bytes of the opener matched (or 1 inside a tag after its
     * `<`), nesting of a held value, and where in `pending` a value's inner
     * tag began (its NS; blanks after an NS in the tag modes) and its `<` */
    uint32_t nx_pos, nx_depth;
    size_t nx_ns, nx_lt;

    uint64_t raw_off; /* stream offset of raw's first byte */
    size_t raw_skip;  /* held whitespace at raw's start that was not next to
                       * the marker (a block opener came between): not in
                       * an error's record */

    /* The model's text an error drops (tp_dropped.c): from the error (or
     * from the refused call's first marker) to where the format reads text
     * or a call again. At most 2 * TP_DROP_KEEP bytes are held: the rest
     * is emitted as it comes. */
    tp_buf drop;
    uint8_t drop_on;
    int32_t drop_call;
    size_t drop_at;     /* where recording resumes in the chunk being fed */
    uint64_t drop_off;  /* stream offset of drop's first byte */
    uint64_t drop_mark; /* where the held call's text began (tp_drop_mark), UINT64_MAX: not known */
    const uint8_t *chunk; /* the bytes being fed (NULL in finish) */
    size_t chunk_n;
    /* the stream's last TP_DROP_TAIL bytes before the chunk, a ring (an
     * error found at bytes a format held from earlier chunks: a marker, a
     * header), stream byte o at tail[o % TP_DROP_TAIL]. Out of line
     * (allocated with the parser): most of its size, rarely read, and
     * never zeroed (only bytes written are read) */
    uint8_t *tail;
    uint8_t filtered; /* an input filter feeds the engine (trinity): its
                       * offsets (base, the ring, records) are in the view
                       * the filter gives, fview bytes so far; ftags maps
                       * them back to the input (fmt_jsontag.c) */
    uint64_t fview;
    uint64_t fdropped; /* bytes taken out before the oldest ftags entry */
    tp_buf ftags;
    /* fmt_jsontag.c rows with control tokens (inkling): a header is held in
     * pending (lex_hdr), the token being read starts at pending[lex_at] */
    uint8_t lex_hdr;
    size_t lex_at;
    /* fmt_glm.c rows with think blocks (k2_horizon): 0 while the stream has
     * held nothing but blanks and leading think blocks */
    uint8_t past_lead;
    /* Prose inside a call's extent, between its tags (tp_junk.c): 0 none;
     * 2 an error records it (the call was announced); 3 a span of it began
     * at junk_off in the call's raw record (not announced yet); 5 the bytes
     * up to the next tag are the call's (the rest of its tag, kimi_k3); 6
     * the call was announced, its earlier prose (in `drop`) is reported
     * after its first ArgsDelta. junk_spans: those spans, (stream offset,
     * length) pairs of uint64_t */
    uint8_t junk;
    uint64_t junk_off;
    tp_buf junk_spans;
    /* a high surrogate (WTF-8) escaped argument text ended with, held until
     * the next argument text shows whether a low one follows (the pair is
     * then its character), for any chunking; any other event writes it
     * escaped first (tp_events.c) */
    uint8_t hs[3];
    uint8_t hs_on;
    int32_t hs_call;
    /* the next checkpoint (TP_CHECKPOINT); muted: a call refused there
     * whose format reads on (its argument events are dropped: its bytes
     * are the refusal's dropped text) until the dropped text ends */
    uint64_t cp_next;
    uint8_t muted;

    /* last: the JSON scanners, whose scratch arrays are most of the
     * struct; the fields above, which a feed reads, lie together before
     * them (a feed touches fewer cache lines) */
    tp_json js; /* value scanner */
    tp_json ks; /* key / name scanner */
};

/* Kinds of declared parameters (schema-typed formats; every tp_kind of
 * tp_types.h). A TP_PARAM_STRING value streams as JSON string content (its
 * raw text) while it is generated; any other value is held until it closes
 * and then given to tp_value_complete(). */
enum { TP_PARAM_UNKNOWN = TP_KIND_UNTYPED, TP_PARAM_STRING = TP_KIND_STRING, TP_PARAM_OTHER = TP_KIND_OTHER };

/* Call once per process before anything else (idempotent). */
int tp_global_init(void);

/* Looks a format up by name; NULL if unknown. */
const tp_format *tp_format_find(const char *name);
/* Names of all formats, NULL-terminated. */
const char *const *tp_format_names(void);

void tp_limits_default(tp_limits *lim);
/* Initializes caller-owned storage. Returns 0 or -1 (unknown format, or
 * no memory: nothing is then held). */
int tp_parser_init(tp_parser *p, const tp_format *fmt, const tp_limits *lim, uint32_t flags);
void tp_parser_free(tp_parser *p);
/* An initialized parser `p`, in any state, as tp_parser_init(p, fmt, lim,
 * flags) makes it, keeping the memory of its buffers and event array (up
 * to TP_RESET_KEEP bytes each) for the next parse: a caller parsing many
 * texts one after another with one parser allocates nothing per text.
 * Returns 0, or -1 (unknown format or no memory: the parser is then freed). */
#define TP_RESET_KEEP (1u << 16)
int tp_parser_reset(tp_parser *p, const tp_format *fmt, const tp_limits *lim, uint32_t flags);
/* Declares a tool name. Returns its id, or -1 on allocation failure. */
int tp_parser_add_tool(tp_parser *p, const uint8_t *name, size_t len);
int tp_parser_find_tool(const tp_parser *p, const uint8_t *name, size_t len);
/* Declares the kind of parameter `name` of tool `tool_id` (an id returned by
 * tp_parser_add_tool). Returns 0, or -1 on allocation failure / bad id. */
int tp_parser_add_param(tp_parser *p, int tool_id, const uint8_t *name, size_t len, int kind);
/* TP_PARAM_* / tp_kind of a parameter; TP_PARAM_UNKNOWN if it was not
 * declared (or the tool's default kind). */
int tp_parser_param_kind(const tp_parser *p, int tool_id, const uint8_t *name, size_t len);
int tp_parser_param_kind_mask(const tp_parser *p, int tool_id, const uint8_t *name, size_t len,
                              unsigned *mask);
/* Uses a compiled tool list (names and parameter kinds) instead of
 * tp_parser_add_tool/add_param. `t` is only read, must not change while it
 * is used, and must outlive the parser; many parsers may share it. */
void tp_parser_use_tools(tp_parser *p, const tp_tools *t);

/* Feeds a chunk / ends the stream. Returns 0, or -1 if memory ran out (the
 * parser is then unusable). Events are in tp_parser_events(). */
int tp_parser_feed(tp_parser *p, const uint8_t *data, size_t n);
int tp_parser_finish(tp_parser *p);

static inline const tp_event *tp_parser_events(const tp_parser *p, size_t *n)
{
    *n = p->nev;
    return p->ev;
}
static inline const uint8_t *tp_parser_output(const tp_parser *p) { return p->out.data; }
static inline size_t tp_parser_output_len(const tp_parser *p) { return p->out.len; }

#endif
