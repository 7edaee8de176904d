/* Helpers shared by the format modules (not part of the public API). */
#ifndef TP_INTERNAL_H
#define TP_INTERNAL_H

#include "tp_marker.h"
#include "tp_parser.h"

/* --- event emission (tp_events.c) --- */
void tp_ev_text(tp_parser *p, const uint8_t *s, size_t n);
/* Reasoning text (merged with an adjacent reasoning span). */
void tp_ev_reasoning(tp_parser *p, const uint8_t *s, size_t n);
/* Markup of the message (TP_EV_MARKUP): s[0:n) are the input's bytes from
 * stream offset `off`; merged into the previous markup event when it ends
 * there. */
void tp_ev_markup(tp_parser *p, uint64_t off, const uint8_t *s, size_t n);
/* Registers out[start:] (already written by a scanner) as arguments. */
void tp_ev_args_from(tp_parser *p, size_t start);
void tp_ev_args(tp_parser *p, const uint8_t *s, size_t n);
/* Argument bytes: s[0:n) escaped as JSON string content (tp_json_escape). */
void tp_ev_args_escaped(tp_parser *p, const uint8_t *s, size_t n);
/* An unmerged event whose span is out[start:] (may be empty). */
void tp_ev_mark(tp_parser *p, int type, int32_t call, size_t start);
void tp_ev_error(tp_parser *p, int code, uint64_t offset, int32_t call,
                 const uint8_t *detail, size_t dlen);

/* --- text layer: whitespace next to calls is template formatting --- */
void tp_text(tp_parser *p, const uint8_t *s, size_t n);
/* text from a buffer whose first byte was at stream offset `at` (UINT64_MAX: unknown) */
void tp_text_at(tp_parser *p, const uint8_t *s, size_t n, uint64_t at);
void tp_text_call_starts(tp_parser *p); /* drop held whitespace */
void tp_text_flush_ws(tp_parser *p);    /* held whitespace is text (markup that is no call follows) */
/* a marker of mlen bytes ending at chunk index `at` made no call:
 * bad_markup, its dropped text the marker */
void tp_stray_markup(tp_parser *p, size_t mlen, size_t at);
/* the format's marker `m` (mlen bytes) from stream byte `off` is markup
 * of no call that no call's events stand next to (a block's end tag after
 * prose inside the block): a TP_EV_MARKUP event carries it. Whitespace
 * held before it stays prose (or formatting after a call). Inside an
 * error's dropped text, it is that text's. */
void tp_block_markup(tp_parser *p, const char *m, size_t mlen, uint64_t off);
void tp_text_finish(tp_parser *p);

/* Runs the matcher over p[0:n) in text mode, emitting text through
 * tp_text. Returns the bytes consumed; *match is the marker index or -1. */
size_t tp_scan_text(tp_parser *p, const tp_matcher *m, const uint8_t *s, size_t n, int *match);
/* Same, but whatever is not a marker is dropped; *junk reports whether
 * any non-whitespace byte was dropped (its offset from s in *junk_at,
 * "negative" (wrapped) when it was held back from the previous chunk). */
size_t tp_scan_skip(tp_parser *p, const tp_matcher *m, const uint8_t *s, size_t n, int *match,
                    int *junk, size_t *junk_at);
/* Between calls inside a section (s must point into the chunk being fed):
 * scans s[0:n) with m; blanks after the section's opener or a call are
 * template formatting, anything else is prose the model wrote there: text
 * (*prose is set once it began: blanks are then text too). Prose while the
 * opener's raw record is on (no call yet) shows the opener made no call
 * (tp_raw_made_no_call). Markers are the caller's. */
size_t tp_scan_block(tp_parser *p, const tp_matcher *m, const uint8_t *s, size_t n, int *match, uint8_t *prose);
/* Releases the bytes the matcher holds back as text (end of stream). */
void tp_release_held(tp_parser *p, const tp_matcher *m);
/* Moves a partial marker held by `from` over to `to` (whose markers must
 * include every marker of `from` that the held bytes could begin, and none
 * inside them), as if `to` had scanned those bytes. For a switch of
 * matchers in the middle of a scan (e.g. to skip a call). */
void tp_matcher_switch(tp_parser *p, const tp_matcher *from, const tp_matcher *to);

/* --- call layer (tp_calls.c) --- */
/* Validates the name and reserves a call. Returns 1 if reserved (the call is
 * held: nothing is emitted yet), 0 if it is to be discarded (an error was
 * reported). */
int tp_call_open(tp_parser *p, const uint8_t *name, size_t len, uint64_t offset);
/* Announces the held call: gives it the next index and emits its CallStart.
 * Formats call it at the first byte or tag that commits the call's body to
 * a well-formed start (the `{` of JSON arguments, a complete parameter
 * opening tag, the call's own closing tag when it has no arguments), before
 * writing any argument byte. Idempotent: a no-op when no call is held.
 * tp_call_json_args and tp_call_close announce by themselves. */
