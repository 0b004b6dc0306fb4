/* A worker's batch of events packed into bytes, and back, in one C call each.
 *
 * A worker hands the parent every event it decodes (parsers/_event_codec.py).  The event
 * codec made each event a list of plain values (_native_codec.c) and marshal wrote those
 * (_native_marshal.c), and the parent read them back with marshal.loads and made the event
 * of each list: some 10,000 instructions an event in C on the two sides, a fifth of the
 * reading of a 24 MB JAX log by two processes, for objects made only to be taken apart.
 * Here the events' slots are written straight to bytes and the parent makes each event
 * straight from them: no list, tuple or dict of the handing over is made on either side.
 *
 * The bytes: b"P", then per item a code: an event's class's tag (below 0xF0), then its span
 * (five values), its record (0: None, 1: the record of the event before, 2: a flags byte,
 * then the record's fields, the span's own source, line, time and text left out where the
 * flags say they are the span's), its keep and its other fields, as values; or 0xF0 and a
 * value that is not an event (the list of a missed look-up, the end's marker), given back
 * as it is; or 0xF1, an event and a value: a pair (the timeline packs its lookups with
 * their compilations' numbers this way, timeline/packed.py).  A value: None, False, True,
 * an int (of 64 bits, or beyond: its decimal digits, a long name's digest), a float, a str
 * (its kind's code units as they are: a lone surrogate goes through; interned again where
 * it was), bytes, a tuple, list or dict of values, one of the codec's value classes
 * (compile keys, value changes: made once per distinct value, shared as _event_codec's
 * are, through the same table of those made lately), or the shared empty detail.  A str or
 * a value object met again in the batch is written as its number.
 *
 * Anything else (another type, a subclass, an int of more digits than int's limit, nesting
 * deeper than DEPTH_MOST, an event whose class is not the codec's, an unset slot) is not
 * packed: the call gives None, and the caller writes the batch the way it did before
 * (_event_codec's items by marshal).  Packing runs no Python (but int's own str of a big
 * int): the batch's objects are the caller's, alive and unchanged throughout, so an object
 * met again is the object met before.  Unpacking checks every length against the bytes
 * (and every character of a 4-byte str); a batch cut short or changed raises ValueError
 * (a dict key unhashable after a change: TypeError), never a crash.  The tests hold both
 * ways to the events the codec gives back, of every fixture and of generated values, and
 * feed the unpacker changed and cut bytes.
 */
#include "_native_pack.h"

#include <stdint.h>
#include <string.h>

#include "_native_writer.h"
#include "_native_slots.h"

#define SLOT(obj, plan, i) (*(PyObject **)((char *)(obj) + (plan)->offsets[i]))

#define MARK_OTHER 0xF0 /* an item that is not an event */
#define MARK_PAIR 0xF1  /* a pair of an event and a value (the timeline's lookups) */
#define REC_NONE 0
#define REC_BEFORE 1
#define REC_OWN 2
/* the record's fields that are its span's (then not written) */
#define SAME_SOURCE 1
#define SAME_LINE 2
#define SAME_T 4
#define SAME_TEXT 8

/* value codes */
#define V_NONE 'N'
#define V_FALSE 'F'
#define V_TRUE 'T'
#define V_INT 'i'
#define V_BIG_INT 'l' /* (beyond 64 bits: its decimal digits) */
#define V_FLOAT 'g'
#define V_STR 's'
#define V_STR_AGAIN 'r'
#define V_BYTES 'b'
#define V_TUPLE '('
#define V_LIST '['
#define V_DICT '{'
#define V_OBJECT 'v'
#define V_OBJECT_AGAIN 'V'
#define V_EMPTY 'E'

#define DEPTH_MOST 100

/* -- packing ----------------------------------------------------------------------------- */

/* the table of numbered objects, kept from one call to the next; no Python runs while one
 * packs (but an int's own str), so no call comes in the middle of another */
static seen_kept kept_seen = {NULL, 0, 0};
#define SEEN_FIRST 4096
/* the biggest table kept for the next call (16 bytes an entry) */
#define KEPT_SEEN_MOST (1 << 16)

typedef struct {
    char *buf;
    Py_ssize_t len, cap;
    seen_table seen;          /* objects numbered (str and value objects), by address */
    Py_ssize_t strs, objects; /* the numbers given so far, of each kind */
    PyObject *values;         /* {value class: (index, plan)} */
    PyObject *empty;          /* the shared empty detail */
    int unpacked;             /* something met that is not packed here */
} Packer;

