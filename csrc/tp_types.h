/* Typed values: what a complete raw parameter value becomes in the
 * argument JSON.
 *
 * XML-parameter formats (GLM-4.5/4.7, Qwen3-Coder, MiniMax-M2) write
 * every argument value as raw text; its JSON type comes from the tool's
 * schema. The binding compiles each declared parameter's schema once into
 * a *kind* (tp_kind) and, for unions, a mask of the JSON types it allows
 * (tp_tools, shared by every parser of the same tool list). Each format
 * family's conversion rules are one row of data (tp_type_rules,
 * tp_type_rules.c): for each kind, which of a fixed list of steps run, in a
 * fixed order. The core writes the JSON text itself; only a value whose
 * result depends on Python's literal syntax or number parsing (SGLang's
 * ast.literal_eval, or int() / float() of text beyond plain ASCII
 * numbers) goes to the host as a
 * TP_EV_RAW_VALUE event, with no pointer into core memory held while the
 * host converts it (see _core.pyx). */
#ifndef TP_TYPES_H
#define TP_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "tp_buf.h"
#include "tp_json.h"
#include "tp_strset.h"

/* Kinds of parameters. TP_KIND_UNTYPED/STRING/OTHER are the values of
 * TP_PARAM_UNKNOWN/STRING/OTHER (tp_parser.h). */
typedef enum {
    TP_KIND_UNTYPED = 0, /* undeclared key, unknown tool, or a schema without a type */
    TP_KIND_STRING = 1,  /* streams as JSON string content: the raw text */
    TP_KIND_OTHER = 2,   /* a declared type with no rule of its own (e.g. "int") */
    TP_KIND_INTEGER = 3,
    TP_KIND_NUMBER = 4,
    TP_KIND_BOOLEAN = 5,
    TP_KIND_NULL = 6,
    TP_KIND_OBJECT = 7,
    TP_KIND_ARRAY = 8,
    TP_KIND_UNION = 9, /* several JSON types (the mask), independent of the value */
    TP_KIND_HOST = 10, /* typed by the host whatever the value (e.g. enum-dependent) */
    TP_KIND__COUNT
} tp_kind;

/* JSON types, as bits of a union's mask (integer: a number whose value is
 * whole, as SGLang's _json_type counts 1.0). */
enum {
    TP_JT_STRING = 1, TP_JT_INTEGER = 2, TP_JT_NUMBER = 4, TP_JT_BOOLEAN = 8,
    TP_JT_NULL = 16, TP_JT_OBJECT = 32, TP_JT_ARRAY = 64,
};

/* Steps of a conversion (bits: GLM's first, then Qwen3-Coder's and MiniMax-M2's),
 * run in the order given below; the first that decides wins, and a value no
 * step decides is its raw text as a JSON string. */
