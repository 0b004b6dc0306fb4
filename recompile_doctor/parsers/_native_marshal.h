/* marshal's bytes of plain values, written in C (_native_marshal.c), part of the _native
 * module. */
#ifndef RECOMPILE_DOCTOR_NATIVE_MARSHAL_H
#define RECOMPILE_DOCTOR_NATIVE_MARSHAL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* marshal_dumps(value, rows) -> bytes that marshal.loads reads back as it would read
 * marshal.dumps(value) (version 4): equal values of the same types, an object met twice
 * given back as one; None where that call would fail, or value holds what is not written
 * here (the caller then calls marshal.dumps).  rows true: value is a list of tuples, named
 * tuples among them, each written as the plain tuple of its items (the spool's rows). */
PyObject *marshal_dumps(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

#endif
