/* Each family's conversion rules as one row per family: for each kind, the
 * steps (tp_types.h) that run on a complete raw value. A new family adds a
 * row here, not code. The comments name the SGLang function each row
 * follows (sglang 0.5.23, srt/function_call/). */
#include <string.h>

#include "tp_parser.h"

#define JSON_ANY (TP_R_JSON | TP_R_UNESCAPE_HOST)

/* glm4_moe_detector.parse_arguments: json.loads, then the value as escaped
 * JSON, then ast.literal_eval, then the raw text; a "number" whose JSON is
 * a string is re-read as a number. A "string" parameter is its raw text
 * (the chat template writes strings raw; see docs/PARSERS.md). */
const tp_type_rules tp_rules_glm45 = {
    "glm45",
    {
        [TP_KIND_UNTYPED] = JSON_ANY | TP_R_LITERAL_HOST,
        [TP_KIND_STRING] = 0,
        [TP_KIND_OTHER] = JSON_ANY | TP_R_LITERAL_HOST,
        [TP_KIND_INTEGER] = JSON_ANY | TP_R_LITERAL_HOST,
        [TP_KIND_NUMBER] = JSON_ANY | TP_R_JSON_STR_HOST | TP_R_LITERAL_HOST,
        [TP_KIND_BOOLEAN] = JSON_ANY | TP_R_LITERAL_HOST,
        [TP_KIND_NULL] = JSON_ANY | TP_R_LITERAL_HOST,
        [TP_KIND_OBJECT] = JSON_ANY | TP_R_LITERAL_HOST,
        [TP_KIND_ARRAY] = JSON_ANY | TP_R_LITERAL_HOST,
        [TP_KIND_UNION] = JSON_ANY | TP_R_LITERAL_HOST,
        [TP_KIND_HOST] = 0,
    },
};

/* glm47_moe_detector: an untyped or union value is parsed as a string
 * (json.loads, escaped JSON, quotes stripped — no literal_eval), and a
 * union value whose JSON type the schema does not allow stays text when
 * the schema allows a string; a declared non-string type also tries
 * ast.literal_eval, and "integer"/"number" re-read a JSON string. */
const tp_type_rules tp_rules_glm47 = {
    "glm47",
    {
        [TP_KIND_UNTYPED] = JSON_ANY | TP_R_STRIP_QUOTES,
        [TP_KIND_STRING] = 0,
        [TP_KIND_OTHER] = JSON_ANY | TP_R_LITERAL_HOST,
        [TP_KIND_INTEGER] = JSON_ANY | TP_R_JSON_STR_HOST | TP_R_LITERAL_HOST,
        [TP_KIND_NUMBER] = JSON_ANY | TP_R_JSON_STR_HOST | TP_R_LITERAL_HOST,
        [TP_KIND_BOOLEAN] = JSON_ANY | TP_R_LITERAL_HOST,
        [TP_KIND_NULL] = JSON_ANY | TP_R_LITERAL_HOST,
        [TP_KIND_OBJECT] = JSON_ANY | TP_R_LITERAL_HOST,
        [TP_KIND_ARRAY] = JSON_ANY | TP_R_LITERAL_HOST,
        [TP_KIND_UNION] = JSON_ANY | TP_R_STRIP_QUOTES | TP_R_UNION_STRING,
        [TP_KIND_HOST] = 0,
    },
};

/* qwen3_coder_detector._convert_param_value (and the newest upstream): a
 * value equal to "null" (any case) is null; then by the schema's type name
 * (xml_types.QWEN_TYPE_RULES): int() / float() (an integral float written
 * without "." or "e" is an int) / "true" or false / json.loads, then
 * ast.literal_eval / ast.literal_eval; what fails is the raw text. The
 * template writes None as `None` (Jinja `string`): a non-string value
 * "None" is null; a value NaN or Infinity stays text (docs/PARSERS.md).
 * Strings and undeclared keys are the raw text. */
