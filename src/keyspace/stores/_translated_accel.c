/* Optional C twin of keyspace.stores._translated.translated_py (the reference).
 *
 *   f = Translated(fn, translate)
 *   f(*args, **kw)   fn(*args, **kw); an Exception it raises that is not a
 *                    keyspace error is raised as translate(error, key) (key: the
 *                    first positional argument, None without one), chained from
 *                    it; a keyspace error and any other BaseException go through
 *                    as they are
 *
 * How a store view offers an engine's own C call (py-lmdb's get, put, replace) as
 * its contract method (get, put, replace) with the view's errors: one vectorcall
 * more than the engine call, no Python frame.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

typedef struct {
    PyObject_HEAD
    PyObject *fn;
    PyObject *translate;
    vectorcallfunc vectorcall;
} Translated;

static PyObject *keyspace_error; /* keyspace.errors.KeyspaceError */

/* Raise translate(error, key) from the error set now (always returns NULL). */
static PyObject *
raise_translated(Translated *self, PyObject *key)
{
    if (!PyErr_ExceptionMatches(PyExc_Exception) || PyErr_ExceptionMatches(keyspace_error)) {
        return NULL;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL) {
        PyException_SetTraceback(value, tb);
    }
    Py_XDECREF(type);
    Py_XDECREF(tb);
    PyObject *args[2] = {value, key};
    PyObject *exc = PyObject_Vectorcall(self->translate, args, 2, NULL);
    if (exc == NULL) {
        Py_DECREF(value);
        return NULL;
    }
    if (!PyExceptionInstance_Check(exc)) {
        PyErr_Format(PyExc_TypeError, "translate returned %.100s, not an exception", Py_TYPE(exc)->tp_name);
        Py_DECREF(exc);
        Py_DECREF(value);
        return NULL;
    }
    if (exc == value) { /* the error itself: raised as it was */
        Py_DECREF(exc);
        PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(value)), value, PyException_GetTraceback(value));
        return NULL;
    }
    /* raised as it stands (PyErr_SetObject would make the exception handled by
       the caller its __context__) */
    PyException_SetContext(exc, Py_NewRef(value)); /* steals the new reference */
    PyException_SetCause(exc, value);              /* steals value */
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
    return NULL;
}

static PyObject *
translated_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Translated *self = (Translated *)op;
    PyObject *out = PyObject_Vectorcall(self->fn, args, nargsf, kwnames);
    if (out != NULL) {
        return out;
    }
    return raise_translated(self, PyVectorcall_NARGS(nargsf) > 0 ? args[0] : Py_None);
}

static PyObject *
translated_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *fn, *translate;
    if (!_PyArg_NoKeywords("Translated", kwargs) || !PyArg_UnpackTuple(args, "Translated", 2, 2, &fn, &translate)) {
        return NULL;
    }
    if (!PyCallable_Check(fn) || !PyCallable_Check(translate)) {
        PyErr_SetString(PyExc_TypeError, "Translated(fn, translate) takes two callables");
        return NULL;
    }
    Translated *self = PyObject_GC_New(Translated, type);
    if (self == NULL) {
        return NULL;
    }
    self->fn = Py_NewRef(fn);
    self->translate = Py_NewRef(translate);
    self->vectorcall = translated_vectorcall;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

static int
translated_traverse(PyObject *op, visitproc visit, void *arg)
{
    Translated *self = (Translated *)op;
    Py_VISIT(self->fn);
    Py_VISIT(self->translate);
    return 0;
}

static int
translated_clear(PyObject *op)
{
    Translated *self = (Translated *)op;
    Py_CLEAR(self->fn);
    Py_CLEAR(self->translate);
    return 0;
}

static void
translated_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    translated_clear(op);
    Py_TYPE(op)->tp_free(op);
}

static PyObject *
translated_repr(PyObject *op)
{
    return PyUnicode_FromFormat("Translated(%R)", ((Translated *)op)->fn);
}

static PyTypeObject TranslatedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace.stores._translated_accel.Translated",
    .tp_doc = "Translated(fn, translate): fn, its errors raised as translate(error, key) (see the module).",
    .tp_basicsize = sizeof(Translated),
    .tp_vectorcall_offset = offsetof(Translated, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = translated_new,
    .tp_traverse = translated_traverse,
    .tp_clear = translated_clear,
    .tp_dealloc = translated_dealloc,
    .tp_repr = translated_repr,
};

static struct PyModuleDef translated_accel_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "keyspace.stores._translated_accel",
    .m_doc = "Optional C twin of keyspace.stores._translated: an engine call with its errors translated.",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__translated_accel(void)
{
    PyObject *errors = PyImport_ImportModule("keyspace.errors");
    if (errors == NULL) {
        return NULL;
    }
    keyspace_error = PyObject_GetAttrString(errors, "KeyspaceError");
    Py_DECREF(errors);
    if (keyspace_error == NULL || PyType_Ready(&TranslatedType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&translated_accel_module);
    if (module == NULL) {
        return NULL;
    }
    Py_INCREF(&TranslatedType);
    if (PyModule_AddObject(module, "Translated", (PyObject *)&TranslatedType) < 0) {
        Py_DECREF(&TranslatedType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
