/* The log scanner's per-candidate byte work, in C: where each candidate line starts and
 * ends, how many lines lie between candidates, a line's text, where a line ends, the
 * lines a decoder lets pass by their first bytes, and the newlines of a span.  And the
 * objects of slotted dataclasses the parent makes for every event it takes back, and the
 * probing and growth of the tables of name fingerprints (timeline/distinct.py's _Shard,
 * whose Python twins are there) (below).
 *
 * The fast path (recompile_doctor/parsers/_scan.py) asks for these once per candidate line.
 * Done with bytearray.find, rfind and count, each is a method call that parses its
 * arguments as a tuple: some 2,500 instructions, against a few dozen for the search
 * itself.  These functions do the same work in one call per buffer (line_spans) or per
 * line (line_text).  They are optional: recompile_doctor/parsers/_spans.py holds the
 * Python they replace, which the tests hold them to, byte for byte, and which runs
 * wherever this module is not built (no C compiler) or RECOMPILE_DOCTOR_NATIVE=0.
 */
#define PY_SSIZE_T_CLEAN
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memrchr */
#endif
#include <Python.h>
#include <string.h>
#include <structmember.h> /* T_OBJECT_EX, READONLY */

#include "_native_codec.h" /* the workers' event codec (_event_codec.py's in C) */
#include "_native_fields.h" /* the fields of a decoder's most frequent messages */
#include "_native_json.h"  /* a report's JSON text (json_text.py's _text_py in C) */
#include "_native_marshal.h" /* marshal's bytes of plain values (the workers', the spool's) */
#include "_native_pack.h"    /* a worker's batch of events packed (_event_codec.py) */
#include "_native_slots.h" /* slot plans and named tuples, shared with the parts above */

static int
get_index(PyObject *obj, const char *what, Py_ssize_t *out)
{
    Py_ssize_t v = PyLong_AsSsize_t(obj);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (v < 0) {
        PyErr_Format(PyExc_ValueError, "%s must not be negative", what);
        return -1;
    }
    *out = v;
    return 0;
}

/* The start of every function here: the number of arguments (usage: the message if it is
 * wrong), the last of them of the type last (unless NULL), args[1..] read as n non-negative
 * indices into idx (names: theirs, for errors), the second of them an end, no further than
 * the data, and args[0]'s bytes (release the view when done) */
static int
open_args(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t want, const char *usage,
          PyTypeObject *last, const char *const *names, int n, Py_ssize_t *idx,
          Py_buffer *view)
{
    if (nargs != want) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    if (last != NULL && !PyObject_TypeCheck(args[want - 1], last)) {
        PyErr_Format(PyExc_TypeError, "%s: the last argument must be %s", usage, last->tp_name);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (get_index(args[1 + i], names[i], &idx[i]) < 0) {
            return -1;
        }
    }
    if (PyObject_GetBuffer(args[0], view, PyBUF_SIMPLE) < 0) {
        return -1;
    }
    if (idx[1] > view->len) {
        idx[1] = view->len;
    }
    return 0;
}

static int
append_index(PyObject *list, Py_ssize_t v)
{
    PyObject *o = PyLong_FromSsize_t(v);
    if (o == NULL) {
        return -1;
    }
    int r = PyList_Append(list, o);
    Py_DECREF(o);
    return r;
}

static Py_ssize_t
count_newlines(const char *p, Py_ssize_t n)
{
    Py_ssize_t k = 0;
    const char *stop = p + n;
    while (p < stop) {
        const char *nl = memchr(p, '\n', (size_t)(stop - p));
        if (nl == NULL) {
            break;
        }
        k++;
        p = nl + 1;
    }
    return k;
}

/* where the line starting at buf[pos] ends: its newline, or end */
static Py_ssize_t
line_end_at(const char *buf, Py_ssize_t pos, Py_ssize_t end)
{
    const char *nl = pos < end ? memchr(buf + pos, '\n', (size_t)(end - pos)) : NULL;
    return nl == NULL ? end : nl - buf;
}

static const char *
last_newline(const char *p, Py_ssize_t n)
{
#ifdef __GLIBC__
    return n > 0 ? memrchr(p, '\n', (size_t)n) : NULL;
#else
    while (n > 0) {
        n--;
        if (p[n] == '\n') {
            return p + n;
        }
    }
    return NULL;
#endif
}

/* line_spans(data, start, end, cands) -> list[int]
 *
 * For each line of data[start:end] holding a position of cands (ascending; positions
 * before start are passed over), three numbers: the line's start, its end (its newline,
 * or end), and how many newlines lie between the previous such line's end + 1 (start for
 * the first) and this line's start.  A line holding several positions is given once. */
static PyObject *
line_spans(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    static const char *const names[] = {"start", "end"};
    Py_ssize_t idx[2];
    Py_buffer view;
    if (open_args(args, nargs, 4, "line_spans(data, start, end, cands)", &PyList_Type, names,
                  2, idx, &view) < 0) {
        return NULL;
    }
    Py_ssize_t start = idx[0], end = idx[1];
    PyObject *cands = args[3];
    const char *buf = (const char *)view.buf;
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    Py_ssize_t pos = start;
    Py_ssize_t n = PyList_GET_SIZE(cands);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t p;
        if (get_index(PyList_GET_ITEM(cands, i), "a candidate", &p) < 0) {
            goto fail;
        }
        if (p < pos) {
            continue;
        }
        if (p >= end) {
            break;
        }
        const char *nl = last_newline(buf + pos, p - pos);
        Py_ssize_t s = nl == NULL ? pos : (nl - buf) + 1;
        Py_ssize_t gap = count_newlines(buf + pos, s - pos);
        Py_ssize_t e = line_end_at(buf, p, end);
        if (append_index(out, s) < 0 || append_index(out, e) < 0 ||
            append_index(out, gap) < 0) {
            goto fail;
        }
        pos = e + 1;
    }
    PyBuffer_Release(&view);
    return out;
fail:
    Py_DECREF(out);
    PyBuffer_Release(&view);
    return NULL;
}

/* line_text(data, a, b, limit) -> str: the text of the physical line data[a:b] (0 <= a <=
 * b <= len(data)), cut at limit bytes, one trailing CR removed, bad bytes replaced */
static PyObject *
line_text(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    static const char *const names[] = {"a", "b", "limit"};
    Py_ssize_t idx[3];
    Py_buffer view;
    if (open_args(args, nargs, 4, "line_text(data, a, b, limit)", NULL, names, 3, idx,
                  &view) < 0) {
        return NULL;
    }
    Py_ssize_t a = idx[0], b = idx[1], limit = idx[2];
    if (a > b) {
        a = b;
    }
    if (b - a > limit) {
        b = a + limit;
    }
    const char *buf = (const char *)view.buf;
    if (b > a && buf[b - 1] == '\r') {
        b--;
    }
    PyObject *text = PyUnicode_DecodeUTF8(buf + a, b - a, "replace");
    PyBuffer_Release(&view);
    return text;
}

/* line_end(data, pos, end) -> int: where the line starting at pos ends (its newline, or
 * end) */
static PyObject *
line_end(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    static const char *const names[] = {"pos", "end"};
    Py_ssize_t idx[2];
    Py_buffer view;
    if (open_args(args, nargs, 3, "line_end(data, pos, end)", NULL, names, 2, idx,
                  &view) < 0) {
        return NULL;
    }
    Py_ssize_t e = line_end_at((const char *)view.buf, idx[0], idx[1]);
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(e);
}

/* skip_prefixed(data, pos, end, prefix) -> (pos, lines): past the lines from pos on that
 * start with prefix (bytes), and how many they are */
