# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Cython bindings of the C core: one StreamParser per stream, events in
batches (one list per feed), spans decoded straight from the core's output
buffer."""

cimport cython
from cpython.unicode cimport PyUnicode_DecodeUTF8, PyUnicode_AsUTF8AndSize
from cpython.mem cimport PyMem_Malloc, PyMem_Calloc, PyMem_Free
from cpython.object cimport Py_TYPE, PyObject, PyTypeObject, descrsetfunc, newfunc
from cpython.set cimport PySet_New
from cpython.dict cimport PyDict_Copy, PyDict_Next
from cpython.contextvars cimport get_value, PyContextVar_Set
from libc.stdint cimport uint8_t, int32_t, uint32_t
from libc.string cimport memchr, memcmp
from posix.time cimport clock_gettime, timespec, CLOCK_THREAD_CPUTIME_ID

from sglang_toolparse._ctp cimport *

import json as _json

cdef extern from "Python.h":
    object PyUnicode_FromObject(object)
    bint PyUnicode_IS_ASCII(object)
    void *PyUnicode_DATA(object)
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    int PyUnicode_KIND(object)
    int PyUnicode_1BYTE_KIND

if tp_global_init() != 0:
    raise ImportError("sglang_toolparse: C core failed to initialize")

ERROR_REASONS = {
    "json_syntax": "malformed JSON in the tool call",
    "json_depth": "arguments nested deeper than the limit",
    "json_number": "number token longer than the limit",
    "buffer_limit": "a held-back buffer would exceed its limit",
    "unknown_tool": "the model called a tool that was not declared",
    "missing_name": "the tool call has no name",
    "bad_name": "the tool name is missing, empty, not a string or too long",
    "unterminated": "the stream ended inside a tool call",
    "trailing_content": "unexpected content after the call object was skipped",
    "call_limit": "more tool calls than the limit",
    "bad_markup": "markup that does not fit the format",
    "no_memory": "out of memory",
}


# format name -> its tp_format (static data of the core), as an int: a
# request's parser finds its format by one dict lookup
cdef dict _FORMAT_AT = {}


cdef const tp_format *_find_format(str name):
    """The core's format called `name`, NULL if none."""
    cdef const tp_format *fmt
    at = _FORMAT_AT.get(name) if type(name) is str else None
    if at is not None:
        return <const tp_format *><size_t>at
    fmt = tp_format_find(name.encode("utf-8", "surrogatepass"))
    if fmt != NULL and type(name) is str:
        _FORMAT_AT[name] = <size_t>fmt
    return fmt


def formats():
    """Names of the formats the C core implements."""
    cdef const char *const *names = tp_format_names()
    out = []
    cdef int i = 0
    while names[i] != NULL:
        out.append(names[i].decode())
        i += 1
    return out


# Largest value each limit option takes (the core stores max_buffer as a
# size_t, the others as uint32; call indexes are int32 in events).
MAX_LIMITS = {
    "max_buffer": 1 << 40,
    "max_depth": TP_JSON_DEPTH_CAP,
    "max_calls": 0x7FFFFFFF,
    "max_name": 0x7FFFFFFF,
}

DEFAULT_LIMITS = {
    "max_buffer": TP_DEFAULT_MAX_BUFFER,
    "max_depth": TP_DEFAULT_MAX_DEPTH,
    "max_calls": TP_DEFAULT_MAX_CALLS,
    "max_name": TP_DEFAULT_MAX_NAME,
}
MAX_DEPTH_CAP = TP_JSON_DEPTH_CAP


# Events hold only str, int and None, so they can never be part of a
# reference cycle: no_gc leaves them out of the cycle collector, which
# makes each of the (many, short-lived) event objects cheaper to create
# and free. Subclasses written in Python get the collector back as usual.
@cython.no_gc
cdef class Event:
    """Base class of every parser event."""

    cdef tuple _key(self):
        return ()

    def __eq__(self, other):
        if type(self) is not type(other):
            return NotImplemented
        return (<Event>self)._key() == (<Event>other)._key()

    def __hash__(self):
        return hash((type(self).__name__,) + self._key())

    def __repr__(self):
        return "%s%r" % (type(self).__name__, self._key())


@cython.final
@cython.no_gc
cdef class Text(Event):
    """Plain text for the user."""
    cdef readonly str text

    def __init__(self, str text):
        self.text = text

    cdef tuple _key(self):
        return (self.text,)


@cython.final
@cython.no_gc
cdef class Reasoning(Event):
    """Reasoning text (Harmony's analysis channel): not for the user's
    content; SGLang's tool parsers drop it."""
    cdef readonly str text

    def __init__(self, str text):
        self.text = text

    cdef tuple _key(self):
        return (self.text,)


@cython.final
@cython.no_gc
cdef class CallStart(Event):
    """A tool call begins: its index (order of appearance), name, and the
    call id the model wrote (kimi_k2: "functions.NAME:IDX"; None for formats
    without ids)."""
    cdef readonly int index
    cdef readonly str name
    cdef readonly object id

    def __init__(self, int index, str name, id=None):
        self.index = index
        self.name = name
        self.id = <str?>id if id is not None else None

    cdef tuple _key(self):
        if self.id is None:
            return (self.index, self.name)
        return (self.index, self.name, self.id)


@cython.final
@cython.no_gc
cdef class ArgsDelta(Event):
    """The next piece of a call's JSON arguments."""
    cdef readonly int index
    cdef readonly str delta

    def __init__(self, int index, str delta):
        self.index = index
        self.delta = delta

    cdef tuple _key(self):
        return (self.index, self.delta)


@cython.final
@cython.no_gc
cdef class CallEnd(Event):
    """A call is complete; `arguments` is the concatenation of its deltas;
    `id` is its CallStart's id."""
    cdef readonly int index
    cdef readonly str name
    cdef readonly str arguments
    cdef readonly object id

    def __init__(self, int index, str name, str arguments, id=None):
        self.index = index
        self.name = name
        self.arguments = arguments
        self.id = <str?>id if id is not None else None

    cdef tuple _key(self):
        if self.id is None:
            return (self.index, self.name, self.arguments)
        return (self.index, self.name, self.arguments, self.id)


@cython.final
@cython.no_gc
cdef class ParseError(Event):
    """Bad model output. `index` is the call it aborts (None if no call had
    started), `code` a stable name, `offset` the byte offset in the UTF-8
    stream where it was detected, `detail` e.g. the unknown tool name.

    `raw` is the model text the error dropped (in neither text nor a call:
    a refused call from its first marker, the rest of a broken call up to
    where the format reads again), from byte `raw_offset` of the stream
    (None when nothing was dropped). One-shot (parse_all) it is filled in;
    streamed, the text arrives after the error as Dropped events, which
    sglang_toolparse.api.collect() puts back into the error."""
    cdef readonly object index
    cdef readonly str code
    cdef readonly unsigned long long offset
    cdef readonly str detail
    cdef readonly str raw
    cdef readonly object raw_offset

    def __init__(self, index, str code, unsigned long long offset, str detail="", str raw="", raw_offset=None):
        self.index = index
        self.code = code
        self.offset = offset
        self.detail = detail
        self.raw = raw
        self.raw_offset = None if raw_offset is None else <unsigned long long?>raw_offset

    @property
    def reason(self):
        msg = ERROR_REASONS.get(self.code, self.code)
        if self.detail:
            msg = "%s (%r)" % (msg, self.detail)
        return "%s at byte %d" % (msg, self.offset)

    cdef tuple _key(self):
        if not self.raw and self.raw_offset is None:
            return (self.index, self.code, self.offset, self.detail)
        return (self.index, self.code, self.offset, self.detail, self.raw, self.raw_offset)

    def with_raw(self, str raw, raw_offset):
        """A copy of this error carrying `raw` (the text it dropped) from
        stream byte `raw_offset`."""
        return ParseError(self.index, self.code, self.offset, self.detail, raw, raw_offset)


@cython.final
@cython.no_gc
cdef class Dropped(Event):
    """Streamed only: model text the last ParseError dropped, from stream
    byte `offset` (see ParseError.raw). `index` is that error's call."""
    cdef readonly object index
    cdef readonly unsigned long long offset
    cdef readonly str raw

    def __init__(self, index, unsigned long long offset, str raw):
        self.index = index
        self.offset = offset
        self.raw = raw

    cdef tuple _key(self):
        return (self.index, self.offset, self.raw)


@cython.final
@cython.no_gc
cdef class Markup(Event):
    """Only from a parser made with markup=True (streamed and parse_all):
    model bytes from stream byte `offset` that are markup, neither text, an
    error's raw text nor a call's: the message's framing (tokens the
    format's reference decoder and SGLang take out of the text, e.g. Llama
    4's `<|python_start|>`, Harmony's headers) or a block's end tag after
    prose inside the block. With it, the events tile the input
    (docs/SEMANTICS.md, "Dropped text"); nothing for the user: collect()
    and the SGLang adapter leave it out."""
    cdef readonly unsigned long long offset
    cdef readonly str raw

    def __init__(self, unsigned long long offset, str raw):
        self.offset = offset
        self.raw = raw

    cdef tuple _key(self):
        return (self.offset, self.raw)


# Event objects are made and dropped by the dozen per chunk. The final
# event classes (no Python subclass can exist, no GC tracking) keep a small
# free list of their memory blocks: a block a dropped event leaves is reused
# by the next event of the same size instead of going back to the
# allocator. Blocks come from and go back to PyObject_Malloc/PyObject_Free,
# as the default slots do; only used under the GIL (free-threaded builds
# keep the default slots).
cdef extern from *:
    """
    #define TPEV_FREE_MAX 32
    #define TPEV_WORDS 16 /* blocks of up to 16 words: every event class */
    static void *tpev_blocks[TPEV_WORDS][TPEV_FREE_MAX];
    static int tpev_nfree[TPEV_WORDS];

    static PyObject *tpev_alloc(PyTypeObject *t, Py_ssize_t nitems)
    {
        size_t size = (size_t)t->tp_basicsize, w = size / sizeof(void *);
        if (nitems != 0 || t->tp_itemsize != 0 || size % sizeof(void *) || w >= TPEV_WORDS ||
            tpev_nfree[w] == 0)
            return PyType_GenericAlloc(t, nitems);
        PyObject *o = (PyObject *)tpev_blocks[w][--tpev_nfree[w]];
        void **z = (void **)o;
        switch (w) { /* zeroed word by word (a few words: no memset call) */
        case 15: z[14] = NULL; /* fall through */
        case 14: z[13] = NULL; /* fall through */
        case 13: z[12] = NULL; /* fall through */
        case 12: z[11] = NULL; /* fall through */
        case 11: z[10] = NULL; /* fall through */
        case 10: z[9] = NULL; /* fall through */
        case 9: z[8] = NULL; /* fall through */
        case 8: z[7] = NULL; /* fall through */
        case 7: z[6] = NULL; /* fall through */
        case 6: z[5] = NULL; /* fall through */
        case 5: z[4] = NULL; /* fall through */
        case 4: z[3] = NULL; /* fall through */
        case 3: z[2] = NULL; /* fall through */
        case 2: z[1] = NULL; /* fall through */
        case 1: z[0] = NULL; /* fall through */
        default: break;
        }
        return PyObject_Init(o, t);
    }

    static void tpev_free(void *p)
    {
        PyTypeObject *t = Py_TYPE((PyObject *)p);
        size_t size = (size_t)t->tp_basicsize, w = size / sizeof(void *);
        if (t->tp_itemsize == 0 && size % sizeof(void *) == 0 && w < TPEV_WORDS &&
            tpev_nfree[w] < TPEV_FREE_MAX)
            tpev_blocks[w][tpev_nfree[w]++] = p;
        else
            PyObject_Free(p);
    }

    /* at the interpreter's end: the kept blocks are forgotten (not
     * freed: no Python API then), so an interpreter initialized again in
     * this process never gets a block of the finalized one */
    static void tpev_forget(void)
    {
        for (int w = 0; w < TPEV_WORDS; w++)
            tpev_nfree[w] = 0;
    }

    /* 1 if `type` now uses the free list (a static, final, non-GC type
     * with the default slots), 0 if it keeps its own */
    static int tpev_use_freelist(PyObject *type)
    {
    #ifdef Py_GIL_DISABLED
        return 0;
    #else
        static int forget_registered;
        PyTypeObject *t = (PyTypeObject *)type;
        if (!PyType_Check(type) || PyType_HasFeature(t, Py_TPFLAGS_HAVE_GC) ||
            PyType_HasFeature(t, Py_TPFLAGS_BASETYPE) || PyType_HasFeature(t, Py_TPFLAGS_HEAPTYPE) ||
            t->tp_alloc != PyType_GenericAlloc || t->tp_free != PyObject_Free)
            return 0;
        if (!forget_registered) {
            if (Py_AtExit(tpev_forget) != 0)
                return 0; /* (no room for it: no free list) */
            forget_registered = 1;
        }
        t->tp_alloc = tpev_alloc;
        t->tp_free = tpev_free;
        return 1;
    #endif
    }
    """
    int tpev_use_freelist(object type)


