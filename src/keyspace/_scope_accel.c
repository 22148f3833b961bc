/* Optional C point operations for bytes scopes of the tuple scheme.
 *
 * point_op(kind, cls, fallback, raise_raw, prefix_slot, call_slot, raw_slot)
 * makes a callable that a class installs as __getitem__ (kind "getitem"),
 * get (kind "get") or __setitem__ (kind "setitem"). Called as a method of an
 * instance `s` of cls with a key of exactly bytes (and, for "setitem", a value
 * of exactly bytes), it reads three __slots__ of s by their offsets:
 *
 *   prefix = s.<prefix_slot>   the scope's prefix followed by 01 (bytes)
 *   call   = s.<call_slot>     the engine's get(stored) or put(stored, value)
 *   raw    = s.<raw_slot>      the exception types call raises untranslated
 *
 * builds the stored key `prefix key(00 -> 00 ff) 00` in one allocation and
 * calls `call` with it. getitem raises KeyError(key) for a missing key, get
 * returns its default (None, or the third positional argument), setitem
 * returns None. When `call` raises one of `raw`, raise_raw(s, exc, stored) is
 * called to raise the translated error in its place.
 *
 * Anything else (another key or value type, keyword arguments, an unset slot,
 * call being None, an instance that is not a cls) is handed to fallback, the
 * pure-Python method with the same behaviour, with the same arguments.
 *
 * Installed in a class dict, the callable works like a Python function: it is
 * a method descriptor, so `s[k]` and `s.get(k)` call it with no bound method
 * and no Python frame in between.
 *
 * Cost: one memchr pass over the key (two when it holds 00 bytes), one
 * allocation, and the engine's call.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <string.h>
#include "structmember.h"

enum { KIND_GETITEM, KIND_GET, KIND_SETITEM };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int kind;
    PyTypeObject *cls;
    PyObject *fallback;
    PyObject *raise_raw;
    Py_ssize_t off_prefix;
    Py_ssize_t off_call;
    Py_ssize_t off_raw;
} PointOp;

static inline PyObject *
slot_value(PyObject *obj, Py_ssize_t offset)
{
    return *(PyObject **)((char *)obj + offset);
}

/* prefix + key with every 00 escaped as 00 ff + 00, as a new bytes object. */
static PyObject *
stored_key(PyObject *prefix, PyObject *key)
{
    const char *k = PyBytes_AS_STRING(key);
    Py_ssize_t klen = PyBytes_GET_SIZE(key);
    Py_ssize_t plen = PyBytes_GET_SIZE(prefix);
    Py_ssize_t zeros = 0;
    const char *p = k, *end = k + klen;
    while (p < end && (p = memchr(p, 0, (size_t)(end - p))) != NULL) {
        zeros++;
        p++;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, plen + klen + zeros + 1);
    if (out == NULL) {
        return NULL;
    }
    char *o = PyBytes_AS_STRING(out);
    memcpy(o, PyBytes_AS_STRING(prefix), (size_t)plen);
    o += plen;
    if (zeros == 0) {
        memcpy(o, k, (size_t)klen);
        o += klen;
    }
    else {
        for (Py_ssize_t i = 0; i < klen; i++) {
            *o++ = k[i];
            if (k[i] == 0) {
                *o++ = (char)0xff;
            }
        }
    }
    *o = 0;
    return out;
}

/* The engine call failed with an exception that is set. Hand raw engine
 * errors to raise_raw; leave any other exception as it is. Returns NULL. */
static PyObject *
engine_error(PointOp *op, PyObject *self, PyObject *stored)
{
    PyObject *raw = slot_value(self, op->off_raw);
    if (raw == NULL || !PyTuple_Check(raw) || PyTuple_GET_SIZE(raw) == 0 || !PyErr_ExceptionMatches(raw)) {
        return NULL;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL && value != NULL) {
        PyException_SetTraceback(value, tb);
    }
    PyObject *args[3] = {self, value != NULL ? value : Py_None, stored};
    PyObject *res = PyObject_Vectorcall(op->raise_raw, args, 3, NULL);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    if (res != NULL) {
        Py_DECREF(res);
        PyErr_SetString(PyExc_SystemError, "raise_raw returned instead of raising");
    }
    return NULL;
}

static PyObject *
point_op_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PointOp *op = (PointOp *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    int ok_nargs = op->kind == KIND_GET ? (nargs == 2 || nargs == 3) : nargs == (op->kind == KIND_SETITEM ? 3 : 2);
    if (kwnames != NULL || !ok_nargs || !PyObject_TypeCheck(args[0], op->cls) || !PyBytes_CheckExact(args[1])
        || (op->kind == KIND_SETITEM && !PyBytes_CheckExact(args[2]))) {
        return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
    }
    PyObject *self = args[0], *key = args[1];
    PyObject *prefix = slot_value(self, op->off_prefix);
    PyObject *call = slot_value(self, op->off_call);
    if (prefix == NULL || !PyBytes_CheckExact(prefix) || call == NULL || call == Py_None) {
        return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
    }
    PyObject *stored = stored_key(prefix, key);
    if (stored == NULL) {
        return NULL;
    }
    PyObject *call_args[2] = {stored, op->kind == KIND_SETITEM ? args[2] : NULL};
    /* the slot may be rebound while the engine runs (another thread preparing the
       scope's writer): hold our own reference to the callable for the call */
    Py_INCREF(call);
    PyObject *res = PyObject_Vectorcall(call, call_args, op->kind == KIND_SETITEM ? 2 : 1, NULL);
    Py_DECREF(call);
    if (res == NULL) {
        engine_error(op, self, stored);
        Py_DECREF(stored);
        return NULL;
    }
    Py_DECREF(stored);
    switch (op->kind) {
    case KIND_SETITEM:
        Py_DECREF(res);
        Py_RETURN_NONE;
    case KIND_GET:
        if (res == Py_None && nargs == 3) {
            Py_DECREF(res);
            return Py_NewRef(args[2]);
        }
        return res;
    default:
        if (res == Py_None) {
            Py_DECREF(res);
            PyErr_SetObject(PyExc_KeyError, key);
            return NULL;
        }
        return res;
    }
}

