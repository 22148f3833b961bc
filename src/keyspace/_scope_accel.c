/* The C twin of a scope's fields and point operations, and the path memo of
 * transactions (keyspace._scope_fields and keyspace.keyspace hold the pure-Python
 * references).
 *
 * ScopeFields is the C type whose declared members are the fields of a scope
 * (keyspace._scope_fields.FIELDS: the module checks at import that they are its
 * members, in order) and whose base is keyspace._scope_fields.PointOps, the point
 * operations in Python. keyspace._scope_core.ScopeCore subclasses it, and Scope
 * subclasses ScopeCore, adding no field. It overrides four point operations
 * with C methods that read the fields themselves:
 *
 *   s[key], s.get(key, default)   stored = s._stored(key) (a layout's Transform
 *                                 takes vectorcall); unless s._guard (None, or a
 *                                 callable run as guard(s._view) before each read)
 *                                 says the scope holds no own keys, raw =
 *                                 s._get(stored); the value is raw, or
 *                                 s._vdec(raw) where a decoder is set. A missing
 *                                 key: KeyError from s._missing(key), or default.
 *                                 A guard answering SETTLED is dropped from
 *                                 s._guard: later reads skip it.
 *   s[key] = value                s._put(s._stored(key), value) where value (after
 *                                 s._venc, if set) is exact bytes.
 *   del s[key]                    always PointOps.__delitem__.
 *
 * s._get and s._put are the view's own get and put (their errors the view's, as
 * the contract says). Every case the C route does not take (an unset field, an unbound
 * put, a value the codec refuses or that is not bytes, keyword arguments) runs the
 * PointOps method itself, with the same arguments: results and errors are the
 * reference's. s._copy() makes a new instance of type(s) holding s's fields,
 * without __init__ (a class that holds more than the fields is refused);
 * s._rebound(view), such a copy bound to view (its view, point read and read
 * route). Cost of a
 * point operation: the key transform, the engine's call and no Python frame.
 *
 * path_memo(name, fallback): see below.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <string.h>
#include "structmember.h"

/* -- ScopeFields ---------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *_bound;
    PyObject *_chunk;
    PyObject *_compiled;
    PyObject *_cut;
    PyObject *_data;
    PyObject *_escape;
    PyObject *_get;
    PyObject *_guard;
    PyObject *_key_of;
    PyObject *_key_spec;
    PyObject *_layout;
    PyObject *_put;
    PyObject *_ranges;
    PyObject *_read_route;
    PyObject *_reserved;
    PyObject *_space;
    PyObject *_state;
    PyObject *_stored;
    PyObject *_value_spec;
    PyObject *_vdec;
    PyObject *_venc;
    PyObject *_view;
    PyObject *_write_route;
    PyObject *path;
    PyObject *prefix;
    PyObject *scheme;
} ScopeFields;

#define N_FIELDS 26
#define FIELD_AT(obj, i) (((PyObject **)((char *)(obj) + offsetof(ScopeFields, _bound)))[i])

#define MEMBER(name, doc) {#name, T_OBJECT_EX, offsetof(ScopeFields, name), 0, doc}

static PyMemberDef scope_fields_members[] = {
    MEMBER(_bound, "the layout's key transform, before any refusal of reserved keys"),
    MEMBER(_chunk, "the decoder of a chunk of stored items"),
    MEMBER(_compiled, "the compiled layout of the path (the whole store's keys)"),
    MEMBER(_cut, "how many bytes of the prefix the view's narrowing took"),
    MEMBER(_data, "the part of the view that holds the scope's keys"),
    MEMBER(_escape, "the layout's key transform as one replace, or None"),
    MEMBER(_get, "the get of _data"),
    MEMBER(_guard, "None, or the catalog's check before a read of own keys"),
    MEMBER(_key_of, "stored key -> key"),
    MEMBER(_key_spec, "the key codec"),
    MEMBER(_layout, "the layout of the keys as _data holds them"),
    MEMBER(_put, "None, or the put of _data, once bound"),
    MEMBER(_ranges, "the scope's own ranges"),
    MEMBER(_read_route, "the one-frame route of reads"),
    MEMBER(_reserved, "the reserved ranges the scope's keys meet"),
    MEMBER(_space, "the keyspace's space"),
    MEMBER(_state, "the catalog of the view"),
    MEMBER(_stored, "key -> stored key"),
    MEMBER(_value_spec, "the value codec"),
    MEMBER(_vdec, "None, or the value decoder"),
    MEMBER(_venc, "None, or the value encoder"),
    MEMBER(_view, "the view: the store, a snapshot or a transaction"),
    MEMBER(_write_route, "the one-frame route of writes"),
    MEMBER(path, "the scope's path"),
    MEMBER(prefix, "the stored bytes every own key starts with"),
    MEMBER(scheme, "the keyspace's scheme"),
    {NULL, 0, 0, 0, NULL},
};

/* What the C methods hand on: the Python point operations (PointOps of
   keyspace._scope_fields, the base of ScopeFields), SETTLED, interned names. */