# the classes that took the free list (tests/test_api_safety.py)
_EVENT_FREELIST = frozenset(c.__name__ for c in (Text, Reasoning, CallStart, ArgsDelta, CallEnd, ParseError,
                                                Dropped, Markup) if tpev_use_freelist(c))


@cython.final
cdef class CompiledTools:
    """A tool list compiled once for a format: tool names and, per declared
    parameter, a kind (TP_KIND_*) and a union mask, in a C table that any
    number of parsers share read-only (in any thread). Immutable.

    CompiledTools(rows, whole=(), host=None, schema=None): rows is a sequence of
    (tool name, default kind, [(parameter, kind, mask), ...]); `whole`
    names the tools whose calls the host types as a whole; `host()` makes
    the host converter of one parser (see StreamParser); `schema` (bytes)
    is the tools' schema graph for nested values (csrc/tp_schema.c)."""
    cdef tp_tools t
    cdef bint ready
    cdef readonly tuple names
    cdef readonly frozenset whole
    cdef readonly object host

    def __cinit__(self):
        tp_tools_init(&self.t)
        self.ready = False

    def __init__(self, rows, whole=(), host=None, schema=None):
        cdef bytes b
        cdef int tid
        if self.ready:
            raise RuntimeError("CompiledTools cannot be re-initialized")
        if schema is not None:
            b = <bytes?>schema
            self.t.schema = tp_schema_load(<const uint8_t *>b, len(b))
            if self.t.schema == NULL:
                raise ValueError("malformed schema table")
        names = []
        for name, default_kind, params in rows:
            b = (<str?>name).encode("utf-8", "surrogatepass")
            tid = tp_tools_add(&self.t, <const uint8_t *>b, len(b))
            if tid < 0:
                raise MemoryError()
            names.append(name)
            if tp_tools_set_default(&self.t, tid, <int?>default_kind) < 0:
                raise ValueError("bad kind %r" % (default_kind,))
            for pname, kind, mask in params:
                b = (<str?>pname).encode("utf-8", "surrogatepass")
                if tp_tools_add_param(&self.t, tid, <const uint8_t *>b, len(b), <int?>kind, <unsigned>mask) < 0:
                    raise MemoryError()
        self.names = tuple(names)
        self.whole = frozenset(whole)
        self.host = host
        self.ready = True

    def __dealloc__(self):
        tp_tools_free(&self.t)

    def __reduce__(self):
        raise TypeError("CompiledTools cannot be pickled; compile the tools again")


cdef object _value_text(int res, const tp_buf *out):
    """A typing call's answer (type_value, nsxml_value): its JSON text, or
    None when the host's rules type the value."""
    if res < 0:
        raise MemoryError()
    if res == TP_TV_HOST:
        return None
    return PyUnicode_DecodeUTF8(<const char *>out.data, out.len, "surrogatepass")


def type_value(str family, int kind, unsigned mask, str raw):
    """What the core makes of one complete raw value of a parameter of
    `kind` (KINDS) and union `mask` under `family`'s rules: its JSON text,
    or None when the host's (Python) rules type it. For tests and tools."""
    cdef const tp_type_rules *r = tp_rules_named(family.encode())
    if r == NULL:
        raise ValueError("no typing rules named %r" % (family,))
    if kind < 0 or kind >= TP_KIND__COUNT:
        raise ValueError("bad kind %r" % (kind,))
    cdef bytes b = raw.encode("utf-8", "surrogatepass")
    cdef tp_json *js = <tp_json *>PyMem_Calloc(1, sizeof(tp_json))  # (zeroed: tp_json.h)
    cdef tp_buf out
    cdef int res
    if js == NULL:
        raise MemoryError()
    tp_buf_init(&out, 0)
    try:
        res = tp_type_value(r, kind, mask, <const uint8_t *>b, len(b), js, TP_DEFAULT_MAX_DEPTH, &out)
        return _value_text(res, &out)
    finally:
        tp_buf_free(&out)
        tp_json_free(js)
        PyMem_Free(js)


def nsxml_value(bytes schema, int node, str raw, str ns):
    """What the core makes of one held value of a namespaced-XML row
    (csrc/fmt_nsxml_value.c) typed by node `node` of the schema table
    `schema` (bytes; -1: untyped): its JSON text, or None when it is a JSON
    text left to the host's json.loads. For tests and tools."""
    cdef const uint8_t *sb = <const uint8_t *>schema
    cdef tp_schema *sc = tp_schema_load(sb, len(schema))
    if sc == NULL:
        raise ValueError("malformed schema table")
    if node >= <int>sc.n or node < -1:
        tp_schema_free(sc)
        raise ValueError("bad node %r" % (node,))
    cdef bytes b = raw.encode("utf-8", "surrogatepass")
    cdef bytes nb = ns.encode("utf-8")
    cdef tp_json *js = <tp_json *>PyMem_Calloc(1, sizeof(tp_json))  # (zeroed: tp_json.h)
    cdef tp_buf out
    cdef int res
    if js == NULL:
        tp_schema_free(sc)
        raise MemoryError()
    tp_buf_init(&out, 0)
    try:
        res = tp_nsxml_value(sc, node, <const char *>nb, <const uint8_t *>b, len(b), js, TP_DEFAULT_MAX_DEPTH, &out)
        return _value_text(res, &out)
    finally:
        tp_buf_free(&out)
        tp_json_free(js)
        PyMem_Free(js)
        tp_schema_free(sc)


KINDS = {
    "untyped": TP_KIND_UNTYPED, "string": TP_KIND_STRING, "other": TP_KIND_OTHER,
    "integer": TP_KIND_INTEGER, "number": TP_KIND_NUMBER, "boolean": TP_KIND_BOOLEAN,
    "null": TP_KIND_NULL, "object": TP_KIND_OBJECT, "array": TP_KIND_ARRAY,
    "union": TP_KIND_UNION, "host": TP_KIND_HOST,
}


cdef list _NO_TOOLS = []  # (never appended to)

# A stream's parser fills a few small buffers (the batch output, the call's
# id and name, its raw record, the event array) with its first chunks, and a
# new parser per stream would allocate them all again. A parser that is
# freed gives them (up to 4 KB each) to a small pool under the GIL, and the
# next parser made takes them, empty, where its own are still unallocated
# and the capacity is within the buffer's limit. (Free-threaded builds: no
# pool.)
cdef extern from *:
    """
    #define TPPOOL_SETS 8
    #define TPPOOL_NBUF 6
    #define TPPOOL_KEEP 4096
    typedef struct {
        uint8_t *data[TPPOOL_NBUF];
        size_t cap[TPPOOL_NBUF];
        tp_event *ev;
        size_t evcap;
    } tppool_set;
    static tppool_set tppool[TPPOOL_SETS];
    static int tppool_n;

    static void tppool_bufs(tp_parser *p, tp_buf *b[TPPOOL_NBUF])
    {
        b[0] = &p->out;
        b[1] = &p->name;
        b[2] = &p->key;
        b[3] = &p->callname;
        b[4] = &p->callid;
        b[5] = &p->raw;
    }

    /* before tp_parser_free: the parser's small buffers go to the pool
     * (tp_parser_free then frees the rest) */
    static void tppool_give(tp_parser *p)
    {
    #ifndef Py_GIL_DISABLED
        tp_buf *b[TPPOOL_NBUF];
        if (tppool_n == TPPOOL_SETS)
            return;
        tppool_set *s = &tppool[tppool_n++];
        tppool_bufs(p, b);
        for (int i = 0; i < TPPOOL_NBUF; i++) {
            s->data[i] = NULL;
            s->cap[i] = 0;
            if (b[i]->data && b[i]->cap <= TPPOOL_KEEP) {
                s->data[i] = b[i]->data;
                s->cap[i] = b[i]->cap;
                b[i]->data = NULL;
                b[i]->len = b[i]->cap = 0;
            }
        }
        s->ev = NULL;
        s->evcap = 0;
        if (p->ev && p->evcap <= 256) {
            s->ev = p->ev;
            s->evcap = p->evcap;
            p->ev = NULL;
            p->nev = p->evcap = 0;
        }
    #endif
    }

    /* after tp_parser_init: the parser takes a pooled set where its own
     * buffers are unallocated and the capacity fits their limits; what it
     * does not take is freed */
    static void tppool_take(tp_parser *p)
    {
    #ifndef Py_GIL_DISABLED
        tp_buf *b[TPPOOL_NBUF];
        if (tppool_n == 0)
            return;
        tppool_set *s = &tppool[--tppool_n];
        tppool_bufs(p, b);
        for (int i = 0; i < TPPOOL_NBUF; i++) {
            if (!s->data[i])
                continue;
            if (!b[i]->data && b[i]->len == 0 && s->cap[i] <= b[i]->limit) {
                b[i]->data = s->data[i];
                b[i]->cap = s->cap[i];
            } else {
                free(s->data[i]);
            }
        }
        if (s->ev) {
            if (!p->ev && p->nev == 0) {
                p->ev = s->ev;
                p->evcap = s->evcap;
            } else {
                free(s->ev);
            }
        }
    #endif
    }
    """
    void tppool_give(tp_parser *p)
    void tppool_take(tp_parser *p)