static inline int
room(Packer *p, Py_ssize_t n)
{
    return p->len + n <= p->cap ? 0 : buffer_grow(&p->buf, &p->cap, p->len, n);
}

static int
put_byte(Packer *p, unsigned char b)
{
    if (room(p, 1) < 0) {
        return -1;
    }
    p->buf[p->len++] = (char)b;
    return 0;
}

static int
put_bytes(Packer *p, const void *data, Py_ssize_t n)
{
    if (room(p, n) < 0) {
        return -1;
    }
    memcpy(p->buf + p->len, data, (size_t)n);
    p->len += n;
    return 0;
}

static int
put_u32(Packer *p, Py_ssize_t x)
{
    if (x < 0 || x > 0x7fffffff) {
        p->unpacked = 1;
        return -1;
    }
    uint32_t u = (uint32_t)x;
    unsigned char b[4] = {(unsigned char)u, (unsigned char)(u >> 8), (unsigned char)(u >> 16),
                          (unsigned char)(u >> 24)};
    return put_bytes(p, b, 4);
}

/* o's number when it was met before (>= 0), else -1 and o numbered now as the next of its
 * kind (*counter); -2 on an error */
static Py_ssize_t
number_of(Packer *p, PyObject *o, Py_ssize_t *counter)
{
    if (*counter >= 0x7fffffff) {
        p->unpacked = 1;
        return -2;
    }
    int64_t got = seen_number(&p->seen, o, (int32_t)*counter);
    if (got == -1) {
        (*counter)++;
    }
    return (Py_ssize_t)got;
}

static int put_value(Packer *p, PyObject *o, int depth);

/* The plan of a table's entry (a tag or class, and the plan's capsule), or NULL (no error)
 * when the entry is not one; *tag: the entry's first item as a long when asked (-1 when it
 * is not an int) */
static slot_plan_t *
plan_in(PyObject *entry, long *tag)
{
    if (entry == NULL || !PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 2 ||
        !PyCapsule_IsValid(PyTuple_GET_ITEM(entry, 1), NATIVE_PLAN)) {
        return NULL;
    }
    if (tag != NULL) {
        PyObject *t = PyTuple_GET_ITEM(entry, 0);
        *tag = PyLong_CheckExact(t) ? PyLong_AsLong(t) : -1;
        if (*tag == -1 && PyErr_Occurred()) {
            PyErr_Clear(); /* (too big: no tag of ours) */
        }
    }
    return PyCapsule_GetPointer(PyTuple_GET_ITEM(entry, 1), NATIVE_PLAN);
}

static int
put_str(Packer *p, PyObject *o)
{
    Py_ssize_t again = number_of(p, o, &p->strs);
    if (again == -2) {
        return -1;
    }
    if (again >= 0) {
        return put_byte(p, V_STR_AGAIN) < 0 ? -1 : put_u32(p, again);
    }
    int kind = PyUnicode_KIND(o);
    Py_ssize_t n = PyUnicode_GET_LENGTH(o);
    if (n > 0x7fffffff / 4) {
        p->unpacked = 1;
        return -1;
    }
    unsigned char head[2] = {V_STR, (unsigned char)(kind | (PyUnicode_CHECK_INTERNED(o) ? 8 : 0))};
    if (put_bytes(p, head, 2) < 0 || put_u32(p, n) < 0) {
        return -1;
    }
    return put_bytes(p, PyUnicode_DATA(o), n * kind);
}

static int
put_items(Packer *p, unsigned char code, PyObject *const *items, Py_ssize_t n, int depth)
{
    if (put_byte(p, code) < 0 || put_u32(p, n) < 0) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (put_value(p, items[i], depth + 1) < 0) {
            return -1;
        }
    }
    return 0;
}

/* a value object of the codec (its class's plan in p->values), or 1 when o is not one */
static int
put_object(Packer *p, PyObject *o, int depth)
{
    PyObject *pair = PyDict_GetItemWithError(p->values, (PyObject *)Py_TYPE(o));
    if (pair == NULL && PyErr_Occurred()) {
        return -1;
    }
    long index;
    slot_plan_t *plan = plan_in(pair, &index);
    if (plan == NULL || plan->tp != Py_TYPE(o) || index < 0 || index > 255) {
        return 1;
    }
    for (Py_ssize_t i = 0; i < plan->n; i++) {
        if (SLOT(o, plan, i) == NULL) {
            return 1;
        }
    }
    Py_ssize_t again = number_of(p, o, &p->objects);
    if (again == -2) {
        return -1;
    }
    if (again >= 0) {
        return put_byte(p, V_OBJECT_AGAIN) < 0 ? -1 : put_u32(p, again);
    }
    unsigned char head[2] = {V_OBJECT, (unsigned char)index};
    if (put_bytes(p, head, 2) < 0) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < plan->n; i++) {
        if (put_value(p, SLOT(o, plan, i), depth + 1) < 0) {
            return -1;
        }
    }
    return 0;
}

