/* Incremental JSON value scanner and normalizer.
 *
 * Consumes one JSON value from a stream of chunks, never looking at a byte
 * twice, and writes it out in the canonical form of Python's
 * json.dumps(value, ensure_ascii=False): ", " and ": " separators, strings
 * re-escaped minimally, floats in repr() form. Every byte written is final,
 * so the output so far is always a prefix of the final output: it can be
 * streamed as argument deltas. The output is strict JSON (RFC 8259): the
 * constants NaN/Infinity are not read, and a number whose value is past a
 * double is written with the digits the model wrote.
 *
 * Speed: with an output buffer, one token loop (fast_run in tp_json.c)
 * takes the tokens that lie whole in the chunk and need no error (strings
 * of plain bytes and of the escapes written as read, scanned and copied 16
 * bytes at a time; a key with its colon; a number with its terminator;
 * true/false/null; brackets and commas) straight into the buffer's spare
 * capacity, and a float of at most 15 significant digits is written
 * without strtod (its digits are repr()'s). Anything else goes byte by
 * byte. Both paths give the same output, state and error offsets at every
 * chunking (scripts/json-diff.sh tests the one against the other). In
 * RAW_STRING mode the value must be a string and its decoded UTF-8 content
 * is written instead (used for names/keys). */
#ifndef TP_JSON_H
#define TP_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "tp_buf.h"

#define TP_JSON_DEPTH_CAP 4096 /* hard cap of the configurable depth limit */
#define TP_JSON_NUM_MAX 4096   /* longest number token accepted */

/* Modes (bits). By default the value is read as Python's
 * json.loads(strict=False) reads it, without NaN/Infinity/-Infinity: a raw
 * control character inside a string is content (written escaped), and the
 * output is always RFC 8259 JSON (a number past a double keeps the digits
 * it was written with). TPJ_STRICT_CTRL: a raw control character inside a
 * string is an error, as json.loads(strict=True) has it (the typed-value
 * rules of SGLang's XML families). */
enum { TPJ_MODE_NORMAL = 0, TPJ_MODE_RAW_STRING = 1, TPJ_STRICT_CTRL = 2 };

/* Inline room (the struct is ~128 bytes): a number token shorter than
 * TP_JSON_NUM_INLINE bytes and the nesting bits of the first
 * TP_JSON_NEST_INLINE levels. A longer token or a deeper level uses the
 * heap spill, allocated when first needed and kept until tp_json_init or
 * tp_json_free; when it cannot be allocated the value fails with
 * TP_ERR_NO_MEMORY at the byte that needed it. */
#define TP_JSON_NUM_INLINE 62
#define TP_JSON_NEST_INLINE 128

typedef struct {
    uint8_t stack[(TP_JSON_DEPTH_CAP - TP_JSON_NEST_INLINE) / 8]; /* levels past the inline ones */
    char num[TP_JSON_NUM_MAX + 1];                                 /* a long number token, whole */
} tp_json_spill;

/* A tp_json starts zeroed (static, calloc, or inside a zeroed parser) or
 * after tp_json_free: tp_json_init frees the spill it holds. */
typedef struct {
    uint8_t state;
    uint8_t mode;
    uint8_t str_is_key;
    uint8_t num_state;
    uint8_t lit_pos;
    uint8_t u_n;         /* hex digits seen in \uXXXX */
    uint8_t err;         /* tp_error when state is error */
    uint8_t err_in_str;  /* the error was found inside a string */
    uint32_t u_acc;      /* code point being read */
    uint32_t hi;         /* pending high surrogate, 0 if none */
    uint32_t depth;
    uint32_t max_depth;
    const char *lit;     /* literal being matched */
    size_t err_at;       /* offset into the chunk where the error was found */
    tp_json_spill *spill; /* NULL until a long number or deep nesting needs it */
    uint16_t num_len;
    /* scratch, written before it is read (the last fields: a zeroing
     * parser may skip them): the number token while it is shorter than
     * TP_JSON_NUM_INLINE (then spill->num), and the nesting bits of the
     * first levels (1 = object; deeper ones in spill->stack) */
    char num[TP_JSON_NUM_INLINE];
    uint8_t stack[TP_JSON_NEST_INLINE / 8];
} tp_json;

/* Allocates j->spill when it has none: 0, or -1 when out of memory. */
int tp_json_spill_get(tp_json *j);
/* Frees the spill (the tp_json may be initialised again afterwards). */
void tp_json_free(tp_json *j);

/* The nesting bit of level d (0-based, below TP_JSON_DEPTH_CAP): 1 when an
 * object. For the engines that keep their own nesting in a tp_json. */
static inline int tp_json_nest_obj(const tp_json *j, uint32_t d)
{
    if (d < TP_JSON_NEST_INLINE)
        return (j->stack[d >> 3] >> (d & 7)) & 1;
    return (j->spill->stack[(d - TP_JSON_NEST_INLINE) >> 3] >> (d & 7)) & 1;
}

/* Sets the nesting bit of level d: 0, or -1 when the spill it needs cannot
 * be allocated. */
int tp_json_nest_set_deep(tp_json *j, uint32_t d, int is_obj);
static inline int tp_json_nest_set(tp_json *j, uint32_t d, int is_obj)
{
    if (d >= TP_JSON_NEST_INLINE)
        return tp_json_nest_set_deep(j, d, is_obj);
    uint8_t m = (uint8_t)(1u << (d & 7)), *b = &j->stack[d >> 3];
    *b = is_obj ? (uint8_t)(*b | m) : (uint8_t)(*b & ~m);
    return 0;
}

void tp_json_init(tp_json *j, int mode, uint32_t max_depth);

/* Feeds p[0:n). Output goes to `out` (NULL: validate only). Returns the
 * number of bytes consumed; fewer than n only when the value completed
 * (tp_json_done) or an error occurred (tp_json_failed). */
size_t tp_json_feed(tp_json *j, const uint8_t *p, size_t n, tp_buf *out);

/* End of the enclosing context: completes a top-level number. Returns 1 if
 * the value is complete afterwards. */
int tp_json_end(tp_json *j, tp_buf *out);

int tp_json_done(const tp_json *j);
int tp_json_failed(const tp_json *j);
/* 1 while nothing but whitespace has been consumed */
int tp_json_not_started(const tp_json *j);
/* Is s[0:n) a JSON number token (RFC 8259 grammar)? */
int tp_json_is_number(const uint8_t *s, size_t n);

/* Writes repr(float(s)) as Python prints it. Returns the length. */
size_t tp_format_double(double v, char *out);
/* repr(float(s)) of a float token s[0:n) (an optional '-', digits with
 * at most one '.', an optional exponent: e or E, a sign, digits; checked
 * by the caller) written to f (40 bytes) without strtod or printf, when
 * its digits are repr()'s own: at most 15 significant digits, an exponent
 * of at most 4 digits, a magnitude within 1e-300..1e300. Returns the
 * length, or 0 for anything else (then format strtod's value). */
size_t tp_short_float(const char *s, size_t n, char *f);

#endif
