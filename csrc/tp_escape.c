/* JSON string escaping in json.dumps(s, ensure_ascii=False) form, shared by
 * the formats that stream raw text as JSON string content. */
#include "tp_internal.h"

static const char HEX[] = "0123456789abcdef";

int tp_json_escape_append(tp_buf *b, const uint8_t *s, size_t n)
{
    size_t run = 0; /* start of the pending run of bytes copied verbatim */
    if (n == 0)
        return 0; /* s may be NULL (an empty buffer): no pointer arithmetic on it */
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        char e[6];
        size_t el = 0;
        size_t skip = 1;
        if (c == '"' || c == '\\') {
            e[0] = '\\';
            e[1] = (char)c;
            el = 2;
        } else if (c < 0x20) {
            e[0] = '\\';
            el = 2;
            switch (c) {
            case '\b': e[1] = 'b'; break;
            case '\f': e[1] = 'f'; break;
            case '\n': e[1] = 'n'; break;
            case '\r': e[1] = 'r'; break;
            case '\t': e[1] = 't'; break;
            default:
                e[1] = 'u';
                e[2] = '0';
                e[3] = '0';
                e[4] = HEX[c >> 4];
                e[5] = HEX[c & 0xF];
                el = 6;
            }
        } else if (c == 0xED && i + 2 < n && s[i + 1] >= 0xA0 && s[i + 1] <= 0xBF &&
                   (s[i + 2] & 0xC0) == 0x80) {
            /* a lone surrogate (surrogatepass input): keep it escaped */
            uint32_t cp = 0xD000u | ((uint32_t)(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3Fu);
            e[0] = '\\';
            e[1] = 'u';
            e[2] = HEX[(cp >> 12) & 0xF];
            e[3] = HEX[(cp >> 8) & 0xF];
            e[4] = HEX[(cp >> 4) & 0xF];
            e[5] = HEX[cp & 0xF];
            el = 6;
            skip = 3;
        } else {
            continue;
        }
        if (tp_buf_append(b, s + run, i - run) || tp_buf_append(b, e, el))
            return -1;
        i += skip - 1;
        run = i + 1;
    }
    return tp_buf_append(b, s + run, n - run);
}