static int
put_value(Packer *p, PyObject *o, int depth)
{
    if (depth >= DEPTH_MOST) {
        p->unpacked = 1;
        return -1;
    }
    if (o == Py_None) {
        return put_byte(p, V_NONE);
    }
    if (o == Py_False || o == Py_True) {
        return put_byte(p, o == Py_True ? V_TRUE : V_FALSE);
    }
    PyTypeObject *t = Py_TYPE(o);
    if (t == &PyUnicode_Type) {
        return put_str(p, o);
    }
    if (t == &PyLong_Type) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow) { /* (a name's digest, say: its digits, as few as that is) */
            PyObject *digits = PyObject_Str(o); /* (an int's own: no Python of a class's) */
            if (digits == NULL || !PyUnicode_IS_ASCII(digits)) {
                Py_XDECREF(digits);
                PyErr_Clear(); /* (more digits than int's limit of them) */
                p->unpacked = 1;
                return -1;
            }
            Py_ssize_t n = PyUnicode_GET_LENGTH(digits);
            int got = put_byte(p, V_BIG_INT) < 0 || put_u32(p, n) < 0 ||
                              put_bytes(p, PyUnicode_1BYTE_DATA(digits), n) < 0
                          ? -1
                          : 0;
            Py_DECREF(digits);
            return got;
        }
        if (x == -1 && PyErr_Occurred()) {
            return -1;
        }
        return put_byte(p, V_INT) < 0 ? -1 : put_bytes(p, &x, 8);
    }
    if (t == &PyFloat_Type) {
        double d = PyFloat_AS_DOUBLE(o);
        return put_byte(p, V_FLOAT) < 0 ? -1 : put_bytes(p, &d, 8);
    }
    if (t == &PyTuple_Type) {
        return put_items(p, V_TUPLE, &PyTuple_GET_ITEM(o, 0), PyTuple_GET_SIZE(o), depth);
    }
    if (t == &PyList_Type) {
        return put_items(p, V_LIST, ((PyListObject *)o)->ob_item, PyList_GET_SIZE(o), depth);
    }
    if (t == &PyDict_Type) {
        if (o == p->empty) {
            return put_byte(p, V_EMPTY);
        }
        if (put_byte(p, V_DICT) < 0 || put_u32(p, PyDict_GET_SIZE(o)) < 0) {
            return -1;
        }
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(o, &pos, &k, &v)) {
            if (put_value(p, k, depth + 1) < 0 || put_value(p, v, depth + 1) < 0) {
                return -1;
            }
        }
        return 0;
    }
    if (t == &PyBytes_Type) {
        if (put_byte(p, V_BYTES) < 0 || put_u32(p, PyBytes_GET_SIZE(o)) < 0) {
            return -1;
        }
        return put_bytes(p, PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o));
    }
    if (o == p->empty) {
        return put_byte(p, V_EMPTY);
    }
    int got = put_object(p, o, depth);
    if (got == 1) {
        p->unpacked = 1;
        return -1;
    }
    return got;
}

/* An event of the plan (its class's) and its tag; before: the record of the event before
 * (a borrowed reference, updated) */
