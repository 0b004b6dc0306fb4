/* The event codec of the log readers' workers in C (_native_codec.c), part of the _native
 * module. */
#ifndef RECOMPILE_DOCTOR_NATIVE_CODEC_H
#define RECOMPILE_DOCTOR_NATIVE_CODEC_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* codec_encode(ev, before, table) -> _event_codec.encode_py(ev, before); table: (classes,
 * encoded, enc, whole), see _native_codec.c */
PyObject *codec_encode(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
/* codec_decode(item, before, table) -> _event_codec.decode_py(item, before); table:
 * (classes, span, event, values, made, empty, dec, whole) */
PyObject *codec_decode(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

#endif