static PyObject *
point_op_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        return Py_NewRef(self);
    }
    return PyMethod_New(self, obj);
}

static int
point_op_traverse(PyObject *self, visitproc visit, void *arg)
{
    PointOp *op = (PointOp *)self;
    Py_VISIT(op->cls);
    Py_VISIT(op->fallback);
    Py_VISIT(op->raise_raw);
    return 0;
}

static int
point_op_clear(PyObject *self)
{
    PointOp *op = (PointOp *)self;
    Py_CLEAR(op->cls);
    Py_CLEAR(op->fallback);
    Py_CLEAR(op->raise_raw);
    return 0;
}

static void
point_op_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    point_op_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
point_op_get_doc(PyObject *self, void *closure)
{
    return PyObject_GetAttrString(((PointOp *)self)->fallback, "__doc__");
}

static PyObject *
point_op_get_name(PyObject *self, void *closure)
{
    return PyObject_GetAttrString(((PointOp *)self)->fallback, "__name__");
}

static PyGetSetDef point_op_getset[] = {
    {"__doc__", point_op_get_doc, NULL, NULL, NULL},
    {"__name__", point_op_get_name, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef point_op_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(PointOp, fallback), READONLY, "the pure-Python method"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject PointOpType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace._scope_accel.PointOp",
    .tp_basicsize = sizeof(PointOp),
    .tp_dealloc = point_op_dealloc,
    .tp_vectorcall_offset = offsetof(PointOp, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "A C point operation of a bytes scope (see keyspace._scope_accel.point_op).",
    .tp_traverse = point_op_traverse,
    .tp_clear = point_op_clear,
    .tp_getset = point_op_getset,
    .tp_members = point_op_members,
    .tp_descr_get = point_op_descr_get,
};

/* The offset of an object slot (__slots__ entry) of cls, or -1 with TypeError. */
static Py_ssize_t
slot_offset(PyTypeObject *cls, PyObject *descr, const char *what)
{
    if (!Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "%s must be a __slots__ member descriptor, not %.100s", what,
                     Py_TYPE(descr)->tp_name);
        return -1;
    }
    PyMemberDescrObject *member = (PyMemberDescrObject *)descr;
    if (member->d_member->type != T_OBJECT_EX || !PyType_IsSubtype(cls, PyDescr_TYPE(member))) {
        PyErr_Format(PyExc_TypeError, "%s must be an object slot of %.100s", what, cls->tp_name);
        return -1;
    }
    return member->d_member->offset;
}

static PyObject *
point_op(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7) {
        PyErr_Format(PyExc_TypeError, "point_op() takes 7 arguments (%zd given)", nargs);
        return NULL;
    }
    const char *name = PyUnicode_Check(args[0]) ? PyUnicode_AsUTF8(args[0]) : NULL;
    int kind;
    if (name != NULL && strcmp(name, "getitem") == 0) {
        kind = KIND_GETITEM;
    }
    else if (name != NULL && strcmp(name, "get") == 0) {
        kind = KIND_GET;
    }
    else if (name != NULL && strcmp(name, "setitem") == 0) {
        kind = KIND_SETITEM;
    }
    else {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "kind must be 'getitem', 'get' or 'setitem', not %R", args[0]);
        return NULL;
    }
    if (!PyType_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "cls must be a type");
        return NULL;
    }
    PyTypeObject *cls = (PyTypeObject *)args[1];
    if (!PyCallable_Check(args[2]) || !PyCallable_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "fallback and raise_raw must be callable");
        return NULL;
    }
    Py_ssize_t off_prefix = slot_offset(cls, args[4], "prefix_slot");
    Py_ssize_t off_call = off_prefix < 0 ? -1 : slot_offset(cls, args[5], "call_slot");
    Py_ssize_t off_raw = off_call < 0 ? -1 : slot_offset(cls, args[6], "raw_slot");
    if (off_raw < 0) {
        return NULL;
    }
    PointOp *op = PyObject_GC_New(PointOp, &PointOpType);
    if (op == NULL) {
        return NULL;
    }
    op->vectorcall = point_op_vectorcall;
    op->kind = kind;
    op->cls = (PyTypeObject *)Py_NewRef(cls);
    op->fallback = Py_NewRef(args[2]);
    op->raise_raw = Py_NewRef(args[3]);
    op->off_prefix = off_prefix;
    op->off_call = off_call;
    op->off_raw = off_raw;
    PyObject_GC_Track(op);
    return (PyObject *)op;
}

static PyMethodDef scope_accel_methods[] = {
    {"point_op", (PyCFunction)(void (*)(void))point_op, METH_FASTCALL,
     "point_op(kind, cls, fallback, raise_raw, prefix_slot, call_slot, raw_slot)\n\n"
     "A C method for cls: kind 'getitem', 'get' or 'setitem' (see the module)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef scope_accel_module = {
    PyModuleDef_HEAD_INIT,
    "keyspace._scope_accel",
    "Optional C point operations (get, [], []=) for bytes scopes of the tuple scheme.",
    0,
    scope_accel_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit__scope_accel(void)
{
    if (PyType_Ready(&PointOpType) < 0) {
        return NULL;
    }
    return PyModule_Create(&scope_accel_module);
}