void tp_call_announce(tp_parser *p);
/* Sets the id the model wrote for the held call (formats with ids: kimi_k2);
 * its CallStart then carries it after the name (event offset = name length).
 * Returns 0, or -1 when the id is longer than max_name. */
int tp_call_set_id(tp_parser *p, const uint8_t *id, size_t n);
/* Announces a still-held call, then ends the open call. */
void tp_call_close(tp_parser *p);
/* Reports an error for the current call (if any; with no index if it was not
 * announced) and forgets it. */
void tp_call_fail(tp_parser *p, int code, uint64_t offset);
/* Streams the open call's argument JSON through p->js into argument events,
 * announcing a held call at the value's first output byte (a value that is
 * rejected before that leaves the call unannounced). *used: bytes consumed. Returns 1 when the value is complete, 0 when it
 * needs more input, -1 when it is malformed (p->js.err; its offset is the
 * stream offset of s plus p->js.err_at): the caller reports and skips. */
int tp_call_json_args(tp_parser *p, const uint8_t *s, size_t n, size_t *used);
/* End of stream inside a call: drops what it held, reports "unterminated". */
void tp_call_unterminated(tp_parser *p);

/* Raw text of a call before its announcement (see struct tp_parser).
 * tp_raw_begin: a call's first marker (its text `marker`) ended at index
 * `at` of the chunk being fed; recording starts with the whitespace held
 * before it. tp_call_announce, tp_call_open's refusals and tp_call_fail end
 * it; tp_raw_end ends it where a format finds the marker started no call.
 * tp_call_release_raw: at the end of the stream, a call that was never
 * announced is text; returns 1 if it released it, 0 if there was none (or
 * it was over the limit). */
void tp_raw_begin(tp_parser *p, const char *marker, size_t mlen, size_t at);
void tp_raw_end(tp_parser *p);
void tp_raw_chunk_end(tp_parser *p, const uint8_t *data, size_t n);
/* At a checkpoint (the end of data[0:n), tp_parser.c): a call not
 * announced whose raw record outgrew its bound is refused there
 * (buffer_limit, its text the dropped text, which runs on while the format
 * reads the call: its argument events are dropped) */
void tp_raw_checkpoint(tp_parser *p, const uint8_t *data, size_t n);
/* Feeds are read in pieces that checkpoints end: tp_piece gives the
 * length of the next piece of s[0:n) (at stream offset `at`); after the
 * format read a piece s[0:n) ending at offset `end`, before its chunk end
 * (tp_raw_chunk_end), tp_piece_end runs the checkpoint there, if any. */
size_t tp_piece(const tp_parser *p, uint64_t at, const uint8_t *s, size_t n);
void tp_piece_end(tp_parser *p, uint64_t end, const uint8_t *s, size_t n);
/* a block opener's raw record made no call: prose begins at stream offset
 * `at`: bad_markup, the record up to `at` its dropped text (the whitespace
 * held before the opener: text, unless the record up to `at` is over
 * max_buffer) */
void tp_raw_made_no_call(tp_parser *p, uint64_t at);

int tp_call_release_raw(tp_parser *p);

/* Dropped text (tp_dropped.c): each error starts recording the bytes it
 * drops (a refused call's raw record included); the format's next read of
 * text (tp_scan_text, tp_text on chunk bytes) or of a call's first marker
 * (tp_raw_begin), or the end of the stream, ends it with a TP_EV_DROPPED
 * event. tp_drop_error: before the error event is pushed; tp_drop_started:
 * after it. */
void tp_drop_error(tp_parser *p, uint64_t offset);
void tp_drop_started(tp_parser *p, int32_t call, uint64_t offset);
/* Ends the record at index `at` of the chunk less `back` bytes (a marker
 * and the whitespace before it); tp_drop_end_at: at s, when s points into
 * the chunk being fed. */
void tp_drop_end(tp_parser *p, size_t at, size_t back);
void tp_drop_end_at(tp_parser *p, const uint8_t *s, size_t back);
/* Ends the record at stream offset `off` (in the chunk being fed): where a
 * format's skip ended without a marker or text after it. */
void tp_drop_end_off(tp_parser *p, uint64_t off);
/* Text s[0:n) is emitted while a drop records: it ends there. */
void tp_drop_text(tp_parser *p, const uint8_t *s, size_t n);
void tp_drop_chunk_end(tp_parser *p, const uint8_t *data, size_t n);
void tp_drop_finish(tp_parser *p);
/* For formats without a raw record (tp_raw_begin): the call about to be
 * opened began at stream offset `off` (its error's record starts there if
 * it is refused before its announcement). */