static PyObject *
skip_prefixed(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    static const char *const names[] = {"pos", "end"};
    Py_ssize_t idx[2];
    Py_buffer view;
    if (open_args(args, nargs, 4, "skip_prefixed(data, pos, end, prefix)", &PyBytes_Type,
                  names, 2, idx, &view) < 0) {
        return NULL;
    }
    Py_ssize_t pos = idx[0], end = idx[1];
    const char *prefix = PyBytes_AS_STRING(args[3]);
    Py_ssize_t plen = PyBytes_GET_SIZE(args[3]);
    const char *buf = (const char *)view.buf;
    Py_ssize_t lines = 0;
    while (pos < end && end - pos >= plen && memcmp(buf + pos, prefix, (size_t)plen) == 0) {
        Py_ssize_t e = line_end_at(buf, pos, end);
        pos = e == end ? end : e + 1;
        lines++;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(nn)", pos, lines);
}

/* take_prefixed(data, pos, end, prefix, stop, limit) -> (pos, bodies): past the lines from
 * pos on that start with prefix (bytes) and go on with anything but stop (bytes), none
 * longer than limit bytes; for each, its text after the prefix without the CRs that end
 * it, bad bytes replaced (the text line_text gives, stripped of its trailing CRs, after
 * the prefix) */
static PyObject *
take_prefixed(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    static const char *const names[] = {"pos", "end"};
    Py_ssize_t idx[2];
    Py_buffer view;
    if (nargs != 6 || !PyBytes_Check(args[3]) || !PyBytes_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError,
                        "take_prefixed(data, pos, end, prefix: bytes, stop: bytes, limit)");
        return NULL;
    }
    Py_ssize_t limit;
    if (get_index(args[5], "limit", &limit) < 0) {
        return NULL;
    }
    if (open_args(args, nargs, 6, "take_prefixed(data, pos, end, prefix, stop, limit)", NULL,
                  names, 2, idx, &view) < 0) {
        return NULL;
    }
    Py_ssize_t pos = idx[0], end = idx[1];
    const char *prefix = PyBytes_AS_STRING(args[3]);
    Py_ssize_t plen = PyBytes_GET_SIZE(args[3]);
    const char *stop = PyBytes_AS_STRING(args[4]);
    Py_ssize_t slen = PyBytes_GET_SIZE(args[4]);
    const char *buf = (const char *)view.buf;
    PyObject *bodies = PyList_New(0);
    if (bodies == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    while (pos < end && end - pos >= plen && memcmp(buf + pos, prefix, (size_t)plen) == 0) {
        Py_ssize_t e = line_end_at(buf, pos, end);
        Py_ssize_t a = pos + plen;
        if (e - pos > limit || (e - a >= slen && memcmp(buf + a, stop, (size_t)slen) == 0)) {
            break; /* a line to decode: cut, or the stop */
        }
        Py_ssize_t b = e;
        while (b > a && buf[b - 1] == '\r') {
            b--;
        }
        /* (a prefix holding a newline ends past its line: no text) */
        PyObject *text = PyUnicode_DecodeUTF8(buf + a, b > a ? b - a : 0, "replace");
        if (text == NULL || PyList_Append(bodies, text) < 0) {
            Py_XDECREF(text);
            Py_DECREF(bodies);
            PyBuffer_Release(&view);
            return NULL;
        }
        Py_DECREF(text);
        pos = e == end ? end : e + 1;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(nN)", pos, bodies);
}

/* literal_positions(data, end, literals) -> list[int]
 *
 * Where a line of data[:end] (whole lines) holding one of literals (bytes, at least 2 long,
 * no newline) begins to hold it: the first such place of each such line, ascending (the
 * lines hyperscan's matches or a find per literal give; _scan.NativeMatcher).  After a
 * line's first literal the scan goes on at the next line.
 *
 * One literal: memmem.  Several: Wu and Manber's scan over 2-byte blocks.  The window is
 * as long as the shortest literal (m bytes, at most 256); the block of its last 2 bytes
 * tells how far the window may move on without passing over a literal's start (m - 1 for a
 * block in no literal's first m bytes).  Where it may not move, the literals whose first m
 * bytes end with that block are compared in place.  The table is made at each call (65,536
 * bytes: microseconds, for megabytes scanned).  (Blocks of 3 bytes hashed to 16 bits were
 * slower on every format's log: a multiplication a step, and no longer moves.) */
#define LITERALS_MOST 256
static inline unsigned
block_at(const unsigned char *p)
{
    return p[0] | ((unsigned)p[1] << 8);
}

/* The tables of Wu and Manber's scan of the n literals lit (each m or more long, m >= 2):
 * shift[block] (65,536 of them), how far a window of m bytes ending in that block may move
 * without passing over a literal's start, and last[k], the block ending literal k's first
 * m bytes (where shift is 0, the literals to compare in place). */
static void
wm_tables(unsigned char *shift, const unsigned char *const *lit, Py_ssize_t n, Py_ssize_t m,
          unsigned *last)
{
    memset(shift, (int)(m - 1), 65536);
    for (Py_ssize_t k = 0; k < n; k++) {
        for (Py_ssize_t q = 1; q < m; q++) {
            unsigned blk = block_at(lit[k] + q - 1);
            if (shift[blk] > m - 1 - q) {
                shift[blk] = (unsigned char)(m - 1 - q);
            }
        }
        last[k] = block_at(lit[k] + m - 2);
    }
}

static PyObject *
literal_positions(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    const char *usage = "literal_positions(data, end, literals)";
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, usage);
        return NULL;
    }
    Py_ssize_t end;
    if (get_index(args[1], "end", &end) < 0) {
        return NULL;
    }
    PyObject *lits = args[2];
    if (!PyTuple_Check(lits) || PyTuple_GET_SIZE(lits) == 0 ||
        PyTuple_GET_SIZE(lits) > LITERALS_MOST) {
        PyErr_Format(PyExc_TypeError, "%s: literals must be a tuple of 1 to %d bytes", usage,
                     LITERALS_MOST);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(lits);
    const char *lit[LITERALS_MOST];
    Py_ssize_t len[LITERALS_MOST];
    Py_ssize_t m = PY_SSIZE_T_MAX;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *b = PyTuple_GET_ITEM(lits, k);
        if (!PyBytes_Check(b) || PyBytes_GET_SIZE(b) < 2 ||
            memchr(PyBytes_AS_STRING(b), '\n', (size_t)PyBytes_GET_SIZE(b)) != NULL) {
            PyErr_Format(PyExc_ValueError, "%s: a literal must be bytes, 2 or more, no newline",
                         usage);
            return NULL;
        }
        lit[k] = PyBytes_AS_STRING(b);
        len[k] = PyBytes_GET_SIZE(b);
        m = Py_MIN(m, len[k]);
    }
    m = Py_MIN(m, 256);
    unsigned char *shift = NULL;
    unsigned last[LITERALS_MOST];
    if (n > 1) {
        shift = PyMem_Malloc(65536);
        if (shift == NULL) {
            return PyErr_NoMemory();
        }
        wm_tables(shift, (const unsigned char *const *)lit, n, m, last);
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        PyMem_Free(shift);
        return NULL;
    }
    if (end > view.len) {
        end = view.len;
    }
    const char *buf = (const char *)view.buf;
    const unsigned char *u = (const unsigned char *)view.buf;
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        goto done;
    }
    Py_ssize_t i = m - 1; /* the window's last byte (several literals) */
    Py_ssize_t from = 0;  /* where to look next (one literal) */
    for (;;) {
        Py_ssize_t at;
        if (shift == NULL) {
            const char *hit = end - from >= len[0]
                                  ? memmem(buf + from, (size_t)(end - from), lit[0], (size_t)len[0])
                                  : NULL;
            if (hit == NULL) {
                break;
            }
            at = hit - buf;
        }
        else {
            if (i >= end) {
                break;
            }
            unsigned blk = block_at(u + i - 1);
            unsigned s = shift[blk];
            if (s != 0) {
                i += s;
                continue;
            }
            at = i - m + 1;
            int found = 0;
            for (Py_ssize_t k = 0; k < n; k++) {
                if (last[k] == blk && len[k] <= end - at &&
                    memcmp(buf + at, lit[k], (size_t)len[k]) == 0) {
                    found = 1;
                    break;
                }
            }
            if (!found) {
                i += 1;
                continue;
            }
        }
        if (append_index(out, at) < 0) {
            Py_CLEAR(out);
            goto done;
        }
        const char *nl = memchr(buf + at, '\n', (size_t)(end - at));
        if (nl == NULL) {
            break;
        }
        from = (nl - buf) + 1; /* (the next line) */
        i = from + m - 1;
    }
done:
    PyBuffer_Release(&view);
    PyMem_Free(shift);
    return out;
}

/* literal_mask(text, literals) -> int
 *
 * Which of literals (a tuple of at most 64 ASCII strings, each 2 or more long) occur in the
 * str text: bit k set where `literals[k] in text` is true.  A decoder's message tests, all
 * in one pass, where it tested a message for one literal after another, a search of the
 * whole message each (5.5 searches of about 400 instructions a JAX message, 15 for one
 * that none names).  The scan is literal_positions' (Wu and Manber's over 2-byte blocks, a
 * window as long as the shortest literal), each place where literals may start compared
 * with those not found yet, until all are.  Characters of two or four bytes are read as
 * they are (a block holding one above 127 is in no literal).  The tables are of the
 * literals last given, kept with them (a decoder gives the same each time; compiled code
 * may box its constant tuple anew for each call, of the same strings). */
#define MASK_MOST 64
static PyObject *mask_of = NULL; /* the tuple the tables are of (held: its strings too) */
static unsigned char *mask_shift = NULL; /* 65,536: how far a window ending in a block moves */
static unsigned mask_last[MASK_MOST];    /* each literal's block ending its first m chars */
static const unsigned char *mask_lit[MASK_MOST];
static Py_ssize_t mask_len[MASK_MOST];
static Py_ssize_t mask_n = 0, mask_m = 2;

/* whether lits holds the very strings of the tuple the tables are of */
static int
same_literals(PyObject *lits)
{
    if (mask_of == NULL || !PyTuple_CheckExact(lits) ||
        PyTuple_GET_SIZE(lits) != PyTuple_GET_SIZE(mask_of)) {
        return 0;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(lits); k++) {
        if (PyTuple_GET_ITEM(lits, k) != PyTuple_GET_ITEM(mask_of, k)) {
            return 0;
        }
    }
    return 1;
}