# The memory block of a parser's core state (sizeof(tp_parser), several KB,
# not zeroed: tp_parser_init sets what the core reads first) comes from a
# small pool of blocks freed parsers left, else from malloc; up to
# TPBLK_KEEP blocks are kept (under the GIL; free-threaded builds: no pool).
cdef extern from *:
    """
    #define TPBLK_KEEP 8
    #ifndef Py_GIL_DISABLED
    static tp_parser *tpblk[TPBLK_KEEP];
    static int tpblk_n;
    #endif

    static tp_parser *tpblk_take(void)
    {
    #ifndef Py_GIL_DISABLED
        if (tpblk_n)
            return tpblk[--tpblk_n];
    #endif
        return (tp_parser *)malloc(sizeof(tp_parser));
    }

    /* `p`: a block whose parser was freed (tp_parser_free), or NULL */
    static void tpblk_give(tp_parser *p)
    {
    #ifndef Py_GIL_DISABLED
        if (p && tpblk_n < TPBLK_KEEP) {
            tpblk[tpblk_n++] = p;
            return;
        }
    #endif
        free(p);
    }
    """
    tp_parser *tpblk_take()
    void tpblk_give(tp_parser *p)


# The core's output as str: an ASCII span (the usual case: JSON arguments,
# names, ids) is copied into a new ASCII str after a check of 32 bytes at a
# time; anything else goes through CPython's UTF-8 decoder (surrogatepass:
# the core passes encoded lone surrogates through). The same str either way.
# tp_span_str reads a span of the parser's current output: the pointer and
# length are fetched by the call itself and the span checked against them
# (RuntimeError if it is not inside), and no Python code runs in it.
cdef extern from *:
    """
    static PyObject *tp_out_str(const uint8_t *s, size_t n)
    {
        const uint64_t high = 0x8080808080808080ULL;
        uint64_t w0, w1, w2, w3, acc = 0;
        size_t i = 0;
        if (n < 2) /* "" and one character: CPython's shared strings */
            goto decode;
        for (; i + 32 <= n; i += 32) {
            memcpy(&w0, s + i, 8);
            memcpy(&w1, s + i + 8, 8);
            memcpy(&w2, s + i + 16, 8);
            memcpy(&w3, s + i + 24, 8);
            if ((w0 | w1 | w2 | w3) & high)
                goto decode;
        }
        for (; i + 8 <= n; i += 8) {
            memcpy(&w0, s + i, 8);
            acc |= w0;
        }
        if (i < n) {
            if (n >= 8) { /* the last 8 bytes (some read above again) */
                memcpy(&w0, s + n - 8, 8);
                acc |= w0;
            } else {
                for (; i < n; i++)
                    acc |= s[i];
            }
        }
        if (acc & high)
            goto decode;
        PyObject *o = PyUnicode_New((Py_ssize_t)n, 127);
        if (o)
            memcpy(PyUnicode_DATA(o), s, n);
        return o;
    decode:
        return PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)n, "surrogatepass");
    }

    /* *s = the span [start, start + n) of the parser's current output,
     * fetched now: 0, or -1 (RuntimeError set) when it is not inside that
     * output (an empty output's data may be NULL: *s is no error flag) */
    static int tp_span_at(const tp_parser *p, size_t start, size_t n, const uint8_t **s)
    {
        size_t len = tp_parser_output_len(p);
        if (start > len || n > len - start) {
            PyErr_SetString(PyExc_RuntimeError, "parser output changed while it was read");
            return -1;
        }
        *s = tp_parser_output(p) + start;
        return 0;
    }

    static PyObject *tp_span_str(const tp_parser *p, size_t start, size_t n)
    {
        const uint8_t *s;
        return tp_span_at(p, start, n, &s) ? NULL : tp_out_str(s, n);
    }

    /* Tool names and call ids repeat from call to call and from stream to
     * stream: the last ASCII str made for each of TPNAME_SLOTS hash slots
     * (2 to TPNAME_MAX bytes) is kept and given again for the same bytes
     * (strs are immutable: sharing one is invisible but to `is`). Under the
     * GIL only (free-threaded builds: no cache); forgotten, not freed, at
     * the interpreter's end (as the event free list). */
    #define TPNAME_SLOTS 64
    #define TPNAME_MAX 64
    #ifndef Py_GIL_DISABLED
    static PyObject *tpname_cache[TPNAME_SLOTS];
    static int tpname_on = -1; /* -1: not yet set up, 0: off */

    static void tpname_forget(void)
    {
        memset(tpname_cache, 0, sizeof tpname_cache);
        tpname_on = -1;
    }
    #endif

    static PyObject *tp_name_str(const uint8_t *s, size_t n)
    {
    #ifndef Py_GIL_DISABLED
        if (n >= 2 && n <= TPNAME_MAX) {
            uint64_t a = 0, b = 0;
            if (n >= 8) {
                memcpy(&a, s, 8);
                memcpy(&b, s + n - 8, 8);
            } else {
                memcpy(&a, s, n);
            }
            size_t h = (size_t)(((a * 0x9E3779B97F4A7C15ULL) ^ (b * 0xC2B2AE3D27D4EB4FULL) ^ n) >> 58);
            PyObject *c = tpname_cache[h];
            if (c && (size_t)PyUnicode_GET_LENGTH(c) == n) {
                /* the same bytes: compared 8 at a time, the last 8 (or the
                 * n < 8 bytes) as loaded above */
                const uint8_t *d = PyUnicode_DATA(c);
                uint64_t x = 0, y = 0;
                size_t i = 0;
                int same = 1;
                if (n >= 8) {
                    for (; same && i + 8 < n; i += 8) {
                        memcpy(&x, d + i, 8);
                        memcpy(&y, s + i, 8);
                        same = x == y;
                    }
                    memcpy(&x, d + n - 8, 8);
                    same = same && x == b;
                } else {
                    memcpy(&x, d, n);
                    memcpy(&y, s, n);
                    same = (x & ((1ULL << (8 * n)) - 1)) == (y & ((1ULL << (8 * n)) - 1));
                }
                if (same) {
                    Py_INCREF(c);
                    return c;
                }
            }
            PyObject *o = tp_out_str(s, n);
            if (o && PyUnicode_IS_ASCII(o)) {
                if (tpname_on < 0)
                    tpname_on = Py_AtExit(tpname_forget) == 0;
                if (tpname_on) {
                    Py_INCREF(o);
                    tpname_cache[h] = o;
                    Py_XDECREF(c); /* a str: no Python code runs */
                }
            }
            return o;
        }
    #endif
        return tp_out_str(s, n);
    }

    /* tp_span_str for a name or call id */
    static PyObject *tp_span_name(const tp_parser *p, size_t start, size_t n)
    {
        const uint8_t *s;
        return tp_span_at(p, start, n, &s) ? NULL : tp_name_str(s, n);
    }

    /* a + b (str, not NULL): two ASCII strs copied into a new one; else
     * PyUnicode_Concat */
    static PyObject *tp_str_concat(PyObject *a, PyObject *b)
    {
        if (!PyUnicode_IS_ASCII(a) || !PyUnicode_IS_ASCII(b))
            return PyUnicode_Concat(a, b);
        Py_ssize_t na = PyUnicode_GET_LENGTH(a), nb = PyUnicode_GET_LENGTH(b);
        if (na == 0 || nb == 0) {
            PyObject *o = na ? a : b;
            Py_INCREF(o);
            return o;
        }
        if (na > PY_SSIZE_T_MAX - nb)
            return PyErr_NoMemory();
        PyObject *o = PyUnicode_New(na + nb, 127);
        if (o) {
            memcpy(PyUnicode_DATA(o), PyUnicode_DATA(a), (size_t)na);
            memcpy((char *)PyUnicode_DATA(o) + na, PyUnicode_DATA(b), (size_t)nb);
        }
        return o;
    }
    """
    str tp_out_str(const uint8_t *s, size_t n)
    str tp_span_str(const tp_parser *p, size_t start, size_t n)
    str tp_span_name(const tp_parser *p, size_t start, size_t n)
    str tp_str_concat(str a, str b)


# A batch's event objects, in order, before its list is made: in a C array
# (TPB_LOCAL on the C stack, then a growing heap array), each a strong
# reference; tpb_list makes the list at its size at the end. While a batch
# is built, Python code (a host converter, a finalizer) can run, but never
# sees a list with holes or placeholders.
cdef extern from *:
    """
    #define TPB_LOCAL 16
    typedef struct {
        PyObject **items;
        Py_ssize_t n, cap;
        PyObject *local[TPB_LOCAL];
    } tp_batch;

    static void tpb_init(tp_batch *b)
    {
        b->items = b->local;
        b->n = 0;
        b->cap = TPB_LOCAL;
    }

    static int tpb_grow(tp_batch *b);

    /* appends `o` (a new reference is taken) */
    static inline int tpb_put(tp_batch *b, PyObject *o)
    {
        if (b->n == b->cap && tpb_grow(b))
            return -1;
        Py_INCREF(o);
        b->items[b->n++] = o;
        return 0;
    }

    /* room for twice as many objects */
    static int tpb_grow(tp_batch *b)
    {
        PyObject **m;
        if (b->cap > PY_SSIZE_T_MAX / 2 / (Py_ssize_t)sizeof(PyObject *)) {
            PyErr_NoMemory();
            return -1;
        }
        if (b->items == b->local) {
            m = PyMem_Malloc((size_t)b->cap * 2 * sizeof(PyObject *));
            if (m)
                memcpy(m, b->local, sizeof b->local);
        } else {
            m = PyMem_Realloc(b->items, (size_t)b->cap * 2 * sizeof(PyObject *));
        }
        if (!m) {
            PyErr_NoMemory();
            return -1;
        }
        b->items = m;
        b->cap *= 2;
        return 0;
    }

    /* the last object put (borrowed), NULL if none */
    static PyObject *tpb_last(const tp_batch *b)
    {
        return b->n ? b->items[b->n - 1] : NULL;
    }

    /* the batch emptied: its references dropped */
    static void tpb_clear(tp_batch *b)
    {
        Py_ssize_t n = b->n;
        b->n = 0;
        for (Py_ssize_t i = 0; i < n; i++)
            Py_DECREF(b->items[i]);
        if (b->items != b->local)
            PyMem_Free(b->items);
        b->items = b->local;
        b->cap = TPB_LOCAL;
    }

    /* the batch's objects as a new list (the batch emptied); NULL on
     * failure (the batch cleared) */
    static PyObject *tpb_list(tp_batch *b)
    {
        PyObject *l = PyList_New(b->n);
        if (!l) {
            tpb_clear(b);
            return NULL;
        }
        for (Py_ssize_t i = 0; i < b->n; i++)
            PyList_SET_ITEM(l, i, b->items[i]);
        b->n = 0;
        tpb_clear(b);
        return l;
    }
    /* a batch filled by `fill` (0, or -1 with an exception set): its
     * list, else NULL (the batch cleared) */
    typedef int (*tpb_fill)(PyObject *self, tp_batch *b, int arg);
    static PyObject *tpb_collect(tpb_fill fill, PyObject *self, int arg)
    {
        tp_batch b;
        tpb_init(&b);
        if (fill(self, &b, arg) < 0) {
            tpb_clear(&b);
            return NULL;
        }
        return tpb_list(&b);
    }
    """
    ctypedef struct tp_batch:
        Py_ssize_t n
    ctypedef int (*tpb_fill)(PyObject *self, tp_batch *b, int arg) noexcept
    list tpb_collect(tpb_fill fill, object self, int arg)
    void tpb_init(tp_batch *b)
    int tpb_put(tp_batch *b, object o) except -1
    PyObject *tpb_last(const tp_batch *b)
    void tpb_clear(tp_batch *b)
    list tpb_list(tp_batch *b)


