/* Optional C encoder of the change log's parts (keyspace._changes is the reference).
 *
 *   encode_part(now, keys, values) -> bytes
 *
 * A part: u64le now, u32le len(keys), u32le len(values), the size of each key
 * (u32le), the size of each value (u32le), the keys, the values. The first
 * len(values) keys are puts of the values in order, the rest deletes. keys and
 * values are lists of bytes; one pass measures them, one bytes object is made
 * and filled: no Python object per entry (the reference joins about 2n + 3).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static void
put_le(char *at, uint64_t value, int width)
{
    for (int i = 0; i < width; i++) {
        at[i] = (char)(value >> (8 * i));
    }
}

/* The total size of the bytes of ``items`` (a list), or -1 with TypeError set
 * (an item that is not bytes) or OverflowError (one over 4 GiB, or a total
 * past PY_SSIZE_T_MAX). */
static Py_ssize_t
measure(PyObject *items, const char *what)
{
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        if (!PyBytes_Check(item)) {
            PyErr_Format(PyExc_TypeError, "encode_part: %s[%zd] is %.100s, not bytes", what, i,
                         Py_TYPE(item)->tp_name);
            return -1;
        }
        Py_ssize_t size = PyBytes_GET_SIZE(item);
        if ((uint64_t)size > UINT32_MAX || size > PY_SSIZE_T_MAX - total - 4) {
            PyErr_Format(PyExc_OverflowError, "encode_part: %s[%zd] of %zd bytes is over the limit", what, i,
                         size);
            return -1;
        }
        total += size + 4; /* its bytes and its size */
    }
    return total;
}

static PyObject *
encode_part(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyList_Check(args[1]) || !PyList_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "encode_part(now: int, keys: list[bytes], values: list[bytes])");
        return NULL;
    }
    unsigned long long now = PyLong_AsUnsignedLongLong(args[0]);
    if (now == (unsigned long long)-1 && PyErr_Occurred()) {
        return NULL;
    }
    PyObject *keys = args[1], *values = args[2];
    Py_ssize_t nkeys = PyList_GET_SIZE(keys), nvalues = PyList_GET_SIZE(values);
    if ((uint64_t)nkeys > UINT32_MAX || (uint64_t)nvalues > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "encode_part: more than 2**32 - 1 entries");
        return NULL;
    }
    Py_ssize_t key_bytes = measure(keys, "keys");
    if (key_bytes < 0) {
        return NULL;
    }
    Py_ssize_t value_bytes = measure(values, "values");
    if (value_bytes < 0) {
        return NULL;
    }
    if (key_bytes > PY_SSIZE_T_MAX - 16 - value_bytes) {
        PyErr_SetString(PyExc_OverflowError, "encode_part: the part is over the limit");
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, 16 + key_bytes + value_bytes);
    if (out == NULL) {
        return NULL;
    }
    char *at = PyBytes_AS_STRING(out);
    put_le(at, (uint64_t)now, 8);
    put_le(at + 8, (uint64_t)nkeys, 4);
    put_le(at + 12, (uint64_t)nvalues, 4);
    char *size = at + 16;
    char *data = size + 4 * (nkeys + nvalues);
    PyObject *lists[2] = {keys, values};
    for (int l = 0; l < 2; l++) { /* the sizes, then the bytes, keys before values */
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(lists[l]); i++) {
            put_le(size, (uint64_t)PyBytes_GET_SIZE(PyList_GET_ITEM(lists[l], i)), 4);
            size += 4;
        }
    }
    for (int l = 0; l < 2; l++) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(lists[l]); i++) {
            PyObject *item = PyList_GET_ITEM(lists[l], i);
            Py_ssize_t n = PyBytes_GET_SIZE(item);
            memcpy(data, PyBytes_AS_STRING(item), (size_t)n);
            data += n;
        }
    }
    return out;
}

static PyMethodDef methods[] = {
    {"encode_part", (PyCFunction)(void (*)(void))encode_part, METH_FASTCALL,
     "encode_part(now, keys, values, /) -> bytes: a change log part (keyspace._changes.encode_part_py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "keyspace._changes_accel",
    "Optional C encoder of the change log's parts (keyspace._changes is the reference).",
    -1,
    methods,
};

PyMODINIT_FUNC
PyInit__changes_accel(void)
{
    return PyModule_Create(&module);
}
