/* The event codec of the log readers' workers, in C: the twin of _event_codec.py's
 * encode_py and decode_py (an event as the plain values marshal writes, and back).
 *
 * A worker encodes every event it hands to the parent, the parent decodes each of them, and
 * the timeline packs its lookups, reasons and notes the same way and unpacks them for the
 * analyses: on a 24 MB JAX log read by two processes, some 8,000 instructions an event
 * compiled from Python, a fifth of the reading.  Here an event's slots are read, and a
 * decoded event's set, through the plan of its class (_native.c's slot_plan), and its
 * values walked in C.
 *
 * Only what the Python does in the common case is done here: the exact plain types, lists,
 * tuples and dicts, and the value objects (compile keys, value changes), kept in the
 * codec's tables of those encoded or made lately, each put there by its bounded table's
 * put (bounded.Kept.put: the one rule of what is kept).  Anything else -- the shared empty
 * detail, a value the codec does not know, an item of an unexpected shape -- goes to the
 * Python function this replaces (a value to the codec's _enc or _dec, a whole event to
 * encode_py or decode_py before anything is made), whose answer or error is then this
 * one's.  The tests hold both functions here to the Python, item for item and error for
 * error.
 *
 * An event's slots and an item's parts are held from the moment they are read: Python may
 * run before they are used (a collection when an object is allocated, a dict key's hash,
 * the Python twin), and could set or delete a slot or empty the item meanwhile.  An event
 * or item so changed while it is coded gives an answer of the values read before and
 * after, or an error: never a crash (a test deletes the slots from a key's hash).
 */
#include "_native_codec.h"

#include "_native_slots.h"

/* the tags of _event_codec.py */
#define TAG_LIST 0
#define TAG_TUPLE 1
#define TAG_DICT 2
#define TAG_EMPTY 3

/* type(v) in _event_codec.PLAIN_TYPES */
static int
is_plain(PyObject *v)
{
    PyTypeObject *t = Py_TYPE(v);
    return t == &PyUnicode_Type || t == &PyLong_Type || t == &PyFloat_Type ||
           t == &PyBool_Type || t == &PyBytes_Type || v == Py_None;
}

/* A new list of n + 1 items, the first the int tag, the others to be set */
static PyObject *
tagged(long tag, Py_ssize_t n)
{
    PyObject *out = PyList_New(n + 1);
    if (out == NULL) {
        return NULL;
    }
    PyObject *t = PyLong_FromLong(tag);
    if (t == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    PyList_SET_ITEM(out, 0, t);
    return out;
}

/* put(key, value, measure): value put under key by its table's bounded.Kept.put (which may
 * not keep it; measure: what its characters are counted of, NULL for the key); 0, or -1 on
 * an error */
static int
kept(PyObject *put, PyObject *key, PyObject *value, PyObject *measure)
{
    PyObject *got =
        PyObject_CallFunctionObjArgs(put, key, value, measure ? measure : Py_None, NULL);
    if (got == NULL) {
        return -1;
    }
    Py_DECREF(got);
    return 0;
}

/* A new tuple of the n slots of obj by the plan, or NULL with no error when one is unset */
static PyObject *
slot_values(PyObject *obj, const slot_plan_t *plan)
{
    PyObject *t = PyTuple_New(plan->n);
    if (t == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < plan->n; i++) {
        PyObject *v = *(PyObject **)((char *)obj + plan->offsets[i]);
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, Py_NewRef(v));
    }
    return t;
}

/* The plan of a (tag, plan) or (class, plan) pair of a table, or NULL with an error */
static slot_plan_t *
pair_plan(PyObject *pair, const char *what, Py_ssize_t least)
{
    slot_plan_t *plan = NULL;
    if (PyTuple_CheckExact(pair) && PyTuple_GET_SIZE(pair) == 2) {
        plan = (slot_plan_t *)PyCapsule_GetPointer(PyTuple_GET_ITEM(pair, 1), NATIVE_PLAN);
    }
    if (plan == NULL || plan->n < least) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: a class's entry is not a pair with a plan", what);
        return NULL;
    }
    return plan;
}

/* -- encoding ---------------------------------------------------------------------------- */