static int
put_event(Packer *p, PyObject *ev, long tag, const slot_plan_t *plan, PyTypeObject *span_tp,
          PyTypeObject *event_tp, PyObject **before)
{
    for (Py_ssize_t i = 0; i < plan->n; i++) {
        if (SLOT(ev, plan, i) == NULL) {
            p->unpacked = 1;
            return -1;
        }
    }
    PyObject *span = SLOT(ev, plan, 0), *rec = SLOT(ev, plan, 1);
    if (Py_TYPE(span) != span_tp || PyTuple_GET_SIZE(span) != 5 ||
        !(rec == Py_None || (Py_TYPE(rec) == event_tp && PyTuple_GET_SIZE(rec) == 8))) {
        p->unpacked = 1;
        return -1;
    }
    if (put_byte(p, (unsigned char)tag) < 0 ||
        put_items(p, V_TUPLE, &PyTuple_GET_ITEM(span, 0), 5, 0) < 0) {
        return -1;
    }
    if (rec == Py_None || (rec == *before && *before != Py_None)) {
        if (put_byte(p, rec == Py_None ? REC_NONE : REC_BEFORE) < 0) {
            return -1;
        }
    }
    else {
        PyObject *const *r = &PyTuple_GET_ITEM(rec, 0), *const *s = &PyTuple_GET_ITEM(span, 0);
        /* (record: kind, source, line, t, text, module, hash, detail; span: source, line,
         * text, t, rank) */
        int line_same = r[2] == s[1];
        if (!line_same && PyLong_CheckExact(r[2]) && PyLong_CheckExact(s[1])) {
            int eq = PyObject_RichCompareBool(r[2], s[1], Py_EQ); /* (ints: no Python) */
            if (eq < 0) {
                return -1;
            }
            line_same = eq;
        }
        unsigned char flags = (unsigned char)((r[1] == s[0] ? SAME_SOURCE : 0) |
                                              (line_same ? SAME_LINE : 0) |
                                              (r[3] == s[3] ? SAME_T : 0) |
                                              (r[4] == s[2] ? SAME_TEXT : 0));
        unsigned char head[2] = {REC_OWN, flags};
        if (put_bytes(p, head, 2) < 0 || put_value(p, r[0], 1) < 0 ||
            (!(flags & SAME_SOURCE) && put_value(p, r[1], 1) < 0) ||
            (!(flags & SAME_LINE) && put_value(p, r[2], 1) < 0) ||
            (!(flags & SAME_T) && put_value(p, r[3], 1) < 0) ||
            (!(flags & SAME_TEXT) && put_value(p, r[4], 1) < 0) || put_value(p, r[5], 1) < 0 ||
            put_value(p, r[6], 1) < 0 || put_value(p, r[7], 1) < 0) {
            return -1;
        }
    }
    *before = rec;
    for (Py_ssize_t i = 2; i < plan->n; i++) {
        if (put_value(p, SLOT(ev, plan, i), 0) < 0) {
            return -1;
        }
    }
    return 0;
}

PyObject *
pack_events(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 3 || !PyList_CheckExact(args[0]) || !PyTuple_CheckExact(args[2]) ||
        PyTuple_GET_SIZE(args[2]) != 5 || !PyDict_CheckExact(PyTuple_GET_ITEM(args[2], 0)) ||
        !PyDict_CheckExact(PyTuple_GET_ITEM(args[2], 1)) ||
        !PyType_Check(PyTuple_GET_ITEM(args[2], 2)) ||
        !PyType_Check(PyTuple_GET_ITEM(args[2], 3))) {
        PyErr_SetString(PyExc_TypeError, "pack_events(items, before, table): a list and the "
                                         "table (classes, values, span, event, empty)");
        return NULL;
    }
    PyObject *items = args[0], *table = args[2];
    PyObject *classes = PyTuple_GET_ITEM(table, 0);
    PyTypeObject *span_tp = (PyTypeObject *)PyTuple_GET_ITEM(table, 2);
    PyTypeObject *event_tp = (PyTypeObject *)PyTuple_GET_ITEM(table, 3);
    Packer p = {0};
    p.values = PyTuple_GET_ITEM(table, 1);
    p.empty = PyTuple_GET_ITEM(table, 4);
    p.cap = 1 << 16;
    p.buf = PyMem_Malloc((size_t)p.cap);
    if (p.buf == NULL) {
        return PyErr_NoMemory();
    }
    if (seen_open(&p.seen, &kept_seen, SEEN_FIRST) < 0) {
        PyMem_Free(p.buf);
        return NULL;
    }
    PyObject *before = args[1]; /* (borrowed: the items hold the records met) */
    int bad = 0;
    p.buf[p.len++] = 'P';
    Py_ssize_t n = PyList_GET_SIZE(items);
    for (Py_ssize_t i = 0; !bad && i < n; i++) {
        PyObject *it = PyList_GET_ITEM(items, i), *second = NULL;
        if (PyList_CheckExact(it)) { /* (not an event) */
            bad = put_byte(&p, MARK_OTHER) < 0 || put_value(&p, it, 0) < 0;
            continue;
        }
        if (PyTuple_CheckExact(it) && PyTuple_GET_SIZE(it) == 2) { /* (event, value) */
            second = PyTuple_GET_ITEM(it, 1);
            it = PyTuple_GET_ITEM(it, 0);
            if (put_byte(&p, MARK_PAIR) < 0) {
                bad = 1;
                continue;
            }
        }
        PyObject *pair = PyDict_GetItemWithError(classes, (PyObject *)Py_TYPE(it));
        long tag = -1;
        const slot_plan_t *plan = plan_in(pair, &tag);
        if (PyErr_Occurred()) {
            bad = 1;
        }
        else if (plan == NULL || plan->tp != Py_TYPE(it) || plan->n < 3 || tag < 0 ||
                 tag >= MARK_OTHER) {
            p.unpacked = 1;
            bad = 1;
        }
        else {
            bad = put_event(&p, it, tag, plan, span_tp, event_tp, &before) < 0 ||
                  (second != NULL && put_value(&p, second, 0) < 0);
        }
    }
    PyObject *out = NULL;
    if (!bad) {
        PyObject *data = PyBytes_FromStringAndSize(p.buf, p.len);
        out = data != NULL ? Py_BuildValue("(NO)", data, before) : NULL;
    }
    else if (p.unpacked && !PyErr_Occurred()) {
        out = Py_NewRef(Py_None);
    }
    PyMem_Free(p.buf);
    seen_close(&p.seen, &kept_seen, KEPT_SEEN_MOST);
    return out;
}