#define QWEN_NULL (TP_R_NULL_WORD | TP_R_NULL_NONE)
const tp_type_rules tp_rules_qwen3_coder = {
    "qwen3_coder",
    {
        [TP_KIND_UNTYPED] = TP_R_NULL_WORD,
        [TP_KIND_STRING] = TP_R_NULL_WORD,
        [TP_KIND_OTHER] = QWEN_NULL | TP_R_LITERAL_HOST, /* a type name without a rule */
        [TP_KIND_INTEGER] = QWEN_NULL | TP_R_PY_INT,
        [TP_KIND_NUMBER] = QWEN_NULL | TP_R_PY_FLOAT | TP_R_FLOAT_AS_WRITTEN,
        [TP_KIND_BOOLEAN] = QWEN_NULL | TP_R_TRUE_WORD,
        [TP_KIND_NULL] = QWEN_NULL | TP_R_LITERAL_HOST,
        [TP_KIND_OBJECT] = QWEN_NULL | TP_R_JSON | TP_R_LITERAL_HOST,
        [TP_KIND_ARRAY] = QWEN_NULL | TP_R_JSON | TP_R_LITERAL_HOST,
        [TP_KIND_UNION] = QWEN_NULL | TP_R_LITERAL_HOST,
        [TP_KIND_HOST] = 0,
    },
    1,
};

/* minimax_m2.MinimaxM2Detector._convert_param_value_with_types: "null",
 * "none", "nil" (any case) are null; then the schema's types tried in the
 * order integer, number (integral: an int), boolean (words), object/array
 * (json.loads), string; none fits: json.loads, else the raw text. Every
 * non-string parameter compiles to TP_KIND_UNION, its mask the types it
 * tries. A string parameter (only string types) is its raw text but the
 * word "null" (the template writes None as `null`; docs/PARSERS.md). */
#define MINIMAX_TRIES (TP_R_NULL_WORD | TP_R_NULL_NIL | TP_R_PY_INT | TP_R_PY_FLOAT | TP_R_BOOL_WORDS | \
                       TP_R_JSON | TP_R_BY_MASK | TP_R_JSON_ELSE)
const tp_type_rules tp_rules_minimax_m2 = {
    "minimax_m2",
    {
        [TP_KIND_UNTYPED] = TP_R_NULL_WORD,
        [TP_KIND_STRING] = TP_R_NULL_WORD,
        [TP_KIND_OTHER] = MINIMAX_TRIES,
        [TP_KIND_INTEGER] = MINIMAX_TRIES,
        [TP_KIND_NUMBER] = MINIMAX_TRIES,
        [TP_KIND_BOOLEAN] = MINIMAX_TRIES,
        [TP_KIND_NULL] = MINIMAX_TRIES,
        [TP_KIND_OBJECT] = MINIMAX_TRIES,
        [TP_KIND_ARRAY] = MINIMAX_TRIES,
        [TP_KIND_UNION] = MINIMAX_TRIES,
        [TP_KIND_HOST] = 0,
    },
    1,
};

/* poolside_v1_detector._convert_param_value: a parameter whose schema type
 * (lowercased) is string/str/text/enum is its raw text; no type (or an
 * undeclared key, or an unknown tool): json.loads, else the raw text; any
 * other type: json.loads, then ast.literal_eval, else the raw text. Every
 * declared non-string parameter compiles to TP_KIND_OTHER. A value that is
 * JSON with NaN/Infinity stays text (SGLang writes them into the argument
 * JSON; see docs/PARSERS.md). */
#define POOLSIDE_TYPED (TP_R_JSON | TP_R_LITERAL_HOST)
const tp_type_rules tp_rules_poolside_v1 = {
    "poolside_v1",
    {
        [TP_KIND_UNTYPED] = TP_R_JSON,
        [TP_KIND_STRING] = 0,
        [TP_KIND_OTHER] = POOLSIDE_TYPED,
        [TP_KIND_INTEGER] = POOLSIDE_TYPED,
        [TP_KIND_NUMBER] = POOLSIDE_TYPED,
        [TP_KIND_BOOLEAN] = POOLSIDE_TYPED,
        [TP_KIND_NULL] = POOLSIDE_TYPED,
        [TP_KIND_OBJECT] = POOLSIDE_TYPED,
        [TP_KIND_ARRAY] = POOLSIDE_TYPED,
        [TP_KIND_UNION] = POOLSIDE_TYPED,
        [TP_KIND_HOST] = 0,
    },
    1,
};

