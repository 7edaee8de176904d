#include "tp_marker.h"

#include <string.h>

#include "tp_swar.h"

int tp_matcher_build(tp_matcher *m, const char *const *pats, int npats)
{
    /* trie children as a dense table first; fail links turn it into a DFA */
    uint8_t fail[TP_MARKER_MAX_NODES];
    uint8_t queue[TP_MARKER_MAX_NODES];
    memset(m, 0, sizeof(*m));
    if (npats <= 0 || npats > TP_MARKER_MAX_PATS)
        return -1;
    m->nnodes = 1;
    m->out[0] = -1;
    m->first_byte = (int16_t)(uint8_t)pats[0][0];
    for (int k = 0; k < npats; k++) {
        size_t len = strlen(pats[k]);
        if (len == 0 || len > 200)
            return -1;
        m->pats[k] = pats[k];
        m->patlen[k] = (uint8_t)len;
        if (len >= 8) {
            m->head8[k] = tp_load8((const uint8_t *)pats[k]);
            m->tail8[k] = tp_load8((const uint8_t *)pats[k] + len - 8);
        }
        if ((uint8_t)pats[k][0] != (uint8_t)m->first_byte)
            m->first_byte = -1;
        uint8_t node = 0;
        for (size_t i = 0; i < len; i++) {
            uint8_t c = (uint8_t)pats[k][i];
            if (!m->next[node][c]) {
                if (m->nnodes >= TP_MARKER_MAX_NODES)
                    return -1;
                uint8_t nn = m->nnodes++;
                m->depth[nn] = (uint8_t)(i + 1);
                m->path_pat[nn] = (uint8_t)k;
                m->out[nn] = -1;
                m->next[node][c] = nn;
            }
            node = m->next[node][c];
        }
        m->out[node] = (int8_t)k;
    }
    m->npats = (uint8_t)npats;
    if (m->first_byte >= 0)
        for (int k = 0; k < npats; k++)
            if (!memchr(pats[k] + 1, m->first_byte, m->patlen[k] - 1u))
                m->whole |= (uint16_t)(1u << k);
    /* the whole markers by length, shortest first (a stable order: of two
     * of one length the first declared), as the scan prefers them */
    for (int len = 1; len <= 200; len++)
        for (int k = 0; k < npats; k++)
            if (((m->whole >> k) & 1) && m->patlen[k] == len)
                m->whole_by_len[m->nwhole++] = (uint8_t)k;
    /* the position (inside every whole marker) whose byte leaves the
     * fewest candidates: the scan tries only the markers with the byte
     * found there (bits in whole_by_len's order, so the shortest first) */
    if (m->nwhole) {
        size_t minlen = 255, best = SIZE_MAX;
        for (int w = 0; w < m->nwhole; w++)
            if (m->patlen[m->whole_by_len[w]] < minlen)
                minlen = m->patlen[m->whole_by_len[w]];
        for (size_t d = 0; d < minlen; d++) {
            uint8_t cnt[256] = {0};
            size_t worst = 0, sq = 0;
            for (int w = 0; w < m->nwhole; w++)
                cnt[(uint8_t)m->pats[m->whole_by_len[w]][d]]++;
            for (int c = 0; c < 256; c++) {
                worst = cnt[c] > worst ? cnt[c] : worst;
                sq += (size_t)cnt[c] * cnt[c];
            }
            if (worst * 4096 + sq < best) {
                best = worst * 4096 + sq;
                m->disc_pos = (uint8_t)d;
            }
        }
        for (int w = 0; w < m->nwhole; w++)
            m->disc[(uint8_t)m->pats[m->whole_by_len[w]][m->disc_pos]] |= (uint16_t)(1u << w);
    }
    /* BFS: fail links and dense transitions (missing edge -> fail's edge) */
    int qh = 0, qt = 0;
    fail[0] = 0;
    for (int c = 0; c < 256; c++) {
        uint8_t ch = m->next[0][c];
        if (ch) {
            fail[ch] = 0;
            queue[qt++] = ch;
        }
    }
    while (qh < qt) {
        uint8_t u = queue[qh++];
        if (m->out[u] < 0)
            m->out[u] = m->out[fail[u]];
        /* u's row holds only its trie edges until now: fail[u] is shallower,
         * so its row is already a complete DFA row */
        for (int c = 0; c < 256; c++) {
            uint8_t v = m->next[u][c];
            if (v) {
                fail[v] = m->next[fail[u]][c];
                queue[qt++] = v;
            } else {
                m->next[u][c] = m->next[fail[u]][c];
            }
        }
    }
    return 0;
}

