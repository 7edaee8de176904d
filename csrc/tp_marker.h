/* Multi-marker matcher with partial-marker hold-back.
 *
 * An Aho-Corasick automaton compiled to a dense DFA. The scan state is one
 * node id; the bytes "held back" (a suffix of the input that could still
 * become a marker) are exactly the path of that node, so they never need to
 * be stored: they are re-derived from the marker table when they turn out
 * to be plain text. Every input byte is looked at once. */
#ifndef TP_MARKER_H
#define TP_MARKER_H

#include <stddef.h>
#include <stdint.h>

#define TP_MARKER_MAX_NODES 255
#define TP_MARKER_MAX_PATS 16

typedef struct {
    uint8_t nnodes;
    uint8_t npats;
    int16_t first_byte;                 /* >=0 when every marker starts with it */
    uint16_t whole;                     /* bit k: marker k holds first_byte only at its
                                         * start, so a whole occurrence of it at a
                                         * first_byte ends the earliest possible match */
    const char *pats[TP_MARKER_MAX_PATS];
    uint8_t patlen[TP_MARKER_MAX_PATS];
    uint64_t head8[TP_MARKER_MAX_PATS]; /* a marker's first and last eight bytes */
    uint64_t tail8[TP_MARKER_MAX_PATS]; /* (markers of 8 bytes or more) */
    uint8_t nwhole;                     /* the `whole` markers, shortest first */
    uint8_t whole_by_len[TP_MARKER_MAX_PATS];
    uint8_t disc_pos;                   /* a position inside every whole marker ... */
    uint16_t disc[256];                 /* ... bit w: whole_by_len[w] has byte c there */
    uint8_t depth[TP_MARKER_MAX_NODES];
    uint8_t path_pat[TP_MARKER_MAX_NODES]; /* path(node) = pats[path_pat][0:depth] */
    int8_t out[TP_MARKER_MAX_NODES];       /* pattern matched on entering node, or -1 */
    uint8_t next[TP_MARKER_MAX_NODES][256];
} tp_matcher;

/* Builds the automaton. Returns 0, or -1 if the markers do not fit. */
int tp_matcher_build(tp_matcher *m, const char *const *pats, int npats);

typedef struct {
    size_t consumed;  /* input bytes consumed (through the end of a match) */
    int match;        /* index of the marker matched, or -1 (input exhausted) */
    size_t held_text; /* bytes of the previously held path that are text */
    size_t text_len;  /* input bytes, from the start, that are text */
} tp_scan_res;

/* Scans p[0:n) starting from *node. Stops after the first complete marker.
 * Text = path(old node)[0:held_text] followed by p[0:text_len]. */
void tp_matcher_scan(const tp_matcher *m, uint8_t *node, const uint8_t *p,
                     size_t n, tp_scan_res *r);

/* The bytes held back in state `node` (a prefix of one of the markers). */
static inline const uint8_t *tp_matcher_path(const tp_matcher *m, uint8_t node,
                                             size_t *len)
{
    *len = m->depth[node];
    return (const uint8_t *)m->pats[m->path_pat[node]];
}

#endif