cdef int _collect_fill(object self, tp_batch *b, int oneshot) except -1:
    """StreamParser._collect's batch filler (tpb_collect)."""
    return (<StreamParser>self)._collect_into(b, oneshot)


cdef class StreamParser:
    """Incremental parser for one stream of model output.

    StreamParser(format, tool_names=None, *, forward_unknown=False,
                 string_params=None, converter=None, **limits)
    `tool_names` is an iterable of declared tool names; None accepts every
    name. feed(text) and finish() return a list of events.

    Schema-typed formats: `compiled` (a CompiledTools) gives the tool
    names and each parameter's kind; the core types values itself and hands
    the few that need Python's rules to a host converter made by
    `compiled.host()` when first needed: an object with begin(name) -> bool
    (True: the host types the call's arguments as a whole), value(key, raw)
    -> JSON text (ignored for a whole call), end() -> JSON arguments (whole
    calls) and reset() (the call failed). Without `compiled`,
    `string_params` maps a tool name to its string-typed parameters and
    `converter` is such an object.

    Qwen3-Coder / MiniMax-M2 without `compiled`: `string_params` maps a
    declared tool name to its string-typed parameters (they stream),
    `other_params` to those declared with another type (typed by the
    family's row for TP_KIND_OTHER, the rest by `converter`); an undeclared
    parameter is a string there. GLM types every value not in
    `string_params`.

    kimi_k2: `properties` maps a declared tool name to its schema's property
    names, each written as JSON string content (json.dumps(name)[1:-1]); a
    call that names no tool (a bare counter id) is given the tool whose
    properties best match its argument keys.

    One parser per stream: a feed()/finish() while another runs on the same
    parser (another thread, or re-entered from the converter) raises
    RuntimeError; so do the methods of a parser whose __init__ did not run.
    Parsers are not copyable or picklable (TypeError).
    """
    cdef tp_parser *p  # the core's state (from tpblk_take in __init__)
    cdef bint inited
    # set while feed()/finish() run: a second caller (another thread, or a
    # converter re-entering its own parser) gets RuntimeError instead of
    # touching the core state and output buffer the first caller is using
    cdef bint busy
    cdef readonly str format
    # the open call's argument pieces: the first two in _a0/_a1, all of
    # them in _args from the third on (None before); see _args_push
    cdef str _a0
    cdef str _a1
    cdef list _args
    cdef str _name
    cdef object _id
    cdef readonly int calls_started
    cdef readonly bint finished
    cdef object _conv
    cdef bint _whole
    cdef CompiledTools _compiled
    cdef frozenset _whole_names
    cdef int _conv_call
    cdef object _last_error  # parse_all: the error Dropped text goes into
    cdef bint _markup  # Markup events are wanted (markup=True)

    def __cinit__(self):
        self.p = NULL
        self.inited = False
        self.busy = False

    def __init__(self, str format not None, tool_names=None, *, bint forward_unknown=False,
                 max_buffer=None, max_depth=None, max_calls=None, max_name=None,
                 string_params=None, converter=None, properties=None, other_params=None,
                 CompiledTools compiled=None, bint markup=False):
        self._setup(format, tool_names, forward_unknown, max_buffer, max_depth, max_calls, max_name,
                    string_params, converter, properties, other_params, compiled, markup)

    cdef int _setup(self, str format, tool_names, bint forward_unknown, max_buffer, max_depth, max_calls,
                    max_name, string_params, converter, properties, other_params, CompiledTools compiled,
                    bint markup) except -1:
        """__init__'s work (also ToolsParser's, without parsing keywords)."""
        cdef tp_limits lim
        cdef uint32_t flags = 0
        cdef bytes b
        cdef int tid
        cdef list tools
        if format is None:
            raise TypeError("format must be a str, not None")
        if self.inited:
            raise RuntimeError("StreamParser cannot be re-initialized; create one parser per stream")
        fmt = _find_format(format)
        if fmt == NULL:
            raise ValueError("unknown format %r; known: %s" % (format, ", ".join(formats())))
        tp_limits_default(&lim)
        if max_buffer is not None:
            lim.max_buffer = _limit(max_buffer, "max_buffer")
        if max_depth is not None:
            lim.max_depth = _limit(max_depth, "max_depth")
        if max_calls is not None:
            lim.max_calls = _limit(max_calls, "max_calls")
        if max_name is not None:
            lim.max_name = _limit(max_name, "max_name")
        # every argument is checked before the core state exists, so a bad
        # one leaves an uninitialized parser (whose methods raise), never a
        # half-built one
        # declared parameters: kimi_k2's property names (to name a bare-counter
        # call), then string-typed (stream as JSON strings), then other kinds
        # (XML formats); a later declaration of the same name wins
        if (tool_names is None or (type(tool_names) is tuple and not tool_names)) and properties is None \
                and string_params is None and other_params is None:
            tools = _NO_TOOLS  # nothing to encode or check (what _encode_tools gives)
        else:
            tools = _encode_tools(tool_names, (("properties", properties, TP_PARAM_OTHER),
                                               ("string_params", string_params, TP_PARAM_STRING),
                                               ("other_params", other_params, TP_PARAM_OTHER)))
        if tool_names is None:
            flags |= TP_FLAG_ACCEPT_ANY
        if forward_unknown:
            flags |= TP_FLAG_FORWARD_UNKNOWN
        if self.p == NULL:
            self.p = tpblk_take()
            if self.p == NULL:
                raise MemoryError()
        if tp_parser_init(self.p, fmt, &lim, flags) != 0:
            raise MemoryError()
        tppool_take(self.p)
        self.inited = True
        self.format = format
        self._markup = markup
        self._args_reset()
        self._name = None
        self._conv = converter
        self._whole = False
        self._conv_call = -1
        self._whole_names = None
        if compiled is not None:  # the compiled table holds the names and kinds
            self._compiled = compiled
            tp_parser_use_tools(self.p, &compiled.t)
            if compiled.whole:
                self._whole_names = compiled.whole
            tools = _NO_TOOLS
        for b, params in tools:
            tid = tp_parser_add_tool(self.p, <const uint8_t *>b, len(b))
            if tid < 0:
                raise MemoryError()
            for pb, kind in params:
                if tp_parser_add_param(self.p, tid, <const uint8_t *>(<bytes>pb), len(pb),
                                       kind) < 0:
                    raise MemoryError()
        return 0

    def __dealloc__(self):
        if self.inited:
            tppool_give(self.p)
            tp_parser_free(self.p)
        tpblk_give(self.p)

    cdef int _enter(self, str what) except -1:
        """Checks that the parser may run `what` now and marks it busy.
        Under the GIL nothing runs between the test and the set, so of two
        threads (or a call re-entering from a converter) exactly one wins."""
        if not self.inited:
            raise RuntimeError(_NOT_INITED % what)
        if self.busy:
            raise RuntimeError(_BUSY % what)
        self.busy = True
        return 0

    @property
    def offset(self):
        """Bytes of UTF-8 input consumed so far."""
        if not self.inited:
            raise RuntimeError(_NOT_INITED % "offset")
        return self.p.base

    def feed(self, text):
        """Feeds the next chunk (a str, or an instance of a str subclass);
        returns the events it completes."""
        cdef const uint8_t *data
        cdef Py_ssize_t n
        cdef bytes keep
        if type(text) is not str:
            if not isinstance(text, str):
                raise TypeError("feed() takes a str, not %s" % type(text).__name__)
            text = PyUnicode_FromObject(text)  # a subclass: its value as a plain str
        if self.busy or not self.inited:
            self._enter("feed()")  # raises
        if self.finished:
            raise RuntimeError("feed() after finish()")
        self.busy = True
        try:
            # (_feed_only's work, inline: one call per chunk; an ASCII str's
            # own buffer without a call)
            if PyUnicode_IS_ASCII(text):
                data = <const uint8_t *>PyUnicode_DATA(text)
                n = PyUnicode_GET_LENGTH(text)
            else:
                keep = _utf8_view(text, &data, &n)
            if tp_parser_feed(self.p, data, <size_t>n) != 0:
                raise MemoryError()
            return self._collect()
        finally:
            self.busy = False

    cdef _feed_only(self, str text):
        # `text` is held by the caller's frame, so its UTF-8 bytes stay valid
        # while the core reads them (the core never calls back)
        cdef const uint8_t *data
        cdef Py_ssize_t n
        cdef bytes keep = _utf8_view(text, &data, &n)
        if tp_parser_feed(self.p, data, <size_t>n) != 0:
            raise MemoryError()

    def parse_all(self, text):
        """One-shot: feeds `text` and ends the stream in one call. Returns
        the Text, CallEnd and ParseError events (each complete call's
        arguments are built once, for its CallEnd). A call that began and
        then broke or was cut off appears as streaming showed it: its
        CallStart and one ArgsDelta with the arguments sent so far (none if
        nothing was), then its ParseError."""
        cdef list res
        if type(text) is not str:
            if not isinstance(text, str):
                raise TypeError("parse_all() takes a str, not %s" % type(text).__name__)
            text = PyUnicode_FromObject(text)
        self._enter("parse_all()")
        try:
            if self.finished:
                raise RuntimeError("parse_all() after finish()")
            self._last_error = None
            self._feed_only(text)
            res = self._collect(True)
            self.finished = True
            if tp_parser_finish(self.p) != 0:
                raise MemoryError()
            res.extend(self._collect(True))
            self._last_error = None
            return res
        finally:
            self.busy = False

    def finish(self):
        """Ends the stream: releases held-back text, reports an unterminated
        call. Further calls return []."""
        if self.busy or not self.inited:
            self._enter("finish()")  # raises
        self.busy = True
        try:
            if self.finished:
                return []
            self.finished = True
            if tp_parser_finish(self.p) != 0:
                raise MemoryError()
            return self._collect()
        finally:
            self.busy = False

    # A parser is the live state of one stream: copying it would share or
    # duplicate the core's buffers, so it is neither copied nor pickled.
    def __reduce__(self):
        raise TypeError(_NO_COPY % type(self).__name__)

    def __reduce_ex__(self, protocol):
        raise TypeError(_NO_COPY % type(self).__name__)

    def __copy__(self):
        raise TypeError(_NO_COPY % type(self).__name__)

    def __deepcopy__(self, memo):
        raise TypeError(_NO_COPY % type(self).__name__)

    # Every read of core memory goes through _event_at/tp_span_str/_raw_at,
    # which fetch the batch pointers afresh and check bounds, and no Python
    # code runs between fetching a pointer and the last read through it: so
    # Python code that runs while a batch is turned into objects (a host
    # converter, a finalizer run by the garbage collector, another thread)
    # can never make the binding read memory the core has moved or freed.
    cdef inline bint _event_at(self, size_t k, tp_event *e) noexcept:
        cdef size_t n
        cdef const tp_event *ev = tp_parser_events(self.p, &n)
        if k >= n:
            return False
        e[0] = ev[k]
        return True

    cdef str _raw_at(self, size_t start, size_t n):
        """Dropped text: the model's bytes; a piece that is not whole
        UTF-8 (never expected) keeps its bytes as surrogate escapes."""
        if start > tp_parser_output_len(self.p) or n > tp_parser_output_len(self.p) - start:
            raise RuntimeError("parser output changed while it was read")
        try:
            return PyUnicode_DecodeUTF8(<const char *>tp_parser_output(self.p) + start, n, "surrogatepass")
        except UnicodeDecodeError:
            return PyUnicode_DecodeUTF8(<const char *>tp_parser_output(self.p) + start, n, "surrogateescape")

    cdef object _host(self, int call):
        """The host converter, made when first needed and begun for `call`."""
        if self._conv is None:
            if self._compiled is None or self._compiled.host is None:
                return None
            self._conv = self._compiled.host()
        if self._conv_call != call:
            self._conv_call = call
            self._whole = bool(self._conv.begin(self._name))
        return self._conv

    cdef list _collect(self, bint oneshot=False):
        """The batch as events. oneshot: no CallStart/ArgsDelta objects (a
        call's arguments are only built for its CallEnd)."""
        # (the batch is cleared on an error, without a try block's cost)
        return tpb_collect(<tpb_fill>_collect_fill, self, oneshot)

    @cython.final
    cdef int _collect_into(self, tp_batch *b, bint oneshot) except -1:
        """_collect's work: the batch's objects put in `b`."""
        cdef size_t k = 0
        cdef tp_event e
        cdef tp_parser *p = self.p
        cdef str s
        cdef Text t
        cdef Reasoning rs
        cdef CallStart cs
        cdef CallEnd ce
        cdef ParseError pe
        cdef Dropped dr
        cdef Markup mk
        while self._event_at(k, &e):
            k += 1
            if e.type == TP_EV_ARGS:
                if not self._whole:
                    s = tp_span_str(p, e.start, e.len)
                    if oneshot:
                        self._args_push(s)
                    else:
                        self._add_args(b, e.call, s)
            elif e.type == TP_EV_TEXT:
                t = Text.__new__(Text)
                t.text = tp_span_str(p, e.start, e.len)
                tpb_put(b, t)
            elif e.type == TP_EV_CALL_START:
                if e.offset:  # the name, then the model's call id
                    self._name = tp_span_name(p, e.start, <size_t>e.offset)
                    self._id = tp_span_name(p, e.start + <size_t>e.offset, e.len - <size_t>e.offset)
                else:
                    self._name = tp_span_name(p, e.start, e.len)
                    self._id = None
                self._args_reset()
                self.calls_started += 1
                self._whole = False
                if self._whole_names is not None and self._name in self._whole_names:
                    self._host(e.call)
                elif self._conv is not None and self._compiled is None:
                    self._conv_call = e.call
                    self._whole = bool(self._conv.begin(self._name))
                if not oneshot:
                    cs = CallStart.__new__(CallStart)
                    cs.index = e.call
                    cs.name = self._name
                    cs.id = self._id
                    tpb_put(b, cs)
            elif e.type == TP_EV_CALL_END:
                if self._whole:
                    self._whole = False
                    self._args_reset()
                    s = self._conv.end()
                    if oneshot:
                        self._args_push(s)
                    else:
                        self._add_args(b, e.call, s)
                self._conv_call = -1
                ce = CallEnd.__new__(CallEnd)
                ce.index = e.call
                ce.name = self._name
                ce.id = self._id
                ce.arguments = self._args_text()
                self._args_reset()
                tpb_put(b, ce)
            elif e.type == TP_EV_REASONING:
                rs = Reasoning.__new__(Reasoning)
                rs.text = tp_span_str(p, e.start, e.len)
                tpb_put(b, rs)
            elif e.type == TP_EV_RAW_VALUE:
                key = tp_span_str(p, e.start, <size_t>e.offset)
                s = tp_span_str(p, e.start + <size_t>e.offset, e.len - <size_t>e.offset)
                s = self._convert(e.call, key, s)  # Python code: no core pointer held
                if not self._whole:
                    if oneshot:
                        self._args_push(s)
                    else:
                        self._add_args(b, e.call, s)
            elif e.type == TP_EV_DROPPED:
                s = self._raw_at(e.start, e.len)
                if oneshot:  # into its error (parse_all makes the errors)
                    if self._last_error is not None:
                        pe = <ParseError>self._last_error
                        if pe.raw_offset is None:
                            pe.raw_offset = e.offset
                        pe.raw = pe.raw + s
                else:
                    dr = Dropped.__new__(Dropped)
                    dr.index = None if e.call < 0 else e.call
                    dr.offset = e.offset
                    dr.raw = s
                    tpb_put(b, dr)
            elif e.type == TP_EV_MARKUP:
                if self._markup:
                    mk = Markup.__new__(Markup)
                    mk.offset = e.offset
                    mk.raw = self._raw_at(e.start, e.len)
                    tpb_put(b, mk)
            elif e.type == TP_EV_ERROR:
                pe = ParseError.__new__(ParseError)
                pe.index = None if e.call < 0 else e.call
                pe.code = tp_error_name(e.code).decode()
                pe.offset = e.offset
                pe.detail = tp_span_str(p, e.start, e.len)
                pe.raw = ""
                pe.raw_offset = None
                if oneshot:
                    self._last_error = pe
                if e.call >= 0:
                    if oneshot:  # the incomplete call, as streaming showed it
                        self._incomplete(b, e.call)
                    self._args_reset()
                    if self._conv is not None and self._conv_call >= 0:
                        self._conv.reset()
                    self._conv_call = -1
                    self._whole = False
                tpb_put(b, pe)
        return 0

    cdef int _incomplete(self, tp_batch *b, int index) except -1:
        """One-shot: a call that began (CallStart) and ended with an error is
        reported as streaming reported it: its CallStart and the arguments
        sent so far (one ArgsDelta, none when nothing was sent), before the
        error. A cut-off call is never lost one-shot nor made complete."""
        cdef CallStart cs = CallStart.__new__(CallStart)
        cdef ArgsDelta ad
        cdef str s = self._args_text()
        cs.index = index
        cs.name = self._name
        cs.id = self._id
        tpb_put(b, cs)
        if s:
            ad = ArgsDelta.__new__(ArgsDelta)
            ad.index = index
            ad.delta = s
            tpb_put(b, ad)
        return 0

    # A call's arguments are the concatenation of its pieces. Most calls
    # streamed in bursts have one or two pieces: those are kept without a
    # list (two are joined by one concatenation); a list holds them from the
    # third on (joined once, never by repeated concatenation).
    @cython.final
    cdef inline void _args_reset(self) noexcept:
        self._a0 = None
        self._a1 = None
        self._args = None

    @cython.final
    cdef int _args_push(self, str s) except -1:
        if self._a0 is None:
            self._a0 = s
        elif self._a1 is None:
            self._a1 = s
        elif self._args is None:
            self._args = [self._a0, self._a1, s]
        else:
            self._args.append(s)
        return 0

    @cython.final
    cdef str _args_text(self):
        if self._args is not None:
            return "".join(self._args)
        if self._a1 is not None:
            return tp_str_concat(self._a0, self._a1)
        if self._a0 is not None:
            return self._a0
        return ""

    @cython.final
    cdef int _add_args(self, tp_batch *b, int index, str delta) except -1:
        """A streamed piece of call `index`'s arguments: added to the call's
        pieces and to the batch, merged into the batch's last object when
        that is an ArgsDelta of the same call (not yet seen by anyone)."""
        cdef ArgsDelta ad
        cdef PyObject *last
        if not delta:
            return 0
        self._args_push(delta)
        last = tpb_last(b)
        if last != NULL and Py_TYPE(<object>last) == <PyTypeObject *>ArgsDelta \
                and (<ArgsDelta>last).index == index:
            (<ArgsDelta>last).delta = tp_str_concat((<ArgsDelta>last).delta, delta)
            return 0
        ad = ArgsDelta.__new__(ArgsDelta)
        ad.index = index
        ad.delta = delta
        tpb_put(b, ad)
        return 0

    cdef str _convert(self, int call, str key, str raw):
        conv = self._host(call) if self._compiled is not None else self._conv
        if conv is None:  # no typing rules: a value is its raw text
            return _json.dumps(raw, ensure_ascii=False)
        return conv.value(key, raw)