/* -- unpacking --------------------------------------------------------------------------- */

typedef struct {
    const unsigned char *at, *end;
    PyObject *strs;    /* the str met so far, by number */
    PyObject *objects; /* the value objects so far, by number */
    PyObject *values;  /* ((value class, plan), ...) by index */
    PyObject *made;    /* _event_codec._MADE: fields -> value object */
    PyObject *put;     /* _MADE_KEPT.put */
    PyObject *empty;
} Unpacker;

static int
cut_short(void)
{
    PyErr_SetString(PyExc_ValueError, "unpack_events: the packed batch is cut short");
    return -1;
}

static int
take(Unpacker *u, void *into, Py_ssize_t n)
{
    if (u->end - u->at < n) {
        return cut_short();
    }
    memcpy(into, u->at, (size_t)n);
    u->at += n;
    return 0;
}

static int
take_u32(Unpacker *u, Py_ssize_t *x)
{
    unsigned char b[4];
    if (take(u, b, 4) < 0) {
        return -1;
    }
    *x = (Py_ssize_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                      (uint32_t)b[3] << 24);
    return 0;
}

static PyObject *get_value(Unpacker *u, int depth);

static PyObject *
get_again(Unpacker *u, PyObject *list)
{
    Py_ssize_t k;
    if (take_u32(u, &k) < 0) {
        return NULL;
    }
    if (k >= PyList_GET_SIZE(list)) {
        PyErr_SetString(PyExc_ValueError, "unpack_events: a number of nothing met before");
        return NULL;
    }
    return Py_NewRef(PyList_GET_ITEM(list, k));
}

static PyObject *
get_str(Unpacker *u)
{
    unsigned char head;
    Py_ssize_t n;
    if (take(u, &head, 1) < 0 || take_u32(u, &n) < 0) {
        return NULL;
    }
    int kind = head & 7;
    if (kind != 1 && kind != 2 && kind != 4) {
        PyErr_SetString(PyExc_ValueError, "unpack_events: a str of no kind");
        return NULL;
    }
    if (u->end - u->at < n * kind) {
        cut_short();
        return NULL;
    }
    for (Py_ssize_t i = 0; kind == 4 && i < n; i++) { /* (bytes changed: no such character) */
        uint32_t c;
        memcpy(&c, u->at + 4 * i, 4);
        if (c > 0x10FFFF) {
            PyErr_SetString(PyExc_ValueError, "unpack_events: a character beyond Unicode's");
            return NULL;
        }
    }
    PyObject *s = PyUnicode_FromKindAndData(kind, u->at, n);
    if (s == NULL) {
        return NULL;
    }
    u->at += n * kind;
    if (head & 8) {
        PyUnicode_InternInPlace(&s);
    }
    if (PyList_Append(u->strs, s) < 0) {
        Py_DECREF(s);
        return NULL;
    }
    return s;
}

static PyObject *
get_items(Unpacker *u, int as_tuple, int depth)
{
    Py_ssize_t n;
    if (take_u32(u, &n) < 0) {
        return NULL;
    }
    if (u->end - u->at < n) { /* (each item takes a byte at least) */
        cut_short();
        return NULL;
    }
    PyObject *out = as_tuple ? PyTuple_New(n) : PyList_New(n);
    for (Py_ssize_t i = 0; out != NULL && i < n; i++) {
        PyObject *x = get_value(u, depth + 1);
        if (x == NULL) {
            Py_CLEAR(out);
        }
        else if (as_tuple) {
            PyTuple_SET_ITEM(out, i, x);
        }
        else {
            PyList_SET_ITEM(out, i, x);
        }
    }
    return out;
}