/* spark25_detector._convert_value: "null" (any case) is null; then by the
 * schema's type name (a type that is not a string, or none: "string"):
 * string/str/text the raw text; integer/int int(); number/float float(),
 * an integral value as an int; boolean/bool true/1/false/0 (stripped);
 * anything else json.loads; a failed conversion tries json.loads, then the
 * raw text. A declared string (or untyped declared) parameter is its raw
 * text, "null" included (the template writes strings raw; docs/PARSERS.md);
 * NaN/Infinity stay text. */
#define SPARK_ELSE (TP_R_NULL_WORD | TP_R_JSON)
const tp_type_rules tp_rules_spark25 = {
    "spark25",
    {
        [TP_KIND_UNTYPED] = TP_R_NULL_WORD,
        [TP_KIND_STRING] = 0,
        [TP_KIND_OTHER] = SPARK_ELSE,
        [TP_KIND_INTEGER] = SPARK_ELSE | TP_R_PY_INT,
        [TP_KIND_NUMBER] = SPARK_ELSE | TP_R_PY_FLOAT,
        [TP_KIND_BOOLEAN] = SPARK_ELSE | TP_R_BOOL_01,
        [TP_KIND_NULL] = SPARK_ELSE,
        [TP_KIND_OBJECT] = SPARK_ELSE,
        [TP_KIND_ARRAY] = SPARK_ELSE,
        [TP_KIND_UNION] = SPARK_ELSE,
        [TP_KIND_HOST] = 0,
    },
    1,
};

/* dots_detector.DotsToolDetector._convert_param_value: "null" (any case)
 * is null for every parameter; then by the schema's type (the first
 * non-null of a list; through $ref/anyOf/oneOf/allOf): int() / float()
 * (integral: an int) / "true" or "1" (any case), anything else false /
 * everything else json.loads; what fails is the text (a value with
 * NaN/Infinity too; json_repair is not tried). The value is stripped
 * first (fmt_xmlparam.c's row). */
#define DOTS_JSON (TP_R_NULL_WORD | TP_R_JSON)
const tp_type_rules tp_rules_dots = {
    "dots",
    {
        [TP_KIND_UNTYPED] = TP_R_NULL_WORD,
        [TP_KIND_STRING] = TP_R_NULL_WORD,
        [TP_KIND_OTHER] = DOTS_JSON,
        [TP_KIND_INTEGER] = TP_R_NULL_WORD | TP_R_PY_INT,
        [TP_KIND_NUMBER] = TP_R_NULL_WORD | TP_R_PY_FLOAT,
        [TP_KIND_BOOLEAN] = TP_R_NULL_WORD | TP_R_TRUE_WORD | TP_R_TRUE_ONE,
        [TP_KIND_NULL] = DOTS_JSON,
        [TP_KIND_OBJECT] = DOTS_JSON,
        [TP_KIND_ARRAY] = DOTS_JSON,
        [TP_KIND_UNION] = DOTS_JSON,
        [TP_KIND_HOST] = 0,
    },
    1,
};

/* hunyuan_detector.HunyuanDetector._parse_value: the schema's types (its
 * "type", else its anyOf, else its oneOf, else string; aliases and int /
 * num prefixes normalized; null left out) are tried in order: boolean
 * (true/false in any case), integer (int()), number (int() when written
 * without "." or "e", else float()), JSON when a type is none of string,
 * boolean, integer, number; then the raw text if string is a type, else
 * json.loads or the raw text. Only-string parameters (undeclared keys and
 * unknown tools included) are the raw text, streamed; every other
 * parameter compiles to TP_KIND_UNION, its mask the steps it takes (a
 * number also takes int(); "a type outside the primitives" sets the
 * object bit). NaN/Infinity stay text (docs/PARSERS.md). */
#define HUNYUAN_TRIES (TP_R_BY_MASK | TP_R_PY_INT | TP_R_PY_FLOAT | TP_R_FLOAT_AS_WRITTEN | TP_R_BOOL_TF | \
                       TP_R_JSON | TP_R_JSON_ELSE)