enum {
    TP_R_JSON = 1,          /* the whole value is JSON (json.loads): its canonical text.
                             * Never NaN/Infinity (tp_json.h: those are not JSON here,
                             * so such a value goes on to the next step, and ends as its
                             * text); a number past a double keeps its digits */
    TP_R_JSON_STR_HOST = 2, /* ... but a JSON string goes to the host (numeric coercion) */
    TP_R_UNESCAPE_HOST = 4, /* not JSON, has '\\' or '"': the host tries it as escaped JSON */
    TP_R_STRIP_QUOTES = 8,  /* 'x' / "x" (same quote both ends): the text between */
    TP_R_LITERAL_HOST = 16, /* may be a Python literal: the host (ast.literal_eval) */
    TP_R_UNION_STRING = 32, /* a JSON result of a type outside the union's mask, when the
                             * mask allows strings, becomes the raw text */
};
enum {
    /* null words, compared before anything else */
    TP_R_NULL_WORD = 1u << 6,  /* "null" in any (ASCII) case: null */
    TP_R_NULL_NIL = 1u << 7,   /* ... and "none", "nil" in any case */
    TP_R_NULL_NONE = 1u << 8,  /* exactly "None" (Jinja's `string` of None) */
    /* Python's int() / float() (plain ASCII numbers in the core; text only
     * Python could still read as a number, e.g. with "_" or Unicode digits,
     * goes to the host); a value they reject goes on to the next step */
    TP_R_PY_INT = 1u << 9,
    TP_R_PY_FLOAT = 1u << 10,       /* finite only; an integral value is an int ... */
    TP_R_FLOAT_AS_WRITTEN = 1u << 11, /* ... only when written without "." or "e" */
    /* booleans */
    TP_R_TRUE_WORD = 1u << 12,  /* "true" in any case: true; anything else: false */
    TP_R_BOOL_WORDS = 1u << 13, /* true/1/yes/on, false/0/no/off (any case, stripped) */
    /* MiniMax's ordered tries: PY_INT, PY_FLOAT, BOOL_WORDS and JSON run only
     * for the types in the union's mask (integer, number, boolean,
     * object/array); a mask with string then takes the raw text */
    TP_R_BY_MASK = 1u << 14,
    TP_R_JSON_ELSE = 1u << 15,  /* nothing decided and no string in the mask: JSON, else the text */
    /* more boolean words (rows of the GLM engine); like BOOL_WORDS, gated by
     * the mask under BY_MASK, and a value they reject goes on */
    TP_R_BOOL_01 = 1u << 17, /* true/1, false/0 (any case, stripped): Spark */
    TP_R_BOOL_TF = 1u << 18, /* true, false (any case, as written): Hunyuan */
    TP_R_TRUE_ONE = 1u << 19,    /* with TRUE_WORD: "1" is true as well (dots) */
    /* MiniMax-M3's leaves (gated by the mask under BY_MASK, in this order
     * before PY_INT): */
    TP_R_STRING_FIRST = 1u << 20, /* the mask has string: the raw text */
    TP_R_NULL_CASES = 1u << 21,   /* the mask has null: "null", "Null", "NULL" or "": null */
    TP_R_LITERAL_WORDS = 1u << 22, /* str.strip() of it is true, false or null: that literal */
    TP_R_PY_EXACT = 1u << 23, /* PY_INT, PY_FLOAT and BOOL_WORDS read any text as Python does
                               * (tp_pytext.c: Unicode spaces and digits, underscores; never
                               * the host's), and a float past a double is no number */
};
/* Order in which steps run: null words, LITERAL_WORDS, STRING_FIRST, NULL_CASES, PY_INT, PY_FLOAT, TRUE_WORD,
 * BOOL_WORDS, BOOL_01, BOOL_TF, JSON (+ JSON_STR_HOST, UNION_STRING),
 * UNESCAPE_HOST, STRIP_QUOTES, LITERAL_HOST, JSON_ELSE, the raw text. */

/* Families: GLM-4.5, GLM-4.7, Qwen3-Coder, MiniMax-M2 (tp_type_rules.c).
 * Their Python twins: glm_types.py (GLM) and xml_types.py (Qwen3-Coder,
 * MiniMax-M2), which also type what a row sends to the host; the compile
 * step in Python maps a schema to kinds (MiniMax: every non-string
 * parameter is a TP_KIND_UNION whose mask is the set of types it tries). */
typedef struct tp_type_rules {
    const char *family;
    uint32_t steps[TP_KIND__COUNT]; /* TP_R_* per kind */
    uint8_t untyped_tools; /* 1: a key of an undeclared tool (or of any tool when
                            * every name is accepted) is TP_KIND_UNTYPED; 0: the host's */
} tp_type_rules;

extern const tp_type_rules tp_rules_glm45;
extern const tp_type_rules tp_rules_glm47;
extern const tp_type_rules tp_rules_qwen3_coder;
extern const tp_type_rules tp_rules_minimax_m2;
extern const tp_type_rules tp_rules_dots;
extern const tp_type_rules tp_rules_minicpm5;
extern const tp_type_rules tp_rules_plain; /* no typing: a value is its raw text */
extern const tp_type_rules tp_rules_poolside_v1;
extern const tp_type_rules tp_rules_spark25;
extern const tp_type_rules tp_rules_hunyuan;
extern const tp_type_rules tp_rules_kimi_k3; /* typed by the model's type attribute */
extern const tp_type_rules tp_rules_step3;
extern const tp_type_rules tp_rules_k2_horizon;
extern const tp_type_rules tp_rules_minimax_m3; /* a leaf of a nested value (fmt_nsxml_value.c) */

/* The rules row of a format (a const tp_format *, matched by name;
 * tp_rules_plain if it has none). */
const tp_type_rules *tp_rules_for(const void *fmt);

/* ---- compiled tools: names, and per (tool, parameter) a kind ---------- */

typedef struct tp_tools {
    tp_strset names;   /* tool id = declaration order (a repeated name keeps its first id) */
    tp_strset params;  /* (tool id (4 bytes) ++ parameter name) */
    uint8_t *kind;     /* by params id */
    uint8_t *mask;     /* by params id: TP_JT_* of a union */
    uint8_t *tool_kind; /* by tool id: the kind of every key of a tool typed whole
                         * (TP_KIND_HOST), else TP_KIND_UNTYPED for undeclared keys */
    uint32_t tool_cap;
    struct tp_schema *schema; /* nested values' schemas (tp_schema.h), or NULL */
} tp_tools;

