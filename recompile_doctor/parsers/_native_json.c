/* The indented JSON text of a report's values, in C: the twin of json_text._text_py
 * (json.dumps(o, indent=..., ensure_ascii=False) with its lines after the first moved right),
 * for the values a report is made of.
 *
 * A JSON report of a long log writes every event: tens of thousands of small objects of
 * strings, numbers and small dictionaries.  Compiled from Python, that walk costs about
 * 15,000 instructions an event (a list of pieces, a call per value, its type asked again
 * in each call); here it is one C walk, writing into one growing string.
 *
 * Only the exact types are written here: str, int, float, None, True, False, dict (with
 * string keys), list and tuple.  Anything else (a subclass, another sequence, a dict with a
 * key of another type, a value JSON cannot hold) is handed whole to the fallback, the Python
 * function this replaces, whose text or error is then the answer's.  A string that needs
 * escaping is escaped by json's own encode_basestring; one that needs none is written
 * between quotes as it is, which is what that function gives for it.  The tests hold every
 * function here to the Python, text for text and error for error.
 */
#include "_native_json.h"

#include "_native_writer.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The text is written into a growing buffer of bytes while every character of it is below
 * 256 (a report's text nearly always: a log's lines are read as Latin-1 or ASCII-only UTF-8
 * for the most part), and the string made from it at the end; a character above 255 moves
 * what was written, and all that comes after, into CPython's own writer of strings
 * (private before 3.14, public since).  Each small write to that writer costs a call and
 * its checks (about a hundred instructions); here it is a copy. */
#if PY_VERSION_HEX >= 0x030E0000
typedef PyUnicodeWriter *Wide;
#define WIDE_INIT(o) (((o)->wide = PyUnicodeWriter_Create((o)->len)) == NULL ? -1 : 0)
#define WIDE_STR(o, s) PyUnicodeWriter_WriteStr((o)->wide, (s))
#define WIDE_ASCII(o, p, n) PyUnicodeWriter_WriteUTF8((o)->wide, (p), (n))
#define WIDE_FINISH(o) PyUnicodeWriter_Finish((o)->wide)
#define WIDE_DISCARD(o) PyUnicodeWriter_Discard((o)->wide)
#else
typedef _PyUnicodeWriter *Wide;
#define WIDE_INIT(o)                                                                          \
    (_PyUnicodeWriter_Init(&(o)->wide_writer), (o)->wide_writer.overallocate = 1,          \
     (o)->wide = &(o)->wide_writer, 0)
#define WIDE_STR(o, s) _PyUnicodeWriter_WriteStr((o)->wide, (s))
#define WIDE_ASCII(o, p, n) _PyUnicodeWriter_WriteASCIIString((o)->wide, (p), (n))
#define WIDE_FINISH(o) _PyUnicodeWriter_Finish((o)->wide)
#define WIDE_DISCARD(o) _PyUnicodeWriter_Dealloc((o)->wide)
#endif

typedef struct {
    char *buf; /* the text so far, a byte a character (while wide is NULL) */
    Py_ssize_t len, cap;
    int high;  /* a character of buf is above 127 */
    Wide wide; /* once a character above 255 came: the text so far, and all after */
    PyObject *bytes; /* the bytes object buf is the storage of (out_open_bytes), or NULL */
#if PY_VERSION_HEX < 0x030E0000
    _PyUnicodeWriter wide_writer;
#endif
} OutText;
typedef OutText *Out;

/* a buffer kept from one text to the next (NULL while one is being written: a fallback's
 * Python may write a text of its own meanwhile, which then takes a buffer of its own) */
static char *spare_buf = NULL;
static Py_ssize_t spare_cap = 0;