/* whether every item of the tuple t is of a type _event_codec.PLAIN_TYPES holds */
static int
all_plain(PyObject *t)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); i++) {
        PyObject *v = PyTuple_GET_ITEM(t, i);
        PyTypeObject *tp = Py_TYPE(v);
        if (!(v == Py_None || tp == &PyUnicode_Type || tp == &PyLong_Type ||
              tp == &PyFloat_Type || tp == &PyBool_Type || tp == &PyBytes_Type)) {
            return 0;
        }
    }
    return 1;
}

/* a value object: the one made lately of the same fields (when they are all plain, as
 * _event_codec._dec keeps them), else made now and kept there */
static PyObject *
get_object(Unpacker *u, int depth)
{
    unsigned char index;
    if (take(u, &index, 1) < 0) {
        return NULL;
    }
    if (index >= PyTuple_GET_SIZE(u->values)) {
        PyErr_SetString(PyExc_ValueError, "unpack_events: a value of no class");
        return NULL;
    }
    slot_plan_t *plan = plan_in(PyTuple_GET_ITEM(u->values, index), NULL);
    if (plan == NULL) {
        PyErr_SetString(PyExc_TypeError, "unpack_events: a value class without its plan");
        return NULL;
    }
    /* (its number taken before its fields are read: as the packer numbered it) */
    Py_ssize_t number = PyList_GET_SIZE(u->objects);
    if (PyList_Append(u->objects, Py_None) < 0) {
        return NULL;
    }
    PyObject *fields = PyTuple_New(plan->n);
    for (Py_ssize_t i = 0; fields != NULL && i < plan->n; i++) {
        PyObject *x = get_value(u, depth + 1);
        if (x == NULL) {
            Py_CLEAR(fields);
        }
        else {
            PyTuple_SET_ITEM(fields, i, x);
        }
    }
    if (fields == NULL) {
        return NULL;
    }
    int plain = all_plain(fields);
    PyObject *obj = NULL;
    if (plain) {
        obj = PyDict_GetItemWithError(u->made, fields);
        if (obj != NULL && Py_TYPE(obj) == plan->tp) {
            Py_INCREF(obj);
        }
        else if (PyErr_Occurred()) {
            Py_DECREF(fields);
            return NULL;
        }
        else {
            obj = NULL;
        }
    }
    if (obj == NULL) {
        obj = plan->tp->tp_alloc(plan->tp, 0);
        for (Py_ssize_t i = 0; obj != NULL && i < plan->n; i++) {
            Py_XSETREF(SLOT(obj, plan, i), Py_NewRef(PyTuple_GET_ITEM(fields, i)));
        }
        if (obj != NULL && plain) {
            PyObject *got = PyObject_CallFunctionObjArgs(u->put, fields, obj, Py_None, NULL);
            if (got == NULL) {
                Py_CLEAR(obj);
            }
            Py_XDECREF(got);
        }
    }
    Py_DECREF(fields);
    if (obj != NULL && PyList_SetItem(u->objects, number, Py_NewRef(obj)) < 0) {
        Py_CLEAR(obj);
    }
    return obj;
}