static int
mask_tables(PyObject *lits, const char *usage)
{
    if (lits == mask_of || same_literals(lits)) {
        return 0;
    }
    if (!PyTuple_CheckExact(lits) || PyTuple_GET_SIZE(lits) > MASK_MOST) {
        PyErr_Format(PyExc_TypeError, "%s: literals must be a tuple of at most %d str", usage,
                     MASK_MOST);
        return -1;
    }
    Py_CLEAR(mask_of); /* (no tables until these are whole) */
    Py_ssize_t n = PyTuple_GET_SIZE(lits), m = 256;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *lit = PyTuple_GET_ITEM(lits, k);
        if (!PyUnicode_CheckExact(lit) || PyUnicode_READY(lit) < 0 || !PyUnicode_IS_ASCII(lit) ||
            PyUnicode_GET_LENGTH(lit) < 2) {
            PyErr_Format(PyExc_ValueError, "%s: a literal must be an ASCII str, 2 or more long",
                         usage);
            return -1;
        }
        mask_lit[k] = PyUnicode_1BYTE_DATA(lit);
        mask_len[k] = PyUnicode_GET_LENGTH(lit);
        m = Py_MIN(m, mask_len[k]);
    }
    if (mask_shift == NULL && (mask_shift = PyMem_Malloc(65536)) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    m = n ? m : 2;
    wm_tables(mask_shift, mask_lit, n, m, mask_last);
    mask_n = n;
    mask_m = m;
    mask_of = Py_NewRef(lits);
    return 0;
}

static PyObject *
literal_mask(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    const char *usage = "literal_mask(text, literals)";
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, usage);
        return NULL;
    }
    PyObject *text = args[0];
    if (!PyUnicode_Check(text) || PyUnicode_READY(text) < 0) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "%s: text must be a str", usage);
        }
        return NULL;
    }
    if (mask_tables(args[1], usage) < 0) {
        return NULL;
    }
    uint64_t all = mask_n == 64 ? ~(uint64_t)0 : (((uint64_t)1 << mask_n) - 1), found = 0;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), m = mask_m;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    const unsigned char *s = (const unsigned char *)data; /* (one byte a character) */
    /* i: the window's last character */
    for (Py_ssize_t i = m - 1; i < n && found != all;) {
        unsigned blk;
        if (kind == PyUnicode_1BYTE_KIND) {
            blk = block_at(s + i - 1);
        }
        else {
            Py_UCS4 a = PyUnicode_READ(kind, data, i - 1), b = PyUnicode_READ(kind, data, i);
            if (a > 127 || b > 127) {
                i += m - 1 > 0 ? m - 1 : 1; /* (in no literal) */
                continue;
            }
            blk = a | (b << 8);
        }
        unsigned shift = mask_shift[blk];
        if (shift) {
            i += shift;
            continue;
        }
        Py_ssize_t at = i - m + 1;
        for (Py_ssize_t k = 0; k < mask_n; k++) {
            uint64_t bit = (uint64_t)1 << k;
            Py_ssize_t len = mask_len[k];
            if ((found & bit) || mask_last[k] != blk || len > n - at) {
                continue;
            }
            Py_ssize_t j = 0;
            if (kind == PyUnicode_1BYTE_KIND) {
                j = memcmp(s + at, mask_lit[k], (size_t)len) == 0 ? len : 0;
            }
            else {
                while (j < len && PyUnicode_READ(kind, data, at + j) == mask_lit[k][j]) {
                    j++;
                }
            }
            if (j == len) {
                found |= bit;
            }
        }
        i += 1;
    }
    return PyLong_FromUnsignedLongLong(found);
}

/* newlines(data, start, end) -> int: the newlines in data[start:end] */
static PyObject *
newlines(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    static const char *const names[] = {"start", "end"};
    Py_ssize_t idx[2];
    Py_buffer view;
    if (open_args(args, nargs, 3, "newlines(data, start, end)", NULL, names, 2, idx,
                  &view) < 0) {
        return NULL;
    }
    Py_ssize_t start = idx[0], end = idx[1];
    const char *buf = (const char *)view.buf;
    Py_ssize_t k = start < end ? count_newlines(buf + start, end - start) : 0;
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(k);
}

/* after_lines(data, pos, end, k) -> int: where the line k lines after the one starting at
 * pos starts (pos for k = 0): just past the k-th newline of data[pos:end]; -1 when there
 * are fewer */
static PyObject *
after_lines(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    static const char *const names[] = {"pos", "end", "k"};
    Py_ssize_t idx[3];
    Py_buffer view;
    if (open_args(args, nargs, 4, "after_lines(data, pos, end, k)", NULL, names, 3, idx,
                  &view) < 0) {
        return NULL;
    }
    Py_ssize_t pos = idx[0], end = idx[1], k = idx[2];
    const char *buf = (const char *)view.buf;
    for (; k > 0; k--) {
        const char *nl = pos < end ? memchr(buf + pos, '\n', (size_t)(end - pos)) : NULL;
        if (nl == NULL) {
            pos = -1;
            break;
        }
        pos = nl - buf + 1;
    }
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(pos);
}

/* Objects of slotted classes made without __init__: recompile_doctor/slotted.py's maker, in
 * C.  The maker there is Python written out per class (a slot setter called per field):
 * some 7,000 instructions for an event (1,700 here, its call and freeing included), which
 * the parent makes again for every event a worker hands over and every item of a packed
 * chunk it reads back.  A plan names the class
 * and where in its objects each field's slot is; it is made from the class's own slot
 * descriptors, checked here, and is opaque to Python (a capsule), so that no caller can
 * have an object's memory written anywhere else. */
const char *const NATIVE_PLAN = "recompile_doctor.slot_plan";

static void
drop_plan(PyObject *capsule)
{
    slot_plan_t *plan = (slot_plan_t *)PyCapsule_GetPointer(capsule, NATIVE_PLAN);
    if (plan != NULL) {
        Py_DECREF(plan->tp);
        PyMem_Free(plan);
    }
}

/* slot_plan(cls, descriptors) -> plan: for make_slotted, the slots of these member
 * descriptors (a tuple, in the order of the values to come), each a writable object slot
 * of cls or of a class it derives from */
static PyObject *
slot_plan(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2 || !PyType_Check(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "slot_plan(cls, descriptors): a class and a tuple");
        return NULL;
    }
    PyTypeObject *tp = (PyTypeObject *)args[0];
    if (tp->tp_flags & Py_TPFLAGS_IS_ABSTRACT) {
        PyErr_Format(PyExc_TypeError, "slot_plan: %s is abstract", tp->tp_name);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args[1]);
    slot_plan_t *plan =
        (slot_plan_t *)PyMem_Malloc(sizeof(slot_plan_t) + (size_t)n * sizeof(Py_ssize_t));
    if (plan == NULL) {
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyTuple_GET_ITEM(args[1], i);
        PyMemberDef *m = Py_IS_TYPE(d, &PyMemberDescr_Type)
                             ? ((PyMemberDescrObject *)d)->d_member
                             : NULL;
        if (m == NULL || m->type != T_OBJECT_EX || (m->flags & READONLY) ||
            !PyType_IsSubtype(tp, ((PyMemberDescrObject *)d)->d_common.d_type)) {
            PyMem_Free(plan);
            PyErr_Format(PyExc_TypeError, "slot_plan: descriptor %zd is not a slot of %s", i,
                         tp->tp_name);
            return NULL;
        }
        plan->offsets[i] = m->offset;
    }
    plan->n = n;
    plan->tp = (PyTypeObject *)Py_NewRef(tp);
    PyObject *capsule = PyCapsule_New(plan, NATIVE_PLAN, drop_plan);
    if (capsule == NULL) {
        Py_DECREF(tp);
        PyMem_Free(plan);
    }
    return capsule;
}

/* make_slotted(plan, values) -> a new object of the plan's class, its slots set to values
 * (a tuple, one value per slot of the plan) */
static PyObject *
make_slotted(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    slot_plan_t *plan = nargs == 2 ? (slot_plan_t *)PyCapsule_GetPointer(args[0], NATIVE_PLAN) : NULL;
    if (plan == NULL || !PyTuple_Check(args[1])) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "make_slotted(plan, values): a plan and a tuple");
        return NULL;
    }
    PyObject *values = args[1];
    if (PyTuple_GET_SIZE(values) != plan->n) {
        PyErr_Format(PyExc_ValueError, "make_slotted: %zd values for %zd slots",
                     PyTuple_GET_SIZE(values), plan->n);
        return NULL;
    }
    PyTypeObject *tp = plan->tp;
    PyObject *obj = tp->tp_alloc(tp, 0);
    if (obj == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < plan->n; i++) {
        PyObject **slot = (PyObject **)((char *)obj + plan->offsets[i]);
        Py_XSETREF(*slot, Py_NewRef(PyTuple_GET_ITEM(values, i)));
    }
    return obj;
}

/* copy_slotted(plan, positions, obj, *values) -> a new object of the plan's class with the
 * slots of obj (of that class or one derived from it), those at positions (bytes: one
 * Py_ssize_t per value, each an index among the plan's slots) set to values instead:
 * slotted.py's replacer, in C.  A slot copied that obj never set is an AttributeError, as
 * reading it is. */