static int
out_open(Out o, Py_ssize_t room)
{
    o->len = 0;
    o->high = 0;
    o->wide = NULL;
    o->bytes = NULL;
    if (spare_buf != NULL && spare_cap >= room) {
        o->buf = spare_buf;
        o->cap = spare_cap;
        spare_buf = NULL;
        return 0;
    }
    o->buf = PyMem_Malloc((size_t)room);
    o->cap = room;
    if (o->buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* Bytes written straight into a bytes object of room bytes (made to size at the end by
 * out_bytes: a chunk's megabytes of JSON not copied once written) */
static int
out_open_bytes(Out o, Py_ssize_t room)
{
    o->len = 0;
    o->high = 0;
    o->wide = NULL;
    o->bytes = PyBytes_FromStringAndSize(NULL, room);
    if (o->bytes == NULL) {
        o->buf = NULL;
        return -1;
    }
    o->buf = PyBytes_AS_STRING(o->bytes);
    o->cap = room;
    return 0;
}

/* The bytes written, as the bytes object of out_open_bytes (NULL: an error) */
static PyObject *
out_bytes(Out o)
{
    PyObject *made = o->bytes;
    o->bytes = NULL;
    o->buf = NULL;
    if (made != NULL && _PyBytes_Resize(&made, o->len) < 0) {
        return NULL;
    }
    return made;
}

/* (the slow path of out_room, kept out of line: the writers that call out_room are the
 * inner loops) */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static int
out_grow(Out o, Py_ssize_t n)
{
    if (o->bytes == NULL) {
        return buffer_grow(&o->buf, &o->cap, o->len, n);
    }
    if (n > PY_SSIZE_T_MAX / 2 - o->len) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t size = Py_MAX(o->cap * 2, o->len + n);
    if (_PyBytes_Resize(&o->bytes, size) < 0) { /* (o->bytes NULL then, its memory freed) */
        o->buf = NULL;
        return -1;
    }
    o->buf = PyBytes_AS_STRING(o->bytes);
    o->cap = size;
    return 0;
}

/* Let go of o's buffer: kept for the next text when it is the bigger one */
static void
out_release(Out o)
{
    if (o->bytes != NULL) {
        Py_CLEAR(o->bytes);
        o->buf = NULL;
        return;
    }
    if (o->buf == NULL) {
        return;
    }
    if (o->cap <= (1 << 20) && (spare_buf == NULL || spare_cap < o->cap)) {
        PyMem_Free(spare_buf);
        spare_buf = o->buf;
        spare_cap = o->cap;
    }
    else {
        PyMem_Free(o->buf);
    }
    o->buf = NULL;
}

static inline int
out_room(Out o, Py_ssize_t n)
{
    return o->len + n <= o->cap ? 0 : out_grow(o, n);
}

/* The bytes written so far as a str (its characters those bytes) */
static PyObject *
out_made(Out o)
{
    PyObject *s = PyUnicode_New(o->len, o->high ? 255 : 127);
    if (s != NULL) {
        memcpy(PyUnicode_DATA(s), o->buf, (size_t)o->len);
    }
    return s;
}

/* From now on, the text goes to CPython's writer, the text so far first */
static int
out_widen(Out o)
{
    PyObject *so_far = out_made(o);
    if (so_far == NULL) {
        return -1;
    }
    out_release(o);
    if (WIDE_INIT(o) < 0) {
        Py_DECREF(so_far);
        return -1;
    }
    int r = WIDE_STR(o, so_far);
    Py_DECREF(so_far);
    return r;
}

/* n ASCII characters at p */
static inline int
out_ascii(Out o, const char *p, Py_ssize_t n)
{
    if (o->wide != NULL) {
        return WIDE_ASCII(o, p, n);
    }
    if (out_room(o, n) < 0) {
        return -1;
    }
    memcpy(o->buf + o->len, p, (size_t)n);
    o->len += n;
    return 0;
}

/* The str s, exact or not, as it is */
static int
out_str(Out o, PyObject *s)
{
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(s) < 0) {
        return -1;
    }
#endif
    if (o->wide == NULL) {
        if (PyUnicode_KIND(s) == PyUnicode_1BYTE_KIND) {
            Py_ssize_t n = PyUnicode_GET_LENGTH(s);
            if (out_room(o, n) < 0) {
                return -1;
            }
            memcpy(o->buf + o->len, PyUnicode_1BYTE_DATA(s), (size_t)n);
            o->len += n;
            if (!PyUnicode_IS_ASCII(s)) {
                o->high = 1;
            }
            return 0;
        }
        if (out_widen(o) < 0) {
            return -1;
        }
    }
    return WIDE_STR(o, s);
}

/* The text written, as a new str (NULL: an error); o is done with either way */
static PyObject *
out_finish(Out o)
{
    if (o->wide != NULL) {
        return WIDE_FINISH(o);
    }
    PyObject *s = out_made(o);
    out_release(o);
    return s;
}

static void
out_discard(Out o)
{
    if (o->wide != NULL) {
        WIDE_DISCARD(o);
    }
    out_release(o);
}

#define out_lit(o, lit) out_ascii((o), (lit), (Py_ssize_t)(sizeof(lit) - 1))

static PyObject *encode_basestring = NULL; /* json.encoder.encode_basestring */

/* "\n" + step * k and ",\n" + step * k for the step last asked for, k < INDENTS */
#define INDENTS 16
static PyObject *indent_step = NULL;
static PyObject *indent_nl[INDENTS], *indent_comma[INDENTS];

/* A new reference to "\n" + step * k, or ",\n" + step * k when comma */
static PyObject *
indent_text(PyObject *step, Py_ssize_t k, int comma)
{
    if (k < INDENTS) {
        if (indent_step != step) {
            int same = indent_step != NULL && PyUnicode_Compare(indent_step, step) == 0;
            if (PyErr_Occurred()) {
                return NULL;
            }
            if (!same) {
                for (int i = 0; i < INDENTS; i++) {
                    Py_CLEAR(indent_nl[i]);
                    Py_CLEAR(indent_comma[i]);
                }
            }
            Py_INCREF(step);
            Py_XSETREF(indent_step, step);
        }
        PyObject *got = comma ? indent_comma[k] : indent_nl[k];
        if (got != NULL) {
            return Py_NewRef(got);
        }
    }
    PyObject *body = PySequence_Repeat(step, k);
    if (body == NULL) {
        return NULL;
    }
    PyObject *made = PyUnicode_FromFormat(comma ? ",\n%U" : "\n%U", body);
    Py_DECREF(body);
    if (made != NULL && k < INDENTS) {
        PyObject **slot = comma ? &indent_comma[k] : &indent_nl[k];
        Py_XSETREF(*slot, Py_NewRef(made));
    }
    return made;
}

/* made, a new reference (NULL: an error), written and let go */
static int
put_new(Out out, PyObject *made)
{
    if (made == NULL) {
        return -1;
    }
    int r = out_str(out, made);
    Py_DECREF(made);
    return r;
}

static int
put_indent(Out out, PyObject *step, Py_ssize_t k, int comma)
{
    return put_new(out, indent_text(step, k, comma));
}

/* Whether json's encode_basestring escapes c (a quote, a backslash or a control
 * character: it writes these escaped, all others as they are) */
#define SPECIAL(c) ((c) < 0x20 || (c) == '"' || (c) == '\\')

/* Whether any of the eight characters x holds is one JSON escapes: below 0x20, a quote or
 * a backslash (a byte equal to one: zero once xored with it) */
static inline int
any_special(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
    return ((((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b)) & highs) != 0;
}

#ifdef __SSE2__
#include <emmintrin.h>
/* any_special of sixteen characters: a quote, a backslash, or one below 0x20 (the bytes
 * whose maximum with 0x1f is 0x1f) */
static inline int
special16(__m128i x)
{
    const __m128i low = _mm_set1_epi8(0x1f);
    __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
                               _mm_cmpeq_epi8(x, _mm_set1_epi8('\\')));
    hit = _mm_or_si128(hit, _mm_cmpeq_epi8(_mm_max_epu8(x, low), low));
    return _mm_movemask_epi8(hit) != 0;
}
#endif

/* Whether any of the n bytes at p (one a character) is one JSON escapes */
static int
has_special(const Py_UCS1 *p, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) { /* (eight at a time) */
        uint64_t x;
        memcpy(&x, p + i, 8);
        if (any_special(x)) {
            return 1;
        }
    }
    for (; i < n; i++) {
        if (SPECIAL(p[i])) {
            return 1;
        }
    }
    return 0;
}

/* Whether json's encode_basestring would change s's characters */
static int
needs_escape(PyObject *s)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    if (kind == PyUnicode_1BYTE_KIND) {
        return has_special((const Py_UCS1 *)data, n);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (SPECIAL(c)) {
            return 1;
        }
    }
    return 0;
}

/* What JSON writes after a backslash for each character it escapes (u: \u00xx), 0 for the
 * others (the characters past the backslash, 92, are none of them) */
static const char ESCAPE[256] = {
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u',
    'f', 'r', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 0, 0, '"', 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, '\\',
};

/* c as JSON writes it in a string, at w: where the next character goes */
static inline char *
escaped_char(char *w, Py_UCS1 c)
{
    char e = ESCAPE[c];
    if (e == 0) {
        *w++ = (char)c;
        return w;
    }
    *w++ = '\\';
    *w++ = e;
    if (e == 'u') {
        *w++ = '0';
        *w++ = '0';
        *w++ = "0123456789abcdef"[c >> 4];
        *w++ = "0123456789abcdef"[c & 0xf];
    }
    return w;
}

/* characters of a string escaped at once (room is made for each of them at its longest) */
#define ESCAPE_CHUNK 4096

/* The JSON text of the n characters at p (one byte each: Latin-1, or the bytes of UTF-8,
 * whose escaped characters are all single bytes) into o's buffer: what
 * encode_basestring(s) gives (its escapes: \" \\ \n \r \t \b \f, and \u00xx for the
 * other control characters), written here in one pass (that function counts the text's
 * length in one pass over it and writes it in a second, into a str this would copy):
 * eight characters at a time where none of them is escaped (a log line's runs of words),
 * one at a time by a table where one is (a structured trace's record: a quote every few
 * characters) */
static int
put_escaped(Out o, const Py_UCS1 *p, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    if (out_room(o, 1) < 0) {
        return -1;
    }
    o->buf[o->len++] = '"';
    while (i < n) {
        Py_ssize_t stop = Py_MIN(n, i + ESCAPE_CHUNK);
        if (out_room(o, (stop - i) * 6) < 0) {
            return -1;
        }
        char *w = o->buf + o->len;
#ifdef __SSE2__
        while (i + 16 <= stop) { /* (sixteen at a time where the machine compares them) */
            __m128i x = _mm_loadu_si128((const __m128i *)(p + i));
            if (!special16(x)) {
                _mm_storeu_si128((__m128i *)w, x);
                w += 16;
                i += 16;
                continue;
            }
            for (int k = 0; k < 16; k++) {
                w = escaped_char(w, p[i++]);
            }
        }
#endif
        while (i + 8 <= stop) {
            uint64_t x;
            memcpy(&x, p + i, 8);
            if (!any_special(x)) {
                memcpy(w, &x, 8);
                w += 8;
                i += 8;
                continue;
            }
            for (int k = 0; k < 8; k++) {
                w = escaped_char(w, p[i++]);
            }
        }
        while (i < stop) {
            w = escaped_char(w, p[i++]);
        }
        o->len = w - o->buf;
    }
    if (out_room(o, 1) < 0) {
        return -1;
    }
    o->buf[o->len++] = '"';
    return 0;
}