static PyObject *py_getitem, *py_get, *py_setitem, *py_delitem;
static PyObject *settled_marker, *no_route;
static PyObject *str_missing, *str_get;
static PyTypeObject *scope_fields_type;

/* The capsule keyspace.schemes._layouts_accel.transform_api: the C call of a
   layout's Transform and the schemes' is_exact_path (NULL where that module is
   not built). */
typedef struct {
    PyTypeObject *type;
    PyObject *(*stored_key)(PyObject *transform, PyObject *key);
    int (*is_exact_path)(PyObject *path);
} TransformApi;

static TransformApi *transform_api;

/* The stored key of key: stored_fn(key), a Transform called in C. */
static inline PyObject *
stored_key(PyObject *stored_fn, PyObject *key)
{
    if (transform_api != NULL && Py_IS_TYPE(stored_fn, transform_api->type)) {
        return transform_api->stored_key(stored_fn, key);
    }
    return PyObject_Vectorcall(stored_fn, &key, 1, NULL);
}

enum { READ_GETITEM, READ_GET };

/* s[key] (kind READ_GETITEM) or s.get(key, dflt) (READ_GET) on the C route, or
 * NULL with `*fallback` set to 1 where the Python method must run instead (no
 * exception set then). */
static PyObject *
read_point(ScopeFields *s, PyObject *key, PyObject *dflt, int kind, int *fallback)
{
    PyObject *self = (PyObject *)s;
    PyObject *stored_fn = s->_stored, *call = s->_get, *codec = s->_vdec;
    if (stored_fn == NULL || call == NULL || call == Py_None || codec == NULL) {
        *fallback = 1;
        return NULL;
    }
    /* the fields may be rebound while Python code runs (another thread preparing
       the scope's writer, a key codec's encode): hold our own references for the
       length of the call */
    Py_INCREF(stored_fn);
    Py_INCREF(call);
    Py_INCREF(codec);
    PyObject *res = NULL, *raw = NULL;
    PyObject *stored = stored_key(stored_fn, key);
    if (stored == NULL) {
        goto done;
    }
    PyObject *guard = s->_guard;
    int hidden = 0;
    if (guard != NULL && guard != Py_None) {
        PyObject *view = s->_view;
        if (view == NULL) {
            PyErr_SetString(PyExc_AttributeError, "the scope's field _view is not set");
            goto done;
        }
        Py_INCREF(guard);
        Py_INCREF(view);
        PyObject *g = PyObject_CallOneArg(guard, view);
        Py_DECREF(view);
        int readable;
        if (g == settled_marker) {
            /* settled for good: drop the guard from the field, unless the call
               rebound it meanwhile */
            if (s->_guard == guard) {
                s->_guard = Py_NewRef(Py_None);
                Py_DECREF(guard); /* the field's reference */
            }
            readable = 1;
        }
        else {
            readable = g == NULL ? -1 : PyObject_IsTrue(g);
        }
        Py_DECREF(guard);
        Py_XDECREF(g);
        if (readable < 0) {
            goto done;
        }
        hidden = !readable;
    }
    if (hidden) {
        raw = Py_NewRef(Py_None);
    }
    else {
        raw = PyObject_Vectorcall(call, &stored, 1, NULL);
        if (raw == NULL) {
            goto done;
        }
    }
    if (raw == Py_None) {
        if (kind == READ_GET) {
            res = Py_NewRef(dflt);
        }
        else {
            /* the Python method's KeyError (ScopeCore._missing: it names a key of
               the other type that exists), raised as an instance: PyErr_SetObject
               would take a tuple key as the arguments (KeyError(*key)) and None as
               none */
            PyObject *args[2] = {self, key};
            PyObject *exc = PyObject_VectorcallMethod(str_missing, args, 2 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
            if (exc != NULL) {
                PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
                Py_DECREF(exc);
            }
        }
    }
    else if (codec == Py_None) {
        res = Py_NewRef(raw);
    }
    else {
        res = PyObject_CallOneArg(codec, raw);
    }

done:
    Py_XDECREF(raw);
    Py_XDECREF(stored);
    Py_DECREF(stored_fn);
    Py_DECREF(call);
    Py_DECREF(codec);
    return res;
}

static PyObject *
scope_fields_subscript(PyObject *self, PyObject *key)
{
    int fallback = 0;
    PyObject *res = read_point((ScopeFields *)self, key, Py_None, READ_GETITEM, &fallback);
    if (fallback) {
        PyObject *args[2] = {self, key};
        return PyObject_Vectorcall(py_getitem, args, 2, NULL);
    }
    return res;
}

/* The binding of a C method (get, a path memo) to an
   instance, as a Python function's: the descriptor itself from the class. */
static PyObject *
method_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        return Py_NewRef(self);
    }
    return PyMethod_New(self, obj);
}