static PyObject *
copy_slotted(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    slot_plan_t *plan = nargs >= 3 ? (slot_plan_t *)PyCapsule_GetPointer(args[0], NATIVE_PLAN) : NULL;
    if (plan == NULL || !PyBytes_CheckExact(args[1]) ||
        PyBytes_GET_SIZE(args[1]) % (Py_ssize_t)sizeof(Py_ssize_t) != 0) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError,
                        "copy_slotted(plan, positions, obj, *values): a plan and bytes");
        return NULL;
    }
    Py_ssize_t k = PyBytes_GET_SIZE(args[1]) / (Py_ssize_t)sizeof(Py_ssize_t);
    const Py_ssize_t *pos = (const Py_ssize_t *)PyBytes_AS_STRING(args[1]);
    PyObject *src = args[2];
    PyTypeObject *tp = plan->tp;
    if (nargs - 3 != k) {
        PyErr_Format(PyExc_TypeError, "copy_slotted: %zd values for %zd positions", nargs - 3,
                     k);
        return NULL;
    }
    if (!PyType_IsSubtype(Py_TYPE(src), tp)) {
        PyErr_Format(PyExc_TypeError, "copy_slotted: not a %s", tp->tp_name);
        return NULL;
    }
    for (Py_ssize_t j = 0; j < k; j++) {
        if (pos[j] < 0 || pos[j] >= plan->n) {
            PyErr_Format(PyExc_ValueError, "copy_slotted: no slot %zd", pos[j]);
            return NULL;
        }
    }
    PyObject *obj = tp->tp_alloc(tp, 0);
    if (obj == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < plan->n; i++) {
        PyObject *v = *(PyObject **)((char *)src + plan->offsets[i]);
        *(PyObject **)((char *)obj + plan->offsets[i]) = Py_XNewRef(v);
    }
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject **slot = (PyObject **)((char *)obj + plan->offsets[pos[j]]);
        Py_XSETREF(*slot, Py_NewRef(args[3 + j]));
    }
    for (Py_ssize_t i = 0; i < plan->n; i++) {
        if (*(PyObject **)((char *)obj + plan->offsets[i]) == NULL) {
            Py_DECREF(obj);
            PyErr_Format(PyExc_AttributeError, "copy_slotted: slot %zd of the %s is unset", i,
                         tp->tp_name);
            return NULL;
        }
    }
    return obj;
}

/* fast_fields(plan, names) -> None
 *
 * Reads of the fields of the plan's class (names[i], a str, the field whose slot is at the
 * plan's offsets[i]) answered from the slot, without the generic look-up: compiled code
 * reads a field of an interpreted class (the typed events, the compile keys) through
 * PyObject_GetAttr, the type's method cache, the member descriptor and its getter, about
 * 150 instructions (a tenth of the parent's reading of a JAX log); here a probe of a
 * table by class and a comparison of the name's object with each field's.  Any other
 * name, a name that is another string object (the names are compared as the interned
 * strings compiled code and the interpreter use), an empty slot, an object of a subclass:
 * the generic look-up, whose answer or error it is.  Only for a class whose reads are the
 * generic ones (no __getattribute__ or __getattr__ of its own), and whose fields are its
 * slots' member descriptors, as a slotted dataclass's are (nothing sets others on it after).
 * The interpreter does not specialize its reads of such a class's fields (its own fast
 * path wants the generic function): for compiled callers only (slotted.faster_init). */
/* Tables by class (the classes this module answers for, fast_fields' and class_calls'):
 * CLASS_SLOTS classes each, open addressing on the class's address, at most half taken. */
#define CLASS_SLOTS 128

/* The place of tp in the classes keys (CLASS_SLOTS of them, NULL where none is): where it
 * is, or the empty place where it would go */
static inline size_t
class_place(PyTypeObject *const *keys, PyTypeObject *tp)
{
    size_t h = ((uintptr_t)tp >> 4) & (CLASS_SLOTS - 1);
    while (keys[h] != NULL && keys[h] != tp) {
        h = (h + 1) & (CLASS_SLOTS - 1);
    }
    return h;
}

#define FAST_FIELDS 32
typedef struct {
    Py_ssize_t n;
    PyObject *names[FAST_FIELDS]; /* (strong references, interned) */
    Py_ssize_t offsets[FAST_FIELDS];
} fast_entry;
static PyTypeObject *fast_types[CLASS_SLOTS]; /* (strong references) */
static fast_entry fast_table[CLASS_SLOTS];
static Py_ssize_t fast_count = 0;

static PyObject *
fast_getattro(PyObject *obj, PyObject *name)
{
    PyTypeObject *tp = Py_TYPE(obj);
    size_t h = class_place(fast_types, tp);
    if (fast_types[h] == tp) {
        const fast_entry *e = &fast_table[h];
        for (Py_ssize_t k = 0; k < e->n; k++) {
            if (e->names[k] == name) {
                PyObject *v = *(PyObject **)((char *)obj + e->offsets[k]);
                if (v != NULL) {
                    return Py_NewRef(v);
                }
                break;
            }
        }
    }
    return PyObject_GenericGetAttr(obj, name);
}

static PyObject *
fast_fields(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    slot_plan_t *plan = nargs == 2 ? (slot_plan_t *)PyCapsule_GetPointer(args[0], NATIVE_PLAN) : NULL;
    if (plan == NULL || !PyTuple_CheckExact(args[1]) || PyTuple_GET_SIZE(args[1]) != plan->n) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "fast_fields(plan, names): a plan and a name a slot");
        return NULL;
    }
    PyTypeObject *tp = plan->tp;
    if (tp->tp_getattro == fast_getattro) {
        Py_RETURN_NONE; /* (already) */
    }
    if (tp->tp_getattro != PyObject_GenericGetAttr) {
        PyErr_Format(PyExc_TypeError, "fast_fields: %s reads its attributes its own way",
                     tp->tp_name);
        return NULL;
    }
    if (plan->n > FAST_FIELDS || fast_count >= CLASS_SLOTS / 2) {
        PyErr_Format(PyExc_ValueError, "fast_fields: %s: too many fields or classes",
                     tp->tp_name);
        return NULL;
    }
    PyObject *names[FAST_FIELDS];
    for (Py_ssize_t k = 0; k < plan->n; k++) {
        PyObject *name = PyTuple_GET_ITEM(args[1], k);
        if (!PyUnicode_CheckExact(name)) {
            for (Py_ssize_t j = 0; j < k; j++) {
                Py_DECREF(names[j]);
            }
            PyErr_SetString(PyExc_TypeError, "fast_fields: a name must be a str");
            return NULL;
        }
        Py_INCREF(name);
        PyUnicode_InternInPlace(&name);
        names[k] = name;
    }
    size_t h = class_place(fast_types, tp);
    fast_entry *e = &fast_table[h];
    e->n = plan->n;
    for (Py_ssize_t k = 0; k < plan->n; k++) {
        e->names[k] = names[k];
        e->offsets[k] = plan->offsets[k];
    }
    fast_types[h] = (PyTypeObject *)Py_NewRef(tp); /* (last: the entry is whole once found) */
    fast_count++;
    tp->tp_getattro = fast_getattro;
    PyType_Modified(tp);
    Py_RETURN_NONE;
}

/* slot_init(plan, names, positional, fields, defaults, factories, required, wrapped) ->
 * an __init__ for a slotted dataclass (slotted.py's faster_init, in C): its slots set
 * directly from the arguments of a valid call.  A frozen dataclass's own __init__ sets each
 * field through object.__setattr__, and faster_init's Python one through each slot's
 * setter: some 11,000 instructions for a typed event of eleven fields, made for every
 * event a decoder reads (2,000 here, the call through the class included).
 *
 * names: the parameters, in the order of the signature (those that may be given by
 * position first, `positional` of them); fields: bytes, one Py_ssize_t per parameter, the
 * index of its field among the plan's slots (every slot once); defaults: per parameter,
 * its default or `required`; factories: per parameter, its default factory (called when
 * the value is its default, dataclasses' marker) or None.  A call this does not make
 * whole -- too many positions, an unknown or repeated keyword, a missing argument, an
 * object of another class -- is handed to `wrapped` (the Python __init__ with the same
 * parameters), which raises the error the dataclass's own would; `wrapped` is also its
 * __wrapped__, for inspect.signature, and answers the attributes it lacks (__qualname__,
 * __defaults__, ...).  Used as a class's __init__ it binds as a function does. */
#define SLOT_INIT_MAX 32

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *plan; /* (the capsule, kept alive for `p`) */
    slot_plan_t *p;
    PyObject *names;
    Py_ssize_t positional;
    PyObject *fields; /* (bytes) */
    PyObject *defaults;
    PyObject *factories;
    PyObject *required;
    PyObject *wrapped;
} slot_init_t;

static Py_ssize_t
param_of(PyObject *names, PyObject *name)
{
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    for (Py_ssize_t k = 0; k < n; k++) {
        if (PyTuple_GET_ITEM(names, k) == name) {
            return k;
        }
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        if (PyUnicode_Compare(PyTuple_GET_ITEM(names, k), name) == 0) {
            return k;
        }
    }
    if (PyErr_Occurred()) {
        PyErr_Clear();
    }
    return -1;
}