/* put_escaped of the characters of s, a string of one byte a character */
static int
put_bytes_string(Out o, PyObject *s)
{
    if (put_escaped(o, PyUnicode_1BYTE_DATA(s), PyUnicode_GET_LENGTH(s)) < 0) {
        return -1;
    }
    if (!PyUnicode_IS_ASCII(s)) {
        o->high = 1;
    }
    return 0;
}

/* The JSON text of the exact string s: encode_basestring(s) */
static int
put_string(Out out, PyObject *s)
{
    if (PyUnicode_READY(s) < 0) {
        return -1;
    }
    if (out->wide == NULL && PyUnicode_KIND(s) == PyUnicode_1BYTE_KIND) {
        return put_bytes_string(out, s);
    }
    if (needs_escape(s)) {
        return put_new(out, PyObject_CallOneArg(encode_basestring, s));
    }
    if (out_lit(out, "\"") < 0 || out_str(out, s) < 0) {
        return -1;
    }
    return out_lit(out, "\"");
}

/* u's decimal digits, written backwards to end: where they start */
static char *
decimal_digits(char *end, unsigned long long u)
{
    char *p = end;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    return p;
}

/* Where f is a decimal of at most `places` places (scale: 10**places), 0.0001 <= |f| <
 * limit, its float.__repr__ written backwards to end (32 bytes are room enough) without
 * the shortest-digits search (dtoa: a few thousand instructions): where the text starts,
 * or NULL for any other float.  Asked with six places below 2**33 (a time in seconds
 * rounded to the microsecond), then nine below 2**23 (a duration JAX logs: "in
 * 0.003526004 sec").
 *
 * Why it is repr's text: with m = f * scale rounded, m / scale == f means the decimal
 * m / scale reads back as f (m, below 2**53, and scale are exact doubles, and both the
 * division and reading a decimal round the exact quotient to the nearest double).  Below
 * limit the doubles next to f are less than 1 / scale apart (2**-20 below 2**33, 2**-30
 * below 2**23), so no other multiple of 1 / scale reads back as f, and a decimal with
 * fewer significant digits than m's (the same first digit or a higher one) is such a
 * multiple: m's digits are the shortest that read back as f, which are repr's.  From
 * 0.0001 up repr writes them without an exponent: the integer part, a point and the
 * fraction without its trailing zeros (at least one digit). */
static char *
short_decimal(double f, char *end, int places, double scale, double limit)
{
    double a = fabs(f);
    if (!(a >= 1e-4 && a < limit)) {
        return NULL;
    }
    long long m = llround(a * scale);
    if ((double)m / scale != a) {
        return NULL;
    }
    long long unit = (long long)scale;
    char *p = end;
    long long frac = m % unit;
    while (places > 1 && frac % 10 == 0) {
        frac /= 10;
        places--;
    }
    for (int i = 0; i < places; i++) {
        *--p = (char)('0' + frac % 10);
        frac /= 10;
    }
    *--p = '.';
    p = decimal_digits(p, (unsigned long long)(m / unit));
    if (f < 0) {
        *--p = '-';
    }
    return p;
}

/* f as float.__repr__ writes it (json's NaN and Infinity aside) */
static int
put_double(Out out, double f)
{
    if (isnan(f)) {
        return out_lit(out, "NaN");
    }
    if (isinf(f)) {
        return f > 0 ? out_lit(out, "Infinity") : out_lit(out, "-Infinity");
    }
    char fixed[32];
    char *end = fixed + sizeof(fixed), *start = short_decimal(f, end, 6, 1e6, 8589934592.0);
    if (start == NULL) {
        start = short_decimal(f, end, 9, 1e9, 8388608.0);
    }
    if (start != NULL) {
        return out_ascii(out, start, end - start);
    }
    /* (what float_repr does, without the str it makes) */
    char *text = PyOS_double_to_string(f, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (text == NULL) {
        return -1;
    }
    int r = out_ascii(out, text, (Py_ssize_t)strlen(text));
    PyMem_Free(text);
    return r;
}

/* The exact int o in decimal, as int.__repr__ writes it */
static int
put_int(Out out, PyObject *o)
{
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0) { /* (bigger than 64 bits: int's own, with its limit on digits) */
        return put_new(out, PyLong_Type.tp_repr(o));
    }
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    char buf[24];
    char *end = buf + sizeof(buf);
    char *p = decimal_digits(end, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v);
    if (v < 0) {
        *--p = '-';
    }
    return out_ascii(out, p, end - p);
}

static int put_value(Out out, PyObject *o, Py_ssize_t level, PyObject *step, PyObject *fallback);

/* fallback(o, level, step), which must give a str */
static int
put_fallback(Out out, PyObject *o, Py_ssize_t level, PyObject *step, PyObject *fallback)
{
    PyObject *lv = PyLong_FromSsize_t(level);
    if (lv == NULL) {
        return -1;
    }
    PyObject *call_args[3] = {o, lv, step};
    PyObject *t = PyObject_Vectorcall(fallback, call_args, 3, NULL);
    Py_DECREF(lv);
    if (t == NULL) {
        return -1;
    }
    if (!PyUnicode_Check(t)) {
        PyErr_Format(PyExc_TypeError, "the JSON fallback gave %.100s, not str",
                     Py_TYPE(t)->tp_name);
        Py_DECREF(t);
        return -1;
    }
    return put_new(out, t);
}

/* A dict whose keys are all exact strings (the caller checked): its items at level + 1 */
static int
put_dict(Out out, PyObject *d, Py_ssize_t level, PyObject *step, PyObject *fallback)
{
    Py_ssize_t size = PyDict_GET_SIZE(d);
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    int first = 1;
    if (out_lit(out, "{") < 0) {
        return -1;
    }
    while (PyDict_Next(d, &pos, &k, &v)) {
        if (!PyUnicode_CheckExact(k)) { /* (a key put in meanwhile, in place of another) */
            PyErr_SetString(PyExc_RuntimeError, "dictionary keys changed during iteration");
            return -1;
        }
        /* (held: a fallback's Python could change the dict meanwhile) */
        Py_INCREF(k);
        Py_INCREF(v);
        int r = -1;
        if (put_indent(out, step, level + 1, !first) == 0 && put_string(out, k) == 0 &&
            out_lit(out, ": ") == 0) {
            r = put_value(out, v, level + 1, step, fallback);
        }
        Py_DECREF(k);
        Py_DECREF(v);
        if (r < 0) {
            return -1;
        }
        if (PyDict_GET_SIZE(d) != size) {
            PyErr_SetString(PyExc_RuntimeError, "dictionary changed size during iteration");
            return -1;
        }
        first = 0;
    }
    if (put_indent(out, step, level, 0) < 0) {
        return -1;
    }
    return out_lit(out, "}");
}

