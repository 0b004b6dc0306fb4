/* The fields of a decoder's most frequent messages read in C, part of the _native module:
 * JAX's "Finished tracing <function>[ for <wrapper>] in <seconds> sec" and "<prefix><name>
 * in <seconds> sec" (a lowering's and a compilation's end), two lines of every
 * compilation.  Their Python twins (parsers/jax.py: traced_fields_py, in_seconds_py) read
 * them with str methods, each a call that makes a new string or list: 3,500-7,000
 * instructions a message in compiled code, some 400 here.  The tests hold each to its twin
 * (and both to the patterns they stand for) on generated text: blanks of every kind (a
 * blank is what str.isspace says, as rstrip and split take it), letters and digits of
 * every script (str.isalnum).  And the dimensions of a shape's text (f32[32,16] -> (32, 16)),
 * two of every reason of a growing shape (timeline/reason_facts.py: shape_dims_py). */
#define PY_SSIZE_T_CLEAN
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <Python.h>
#include <string.h>

#include "_native_fields.h"

/* the characters of a str, read at an index whatever its kind */
typedef struct {
    int kind;
    const void *data;
    Py_ssize_t n;
} chars_t;

static inline Py_UCS4
char_at(const chars_t *s, Py_ssize_t i)
{
    return PyUnicode_READ(s->kind, s->data, i);
}

/* s[at:at + len(lit)] == lit (lit ASCII, as C text) */
static int
ascii_at(const chars_t *s, Py_ssize_t at, const char *lit, Py_ssize_t len)
{
    if (at < 0 || at + len > s->n) {
        return 0;
    }
    if (s->kind == PyUnicode_1BYTE_KIND) {
        const char *c = (const char *)s->data + at;
        return c[0] == lit[0] && memcmp(c, lit, (size_t)len) == 0;
    }
    for (Py_ssize_t j = 0; j < len; j++) {
        if (char_at(s, at + j) != (Py_UCS4)(unsigned char)lit[j]) {
            return 0;
        }
    }
    return 1;
}

/* s.find(lit, start, end) for an ASCII lit of one character or more */
static Py_ssize_t
ascii_find(const chars_t *s, const char *lit, Py_ssize_t len, Py_ssize_t start, Py_ssize_t end)
{
    if (end > s->n) {
        end = s->n;
    }
    if (start < 0) {
        start = 0;
    }
    if (s->kind == PyUnicode_1BYTE_KIND) {
        if (end - start < len) {
            return -1;
        }
        const char *d = (const char *)s->data;
        const char *f = memmem(d + start, (size_t)(end - start), lit, (size_t)len);
        return f == NULL ? -1 : (Py_ssize_t)(f - d);
    }
    for (Py_ssize_t i = start; i + len <= end; i++) {
        if (ascii_at(s, i, lit, len)) {
            return i;
        }
    }
    return -1;
}

/* s.find(sub, start) for any str sub (an empty one found at start, up to len(s)) */
static Py_ssize_t
str_find(const chars_t *s, const chars_t *sub, Py_ssize_t start)
{
    if (start > s->n) {
        return -1;
    }
    if (s->kind == PyUnicode_1BYTE_KIND && sub->kind == PyUnicode_1BYTE_KIND) {
        if (sub->n == 0) {
            return start;
        }
        const char *d = (const char *)s->data;
        const char *f = memmem(d + start, (size_t)(s->n - start), sub->data, (size_t)sub->n);
        return f == NULL ? -1 : (Py_ssize_t)(f - d);
    }
    for (Py_ssize_t i = start; i + sub->n <= s->n; i++) {
        Py_ssize_t j = 0;
        while (j < sub->n && char_at(s, i + j) == char_at(sub, j)) {
            j++;
        }
        if (j == sub->n) {
            return i;
        }
    }
    return -1;
}

/* s[a:b] holds no blank and is not empty (jax._blank_free) */
static int
blank_free(const chars_t *s, Py_ssize_t a, Py_ssize_t b)
{
    if (b <= a) {
        return 0;
    }
    for (Py_ssize_t i = a; i < b; i++) {
        if (Py_UNICODE_ISSPACE(char_at(s, i))) {
            return 0;
        }
    }
    return 1;
}

