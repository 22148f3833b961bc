/* Optional C put route of a hooked transaction (keyspace._put_route is the
 * reference and documents the behaviour).
 *
 *   route = PutRoute(replace, old, merged, knows_old=True, *, bound=None,
 *                    rest=None, keeps=True)
 *                          replace: a callable, or a dict (a put is its
 *                          item set, one C call: knows_old must be false)
 *   route(key, value)      with rest: rest(key, value) for anything but a
 *                          bytes key < bound (the reserved records), its
 *                          answer returned. Else before = replace(key,
 *                          value); (key, value, before) kept for settle();
 *                          the summary updated. With knows_old false,
 *                          replace is a plain put: its answer is dropped and
 *                          before is None; with keeps false nothing is kept
 *   route.end(ended)       every later call is ended(key, value); the route
 *                          holds rest no more (what it kept stays)
 *   route.settle()         the puts kept into the dicts: old.setdefault(key,
 *                          before) (only where knows_old), merged[key] =
 *                          value, in the order made
 *   route.exact            whether every change went through the route
 *                          (writable: a caller clears it)
 *   route.low, route.high  the lowest and highest key put (None before a put,
 *                          and always without knows_old)
 *   route.summary()        (low, high, keys, bytes) or None (always None
 *                          without knows_old)
 *   route.puts             the puts made
 *   route.columns()        ([key, ...], [value, ...]) of the puts not settled,
 *                          in the order made
 *
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <string.h>
#include "structmember.h"

typedef struct {
    PyObject_HEAD
    PyObject *replace;
    PyObject *old;
    PyObject *merged;
    PyObject *bound; /* with rest: keys from it on go to rest */
    PyObject *rest;
    PyObject **log; /* key, value, before of each put not settled yet (owned) */
    Py_ssize_t used;
    Py_ssize_t room;
    PyObject *low;
    PyObject *high;
    long long keys;
    long long bytes;
    Py_ssize_t puts;
    int exact;
    char knows_old;
    char keeps;
    char into_dict; /* replace is a dict: a put sets its item */
    vectorcallfunc vectorcall;
} PutRoute;

static Py_ssize_t
size_of(PyObject *value)
{
    if (PyBytes_CheckExact(value)) {
        return PyBytes_GET_SIZE(value);
    }
    return PyObject_Size(value);
}

/* -1 with an error set, 1 when a < b, 0 else */
static int
less(PyObject *a, PyObject *b)
{
    if (PyBytes_CheckExact(a) && PyBytes_CheckExact(b)) {
        Py_ssize_t na = PyBytes_GET_SIZE(a), nb = PyBytes_GET_SIZE(b);
        int c = memcmp(PyBytes_AS_STRING(a), PyBytes_AS_STRING(b), (size_t)(na < nb ? na : nb));
        return c < 0 || (c == 0 && na < nb);
    }
    return PyObject_RichCompareBool(a, b, Py_LT);
}

static PyObject *
route_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PutRoute *self = (PutRoute *)op;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (self->rest != NULL) { /* the split: only a bytes key below the bound takes the route */
        PyObject *bound = self->bound;
        int below = 0;
        if (kwnames == NULL && nargs == 2 && PyBytes_CheckExact(args[0])) {
            below = less(args[0], bound); /* two bytes: a memcmp, never an error */
        }
        if (!below) {
            return PyObject_Vectorcall(self->rest, args, nargsf, kwnames);
        }
    }
    if (nargs != 2 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        PyErr_SetString(PyExc_TypeError, "a put route takes (key, value)");
        return NULL;
    }
    PyObject *key = args[0], *value = args[1];
    PyObject *before;
    if (self->into_dict) {
        if (PyDict_SetItem(self->replace, key, value) < 0) {
            return NULL;
        }
        before = Py_NewRef(Py_None);
    }
    else {
        before = PyObject_Vectorcall(self->replace, args, 2, NULL);
        if (before == NULL) {
            return NULL;
        }
    }
    if (!self->keeps) {
        Py_DECREF(before);
        Py_RETURN_NONE;
    }
    if (!self->knows_old) { /* a plain put: its answer dropped, no value before */
        Py_SETREF(before, Py_NewRef(Py_None));
    }
    if (self->used + 3 > self->room) {
        Py_ssize_t room = self->room ? self->room * 2 : 96;
        PyObject **grown = PyMem_Realloc(self->log, (size_t)room * sizeof(PyObject *));
        if (grown == NULL) {
            Py_DECREF(before);
            PyErr_NoMemory();
            return NULL;
        }
        self->log = grown;
        self->room = room;
    }
    PyObject **slot = self->log + self->used;
    Py_INCREF(key);
    slot[0] = key;
    Py_INCREF(value);
    slot[1] = value;
    Py_INCREF(before);
    slot[2] = before;
    self->used += 3;
    self->puts += 1;
    if (!self->knows_old) { /* no summary to keep: the puts alone */
        Py_DECREF(before);
        Py_RETURN_NONE;
    }
    Py_ssize_t key_size = size_of(key), value_size = size_of(value);
    if (key_size < 0 || value_size < 0) {
        Py_DECREF(before);
        return NULL;
    }
    if (before == Py_None) {
        self->keys += 1;
        self->bytes += (long long)key_size + (long long)value_size;
    }
    else {
        Py_ssize_t before_size = size_of(before);
        if (before_size < 0) {
            Py_DECREF(before);
            return NULL;
        }
        self->bytes += (long long)value_size - (long long)before_size;
    }
    Py_DECREF(before);
    if (self->low == NULL) {
        Py_INCREF(key);
        self->low = key;
        Py_INCREF(key);
        self->high = key;
    }
    else {
        int below = less(key, self->low);
        if (below < 0) {
            return NULL;
        }
        if (below) {
            Py_INCREF(key);
            Py_SETREF(self->low, key);
        }
        else {
            int above = less(self->high, key);
            if (above < 0) {
                return NULL;
            }
            if (above) {
                Py_INCREF(key);
                Py_SETREF(self->high, key);
            }
        }
    }
    Py_RETURN_NONE;
}