/* An exact list or tuple, not empty: its items at level + 1 */
static int
put_items(Out out, PyObject *seq, Py_ssize_t level, PyObject *step, PyObject *fallback)
{
    if (out_lit(out, "[") < 0) {
        return -1;
    }
    /* (a list's size read at every item, as Python's loop over it does) */
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *item = Py_NewRef(PySequence_Fast_GET_ITEM(seq, i));
        int r = put_indent(out, step, level + 1, i > 0);
        if (r == 0) {
            r = put_value(out, item, level + 1, step, fallback);
        }
        Py_DECREF(item);
        if (r < 0) {
            return -1;
        }
    }
    if (put_indent(out, step, level, 0) < 0) {
        return -1;
    }
    return out_lit(out, "]");
}

static int
all_keys_strings(PyObject *d)
{
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(d, &pos, &k, &v)) {
        if (!PyUnicode_CheckExact(k)) {
            return 0;
        }
    }
    return 1;
}

static int
put_value(Out out, PyObject *o, Py_ssize_t level, PyObject *step, PyObject *fallback)
{
    PyTypeObject *tp = Py_TYPE(o);
    if (tp == &PyUnicode_Type) {
        return put_string(out, o);
    }
    if (tp == &PyFloat_Type) {
        return put_double(out, PyFloat_AS_DOUBLE(o));
    }
    if (tp == &PyLong_Type) {
        return put_int(out, o);
    }
    if (o == Py_None) {
        return out_lit(out, "null");
    }
    if (o == Py_True) {
        return out_lit(out, "true");
    }
    if (o == Py_False) {
        return out_lit(out, "false");
    }
    int dict = tp == &PyDict_Type;
    if (dict || tp == &PyList_Type || tp == &PyTuple_Type) {
        if ((dict ? PyDict_GET_SIZE(o) : PySequence_Fast_GET_SIZE(o)) == 0) {
            return dict ? out_lit(out, "{}") : out_lit(out, "[]");
        }
        if (dict && !all_keys_strings(o)) {
            return put_fallback(out, o, level, step, fallback);
        }
        if (Py_EnterRecursiveCall(" while writing a JSON value")) {
            return -1;
        }
        int r = dict ? put_dict(out, o, level, step, fallback)
                     : put_items(out, o, level, step, fallback);
        Py_LeaveRecursiveCall();
        return r;
    }
    return put_fallback(out, o, level, step, fallback);
}

/* args[i] as a level (a non-negative index) and args[i + 1] as the step (a str) */
static int
level_and_step(PyObject *const *args, Py_ssize_t i, Py_ssize_t *level)
{
    *level = PyLong_AsSsize_t(args[i]);
    if (*level == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (*level < 0) {
        PyErr_SetString(PyExc_ValueError, "level must not be negative");
        return -1;
    }
    if (!PyUnicode_CheckExact(args[i + 1])) {
        PyErr_SetString(PyExc_TypeError, "step must be a str");
        return -1;
    }
    return 0;
}

/* the room a text's buffer starts with when no kept one is there (it doubles as it grows,
 * and the biggest, up to 1 MB, is kept for the next text) */
#define FIRST_ROOM 256

/* The text of the values (n of them) with the pieces (n + 1, or none) around them */
static PyObject *
written(PyObject *pieces, PyObject *const *values, Py_ssize_t n, Py_ssize_t level,
        PyObject *step, PyObject *fallback)
{
    OutText text_out;
    Out out = &text_out;
    if (out_open(out, FIRST_ROOM) < 0) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i <= n; i++) {
        if ((pieces != NULL && out_str(out, PyTuple_GET_ITEM(pieces, i)) < 0) ||
            (i < n && put_value(out, values[i], level, step, fallback) < 0)) {
            out_discard(out);
            return NULL;
        }
    }
    return out_finish(out);
}

static int native_json_init(void);

PyObject *
json_value(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t level;
    if (encode_basestring == NULL && native_json_init() < 0) {
        return NULL;
    }
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "json_value(o, level, step, fallback)");
        return NULL;
    }
    if (level_and_step(args, 1, &level) < 0) {
        return NULL;
    }
    return written(NULL, args, 1, level, args[2], args[3]);
}

PyObject *
json_fields(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t level;
    if (encode_basestring == NULL && native_json_init() < 0) {
        return NULL;
    }
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "json_fields(pieces, values, level, step, fallback)");
        return NULL;
    }
    PyObject *pieces = args[0], *values = args[1];
    if (!PyTuple_CheckExact(pieces) ||
        !(PyTuple_CheckExact(values) || PyList_CheckExact(values))) {
        PyErr_SetString(PyExc_TypeError,
                        "json_fields: pieces must be a tuple, values a tuple or a list");
        return NULL;
    }
    if (level_and_step(args, 2, &level) < 0) {
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(pieces);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(pieces, i))) {
            PyErr_SetString(PyExc_TypeError, "json_fields: the pieces must be str");
            return NULL;
        }
    }
    /* (held: a fallback's Python could change a list of values meanwhile) */
    PyObject *items = PySequence_Tuple(values);
    if (items == NULL) {
        return NULL;
    }
    PyObject *text = NULL;
    if (PyTuple_GET_SIZE(items) + 1 != n) {
        PyErr_Format(PyExc_ValueError, "%zd pieces for %zd values", n, PyTuple_GET_SIZE(items));
    }
    else {
        text = written(pieces, &PyTuple_GET_ITEM(items, 0), n - 1, level, args[3], args[4]);
    }
    Py_DECREF(items);
    return text;
}

/* json.encoder's escaper, found at the first call (json is not imported with the module:
 * start-up) */
static int
native_json_init(void)
{
    PyObject *json_encoder = PyImport_ImportModule("json.encoder");
    if (json_encoder == NULL) {
        return -1;
    }
    encode_basestring = PyObject_GetAttrString(json_encoder, "encode_basestring");
    Py_DECREF(json_encoder);
    return encode_basestring == NULL ? -1 : 0;
}

/* ---- A spooled chunk of a report's events, from the bytes marshal wrote ----
 *
 * The events' spool (timeline/spool.py) writes its events 2,048 at a time as marshal's
 * bytes of a list of rows, each the event's eight values.  The process that writes the
 * events' JSON text (events_json.py) used to read each chunk back into Python objects
 * (half of its instructions: eight values, a dict and its items per event, made and freed)
 * and write their text from those.  json_chunk writes the text from the bytes themselves:
 * the same text, as UTF-8 (what that process writes), for the values marshal writes in a
 * report's events (str, int, float, None, True, False, tuple, list, dict of str keys, and
 * marshal's references back to an object written before).  A chunk holding anything else
 * (a key of another type, an int past 60 bits, bytes, a set, a format this does not know)
 * gives None, and the caller writes that chunk's events from its rows as before: the tests
 * hold the two to the same text.
 *
 * marshal's format (Python/marshal.c, version 4): a type byte, FLAG_REF set on it when the
 * object is numbered for references back to it (in the order their type bytes come: a
 * container is numbered before its items), then the object: 'N' 'T' 'F'; 'i' a 4-byte
 * int; 'l' a count of 15-bit digits (negative: a negative number) and the digits, 2 bytes
 * each; 'g' an 8-byte double; 'a' 'A' (ASCII), 'u' 't' (UTF-8, surrogates passed) with a
 * 4-byte length, 'z' 'Z' (ASCII) with a 1-byte one; '(' '[' a 4-byte count and the items,
 * ')' a 1-byte count; '{' key and value pairs up to a '0'; 'r' the 4-byte number of an
 * object written before.  All numbers little-endian. */

#define M_FLAG_REF 0x80
#define M_DEEPEST 100 /* nesting written here (deeper: None) */

