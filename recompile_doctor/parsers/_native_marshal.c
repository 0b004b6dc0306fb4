/* marshal's bytes (version 4) of the plain values the workers and the spool write, in C.
 *
 * A worker hands its events to the parent as marshal's bytes of lists of plain values
 * (parsers/_event_codec.py), and the parent's spool writes its events' rows the same way
 * (timeline/spool.py).  marshal.dumps spends about 160 instructions an object there: a
 * generic walk, a hash table of every object seen more than once (each one increfed, put,
 * decrefed), and a bounds check per byte; the spool also copied each row out of its named
 * tuple first, marshal taking no subclass.  Here one walk writes the same format into one
 * kept buffer.
 *
 * What marshal.loads reads back is what it reads from marshal.dumps of the same value:
 * equal values of the same types, and an object held twice (a string, a tuple, a list, a
 * dict, bytes) given back as one object held twice, as marshal's references do (a list
 * holding itself included).  The bytes are not always marshal's own: an int or a float is
 * written as its value each time (marshal refers back to one met before; the value read is
 * the same), and an object is referred back to only when it is met again (marshal's table
 * also numbers objects never met twice; the numbers differ, not what they stand for).
 *
 * Only exact types are written: None, bools, int, float, str, bytes, tuple, list and dict.
 * Anything else, an int beyond 64 bits, or values nested deeper than marshal's own limit,
 * gives None, and the caller calls marshal.dumps: its bytes, or its error.  The tests hold
 * the two to the same values read back, and to the same JSON of a spooled chunk.
 */
#include "_native_marshal.h"

#include "_native_writer.h"

#include <stdint.h>
#include <string.h>

/* marshal's type codes (Python/marshal.c) */
#define M_NULL '0'
#define M_NONE 'N'
#define M_FALSE 'F'
#define M_TRUE 'T'
#define M_INT 'i'
#define M_LONG 'l'
#define M_BINARY_FLOAT 'g'
#define M_STRING 's'
#define M_REF 'r'
#define M_TUPLE '('
#define M_SMALL_TUPLE ')'
#define M_LIST '['
#define M_DICT '{'
#define M_UNICODE 'u'
#define M_INTERNED 't'
#define M_ASCII 'a'
#define M_ASCII_INTERNED 'A'
#define M_SHORT_ASCII 'z'
#define M_SHORT_ASCII_INTERNED 'Z'
#define M_FLAG_REF 0x80

/* marshal's own limit of nesting (MAX_MARSHAL_STACK_DEPTH) */
#define DEPTH_MOST 2000

typedef struct {
    char *buf;
    Py_ssize_t len, cap;
    /* the objects written with FLAG_REF so far, by address; its entries (their numbers
     * given in order) the numbers of marshal's references */
    seen_table seen;
    int unwritten; /* something met that is not written here */
} Writer;

/* kept from one call to the next: the buffer and the table (the calls come a batch at a
 * time; no Python runs while one writes, so no call comes in the middle of another) */
static char *kept_buf = NULL;
static Py_ssize_t kept_cap = 0;
static seen_kept kept_seen = {NULL, 0, 0};

#define KEPT_BUF_MOST (4 << 20)
#define SEEN_FIRST 1024
/* the biggest table kept for the next call (16 bytes an entry: 1 MB; one value of many
 * objects, a table of more, is not held on to after it) */
#define KEPT_SEEN_MOST (1 << 16)

static inline int
room(Writer *w, Py_ssize_t n)
{
    return w->len + n <= w->cap ? 0 : buffer_grow(&w->buf, &w->cap, w->len, n);
}

static inline void
put_u32(char *at, uint32_t x)
{
    at[0] = (char)(x & 0xff);
    at[1] = (char)((x >> 8) & 0xff);
    at[2] = (char)((x >> 16) & 0xff);
    at[3] = (char)((x >> 24) & 0xff);
}

/* A type byte then a 4-byte number */
static int
put_code_u32(Writer *w, char code, uint32_t x)
{
    if (room(w, 5) < 0) {
        return -1;
    }
    w->buf[w->len] = code;
    put_u32(w->buf + w->len + 1, x);
    w->len += 5;
    return 0;
}

/* o met before: 1 and its reference written; not yet: 0, and *flag is FLAG_REF when it is
 * numbered now (held more than once: it may come again); -1: an error */