static PyObject *
slot_init_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    slot_init_t *si = (slot_init_t *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t n = PyTuple_GET_SIZE(si->names);
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    PyObject *vals[SLOT_INIT_MAX];
    PyObject *made[SLOT_INIT_MAX];
    if (nargs < 1 || !PyObject_TypeCheck(args[0], si->p->tp) || nargs - 1 > si->positional) {
        goto python;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        vals[k] = k < nargs - 1 ? args[1 + k] : NULL;
    }
    for (Py_ssize_t j = 0; j < nkw; j++) {
        Py_ssize_t k = param_of(si->names, PyTuple_GET_ITEM(kwnames, j));
        if (k < 0 || vals[k] != NULL) {
            goto python;
        }
        vals[k] = args[nargs + j];
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        if (vals[k] == NULL) {
            PyObject *d = PyTuple_GET_ITEM(si->defaults, k);
            if (d == si->required) {
                goto python;
            }
            vals[k] = d;
        }
    }
    Py_ssize_t k = 0;
    for (; k < n; k++) {
        PyObject *f = PyTuple_GET_ITEM(si->factories, k);
        made[k] = NULL;
        if (f != Py_None && vals[k] == PyTuple_GET_ITEM(si->defaults, k)) {
            made[k] = PyObject_CallNoArgs(f);
            if (made[k] == NULL) {
                break;
            }
            vals[k] = made[k];
        }
    }
    if (k == n) {
        PyObject *obj = args[0];
        const Py_ssize_t *fields = (const Py_ssize_t *)PyBytes_AS_STRING(si->fields);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject **slot = (PyObject **)((char *)obj + si->p->offsets[fields[i]]);
            Py_XSETREF(*slot, Py_NewRef(vals[i]));
        }
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        Py_XDECREF(made[i]);
    }
    if (k < n) {
        return NULL; /* (a factory's error) */
    }
    Py_RETURN_NONE;
python:
    return PyObject_Vectorcall(si->wrapped, args, nargsf, kwnames);
}

static PyObject *
slot_init_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (obj == NULL || obj == Py_None) {
        return Py_NewRef(self);
    }
    return PyMethod_New(self, obj);
}

static PyObject *
slot_init_getattro(PyObject *self, PyObject *name)
{
    PyObject *got = PyObject_GenericGetAttr(self, name);
    if (got != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError)) {
        return got;
    }
    PyErr_Clear();
    return PyObject_GetAttr(((slot_init_t *)self)->wrapped, name);
}

static void
slot_init_dealloc(PyObject *self)
{
    slot_init_t *si = (slot_init_t *)self;
    Py_XDECREF(si->plan);
    Py_XDECREF(si->names);
    Py_XDECREF(si->fields);
    Py_XDECREF(si->defaults);
    Py_XDECREF(si->factories);
    Py_XDECREF(si->required);
    Py_XDECREF(si->wrapped);
    PyObject_Free(self);
}

static PyMemberDef slot_init_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(slot_init_t, wrapped), READONLY,
     "the Python __init__ of the same parameters"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject slot_init_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "recompile_doctor.parsers._native.slot_init",
    .tp_basicsize = sizeof(slot_init_t),
    .tp_dealloc = slot_init_dealloc,
    .tp_vectorcall_offset = offsetof(slot_init_t, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_getattro = slot_init_getattro,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "an __init__ that sets a slotted dataclass's slots from its arguments",
    .tp_members = slot_init_members,
    .tp_descr_get = slot_init_get,
};

static PyObject *
slot_init(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    slot_plan_t *plan = nargs == 8 ? (slot_plan_t *)PyCapsule_GetPointer(args[0], NATIVE_PLAN) : NULL;
    if (plan == NULL) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "slot_init(plan, names, positional, fields, "
                                         "defaults, factories, required, wrapped): a plan");
        return NULL;
    }
    PyObject *names = args[1], *fields = args[3], *defaults = args[4], *factories = args[5];
    Py_ssize_t n = PyTuple_Check(names) ? PyTuple_GET_SIZE(names) : -1;
    Py_ssize_t positional = PyLong_Check(args[2]) ? PyLong_AsSsize_t(args[2]) : -1;
    if (n != plan->n || n > SLOT_INIT_MAX || positional < 0 || positional > n ||
        !PyBytes_CheckExact(fields) ||
        PyBytes_GET_SIZE(fields) != n * (Py_ssize_t)sizeof(Py_ssize_t) ||
        !PyTuple_Check(defaults) || PyTuple_GET_SIZE(defaults) != n ||
        !PyTuple_Check(factories) || PyTuple_GET_SIZE(factories) != n ||
        !PyCallable_Check(args[7])) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError,
                     "slot_init: not a signature of the plan's %zd slots (at most %d)", plan->n,
                     SLOT_INIT_MAX);
        return NULL;
    }
    const Py_ssize_t *at = (const Py_ssize_t *)PyBytes_AS_STRING(fields);
    char seen[SLOT_INIT_MAX] = {0};
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *f = PyTuple_GET_ITEM(factories, k);
        if (!PyUnicode_Check(PyTuple_GET_ITEM(names, k)) || at[k] < 0 || at[k] >= n ||
            seen[at[k]] || (f != Py_None && !PyCallable_Check(f))) {
            PyErr_Format(PyExc_ValueError, "slot_init: parameter %zd is not one of a slot", k);
            return NULL;
        }
        seen[at[k]] = 1;
    }
    slot_init_t *si = PyObject_New(slot_init_t, &slot_init_type);
    if (si == NULL) {
        return NULL;
    }
    si->vectorcall = slot_init_call;
    si->plan = Py_NewRef(args[0]);
    si->p = plan;
    si->names = Py_NewRef(names);
    si->positional = positional;
    si->fields = Py_NewRef(fields);
    si->defaults = Py_NewRef(defaults);
    si->factories = Py_NewRef(factories);
    si->required = Py_NewRef(args[6]);
    si->wrapped = Py_NewRef(args[7]);
    return (PyObject *)si;
}

/* class_calls(cls, init) -> None: calls of the class cls (a slotted dataclass whose
 * __init__ is init, a slot_init) make its object and set its slots in one C call, where a
 * call of a class went through type_call: its arguments made a tuple and a dict, object's
 * __new__, the class's __init__ looked up and called with the object put before them
 * (about 1,600 instructions for a typed event, 57,000 events in a JAX worker's 24 MB).  The
 * object is made as object's __new__ makes it (the class's tp_alloc) and given to init as
 * type_call gives it; a call init hands to its Python twin raises that twin's error.  A
 * class whose __init__ is no longer init (set anew), an object of a subclass, or more
 * arguments than init takes: the call goes the way type_call goes.  Only for a class of
 * object's __new__, not abstract. */
static PyTypeObject *call_types[CLASS_SLOTS]; /* (strong references, as the inits) */
static slot_init_t *call_inits[CLASS_SLOTS];
static Py_ssize_t call_count = 0;
static PyObject *init_name = NULL; /* "__init__", interned */

static PyObject *
class_call_slow(PyObject *cls, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    PyObject *pos = PyTuple_New(nargs);
    PyObject *kw = nkw ? PyDict_New() : NULL;
    if (pos == NULL || (nkw && kw == NULL)) {
        Py_XDECREF(pos);
        Py_XDECREF(kw);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyTuple_SET_ITEM(pos, i, Py_NewRef(args[i]));
    }
    for (Py_ssize_t j = 0; j < nkw; j++) {
        if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, j), args[nargs + j]) < 0) {
            Py_DECREF(pos);
            Py_DECREF(kw);
            return NULL;
        }
    }
    PyObject *out = PyType_Type.tp_call(cls, pos, kw); /* (type_call) */
    Py_DECREF(pos);
    Py_XDECREF(kw);
    return out;
}

static PyObject *
class_call(PyObject *cls, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PyTypeObject *tp = (PyTypeObject *)cls;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t total = nargs + (kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames));
    size_t h = class_place(call_types, tp);
    slot_init_t *si = call_types[h] == tp ? call_inits[h] : NULL;
    PyObject *now = si != NULL && tp->tp_dict != NULL
                        ? PyDict_GetItemWithError(tp->tp_dict, init_name)
                        : NULL;
    if (now != (PyObject *)si || si == NULL || total >= SLOT_INIT_MAX) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        return class_call_slow(cls, args, nargsf, kwnames);
    }
    PyObject *obj = tp->tp_alloc(tp, 0);
    if (obj == NULL) {
        return NULL;
    }
    PyObject *stack[SLOT_INIT_MAX + 1];
    stack[0] = obj;
    for (Py_ssize_t i = 0; i < total; i++) {
        stack[1 + i] = args[i];
    }
    PyObject *got = slot_init_call((PyObject *)si, stack, (size_t)(nargs + 1), kwnames);
    if (got == NULL) {
        Py_DECREF(obj);
        return NULL;
    }
    if (got != Py_None) { /* (as type_call says of an __init__) */
        PyErr_Format(PyExc_TypeError, "__init__() should return None, not '%.200s'",
                     Py_TYPE(got)->tp_name);
        Py_DECREF(got);
        Py_DECREF(obj);
        return NULL;
    }
    Py_DECREF(got);
    return obj;
}