/* ScopeGet: the C method get(key, default=None) of ScopeFields, a method
 * descriptor with vectorcall (s.get(k) calls it with no bound method). A call
 * with keywords or with another number of arguments goes to PointOps.get. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
} ScopeGet;

static PyObject *
scope_get_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs < 1 || !PyObject_TypeCheck(args[0], scope_fields_type)) {
        PyErr_Format(PyExc_TypeError, "get() of %.100s needs an instance of it as its first argument",
                     scope_fields_type->tp_name);
        return NULL;
    }
    if (kwnames == NULL && (nargs == 2 || nargs == 3)) {
        int fallback = 0;
        PyObject *res = read_point((ScopeFields *)args[0], args[1], nargs == 3 ? args[2] : Py_None, READ_GET, &fallback);
        if (!fallback) {
            return res;
        }
    }
    return PyObject_Vectorcall(py_get, args, nargsf, kwnames);
}

static PyObject *
scope_get_doc(PyObject *self, void *closure)
{
    return PyObject_GetAttrString(py_get, "__doc__");
}

static PyObject *
scope_get_name(PyObject *self, void *closure)
{
    return PyUnicode_FromString("get");
}

static PyGetSetDef scope_get_getset[] = {
    {"__doc__", scope_get_doc, NULL, NULL, NULL},
    {"__name__", scope_get_name, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ScopeGetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace._scope_accel.ScopeGet",
    .tp_basicsize = sizeof(ScopeGet),
    .tp_vectorcall_offset = offsetof(ScopeGet, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "get(key, default=None) of a scope, in C (see keyspace._scope_accel).",
    .tp_getset = scope_get_getset,
    .tp_descr_get = method_descr_get,
};

/* s[key] = value on the C route (0), or 1 where the Python method must run
 * instead, or -1 with an exception set. */