# ---- the standalone API's parser: api.StreamParser's __init__ in C ---------
# api.py binds its format aliases, the schema-typed formats and
# compiled_tools here (_bind_api); ToolsParser.__init__ then does what a
# Python __init__ did (format check, alias, compiled tools, the core's
# setup) without a Python frame or keyword parsing per parser.

cdef dict _API_ALIASES = {}
cdef frozenset _API_TYPED = frozenset()
cdef object _API_COMPILE = None
# (format, tools, tuple(tools), compiled) of the last list compiled here;
# replaced whole, so a reader sees one consistent tuple (the same check as
# api.compiled_tools' own last-list fast path)
cdef tuple _API_LAST = (None, None, (), None)


def _bind_api(dict aliases not None, typed, compile_tools not None):
    """api.py's FORMAT_ALIASES (the dict itself), SCHEMA_TYPED_FORMATS and
    compiled_tools(format, tools) -> CompiledTools, for ToolsParser."""
    global _API_ALIASES, _API_TYPED, _API_COMPILE, _API_LAST
    _API_ALIASES = aliases
    _API_TYPED = frozenset(typed)
    _API_COMPILE = compile_tools
    _API_LAST = (None, None, (), None)


cdef inline bint _same_items(tuple items, tools):
    """`tools` (a list or tuple) holds exactly the objects of `items`."""
    cdef Py_ssize_t i, n = len(items)
    if type(tools) is list:
        if len(<list>tools) != n:
            return False
        for i in range(n):
            if (<list>tools)[i] is not items[i]:
                return False
        return True
    if type(tools) is tuple:
        return tools is items or (len(<tuple>tools) == n and all_same(<tuple>tools, items))
    return False


cdef inline bint all_same(tuple a, tuple b):
    cdef Py_ssize_t i
    for i in range(len(a)):
        if a[i] is not b[i]:
            return False
    return True


cdef class ToolsParser(StreamParser):
    """StreamParser(format, tools=None, **options) of the standalone API
    (api.StreamParser subclasses this): `format` a core name or an alias,
    `tools` tool dicts, SGLang Tool models or names, compiled once per list
    (api.compiled_tools)."""

    def __init__(self, format, tools=None, **options):
        global _API_LAST
        if not isinstance(format, str):
            raise TypeError("format must be a str, not %s" % type(format).__name__)
        if _API_COMPILE is None:
            raise RuntimeError("ToolsParser: use sglang_toolparse.api.StreamParser")
        fmt = _API_ALIASES.get(format, format)
        if tools is None and fmt not in _API_TYPED:
            # every name accepted, nothing typed
            if options or type(fmt) is not str:
                StreamParser.__init__(self, fmt, None, **options)
            else:
                self._setup(fmt, None, False, None, None, None, None, None, None, None, None, None, False)
            return
        # the compiled list (reads and checks `tools` once) holds the names;
        # () keeps "only these tools"
        last = _API_LAST
        if tools is not None and last[1] is tools and last[0] == fmt and _same_items(<tuple>last[2], tools):
            compiled = last[3]
        else:
            compiled = _API_COMPILE(fmt, tools)
            if type(tools) is list or type(tools) is tuple:
                _API_LAST = (fmt, tools, tuple(tools), compiled)
        if options or type(fmt) is not str or type(compiled) is not CompiledTools:
            StreamParser.__init__(self, fmt, None if tools is None else (), compiled=compiled, **options)
        else:
            self._setup(fmt, None if tools is None else (), False, None, None, None, None, None, None, None,
                        None, <CompiledTools>compiled, False)