typedef struct {
    PyObject *values;  /* {value class: (tag, plan)} */
    PyObject *encoded; /* _event_codec._ENCODED: id -> (value object, its encoding) */
    PyObject *put;     /* what puts an entry there: _ENCODED_KEPT.put */
    PyObject *enc;     /* _event_codec._enc */
} enc_ctx;

static PyObject *enc(PyObject *v, const enc_ctx *c);

/* [TAG_LIST or TAG_TUPLE, enc(x) for x in items[at:]], the items read as they are when
 * each is reached (a list's length read again each time, as Python's iteration does) */
static PyObject *
enc_items(long tag, PyObject *seq, const enc_ctx *c)
{
    PyObject *out = tagged(tag, 0);
    if (out == NULL) {
        return NULL;
    }
    int is_list = PyList_CheckExact(seq);
    for (Py_ssize_t i = 0; i < (is_list ? PyList_GET_SIZE(seq) : PyTuple_GET_SIZE(seq)); i++) {
        PyObject *x = Py_NewRef(is_list ? PyList_GET_ITEM(seq, i) : PyTuple_GET_ITEM(seq, i));
        PyObject *e = enc(x, c);
        Py_DECREF(x);
        if (e == NULL || PyList_Append(out, e) < 0) {
            Py_XDECREF(e);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(e);
    }
    return out;
}

/* [TAG_DICT, {k: enc(x)}] of a dict holding a value that is not plain (its items taken
 * first: the Python walks a view of the dict, which nothing here changes) */
static PyObject *
enc_dict(PyObject *d, const enc_ctx *c)
{
    PyObject *items = PyDict_Items(d);
    if (items == NULL) {
        return NULL;
    }
    PyObject *inner = PyDict_New();
    PyObject *out = inner != NULL ? tagged(TAG_DICT, 1) : NULL;
    if (out == NULL) {
        Py_XDECREF(inner);
        Py_DECREF(items);
        return NULL;
    }
    PyList_SET_ITEM(out, 1, inner);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *kv = PyList_GET_ITEM(items, i);
        PyObject *e = enc(PyTuple_GET_ITEM(kv, 1), c);
        if (e == NULL || PyDict_SetItem(inner, PyTuple_GET_ITEM(kv, 0), e) < 0) {
            Py_XDECREF(e);
            Py_DECREF(out);
            Py_DECREF(items);
            return NULL;
        }
        Py_DECREF(e);
    }
    Py_DECREF(items);
    return out;
}

/* The encoding of the value object v of the plan: [tag, its fields] (each encoded unless
 * all are plain), kept under id(v) as the Python keeps it, or NULL with no error when a
 * slot is unset */