static int
ref_or_number(Writer *w, PyObject *o, char *flag)
{
    *flag = 0;
    if (Py_REFCNT(o) == 1) {
        return 0; /* (held only by what holds it here: met once) */
    }
    if (w->seen.used >= 0x7fffffff) {
        w->unwritten = 1;
        return -1;
    }
    int64_t got = seen_number(&w->seen, o, (int32_t)w->seen.used);
    if (got >= 0) {
        return put_code_u32(w, M_REF, (uint32_t)got) < 0 ? -1 : 1;
    }
    *flag = (char)M_FLAG_REF;
    return got == -1 ? 0 : -1;
}

/* An int of at most 64 bits (more: unwritten) */
static int
put_int(Writer *w, PyObject *o)
{
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0) {
        w->unwritten = 1;
        return -1;
    }
    if (x == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (x >= -2147483648LL && x <= 2147483647LL) {
        return put_code_u32(w, M_INT, (uint32_t)(int32_t)x);
    }
    /* marshal's long: the count of 15-bit digits (negative for a negative number), then
     * the digits, least significant first, two bytes each */
    unsigned long long mag = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
    uint16_t digits[5];
    int n = 0;
    while (mag != 0) {
        digits[n++] = (uint16_t)(mag & 0x7fff);
        mag >>= 15;
    }
    if (put_code_u32(w, M_LONG, (uint32_t)(int32_t)(x < 0 ? -n : n)) < 0 || room(w, 2 * n) < 0) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        w->buf[w->len++] = (char)(digits[i] & 0xff);
        w->buf[w->len++] = (char)(digits[i] >> 8);
    }
    return 0;
}

static int
put_float(Writer *w, PyObject *o)
{
    if (room(w, 9) < 0) {
        return -1;
    }
    w->buf[w->len] = M_BINARY_FLOAT;
    if (PyFloat_Pack8(PyFloat_AS_DOUBLE(o), w->buf + w->len + 1, 1) < 0) {
        return -1;
    }
    w->len += 9;
    return 0;
}

/* A code, the size (one byte when short, else four) and the bytes */
static int
put_sized(Writer *w, char code, int short_size, const char *p, Py_ssize_t n)
{
    if (n > 0x7fffffff) {
        w->unwritten = 1;
        return -1;
    }
    if (room(w, 5 + n) < 0) {
        return -1;
    }
    char *at = w->buf + w->len;
    *at++ = code;
    if (short_size) {
        *at++ = (char)n;
    }
    else {
        put_u32(at, (uint32_t)n);
        at += 4;
    }
    memcpy(at, p, (size_t)n);
    w->len = (at - w->buf) + n;
    return 0;
}

static int
put_str(Writer *w, PyObject *o, char flag)
{
    int interned = PyUnicode_CHECK_INTERNED(o) != 0;
    if (PyUnicode_IS_ASCII(o)) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(o);
        const char *p = (const char *)PyUnicode_1BYTE_DATA(o);
        if (n < 256) {
            return put_sized(w, (char)((interned ? M_SHORT_ASCII_INTERNED : M_SHORT_ASCII) | flag),
                             1, p, n);
        }
        return put_sized(w, (char)((interned ? M_ASCII_INTERNED : M_ASCII) | flag), 0, p, n);
    }
    /* (as marshal: UTF-8, a lone surrogate passed through) */
    PyObject *utf8 = PyUnicode_AsEncodedString(o, "utf8", "surrogatepass");
    if (utf8 == NULL) {
        PyErr_Clear();
        w->unwritten = 1;
        return -1;
    }
    int got = put_sized(w, (char)((interned ? M_INTERNED : M_UNICODE) | flag), 0,
                        PyBytes_AS_STRING(utf8), PyBytes_GET_SIZE(utf8));
    Py_DECREF(utf8);
    return got;
}

static int put_value(Writer *w, PyObject *o, int depth);

/* A sequence's items (tuple or list: its size read once, no Python running meanwhile) */
static int
put_items(Writer *w, PyObject *const *items, Py_ssize_t n, int depth)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        if (put_value(w, items[i], depth) < 0) {
            return -1;
        }
    }
    return 0;
}

static int
put_tuple(Writer *w, PyObject *o, char flag, int depth)
{
    Py_ssize_t n = PyTuple_GET_SIZE(o);
    if (n < 256) {
        if (room(w, 2) < 0) {
            return -1;
        }
        w->buf[w->len++] = (char)(M_SMALL_TUPLE | flag);
        w->buf[w->len++] = (char)n;
    }
    else if (put_code_u32(w, (char)(M_TUPLE | flag), (uint32_t)n) < 0) {
        return -1;
    }
    return put_items(w, &PyTuple_GET_ITEM(o, 0), n, depth);
}

