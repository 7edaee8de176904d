/* Differential test of the JSON normalizer (csrc/tp_json.c) against an
 * older version of itself (scripts/json-diff.sh builds both, the old one
 * with its symbols renamed old_*): random JSON-like inputs (valid and
 * broken tokens, escapes, controls, UTF-8, deep nesting), random output
 * limits and random chunkings. Every feed must consume the same bytes and
 * write the same output; the final state, error code and error offset must
 * agree. Exits 1 on the first difference (printed), else 0.
 *
 *   json_diff ITERATIONS SEED */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_errors.h"
#include "tp_json.h"

/* the old version (fuzz/json_diff_old.c) */
void oj_init(int mode, uint32_t max_depth);
size_t oj_feed(const uint8_t *p, size_t n, tp_buf *out);
int oj_end(tp_buf *out);
int oj_done(void);
int oj_failed(void);
int oj_err(void);
size_t oj_err_at(void);

static uint32_t rs;
static uint32_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 17;
    rs ^= rs << 5;
    return rs;
}

static const char *const TOK[] = {
    "{", "}", "[", "]", ",", ":", " ", "\n", "\t", "  ", "\"", "\"a\"", "\"key\"", "\"hello world\"",
    "\"long string value with spaces, punctuation; and more text\"", "\"\\n\"", "\"\\\"\"", "\"\\\\\"",
    "\"\\u00e9\"", "\"\\ud83d\\ude00\"", "\"\\ud800\"", "\"\\u12\"", "\"\\x\"", "\"\xc3\xa9\xe4\xb8\xad\"",
    "\"a\nb\"", "\"\x01\"", "\"\x1f\"", "\"\x7f\"", "\"\xed\xa0\x80\"", "\"/\"", "\"\\/\"",
    "0", "-0", "1", "-1", "12", "007", "1.5", "-3.25", "0.1", "1e5", "1E+5", "1e-7", "2.50", "-0.0", "0.0",
    "1e400", "-1e400", "1e-400", "123456789012345678", "1234567890123456789012345678901234567890",
    "0.30000000000000004", "9007199254740993", "1.7976931348623157e308", "5e-324", "1.", ".5", "1e", "-",
    "+1", "1.2.3", "1e5.5", "00", "true", "false", "null", "tru", "nul", "NaN", "Infinity", "-Infinity",
    "0.0001", "0.00001", "-0.00012", "0.000", "10.0", "1.10", "99.990", "123456789012345.6", "12345678901234.5",
    "0.123456789012345", "0.0123456789012345", "0.000123456789012345", "-7.25", "3.14159",
    "x", "\"\"", "{\"a\": 1}", "[1, 2, 3]", "{\"k\": [true, null, {\"x\": -1.5e10}]}",
};
#define NTOK (sizeof(TOK) / sizeof(TOK[0]))

/* a number token of about `len` bytes (sign, digits, fraction, exponent:
 * around the inline room of tp_json.h and the TP_JSON_NUM_MAX limit) */
static size_t gen_number(uint8_t *b, size_t len)
{
    size_t n = 0;
    if (rnd() % 2)
        b[n++] = '-';
    b[n++] = (uint8_t)('1' + rnd() % 9);
    size_t dot = rnd() % 3 ? 0 : 1 + rnd() % (len + 1), ex = rnd() % 4 ? 0 : 4;
    while (n + ex < len) {
        if (dot && n == dot) {
            b[n++] = '.';
            dot = 0;
        }
        b[n++] = (uint8_t)('0' + rnd() % 10);
    }
    if (ex) {
        b[n++] = rnd() % 2 ? 'e' : 'E';
        b[n++] = rnd() % 2 ? '-' : '+';
        b[n++] = (uint8_t)('0' + rnd() % 4);
        b[n++] = (uint8_t)('0' + rnd() % 10);
    }
    return n;
}

/* nesting past the inline levels (tp_json.h): arrays and objects mixed,
 * a scalar inside, then the closers (sometimes a wrong one) */
static size_t gen_deep(uint8_t *b, size_t cap)
{
    static uint8_t kind[1024];
    size_t d = 100 + rnd() % 500, n = 0;
    if (d * 7 + 16 > cap)
        d = (cap - 16) / 7;
    for (size_t k = 0; k < d; k++) {
        kind[k] = (uint8_t)(rnd() % 2);
        if (kind[k]) {
            memcpy(b + n, "{\"k\": ", 6);
            n += 6;
        } else {
            b[n++] = '[';
        }
    }
    b[n++] = '1';
    for (size_t k = d; k-- > 0;)
        b[n++] = rnd() % 400 == 0 ? (kind[k] ? ']' : '}') : (kind[k] ? '}' : ']');
    return n;
}