_NOT_INITED = ("StreamParser.%s: the parser was not initialized "
               "(a subclass whose __init__ does not call super().__init__(), or __new__ without __init__)")
_BUSY = ("StreamParser.%s: the parser is already running a feed() or finish() "
         "(used from two threads at once, or re-entered from its own callback); "
         "a parser belongs to one stream: create one parser per stream")
_NO_COPY = ("a %s cannot be pickled or copied: it is the live state of one stream; "
            "create one parser per stream")


cdef object _limit(value, str what):
    """A limit option: a positive int (not a bool), at most MAX_LIMITS[what]."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be a positive int, not %s" % (what, type(value).__name__))
    v = int(value)
    if v <= 0:
        raise ValueError("%s must be a positive int, got %d" % (what, v))
    if v > MAX_LIMITS[what]:
        raise ValueError("%s must be at most %d, got %d" % (what, MAX_LIMITS[what], v))
    return v


cdef list _encode_tools(tool_names, tuple declared):
    """[(name bytes, [(parameter name bytes, kind)])] from `tool_names` (an
    iterable of str, not a str itself) and `declared`: (option name,
    {tool name: iterable of parameter names} or None, TP_PARAM_* kind)."""
    cdef list out = []
    if tool_names is None:
        return out
    if isinstance(tool_names, (str, bytes, dict)) or not hasattr(tool_names, "__iter__"):
        raise TypeError("tool_names must be an iterable of tool names (str), not %s"
                        % type(tool_names).__name__)
    for what, table, kind in declared:
        if table is not None and not isinstance(table, dict):
            raise TypeError("%s must be a dict, not %s" % (what, type(table).__name__))
    seen = set()
    for name in tool_names:
        if not isinstance(name, str):
            raise TypeError("tool_names: a tool name must be a str, not %s" % type(name).__name__)
        if name in seen:
            raise ValueError("tool_names: duplicate tool name %r" % (name,))
        seen.add(name)
        params = []
        for what, table, kind in declared:
            if not table:
                continue
            for pname in table.get(name, ()):
                if not isinstance(pname, str):
                    raise TypeError("%s: a parameter name must be a str, not %s"
                                    % (what, type(pname).__name__))
                params.append((str(pname).encode("utf-8", "surrogatepass"), kind))
        out.append((str(name).encode("utf-8", "surrogatepass"), params))
    return out


# ---- has a call? (SGLang's has_tool_call, one request's first look) --------

def find_token(str text not None, str token not None, Py_ssize_t start=0):
    """text.find(token, start) (start >= 0). A one-byte-per-character text
    and token are searched by the token's first character (memchr) and a
    compare at each occurrence: CPython's own search for a short string of
    several characters through a text that lacks it reads the text several
    times slower (2 KB of prose: ~1.5 us for `<|` against ~0.05 us)."""
    if start < 0:
        raise ValueError("start must be >= 0")
    return _find_token(text, token, start)


cdef Py_ssize_t _find_token(str text, str token, Py_ssize_t start) except -2:
    """find_token (text and token not None, start >= 0)."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), m = PyUnicode_GET_LENGTH(token)
    cdef const char *s
    cdef const char *t
    cdef const char *hit
    cdef const char *end
    if m == 0 or start > n or PyUnicode_KIND(text) != PyUnicode_1BYTE_KIND \
            or PyUnicode_KIND(token) != PyUnicode_1BYTE_KIND:
        return text.find(token, start)
    if m > n - start:
        return -1
    s = <const char *>PyUnicode_DATA(text)
    t = <const char *>PyUnicode_DATA(token)
    end = s + n - m + 1  # a match starts before this
    hit = s + start
    while hit < end:
        hit = <const char *>memchr(hit, t[0], <size_t>(end - hit))
        if hit == NULL:
            return -1
        if memcmp(hit, t, <size_t>m) == 0:
            return hit - s
        hit += 1
    return -1


cdef Py_ssize_t _utf8_index(const uint8_t *data, Py_ssize_t n, Py_ssize_t chars):
    """Byte offset in UTF-8 `data` of character number `chars` (every byte
    that is not a continuation byte starts one)."""
    cdef Py_ssize_t i = 0
    while i < n:
        if (data[i] & 0xC0) != 0x80:
            if chars == 0:
                return i
            chars -= 1
        i += 1
    return n


cdef inline bytes _utf8_view(str text, const uint8_t **data, Py_ssize_t *n):
    """`text` as the UTF-8 bytes the core reads (*data, *n): the str's own
    buffer (ASCII, or its cached UTF-8), else, for lone surrogates, an
    encoded copy that is returned: the caller holds `text` and what this
    returns while the core reads *data."""
    cdef bytes keep
    if PyUnicode_IS_ASCII(text):
        data[0] = <const uint8_t *>PyUnicode_DATA(text)
        n[0] = PyUnicode_GET_LENGTH(text)
        return None
    try:
        data[0] = <const uint8_t *>PyUnicode_AsUTF8AndSize(text, n)
        return None
    except UnicodeEncodeError:  # lone surrogates
        keep = text.encode("utf-8", "surrogatepass")
        data[0] = <const uint8_t *>keep
        n[0] = len(keep)
        return keep


cdef int _text_differs(tp_parser *p, const uint8_t *data, Py_ssize_t n, Py_ssize_t *at):
    """1 if the batch holds anything but text, or text that is not the
    input's next bytes (data[at:]); advances `at` over the text."""
    cdef size_t k, nev
    cdef const tp_event *ev = tp_parser_events(p, &nev)
    cdef const uint8_t *out = tp_parser_output(p)
    for k in range(nev):
        if ev[k].type != TP_EV_TEXT:
            return 1
        if <size_t>(n - at[0]) < ev[k].len or memcmp(out + ev[k].start, data + at[0], ev[k].len) != 0:
            return 1
        at[0] += <Py_ssize_t>ev[k].len
    return 0


def starts_call(str format not None, text, Py_ssize_t pos=0):
    """True when `format`'s parser, every tool name accepted, reads a tool
    call in `text` (well-formed or not) or gives back other text than its
    input; False when all of it is text. The text before `pos` (where the
    first marker begins, for SGLang's has_tool_call) is fed in one piece,
    the rest in small, then growing pieces, stopping at the first call
    event: a long argument is not read. No event object is built."""
    return _starts_call(format, text, pos)


cdef bint _starts_call(str format, text, Py_ssize_t pos) except -1:
    """starts_call (format not None)."""
    cdef const tp_format *fmt = _find_format(format)
    cdef const uint8_t *data
    cdef Py_ssize_t n, start, end, at, first
    cdef size_t step = 32
    cdef bytes keep
    cdef tp_parser *p
    cdef int found = 0
    if fmt == NULL:
        raise ValueError("unknown format %r; known: %s" % (format, ", ".join(formats())))
    if type(text) is not str:
        if not isinstance(text, str):
            raise TypeError("starts_call() takes a str, not %s" % type(text).__name__)
        text = PyUnicode_FromObject(text)
    if pos < 0 or pos > PyUnicode_GET_LENGTH(text):
        raise ValueError("pos %d is outside the text" % pos)
    keep = _utf8_view(text, &data, &n)
    start = pos if PyUnicode_IS_ASCII(text) else _utf8_index(data, n, pos)
    # `text` (or `keep`) is held by this frame while the core reads `data`
    p = _oneshot_take(fmt)
    try:
        at = 0
        if start > 0:
            if tp_parser_feed(p, data, <size_t>start) != 0:
                raise MemoryError()
            found = _text_differs(p, data, n, &at)
        first = start
        while start < n and not found:
            end = start + <Py_ssize_t>step if <size_t>(n - start) > step else n
            while end < n and (data[end] & 0xC0) == 0x80:  # whole characters
                end += 1
            if tp_parser_feed(p, data + start, <size_t>(end - start)) != 0:
                raise MemoryError()
            found = _text_differs(p, data, n, &at)
            start = end
            if end - first > 512:  # small pieces while a call's header could be read, then growing ones
                step *= 2
        if not found:
            if tp_parser_finish(p) != 0:
                raise MemoryError()
            found = _text_differs(p, data, n, &at) or at != n
        return found != 0
    finally:
        _oneshot_give(p)


# ---- one-shot with every name accepted (SGLang's has_tool_call + parse) -----

# One parser kept for the one-shot looks below (parse_plain, starts_call):
# each takes it reset (tp_parser_reset: its buffers' memory kept, nothing
# allocated per text) unless it is in use (a parse that ran Python code, a
# finalizer or another thread, which parses again): that one gets a parser
# of its own, as every parse did before. Taking and giving back run no
# Python code in between (the GIL makes them one step).
cdef tp_parser *_oneshot_p = NULL
cdef bint _oneshot_busy = False


cdef tp_parser *_oneshot_take(const tp_format *fmt, uint32_t flags=TP_FLAG_ACCEPT_ANY) except NULL:
    """A parser for `fmt` (`flags`: every name accepted unless told): the
    kept one (reset), else a new one; given back with _oneshot_give."""
    global _oneshot_p, _oneshot_busy
    cdef tp_parser *p
    if not _oneshot_busy and _oneshot_p != NULL:
        if tp_parser_reset(_oneshot_p, fmt, NULL, flags) != 0:
            PyMem_Free(_oneshot_p)
            _oneshot_p = NULL
            raise MemoryError()
        _oneshot_busy = True
        return _oneshot_p
    p = <tp_parser *>PyMem_Malloc(sizeof(tp_parser))
    if p == NULL:
        raise MemoryError()
    if tp_parser_init(p, fmt, NULL, flags) != 0:
        PyMem_Free(p)
        raise MemoryError()
    if not _oneshot_busy and _oneshot_p == NULL:  # the first: kept from now on
        _oneshot_p = p
        _oneshot_busy = True
    return p


cdef void _oneshot_give(tp_parser *p) noexcept:
    global _oneshot_busy
    if p == _oneshot_p:
        tp_parser_use_tools(p, NULL)  # (a compiled list it read is not kept alive by it)
        _oneshot_busy = False
    else:
        tp_parser_free(p)
        PyMem_Free(p)



def parse_plain(str format not None, text):
    """One-shot parse of `text` with every tool name accepted, folded
    without event objects, for formats whose values are not typed by the
    tools' schemas: (normal text, calls, changed), calls a list of (index,
    name, arguments, id) of the complete calls, changed True when the
    parse read a call or markup (the text is not the input). Reasoning
    (Harmony's analysis channel) is left out, as the SGLang detectors drop
    it. None when the parse reported anything else (an error, a cut-off
    call): the caller then takes StreamParser.parse_all's events, which
    carry it. Gives what parse_all(text) of StreamParser(format, None)
    gives."""
    return _parse_plain(format, text, None, False)