/* a numbered object: where its type byte is, and where its text is in the output once a
 * reference back to a string wrote it (text_at -1 until then): the strings a chunk's
 * events share (their kinds, input, modules, the keys of their details) are written once
 * and copied after, not escaped again at each reference (a tenth of the writer's work) */
typedef struct {
    Py_ssize_t pos, text_at, text_len;
} MRef;

typedef struct {
    const unsigned char *data;
    Py_ssize_t size;
    MRef *refs; /* the numbered objects, by their number */
    Py_ssize_t nrefs, refcap;
    /* objects still to be written: a reference back to a container being written (a list
     * holding itself, which no event holds) would be written again and again */
    Py_ssize_t budget;
} Marshalled;

/* The 4-byte little-endian signed number at pos (0: past the end) */
static int
m_long(const Marshalled *m, Py_ssize_t pos, int32_t *v)
{
    if (pos < 0 || pos + 4 > m->size) {
        return 0;
    }
    const unsigned char *p = m->data + pos;
    *v = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                   (uint32_t)p[3] << 24);
    return 1;
}

/* Number the object whose type byte is at pos (-1: no memory) */
static int
m_number(Marshalled *m, Py_ssize_t pos)
{
    if (m->nrefs == m->refcap) {
        Py_ssize_t cap = m->refcap ? m->refcap * 2 : 256;
        MRef *refs = PyMem_Realloc(m->refs, (size_t)cap * sizeof(MRef));
        if (refs == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        m->refs = refs;
        m->refcap = cap;
    }
    MRef *r = &m->refs[m->nrefs++];
    r->pos = pos;
    r->text_at = -1;
    r->text_len = 0;
    return 0;
}

/* Where a string's characters are: the string at pos (its type byte), not a reference.
 * Sets *chars and *n; 0 when pos holds no string of a kind written here. */
static int
m_string(const Marshalled *m, Py_ssize_t pos, const unsigned char **chars, Py_ssize_t *n)
{
    if (pos >= m->size) {
        return 0;
    }
    int32_t len;
    switch (m->data[pos] & ~M_FLAG_REF) {
    case 'a':
    case 'A':
    case 'u':
    case 't':
        if (!m_long(m, pos + 1, &len) || len < 0 || len > m->size - pos - 5) {
            return 0;
        }
        *chars = m->data + pos + 5;
        *n = len;
        return 1;
    case 'z':
    case 'Z':
        if (pos + 2 > m->size || m->data[pos + 1] > m->size - pos - 2) {
            return 0;
        }
        *chars = m->data + pos + 2;
        *n = m->data[pos + 1];
        return 1;
    default:
        return 0;
    }
}

/* The items of the tuple or list at pos (its type byte '(', ')' or '['): their count, and
 * where the first begins (-1: another type, or cut short) */
static Py_ssize_t
m_items(const Marshalled *m, Py_ssize_t pos, int32_t *count)
{
    if (pos >= m->size) {
        return -1;
    }
    switch (m->data[pos] & ~M_FLAG_REF) {
    case ')':
        if (pos + 2 > m->size) {
            return -1;
        }
        *count = m->data[pos + 1];
        return pos + 2;
    case '(':
    case '[':
        return m_long(m, pos + 1, count) && *count >= 0 ? pos + 5 : -1;
    default:
        return -1;
    }
}

/* The value of an int marshal wrote as 'l' at pos, within 60 bits: where the next object
 * begins (-1: a bigger one, or cut short) */
static Py_ssize_t
m_bigger_int(const Marshalled *m, Py_ssize_t pos, long long *v)
{
    int32_t count;
    if (!m_long(m, pos + 1, &count) || count < -4 || count > 4) {
        return -1;
    }
    int n = count < 0 ? -count : count;
    if (pos + 5 + 2 * n > m->size) {
        return -1;
    }
    unsigned long long u = 0;
    for (int i = 0; i < n; i++) {
        const unsigned char *d = m->data + pos + 5 + 2 * i;
        unsigned int digit = (unsigned int)d[0] | (unsigned int)d[1] << 8;
        if (digit >= (1u << 15)) {
            return -1;
        }
        u |= (unsigned long long)digit << (15 * i);
    }
    *v = count < 0 ? -(long long)u : (long long)u;
    return pos + 5 + 2 * n;
}

/* The object at pos passed over, the objects in it numbered as marshal numbers them:
 * where the next one begins (-1: not one written here, or cut short; -2: an error set) */
static Py_ssize_t
m_skip(Marshalled *m, Py_ssize_t pos, int depth)
{
    if (pos >= m->size || depth > M_DEEPEST) {
        return -1;
    }
    unsigned char code = m->data[pos];
    if ((code & M_FLAG_REF) && m_number(m, pos) < 0) {
        return -2;
    }
    const unsigned char *chars;
    Py_ssize_t n;
    int32_t count;
    long long v;
    switch (code & ~M_FLAG_REF) {
    case 'N':
    case 'T':
    case 'F':
        return pos + 1;
    case 'i':
    case 'r':
        return pos + 5 <= m->size ? pos + 5 : -1;
    case 'g':
        return pos + 9 <= m->size ? pos + 9 : -1;
    case 'l':
        return m_bigger_int(m, pos, &v);
    case '(':
    case '[':
    case ')': {
        Py_ssize_t at = m_items(m, pos, &count);
        for (int32_t i = 0; i < count && at >= 0; i++) {
            at = m_skip(m, at, depth + 1);
        }
        return at;
    }
    case '{': {
        Py_ssize_t at = pos + 1;
        while (at >= 0 && at < m->size && m->data[at] != '0') {
            at = m_skip(m, at, depth + 1);
            if (at >= 0) {
                at = m_skip(m, at, depth + 1);
            }
        }
        return at < 0 ? at : (at < m->size ? at + 1 : -1);
    }
    default: /* (a string, else not one written here) */
        return m_string(m, pos, &chars, &n) ? chars - m->data + n : -1;
    }
}

/* The object a reference at pos (its type byte 'r') names: where that one's type byte is
 * (-1: a number not given yet) */
static Py_ssize_t
m_referred(const Marshalled *m, Py_ssize_t pos)
{
    int32_t k;
    if (!m_long(m, pos + 1, &k) || k < 0 || k >= m->nrefs) {
        return -1;
    }
    return m->refs[k].pos;
}

/* The string a reference at pos refers to, as its text written before is (copied: 1), or
 * written now and its text's place kept (0); -1: an error; -2: it refers to no string (the
 * caller writes it otherwise: a text is kept only for a string, so a kept one is one) */
static int
m_put_referred_string(Out out, Marshalled *m, Py_ssize_t pos)
{
    int32_t k;
    const unsigned char *chars;
    Py_ssize_t n;
    if (!m_long(m, pos + 1, &k) || k < 0 || k >= m->nrefs) {
        return -1;
    }
    MRef *r = &m->refs[k];
    if (r->text_at >= 0 && out->wide == NULL) {
        if (out_room(out, r->text_len) < 0) {
            return -1;
        }
        memcpy(out->buf + out->len, out->buf + r->text_at, (size_t)r->text_len);
        out->len += r->text_len;
        return 1;
    }
    if (!m_string(m, r->pos, &chars, &n)) {
        return -2;
    }
    Py_ssize_t start = out->len;
    if (put_escaped(out, chars, n) < 0) {
        return -1;
    }
    if (out->wide == NULL) {
        r->text_at = start;
        r->text_len = out->len - start;
    }
    return 0;
}

/* The indents of one chunk's text: ",\n" and step INDENT_STEPS times, made once (an
 * indent is one copy of a part of it, not a copy per step) */
#define INDENT_STEPS 24
typedef struct {
    const char *step;
    Py_ssize_t step_len;
    char *ready; /* ",\n" + step * INDENT_STEPS, or NULL (step too long: step by step) */
} Indents;

/* "\n" + step * k, after a comma when comma */
static int
put_indent_bytes(Out out, const Indents *in, Py_ssize_t k, int comma)
{
    Py_ssize_t step_len = in->step_len;
    if (k > 0 && step_len > (PY_SSIZE_T_MAX / 2) / k) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t n = comma + 1 + step_len * k;
    if (in->ready != NULL && k <= INDENT_STEPS) {
        return out_ascii(out, in->ready + 1 - comma, n);
    }
    if (out_room(out, n) < 0) {
        return -1;
    }
    char *w = out->buf + out->len;
    if (comma) {
        *w++ = ',';
    }
    *w++ = '\n';
    for (Py_ssize_t i = 0; i < k; i++) {
        memcpy(w, in->step, (size_t)step_len);
        w += step_len;
    }
    out->len = w - out->buf;
    return 0;
}

static int
put_long_long(Out out, long long v)
{
    char buf[24];
    char *end = buf + sizeof(buf);
    char *p = decimal_digits(end, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v);
    if (v < 0) {
        *--p = '-';
    }
    return out_ascii(out, p, end - p);
}

/* The JSON text of the object at pos (passed over before: its references numbered) at
 * level, as json_value writes the object marshal reads there: where the next object
 * begins, or -1 with no error set (not one written here: the caller gives up) or with one */
static Py_ssize_t
m_put(Out out, Marshalled *m, Py_ssize_t pos, Py_ssize_t level, const Indents *in, int depth)
{
    if (pos < 0 || pos >= m->size || depth > M_DEEPEST || m->budget-- <= 0) {
        return -1;
    }
    unsigned char code = m->data[pos] & ~M_FLAG_REF;
    const unsigned char *chars;
    Py_ssize_t n;
    int32_t count;
    switch (code) {
    case 'N':
        return out_lit(out, "null") < 0 ? -1 : pos + 1;
    case 'T':
        return out_lit(out, "true") < 0 ? -1 : pos + 1;
    case 'F':
        return out_lit(out, "false") < 0 ? -1 : pos + 1;
    case 'i':
        if (!m_long(m, pos + 1, &count) || put_long_long(out, count) < 0) {
            return -1;
        }
        return pos + 5;
    case 'l': {
        long long v;
        Py_ssize_t end = m_bigger_int(m, pos, &v);
        return end < 0 || put_long_long(out, v) < 0 ? -1 : end;
    }
    case 'g': {
        if (pos + 9 > m->size) {
            return -1;
        }
        double f = PyFloat_Unpack8((const char *)m->data + pos + 1, 1);
        if ((f == -1.0 && PyErr_Occurred()) || put_double(out, f) < 0) {
            return -1;
        }
        return pos + 9;
    }
    case 'r': {
        int done = m_put_referred_string(out, m, pos); /* (a string's text: kept) */
        if (done == -2) {
            done = m_put(out, m, m_referred(m, pos), level, in, depth + 1);
        }
        return done < 0 ? -1 : pos + 5;
    }
    case '(':
    case '[':
    case ')': {
        Py_ssize_t at = m_items(m, pos, &count);
        if (at < 0 || count == 0) {
            return at < 0 || out_lit(out, "[]") < 0 ? -1 : at;
        }
        if (out_lit(out, "[") < 0) {
            return -1;
        }
        for (int32_t i = 0; i < count; i++) {
            if (put_indent_bytes(out, in, level + 1, i > 0) < 0) {
                return -1;
            }
            at = m_put(out, m, at, level + 1, in, depth + 1);
            if (at < 0) {
                return -1;
            }
        }
        if (put_indent_bytes(out, in, level, 0) < 0 || out_lit(out, "]") < 0) {
            return -1;
        }
        return at;
    }
    case '{': {
        Py_ssize_t at = pos + 1;
        if (at < m->size && m->data[at] == '0') {
            return out_lit(out, "{}") < 0 ? -1 : at + 1;
        }
        if (out_lit(out, "{") < 0) {
            return -1;
        }
        int first = 1;
        while (at < m->size && m->data[at] != '0') {
            Py_ssize_t key = at;
            if ((m->data[key] & ~M_FLAG_REF) == 'r') {
                /* (a key of another type, -2: the Python writes the chunk) */
                if (put_indent_bytes(out, in, level + 1, !first) < 0 ||
                    m_put_referred_string(out, m, at) < 0) {
                    return -1;
                }
                at += 5;
            }
            else {
                if (!m_string(m, key, &chars, &n)) {
                    return -1; /* (a key of another type: the Python writes it) */
                }
                at = chars - m->data + n;
                if (put_indent_bytes(out, in, level + 1, !first) < 0 ||
                    put_escaped(out, chars, n) < 0) {
                    return -1;
                }
            }
            if (out_lit(out, ": ") < 0) {
                return -1;
            }
            at = m_put(out, m, at, level + 1, in, depth + 1);
            if (at < 0) {
                return -1;
            }
            first = 0;
        }
        if (at >= m->size || put_indent_bytes(out, in, level, 0) < 0 ||
            out_lit(out, "}") < 0) {
            return -1;
        }
        return at + 1;
    }
    default: /* (a string, else not one written here) */
        if (!m_string(m, pos, &chars, &n) || put_escaped(out, chars, n) < 0) {
            return -1;
        }
        return chars - m->data + n;
    }
}

/* the order of an event's values in its JSON (kind, source, line, t, module, hash, detail,
 * text: model.EVENT_KEYS) by their places in its row (kind, source, line, t, text, module,
 * hash, detail: model.Event) */
static const int EVENT_ORDER[8] = {0, 1, 2, 3, 5, 6, 7, 4};

PyObject *
json_chunk(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "json_chunk(data, pieces, level, step, heads)");
        return NULL;
    }
    PyObject *data = args[0], *pieces = args[1], *heads = args[4];
    Py_ssize_t level;
    if (!PyBytes_CheckExact(data) || !PyTuple_CheckExact(pieces) ||
        PyTuple_GET_SIZE(pieces) != 9 || !PyTuple_CheckExact(heads) ||
        PyTuple_GET_SIZE(heads) != 2) {
        PyErr_SetString(PyExc_TypeError,
                        "json_chunk: data must be bytes, pieces a tuple of 9 str, heads of 2");
        return NULL;
    }
    if (level_and_step(args, 2, &level) < 0) {
        return NULL;
    }
    const char *piece[9], *head[2], *step;
    Py_ssize_t piece_len[9], head_len[2], step_len;
    for (int i = 0; i < 11; i++) {
        PyObject *s = i < 9 ? PyTuple_GET_ITEM(pieces, i) : PyTuple_GET_ITEM(heads, i - 9);
        if (!PyUnicode_CheckExact(s)) {
            PyErr_SetString(PyExc_TypeError, "json_chunk: the pieces and heads must be str");
            return NULL;
        }
        const char *u = PyUnicode_AsUTF8AndSize(s, i < 9 ? &piece_len[i] : &head_len[i - 9]);
        if (u == NULL) {
            return NULL;
        }
        if (i < 9) {
            piece[i] = u;
        }
        else {
            head[i - 9] = u;
        }
    }
    step = PyUnicode_AsUTF8AndSize(args[3], &step_len);
    if (step == NULL) {
        return NULL;
    }
    char ready[2 + 8 * INDENT_STEPS];
    Indents indents = {step, step_len, NULL};
    if (step_len <= 8) {
        ready[0] = ',';
        ready[1] = '\n';
        for (int i = 0; i < INDENT_STEPS; i++) {
            memcpy(ready + 2 + i * step_len, step, (size_t)step_len);
        }
        indents.ready = ready;
    }
    Marshalled m = {(const unsigned char *)PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data),
                    NULL, 0, 0, 0};
    /* (an object is written once for each time it comes, and each takes a byte or more,
     * but for the ones referred to again: a chunk's details share a few of their strings) */
    m.budget = m.size < PY_SSIZE_T_MAX / 8 ? 8 * m.size + (1 << 16) : PY_SSIZE_T_MAX;
    OutText text_out;
    Out out = &text_out;
    /* (written into the bytes given back: three times the marshal's bytes hold a JAX
     * chunk's JSON, 2.5 times them; grown where they do not) */
    if (out_open_bytes(out, m.size < PY_SSIZE_T_MAX / 4 ? 3 * m.size + ((Py_ssize_t)1 << 12)
                                                         : m.size) < 0) {
        return NULL;
    }
    PyObject *made = NULL;
    int32_t rows;
    Py_ssize_t at = 1;
    /* (the chunk: b"M" and marshal's bytes of a list of rows; else the caller reads it) */
    if (m.size < 2 || m.data[0] != 'M' || (m.data[1] & ~M_FLAG_REF) != '[' ||
        (at = m_items(&m, 1, &rows)) < 0 || ((m.data[1] & M_FLAG_REF) && m_number(&m, 1) < 0)) {
        goto done;
    }
    for (int32_t r = 0; r < rows; r++) {
        Py_ssize_t start[8];
        unsigned char code = at < m.size ? m.data[at] : 0;
        int32_t count = -1;
        /* (a row: a tuple of the event's 8 values) */
        start[0] = (code & ~M_FLAG_REF) == '[' ? -1 : m_items(&m, at, &count);
        if (start[0] < 0 || count != 8) {
            goto done;
        }
        if ((code & M_FLAG_REF) && m_number(&m, at) < 0) {
            goto done;
        }
        at = start[0];
        for (int i = 0; i < 8; i++) {
            start[i] = at;
            at = m_skip(&m, at, 1);
            if (at < 0) {
                goto done;
            }
        }
        int k = r == 0 ? 0 : 1;
        if (out_ascii(out, head[k], head_len[k]) < 0) {
            goto done;
        }
        for (int i = 0; i < 8; i++) {
            if (out_ascii(out, piece[i], piece_len[i]) < 0 ||
                m_put(out, &m, start[EVENT_ORDER[i]], level, &indents, 1) < 0) {
                goto done;
            }
        }
        if (out_ascii(out, piece[8], piece_len[8]) < 0) {
            goto done;
        }
    }
    if (at == m.size) {
        made = out_bytes(out);
    }
