/* A worker's batch of events packed into bytes and back (_native_pack.c), part of the
 * _native module. */
#ifndef RECOMPILE_DOCTOR_NATIVE_PACK_H
#define RECOMPILE_DOCTOR_NATIVE_PACK_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* pack_events(items, before, table) -> (bytes, last record), or None when an item is not
 * packed here; table: (classes, values, span, event, empty), see _native_pack.c */
PyObject *pack_events(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
/* unpack_events(data, before, table) -> (items, last record); table: (classes, values,
 * span, event, empty, made, put) */
PyObject *unpack_events(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

#endif
