/* The reference side of fuzz/json_diff.c: the old normalizer behind
 * functions that hide its struct. scripts/json-diff.sh compiles this file
 * and the old tp_json.c against the old commit's tp_json.h, their tp_json_*
 * symbols renamed old_* (its struct need not match today's). */
#include "tp_json.h"

static tp_json oj;

void oj_init(int mode, uint32_t max_depth) { tp_json_init(&oj, mode, max_depth); }
size_t oj_feed(const uint8_t *p, size_t n, tp_buf *out) { return tp_json_feed(&oj, p, n, out); }
int oj_end(tp_buf *out) { return tp_json_end(&oj, out); }
int oj_done(void) { return tp_json_done(&oj); }
int oj_failed(void) { return tp_json_failed(&oj); }
int oj_err(void) { return oj.err; }
size_t oj_err_at(void) { return oj.err_at; }
