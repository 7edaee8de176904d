# Declarations of the C core (csrc/tp_parser.h) for Cython.
from libc.stdint cimport uint8_t, int32_t, uint32_t, uint64_t

cdef extern from "tp_buf.h" nogil:
    ctypedef struct tp_buf:
        uint8_t *data
        size_t len
    void tp_buf_init(tp_buf *b, size_t limit)
    void tp_buf_free(tp_buf *b)

cdef extern from "tp_json.h" nogil:
    ctypedef struct tp_json:
        uint8_t state
    void tp_json_init(tp_json *j, int mode, uint32_t max_depth)
    size_t tp_json_feed(tp_json *j, const uint8_t *p, size_t n, tp_buf *out)
    int tp_json_end(tp_json *j, tp_buf *out)
    int tp_json_done(const tp_json *j)
    int tp_json_failed(const tp_json *j)
    void tp_json_free(tp_json *j)

cdef extern from "tp_schema.h" nogil:
    ctypedef struct tp_schema:
        uint32_t n
    tp_schema *tp_schema_load(const uint8_t *blob, size_t n)
    void tp_schema_free(tp_schema *s)
    int tp_nsxml_value(const tp_schema *sc, int node, const char *ns, const uint8_t *raw, size_t n, tp_json *js,
                       uint32_t max_depth, tp_buf *out)

cdef extern from "tp_types.h" nogil:
    ctypedef struct tp_tools:
        uint32_t tool_cap
        tp_schema *schema
    ctypedef struct tp_type_rules:
        const char *family

    enum:
        TP_TV_TEXT
        TP_TV_HOST

    const tp_type_rules *tp_rules_named(const char *family)
    int tp_type_value(const tp_type_rules *r, int kind, unsigned mask, const uint8_t *raw, size_t n,
                      tp_json *js, uint32_t max_depth, tp_buf *out)

    enum:
        TP_KIND_UNTYPED
        TP_KIND_STRING
        TP_KIND_OTHER
        TP_KIND_INTEGER
        TP_KIND_NUMBER
        TP_KIND_BOOLEAN
        TP_KIND_NULL
        TP_KIND_OBJECT
        TP_KIND_ARRAY
        TP_KIND_UNION
        TP_KIND_HOST
        TP_KIND__COUNT

    void tp_tools_init(tp_tools *t)
    void tp_tools_free(tp_tools *t)
    int tp_tools_add(tp_tools *t, const uint8_t *name, size_t len)
    int tp_tools_set_default(tp_tools *t, int id, int kind)
    int tp_tools_add_param(tp_tools *t, int id, const uint8_t *name, size_t len, int kind, unsigned mask)

cdef extern from "tp_parser.h" nogil:
    ctypedef enum tp_event_type:
        TP_EV_TEXT
        TP_EV_CALL_START
        TP_EV_ARGS
        TP_EV_CALL_END
        TP_EV_ERROR
        TP_EV_RAW_VALUE
        TP_EV_REASONING
        TP_EV_DROPPED
        TP_EV_MARKUP

    ctypedef struct tp_event:
        uint8_t type
        uint8_t code
        int32_t call
        uint64_t offset
        size_t start
        size_t len

    ctypedef struct tp_limits:
        size_t max_buffer
        uint32_t max_depth
        uint32_t max_calls
        uint32_t max_name

    ctypedef struct tp_format:
        const char *name

    ctypedef struct tp_parser:
        uint64_t base

    enum:
        TP_FLAG_FORWARD_UNKNOWN
        TP_FLAG_ACCEPT_ANY
        TP_JSON_DEPTH_CAP
        TP_DEFAULT_MAX_BUFFER
        TP_DEFAULT_MAX_DEPTH
        TP_DEFAULT_MAX_CALLS
        TP_DEFAULT_MAX_NAME
        TP_PARAM_UNKNOWN
        TP_PARAM_STRING
        TP_PARAM_OTHER

    int tp_global_init()
    const tp_format *tp_format_find(const char *name)
    const char *const *tp_format_names()
    const char *tp_error_name(int code)
    void tp_limits_default(tp_limits *lim)
    int tp_parser_init(tp_parser *p, const tp_format *fmt, const tp_limits *lim, uint32_t flags)
    void tp_parser_free(tp_parser *p)
    int tp_parser_reset(tp_parser *p, const tp_format *fmt, const tp_limits *lim, uint32_t flags)
    int tp_parser_add_tool(tp_parser *p, const uint8_t *name, size_t len)
    int tp_parser_add_param(tp_parser *p, int tool_id, const uint8_t *name, size_t len, int kind)
    int tp_parser_feed(tp_parser *p, const uint8_t *data, size_t n)
    int tp_parser_finish(tp_parser *p)
    const tp_event *tp_parser_events(const tp_parser *p, size_t *n)
    const uint8_t *tp_parser_output(const tp_parser *p)
    size_t tp_parser_output_len(const tp_parser *p)
    void tp_parser_use_tools(tp_parser *p, const tp_tools *t)
