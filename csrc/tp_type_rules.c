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

/* A format without rules of its own: a non-string value is its raw text. */
const tp_type_rules tp_rules_plain = {"plain", {0}};

/* format -> rules; a format not listed types nothing */
static const struct {
    const char *format;
    const tp_type_rules *rules;
} BY_FORMAT[] = {
    {"glm45", &tp_rules_glm45},
    {"glm47", &tp_rules_glm47},
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
    static const tp_type_rules *const ALL[] = {&tp_rules_glm45, &tp_rules_glm47, &tp_rules_plain};
    for (size_t i = 0; i < sizeof(ALL) / sizeof(ALL[0]); i++)
        if (strcmp(ALL[i]->family, family) == 0)
            return ALL[i];
    return NULL;
}