static PyObject *
class_calls(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2 || !PyType_Check(args[0]) || !Py_IS_TYPE(args[1], &slot_init_type)) {
        PyErr_SetString(PyExc_TypeError, "class_calls(cls, init): a class and a slot_init");
        return NULL;
    }
    PyTypeObject *tp = (PyTypeObject *)args[0];
    slot_init_t *si = (slot_init_t *)args[1];
    if (tp->tp_vectorcall == class_call) {
        Py_RETURN_NONE; /* (already) */
    }
    if (init_name == NULL && (init_name = PyUnicode_InternFromString("__init__")) == NULL) {
        return NULL;
    }
    PyObject *now = tp->tp_dict != NULL ? PyDict_GetItemWithError(tp->tp_dict, init_name) : NULL;
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (si->p->tp != tp || now != (PyObject *)si || tp->tp_new != PyBaseObject_Type.tp_new ||
        tp->tp_vectorcall != NULL || (tp->tp_flags & Py_TPFLAGS_IS_ABSTRACT) ||
        !(tp->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
        PyErr_Format(PyExc_TypeError, "class_calls: %s is not made by object's __new__ and "
                     "this __init__ alone", tp->tp_name);
        return NULL;
    }
    if (call_count >= CLASS_SLOTS / 2) {
        PyErr_SetString(PyExc_ValueError, "class_calls: too many classes");
        return NULL;
    }
    size_t h = class_place(call_types, tp);
    if (call_types[h] == tp) { /* (its calls were made generic again: a new __init__) */
        Py_SETREF(call_inits[h], (slot_init_t *)Py_NewRef(si));
    }
    else {
        call_inits[h] = (slot_init_t *)Py_NewRef(si);
        call_types[h] = (PyTypeObject *)Py_NewRef(tp);
        call_count++;
    }
    tp->tp_vectorcall = class_call;
    Py_RETURN_NONE;
}

/* sped_up(cls) -> (bool, bool): whether reads of cls's fields go through fast_fields', and
 * whether its calls go through class_calls' */
static PyObject *
sped_up(PyObject *module, PyObject *cls)
{
    (void)module;
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "sped_up(cls): a class");
        return NULL;
    }
    PyTypeObject *tp = (PyTypeObject *)cls;
    return Py_BuildValue("(OO)", tp->tp_getattro == fast_getattro ? Py_True : Py_False,
                         tp->tp_vectorcall == class_call ? Py_True : Py_False);
}

/* tuple_new(cls, items): tuple.__new__(cls, items), made directly where that is plain:
 * cls is tuple, or a class right under tuple, written in Python (a named tuple), that
 * tuple.__new__ accepts (it refuses a class of C's own __new__, such as a struct sequence:
 * each class is asked once, with no items, and remembered), and items are a tuple or a
 * list.  The object is what tuple.__new__ makes: the class's tp_alloc, the items in order.
 * Anything else goes to tuple.__new__ itself, so its errors are tuple's own.  (tuple.__new__
 * from compiled code: a method wrapper, an arguments tuple sliced, the items copied into a
 * tuple of their own and then into the new object: about 1,000 instructions; this: about
 * 200.) */
static PyObject *tuple_dunder_new = NULL;
static PyObject *plain_tuple_classes = NULL; /* class -> True: tuple.__new__ takes it */

int
plain_tuple_class(PyTypeObject *tp)
{
    if (tp == &PyTuple_Type) {
        return 1;
    }
    if (tp->tp_base != &PyTuple_Type || !PyType_HasFeature(tp, Py_TPFLAGS_HEAPTYPE)) {
        return 0;
    }
    PyObject *known = PyDict_GetItemWithError(plain_tuple_classes, (PyObject *)tp);
    if (known != NULL) {
        return 1;
    }
    if (PyErr_Occurred()) {
        return -1;
    }
    PyObject *empty = PyTuple_New(0);
    if (empty == NULL) {
        return -1;
    }
    PyObject *probe_args[2] = {(PyObject *)tp, empty};
    PyObject *probe = PyObject_Vectorcall(tuple_dunder_new, probe_args, 2, NULL);
    Py_DECREF(empty);
    if (probe == NULL) {
        PyErr_Clear(); /* (the call with the real items will say why) */
        return 0;
    }
    Py_DECREF(probe);
    if (PyDict_Size(plain_tuple_classes) >= 64) {
        PyDict_Clear(plain_tuple_classes);
    }
    return PyDict_SetItem(plain_tuple_classes, (PyObject *)tp, Py_True) < 0 ? -1 : 1;
}

PyObject *
named_tuple(PyTypeObject *tp, PyObject *const *items, Py_ssize_t n)
{
    PyObject *t = tp->tp_alloc(tp, n);
    if (t != NULL) {
        for (Py_ssize_t i = 0; i < n; i++) {
            PyTuple_SET_ITEM(t, i, Py_NewRef(items[i]));
        }
    }
    return t;
}

static PyObject *
tuple_new(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs == 2 && PyType_Check(args[0]) &&
        (PyTuple_CheckExact(args[1]) || PyList_CheckExact(args[1]))) {
        PyTypeObject *tp = (PyTypeObject *)args[0];
        int plain = plain_tuple_class(tp);
        if (plain < 0) {
            return NULL;
        }
        if (plain) {
            /* (a list is copied first, as tuple.__new__ copies it: the allocation below
             * may run a collection, and a finalizer could change a list meanwhile) */
            PyObject *items = PySequence_Tuple(args[1]);
            if (items == NULL || tp == &PyTuple_Type) {
                return items;
            }
            PyObject *t = named_tuple(tp, &PyTuple_GET_ITEM(items, 0), PyTuple_GET_SIZE(items));
            Py_DECREF(items);
            return t;
        }
    }
    return PyObject_Vectorcall(tuple_dunder_new, args, (size_t)nargs, NULL);
}

/* tuple_of(cls, *items) -> tuple_new(cls, items), the items given as the call's own
 * arguments: no tuple of them made only to be copied (a line's span, a message's record
 * and a decoder's answer are made this way, each line) */
static PyObject *
tuple_of(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || !PyType_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "tuple_of(cls, *items)");
        return NULL;
    }
    PyTypeObject *tp = (PyTypeObject *)args[0];
    int plain = plain_tuple_class(tp);
    if (plain < 0) {
        return NULL;
    }
    if (plain) {
        return named_tuple(tp, args + 1, nargs - 1);
    }
    PyObject *items = PyTuple_New(nargs - 1);
    if (items == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 1; i < nargs; i++) {
        PyTuple_SET_ITEM(items, i - 1, Py_NewRef(args[i]));
    }
    PyObject *call[2] = {args[0], items};
    PyObject *t = PyObject_Vectorcall(tuple_dunder_new, call, 2, NULL);
    Py_DECREF(items);
    return t;
}

/* -- open-addressed tables of 16-byte fingerprints (timeline/distinct.py's _Shard) ----- */

#define FP_WIDTH 16

/* an empty slot's bytes (no fingerprint is all zeros) */
static const unsigned char fp_empty[FP_WIDTH] = {0};

/* the slot of fingerprint fp in the table's slots (mask + 1 of FP_WIDTH bytes; an empty one
 * all zeros, which no fingerprint is): linear probing from its first eight bytes read as a
 * little-endian number, & mask.  i >= 0: it is in slot i; -1 - i: slot i is the empty one
 * where it would go */
static Py_ssize_t
fp_probe(const unsigned char *slots, Py_ssize_t mask, const unsigned char *fp)
{
    uint64_t h = 0;
    for (int k = 7; k >= 0; k--) {
        h = (h << 8) | fp[k];
    }
    Py_ssize_t i = (Py_ssize_t)(h & (uint64_t)mask);
    for (;;) {
        const unsigned char *at = slots + i * FP_WIDTH;
        if (memcmp(at, fp, FP_WIDTH) == 0) {
            return i;
        }
        if (memcmp(at, fp_empty, FP_WIDTH) == 0) {
            return -1 - i;
        }
        i = (i + 1) & mask;
    }
}

/* the table's slots (writable when asked), checked to hold mask + 1 slots (mask + 1 a power
 * of two) */
static int
fp_table(PyObject *obj, PyObject *mask_obj, int writable, Py_buffer *view, Py_ssize_t *mask)
{
    if (get_index(mask_obj, "mask", mask) < 0) {
        return -1;
    }
    if (PyObject_GetBuffer(obj, view, writable ? PyBUF_WRITABLE : PyBUF_SIMPLE) < 0) {
        return -1;
    }
    if ((*mask & (*mask + 1)) != 0 || view->len != (*mask + 1) * FP_WIDTH) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "the slots are not mask + 1 fingerprints");
        return -1;
    }
    return 0;
}

/* fp_slot(slots, mask, fp, put) -> int: fingerprint fp's slot in the table (see fp_probe:
 * i where it is, -1 - i where it is not); with put, stored in that empty slot */
