/* The JSON text of a report's values in C (_native_json.c), part of the _native module. */
#ifndef RECOMPILE_DOCTOR_NATIVE_JSON_H
#define RECOMPILE_DOCTOR_NATIVE_JSON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* json_value(o, level, step, fallback) -> json_text._text_py(o, level, step) */
PyObject *json_value(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
/* json_fields(pieces, values, level, step, fallback) -> pieces[0] + text of values[0] +
 * pieces[1] + ... + pieces[-1], each value's text that of json_value at level */
PyObject *json_fields(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* json_chunk(data, pieces, level, step, heads) -> the UTF-8 text of the events of a spooled
 * chunk (timeline/spool.py: b"M" and marshal's bytes of their rows), each led by heads[0]
 * (the first) or heads[1], its values at level between the pieces; None when the chunk holds
 * a value not written here (the caller writes its rows) */
PyObject *json_chunk(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* json_splice(text, start, cuts, j0, j1, i0, count, codes, causes) -> text with the causes
 * of the compilations of cuts[j0:j1] put in their places (json_text.spliced) */
PyObject *json_splice(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

/* json_rows_apart(rows, ahead, behind, at, level, step, fallback, heads, first, pos, piece)
 * -> (text, cuts, done): the UTF-8 text of a batch of rows with each row's value at `at`
 * left out, where each goes, and how many rows it holds (json_text.apart_pieces) */
PyObject *json_rows_apart(PyObject *module, PyObject *const *args, Py_ssize_t nargs);

#endif