static PyObject *
get_value(Unpacker *u, int depth)
{
    unsigned char code;
    if (depth >= DEPTH_MOST) {
        PyErr_SetString(PyExc_ValueError, "unpack_events: values nested too deep");
        return NULL;
    }
    if (take(u, &code, 1) < 0) {
        return NULL;
    }
    switch (code) {
    case V_NONE:
        return Py_NewRef(Py_None);
    case V_FALSE:
        return Py_NewRef(Py_False);
    case V_TRUE:
        return Py_NewRef(Py_True);
    case V_INT: {
        long long x;
        return take(u, &x, 8) < 0 ? NULL : PyLong_FromLongLong(x);
    }
    case V_BIG_INT: {
        Py_ssize_t n;
        if (take_u32(u, &n) < 0) {
            return NULL;
        }
        if (u->end - u->at < n) {
            cut_short();
            return NULL;
        }
        PyObject *digits = PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, u->at, n);
        u->at += n;
        PyObject *x = digits != NULL ? PyLong_FromUnicodeObject(digits, 10) : NULL;
        Py_XDECREF(digits);
        return x;
    }
    case V_FLOAT: {
        double d;
        return take(u, &d, 8) < 0 ? NULL : PyFloat_FromDouble(d);
    }
    case V_STR:
        return get_str(u);
    case V_STR_AGAIN:
        return get_again(u, u->strs);
    case V_BYTES: {
        Py_ssize_t n;
        if (take_u32(u, &n) < 0) {
            return NULL;
        }
        if (u->end - u->at < n) {
            cut_short();
            return NULL;
        }
        PyObject *b = PyBytes_FromStringAndSize((const char *)u->at, n);
        u->at += n;
        return b;
    }
    case V_TUPLE:
    case V_LIST:
        return get_items(u, code == V_TUPLE, depth);
    case V_DICT: {
        Py_ssize_t n;
        if (take_u32(u, &n) < 0) {
            return NULL;
        }
        PyObject *d = PyDict_New();
        for (Py_ssize_t i = 0; d != NULL && i < n; i++) {
            PyObject *k = get_value(u, depth + 1);
            PyObject *v = k != NULL ? get_value(u, depth + 1) : NULL;
            if (v == NULL || PyDict_SetItem(d, k, v) < 0) {
                Py_CLEAR(d);
            }
            Py_XDECREF(k);
            Py_XDECREF(v);
        }
        return d;
    }
    case V_OBJECT:
        return get_object(u, depth);
    case V_OBJECT_AGAIN:
        return get_again(u, u->objects);
    case V_EMPTY:
        return Py_NewRef(u->empty);
    default:
        PyErr_Format(PyExc_ValueError, "unpack_events: no value of code %d", (int)code);
        return NULL;
    }
}

/* The event of tag (its class's plan): span, record, keep and its fields; before: the
 * record of the event before (a new reference, replaced) */
static PyObject *
get_event(Unpacker *u, const slot_plan_t *plan, PyTypeObject *span_tp, PyTypeObject *event_tp,
          PyObject **before)
{
    unsigned char code;
    PyObject *parts[5] = {NULL}, *span = NULL, *rec = NULL, *obj = NULL;
    if (take(u, &code, 1) < 0) {
        return NULL;
    }
    if (code != V_TUPLE) {
        PyErr_SetString(PyExc_ValueError, "unpack_events: an event without its span");
        return NULL;
    }
    Py_ssize_t n;
    if (take_u32(u, &n) < 0) {
        return NULL;
    }
    if (n != 5) {
        PyErr_SetString(PyExc_ValueError, "unpack_events: a span not of five values");
        return NULL;
    }
    for (int i = 0; i < 5; i++) {
        if ((parts[i] = get_value(u, 1)) == NULL) {
            goto failed;
        }
    }
    span = named_tuple(span_tp, parts, 5);
    if (span == NULL || take(u, &code, 1) < 0) {
        goto failed;
    }
    if (code == REC_NONE) {
        rec = Py_NewRef(Py_None);
    }
    else if (code == REC_BEFORE) {
        if (*before == Py_None) {
            PyErr_SetString(PyExc_ValueError, "unpack_events: the record before, of none");
            goto failed;
        }
        rec = Py_NewRef(*before);
    }
    else if (code == REC_OWN) {
        unsigned char flags;
        PyObject *r[8] = {NULL};
        int ok = take(u, &flags, 1) == 0 && (r[0] = get_value(u, 1)) != NULL;
        /* (the span's: source, line, text, t) */
        ok = ok && (r[1] = flags & SAME_SOURCE ? Py_NewRef(parts[0]) : get_value(u, 1)) != NULL;
        ok = ok && (r[2] = flags & SAME_LINE ? Py_NewRef(parts[1]) : get_value(u, 1)) != NULL;
        ok = ok && (r[3] = flags & SAME_T ? Py_NewRef(parts[3]) : get_value(u, 1)) != NULL;
        ok = ok && (r[4] = flags & SAME_TEXT ? Py_NewRef(parts[2]) : get_value(u, 1)) != NULL;
        for (int i = 5; ok && i < 8; i++) {
            ok = (r[i] = get_value(u, 1)) != NULL;
        }
        if (ok) {
            rec = named_tuple(event_tp, r, 8);
        }
        for (int i = 0; i < 8; i++) {
            Py_XDECREF(r[i]);
        }
        if (rec == NULL) {
            goto failed;
        }
    }
    else {
        PyErr_SetString(PyExc_ValueError, "unpack_events: a record of no code");
        goto failed;
    }
    obj = plan->tp->tp_alloc(plan->tp, 0);
    if (obj == NULL) {
        goto failed;
    }
    Py_XSETREF(SLOT(obj, plan, 0), span);
    span = NULL;
    Py_XSETREF(SLOT(obj, plan, 1), Py_NewRef(rec));
    for (Py_ssize_t i = 2; i < plan->n; i++) {
        PyObject *v = get_value(u, 1);
        if (v == NULL) {
            goto failed;
        }
        Py_XSETREF(SLOT(obj, plan, i), v);
    }
    Py_SETREF(*before, rec);
    for (int i = 0; i < 5; i++) {
        Py_DECREF(parts[i]);
    }
    return obj;
failed:
    for (int i = 0; i < 5; i++) {
        Py_XDECREF(parts[i]);
    }
    Py_XDECREF(span);
    Py_XDECREF(rec);
    Py_XDECREF(obj);
    return NULL;
}