done:
    out_release(out);
    PyMem_Free(m.refs);
    if (made == NULL && !PyErr_Occurred()) {
        Py_RETURN_NONE;
    }
    return made;
}

/* json_splice(text, start, cuts, j0, j1, i0, count, codes, causes) -> bytes: the text of the
 * compilations the events' writer wrote ahead of their causes (json_text.spliced), with
 * each cause put in its place: for k in j0..j1-1, the text up to cuts[k] (an offset in the
 * file; text holds the file's bytes from start), then, for the compilation i0 + k - j0 when
 * it is below count, the text of its cause, causes[codes[i]] (code 0 past codes' end); then
 * the rest of text.  Compiled from Python, that took a slice, two look-ups and two appends
 * a compilation (2,500 instructions); here it is a copy.  Cuts out of order or outside
 * text, or a code past causes, raise ValueError. */
PyObject *
json_splice(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError,
                        "json_splice(text, start, cuts, j0, j1, i0, count, codes, causes)");
        return NULL;
    }
    PyObject *text = args[0], *causes = args[8];
    if (!PyBytes_CheckExact(text) || !PyTuple_CheckExact(causes)) {
        PyErr_SetString(PyExc_TypeError, "json_splice: text must be bytes, causes a tuple");
        return NULL;
    }
    Py_ssize_t causes_n = PyTuple_GET_SIZE(causes);
    for (Py_ssize_t c = 0; c < causes_n; c++) {
        if (!PyBytes_CheckExact(PyTuple_GET_ITEM(causes, c))) {
            PyErr_SetString(PyExc_TypeError, "json_splice: each cause's text must be bytes");
            return NULL;
        }
    }
    Py_ssize_t num[5]; /* start, j0, j1, i0, count */
    const int at[5] = {1, 3, 4, 5, 6};
    for (int k = 0; k < 5; k++) {
        num[k] = PyLong_AsSsize_t(args[at[k]]);
        if (num[k] == -1 && PyErr_Occurred()) {
            return NULL;
        }
    }
    Py_ssize_t start = num[0], j0 = num[1], j1 = num[2], i0 = num[3], count = num[4];
    Py_buffer cuts_view, codes_view;
    if (PyObject_GetBuffer(args[2], &cuts_view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        return NULL;
    }
    if (PyObject_GetBuffer(args[7], &codes_view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&cuts_view);
        return NULL;
    }
    PyObject *made = NULL;
    if (cuts_view.itemsize != 8 || cuts_view.format == NULL || strcmp(cuts_view.format, "q") ||
        codes_view.itemsize != 2 || codes_view.format == NULL ||
        strcmp(codes_view.format, "H")) {
        PyErr_SetString(PyExc_TypeError, "json_splice: cuts must be array('q'), codes array('H')");
        goto done;
    }
    const int64_t *cuts = (const int64_t *)cuts_view.buf;
    const uint16_t *codes = (const uint16_t *)codes_view.buf;
    Py_ssize_t ncuts = cuts_view.len / 8, ncodes = codes_view.len / 2;
    const char *src = PyBytes_AS_STRING(text);
    Py_ssize_t size = PyBytes_GET_SIZE(text);
    if (j0 < 0 || j1 < j0 || j1 > ncuts || i0 < 0 || start < 0) {
        PyErr_SetString(PyExc_ValueError, "json_splice: cuts out of range");
        goto done;
    }
    /* the size of the answer, every cut checked on the way */
    Py_ssize_t total = size, prev = 0;
    for (Py_ssize_t k = j0; k < j1; k++) {
        Py_ssize_t off = (Py_ssize_t)(cuts[k] - start);
        if (cuts[k] < start || off < prev || off > size) {
            PyErr_SetString(PyExc_ValueError, "json_splice: a cut out of order or outside the text");
            goto done;
        }
        prev = off;
        Py_ssize_t i = i0 + (k - j0);
        if (i < count) {
            Py_ssize_t code = i < ncodes ? codes[i] : 0;
            if (code >= causes_n) {
                PyErr_SetString(PyExc_ValueError, "json_splice: a cause's code past the causes");
                goto done;
            }
            total += PyBytes_GET_SIZE(PyTuple_GET_ITEM(causes, code));
        }
    }
    made = PyBytes_FromStringAndSize(NULL, total);
    if (made == NULL) {
        goto done;
    }
    char *w = PyBytes_AS_STRING(made);
    prev = 0;
    for (Py_ssize_t k = j0; k < j1; k++) {
        Py_ssize_t off = (Py_ssize_t)(cuts[k] - start);
        memcpy(w, src + prev, (size_t)(off - prev));
        w += off - prev;
        prev = off;
        Py_ssize_t i = i0 + (k - j0);
        if (i < count) {
            PyObject *c = PyTuple_GET_ITEM(causes, i < ncodes ? codes[i] : 0);
            memcpy(w, PyBytes_AS_STRING(c), (size_t)PyBytes_GET_SIZE(c));
            w += PyBytes_GET_SIZE(c);
        }
    }
    memcpy(w, src + prev, (size_t)(size - prev));
done:
    PyBuffer_Release(&cuts_view);
    PyBuffer_Release(&codes_view);
    return made;
}

