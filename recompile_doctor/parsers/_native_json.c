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

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The text is written into a growing string: CPython's own writer (private before 3.14,
 * public since) */
#if PY_VERSION_HEX >= 0x030E0000
typedef PyUnicodeWriter *Out;
#define OUT_STR(o, s) PyUnicodeWriter_WriteStr((o), (s))
#define OUT_ASCII(o, p, n) PyUnicodeWriter_WriteUTF8((o), (p), (n))
#define OUT_FINISH(o) PyUnicodeWriter_Finish(o)
#define OUT_DISCARD(o) PyUnicodeWriter_Discard(o)
#else
typedef _PyUnicodeWriter *Out;
#define OUT_STR(o, s) _PyUnicodeWriter_WriteStr((o), (s))
#define OUT_ASCII(o, p, n) _PyUnicodeWriter_WriteASCIIString((o), (p), (n))
#define OUT_FINISH(o) _PyUnicodeWriter_Finish(o)
#define OUT_DISCARD(o) _PyUnicodeWriter_Dealloc(o)
#endif
#define OUT_LIT(o, lit) OUT_ASCII((o), (lit), (Py_ssize_t)(sizeof(lit) - 1))

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
    int r = OUT_STR(out, made);
    Py_DECREF(made);
    return r;
}

static int
put_indent(Out out, PyObject *step, Py_ssize_t k, int comma)
{
    return put_new(out, indent_text(step, k, comma));
}

/* Whether json's encode_basestring would change s's characters (a quote, a backslash or
 * a control character: it writes these escaped, all others as they are) */
static int
needs_escape(PyObject *s)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *p = (const Py_UCS1 *)data;
        Py_ssize_t i = 0;
        /* eight characters at a time: whether any is below 0x20, or a quote or a backslash
         * (a byte equal to one: zero once xored with it) */
        const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
        for (; i + 8 <= n; i += 8) {
            uint64_t x, q, b;
            memcpy(&x, p + i, 8);
            q = x ^ (ones * '"');
            b = x ^ (ones * '\\');
            if ((((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b)) & highs) {
                return 1;
            }
        }
        for (; i < n; i++) {
            Py_UCS1 c = p[i];
            if (c < 0x20 || c == '"' || c == '\\') {
                return 1;
            }
        }
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c < 0x20 || c == '"' || c == '\\') {
            return 1;
        }
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
    if (needs_escape(s)) {
        return put_new(out, PyObject_CallOneArg(encode_basestring, s));
    }
    if (OUT_LIT(out, "\"") < 0 || OUT_STR(out, s) < 0) {
        return -1;
    }
    return OUT_LIT(out, "\"");
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

/* Where f is a decimal of at most six places, 0.0001 <= |f| < 2**33 (a time in seconds or
 * a duration read from a log, rounded to the microsecond), its float.__repr__ written
 * backwards to end (32 bytes are room enough) without the shortest-digits search (dtoa: a
 * few thousand instructions): where the text starts, or NULL for any other float.
 *
 * Why it is repr's text: with m = f * 10**6 rounded, m / 10**6 == f means the decimal
 * m * 10**-6 reads back as f (m and 10**6 are exact doubles, and both the division and
 * reading a decimal round the exact quotient to the nearest double).  Below 2**33 the
 * doubles next to f are less than 10**-6 apart, so no other multiple of 10**-6 reads back
 * as f, and a decimal with fewer significant digits than m's (the same first digit or a
 * higher one) is such a multiple: m's digits are the shortest that read back as f, which
 * are repr's.  From 0.0001 up repr writes them without an exponent: the integer part, a
 * point and the fraction without its trailing zeros (at least one digit). */