/* Is marker k at s (its length is known to fit)? Markers of a family share
 * their first bytes (`<｜DSML｜`, `<|tool_call`): their first and last
 * eight bytes are compared as two words first, then the middle a word at a
 * time (no call: the marker is usually there when those two match) */
static inline int whole_at(const tp_matcher *m, int k, const uint8_t *s)
{
    size_t len = m->patlen[k];
    if (len < 8)
        return memcmp(s, m->pats[k], len) == 0;
    if (tp_load8(s) != m->head8[k] || tp_load8(s + len - 8) != m->tail8[k])
        return 0;
    if (len <= 16)
        return 1;
    const uint8_t *q = (const uint8_t *)m->pats[k];
    for (size_t o = 8; o + 8 < len; o += 8)
        if (tp_load8(s + o) != tp_load8(q + o))
            return 0;
    return 1;
}

void tp_matcher_scan(const tp_matcher *m, uint8_t *nodep, const uint8_t *p,
                     size_t n, tp_scan_res *r)
{
    uint8_t node = *nodep;
    size_t held = m->depth[node];
    size_t i = 0;
    for (;;) {
        if (node == 0 && m->first_byte >= 0) {
            const uint8_t *q = i < n ? memchr(p + i, m->first_byte, n - i) : NULL;
            if (!q) {
                i = n;
                break;
            }
            i = (size_t)(q - p);
            /* a whole marker here: matched in one step. Only markers without
             * another first_byte inside qualify: then no match can end
             * before this one's end but a shorter marker at the same
             * start, which is preferred, as the automaton would report it */
            int best = -1;
            /* (no whole marker is as short as disc_pos) */
            unsigned cand = n - i > m->disc_pos ? m->disc[p[i + m->disc_pos]] : 0;
            while (cand) {
                int k = m->whole_by_len[__builtin_ctz(cand)];
                cand &= cand - 1;
                if (m->patlen[k] > n - i)
                    break; /* (the rest are longer) */
                if (whole_at(m, k, p + i)) {
                    best = k; /* the shortest */
                    break;
                }
            }
            if (best >= 0) {
                i += m->patlen[best];
                size_t vlen = held + i, start = vlen - m->patlen[best];
                r->consumed = i;
                r->match = best;
                r->held_text = start < held ? start : held;
                r->text_len = start > held ? start - held : 0;
                *nodep = 0;
                return;
            }
        }
        if (i >= n)
            break;
        node = m->next[node][p[i++]];
        if (m->out[node] >= 0) {
            int k = m->out[node];
            /* virtual stream V = held ++ p[0:i]; match is its last patlen bytes */
            size_t vlen = held + i;
            size_t start = vlen - m->patlen[k];
            r->consumed = i;
            r->match = k;
            r->held_text = start < held ? start : held;
            r->text_len = start > held ? start - held : 0;
            *nodep = 0;
            return;
        }
    }
    size_t vlen = held + n;
    size_t keep = m->depth[node];
    size_t textv = vlen - keep;
    r->consumed = n;
    r->match = -1;
    r->held_text = textv < held ? textv : held;
    r->text_len = textv > held ? textv - held : 0;
    *nodep = node;
}