/* At the end of the stream: s[0:n) are the stream's last bytes, held by
 * a format (a partial marker) and markup of no call: an error (code) whose
 * dropped text they are (a drop that ran to the end already holds them). */
void tp_drop_held_at_end(tp_parser *p, int code, const uint8_t *s, size_t n);
/* At the end of the stream: a whitespace run s[0:n) held from stream
 * offset `at`, formatting after markup an error dropped (no call came
 * since), joins that error's dropped text (else it would be in nothing). */
void tp_drop_trailing_ws(tp_parser *p, const uint8_t *s, size_t n, uint64_t at);
void tp_drop_mark(tp_parser *p, uint64_t off);
/* At the end of the stream: the bytes from the mark (tp_drop_mark) to the
 * end are a call cut off before it could be opened (its name): an error
 * (code) at the end whose dropped text they are, from the tail ring.
 * Returns 0 (nothing emitted) without a mark, while a drop runs, or when
 * the ring no longer holds them. */
int tp_drop_mark_at_end(tp_parser *p, int code);
/* The chunk's bytes data[0:n) (from stream offset p->base) go into the
 * tail ring: a copy, inline, when they fit before the ring wraps; the
 * rest (a wrap, a long chunk) is tp_drop_keep_tail_slow's. */
void tp_drop_keep_tail_slow(tp_parser *p, const uint8_t *data, size_t n);
static inline void tp_drop_keep_tail(tp_parser *p, const uint8_t *data, size_t n)
{
    size_t at = (size_t)(p->base % TP_DROP_TAIL);
    /* (n's bound hidden: gcc inlines a copy it knows is at most the ring's
     * size as `rep movsq`, whose start-up costs more than libc's copy of
     * a short chunk, the usual one) */
    __asm__("" : "+r"(n));
    if (n <= TP_DROP_TAIL - at)
        memcpy(p->tail + at, data, n);
    else
        tp_drop_keep_tail_slow(p, data, n);
}

/* An error (no index) whose dropped text is a[0:an) + b[0:bn) from stream
 * offset `off`: bytes a format holds, not recorded from the chunk. */
void tp_ev_error_bytes(tp_parser *p, int code, uint64_t off, const uint8_t *detail, size_t dlen,
                       const uint8_t *a, size_t an, const uint8_t *b, size_t bn);
void tp_drop_bytes(tp_parser *p, uint64_t off, const uint8_t *a, size_t an, const uint8_t *b, size_t bn);

/* Prose inside a call, between its tags (tp_junk.c): bytes s[0:n) from
 * stream offset `off` read there; a tag found there ends them (`after`:
 * the chunk position after the tag, tlen its length); tp_call_announce
 * reports what came before the announcement. */
void tp_junk_bytes(tp_parser *p, const uint8_t *s, size_t n, uint64_t off);
/* ... the first non-blank byte of them is at stream offset `off` */
void tp_junk_at(tp_parser *p, uint64_t off);
void tp_junk_tag(tp_parser *p, const uint8_t *after, size_t tlen);
void tp_junk_announce(tp_parser *p);
void tp_junk_flush(tp_parser *p);
/* a call's first marker (tp_raw_begin): what came before is over */
void tp_junk_begin(tp_parser *p);

/* The parser's tools: its own (tp_parser_add_tool) or a shared compiled list. */
const tp_tools *tp_parser_tools(const tp_parser *p);

/* --- typed values (tp_value.c) --- */
/* A complete, non-streamed value raw[0:n) of parameter `key` of the open
 * call (tool p->tool_id): writes its JSON text into the arguments (by the
 * parameter's kind and the format's p->fmt->types rules), or hands it to
 * the host as a TP_EV_RAW_VALUE event. The caller writes the '"key": '
 * before it. A TP_PARAM_STRING value is normally streamed instead; given
 * here it becomes its raw text as a JSON string. */
void tp_value_complete(tp_parser *p, const uint8_t *key, size_t klen, const uint8_t *raw, size_t n);
/* A value read as json.loads reads it, else its raw text (kimi_k3's
 * non-string values, muse's values): raw[0:n)'s canonical JSON text (under
 * the format's rules, TP_KIND_OTHER), or, when it is not JSON (or is
 * NaN/Infinity, or needs Python to read, e.g. a repeated key), raw as a
 * JSON string. The caller writes the '"key": ' before it. */
void tp_value_json_or_text(tp_parser *p, const uint8_t *raw, size_t n);

/* --- the rest of a malformed JSON value (tp_resync.c) --- */
/* Starts skipping after scanner `j` failed (NULL: it did not run), inside
 * `outer` brackets of the format's own; tp_resync then consumes bytes until
 * p->resync_depth is 0 (returns the bytes consumed). */