static PyObject *
route_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *replace, *old, *merged, *bound = Py_None, *rest = Py_None;
    int knows_old = 1, keeps = 1;
    static char *names[] = {"replace", "old", "merged", "knows_old", "bound", "rest", "keeps", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO!O!|p$OOp:PutRoute", names, &replace, &PyDict_Type, &old,
                                     &PyDict_Type, &merged, &knows_old, &bound, &rest, &keeps)) {
        return NULL;
    }
    int into_dict = PyDict_CheckExact(replace);
    if (into_dict && knows_old) {
        PyErr_SetString(PyExc_TypeError, "PutRoute into a dict knows no values before: give knows_old=False");
        return NULL;
    }
    if ((!into_dict && !PyCallable_Check(replace)) || (rest == Py_None) != (bound == Py_None) ||
        (rest != Py_None && (!PyBytes_CheckExact(bound) || !PyCallable_Check(rest)))) {
        PyErr_SetString(PyExc_TypeError,
                        "PutRoute takes a callable or dict replace, and bytes bound with a callable rest, or neither");
        return NULL;
    }
    PutRoute *self = (PutRoute *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    Py_INCREF(replace);
    self->replace = replace;
    Py_INCREF(old);
    self->old = old;
    Py_INCREF(merged);
    self->merged = merged;
    if (rest != Py_None) {
        self->bound = Py_NewRef(bound);
        self->rest = Py_NewRef(rest);
    }
    self->exact = 1;
    self->knows_old = (char)knows_old;
    self->keeps = (char)keeps;
    self->into_dict = (char)into_dict;
    self->vectorcall = route_vectorcall;
    return (PyObject *)self;
}

static void
route_drop_log(PutRoute *self)
{
    Py_ssize_t used = self->used;
    self->used = 0;
    for (Py_ssize_t i = 0; i < used; i++) {
        Py_DECREF(self->log[i]);
    }
}

static int
route_traverse(PyObject *op, visitproc visit, void *arg)
{
    PutRoute *self = (PutRoute *)op;
    Py_VISIT(self->replace);
    Py_VISIT(self->old);
    Py_VISIT(self->merged);
    Py_VISIT(self->rest);
    for (Py_ssize_t i = 0; i < self->used; i++) {
        Py_VISIT(self->log[i]);
    }
    Py_VISIT(self->low);
    Py_VISIT(self->high);
    return 0;
}

static int
route_clear(PyObject *op)
{
    PutRoute *self = (PutRoute *)op;
    Py_CLEAR(self->replace);
    Py_CLEAR(self->old);
    Py_CLEAR(self->merged);
    Py_CLEAR(self->bound);
    Py_CLEAR(self->rest);
    route_drop_log(self);
    Py_CLEAR(self->low);
    Py_CLEAR(self->high);
    return 0;
}

static void
route_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    route_clear(op);
    PyMem_Free(((PutRoute *)op)->log);
    Py_TYPE(op)->tp_free(op);
}

static PyObject *
route_summary(PyObject *op, PyObject *Py_UNUSED(ignored))
{
    PutRoute *self = (PutRoute *)op;
    if (!self->exact || self->low == NULL) { /* low: never set without knows_old */
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(OOLL)", self->low, self->high, self->keys, self->bytes);
}

static PyObject *
route_settle(PyObject *op, PyObject *Py_UNUSED(ignored))
{
    PutRoute *self = (PutRoute *)op;
    PyObject **log = self->log, *old = self->old, *merged = self->merged;
    Py_ssize_t used = self->used;
    int knows_old = self->knows_old;
    for (Py_ssize_t i = 0; i + 2 < used; i += 3) {
        if ((knows_old && PyDict_SetDefault(old, log[i], log[i + 2]) == NULL) ||
            PyDict_SetItem(merged, log[i], log[i + 1]) < 0) {
            return NULL; /* the log kept: a later settle starts again (the dict stores are idempotent) */
        }
    }
    route_drop_log(self);
    Py_RETURN_NONE;
}

static PyObject *
route_columns(PyObject *op, PyObject *Py_UNUSED(ignored))
{
    PutRoute *self = (PutRoute *)op;
    Py_ssize_t n = self->used / 3;
    PyObject *keys = PyList_New(n), *values = PyList_New(n);
    if (keys == NULL || values == NULL) {
        Py_XDECREF(keys);
        Py_XDECREF(values);
        return NULL;
    }
    PyObject **log = self->log;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(log[3 * i]);
        PyList_SET_ITEM(keys, i, log[3 * i]);
        Py_INCREF(log[3 * i + 1]);
        PyList_SET_ITEM(values, i, log[3 * i + 1]);
    }
    return Py_BuildValue("(NN)", keys, values);
}

