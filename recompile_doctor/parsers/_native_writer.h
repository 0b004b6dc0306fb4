/* What the C writers of bytes share (_native_marshal.c, _native_pack.c, _native_json.c),
 * part of the _native module: a buffer's growing, and a table of objects by their address
 * for those that write an object met again as its number.
 *
 * The table: open addressing by address; an entry lives while its stamp is the call's, so a writer
 * keeps its table from one call to the next without clearing it (seen_open, seen_close).
 * The objects must stay alive while a call numbers them (no other object may take an
 * address met before). */
#ifndef RECOMPILE_DOCTOR_NATIVE_WRITER_H
#define RECOMPILE_DOCTOR_NATIVE_WRITER_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* Room for n more bytes in the buffer *buf of *cap bytes, len of them used: grown to twice
 * its size at least (realloc'd); 0, or -1 with MemoryError.  (Each writer asks first whether
 * it has the room: buffer_grow only when it has not.) */
int buffer_grow(char **buf, Py_ssize_t *cap, Py_ssize_t len, Py_ssize_t n);

typedef struct {
    PyObject *key;
    uint32_t stamp; /* the call it was numbered in (0: never) */
    int32_t number;
} seen_entry;

typedef struct {
    seen_entry *entries;
    size_t mask;    /* the table's size less one (a power of two) */
    size_t used;    /* its live entries */
    uint32_t stamp; /* the call's */
} seen_table;

/* what a writer keeps of its table between calls */
typedef struct {
    seen_entry *entries;
    size_t mask;
    uint32_t stamp;
} seen_kept;

/* The table for a call: the one kept (taken from kept), else a new one of first entries (a
 * power of two); 0, or -1 with MemoryError */
int seen_open(seen_table *t, seen_kept *kept, size_t first);

/* The call's table kept for the next one when it has at most most entries, else freed */
void seen_close(seen_table *t, seen_kept *kept, size_t most);

/* o's number when it was numbered in this call (>= 0); else -1, and o numbered now as
 * number; -2 with MemoryError */
int64_t seen_number(seen_table *t, PyObject *o, int32_t number);

#endif