/* where s[:end] ends once its trailing blanks are stripped (rstrip), down to at least lo */
static Py_ssize_t
stripped_end(const chars_t *s, Py_ssize_t lo, Py_ssize_t end)
{
    while (end > lo && Py_UNICODE_ISSPACE(char_at(s, end - 1))) {
        end--;
    }
    return end;
}

static int
chars_of(PyObject *o, chars_t *s)
{
    if (!PyUnicode_Check(o) || PyUnicode_READY(o) < 0) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "a str is expected");
        }
        return -1;
    }
    s->kind = PyUnicode_KIND(o);
    s->data = PyUnicode_DATA(o);
    s->n = PyUnicode_GET_LENGTH(o);
    return 0;
}

/* (o[a1:b1], o[a2:b2]) or, with a3 >= 0, (o[a1:b1], o[a2:b2] or None when empty, o[a3:b3]) */
static PyObject *
slices(PyObject *o, Py_ssize_t a1, Py_ssize_t b1, Py_ssize_t a2, Py_ssize_t b2, Py_ssize_t a3,
       Py_ssize_t b3)
{
    PyObject *x = PyUnicode_Substring(o, a1, b1), *y, *z = NULL;
    if (x == NULL) {
        return NULL;
    }
    if (a3 >= 0 && b2 <= a2) {
        y = Py_NewRef(Py_None);
    }
    else {
        y = PyUnicode_Substring(o, a2, b2);
    }
    if (y != NULL && a3 >= 0) {
        z = PyUnicode_Substring(o, a3, b3);
    }
    if (y == NULL || (a3 >= 0 && z == NULL)) {
        Py_DECREF(x);
        Py_XDECREF(y);
        return NULL;
    }
    PyObject *t = a3 >= 0 ? PyTuple_New(3) : PyTuple_New(2);
    if (t == NULL) {
        Py_DECREF(x);
        Py_DECREF(y);
        Py_XDECREF(z);
        return NULL;
    }
    PyTuple_SET_ITEM(t, 0, x);
    PyTuple_SET_ITEM(t, 1, y);
    if (a3 >= 0) {
        PyTuple_SET_ITEM(t, 2, z);
    }
    return t;
}

#define LIT(s) (s), ((Py_ssize_t)sizeof(s) - 1)

PyObject *
traced_fields(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    chars_t u;
    if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, "traced_fields(msg)");
        return NULL;
    }
    if (chars_of(args[0], &u) < 0) {
        return NULL;
    }
    /* t = msg.rstrip(), ending in " sec"; u = t[:-4], ending in no blank */
    Py_ssize_t tn = stripped_end(&u, 0, u.n);
    if (!ascii_at(&u, tn - 4, LIT(" sec"))) {
        Py_RETURN_NONE;
    }
    Py_ssize_t un = tn - 4;
    if (un == 0 || Py_UNICODE_ISSPACE(char_at(&u, un - 1))) {
        Py_RETURN_NONE;
    }
    u.n = un;
    /* the seconds: the last run of non-blanks (rsplit(None, 1)[-1]); " in " before it */
    Py_ssize_t j = un - 1;
    while (j >= 0 && !Py_UNICODE_ISSPACE(char_at(&u, j))) {
        j--;
    }
    Py_ssize_t secs = j + 1, k = secs - 4;
    if (k < 0 || !ascii_at(&u, k, LIT(" in "))) {
        Py_RETURN_NONE;
    }
    /* the first "Finished tracing" followed by a blank (or " + transforming ") and a name */
    Py_ssize_t i = ascii_find(&u, LIT("Finished tracing"), 0, k), a = -1;
    while (i >= 0) {
        Py_ssize_t at = i + (Py_ssize_t)sizeof("Finished tracing") - 1;
        Py_ssize_t tr = (Py_ssize_t)sizeof(" + transforming ") - 1;
        if (ascii_at(&u, at, LIT(" + transforming ")) && k > at + tr) {
            a = at + tr;
            break;
        }
        if (ascii_at(&u, at, LIT(" ")) && k > at + 1) {
            a = at + 1;
            break;
        }
        i = ascii_find(&u, LIT("Finished tracing"), i + 1, k);
    }
    if (a < 0) {
        Py_RETURN_NONE;
    }
    /* name = u[a:k]: " for <wrapper>" at its end when the wrapper is a word (\w+) */
    Py_ssize_t p = -1;
    for (Py_ssize_t q = k - 5; q >= a; q--) {
        if (ascii_at(&u, q, LIT(" for "))) {
            p = q;
            break;
        }
    }
    if (p >= a + 1 && p + 5 < k) {
        int word = 1;
        for (Py_ssize_t q = p + 5; q < k && word; q++) {
            Py_UCS4 c = char_at(&u, q);
            word = c == '_' || Py_UNICODE_ISALNUM(c);
        }
        if (word) {
            return slices(args[0], a, p, p + 5, k, secs, un);
        }
    }
    return slices(args[0], a, k, 0, 0, secs, un);
}