void tp_tools_init(tp_tools *t);
void tp_tools_free(tp_tools *t);
/* Adds a tool (or finds it again). Returns its id, or -1. */
int tp_tools_add(tp_tools *t, const uint8_t *name, size_t len);
/* Kind of the keys of tool `id` that are not declared (TP_KIND_UNTYPED by
 * default; TP_KIND_HOST: the host types the whole call). Returns 0 or -1. */
int tp_tools_set_default(tp_tools *t, int id, int kind);
/* Declares (or redeclares) a parameter. Returns 0, or -1. */
int tp_tools_add_param(tp_tools *t, int id, const uint8_t *name, size_t len, int kind, unsigned mask);
int tp_tools_find(const tp_tools *t, const uint8_t *name, size_t len);
/* kind (and mask) of a key of tool `id` (-1: no declared tool) */
int tp_tools_kind(const tp_tools *t, int id, const uint8_t *name, size_t len, unsigned *mask);

/* ---- conversion ------------------------------------------------------ */

/* What a complete raw value raw[0:n) of a parameter of `kind` (and union
 * `mask`) becomes under rules `r`: TP_TV_TEXT (its JSON text appended to
 * `out`), TP_TV_HOST (nothing appended: the host types it), or -1 (out of
 * memory). `js` is scratch state; max_depth bounds JSON nesting. */
enum { TP_TV_TEXT = 0, TP_TV_HOST = 1 };
int tp_type_value(const tp_type_rules *r, int kind, unsigned mask, const uint8_t *raw, size_t n,
                  tp_json *js, uint32_t max_depth, tp_buf *out);
/* The whole value raw[0:n) as JSON (json.loads as SGLang calls it),
 * appended canonically to `out`: 1 written; 0 not JSON; -1 the host's
 * (beyond the core's limits, a repeated key, a raw lone surrogate); -2 out
 * of memory. */
int tp_json_value(tp_json *js, uint32_t max_depth, const uint8_t *raw, size_t n, tp_buf *out);
/* The rules row of a family by name ("glm45", ...); NULL if none. */
const tp_type_rules *tp_rules_named(const char *family);

/* Appends s[0:n) as JSON string content (json.dumps(s, ensure_ascii=False)
 * without the quotes; lone surrogates in WTF-8 stay \u-escaped, and a high
 * one right before a low one (a pair written as two sequences, CESU-8, from
 * surrogatepass input) is the pair's character, as JSON reads their
 * escapes: canonical, the normalizer's own output). */
int tp_json_escape(tp_buf *b, const uint8_t *s, size_t n);
/* s[0:3) is a surrogate in WTF-8: a high one (D800-DBFF) / a low one
 * (DC00-DFFF); tp_json_escape reads them so wherever they stand */
static inline int tp_sur_high(const uint8_t *s)
{
    return s[0] == 0xED && s[1] >= 0xA0 && s[1] <= 0xAF && (s[2] & 0xC0) == 0x80;
}
static inline int tp_sur_low(const uint8_t *s)
{
    return s[0] == 0xED && s[1] >= 0xB0 && s[1] <= 0xBF && (s[2] & 0xC0) == 0x80;
}
/* the UTF-8 of the character the pair h[0:3) l[0:3) stands for */
static inline void tp_sur_pair(const uint8_t *h, const uint8_t *l, uint8_t *u)
{
    uint32_t cp = 0x10000u + ((uint32_t)(h[1] & 0x0F) << 16) + ((uint32_t)(h[2] & 0x3F) << 10) +
                  ((uint32_t)(l[1] & 0x0F) << 6) + (l[2] & 0x3Fu);
    u[0] = (uint8_t)(0xF0 | (cp >> 18));
    u[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    u[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    u[3] = (uint8_t)(0x80 | (cp & 0x3F));
}

/* Python's reading of text (tp_pytext.c). tp_py_strip: s[0:n) without the
 * whitespace str.strip() removes (*s moved past the leading part; returns
 * the length left). tp_py_number_text: appends to `out` the ASCII text
 * int() / float() parse s as (Unicode spaces and digits made ASCII,
 * stripped, underscores checked and removed): 1, or 0 when no number can
 * be read (nothing appended is meaningful), -1 out of memory. */
size_t tp_py_strip(const uint8_t **s, size_t n);
int tp_py_number_text(const uint8_t *s, size_t n, tp_buf *out);

#endif