static PyObject *
fp_slot(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 4 || !PyBytes_Check(args[2]) || PyBytes_GET_SIZE(args[2]) != FP_WIDTH) {
        PyErr_SetString(PyExc_TypeError, "fp_slot(slots, mask, fp: 16 bytes, put)");
        return NULL;
    }
    int put = PyObject_IsTrue(args[3]);
    if (put < 0) {
        return NULL;
    }
    Py_buffer view;
    Py_ssize_t mask;
    if (fp_table(args[0], args[1], put, &view, &mask) < 0) {
        return NULL;
    }
    const unsigned char *fp = (const unsigned char *)PyBytes_AS_STRING(args[2]);
    if (memcmp(fp, fp_empty, FP_WIDTH) == 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "a fingerprint of all zeros is the empty slot's");
        return NULL;
    }
    Py_ssize_t i = fp_probe((const unsigned char *)view.buf, mask, fp);
    if (i < 0 && put) {
        memcpy((unsigned char *)view.buf + (-1 - i) * FP_WIDTH, fp, FP_WIDTH);
    }
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(i);
}

/* fp_rehash(old, new, mask, old_numbers, new_numbers) -> None: every fingerprint of the
 * table old stored in the empty table new (mask + 1 slots), in slot order, with its number
 * (an array of 4-byte numbers per table, or None for both) */