static int
write_point(ScopeFields *s, PyObject *key, PyObject *value)
{
    PyObject *self = (PyObject *)s;
    PyObject *stored_fn = s->_stored, *call = s->_put, *codec = s->_venc;
    if (stored_fn == NULL || call == NULL || call == Py_None || codec == NULL) {
        return 1;
    }
    Py_INCREF(stored_fn);
    Py_INCREF(call);
    Py_INCREF(codec);
    int rc = -1;
    PyObject *raw = NULL;
    PyObject *stored = stored_key(stored_fn, key);
    if (stored == NULL) {
        goto done;
    }
    raw = codec == Py_None ? Py_NewRef(value) : PyObject_CallOneArg(codec, value);
    if (raw == NULL) {
        if (PyErr_ExceptionMatches(PyExc_Exception)) {
            /* the Python method raises the codec's refusal as the value's */
            PyErr_Clear();
            rc = 1;
        }
        goto done;
    }
    if (!PyBytes_CheckExact(raw)) { /* the Python method raises or converts */
        rc = 1;
        goto done;
    }
    PyObject *call_args[2] = {stored, raw};
    PyObject *ok = PyObject_Vectorcall(call, call_args, 2, NULL);
    if (ok == NULL) {
        goto done;
    }
    Py_DECREF(ok);
    rc = 0;

done:
    Py_XDECREF(raw);
    Py_XDECREF(stored);
    Py_DECREF(stored_fn);
    Py_DECREF(call);
    Py_DECREF(codec);
    return rc;
}

/* s[key] = value, and del s[key] (value NULL: always the Python method). */
static int
scope_fields_ass_subscript(PyObject *self, PyObject *key, PyObject *value)
{
    PyObject *res;
    if (value == NULL) {
        PyObject *args[2] = {self, key};
        res = PyObject_Vectorcall(py_delitem, args, 2, NULL);
    }
    else {
        int rc = write_point((ScopeFields *)self, key, value);
        if (rc <= 0) {
            return rc;
        }
        PyObject *args[3] = {self, key, value};
        res = PyObject_Vectorcall(py_setitem, args, 3, NULL);
    }
    if (res == NULL) {
        return -1;
    }
    Py_DECREF(res);
    return 0;
}

/* s._copy(): a new instance of type(s) holding s's fields (see the module). */
static PyObject *
scope_fields_copy(PyObject *self, PyObject *Py_UNUSED(ignored))
{
    PyTypeObject *tp = Py_TYPE(self);
    if (tp->tp_basicsize != scope_fields_type->tp_basicsize || tp->tp_dictoffset != 0 || tp->tp_itemsize != 0) {
        PyErr_Format(PyExc_TypeError, "_copy() copies the fields of a scope; %.200s holds more", tp->tp_name);
        return NULL;
    }
    PyObject *made = tp->tp_alloc(tp, 0);
    if (made == NULL) {
        return NULL;
    }
    for (int i = 0; i < N_FIELDS; i++) {
        FIELD_AT(made, i) = Py_XNewRef(FIELD_AT(self, i));
    }
    return made;
}

/* s._rebound(view): s._copy() bound to view (the pure twin's _rebound is the
 * reference): _view and _data are view; _get is view.get; _read_route is
 * (get, *s._escape, bytes), or NO_ROUTE where s._escape is None. */
