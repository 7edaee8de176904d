/* A tool list's JSON schemas as a graph of nodes, for formats that type
 * nested values (MiniMax-M3, csrc/fmt_nsxml_value.c): per node, what the
 * schema says of a value (its types) and of its children (properties by
 * name, additionalProperties, prefixItems by position, then the rest of
 * the items). Built once per compiled tool list from a blob the binding
 * writes (sglang_toolparse/minimax_m3_types.py, schema_blob), then only
 * read: any number of parsers share it. Node ids index `nodes`; a child
 * that has no schema is TP_SN_NONE (typed as untyped). */
#ifndef TP_SCHEMA_H
#define TP_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "tp_buf.h"
#include "tp_json.h"
#include "tp_strset.h"

#define TP_SN_NONE (-1)     /* no schema (absent, or not an object) */
#define TP_SN_NULL_PROP (-2) /* a property whose schema is null: at the top, the
                              * tool's additionalProperties decides */

/* node flags */
enum { TP_SN_UNTYPED = 1, TP_SN_SCALAR = 2, TP_SN_CONTAINER = 4, TP_SN_ARRAY = 8 };

typedef struct {
    uint8_t flags;
    uint8_t mask;   /* TP_JT_* of its scalar types (string, integer, number, boolean, null) */
    int32_t extra;  /* additionalProperties */
    int32_t rest;   /* an item past prefixItems (additionalItems, items, else the last prefix) */
    uint32_t prefix_at, prefix_n; /* into tp_schema.prefix */
} tp_snode;

typedef struct tp_schema {
    tp_snode *nodes;
    uint32_t n;
    int32_t *prefix;
    uint32_t nprefix;
    tp_strset props;  /* (node id (4 bytes) ++ property name) */
    int32_t *prop_node; /* by props id */
    tp_strset tools;  /* tool names */
    int32_t *tool_root; /* by tools id: its parameters' node */
} tp_schema;

/* Parses a blob (format in tp_schema.c). Returns a new table, or NULL
 * (malformed blob or out of memory). */
tp_schema *tp_schema_load(const uint8_t *blob, size_t n);
void tp_schema_free(tp_schema *s);

/* The node of tool `name`'s parameters (TP_SN_NONE: none, or no table). */
int tp_schema_tool(const tp_schema *s, const uint8_t *name, size_t len);
/* A parameter's node at the top of a call: its property, else (absent or
 * null) the tool's additionalProperties. */
int tp_schema_param(const tp_schema *s, int root, const uint8_t *key, size_t len);
/* A child element's node: an `item` of an array by position, else the
 * property, else additionalProperties. */
int tp_schema_child(const tp_schema *s, int node, const uint8_t *tag, size_t len, size_t index);

/* A held value of a namespaced-XML row (fmt_nsxml_value.c): raw[0:n),
 * the text between a parameter's tags (tags written after `ns`), typed by
 * schema node `node` of `sc` (NULL: untyped) and appended to `out` as JSON
 * text: TP_TV_TEXT, TP_TV_HOST (nothing appended: a JSON text for the
 * host's json.loads), or -1 (out of memory). */
int tp_nsxml_value(const tp_schema *sc, int node, const char *ns, const uint8_t *raw, size_t n, tp_json *js,
                   uint32_t max_depth, tp_buf *out);

#endif
