/* Optional C update of accounting's counter records (keyspace._counter_records
 * is the reference and documents the behaviour).
 *
 *   bump(get, put, delete, rows, check)
 *       rows: a sequence of (path, key, own_keys, own_bytes, subtree_keys,
 *       subtree_bytes); each record (six little-endian int64) read with get,
 *       the deltas added, the quotas checked (check), and written with put, or
 *       deleted where it becomes all zero with no quota. Returns None, or
 *       ("keys" | "bytes", index, limit, size), or ("unreadable", index).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define FIELDS 6
#define RECORD_SIZE (FIELDS * 8)
#define NO_QUOTA (-1LL)

static void
decode(const unsigned char *raw, long long *out)
{
    for (int f = 0; f < FIELDS; f++) {
        uint64_t v = 0;
        for (int i = 7; i >= 0; i--) {
            v = (v << 8) | raw[f * 8 + i];
        }
        out[f] = (long long)v;
    }
}

static void
encode(const long long *in, unsigned char *raw)
{
    for (int f = 0; f < FIELDS; f++) {
        uint64_t v = (uint64_t)in[f];
        for (int i = 0; i < 8; i++) {
            raw[f * 8 + i] = (unsigned char)(v & 0xff);
            v >>= 8;
        }
    }
}

/* 0 with the four deltas of ``row`` in ``out``, -1 with an error set */
static int
row_deltas(PyObject *row, PyObject **key, long long *out)
{
    if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) != 6) {
        PyErr_SetString(PyExc_TypeError, "a row is (path, key, own_keys, own_bytes, subtree_keys, subtree_bytes)");
        return -1;
    }
    *key = PyTuple_GET_ITEM(row, 1);
    for (int i = 0; i < 4; i++) {
        out[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(row, 2 + i));
        if (out[i] == -1 && PyErr_Occurred()) {
            return -1;
        }
    }
    return 0;
}

static PyObject *
bump(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "bump(get, put, delete, rows, check)");
        return NULL;
    }
    PyObject *get = args[0], *put = args[1], *delete = args[2];
    int check = PyObject_IsTrue(args[4]);
    if (check < 0) {
        return NULL;
    }
    PyObject *rows = PySequence_Fast(args[3], "rows must be a sequence");
    if (rows == NULL) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(rows);
    PyObject **items = PySequence_Fast_ITEMS(rows);
    for (Py_ssize_t index = 0; index < n; index++) {
        PyObject *key;
        long long delta[4], record[FIELDS];
        if (row_deltas(items[index], &key, delta) < 0) {
            goto fail;
        }
        PyObject *raw = PyObject_CallOneArg(get, key);
        if (raw == NULL) {
            goto fail;
        }
        if (raw == Py_None) {
            memset(record, 0, sizeof(record));
            record[4] = record[5] = NO_QUOTA;
        }
        else if (PyBytes_Check(raw) && PyBytes_GET_SIZE(raw) == RECORD_SIZE) {
            decode((const unsigned char *)PyBytes_AS_STRING(raw), record);
        }
        else {
            Py_DECREF(raw);
            Py_DECREF(rows);
            return Py_BuildValue("(sn)", "unreadable", index);
        }
        Py_DECREF(raw);
        for (int i = 0; i < 4; i++) {  /* two's complement, as no count reaches 2**63 */
            record[i] = (long long)((uint64_t)record[i] + (uint64_t)delta[i]);
        }
        if (check) {
            if (record[4] != NO_QUOTA && delta[2] > 0 && record[2] > record[4]) {
                Py_DECREF(rows);
                return Py_BuildValue("(snLL)", "keys", index, record[4], record[2]);
            }
            if (record[5] != NO_QUOTA && delta[3] > 0 && record[3] > record[5]) {
                Py_DECREF(rows);
                return Py_BuildValue("(snLL)", "bytes", index, record[5], record[3]);
            }
        }
        PyObject *done;
        if (record[0] || record[1] || record[2] || record[3] || record[4] != NO_QUOTA || record[5] != NO_QUOTA) {
            PyObject *value = PyBytes_FromStringAndSize(NULL, RECORD_SIZE);
            if (value == NULL) {
                goto fail;
            }
            encode(record, (unsigned char *)PyBytes_AS_STRING(value));
            PyObject *call[2] = {key, value};
            done = PyObject_Vectorcall(put, call, 2, NULL);
            Py_DECREF(value);
        }
        else {
            done = PyObject_CallOneArg(delete, key);
        }
        if (done == NULL) {
            goto fail;
        }
        Py_DECREF(done);
    }
    Py_DECREF(rows);
    Py_RETURN_NONE;
fail:
    Py_DECREF(rows);
    return NULL;
}

static PyMethodDef counter_records_methods[] = {
    {"bump", (PyCFunction)(void (*)(void))bump, METH_FASTCALL,
     "bump(get, put, delete, rows, check): counter records updated (see keyspace._counter_records)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef counter_records_accel_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "keyspace._counter_records_accel",
    .m_doc = "Optional C update of accounting's counter records (keyspace._counter_records is the reference).",
    .m_size = -1,
    .m_methods = counter_records_methods,
};

PyMODINIT_FUNC
PyInit__counter_records_accel(void)
{
    return PyModule_Create(&counter_records_accel_module);
}