PyObject *
unpack_events(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 3 || !PyBytes_CheckExact(args[0]) || !PyTuple_CheckExact(args[2]) ||
        PyTuple_GET_SIZE(args[2]) != 7 || !PyTuple_CheckExact(PyTuple_GET_ITEM(args[2], 0)) ||
        !PyTuple_CheckExact(PyTuple_GET_ITEM(args[2], 1)) ||
        !PyType_Check(PyTuple_GET_ITEM(args[2], 2)) ||
        !PyType_Check(PyTuple_GET_ITEM(args[2], 3)) ||
        !PyDict_CheckExact(PyTuple_GET_ITEM(args[2], 5)) ||
        !PyCallable_Check(PyTuple_GET_ITEM(args[2], 6))) {
        PyErr_SetString(PyExc_TypeError,
                        "unpack_events(data, before, table): bytes and the table (classes, "
                        "values, span, event, empty, made, put)");
        return NULL;
    }
    PyObject *data = args[0], *table = args[2];
    PyObject *classes = PyTuple_GET_ITEM(table, 0);
    PyTypeObject *span_tp = (PyTypeObject *)PyTuple_GET_ITEM(table, 2);
    PyTypeObject *event_tp = (PyTypeObject *)PyTuple_GET_ITEM(table, 3);
    const unsigned char *at = (const unsigned char *)PyBytes_AS_STRING(data);
    Py_ssize_t size = PyBytes_GET_SIZE(data);
    if (size < 1 || at[0] != 'P') {
        PyErr_SetString(PyExc_ValueError, "unpack_events: not a packed batch");
        return NULL;
    }
    Unpacker u = {at + 1, at + size, PyList_New(0), PyList_New(0), PyTuple_GET_ITEM(table, 1),
                  PyTuple_GET_ITEM(table, 5), PyTuple_GET_ITEM(table, 6),
                  PyTuple_GET_ITEM(table, 4)};
    PyObject *out = PyList_New(0);
    PyObject *before = Py_NewRef(args[1]);
    Py_INCREF(data); /* (its bytes read throughout: held, whatever Python runs meanwhile) */
    int bad = u.strs == NULL || u.objects == NULL || out == NULL;
    while (!bad && u.at < u.end) {
        unsigned char code = *u.at++;
        PyObject *item = NULL;
        int pair = code == MARK_PAIR;
        if (pair) {
            if (u.at >= u.end) {
                cut_short();
                break;
            }
            code = *u.at++;
            pair = code < MARK_OTHER; /* (else: no event, refused below) */
            if (!pair) {
                code = 0xFF;
            }
        }
        if (code == MARK_OTHER) {
            item = get_value(&u, 0);
        }
        else if (code < PyTuple_GET_SIZE(classes)) {
            const slot_plan_t *plan = plan_in(PyTuple_GET_ITEM(classes, code), NULL);
            if (plan == NULL || plan->n < 3) {
                PyErr_SetString(PyExc_TypeError, "unpack_events: a class without its plan");
            }
            else {
                item = get_event(&u, plan, span_tp, event_tp, &before);
            }
            if (item != NULL && pair) {
                PyObject *second = get_value(&u, 0);
                PyObject *both = second != NULL ? PyTuple_Pack(2, item, second) : NULL;
                Py_XDECREF(second);
                Py_SETREF(item, both);
            }
        }
        else {
            PyErr_Format(PyExc_ValueError, "unpack_events: no item of code %d", (int)code);
        }
        bad = item == NULL || PyList_Append(out, item) < 0;
        Py_XDECREF(item);
    }
    bad = bad || PyErr_Occurred() != NULL; /* (a pair cut short) */
    Py_DECREF(data);
    Py_XDECREF(u.strs);
    Py_XDECREF(u.objects);
    if (bad) {
        Py_XDECREF(out);
        Py_DECREF(before);
        return NULL;
    }
    return Py_BuildValue("(NN)", out, before);
}