def parse_typed(str format not None, text, CompiledTools compiled not None, bint forward_unknown=False):
    """parse_plain's fold of a parse with the request's compiled tools (as
    StreamParser(format, (), compiled=compiled, forward_unknown=...)
    parses: calls of undeclared tools refused unless forwarded, values
    typed by the schemas), for the schema-typed formats' one-shot parse:
    (normal text, calls, changed), or None when the parse reported
    anything else (an error, a value the host types, a cut-off call, an
    output that is not UTF-8), and for a list whose calls the host
    converts whole (compiled.whole): the caller then parses by events.
    Gives what parse_all gives."""
    if compiled.whole:
        return None
    try:
        return _parse_plain(format, text, compiled, forward_unknown)
    except UnicodeDecodeError:  # (parse_all reads such output another way)
        return None


cdef object _parse_plain(str format, text, CompiledTools compiled, bint forward):
    """parse_plain (format not None; `compiled`: parse_typed's): the text fed in one batch, then the
    end of the stream, each batch's events folded in turn into the text
    pieces and `calls` ((index, name, arguments, id) of each complete
    call; the open call's name, id and argument pieces in locals). None
    when a batch holds an event this fold does not take (an error, a raw
    value): the caller then parses by events. The parser is this call's
    own (on loan from _oneshot_take): no other code can reach it, so
    Python code run by an allocation here (a finalizer) cannot move the
    memory read."""
    cdef const tp_format *fmt = _find_format(format)
    cdef const uint8_t *data
    cdef const uint8_t *out
    cdef const tp_event *ev
    cdef tp_event e
    cdef Py_ssize_t n, at = 0
    cdef size_t k, nev
    cdef int batch
    cdef bytes keep
    cdef tp_parser *p
    cdef bint changed = False
    cdef list calls = []
    cdef list more_text = None, more_args = None
    cdef object first_text = None, arg = None, name = None, cid = None
    if fmt == NULL:
        raise ValueError("unknown format %r; known: %s" % (format, ", ".join(formats())))
    if type(text) is not str:
        if not isinstance(text, str):
            raise TypeError("parse_plain() takes a str, not %s" % type(text).__name__)
        text = PyUnicode_FromObject(text)
    keep = _utf8_view(text, &data, &n)
    # `text` (or `keep`) is held by this frame while the core reads `data`,
    # and `compiled` (the caller's) while it reads the tools
    if compiled is None:
        p = _oneshot_take(fmt)
    else:
        p = _oneshot_take(fmt, TP_FLAG_FORWARD_UNKNOWN if forward else 0)
        tp_parser_use_tools(p, &compiled.t)
    try:
        for batch in range(2):
            if (tp_parser_feed(p, data, <size_t>n) if batch == 0 else tp_parser_finish(p)) != 0:
                raise MemoryError()
            k = 0
            while True:
                ev = tp_parser_events(p, &nev)
                if k >= nev:
                    break
                e = ev[k]
                out = tp_parser_output(p)
                k += 1
                if e.type == TP_EV_TEXT:
                    if not changed:
                        if <size_t>(n - at) < e.len or memcmp(out + e.start, data + at, e.len) != 0:
                            changed = True
                        else:
                            at += <Py_ssize_t>e.len
                    piece = tp_span_str(p, e.start, e.len)
                    if first_text is None:
                        first_text = piece
                    elif more_text is None:
                        more_text = [first_text, piece]
                    else:
                        more_text.append(piece)
                elif e.type == TP_EV_ARGS:
                    piece = tp_span_str(p, e.start, e.len)
                    if arg is None:
                        arg = piece
                    elif more_args is None:
                        more_args = [arg, piece]
                    else:
                        more_args.append(piece)
                elif e.type == TP_EV_CALL_START:
                    changed = True
                    arg = more_args = None
                    if e.offset:  # the name, then the model's call id
                        name = tp_span_name(p, e.start, <size_t>e.offset)
                        cid = tp_span_name(p, e.start + <size_t>e.offset, e.len - <size_t>e.offset)
                    else:
                        name = tp_span_name(p, e.start, e.len)
                        cid = None
                elif e.type == TP_EV_CALL_END:
                    calls.append((e.call, name, "".join(more_args) if more_args is not None else
                                  arg if arg is not None else "", cid))
                    arg = more_args = None
                elif e.type == TP_EV_REASONING or e.type == TP_EV_MARKUP:  # not text for the user (SGLang drops it)
                    changed = True
                else:
                    return None
    finally:
        _oneshot_give(p)
    if at != n:
        changed = True
    return ("".join(more_text) if more_text is not None else first_text if first_text is not None else ""), \
        calls, changed


# ---- plain model objects, built without validation (result_models.py) ------

cdef tuple _EMPTY = ()


cdef extern from *:
    """
    /* A new, empty object of `type` without object.__new__'s setting up of
     * its __dict__ (the caller sets __dict__ at once): its tp_alloc, when
     * its tp_new is object's and it is not abstract; else None (the caller
     * calls tp_new). tp_alloc zeroes the object, its managed-dict pointers
     * included. */
    static PyObject *tp_bare_alloc(PyObject *type)
    {
        PyTypeObject *t = (PyTypeObject *)type;
        if (t->tp_new != PyBaseObject_Type.tp_new || PyType_HasFeature(t, Py_TPFLAGS_IS_ABSTRACT) ||
            !t->tp_alloc)
            Py_RETURN_NONE;
        return t->tp_alloc(t, 0);
    }
    """
    object tp_bare_alloc(object type)


@cython.final
cdef class SlotModel:
    """Makes objects of a class whose whole state is four slots (pydantic
    v2's BaseModel: `__dict__`, the set of fields given, extra, private):
    SlotModel(cls, slot_descriptors, fields)(*values) is cls.__new__(cls)
    with __dict__ = dict(zip(fields, values)), the fields set = set(fields),
    extra and private None, each set through the slot's own descriptor,
    as result_models' Python builder does. The caller checks that this is
    the state the class's validating constructor gives (no SGLang or
    pydantic import here)."""
    cdef object cls
    cdef object d_dict, d_fields, d_extra, d_private
    cdef descrsetfunc s_dict, s_fields, s_extra, s_private
    cdef newfunc new
    cdef tuple fields
    cdef dict blank  # {field: None, ...}: each object's __dict__ is a copy (its key table copied whole)
    cdef set names  # set(fields): each object's fields set is a copy

    def __init__(self, cls, tuple descriptors not None, tuple fields not None):
        cdef object d
        if not isinstance(cls, type):
            raise TypeError("cls must be a class, not %s" % type(cls).__name__)
        if len(descriptors) != 4:
            raise ValueError("four slot descriptors: __dict__, fields set, extra, private")
        for d in descriptors:
            if Py_TYPE(d).tp_descr_set == NULL:
                raise TypeError("%r is not a settable descriptor" % (d,))
        for d in fields:
            if type(d) is not str:
                raise TypeError("field names are str")
        if (<PyTypeObject *>cls).tp_new == NULL:
            raise TypeError("%s cannot be instantiated" % (cls,))
        self.cls = cls
        self.new = (<PyTypeObject *>cls).tp_new
        self.d_dict, self.d_fields, self.d_extra, self.d_private = descriptors
        self.s_dict = Py_TYPE(self.d_dict).tp_descr_set
        self.s_fields = Py_TYPE(self.d_fields).tp_descr_set
        self.s_extra = Py_TYPE(self.d_extra).tp_descr_set
        self.s_private = Py_TYPE(self.d_private).tp_descr_set
        self.fields = fields
        self.blank = dict.fromkeys(fields)
        if len(self.blank) != len(fields):
            raise ValueError("field names repeat: %r" % (fields,))
        self.names = set(fields)

    def __call__(self, *values):
        if len(values) != len(self.fields):
            raise TypeError("%d values for the fields %r" % (len(values), self.fields))
        return self._make(values)

    cdef object _make(self, tuple values):
        """__call__ (len(values) == len(self.fields), checked by the caller)."""
        cdef Py_ssize_t i, n = len(self.fields)
        cdef dict d = PyDict_Copy(self.blank)
        for i in range(n):
            d[<str>self.fields[i]] = values[i]
        obj = tp_bare_alloc(self.cls)  # (its __dict__ is set next: object.__new__ would begin one)
        if obj is None:
            obj = self.new(<type>self.cls, <PyObject *>_EMPTY, NULL)
        self.s_dict(self.d_dict, obj, d)
        self.s_fields(self.d_fields, obj, PySet_New(self.names))
        self.s_extra(self.d_extra, obj, None)
        self.s_private(self.d_private, obj, None)
        return obj


cdef object _model(model, tuple values):
    """model(*values): a SlotModel's in C, else a call."""
    if type(model) is SlotModel and len(values) == len((<SlotModel>model).fields):
        return (<SlotModel>model)._make(values)
    return model(*values)


cdef int _declared(list tools, name) except -2:
    """Whether a tool of `tools` (tool models) has the non-empty str name
    `name` (`.function.name`), read up to the first that has it; -1 when a
    tool read before it is a dict or has no such name (the caller's
    general path decides)."""
    for tool in tools:
        if type(tool) is dict:
            return -1
        tname = getattr(getattr(tool, "function", None), "name", None)
        if type(tname) is not str or not tname:
            return -1
        if tname == name:
            return 1
    return 0


def plain_result(tuple found not None, tools, item, result):
    """SGLang's detect_and_parse result for a reply whose parse_plain fold
    `found` ((text, calls, changed), calls not empty) the request's tools
    take as it is: `tools` a list of tool models; every call named in that
    list by the model's own `NAME:IDX` id (or no id), as declares_all
    decides it: one or two calls each looked up in the list up to the tool
    that names it (every tool before it a model with a non-empty str
    `.function.name`), more in the set of all names (every tool such a
    model). Then result(text, [item(index, name, arguments), ...]); None
    when any of that does not hold (the caller's general path decides)."""
    return _plain_result(found, tools, item, result)


cdef object _plain_result(tuple found, tools, item, result):
    """plain_result (found not None)."""
    cdef list calls = found[1]
    cdef list items
    cdef set names
    cdef tuple call
    if type(tools) is not list or type(calls) is not list or not calls:
        return None
    for call in calls:
        cid = call[3]
        if cid is not None and (type(cid) is not str or ":" not in <str>cid):
            return None  # a bare counter: its tool is inferred from the tools
    if len(calls) <= 2:
        for call in calls:
            if _declared(<list>tools, call[1]) != 1:
                return None
    else:
        names = set()
        for tool in tools:
            if type(tool) is dict:
                return None
            name = getattr(getattr(tool, "function", None), "name", None)
            if type(name) is not str or not name:
                return None
            names.add(name)
        for call in calls:
            if call[1] not in names:
                return None
    items = []
    for call in calls:
        items.append(_model(item, (call[0], call[1], call[2])))
    return _model(result, (found[0], items))


cdef Py_ssize_t _first_marker(str text, str lead, tuple markers, Py_ssize_t i) except -2:
    """Where the first of `markers` begins in `text`, -1 if none: `i` is
    where `lead` (what they all start with) was first found; each hit of
    it is checked. Without a lead, each marker is searched."""
    cdef Py_ssize_t first = -1, j
    if not lead:
        for m in markers:
            j = _find_token(text, <str>m, 0)
            if j >= 0 and (first < 0 or j < first):
                first = j
        return first
    if len(markers) == 1:
        return i
    while i >= 0:
        if text.startswith(markers, i):
            return i
        i = _find_token(text, lead, i + 1)
    return -1