static PyObject *
scope_fields_rebound(PyObject *self, PyObject *view)
{
    PyObject *get = PyObject_GetAttr(view, str_get);
    if (get == NULL) {
        return NULL;
    }
    PyObject *escape = ((ScopeFields *)self)->_escape;
    PyObject *route;
    if (escape == NULL || escape == Py_None) {
        route = Py_NewRef(no_route);
    }
    else if (PyTuple_CheckExact(escape) && PyTuple_GET_SIZE(escape) == 4) {
        route = PyTuple_Pack(6, get, PyTuple_GET_ITEM(escape, 0), PyTuple_GET_ITEM(escape, 1),
                             PyTuple_GET_ITEM(escape, 2), PyTuple_GET_ITEM(escape, 3), (PyObject *)&PyBytes_Type);
    }
    else {
        PyErr_SetString(PyExc_TypeError, "_rebound(): the scope's _escape is not None or a 4-tuple");
        route = NULL;
    }
    PyObject *made = route == NULL ? NULL : scope_fields_copy(self, NULL);
    if (made == NULL) {
        Py_DECREF(get);
        Py_XDECREF(route);
        return NULL;
    }
    ScopeFields *m = (ScopeFields *)made;
    Py_XSETREF(m->_view, Py_NewRef(view));
    Py_XSETREF(m->_data, Py_NewRef(view));
    Py_XSETREF(m->_get, get);
    Py_XSETREF(m->_read_route, route);
    return made;
}

static int
scope_fields_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    for (int i = 0; i < N_FIELDS; i++) {
        Py_VISIT(FIELD_AT(self, i));
    }
    return 0;
}

static int
scope_fields_clear(PyObject *self)
{
    for (int i = 0; i < N_FIELDS; i++) {
        Py_CLEAR(FIELD_AT(self, i));
    }
    return 0;
}