static size_t gen(uint8_t *b, size_t cap)
{
    size_t n = 0;
    if (rnd() % 20 == 0)
        return gen_deep(b, cap);
    if (rnd() % 20 == 0) { /* a long number, as the value or alone */
        size_t len = rnd() % 3 == 0 ? 4090 + rnd() % 12 : 50 + rnd() % 30;
        int wrap = rnd() % 2;
        if (wrap)
            b[n++] = '[';
        n += gen_number(b + n, len);
        if (wrap)
            b[n++] = ']';
        return n;
    }
    int k = (int)(rnd() % 40) + 1;
    /* mostly well-formed objects, sometimes token soup */
    if (rnd() % 3) {
        n += (size_t)snprintf((char *)b + n, cap - n, "{");
        for (int i = 0; i < k && n + 200 < cap; i++) {
            if (i)
                n += (size_t)snprintf((char *)b + n, cap - n, "%s", rnd() % 4 ? ", " : ",\n ");
            n += (size_t)snprintf((char *)b + n, cap - n, "%s%s%s", TOK[11 + rnd() % 14],
                                  rnd() % 5 ? ": " : " :", TOK[rnd() % NTOK]);
        }
        if (rnd() % 8)
            n += (size_t)snprintf((char *)b + n, cap - n, "}");
    } else {
        for (int i = 0; i < k && n + 100 < cap; i++)
            n += (size_t)snprintf((char *)b + n, cap - n, "%s", TOK[rnd() % NTOK]);
    }
    if (rnd() % 10 == 0) { /* deep nesting */
        int d = (int)(rnd() % 40);
        for (int i = 0; i < d && n + 2 < cap; i++)
            b[n++] = '[';
    }
    return n;
}

typedef size_t (*feed_fn)(tp_json *, const uint8_t *, size_t, tp_buf *);

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 100000;
    rs = argc > 2 ? (uint32_t)atol(argv[2]) : 20261201u;
    if (!rs)
        rs = 1;
    static uint8_t in[8192];
    static tp_json jb;
    long fails = 0, oks = 0, errs = 0;
    for (long it = 0; it < iters; it++) {
        size_t n = gen(in, sizeof in);
        int mode = rnd() % 8 == 0 ? TPJ_MODE_RAW_STRING : rnd() % 4 == 0 ? TPJ_STRICT_CTRL : 0;
        uint32_t depth = rnd() % 5 == 0 ? 1 + rnd() % 8 : rnd() % 4 == 0 ? 100 + rnd() % 4000 : 512;
        size_t limit = rnd() % 3 == 0 ? 1 + rnd() % 300 : 0;
        int use_out = rnd() % 16 != 0;
        size_t maxc = rnd() % 4 == 0 ? 1 : 1 + rnd() % 64;
        tp_buf oa, ob;
        tp_buf_init(&oa, limit);
        tp_buf_init(&ob, limit);
        oj_init(mode, depth);
        tp_json_init(&jb, mode, depth);
        size_t i = 0;
        int bad = 0;
        while (i < n && !bad) {
            size_t c = 1 + rnd() % maxc;
            if (c > n - i)
                c = n - i;
            size_t ka = oj_feed(in + i, c, use_out ? &oa : NULL);
            size_t kb = tp_json_feed(&jb, in + i, c, use_out ? &ob : NULL);
            /* one intended difference: a string over its limit is reported
             * at the start of the character that crosses it (the old
             * version: at the byte), when that character is in this feed */
            int moved = tp_json_failed(&jb) && oj_failed() && oj_err() == TP_ERR_BUFFER_LIMIT &&
                        jb.err == oj_err() && jb.err_at < oj_err_at() && oj_err_at() < c && in[i + jb.err_at] >= 0xC0 &&
                        ka - kb == oj_err_at() - jb.err_at;
            for (size_t q = jb.err_at + 1; moved && q <= oj_err_at(); q++)
                moved = (in[i + q] & 0xC0) == 0x80;
            if ((ka != kb && !moved) || oa.len != ob.len || (oa.len && memcmp(oa.data, ob.data, oa.len)) ||
                oj_failed() != tp_json_failed(&jb) || oj_done() != tp_json_done(&jb) ||
                (tp_json_failed(&jb) && (oj_err() != jb.err || (oj_err_at() != jb.err_at && !moved))))
                bad = 1;
            if (ka < c || tp_json_failed(&jb) || tp_json_done(&jb))
                break;
            i += c;
        }
        if (!bad) {
            int ea = oj_end(use_out ? &oa : NULL), eb = tp_json_end(&jb, use_out ? &ob : NULL);
            if (ea != eb || oa.len != ob.len || (oa.len && memcmp(oa.data, ob.data, oa.len)))
                bad = 2;
        }
        if (bad) {
            fprintf(stderr, "DIFF (%d) it=%ld mode=%d depth=%u limit=%zu out=%d maxc=%zu input=%.*s\n"
                    "  old: len %zu err %d@%zu failed %d done %d: %.*s\n"
                    "  new: len %zu err %d@%zu failed %d done %d: %.*s\n",
                    bad, it, mode, depth, limit, use_out, maxc, (int)n, in, oa.len, oj_err(), oj_err_at(),
                    oj_failed(), oj_done(), (int)oa.len, oa.data ? (char *)oa.data : "",
                    ob.len, jb.err, jb.err_at, tp_json_failed(&jb), tp_json_done(&jb), (int)ob.len,
                    ob.data ? (char *)ob.data : "");
            if (++fails >= 5) {
                tp_buf_free(&oa);
                tp_buf_free(&ob);
                return 1;
            }
        }
        oks += tp_json_done(&jb);
        if (it % 2)
            tp_json_free(&jb); /* (else tp_json_init frees it) */
        errs += tp_json_failed(&jb);
        tp_buf_free(&oa);
        tp_buf_free(&ob);
    }
    printf("json_diff: %ld inputs (%ld complete, %ld errors), %s\n", iters, oks, errs,
           fails ? "DIFFERENCES" : "no difference");
    return fails ? 1 : 0;
}