static int
put_value(Writer *w, PyObject *o, int depth)
{
    if (depth >= DEPTH_MOST) { /* (marshal counts the value at the top 1, here 0) */
        w->unwritten = 1;
        return -1;
    }
    PyTypeObject *t = Py_TYPE(o);
    if (o == Py_None || o == Py_False || o == Py_True) {
        if (room(w, 1) < 0) {
            return -1;
        }
        w->buf[w->len++] = o == Py_None ? M_NONE : o == Py_True ? M_TRUE : M_FALSE;
        return 0;
    }
    if (t == &PyLong_Type) {
        return put_int(w, o);
    }
    if (t == &PyFloat_Type) {
        return put_float(w, o);
    }
    if (t != &PyUnicode_Type && t != &PyTuple_Type && t != &PyList_Type && t != &PyDict_Type
        && t != &PyBytes_Type) {
        w->unwritten = 1;
        return -1;
    }
    char flag;
    int got = ref_or_number(w, o, &flag);
    if (got != 0) {
        return got < 0 ? -1 : 0;
    }
    if (t == &PyUnicode_Type) {
        return put_str(w, o, flag);
    }
    if (t == &PyTuple_Type) {
        return put_tuple(w, o, flag, depth + 1);
    }
    if (t == &PyBytes_Type) {
        return put_sized(w, (char)(M_STRING | flag), 0, PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o));
    }
    if (t == &PyList_Type) {
        Py_ssize_t n = PyList_GET_SIZE(o);
        if (put_code_u32(w, (char)(M_LIST | flag), (uint32_t)n) < 0) {
            return -1;
        }
        return put_items(w, ((PyListObject *)o)->ob_item, n, depth + 1);
    }
    /* a dict: its keys and values in turn, then NULL */
    if (room(w, 1) < 0) {
        return -1;
    }
    w->buf[w->len++] = (char)(M_DICT | flag);
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(o, &pos, &k, &v)) {
        if (put_value(w, k, depth + 1) < 0 || put_value(w, v, depth + 1) < 0) {
            return -1;
        }
    }
    if (room(w, 1) < 0) {
        return -1;
    }
    w->buf[w->len++] = M_NULL;
    return 0;
}

/* The rows: a list of tuples or of their subclasses, each written as a plain tuple (not
 * numbered: the list is the one holder of each row read back) */
static int
put_rows(Writer *w, PyObject *rows)
{
    Py_ssize_t n = PyList_GET_SIZE(rows);
    if (put_code_u32(w, M_LIST, (uint32_t)n) < 0) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *row = PyList_GET_ITEM(rows, i);
        if (!PyTuple_Check(row)) {
            w->unwritten = 1;
            return -1;
        }
        if (put_tuple(w, row, 0, 2) < 0) {
            return -1;
        }
    }
    return 0;
}

PyObject *
marshal_dumps(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "marshal_dumps(value, rows) takes 2 arguments");
        return NULL;
    }
    int rows = PyObject_IsTrue(args[1]);
    if (rows < 0) {
        return NULL;
    }
    if (rows && !PyList_CheckExact(args[0])) {
        Py_RETURN_NONE;
    }
    Writer w = {0};
    if (kept_buf != NULL) {
        w.buf = kept_buf;
        w.cap = kept_cap;
        kept_buf = NULL;
    }
    else {
        w.cap = 1 << 16;
        w.buf = PyMem_Malloc((size_t)w.cap);
        if (w.buf == NULL) {
            return PyErr_NoMemory();
        }
    }
    if (seen_open(&w.seen, &kept_seen, SEEN_FIRST) < 0) {
        PyMem_Free(w.buf);
        return NULL;
    }
    int got = rows ? put_rows(&w, args[0]) : put_value(&w, args[0], 0);
    PyObject *out = NULL;
    if (got == 0) {
        out = PyBytes_FromStringAndSize(w.buf, w.len);
    }
    else if (w.unwritten && !PyErr_Occurred()) {
        out = Py_NewRef(Py_None);
    }
    /* keep the buffer and the table for the next call (when not too big) */
    if (w.cap <= KEPT_BUF_MOST) {
        kept_buf = w.buf;
        kept_cap = w.cap;
    }
    else {
        PyMem_Free(w.buf);
    }
    seen_close(&w.seen, &kept_seen, KEPT_SEEN_MOST);
    return out;
}