static void
scope_fields_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    scope_fields_clear(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyMethodDef scope_fields_methods[] = {
    {"_copy", scope_fields_copy, METH_NOARGS,
     "A new instance of this object's class holding this one's fields, made without __init__."},
    {"_rebound", scope_fields_rebound, METH_O,
     "_rebound(view): a _copy() whose view, data view, point read and read route are view's."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot scope_fields_slots[] = {
    {Py_tp_doc, "The fields of a scope as declared members, and its point operations in C\n"
                "(see keyspace._scope_accel)."},
    {Py_tp_members, scope_fields_members},
    {Py_tp_methods, scope_fields_methods},
    {Py_tp_traverse, scope_fields_traverse},
    {Py_tp_clear, scope_fields_clear},
    {Py_tp_dealloc, scope_fields_dealloc},
    {Py_tp_new, PyType_GenericNew},
    {Py_mp_subscript, scope_fields_subscript},
    {Py_mp_ass_subscript, scope_fields_ass_subscript},
    {0, NULL},
};

static PyType_Spec scope_fields_spec = {
    .name = "keyspace._scope_accel.ScopeFields",
    .basicsize = sizeof(ScopeFields),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = scope_fields_slots,
};

/* Make ScopeFields on PointOps of keyspace._scope_fields, after checking that its
 * members are that module's FIELDS, in order; take the Python methods it hands on. */
static PyObject *
make_scope_fields(void)
{
    PyObject *ref = PyImport_ImportModule("keyspace._scope_fields");
    if (ref == NULL) {
        return NULL;
    }
    PyObject *fields = PyObject_GetAttrString(ref, "FIELDS");
    PyObject *base = PyObject_GetAttrString(ref, "PointOps");
    settled_marker = PyObject_GetAttrString(ref, "SETTLED");
    no_route = PyObject_GetAttrString(ref, "NO_ROUTE");
    Py_DECREF(ref);
    PyObject *type = NULL;
    if (fields == NULL || base == NULL || settled_marker == NULL || no_route == NULL) {
        goto done;
    }
    if (!PyTuple_Check(fields) || PyTuple_GET_SIZE(fields) != N_FIELDS) {
        PyErr_SetString(PyExc_ImportError, "keyspace._scope_fields.FIELDS is not the C type's members");
        goto done;
    }
    for (int i = 0; i < N_FIELDS; i++) {
        PyObject *name = PyTuple_GET_ITEM(fields, i);
        const char *text = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
        if (text == NULL || strcmp(text, scope_fields_members[i].name) != 0
            || scope_fields_members[i].offset
                   != (Py_ssize_t)(offsetof(ScopeFields, _bound) + (size_t)i * sizeof(PyObject *))) {
            PyErr_Clear();
            PyErr_Format(PyExc_ImportError, "keyspace._scope_fields.FIELDS[%d] is not the C type's member %s", i,
                         scope_fields_members[i].name);
            goto done;
        }
    }
    if ((py_getitem = PyObject_GetAttrString(base, "__getitem__")) == NULL
        || (py_get = PyObject_GetAttrString(base, "get")) == NULL
        || (py_setitem = PyObject_GetAttrString(base, "__setitem__")) == NULL
        || (py_delitem = PyObject_GetAttrString(base, "__delitem__")) == NULL
        || (str_missing = PyUnicode_InternFromString("_missing")) == NULL
        || (str_get = PyUnicode_InternFromString("get")) == NULL) {
        goto done;
    }
    type = PyType_FromSpecWithBases(&scope_fields_spec, base);
    scope_fields_type = (PyTypeObject *)type;
    ScopeGet *get = type == NULL ? NULL : PyObject_New(ScopeGet, &ScopeGetType);
    if (get != NULL) {
        get->vectorcall = scope_get_vectorcall;
    }
    if (type != NULL && (get == NULL || PyObject_SetAttrString(type, "get", (PyObject *)get) < 0)) {
        Py_CLEAR(type);
    }
    Py_XDECREF(get);

done:
    Py_XDECREF(fields);
    Py_XDECREF(base);
    return type;
}



/* path_memo(name, fallback): a method c(self, *path, **kw) that returns
 * self.<name>[path] (a dict) when called without keywords, path is a key of it
 * and every component is an exact str or bytes (an equal path of other types,
 * (1,) == (True,), is not the kept one); every other call is fallback(self,
 * *path, **kw), the reference, which makes the object and may keep it. A
 * lookup that raises (no such attribute, an unhashable component, a
 * component's __hash__ or __eq__) goes to fallback too, as the reference's
 * lookup catches it, except MemoryError and what is not an Exception; an
 * attribute that is not exactly a dict goes to fallback. Installed in a class
 * dict it is a method descriptor: s.m(...) calls it with no bound method, and a
 * bound method of it (m = s.m) calls it with no Python frame. Where the schemes'
 * C module is not built (no is_exact_path from its capsule), every call is
 * fallback's. Cost: an attribute lookup, a tuple of the arguments and one dict
 * lookup. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *name;
    PyObject *fallback;
} PathMemo;

static PyObject *
path_memo_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PathMemo *m = (PathMemo *)callable;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames != NULL || n < 1 || transform_api == NULL) { /* without the schemes' C: the reference */
        return PyObject_Vectorcall(m->fallback, args, nargsf, kwnames);
    }
    PyObject *memo = PyObject_GetAttr(args[0], m->name);
    if (memo == NULL) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError) || !PyErr_ExceptionMatches(PyExc_Exception)) {
            return NULL;
        }
        PyErr_Clear();
        return PyObject_Vectorcall(m->fallback, args, nargsf, kwnames);
    }
    if (!PyDict_CheckExact(memo)) {
        Py_DECREF(memo);
        return PyObject_Vectorcall(m->fallback, args, nargsf, kwnames);
    }
    PyObject *path = PyTuple_New(n - 1);
    if (path == NULL) {
        Py_DECREF(memo);
        return NULL;
    }
    for (Py_ssize_t i = 1; i < n; i++) {
        PyTuple_SET_ITEM(path, i - 1, Py_NewRef(args[i]));
    }
    PyObject *found = PyDict_GetItemWithError(memo, path); /* borrowed */
    if (found != NULL) {
        /* no Python code runs between the lookup and here: found is alive */
        if (transform_api->is_exact_path(path)) {
            Py_INCREF(found);
            Py_DECREF(path);
            Py_DECREF(memo);
            return found;
        }
    }
    else if (PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError) || !PyErr_ExceptionMatches(PyExc_Exception)) {
            Py_DECREF(path);
            Py_DECREF(memo);
            return NULL;
        }
        PyErr_Clear();
    }
    Py_DECREF(path);
    Py_DECREF(memo);
    return PyObject_Vectorcall(m->fallback, args, nargsf, kwnames);
}