static PyObject *
enc_value(PyObject *v, PyObject *key, PyObject *tag, const slot_plan_t *plan, const enc_ctx *c)
{
    PyObject *fields = slot_values(v, plan);
    if (fields == NULL) {
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(fields), i = 0;
    while (i < n && is_plain(PyTuple_GET_ITEM(fields, i))) {
        i++;
    }
    if (i < n) {
        if (Py_EnterRecursiveCall(" in the event codec")) {
            Py_DECREF(fields);
            return NULL;
        }
        PyObject *encoded = PyTuple_New(n);
        for (i = 0; encoded != NULL && i < n; i++) {
            PyObject *e = enc(PyTuple_GET_ITEM(fields, i), c);
            if (e == NULL) {
                Py_CLEAR(encoded);
            }
            else {
                PyTuple_SET_ITEM(encoded, i, e);
            }
        }
        Py_LeaveRecursiveCall();
        Py_SETREF(fields, encoded);
        if (fields == NULL) {
            return NULL;
        }
    }
    PyObject *out = PyList_New(2);
    if (out == NULL) {
        Py_DECREF(fields);
        return NULL;
    }
    PyList_SET_ITEM(out, 0, Py_NewRef(tag));
    PyList_SET_ITEM(out, 1, fields);
    /* (holding v: its id is not another's meanwhile) */
    PyObject *entry = PyTuple_Pack(2, v, out);
    if (entry == NULL || kept(c->put, key, entry, out) < 0) {
        Py_XDECREF(entry);
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(entry);
    return out;
}

/* The encoding of a value object (a compile key, a value change): the one kept for it, or
 * made (a new reference); NULL with no error when v is not one (or a slot of it is unset),
 * or with an error */
static PyObject *
enc_known(PyObject *v, const enc_ctx *c)
{
    PyObject *pair = PyDict_GetItemWithError(c->values, (PyObject *)Py_TYPE(v));
    if (pair == NULL) {
        return NULL;
    }
    slot_plan_t *plan = pair_plan(pair, "codec_encode", 0);
    if (plan == NULL) {
        return NULL;
    }
    if (plan->tp != Py_TYPE(v) || !PyLong_CheckExact(PyTuple_GET_ITEM(pair, 0))) {
        return NULL; /* (its slots are not where the plan says: the Python's) */
    }
    PyObject *key = PyLong_FromVoidPtr(v);
    if (key == NULL) {
        return NULL;
    }
    PyObject *got = PyDict_GetItemWithError(c->encoded, key);
    PyObject *out = NULL;
    if (got != NULL && PyTuple_CheckExact(got) && PyTuple_GET_SIZE(got) == 2 &&
        PyTuple_GET_ITEM(got, 0) == v) {
        out = Py_NewRef(PyTuple_GET_ITEM(got, 1));
    }
    else if (!PyErr_Occurred()) {
        out = enc_value(v, key, PyTuple_GET_ITEM(pair, 0), plan, c);
    }
    Py_DECREF(key);
    return out;
}

/* _event_codec._enc(v) */
static PyObject *
enc(PyObject *v, const enc_ctx *c)
{
    if (is_plain(v)) {
        return Py_NewRef(v);
    }
    PyObject *out = NULL;
    if (PyDict_CheckExact(v)) {
        Py_ssize_t pos = 0;
        PyObject *key, *x;
        int plain = 1;
        while (plain && PyDict_Next(v, &pos, &key, &x)) {
            plain = is_plain(x);
        }
        if (plain) {
            return Py_NewRef(v);
        }
        if (Py_EnterRecursiveCall(" in the event codec")) {
            return NULL;
        }
        out = enc_dict(v, c);
    }
    else if (PyTuple_CheckExact(v) || PyList_CheckExact(v)) {
        int is_tuple = PyTuple_CheckExact(v);
        if (is_tuple) {
            Py_ssize_t i = 0, n = PyTuple_GET_SIZE(v);
            while (i < n && is_plain(PyTuple_GET_ITEM(v, i))) {
                i++;
            }
            if (i == n) {
                return Py_NewRef(v); /* (a tuple of plain values: as it is) */
            }
        }
        if (Py_EnterRecursiveCall(" in the event codec")) {
            return NULL;
        }
        out = enc_items(is_tuple ? TAG_TUPLE : TAG_LIST, v, c);
    }
    else {
        out = enc_known(v, c);
        if (out != NULL || PyErr_Occurred()) {
            return out;
        }
        return PyObject_CallOneArg(c->enc, v); /* (the empty detail, unknown) */
    }
    Py_LeaveRecursiveCall();
    return out;
}

/* The table of codec_encode: (classes: {class: (tag, plan)}, values: {value class: (tag,
 * plan)}, encoded: _ENCODED, put: _ENCODED_KEPT.put, enc: _enc, whole: encode_py) */
static int
enc_table(PyObject *table, PyObject **classes, enc_ctx *c, PyObject **whole)
{
    if (!PyTuple_CheckExact(table) || PyTuple_GET_SIZE(table) != 6 ||
        !PyDict_CheckExact(PyTuple_GET_ITEM(table, 0)) ||
        !PyDict_CheckExact(PyTuple_GET_ITEM(table, 1)) ||
        !PyDict_CheckExact(PyTuple_GET_ITEM(table, 2)) ||
        !PyCallable_Check(PyTuple_GET_ITEM(table, 3)) ||
        !PyCallable_Check(PyTuple_GET_ITEM(table, 4)) ||
        !PyCallable_Check(PyTuple_GET_ITEM(table, 5))) {
        PyErr_SetString(PyExc_TypeError, "codec_encode(ev, before, table): table is (classes, "
                                         "values, encoded, put, enc, whole)");
        return -1;
    }
    *classes = PyTuple_GET_ITEM(table, 0);
    c->values = PyTuple_GET_ITEM(table, 1);
    c->encoded = PyTuple_GET_ITEM(table, 2);
    c->put = PyTuple_GET_ITEM(table, 3);
    c->enc = PyTuple_GET_ITEM(table, 4);
    *whole = PyTuple_GET_ITEM(table, 5);
    return 0;
}

#define SLOT(obj, plan, i) (*(PyObject **)((char *)(obj) + (plan)->offsets[i]))

PyObject *
codec_encode(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    PyObject *classes, *whole;
    enc_ctx c;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "codec_encode(ev, before, table): three arguments");
        return NULL;
    }
    if (enc_table(args[2], &classes, &c, &whole) < 0) {
        return NULL;
    }
    PyObject *ev = args[0], *before = args[1];
    PyObject *pair = PyDict_GetItemWithError(classes, (PyObject *)Py_TYPE(ev));
    if (pair == NULL) {
        return PyErr_Occurred() ? NULL : PyObject_Vectorcall(whole, args, 2, NULL);
    }
    slot_plan_t *plan = pair_plan(pair, "codec_encode", 3);
    if (plan == NULL) {
        return NULL;
    }
    PyObject *tag = PyTuple_GET_ITEM(pair, 0);
    /* the shape checked before anything is made: else the Python says what is wrong */
    int ok = plan->tp == Py_TYPE(ev) && PyLong_CheckExact(tag);
    for (Py_ssize_t i = 0; ok && i < plan->n; i++) {
        ok = SLOT(ev, plan, i) != NULL;
    }
    PyObject *span = ok ? SLOT(ev, plan, 0) : NULL, *rec = ok ? SLOT(ev, plan, 1) : NULL;
    if (!ok || !PyTuple_Check(span) ||
        !(rec == Py_None || rec == before || (PyTuple_Check(rec) && PyTuple_GET_SIZE(rec) == 8))) {
        return PyObject_Vectorcall(whole, args, 2, NULL);
    }
    /* (the slots' values held from here: an allocation's collection or an _enc may run
     * Python, and a slot could be set anew meanwhile) */
    PyObject *held[3] = {Py_NewRef(span), Py_NewRef(rec), Py_NewRef(SLOT(ev, plan, 2))};
    PyObject *out = PyList_New(plan->n + 1);
    PyObject *r = NULL;
    if (out == NULL) {
        goto failed;
    }
    PyList_SET_ITEM(out, 0, Py_NewRef(tag));
    /* (tuple(span): the span itself when it is a tuple, else a copy of its items) */
    PyObject *s = PyTuple_CheckExact(span) ? Py_NewRef(span)
                                           : PyTuple_GetSlice(span, 0, PyTuple_GET_SIZE(span));
    if (s == NULL) {
        goto failed;
    }
    PyList_SET_ITEM(out, 1, s);
    if (rec == Py_None) {
        r = Py_NewRef(Py_None);
    }
    else if (rec == before) {
        r = PyLong_FromLong(0); /* (_SAME_RECORD) */
    }
    else {
        r = PyTuple_New(8);
        if (r != NULL) {
            for (Py_ssize_t i = 0; i < 7; i++) {
                PyTuple_SET_ITEM(r, i, Py_NewRef(PyTuple_GET_ITEM(rec, i)));
            }
            PyObject *detail = enc(PyTuple_GET_ITEM(rec, 7), &c);
            if (detail == NULL) {
                Py_CLEAR(r);
            }
            else {
                PyTuple_SET_ITEM(r, 7, detail);
            }
        }
    }
    if (r == NULL) {
        goto failed;
    }
    PyList_SET_ITEM(out, 2, r);
    PyList_SET_ITEM(out, 3, Py_NewRef(held[2]));
    for (Py_ssize_t i = 3; i < plan->n; i++) {
        PyObject *v = Py_XNewRef(SLOT(ev, plan, i));
        PyObject *e = v != NULL ? enc(v, &c) : NULL;
        Py_XDECREF(v);
        if (e == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_AttributeError, "codec_encode: a slot was emptied");
            }
            goto failed;
        }
        PyList_SET_ITEM(out, i + 1, e);
    }
    for (int k = 0; k < 3; k++) {
        Py_DECREF(held[k]);
    }
    return out;