/* ---- A batch of compilations' text, each row's cause left out ----
 *
 * json_rows_apart(rows, ahead, behind, at, level, step, fallback, heads, first, pos, piece)
 * -> (text, cuts, done): json_text.apart_pieces's text of the rows (tuples of the values of the
 * keys whose pieces ahead and behind are, the value at `at` left out), as UTF-8 (lone
 * surrogates passed): each row led by heads[0] (the first of all, when `first`) or
 * heads[1], the text of its values before `at` with the pieces of ahead, then that of the
 * values after it with the pieces of behind (json_fields' texts at level); cuts: where each
 * row's left-out value goes, pos + the bytes before it, 8 bytes each; done: the rows
 * written, all of them unless the text reached piece bytes before (then those up to the
 * one that made it reach them: a batch's text is bounded).  Compiled from
 * Python, a row took two calls, two slices, two strings encoded and a concatenation
 * (5,000 instructions besides the text's own writing). */

/* the UTF-8 bytes of s (lone surrogates passed) appended to buf */
static int
append_utf8(char **buf, Py_ssize_t *cap, Py_ssize_t *len, PyObject *s)
{
    const char *data;
    Py_ssize_t n;
    PyObject *encoded = NULL;
    if (PyUnicode_IS_ASCII(s)) {
        data = (const char *)PyUnicode_1BYTE_DATA(s);
        n = PyUnicode_GET_LENGTH(s);
    }
    else {
        encoded = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass");
        if (encoded == NULL) {
            return -1;
        }
        data = PyBytes_AS_STRING(encoded);
        n = PyBytes_GET_SIZE(encoded);
    }
    int failed = *cap - *len < n && buffer_grow(buf, cap, *len, n) < 0;
    if (!failed) {
        memcpy(*buf + *len, data, (size_t)n);
        *len += n;
    }
    Py_XDECREF(encoded);
    return failed ? -1 : 0;
}

