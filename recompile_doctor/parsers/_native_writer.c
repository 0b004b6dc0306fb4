/* What the C writers of bytes share: a buffer's growing, a table of objects by their
 * address (see _native_writer.h). */
#include "_native_writer.h"

#include <string.h>

int
buffer_grow(char **buf, Py_ssize_t *cap, Py_ssize_t len, Py_ssize_t n)
{
    if (n > PY_SSIZE_T_MAX / 2 - len) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t size = Py_MAX(*cap * 2, len + n);
    char *grown = PyMem_Realloc(*buf, (size_t)size);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *buf = grown;
    *cap = size;
    return 0;
}

static inline size_t
slot_of(PyObject *o, size_t mask)
{
    return (size_t)(((uintptr_t)o >> 4) * (uintptr_t)0x9E3779B97F4A7C15ULL >> 20) & mask;
}

int
seen_open(seen_table *t, seen_kept *kept, size_t first)
{
    t->used = 0;
    if (kept->entries != NULL) {
        t->entries = kept->entries;
        t->mask = kept->mask;
        kept->entries = NULL;
    }
    else {
        t->entries = PyMem_Calloc(first, sizeof(seen_entry));
        t->mask = first - 1;
        if (t->entries == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    if (++kept->stamp == 0) { /* (stamps came round: the table cleared once) */
        memset(t->entries, 0, (t->mask + 1) * sizeof(seen_entry));
        kept->stamp = 1;
    }
    t->stamp = kept->stamp;
    return 0;
}

void
seen_close(seen_table *t, seen_kept *kept, size_t most)
{
    if (t->entries != NULL && t->mask + 1 <= most && kept->entries == NULL) {
        kept->entries = t->entries;
        kept->mask = t->mask;
    }
    else {
        PyMem_Free(t->entries);
    }
    t->entries = NULL;
}

static int
seen_grow(seen_table *t)
{
    size_t size = (t->mask + 1) * 2;
    seen_entry *table = PyMem_Calloc(size, sizeof(seen_entry));
    if (table == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    size_t mask = size - 1;
    for (size_t i = 0; i <= t->mask; i++) {
        seen_entry *e = &t->entries[i];
        if (e->stamp == t->stamp) {
            size_t k = slot_of(e->key, mask);
            while (table[k].stamp == t->stamp) {
                k = (k + 1) & mask;
            }
            table[k] = *e;
        }
    }
    PyMem_Free(t->entries);
    t->entries = table;
    t->mask = mask;
    return 0;
}

int64_t
seen_number(seen_table *t, PyObject *o, int32_t number)
{
    size_t k = slot_of(o, t->mask);
    for (;;) {
        seen_entry *e = &t->entries[k];
        if (e->stamp != t->stamp) {
            break;
        }
        if (e->key == o) {
            return e->number;
        }
        k = (k + 1) & t->mask;
    }
    seen_entry *e = &t->entries[k];
    e->key = o;
    e->stamp = t->stamp;
    e->number = number;
    t->used++;
    if (t->used * 2 > t->mask + 1 && seen_grow(t) < 0) {
        return -2;
    }
    return -1;
}