const tp_type_rules tp_rules_hunyuan = {
    "hunyuan",
    {
        [TP_KIND_UNTYPED] = 0,
        [TP_KIND_STRING] = 0,
        [TP_KIND_OTHER] = HUNYUAN_TRIES,
        [TP_KIND_INTEGER] = HUNYUAN_TRIES,
        [TP_KIND_NUMBER] = HUNYUAN_TRIES,
        [TP_KIND_BOOLEAN] = HUNYUAN_TRIES,
        [TP_KIND_NULL] = HUNYUAN_TRIES,
        [TP_KIND_OBJECT] = HUNYUAN_TRIES,
        [TP_KIND_ARRAY] = HUNYUAN_TRIES,
        [TP_KIND_UNION] = HUNYUAN_TRIES,
        [TP_KIND_HOST] = 0,
    },
    1,
};

/* minicpm5_detector.MiniCPM5Detector: a parameter whose schema `type` is
 * exactly "string" is its (stripped) text; every other value, undeclared
 * keys included, is json.loads, else ast.literal_eval, else the text (a
 * value with NaN/Infinity: the text). */
#define MINICPM5_PARSE (TP_R_JSON | TP_R_LITERAL_HOST)
const tp_type_rules tp_rules_minicpm5 = {
    "minicpm5",
    {
        [TP_KIND_UNTYPED] = MINICPM5_PARSE,
        [TP_KIND_STRING] = 0,
        [TP_KIND_OTHER] = MINICPM5_PARSE,
        [TP_KIND_INTEGER] = MINICPM5_PARSE,
        [TP_KIND_NUMBER] = MINICPM5_PARSE,
        [TP_KIND_BOOLEAN] = MINICPM5_PARSE,
        [TP_KIND_NULL] = MINICPM5_PARSE,
        [TP_KIND_OBJECT] = MINICPM5_PARSE,
        [TP_KIND_ARRAY] = MINICPM5_PARSE,
        [TP_KIND_UNION] = MINICPM5_PARSE,
        [TP_KIND_HOST] = 0,
    },
    1,
};

/* kimi_k3: the model writes each value's type; a value of a type other
 * than string is json.loads'ed (fmt_xmlparam.c asks for TP_KIND_OTHER),
 * and is its raw text when that fails. */
const tp_type_rules tp_rules_kimi_k3 = {
    "kimi_k3",
    {
        [TP_KIND_OTHER] = TP_R_JSON,
    },
    1,
};

/* step3_detector.Step3Detector: a parameter whose schema `type` is absent
 * or "string" (undeclared keys and unknown tools too) is its (stripped)
 * text; any other `type` (a list included): json.loads, else
 * ast.literal_eval, else the text (a value with NaN/Infinity: the text). */
const tp_type_rules tp_rules_step3 = {
    "step3",
    {
        [TP_KIND_UNTYPED] = 0,
        [TP_KIND_STRING] = 0,
        [TP_KIND_OTHER] = MINICPM5_PARSE,
        [TP_KIND_INTEGER] = MINICPM5_PARSE,
        [TP_KIND_NUMBER] = MINICPM5_PARSE,
        [TP_KIND_BOOLEAN] = MINICPM5_PARSE,
        [TP_KIND_NULL] = MINICPM5_PARSE,
        [TP_KIND_OBJECT] = MINICPM5_PARSE,
        [TP_KIND_ARRAY] = MINICPM5_PARSE,
        [TP_KIND_UNION] = MINICPM5_PARSE,
        [TP_KIND_HOST] = 0,
    },
    1,
};

/* k2_v3_detector.K2V3Detector._coerce_value (XML dialects): the schema's
 * type (after the template's local $ref inlining; unions and multi-type
 * lists are left to the model's <ifm|arg_type>, which fmt_glm.c reads) is
 * "string" or "any": the raw text (streamed); any other type, or none:
 * json.loads of the value, else its raw text. */
const tp_type_rules tp_rules_k2_horizon = {
    "k2_horizon",
    {
        [TP_KIND_UNTYPED] = TP_R_JSON,
        [TP_KIND_STRING] = 0,
        [TP_KIND_OTHER] = TP_R_JSON,
        [TP_KIND_INTEGER] = TP_R_JSON,
        [TP_KIND_NUMBER] = TP_R_JSON,
        [TP_KIND_BOOLEAN] = TP_R_JSON,
        [TP_KIND_NULL] = TP_R_JSON,
        [TP_KIND_OBJECT] = TP_R_JSON,
        [TP_KIND_ARRAY] = TP_R_JSON,
        [TP_KIND_UNION] = TP_R_JSON,
        [TP_KIND_HOST] = 0,
    },
    1,
};