failed:
    for (int k = 0; k < 3; k++) {
        Py_DECREF(held[k]);
    }
    Py_XDECREF(out);
    return NULL;
}

/* -- decoding ---------------------------------------------------------------------------- */

typedef struct {
    PyObject *values; /* ((value class, plan), ...): tag -1, -2, ... */
    PyObject *made;   /* _event_codec._MADE: encoded fields -> value object */
    PyObject *put;    /* what puts an entry there: _MADE_KEPT.put */
    PyObject *empty;  /* the shared empty detail */
    PyObject *dec;    /* _event_codec._dec */
} dec_ctx;

static PyObject *dec(PyObject *v, const dec_ctx *c);

/* The value object of the item v ([tag, fields], tag below 0): the one made lately from
 * these fields, or made now from them decoded and kept as the Python keeps it (a new
 * reference); NULL with no error when the Python makes it (fields of another shape, or
 * holding a list: not kept), or with an error */
static PyObject *
dec_value(PyObject *v, long tag, const dec_ctx *c)
{
    Py_ssize_t k = -1 - (Py_ssize_t)tag;
    if (PyList_GET_SIZE(v) < 2 || k >= PyTuple_GET_SIZE(c->values)) {
        return NULL;
    }
    slot_plan_t *plan = pair_plan(PyTuple_GET_ITEM(c->values, k), "codec_decode", 0);
    if (plan == NULL) {
        return NULL;
    }
    PyObject *fields = PyList_GET_ITEM(v, 1);
    PyObject *got = PyDict_GetItemWithError(c->made, fields);
    if (got == NULL && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear(); /* (a field holding a list: the Python makes it, not kept) */
        }
        return NULL;
    }
    if (got != NULL && Py_TYPE(got) == plan->tp) {
        return Py_NewRef(got);
    }
    if (!PyTuple_CheckExact(fields) || PyTuple_GET_SIZE(fields) != plan->n) {
        return NULL; /* (the Python says what is wrong) */
    }
    PyTypeObject *tp = plan->tp;
    Py_INCREF(fields); /* (held while Python may run: a _dec of a field) */
    PyObject *obj = tp->tp_alloc(tp, 0);
    for (Py_ssize_t i = 0; obj != NULL && i < plan->n; i++) {
        PyObject *x = dec(PyTuple_GET_ITEM(fields, i), c);
        if (x == NULL) {
            Py_CLEAR(obj);
        }
        else {
            Py_XSETREF(*(PyObject **)((char *)obj + plan->offsets[i]), x);
        }
    }
    if (obj != NULL && kept(c->put, fields, obj, NULL) < 0) {
        Py_CLEAR(obj);
    }
    Py_DECREF(fields);
    return obj;
}