void tp_resync_start(tp_parser *p, const tp_json *j, uint32_t outer);
size_t tp_resync(tp_parser *p, const uint8_t *s, size_t n, int end_drop);

static inline int tp_is_ws(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* --- format registry --- */
extern const tp_format tp_fmt_qwen25;
extern const tp_format tp_fmt_hermes;
int tp_fmt_jsontag_init(void);
extern const tp_format tp_fmt_glm45;
extern const tp_format tp_fmt_glm47;
int tp_fmt_glm_init(void);
extern const tp_format tp_fmt_deepseekv3;
extern const tp_format tp_fmt_deepseekv31;
int tp_fmt_deepseek_init(void);
extern const tp_format tp_fmt_deepseekv32;
extern const tp_format tp_fmt_deepseekv4;
extern const tp_format tp_fmt_deepseekv41;
extern const tp_format tp_fmt_gigachat35;
int tp_fmt_dsml_init(void);
extern const tp_format tp_fmt_kimi_k2;
int tp_fmt_kimi_init(void);
extern const tp_format tp_fmt_qwen3_coder;
extern const tp_format tp_fmt_minimax_m2;
extern const tp_format tp_fmt_mimo;
extern const tp_format tp_fmt_dots;
extern const tp_format tp_fmt_minicpm5;
extern const tp_format tp_fmt_trinity;
int tp_fmt_trinity_init(void);
int tp_fmt_xmlparam_init(void);
extern const tp_format tp_fmt_llama3; /* fmt_jsontag.c */
extern const tp_format tp_fmt_mistral; /* fmt_deepseek.c */
extern const tp_format tp_fmt_pythonic;
int tp_fmt_pythonic_init(void);
extern const tp_format tp_fmt_gpt_oss;
int tp_fmt_harmony_init(void);
/* more rows of the GLM engine (fmt_glm.c) */
extern const tp_format tp_fmt_ling3;
extern const tp_format tp_fmt_iquest_q1;
extern const tp_format tp_fmt_poolside_v1;
extern const tp_format tp_fmt_spark25;
extern const tp_format tp_fmt_hunyuan;
extern const tp_format tp_fmt_hunyuan_os;
extern const tp_format tp_fmt_kimi_k3;
extern const tp_format tp_fmt_minimax_m3; /* fmt_nsxml.c */
int tp_fmt_nsxml_init(void);
extern const tp_format tp_fmt_jsonarray; /* fmt_jsontag.c */
extern const tp_format tp_fmt_cohere_command4; /* fmt_jsontag.c */
extern const tp_format tp_fmt_apertus2509; /* fmt_jsontag.c */
/* fmt_jsontag.c: Mistral's pre-v11 array form, taken over from fmt_deepseek.c's mistral row */
void tp_jsontag_mistral_array_enter(tp_parser *p, uint64_t call_off);
void tp_jsontag_mistral_array_feed(tp_parser *p, const uint8_t *s, size_t n);
void tp_jsontag_mistral_array_finish(tp_parser *p);

extern const tp_format tp_fmt_step3; /* fmt_xmlparam.c */

/* more rows of the JSON-object engine (fmt_jsontag.c) */
extern const tp_format tp_fmt_interns1;
extern const tp_format tp_fmt_gigachat3;

extern const tp_format tp_fmt_gemma4; /* fmt_kvcall.c */
extern const tp_format tp_fmt_inkling; /* fmt_jsontag.c */
int tp_fmt_kvcall_init(void);

extern const tp_format tp_fmt_lfm2; /* fmt_pythonic.c */
/* fmt_jsontag.c: LFM2's JSON form, handed over by fmt_pythonic.c's lfm2 row
 * (feed returns the bytes read: it stops where it hands the block back) */
void tp_jsontag_lfm2_enter(tp_parser *p, uint64_t call_off);
size_t tp_jsontag_lfm2_feed(tp_parser *p, const uint8_t *s, size_t n);
void tp_jsontag_lfm2_finish(tp_parser *p);
extern const tp_format tp_fmt_k2_horizon; /* fmt_glm.c */
/* fmt_jsontag.c: K2 Horizon's JSON dialect, handed over by fmt_glm.c's
 * k2_horizon row (feed returns the bytes read: it stops where it hands back) */
void tp_jsontag_k2_enter(tp_parser *p, uint64_t call_off);
size_t tp_jsontag_k2_feed(tp_parser *p, const uint8_t *s, size_t n);
void tp_jsontag_k2_finish(tp_parser *p);

extern const tp_format tp_fmt_muse; /* fmt_channel.c */
int tp_fmt_channel_init(void);

#endif