static PyObject *
route_get_bound(PyObject *bound)
{
    if (bound == NULL) {
        Py_RETURN_NONE;
    }
    Py_INCREF(bound);
    return bound;
}

static PyObject *
route_get_low(PyObject *op, void *Py_UNUSED(closure))
{
    return route_get_bound(((PutRoute *)op)->low);
}

static PyObject *
route_get_high(PyObject *op, void *Py_UNUSED(closure))
{
    return route_get_bound(((PutRoute *)op)->high);
}

static PyObject *
route_get_exact(PyObject *op, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(((PutRoute *)op)->exact);
}

static int
route_set_exact(PyObject *op, PyObject *value, void *Py_UNUSED(closure))
{
    if (value == NULL) {
        PyErr_SetString(PyExc_AttributeError, "exact cannot be deleted");
        return -1;
    }
    int truth = PyObject_IsTrue(value);
    if (truth < 0) {
        return -1;
    }
    ((PutRoute *)op)->exact = truth;
    return 0;
}

static PyObject *
route_end(PyObject *op, PyObject *ended)
{
    PutRoute *self = (PutRoute *)op;
    if (!PyCallable_Check(ended)) {
        PyErr_SetString(PyExc_TypeError, "PutRoute.end takes a callable");
        return NULL;
    }
    PyObject *nothing = PyBytes_FromStringAndSize(NULL, 0); /* no key is below it */
    if (nothing == NULL) {
        return NULL;
    }
    Py_XSETREF(self->bound, nothing);
    Py_XSETREF(self->rest, Py_NewRef(ended));
    Py_RETURN_NONE;
}

static PyMethodDef route_methods[] = {
    {"end", route_end, METH_O, "end(ended): every later call is ended(key, value)."},
    {"settle", route_settle, METH_NOARGS, "The puts made since the last settle into old and merged."},
    {"columns", route_columns, METH_NOARGS, "([key, ...], [value, ...]) of the puts not settled, in order."},
    {"summary", route_summary, METH_NOARGS,
     "(low, high, keys, bytes) of the puts so far, or None (no put, or exact cleared)."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef route_members[] = {
    {"replace", T_OBJECT, offsetof(PutRoute, replace), READONLY, "The engine's replace, or the dict the puts set."},
    {"old", T_OBJECT, offsetof(PutRoute, old), READONLY, "Key -> value before the transaction."},
    {"merged", T_OBJECT, offsetof(PutRoute, merged), READONLY, "Key -> value after, first written first."},
    {"puts", T_PYSSIZET, offsetof(PutRoute, puts), READONLY, "The puts made."},
    {"knows_old", T_BOOL, offsetof(PutRoute, knows_old), READONLY,
     "Whether replace answers the value before (else a plain put)."},
    {"keeps", T_BOOL, offsetof(PutRoute, keeps), READONLY, "Whether the puts are kept (else only split)."},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef route_getset[] = {
    {"exact", route_get_exact, route_set_exact, "Whether every change went through the route.", NULL},
    {"low", route_get_low, NULL, "The lowest key put, or None.", NULL},
    {"high", route_get_high, NULL, "The highest key put, or None.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PutRouteType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace._put_route_accel.PutRoute",
    .tp_doc = "PutRoute(replace, old, merged, knows_old=True, *, bound=None, rest=None, keeps=True): "
               "a hooked transaction's put (see keyspace._put_route).",
    .tp_basicsize = sizeof(PutRoute),
    .tp_vectorcall_offset = offsetof(PutRoute, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = route_new,
    .tp_traverse = route_traverse,
    .tp_clear = route_clear,
    .tp_dealloc = route_dealloc,
    .tp_methods = route_methods,
    .tp_members = route_members,
    .tp_getset = route_getset,
};

static struct PyModuleDef put_route_accel_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "keyspace._put_route_accel",
    .m_doc = "Optional C put route of a hooked transaction (keyspace._put_route is the reference).",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__put_route_accel(void)
{
    if (PyType_Ready(&PutRouteType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&put_route_accel_module);
    if (module == NULL) {
        return NULL;
    }
    Py_INCREF(&PutRouteType);
    if (PyModule_AddObject(module, "PutRoute", (PyObject *)&PutRouteType) < 0) {
        Py_DECREF(&PutRouteType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