/* dec(x) for each item of the list v from its second on, into a new list or tuple */
static PyObject *
dec_items(PyObject *v, int as_tuple, const dec_ctx *c)
{
    Py_ssize_t n = PyList_GET_SIZE(v) - 1;
    PyObject *out = as_tuple ? PyTuple_New(n) : PyList_New(n);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        /* (v is the caller's list: a _dec run may not change it, but it is read again) */
        PyObject *x = i + 1 < PyList_GET_SIZE(v) ? Py_NewRef(PyList_GET_ITEM(v, i + 1)) : NULL;
        PyObject *d = x != NULL ? dec(x, c) : NULL;
        Py_XDECREF(x);
        if (d == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_ValueError, "codec_decode: a list was cut short");
            }
            Py_DECREF(out);
            return NULL;
        }
        if (as_tuple) {
            PyTuple_SET_ITEM(out, i, d);
        }
        else {
            PyList_SET_ITEM(out, i, d);
        }
    }
    return out;
}

/* {k: dec(x)} of the dict d */
static PyObject *
dec_dict(PyObject *d, const dec_ctx *c)
{
    PyObject *out = PyDict_New();
    if (out == NULL) {
        return NULL;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *x;
    while (PyDict_Next(d, &pos, &key, &x)) {
        Py_INCREF(key);
        Py_INCREF(x);
        PyObject *got = dec(x, c);
        int bad = got == NULL || PyDict_SetItem(out, key, got) < 0;
        Py_XDECREF(got);
        Py_DECREF(x);
        Py_DECREF(key);
        if (bad) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return out;
}

/* _event_codec._dec(v) */
static PyObject *
dec(PyObject *v, const dec_ctx *c)
{
    if (!PyList_CheckExact(v)) {
        return Py_NewRef(v);
    }
    long tag = -1000;
    if (PyList_GET_SIZE(v) > 0 && PyLong_CheckExact(PyList_GET_ITEM(v, 0))) {
        int overflow;
        tag = PyLong_AsLongAndOverflow(PyList_GET_ITEM(v, 0), &overflow);
        if (overflow) {
            tag = -1000;
        }
    }
    PyObject *out = NULL;
    if (tag == TAG_LIST || tag == TAG_TUPLE ||
        (tag == TAG_DICT && PyList_GET_SIZE(v) >= 2 &&
         PyDict_CheckExact(PyList_GET_ITEM(v, 1)))) {
        if (Py_EnterRecursiveCall(" in the event codec")) {
            return NULL;
        }
        out = tag == TAG_DICT ? dec_dict(PyList_GET_ITEM(v, 1), c)
                              : dec_items(v, tag == TAG_TUPLE, c);
        Py_LeaveRecursiveCall();
        return out;
    }
    if (tag == TAG_EMPTY) {
        return Py_NewRef(c->empty);
    }
    if (tag < 0 && tag > -1000) {
        out = dec_value(v, tag, c);
        if (out != NULL || PyErr_Occurred()) {
            return out;
        }
    }
    return PyObject_CallOneArg(c->dec, v); /* (not a shape known here) */
}

/* plain_tuple_class(tp), the classes found plain kept (and held: no other class takes the
 * place of one) for the calls to come: a span's and a record's, asked twice an event */
#define PLAIN_SEEN 4
static PyTypeObject *plain_seen[PLAIN_SEEN];

static int
plain_named_tuple(PyTypeObject *tp)
{
    for (int i = 0; i < PLAIN_SEEN && plain_seen[i] != NULL; i++) {
        if (plain_seen[i] == tp) {
            return 1;
        }
    }
    int plain = plain_tuple_class(tp);
    if (plain == 1) {
        int i = 0;
        while (i < PLAIN_SEEN - 1 && plain_seen[i] != NULL) {
            i++;
        }
        Py_XSETREF(plain_seen[i], (PyTypeObject *)Py_NewRef(tp));
    }
    return plain;
}

/* The record of a decoded event: None, before (_SAME_RECORD), or the Event of the tuple r
 * of eight values, its detail decoded when it is a list */
static PyObject *
decoded_record(PyObject *r, PyObject *before, PyTypeObject *event_tp, const dec_ctx *c)
{
    if (r == Py_None) {
        return Py_NewRef(Py_None);
    }
    if (PyLong_CheckExact(r)) {
        return Py_NewRef(before);
    }
    if (!PyList_CheckExact(PyTuple_GET_ITEM(r, 7))) {
        return named_tuple(event_tp, &PyTuple_GET_ITEM(r, 0), 8);
    }
    PyObject *detail = dec(PyTuple_GET_ITEM(r, 7), c);
    if (detail == NULL) {
        return NULL;
    }
    PyObject *fields[8];
    for (Py_ssize_t i = 0; i < 7; i++) {
        fields[i] = PyTuple_GET_ITEM(r, i);
    }
    fields[7] = detail;
    PyObject *rec = named_tuple(event_tp, fields, 8);
    Py_DECREF(detail);
    return rec;
}

PyObject *
codec_decode(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "codec_decode(item, before, table): three arguments");
        return NULL;
    }
    PyObject *table = args[2];
    if (!PyTuple_CheckExact(table) || PyTuple_GET_SIZE(table) != 9 ||
        !PyTuple_CheckExact(PyTuple_GET_ITEM(table, 0)) ||
        !PyType_Check(PyTuple_GET_ITEM(table, 1)) || !PyType_Check(PyTuple_GET_ITEM(table, 2)) ||
        !PyTuple_CheckExact(PyTuple_GET_ITEM(table, 3)) ||
        !PyDict_CheckExact(PyTuple_GET_ITEM(table, 4)) ||
        !PyCallable_Check(PyTuple_GET_ITEM(table, 5)) ||
        !PyCallable_Check(PyTuple_GET_ITEM(table, 7)) ||
        !PyCallable_Check(PyTuple_GET_ITEM(table, 8))) {
        PyErr_SetString(PyExc_TypeError, "codec_decode(item, before, table): table is (classes, "
                                         "span, event, values, made, put, empty, dec, whole)");
        return NULL;
    }
    PyObject *classes = PyTuple_GET_ITEM(table, 0), *whole = PyTuple_GET_ITEM(table, 8);
    PyTypeObject *span_tp = (PyTypeObject *)PyTuple_GET_ITEM(table, 1);
    PyTypeObject *event_tp = (PyTypeObject *)PyTuple_GET_ITEM(table, 2);
    dec_ctx c = {PyTuple_GET_ITEM(table, 3), PyTuple_GET_ITEM(table, 4), PyTuple_GET_ITEM(table, 5),
                 PyTuple_GET_ITEM(table, 6), PyTuple_GET_ITEM(table, 7)};
    PyObject *item = args[0], *before = args[1];
    /* the shape checked before anything is made: else the Python says what is wrong */
    Py_ssize_t tag = -1;
    if (PyList_CheckExact(item) && PyList_GET_SIZE(item) >= 4 &&
        PyLong_CheckExact(PyList_GET_ITEM(item, 0))) {
        tag = PyLong_AsSsize_t(PyList_GET_ITEM(item, 0));
        if (tag == -1 && PyErr_Occurred()) {
            PyErr_Clear();
        }
    }
    if (tag < 0 || tag >= PyTuple_GET_SIZE(classes)) {
        return PyObject_Vectorcall(whole, args, 2, NULL);
    }
    slot_plan_t *plan = pair_plan(PyTuple_GET_ITEM(classes, tag), "codec_decode", 3);
    if (plan == NULL) {
        return NULL;
    }
    int plain_span = plain_named_tuple(span_tp), plain_event = plain_named_tuple(event_tp);
    if (plain_span < 0 || plain_event < 0) {
        return NULL;
    }
    if (PyList_GET_SIZE(item) != plan->n + 1) {
        return PyObject_Vectorcall(whole, args, 2, NULL);
    }
    PyObject *span = PyList_GET_ITEM(item, 1), *r = PyList_GET_ITEM(item, 2);
    if (!plain_span || !PyTuple_CheckExact(span) ||
        !(r == Py_None || PyLong_CheckExact(r) ||
          (plain_event && PyTuple_CheckExact(r) && PyTuple_GET_SIZE(r) == 8))) {
        return PyObject_Vectorcall(whole, args, 2, NULL);
    }
    /* (the item's parts held from here: a _dec of a value or an allocation's collection
     * may run Python) */
    PyObject *keep = Py_NewRef(PyList_GET_ITEM(item, 3));
    Py_INCREF(span);
    Py_INCREF(r);
    PyObject *rec = decoded_record(r, before, event_tp, &c);
    Py_DECREF(r);
    PyObject *sp = rec != NULL ? named_tuple(span_tp, &PyTuple_GET_ITEM(span, 0),
                                             PyTuple_GET_SIZE(span))
                               : NULL;
    Py_DECREF(span);
    PyTypeObject *tp = plan->tp;
    PyObject *obj = sp != NULL ? tp->tp_alloc(tp, 0) : NULL;
    if (obj == NULL) {
        Py_XDECREF(sp);
        Py_XDECREF(rec);
        Py_DECREF(keep);
        return NULL;
    }
    Py_XSETREF(SLOT(obj, plan, 0), sp);
    Py_XSETREF(SLOT(obj, plan, 1), rec);
    Py_XSETREF(SLOT(obj, plan, 2), keep);
    for (Py_ssize_t i = 3; i < plan->n; i++) {
        /* (the item is the caller's: a _dec run may not change it, but it is read again) */
        PyObject *x = i + 1 < PyList_GET_SIZE(item) ? Py_NewRef(PyList_GET_ITEM(item, i + 1))
                                                    : NULL;
        PyObject *v = x != NULL ? dec(x, &c) : NULL;
        Py_XDECREF(x);
        if (v == NULL) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_ValueError, "codec_decode: the item was cut short");
            }
            Py_DECREF(obj);
            return NULL;
        }
        Py_XSETREF(SLOT(obj, plan, i), v);
    }
    return obj;
}