PyObject *
in_seconds(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    chars_t s, pre;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "in_seconds(msg, prefix)");
        return NULL;
    }
    if (chars_of(args[0], &s) < 0 || chars_of(args[1], &pre) < 0) {
        return NULL;
    }
    /* each place the prefix is found, in turn: a blank-free name up to " in ", then
     * blank-free seconds up to " sec" and nothing but blanks after it */
    Py_ssize_t end = stripped_end(&s, 0, s.n);
    for (Py_ssize_t p = str_find(&s, &pre, 0); p >= 0; p = str_find(&s, &pre, p + 1)) {
        Py_ssize_t a = p + pre.n, k = ascii_find(&s, LIT(" in "), a, s.n);
        if (k <= a || !blank_free(&s, a, k)) {
            continue;
        }
        Py_ssize_t rest = k + 4, re = end > rest ? end : rest;
        if (re - rest >= 4 && ascii_at(&s, re - 4, LIT(" sec")) && blank_free(&s, rest, re - 4)) {
            return slices(args[0], a, k, rest, re - 4, -1, -1);
        }
    }
    Py_RETURN_NONE;
}

/* an ASCII blank, as str.isspace takes it */
static inline int
ascii_blank(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/* a blank int() takes around a number's digits (not 0x1c-0x1f, which str.isspace is) */
static inline int
int_blank(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

PyObject *
shape_dims(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "shape_dims(text: str, fallback)");
        return NULL;
    }
    PyObject *text = args[0];
    if (PyUnicode_READY(text) < 0) {
        return NULL;
    }
    if (!PyUnicode_IS_ASCII(text)) { /* (other digits and blanks: the Python's) */
        return PyObject_CallOneArg(args[1], text);
    }
    const char *s = (const char *)PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    /* the first [...] that holds nothing but digits, commas and blanks */
    const char *open = memchr(s, '[', (size_t)n), *close = NULL;
    while (open != NULL) {
        close = memchr(open + 1, ']', (size_t)(s + n - open - 1));
        if (close == NULL) {
            Py_RETURN_NONE;
        }
        const char *c = open + 1;
        while (c < close && ((*c >= '0' && *c <= '9') || *c == ',' || ascii_blank((unsigned char)*c))) {
            c++;
        }
        if (c == close) {
            break;
        }
        open = memchr(open + 1, '[', (size_t)(s + n - open - 1));
    }
    if (open == NULL) {
        Py_RETURN_NONE;
    }
    /* its comma-separated numbers, blank ones left out; a number with a blank inside it is
     * no number (int() refuses it): None */
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        return NULL;
    }
    const char *a = open + 1;
    while (a <= close) {
        const char *b = memchr(a, ',', (size_t)(close - a));
        if (b == NULL) {
            b = close;
        }
        const char *x = a, *y = b;
        while (x < y && ascii_blank((unsigned char)*x)) {
            x++;
        }
        if (x < y) { /* (not blank: a number, which int() reads between its own blanks) */
            x = a;
            y = b;
            while (x < y && int_blank((unsigned char)*x)) {
                x++;
            }
            while (y > x && int_blank((unsigned char)y[-1])) {
                y--;
            }
            for (const char *d = x; d < y; d++) {
                if (*d < '0' || *d > '9') {
                    Py_DECREF(out);
                    Py_RETURN_NONE;
                }
            }
            PyObject *v;
            if (y - x <= 18) { /* (fits in 64 bits) */
                long long k = 0;
                for (const char *d = x; d < y; d++) {
                    k = k * 10 + (*d - '0');
                }
                v = PyLong_FromLongLong(k);
            }
            else {
                PyObject *digits = PyUnicode_FromStringAndSize(x, y - x);
                v = digits == NULL ? NULL : PyLong_FromUnicodeObject(digits, 10);
                Py_XDECREF(digits);
            }
            if (v == NULL) {
                Py_DECREF(out);
                if (PyErr_ExceptionMatches(PyExc_ValueError)) { /* (past int's digits limit) */
                    PyErr_Clear();
                    Py_RETURN_NONE;
                }
                return NULL;
            }
            int failed = PyList_Append(out, v);
            Py_DECREF(v);
            if (failed < 0) {
                Py_DECREF(out);
                return NULL;
            }
        }
        a = b + 1;
    }
    PyObject *t = PyList_AsTuple(out);
    Py_DECREF(out);
    return t;
}

