/* The fields of a decoder's most frequent messages read in C (_native_fields.c), part of the
 * _native module. */
#ifndef RECOMPILE_DOCTOR_NATIVE_FIELDS_H
#define RECOMPILE_DOCTOR_NATIVE_FIELDS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* traced_fields(msg) -> (function, wrapper or None, seconds) | None (jax.traced_fields_py) */
PyObject *traced_fields(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
/* in_seconds(msg, prefix) -> (name, seconds) | None (jax.in_seconds_py) */
PyObject *in_seconds(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* shape_dims(text, fallback) -> the dimensions of text's first [...] of numbers | None
 * (reason_facts.shape_dims_py; text that is not ASCII: fallback(text)) */
PyObject *shape_dims(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* type_shape(text, fallback) -> (element type, dimensions, the rest, the dimensions one by
 * one) of an argument's type in HLO notation | None (rules.type_shape_py; text that is not
 * ASCII: fallback(text)) */
PyObject *type_shape(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* level_first(line, levels) -> (level, logger, message) of a line "LEVEL:logger:[lineno:[ ]]
 * message" | None (_pylog.level_first_py; levels: _pylog._LEVELS) */
PyObject *level_first(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

#endif
