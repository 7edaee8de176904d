/* Error codes shared by every module. Each error event carries one of these
 * and the byte offset (in the whole stream) where it was detected. */
#ifndef TP_ERRORS_H
#define TP_ERRORS_H

typedef enum {
    TP_OK = 0,
    TP_ERR_JSON_SYNTAX = 1,    /* malformed JSON inside a call */
    TP_ERR_JSON_DEPTH = 2,     /* nesting deeper than the limit */
    TP_ERR_JSON_NUMBER = 3,    /* number token longer than the limit */
    TP_ERR_BUFFER_LIMIT = 4,   /* a bounded buffer would exceed its limit */
    TP_ERR_UNKNOWN_TOOL = 5,   /* call names a tool that was not declared */
    TP_ERR_MISSING_NAME = 6,   /* call object has no usable "name" */
    TP_ERR_BAD_NAME = 7,       /* "name" is not a non-empty string / too long */
    TP_ERR_UNTERMINATED = 8,   /* end of stream inside a call */
    TP_ERR_TRAILING = 9,       /* unexpected content after the call object */
    TP_ERR_CALL_LIMIT = 10,    /* more calls than the limit */
    TP_ERR_BAD_MARKUP = 11,    /* markup that does not fit the format */
    TP_ERR_NO_MEMORY = 12,     /* allocation failed */
    TP_ERR__COUNT
} tp_error;

const char *tp_error_name(int code);

#endif