/* a piece of an ASCII string as a str */
static PyObject *
ascii_piece(const char *s, Py_ssize_t a, Py_ssize_t b)
{
    return PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, s + a, b - a);
}

PyObject *
type_shape(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "type_shape(text: str, fallback)");
        return NULL;
    }
    PyObject *text = args[0];
    if (PyUnicode_READY(text) < 0) {
        return NULL;
    }
    if (!PyUnicode_IS_ASCII(text)) { /* (other letters and blanks: the Python's) */
        return PyObject_CallOneArg(args[1], text);
    }
    const char *s = (const char *)PyUnicode_1BYTE_DATA(text);
    Py_ssize_t a = 0, b = PyUnicode_GET_LENGTH(text);
    while (a < b && ascii_blank((unsigned char)s[a])) {
        a++;
    }
    while (b > a && ascii_blank((unsigned char)s[b - 1])) {
        b--;
    }
    /* the element type up to the first "[" (a lower-case letter, then lower-case letters,
     * digits and "_"), the dimensions up to the first "]" after it, no line break after */
    const char *open = memchr(s + a, '[', (size_t)(b - a));
    if (open == NULL || open == s + a) {
        Py_RETURN_NONE;
    }
    Py_ssize_t i = open - s;
    const char *close = memchr(open + 1, ']', (size_t)(b - i - 1));
    if (close == NULL) {
        Py_RETURN_NONE;
    }
    Py_ssize_t j = close - s;
    if (s[a] < 'a' || s[a] > 'z') {
        Py_RETURN_NONE;
    }
    for (Py_ssize_t k = a + 1; k < i; k++) {
        char c = s[k];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
            Py_RETURN_NONE;
        }
    }
    if (memchr(s + j + 1, '\n', (size_t)(b - j - 1)) != NULL) {
        Py_RETURN_NONE;
    }
    /* the dimensions split at commas, each without its blanks (none when all are blank) */
    Py_ssize_t x = i + 1, y = j;
    while (x < y && ascii_blank((unsigned char)s[x])) {
        x++;
    }
    PyObject *dims = NULL;
    if (x == y) {
        dims = PyTuple_New(0);
    }
    else {
        Py_ssize_t count = 1;
        for (Py_ssize_t k = i + 1; k < j; k++) {
            count += s[k] == ',';
        }
        dims = PyTuple_New(count);
        Py_ssize_t p = i + 1;
        for (Py_ssize_t d = 0; dims != NULL && d < count; d++) {
            const char *comma = memchr(s + p, ',', (size_t)(j - p));
            Py_ssize_t q = comma == NULL ? j : comma - s, u = p, v = q;
            while (u < v && ascii_blank((unsigned char)s[u])) {
                u++;
            }
            while (v > u && ascii_blank((unsigned char)s[v - 1])) {
                v--;
            }
            PyObject *piece = ascii_piece(s, u, v);
            if (piece == NULL) {
                Py_CLEAR(dims);
                break;
            }
            PyTuple_SET_ITEM(dims, d, piece);
            p = q + 1;
        }
    }
    if (dims == NULL) {
        return NULL;
    }
    PyObject *dt = ascii_piece(s, a, i), *inner = ascii_piece(s, i + 1, j),
             *rest = ascii_piece(s, j + 1, b);
    PyObject *out = NULL;
    if (dt != NULL && inner != NULL && rest != NULL) {
        out = PyTuple_Pack(4, dt, inner, rest, dims);
    }
    Py_XDECREF(dt);
    Py_XDECREF(inner);
    Py_XDECREF(rest);
    Py_DECREF(dims);
    return out;
}

/* ---- A line's "LEVEL:logger:[lineno:[ ]]" prefix (Python logging's default format) ---- */