static int
path_memo_traverse(PyObject *self, visitproc visit, void *arg)
{
    PathMemo *m = (PathMemo *)self;
    Py_VISIT(m->name);
    Py_VISIT(m->fallback);
    return 0;
}

static int
path_memo_clear(PyObject *self)
{
    PathMemo *m = (PathMemo *)self;
    Py_CLEAR(m->name);
    Py_CLEAR(m->fallback);
    return 0;
}

static void
path_memo_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    path_memo_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
path_memo_get_attr(PyObject *self, void *name)
{
    PyObject *fallback = ((PathMemo *)self)->fallback;
    if (fallback == NULL) {
        PyErr_SetString(PyExc_AttributeError, (const char *)name);
        return NULL;
    }
    return PyObject_GetAttrString(fallback, (const char *)name);
}

static PyGetSetDef path_memo_getset[] = {
    {"__doc__", path_memo_get_attr, NULL, NULL, "__doc__"},
    {"__name__", path_memo_get_attr, NULL, NULL, "__name__"},
    {"__qualname__", path_memo_get_attr, NULL, NULL, "__qualname__"},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef path_memo_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(PathMemo, fallback), READONLY, "the reference"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject PathMemoType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace._scope_accel.PathMemo",
    .tp_basicsize = sizeof(PathMemo),
    .tp_dealloc = path_memo_dealloc,
    .tp_vectorcall_offset = offsetof(PathMemo, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "A method handing out the objects kept per path (see keyspace._scope_accel.path_memo).",
    .tp_traverse = path_memo_traverse,
    .tp_clear = path_memo_clear,
    .tp_getset = path_memo_getset,
    .tp_members = path_memo_members,
    .tp_descr_get = method_descr_get,
};

static PyObject *
path_memo(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "path_memo() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    if (!PyUnicode_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "name must be a str");
        return NULL;
    }
    if (!PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "fallback must be callable");
        return NULL;
    }
    PathMemo *m = PyObject_GC_New(PathMemo, &PathMemoType);
    if (m == NULL) {
        return NULL;
    }
    m->vectorcall = path_memo_vectorcall;
    m->name = Py_NewRef(args[0]);
    PyUnicode_InternInPlace(&m->name);
    m->fallback = Py_NewRef(args[1]);
    PyObject_GC_Track(m);
    return (PyObject *)m;
}


static PyMethodDef scope_accel_methods[] = {
    {"path_memo", (PyCFunction)(void (*)(void))path_memo, METH_FASTCALL,
     "path_memo(name, fallback)\n\n"
     "A method c(self, *path, **kw): self.<name>[path] for an exact path kept there, else fallback(self, *path, **kw)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef scope_accel_module = {
    PyModuleDef_HEAD_INIT,
    "keyspace._scope_accel",
    "The C twin of a scope's fields and point operations, and the path memo of transactions.",
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
    if (PyType_Ready(&PathMemoType) < 0 || PyType_Ready(&ScopeGetType) < 0) {
        return NULL;
    }
    transform_api = PyCapsule_Import("keyspace.schemes._layouts_accel.transform_api", 0);
    if (transform_api == NULL) { /* not built: Transform is then no layout's stored */
        PyErr_Clear();
    }
    PyObject *m = PyModule_Create(&scope_accel_module);
    if (m == NULL) {
        return NULL;
    }
    PyObject *fields = make_scope_fields();
    if (fields == NULL || PyModule_AddObject(m, "ScopeFields", fields) < 0) {
        Py_XDECREF(fields);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(fields); /* the reference scope_fields_type holds */
    return m;
}
