/* What the parts of the _native module share: the plans of slotted objects (_native.c's
 * slot_plan, make_slotted) and the named tuples tuple_new makes directly. */
#ifndef RECOMPILE_DOCTOR_NATIVE_SLOTS_H
#define RECOMPILE_DOCTOR_NATIVE_SLOTS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* the name of a plan's capsule */
extern const char *const NATIVE_PLAN;

/* a plan: the class and where in its objects each field's slot is */
typedef struct {
    PyTypeObject *tp; /* (a strong reference) */
    Py_ssize_t n;
    Py_ssize_t offsets[1]; /* (n of them) */
} slot_plan_t;

/* 1 when tuple.__new__(tp, items) makes a plain object of tp's tp_alloc with the items in
 * order (tuple, or a named tuple written in Python), 0 when not, -1 on an error */
int plain_tuple_class(PyTypeObject *tp);

/* A new object of the class tp (one plain_tuple_class takes) holding the n items */
PyObject *named_tuple(PyTypeObject *tp, PyObject *const *items, Py_ssize_t n);

#endif