PyObject *
json_rows_apart(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t level;
    if (encode_basestring == NULL && native_json_init() < 0) {
        return NULL;
    }
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "json_rows_apart(rows, ahead, behind, at, level, step, "
                                         "fallback, heads, first, pos, piece)");
        return NULL;
    }
    PyObject *rows = args[0], *ahead = args[1], *behind = args[2], *heads = args[7];
    if (!PyList_CheckExact(rows) || !PyTuple_CheckExact(ahead) || !PyTuple_CheckExact(behind) ||
        !PyTuple_CheckExact(heads) || PyTuple_GET_SIZE(heads) != 2 ||
        !PyUnicode_CheckExact(PyTuple_GET_ITEM(heads, 0)) ||
        !PyUnicode_CheckExact(PyTuple_GET_ITEM(heads, 1))) {
        PyErr_SetString(PyExc_TypeError, "json_rows_apart: rows must be a list, ahead and "
                                         "behind tuples, heads a tuple of two str");
        return NULL;
    }
    Py_ssize_t na = PyTuple_GET_SIZE(ahead), nb = PyTuple_GET_SIZE(behind);
    for (Py_ssize_t i = 0; i < na + nb; i++) {
        PyObject *p = i < na ? PyTuple_GET_ITEM(ahead, i) : PyTuple_GET_ITEM(behind, i - na);
        if (!PyUnicode_CheckExact(p)) {
            PyErr_SetString(PyExc_TypeError, "json_rows_apart: the pieces must be str");
            return NULL;
        }
    }
    if (level_and_step(args, 4, &level) < 0) {
        return NULL;
    }
    Py_ssize_t at = PyLong_AsSsize_t(args[3]), pos = PyLong_AsSsize_t(args[9]),
               piece = PyLong_AsSsize_t(args[10]);
    int first = PyObject_IsTrue(args[8]);
    if ((at == -1 || pos == -1 || piece == -1) && PyErr_Occurred()) {
        return NULL;
    }
    if (first < 0) {
        return NULL;
    }
    if (at < 0 || na != at + 1 || nb < 1) {
        PyErr_Format(PyExc_ValueError, "json_rows_apart: %zd pieces ahead for value %zd apart",
                     na, at);
        return NULL;
    }
    Py_ssize_t width = at + nb; /* the values of a row */
    /* (held: the fallback's Python could change the list meanwhile) */
    PyObject *held = PySequence_Tuple(rows);
    if (held == NULL) {
        return NULL;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(held), r = 0;
    char *buf = NULL;
    Py_ssize_t cap = 0, len = 0;
    PyObject *cuts = PyBytes_FromStringAndSize(NULL, 8 * count);
    PyObject *made = NULL;
    if (cuts == NULL) {
        goto done;
    }
    for (; r < count && (r == 0 || len < piece); r++) {
        PyObject *row = PyTuple_GET_ITEM(held, r);
        if (!PyTuple_CheckExact(row) || PyTuple_GET_SIZE(row) != width) {
            PyErr_Format(PyExc_ValueError, "json_rows_apart: a row of %zd values for %zd keys",
                         PyTuple_Check(row) ? PyTuple_GET_SIZE(row) : (Py_ssize_t)-1, width);
            goto done;
        }
        PyObject *head = PyTuple_GET_ITEM(heads, first && r == 0 ? 0 : 1);
        PyObject *before = written(ahead, &PyTuple_GET_ITEM(row, 0), at, level + 1, args[5],
                                   args[6]);
        if (before == NULL) {
            goto done;
        }
        int failed = append_utf8(&buf, &cap, &len, head) < 0 ||
                     append_utf8(&buf, &cap, &len, before) < 0;
        Py_DECREF(before);
        if (failed) {
            goto done;
        }
        int64_t cut = (int64_t)(pos + len);
        memcpy(PyBytes_AS_STRING(cuts) + 8 * r, &cut, 8); /* (in the machine order: array("q")) */
        PyObject *after = written(behind, &PyTuple_GET_ITEM(row, at + 1), nb - 1, level + 1,
                                  args[5], args[6]);
        if (after == NULL) {
            goto done;
        }
        failed = append_utf8(&buf, &cap, &len, after) < 0;
        Py_DECREF(after);
        if (failed) {
            goto done;
        }
    }
    if (r < count && _PyBytes_Resize(&cuts, 8 * r) < 0) { /* (cuts NULL then) */
        goto done;
    }
    {
        PyObject *text = PyBytes_FromStringAndSize(buf == NULL ? "" : buf, len);
        PyObject *done_rows = PyLong_FromSsize_t(r);
        if (text != NULL && done_rows != NULL) {
            made = PyTuple_Pack(3, text, cuts, done_rows);
        }
        Py_XDECREF(text);
        Py_XDECREF(done_rows);
    }
done:
    PyMem_Free(buf);
    Py_XDECREF(cuts);
    Py_DECREF(held);
    return made;
}