/* minimax_m3 (sglang_toolparse/minimax_m3_types.py reads the schema, as
 * MinimaxM3Detector does): a leaf of a value (a parameter, or an element
 * of a nested one) by its schema's types, the mask: a string type: the
 * text; null (exact case, or empty) when null is a type; int(); float()
 * (finite; integral: an int); boolean words (stripped, any case); else the
 * text. An untyped leaf: str.strip() of it true/false/null is that
 * literal, else the text. Numbers as Python reads them, never the host's
 * (TP_R_PY_EXACT). fmt_nsxml_value.c asks for TP_KIND_UNION (typed) or
 * TP_KIND_UNTYPED. */
const tp_type_rules tp_rules_minimax_m3 = {
    "minimax_m3",
    {
        [TP_KIND_UNTYPED] = TP_R_LITERAL_WORDS,
        [TP_KIND_UNION] = TP_R_BY_MASK | TP_R_STRING_FIRST | TP_R_NULL_CASES | TP_R_PY_INT | TP_R_PY_FLOAT |
                          TP_R_BOOL_WORDS | TP_R_PY_EXACT,
    },
    1,
};

/* A format without rules of its own: a non-string value is its raw text. */
const tp_type_rules tp_rules_plain = {"plain", {0}};

/* format -> rules; a format not listed types nothing */
static const struct {
    const char *format;
    const tp_type_rules *rules;
} BY_FORMAT[] = {
    {"glm45", &tp_rules_glm45},
    {"glm47", &tp_rules_glm47},
    {"qwen3_coder", &tp_rules_qwen3_coder},
    {"minimax_m2", &tp_rules_minimax_m2},
    {"ling3", &tp_rules_glm45}, /* Ling3Detector is a Glm4MoeDetector */
    {"iquest_q1", &tp_rules_glm47}, /* IQuestQ1Detector is a Glm47MoeDetector */
    {"poolside_v1", &tp_rules_poolside_v1},
    {"spark25", &tp_rules_spark25},
    {"hunyuan", &tp_rules_hunyuan},
    {"hunyuan_os", &tp_rules_hunyuan},
    {"mimo", &tp_rules_qwen3_coder}, /* MiMoDetector: Qwen3-Coder's conversions */
    {"dots", &tp_rules_dots},
    {"minicpm5", &tp_rules_minicpm5},
    {"kimi_k3", &tp_rules_kimi_k3},
    {"step3", &tp_rules_step3},
    {"k2_horizon", &tp_rules_k2_horizon},
    {"muse", &tp_rules_kimi_k3}, /* MuseGlimmerDetector: json.loads, else the text */
    {"minimax_m3", &tp_rules_minimax_m3},
};

const tp_type_rules *tp_rules_for(const void *fmt)
{
    const tp_format *f = fmt;
    for (size_t i = 0; f && i < sizeof(BY_FORMAT) / sizeof(BY_FORMAT[0]); i++)
        if (strcmp(BY_FORMAT[i].format, f->name) == 0)
            return BY_FORMAT[i].rules;
    return &tp_rules_plain;
}

const tp_type_rules *tp_rules_named(const char *family)
{
    static const tp_type_rules *const ALL[] = {&tp_rules_glm45, &tp_rules_glm47, &tp_rules_qwen3_coder,
                                                   &tp_rules_minimax_m2, &tp_rules_plain,
                                                   &tp_rules_poolside_v1, &tp_rules_spark25,
                                                   &tp_rules_hunyuan, &tp_rules_dots,
                                                   &tp_rules_minicpm5,
                                                   &tp_rules_kimi_k3,
                                                   &tp_rules_step3,
                                                   &tp_rules_k2_horizon,
                                                   &tp_rules_minimax_m3};
    for (size_t i = 0; i < sizeof(ALL) / sizeof(ALL[0]); i++)
        if (strcmp(ALL[i]->family, family) == 0)
            return ALL[i];
    return NULL;
}