def plain_look(tuple cfg not None, str text not None, plain, starts):
    """The SGLang adapter's has_tool_call look at `text` (what its
    docstring says), as the tuple it keeps: (text, has a call, parsing
    gives back all of text as text, parse_plain's fold or None, or False:
    the fold was not taken). `cfg`: the detector's (format, lead of its
    markers, several markers, untyped, markers, token lead, schema token:
    for a schema-typed format whose replies read the schemas only where
    this token shows, a reply without it is looked at as an untyped
    format's, else None); `plain` and
    `starts` are called as parse_plain and starts_call (these functions
    themselves are run without a call; the adapter passes its module's
    names, which a test may wrap to count the parses)."""
    cdef str fmt, lead, token_lead
    cdef object schema_token
    cdef bint several, untyped, has
    cdef tuple markers
    cdef Py_ssize_t pos
    fmt, lead, several, untyped, markers, token_lead, schema_token = cfg
    pos = _find_token(text, lead, 0) if lead else 0  # one search, in C, for most texts
    if not untyped and schema_token is not None and pos >= 0 and _find_token(text, <str>schema_token, pos) < 0:
        # nothing after the first marker reads a schema: the tools change
        # only which names are accepted (K2 Horizon's JSON dialect)
        untyped = True
    # (the untyped formats' parse below shows a call without a search for
    # each marker, unless the markers share no lead to search for)
    if pos >= 0 and several and (not untyped or not lead):
        pos = _first_marker(text, lead, markers, pos)
    if pos < 0:  # no call can start; plain text unless a stray token (an end tag) is dropped
        return (text, False, _find_token(text, token_lead, 0) < 0, None)
    if not untyped:
        # the core (no tools: only the kinds of events matter), the text after
        # the first marker in small pieces until a call shows: a parse gives
        # the same events for any split, so stopping there is exact, and a
        # long argument is not read here as well as by detect_and_parse
        has = _starts_call(fmt, text, pos) if starts is starts_call else starts(fmt, text, pos)
        return (text, has, not has, None)  # not has: all of it came back as text
    # the whole parse, every name accepted, kept: detect_and_parse takes it
    # when the request's tools would not change it. Folded in C
    # (parse_plain) unless it reports more than text and complete calls;
    # those have a marker: no search for one
    found = _parse_plain(fmt, text, None, False) if plain is parse_plain else plain(fmt, text)
    if found is not None and found[1]:
        return (text, True, False, found)
    if several and not text.startswith(markers, pos) and _first_marker(text, lead, markers, pos) < 0:
        # no call can start
        if found is None:  # (a stray token reported: detect_and_parse parses it with the tools, once)
            return (text, False, False, False)
        return (text, False, not found[2], found)  # (a stray token taken out: detect_and_parse takes it)
    if found is None:  # an error (or reasoning, a typed value): a call whose
        # events the request's tools give (detect_and_parse)
        return (text, True, False, None)
    has = found[2]
    return (text, has, not has, found)


def plain_done(tuple seen not None, tools, item, result, incomplete):
    """detect_and_parse's result from plain_look's `seen` for its text,
    where that look decides it: all of the text is text (not parsed), the
    fold holds no call (the text less its markup), or plain_result takes
    the fold's calls; None otherwise (the adapter's general path). The
    ContextVar `incomplete`, when the result comes from a fold and it is
    true, is set False (the reply holds no cut-off call)."""
    found = seen[3]
    if found is None:
        if seen[2]:  # known to be all text: not parsed
            return _model(result, (seen[0], []))
        return None
    if type(found) is not tuple:
        return None
    if not found[1]:  # no call: the text less its markup
        done = _model(result, (found[0], []))
    else:
        done = _plain_result(<tuple>found, tools, item, result)
        if done is None:
            return None
    if get_value(incomplete):  # (set only when it changes: a set costs more than a read)
        PyContextVar_Set(incomplete, False)
    return done


# ---- the JSON normalizer's own speed, for the bench (issue 24.2) -------------

def json_ns_per_byte(bytes doc not None, Py_ssize_t reps=1000):
    """CPU nanoseconds per byte (this thread's clock) the core's JSON
    normalizer takes to read `doc`, one complete JSON value (a tool call's
    arguments), and write its canonical text: `reps` times in C, the
    document fed whole each time to a reset scanner and an emptied output
    buffer (what fuzz/json_bench.c measures). For `bench`; ValueError for
    a document that is not one complete JSON value (whitespace may follow
    it) or `reps` outside 1..10,000,000."""
    cdef const uint8_t *data = doc
    cdef size_t n = <size_t>len(doc), used, i, k
    cdef tp_json *j
    cdef tp_buf out
    cdef timespec t0, t1
    cdef bint bad
    if reps < 1 or reps > 10_000_000:
        raise ValueError("reps must be 1..10000000, not %d" % reps)
    j = <tp_json *>PyMem_Calloc(1, sizeof(tp_json))  # (zeroed: tp_json.h)
    if j == NULL:
        raise MemoryError()
    tp_buf_init(&out, 0)
    try:
        tp_json_init(j, 0, 512)
        used = tp_json_feed(j, data, n, &out)
        tp_json_end(j, &out)
        bad = tp_json_failed(j) or not tp_json_done(j)
        for k in range(used, n):
            if data[k] not in b" \t\r\n":
                bad = True
        if bad:
            raise ValueError("not one complete JSON value: %r" % doc[:80])
        with nogil:
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0)
            for i in range(<size_t>reps):
                out.len = 0
                tp_json_init(j, 0, 512)
                tp_json_feed(j, data, n, &out)
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1)
        if tp_json_failed(j):  # (an output buffer that could not grow)
            raise MemoryError()
        return ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (<double>reps * n)
    finally:
        tp_buf_free(&out)
        tp_json_free(j)
        PyMem_Free(j)


def tool_entries(tools):
    """per_request's read of a request's tools for its cache key, in one
    pass in C: (names, [(name, parameters), ...]) of SGLang-style tool
    models (`.function.name` a non-empty str, `.function.parameters` a
    dict or None), none a dict or a str, no name repeated; None for
    anything else (a list only)."""
    cdef list names = [], entries = []
    if type(tools) is not list:
        return None
    for tool in <list>tools:
        if type(tool) is dict or isinstance(tool, str):
            return None
        fn = getattr(tool, "function", None)
        name = getattr(fn, "name", None)
        params = getattr(fn, "parameters", None)
        if type(name) is not str or not name or (params is not None and type(params) is not dict):
            return None
        names.append(name)
        entries.append((name, params))
    if len(set(names)) != len(names):
        return None
    return tuple(names), entries


cdef extern from "Python.h":
    PyTypeObject PyUnicode_Type, PyLong_Type, PyFloat_Type, PyBool_Type, PyDict_Type, PyList_Type, PyTuple_Type
    PyObject *Py_None
    double PyFloat_AS_DOUBLE(PyObject *)
    Py_ssize_t PyList_GET_SIZE(PyObject *)
    PyObject *PyList_GET_ITEM(PyObject *, Py_ssize_t)
    Py_ssize_t PyTuple_GET_SIZE(PyObject *)
    PyObject *PyTuple_GET_ITEM(PyObject *, Py_ssize_t)
    Py_ssize_t PyDict_GET_SIZE "PyDict_Size" (PyObject *)
    int PyDict_Next_p "PyDict_Next" (PyObject *, Py_ssize_t *, PyObject **, PyObject **)
    int PyObject_RichCompareBool(PyObject *, PyObject *, int) except -1
    int Py_EQ


cdef extern from *:
    """
    /* a == b for two exact str objects: the same length, kind and code
     * units (as CPython's own unicode_compare_eq; a str is always in the
     * narrowest kind that holds it), without PyUnicode_Compare's ordering */
    static int tp_str_eq(PyObject *a, PyObject *b)
    {
        if (a == b)
            return 1;
    #if PY_VERSION_HEX < 0x030C0000
        if (!PyUnicode_IS_READY(a) || !PyUnicode_IS_READY(b)) /* a legacy str: CPython compares it */
            return PyObject_RichCompareBool(a, b, Py_EQ);
    #endif
        Py_ssize_t n = PyUnicode_GET_LENGTH(a);
        if (n != PyUnicode_GET_LENGTH(b) || PyUnicode_KIND(a) != PyUnicode_KIND(b))
            return 0;
        return memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), (size_t)n * PyUnicode_KIND(a)) == 0;
    }
    """
    int tp_str_eq(PyObject *a, PyObject *b) except -1


cdef int _same(PyObject *a, PyObject *b, int depth) except -1:
    """same_content on borrowed references: no Python code runs (only the
    exact built-in types are compared), so nothing read can change."""
    cdef PyTypeObject *t = Py_TYPE(<object>a)
    cdef Py_ssize_t i, n, pa = 0, pb = 0
    cdef PyObject *ka
    cdef PyObject *va
    cdef PyObject *kb
    cdef PyObject *vb
    cdef double x, y
    if t != Py_TYPE(<object>b):
        return 0
    if t == &PyUnicode_Type:
        return tp_str_eq(a, b)
    if t == &PyDict_Type:
        if a == b:
            return 1
        n = PyDict_GET_SIZE(a)
        if n != PyDict_GET_SIZE(b) or depth >= 256:
            return 0
        while PyDict_Next_p(a, &pa, &ka, &va):
            if not PyDict_Next_p(b, &pb, &kb, &vb):
                return 0
            if not _same(ka, kb, depth + 1) or not _same(va, vb, depth + 1):
                return 0
        return 1
    if t == &PyList_Type or t == &PyTuple_Type:
        if a == b:
            return 1
        if t == &PyList_Type:
            n = PyList_GET_SIZE(a)
            if n != PyList_GET_SIZE(b) or depth >= 256:
                return 0
            for i in range(n):
                if not _same(PyList_GET_ITEM(a, i), PyList_GET_ITEM(b, i), depth + 1):
                    return 0
            return 1
        n = PyTuple_GET_SIZE(a)
        if n != PyTuple_GET_SIZE(b) or depth >= 256:
            return 0
        for i in range(n):
            if not _same(PyTuple_GET_ITEM(a, i), PyTuple_GET_ITEM(b, i), depth + 1):
                return 0
        return 1
    if t == &PyLong_Type:
        return PyObject_RichCompareBool(a, b, Py_EQ)
    if t == &PyFloat_Type:
        x = PyFloat_AS_DOUBLE(a)
        y = PyFloat_AS_DOUBLE(b)
        return 1 if memcmp(&x, &y, sizeof(double)) == 0 else 0
    if t == &PyBool_Type or a == Py_None:
        return 1 if a == b else 0
    return 0


def same_content(a, b):
    """Whether `a` and `b` are the same JSON-like content, strictly: the
    same types (bool is not int, a subclass is not its base), dicts with
    equal keys in the same order, lists and tuples item by item, floats
    bit for bit; any other type (or nesting past 256 levels) is not. What
    equal marshal bytes of the two would say, without writing them (a
    request's tool schemas against a kept copy: per_request)."""
    return _same(<PyObject *>a, <PyObject *>b, 0) == 1