static PyObject *
fp_rehash(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "fp_rehash(old, new, mask, old_numbers, new_numbers)");
        return NULL;
    }
    int numbered = args[3] != Py_None;
    if (numbered != (args[4] != Py_None)) {
        PyErr_SetString(PyExc_TypeError, "fp_rehash: both tables numbered, or neither");
        return NULL;
    }
    Py_buffer old, new, on = {0}, nn = {0};
    Py_ssize_t mask;
    if (PyObject_GetBuffer(args[0], &old, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    if (fp_table(args[1], args[2], 1, &new, &mask) < 0) {
        PyBuffer_Release(&old);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t n_old = old.len / FP_WIDTH;
    if (old.len % FP_WIDTH != 0 || n_old > mask + 1) {
        PyErr_SetString(PyExc_ValueError, "fp_rehash: the old slots do not fit the new");
        goto done;
    }
    if (numbered) {
        if (PyObject_GetBuffer(args[3], &on, PyBUF_FORMAT) < 0) {
            goto done;
        }
        if (PyObject_GetBuffer(args[4], &nn, PyBUF_FORMAT | PyBUF_WRITABLE) < 0) {
            goto done;
        }
        if (on.itemsize != 4 || nn.itemsize != 4 || on.len != n_old * 4 ||
            nn.len != (mask + 1) * 4) {
            PyErr_SetString(PyExc_ValueError, "fp_rehash: numbers of 4 bytes, one a slot");
            goto done;
        }
    }
    for (Py_ssize_t j = 0; j < n_old; j++) {
        const unsigned char *fp = (const unsigned char *)old.buf + j * FP_WIDTH;
        if (memcmp(fp, fp_empty, FP_WIDTH) == 0) {
            continue;
        }
        Py_ssize_t i = fp_probe((const unsigned char *)new.buf, mask, fp);
        if (i >= 0) {
            PyErr_SetString(PyExc_ValueError, "fp_rehash: a fingerprint twice");
            goto done;
        }
        i = -1 - i;
        memcpy((unsigned char *)new.buf + i * FP_WIDTH, fp, FP_WIDTH);
        if (numbered) {
            memcpy((char *)nn.buf + i * 4, (const char *)on.buf + j * 4, 4);
        }
    }
    result = Py_NewRef(Py_None);
done:
    if (nn.obj != NULL) {
        PyBuffer_Release(&nn);
    }
    if (on.obj != NULL) {
        PyBuffer_Release(&on);
    }
    PyBuffer_Release(&new);
    PyBuffer_Release(&old);
    return result;
}

/* The characters of an absl prefix's head (``I0000 00:00:``): its rest starts there */
#define ABSL_HEAD_LEN 12

static int
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The double of a decimal of ASCII digits with at most one dot (checked by the caller),
 * when its digits make an integer m below 2^53 and it has at most 22 decimals: m / 10^k,
 * one division of two doubles that are exact, is the double nearest the decimal (IEEE
 * division rounds correctly), the one float() and strtod give -- in a twentieth of their
 * instructions (a time stamp's 16 digits take strtod's slow path).  -1: not so. */
static int
decimal_fast(const char *p, Py_ssize_t len, double *out)
{
    static const double tens[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    unsigned long long m = 0;
    int decimals = -1, digits = 0;
    for (Py_ssize_t i = 0; i < len; i++) {
        if (p[i] == '.') {
            decimals = 0;
            continue;
        }
        if (++digits > 16) {
            return -1;
        }
        m = m * 10 + (unsigned long long)(p[i] - '0');
        if (decimals >= 0) {
            decimals++;
        }
    }
    if (m >= (1ULL << 53) || decimals > 22) {
        return -1;
    }
    *out = decimals > 0 ? (double)m / tens[decimals] : (double)m;
    return 0;
}

/* absl_tail(line, sources, fallback) -> (seconds, file, end) | None: the rest of an absl
 * prefix, after its head (``1795374604.570608   14320 device_compiler.h:208] ``), as
 * tensorflow.absl_rest reads it, its seconds as float() reads them: the seconds (1 to 12
 * digits, then a dot and 1 to 9 digits or not) end at the first space, the source text
 * from there to the first ']' after it is looked up in sources (the text -> its file, ""
 * for a text that is none), and the message starts after the ']' and one space.  A line
 * that is not ASCII (str methods take other digits than 0-9) or whose source text is not
 * in sources yet is fallback(line)'s (tensorflow._absl_tail_py: it puts the source there). */
static PyObject *
absl_tail(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 3 || !PyUnicode_Check(args[0]) || !PyDict_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "absl_tail(line: str, sources: dict, fallback)");
        return NULL;
    }
    PyObject *line = args[0];
    if (!PyUnicode_IS_ASCII(line)) {
        return PyObject_CallOneArg(args[2], line);
    }
    const char *s = (const char *)PyUnicode_1BYTE_DATA(line);
    Py_ssize_t n = PyUnicode_GET_LENGTH(line);
    if (n <= ABSL_HEAD_LEN) {
        Py_RETURN_NONE;
    }
    const char *space = memchr(s + ABSL_HEAD_LEN, ' ', (size_t)(n - ABSL_HEAD_LEN));
    if (space == NULL) {
        Py_RETURN_NONE;
    }
    Py_ssize_t sp = space - s, i = ABSL_HEAD_LEN;
    while (i < sp && is_digit(s[i])) {
        i++;
    }
    Py_ssize_t whole = i - ABSL_HEAD_LEN;
    if (whole == 0 || whole > 12) {
        Py_RETURN_NONE;
    }
    if (i < sp) {
        if (s[i] != '.') {
            Py_RETURN_NONE;
        }
        Py_ssize_t dot = i++;
        while (i < sp && is_digit(s[i])) {
            i++;
        }
        if (i != sp || i - dot - 1 == 0 || i - dot - 1 > 9) {
            Py_RETURN_NONE;
        }
    }
    const char *bracket = memchr(space, ']', (size_t)(n - sp));
    if (bracket == NULL) {
        Py_RETURN_NONE;
    }
    Py_ssize_t e = bracket - s + 1; /* (after the ']') */
    PyObject *source = PyUnicode_Substring(line, sp, e);
    if (source == NULL) {
        return NULL;
    }
    PyObject *file = PyDict_GetItemWithError(args[1], source); /* (borrowed) */
    Py_DECREF(source);
    if (file == NULL) {
        return PyErr_Occurred() ? NULL : PyObject_CallOneArg(args[2], line);
    }
    if (!PyUnicode_Check(file)) {
        PyErr_SetString(PyExc_TypeError, "absl_tail: a source's file is a str");
        return NULL;
    }
    if (PyUnicode_GET_LENGTH(file) == 0) {
        Py_RETURN_NONE;
    }
    double seconds;
    if (decimal_fast(s + ABSL_HEAD_LEN, sp - ABSL_HEAD_LEN, &seconds) < 0) {
        char digits[32]; /* (at most 12 + 1 + 9 characters) */
        memcpy(digits, s + ABSL_HEAD_LEN, (size_t)(sp - ABSL_HEAD_LEN));
        digits[sp - ABSL_HEAD_LEN] = '\0';
        seconds = PyOS_string_to_double(digits, NULL, NULL);
        if (seconds == -1.0 && PyErr_Occurred()) {
            return NULL;
        }
    }
    Py_ssize_t end = e < n && s[e] == ' ' ? e + 1 : e;
    PyObject *out = PyTuple_New(3);
    PyObject *secs = PyFloat_FromDouble(seconds), *at = PyLong_FromSsize_t(end);
    if (out == NULL || secs == NULL || at == NULL) {
        Py_XDECREF(out);
        Py_XDECREF(secs);
        Py_XDECREF(at);
        return NULL;
    }
    PyTuple_SET_ITEM(out, 0, secs);
    PyTuple_SET_ITEM(out, 1, Py_NewRef(file));
    PyTuple_SET_ITEM(out, 2, at);
    return out;
}

static PyMethodDef methods[] = {
    {"line_spans", (PyCFunction)(void (*)(void))line_spans, METH_FASTCALL,
     "line_spans(data, start, end, cands) -> [start, end, lines before, ...] of each "
     "candidate line"},
    {"line_text", (PyCFunction)(void (*)(void))line_text, METH_FASTCALL,
     "line_text(data, a, b, limit) -> the text of the physical line data[a:b]"},
    {"line_end", (PyCFunction)(void (*)(void))line_end, METH_FASTCALL,
     "line_end(data, pos, end) -> where the line starting at pos ends"},
    {"literal_positions", (PyCFunction)(void (*)(void))literal_positions, METH_FASTCALL,
     "literal_positions(data, end, literals) -> where each line of data[:end] "
     "holding a literal first holds one"},
    {"literal_mask", (PyCFunction)(void (*)(void))literal_mask, METH_FASTCALL,
     "literal_mask(text, literals) -> int: bit k set where literals[k] is in the str text"},
    {"newlines", (PyCFunction)(void (*)(void))newlines, METH_FASTCALL,
     "newlines(data, start, end) -> the newlines in data[start:end]"},
    {"after_lines", (PyCFunction)(void (*)(void))after_lines, METH_FASTCALL,
     "after_lines(data, pos, end, k): where the line k lines after pos's starts (-1: fewer)"},
    {"skip_prefixed", (PyCFunction)(void (*)(void))skip_prefixed, METH_FASTCALL,
     "skip_prefixed(data, pos, end, prefix) -> (pos, lines) past the lines starting with "
     "prefix"},
    {"take_prefixed", (PyCFunction)(void (*)(void))take_prefixed, METH_FASTCALL,
     "take_prefixed(data, pos, end, prefix, stop, limit) -> (pos, bodies) of the lines "
     "starting with prefix, up to one going on with stop"},
    {"slot_plan", (PyCFunction)(void (*)(void))slot_plan, METH_FASTCALL,
     "slot_plan(cls, descriptors) -> the plan of make_slotted for these slot descriptors"},
    {"make_slotted", (PyCFunction)(void (*)(void))make_slotted, METH_FASTCALL,
     "make_slotted(plan, values) -> an object of the plan's class, its slots set to values"},
    {"copy_slotted", (PyCFunction)(void (*)(void))copy_slotted, METH_FASTCALL,
     "copy_slotted(plan, positions, obj, *values) -> a copy of obj with the slots at "
     "positions set to values"},
    {"fast_fields", (PyCFunction)(void (*)(void))fast_fields, METH_FASTCALL,
     "fast_fields(plan, names): reads of the plan's class's fields answered from the slots"},
    {"class_calls", (PyCFunction)(void (*)(void))class_calls, METH_FASTCALL,
     "class_calls(cls, init): calls of cls made in one C call (init: its slot_init)"},
    {"sped_up", (PyCFunction)sped_up, METH_O,
     "sped_up(cls) -> (fields read by fast_fields, calls made by class_calls)"},
    {"slot_init", (PyCFunction)(void (*)(void))slot_init, METH_FASTCALL,
     "slot_init(plan, names, positional, fields, defaults, factories, required, wrapped) -> "
     "an __init__ that sets the plan's slots from its arguments"},
    {"tuple_of", (PyCFunction)(void (*)(void))tuple_of, METH_FASTCALL,
     "tuple_of(cls, *items) -> tuple.__new__(cls, items), the items given as arguments"},
    {"tuple_new", (PyCFunction)(void (*)(void))tuple_new, METH_FASTCALL,
     "tuple_new(cls, items) -> tuple.__new__(cls, items), made directly for a named tuple"},
    {"codec_encode", (PyCFunction)(void (*)(void))codec_encode, METH_FASTCALL,
     "codec_encode(ev, before, table) -> _event_codec.encode_py(ev, before)"},
    {"codec_decode", (PyCFunction)(void (*)(void))codec_decode, METH_FASTCALL,
     "codec_decode(item, before, table) -> _event_codec.decode_py(item, before)"},
    {"pack_events", (PyCFunction)(void (*)(void))pack_events, METH_FASTCALL,
     "pack_events(items, before, table) -> (bytes, last record) of a worker's batch, or None "
     "(_event_codec.EventWriter)"},
    {"unpack_events", (PyCFunction)(void (*)(void))unpack_events, METH_FASTCALL,
     "unpack_events(data, before, table) -> (items, last record) of a packed batch "
     "(_event_codec.follow)"},
    {"json_value", (PyCFunction)(void (*)(void))json_value, METH_FASTCALL,
     "json_value(o, level, step, fallback) -> the indented JSON text of o (json_text._text_py)"},
    {"json_fields", (PyCFunction)(void (*)(void))json_fields, METH_FASTCALL,
     "json_fields(pieces, values, level, step, fallback) -> the pieces around the values' "
     "texts"},
    {"marshal_dumps", (PyCFunction)(void (*)(void))marshal_dumps, METH_FASTCALL,
     "marshal_dumps(value, rows) -> bytes marshal.loads reads as marshal.dumps(value)'s "
     "(rows: a list of tuples and named tuples, each as a plain tuple); None: not written "
     "here"},
    {"json_rows_apart", (PyCFunction)(void (*)(void))json_rows_apart, METH_FASTCALL,
     "json_rows_apart(rows, ahead, behind, at, level, step, fallback, heads, first, pos, "
     "piece) -> (text, cuts, done): a batch of rows' text, each row's value at `at` left out "
     "(json_text.apart_pieces)"},
    {"json_splice", (PyCFunction)(void (*)(void))json_splice, METH_FASTCALL,
     "json_splice(text, start, cuts, j0, j1, i0, count, codes, causes) -> text with the "
     "causes of the compilations of cuts[j0:j1] put in their places (json_text.spliced)"},
    {"json_chunk", (PyCFunction)(void (*)(void))json_chunk, METH_FASTCALL,
     "json_chunk(data, pieces, level, step, heads) -> the UTF-8 JSON text of a spooled "
     "chunk's events, or None (timeline/spool.py)"},
    {"fp_slot", (PyCFunction)(void (*)(void))fp_slot, METH_FASTCALL,
     "fp_slot(slots, mask, fp, put) -> fp's slot i in the table, or -1 - i: the empty one "
     "where it would go (stored there with put)"},
    {"absl_tail", (PyCFunction)(void (*)(void))absl_tail, METH_FASTCALL,
     "absl_tail(line, sources, fallback) -> (seconds, file, end) of an absl prefix's rest, "
     "or None (tensorflow._absl_tail_py)"},
    {"traced_fields", (PyCFunction)(void (*)(void))traced_fields, METH_FASTCALL,
     "traced_fields(msg) -> (function, wrapper or None, seconds) of a JAX 'Finished tracing' "
     "message, or None (jax.traced_fields_py)"},
    {"in_seconds", (PyCFunction)(void (*)(void))in_seconds, METH_FASTCALL,
     "in_seconds(msg, prefix) -> (name, seconds) of '<prefix><name> in <seconds> sec', or "
     "None (jax.in_seconds_py)"},
    {"level_first", (PyCFunction)(void (*)(void))level_first, METH_FASTCALL,
     "level_first(line, levels) -> (level, logger, message) of a line 'LEVEL:logger:[lineno:[ "
     "]]message', or None (_pylog.level_first_py)"},
    {"type_shape", (PyCFunction)(void (*)(void))type_shape, METH_FASTCALL,
     "type_shape(text, fallback) -> (element type, dimensions, the rest, the dimensions one "
     "by one) of an argument's type, or None (rules.type_shape_py; text that is not ASCII: "
     "fallback(text))"},
    {"shape_dims", (PyCFunction)(void (*)(void))shape_dims, METH_FASTCALL,
     "shape_dims(text, fallback) -> the dimensions of text's first [...] of numbers, or None "
     "(reason_facts.shape_dims_py; text that is not ASCII: fallback(text))"},
    {"fp_rehash", (PyCFunction)(void (*)(void))fp_rehash, METH_FASTCALL,
     "fp_rehash(old, new, mask, old_numbers, new_numbers): every fingerprint of old (and "
     "its number) stored in the empty table new"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "_native",
    .m_doc = "The log scanner's byte work in C (see _spans.py for the Python it replaces), "
             "slotted objects made (slotted.py), named tuples (_tuples.py), the workers' event "
             "codec (_event_codec.py), a report's JSON text (json_text.py), the fingerprint "
             "tables' probing (timeline/distinct.py), an absl prefix's rest (tensorflow.py) "
             "and the fields of JAX's most frequent messages (jax.py) and of shapes "
             "(timeline/reason_facts.py).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    if (PyType_Ready(&slot_init_type) < 0) {
        return NULL;
    }
    if (tuple_dunder_new == NULL) {
        tuple_dunder_new = PyObject_GetAttrString((PyObject *)&PyTuple_Type, "__new__");
        plain_tuple_classes = PyDict_New();
        if (tuple_dunder_new == NULL || plain_tuple_classes == NULL) {
            return NULL;
        }
    }
    return PyModule_Create(&module_def);
}