static char *
micro_decimal(double f, char *end)
{
    double a = fabs(f);
    if (!(a >= 1e-4 && a < 8589934592.0)) {
        return NULL;
    }
    long long m = llround(a * 1e6);
    if ((double)m / 1e6 != a) {
        return NULL;
    }
    char *p = end;
    long long frac = m % 1000000;
    int places = 6;
    while (places > 1 && frac % 10 == 0) {
        frac /= 10;
        places--;
    }
    for (int i = 0; i < places; i++) {
        *--p = (char)('0' + frac % 10);
        frac /= 10;
    }
    *--p = '.';
    p = decimal_digits(p, (unsigned long long)(m / 1000000));
    if (f < 0) {
        *--p = '-';
    }
    return p;
}

/* The exact float o as float.__repr__ writes it (json's NaN and Infinity aside) */
static int
put_float(Out out, PyObject *o)
{
    double f = PyFloat_AS_DOUBLE(o);
    if (isnan(f)) {
        return OUT_LIT(out, "NaN");
    }
    if (isinf(f)) {
        return f > 0 ? OUT_LIT(out, "Infinity") : OUT_LIT(out, "-Infinity");
    }
    char fixed[32];
    char *end = fixed + sizeof(fixed), *start = micro_decimal(f, end);
    if (start != NULL) {
        return OUT_ASCII(out, start, end - start);
    }
    /* (what float_repr does, without the str it makes) */
    char *text = PyOS_double_to_string(f, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (text == NULL) {
        return -1;
    }
    int r = OUT_ASCII(out, text, (Py_ssize_t)strlen(text));
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
    return OUT_ASCII(out, p, end - p);
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
    if (OUT_LIT(out, "{") < 0) {
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
            OUT_LIT(out, ": ") == 0) {
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
    return OUT_LIT(out, "}");
}

/* An exact list or tuple, not empty: its items at level + 1 */
static int
put_items(Out out, PyObject *seq, Py_ssize_t level, PyObject *step, PyObject *fallback)
{
    if (OUT_LIT(out, "[") < 0) {
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
    return OUT_LIT(out, "]");
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
        return put_float(out, o);
    }
    if (tp == &PyLong_Type) {
        return put_int(out, o);
    }
    if (o == Py_None) {
        return OUT_LIT(out, "null");
    }
    if (o == Py_True) {
        return OUT_LIT(out, "true");
    }
    if (o == Py_False) {
        return OUT_LIT(out, "false");
    }
    int dict = tp == &PyDict_Type;
    if (dict || tp == &PyList_Type || tp == &PyTuple_Type) {
        if ((dict ? PyDict_GET_SIZE(o) : PySequence_Fast_GET_SIZE(o)) == 0) {
            return dict ? OUT_LIT(out, "{}") : OUT_LIT(out, "[]");
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

/* the length of the last text written: the room the next one starts with (a report's
 * texts come in runs of one kind, an event after another; a string grown from nothing is
 * copied at every quarter it grows by) */
static Py_ssize_t last_length = 0;

/* The text of the values (n of them) with the pieces (n + 1, or none) around them */
static PyObject *
written(PyObject *pieces, PyObject *const *values, Py_ssize_t n, Py_ssize_t level,
        PyObject *step, PyObject *fallback)
{
    Py_ssize_t room = last_length + last_length / 4 + 16;
#if PY_VERSION_HEX >= 0x030E0000
    Out out = PyUnicodeWriter_Create(room);
    if (out == NULL) {
        return NULL;
    }
#else
    _PyUnicodeWriter writer;
    _PyUnicodeWriter_Init(&writer);
    writer.overallocate = 1;
    writer.min_length = room;
    Out out = &writer;
#endif
    for (Py_ssize_t i = 0; i <= n; i++) {
        if ((pieces != NULL && OUT_STR(out, PyTuple_GET_ITEM(pieces, i)) < 0) ||
            (i < n && put_value(out, values[i], level, step, fallback) < 0)) {
            OUT_DISCARD(out);
            return NULL;
        }
    }
    PyObject *text = OUT_FINISH(out);
    if (text != NULL) {
        last_length = Py_MIN(PyUnicode_GET_LENGTH(text), 1 << 16);
    }
    return text;
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
