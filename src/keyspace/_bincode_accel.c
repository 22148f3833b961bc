/* Optional C form of bincode's String values (keyspace.bincode, whose pure-Python
 * codec functions are the reference).
 *
 * LenText(mode, fallback): see below. Cost: one pass over the value and one
 * allocation.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "structmember.h"

/* LenText(mode, fallback): a codec function of the values `u64le(len utf8) utf8`
 * (bincode's String). mode 0 decodes: exact bytes whose length field matches and
 * whose body is UTF-8 give the str; mode 1 encodes: an exact ASCII str gives its
 * bytes after their length. Everything else is fallback(value), the reference,
 * which returns the same or raises its named error. */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int mode;
    PyObject *fallback;
} LenText;

static PyTypeObject LenTextType;

static PyObject *
len_text_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    LenText *f = (LenText *)callable;
    if (kwnames != NULL || PyVectorcall_NARGS(nargsf) != 1) {
        return PyObject_Vectorcall(f->fallback, args, nargsf, kwnames);
    }
    PyObject *v = args[0];
    if (f->mode == 0 && PyBytes_CheckExact(v) && PyBytes_GET_SIZE(v) >= 8) {
        const unsigned char *r = (const unsigned char *)PyBytes_AS_STRING(v);
        Py_ssize_t n = PyBytes_GET_SIZE(v);
        uint64_t len = 0;
        for (int i = 7; i >= 0; i--) {
            len = len << 8 | r[i];
        }
        if (len == (uint64_t)(n - 8)) {
            PyObject *out = PyUnicode_DecodeUTF8((const char *)r + 8, n - 8, NULL);
            if (out != NULL || !PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
                return out;
            }
            PyErr_Clear(); /* the reference names the fault */
        }
    }
    else if (f->mode == 1 && PyUnicode_CheckExact(v) && PyUnicode_IS_ASCII(v)) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(v);
        PyObject *out = PyBytes_FromStringAndSize(NULL, n + 8);
        if (out == NULL) {
            return NULL;
        }
        char *o = PyBytes_AS_STRING(out);
        uint64_t len = (uint64_t)n;
        for (int i = 0; i < 8; i++) {
            o[i] = (char)((len >> (8 * i)) & 0xff);
        }
        memcpy(o + 8, PyUnicode_DATA(v), (size_t)n);
        return out;
    }
    return PyObject_CallOneArg(f->fallback, v);
}

static PyObject *
len_text_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    int mode;
    PyObject *fallback;
    if ((kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) || !PyArg_ParseTuple(args, "iO:LenText", &mode, &fallback)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "LenText() takes positional arguments only");
        }
        return NULL;
    }
    if ((mode != 0 && mode != 1) || !PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_ValueError, "LenText(mode, fallback): mode 0 or 1 and a callable fallback");
        return NULL;
    }
    LenText *f = PyObject_GC_New(LenText, type);
    if (f == NULL) {
        return NULL;
    }
    f->vectorcall = len_text_vectorcall;
    f->mode = mode;
    f->fallback = Py_NewRef(fallback);
    PyObject_GC_Track(f);
    return (PyObject *)f;
}

static int
len_text_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((LenText *)self)->fallback);
    return 0;
}

static int
len_text_clear(PyObject *self)
{
    Py_CLEAR(((LenText *)self)->fallback);
    return 0;
}

static void
len_text_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    len_text_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyMemberDef len_text_members[] = {
    {"fallback", T_OBJECT, offsetof(LenText, fallback), READONLY, "the reference function"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject LenTextType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace._bincode_accel.LenText",
    .tp_basicsize = sizeof(LenText),
    .tp_dealloc = len_text_dealloc,
    .tp_vectorcall_offset = offsetof(LenText, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "LenText(mode, fallback): decode (0) or encode (1) u64le(len utf8) utf8 values in C\n"
              "(see keyspace._bincode_accel).",
    .tp_traverse = len_text_traverse,
    .tp_clear = len_text_clear,
    .tp_members = len_text_members,
    .tp_new = len_text_new,
};


static struct PyModuleDef bincode_accel_module = {
    PyModuleDef_HEAD_INIT,
    "keyspace._bincode_accel",
    "Optional C form of bincode's String values (u64le(len utf8) utf8).",
    0,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit__bincode_accel(void)
{
    if (PyType_Ready(&LenTextType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&bincode_accel_module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "LenText", (PyObject *)&LenTextType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