/* the (level, logger) of the heads ("LEVEL:logger") of one-byte lines met lately: a log
 * has a few (each read once, and its logger's name one string for all its lines, as the
 * Python twin's memo keeps them) */
#define HEADS_KEPT 8
#define HEAD_LONGEST 256
static struct {
    PyObject *head, *level, *name;
} heads_kept[HEADS_KEPT];
static int heads_next = 0;

/* where the character c is first in s from start, or -1 */
static Py_ssize_t
char_find(const chars_t *s, Py_UCS4 c, Py_ssize_t start)
{
    for (Py_ssize_t i = start; i < s->n; i++) {
        if (char_at(s, i) == c) {
            return i;
        }
    }
    return -1;
}

PyObject *
level_first(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    chars_t s;
    if (nargs != 2 || !PyDict_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "level_first(line: str, levels: dict)");
        return NULL;
    }
    if (chars_of(args[0], &s) < 0) {
        return NULL;
    }
    PyObject *line = args[0];
    Py_ssize_t c1 = char_find(&s, ':', 0), j = c1 < 0 ? -1 : char_find(&s, ':', c1 + 1);
    if (j < 0) {
        Py_RETURN_NONE;
    }
    PyObject *level = NULL, *name = NULL;
    int keep = s.kind == PyUnicode_1BYTE_KIND && j <= HEAD_LONGEST;
    for (int k = 0; keep && k < HEADS_KEPT; k++) {
        PyObject *h = heads_kept[k].head;
        if (h != NULL && PyUnicode_GET_LENGTH(h) == j && PyUnicode_KIND(h) == PyUnicode_1BYTE_KIND &&
            memcmp(PyUnicode_1BYTE_DATA(h), s.data, (size_t)j) == 0) {
            level = Py_NewRef(heads_kept[k].level);
            name = Py_NewRef(heads_kept[k].name);
            break;
        }
    }
    if (level == NULL) {
        /* the logger: [A-Za-z_] then word characters (str.isalnum), ".", "-" and "_" */
        if (j == c1 + 1) {
            Py_RETURN_NONE;
        }
        Py_UCS4 f = char_at(&s, c1 + 1);
        if (!((f >= 'A' && f <= 'Z') || (f >= 'a' && f <= 'z') || f == '_')) {
            Py_RETURN_NONE;
        }
        for (Py_ssize_t i = c1 + 2; i < j; i++) {
            Py_UCS4 ch = char_at(&s, i);
            if (ch != '.' && ch != '-' && ch != '_' && !Py_UNICODE_ISALNUM(ch)) {
                Py_RETURN_NONE;
            }
        }
        PyObject *key = PyUnicode_Substring(line, 0, c1);
        if (key == NULL) {
            return NULL;
        }
        level = PyDict_GetItemWithError(args[1], key);
        if (level == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_SetObject(PyExc_KeyError, key);
            }
            Py_DECREF(key);
            return NULL;
        }
        Py_DECREF(key);
        Py_INCREF(level);
        name = PyUnicode_Substring(line, c1 + 1, j);
        if (name == NULL) {
            Py_DECREF(level);
            return NULL;
        }
        PyObject *head = keep ? PyUnicode_Substring(line, 0, j) : NULL;
        if (head != NULL) {
            int at = heads_next;
            heads_next = (heads_next + 1) % HEADS_KEPT;
            Py_XSETREF(heads_kept[at].head, head);
            Py_XSETREF(heads_kept[at].level, Py_NewRef(level));
            Py_XSETREF(heads_kept[at].name, Py_NewRef(name));
        }
        else if (PyErr_Occurred()) {
            Py_DECREF(level);
            Py_DECREF(name);
            return NULL;
        }
    }
    /* the line number JAX's own handler prints: decimal digits, ":" and a blank */
    Py_ssize_t e = j + 1, d = e;
    while (d < s.n && Py_UNICODE_ISDECIMAL(char_at(&s, d))) {
        d++;
    }
    if (d > e && d < s.n && char_at(&s, d) == ':') {
        e = d + 1 < s.n && char_at(&s, d + 1) == ' ' ? d + 2 : d + 1;
    }
    PyObject *msg = PyUnicode_Substring(line, e, s.n);
    PyObject *out = msg == NULL ? NULL : PyTuple_Pack(3, level, name, msg);
    Py_DECREF(level);
    Py_DECREF(name);
    Py_XDECREF(msg);
    return out;
}
