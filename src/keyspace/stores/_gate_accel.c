/* Optional C gate of an engine handle (keyspace.stores._gate is the reference).
 *
 * An engine binding that releases the GIL inside its calls (plyvel) crashes the
 * process when its handle is closed while another thread is inside a call. A
 * Gate counts the calls in flight: every call through it increments the count
 * before the engine is called and decrements it after, with the GIL held, so
 * that close (holding the GIL) sees every call that has begun and not ended.
 *
 *   g = Gate()
 *   f = g.guard(fn)        f(*args) calls fn(*args) counted; RuntimeError
 *                          ("... closed") once g is closed, fn not called
 *   f = g.guard(fn, translate)
 *                          the same; an error of the call (the refusal
 *                          included) is raised as translate(error, key), as
 *                          translated's
 *   it = g.guard_iter(i)   next(it) is next(i), counted the same way
 *   it = g.guard_iter(i, translate)
 *                          the same; an error of a step (the refusal included)
 *                          is raised as translate(error), chained from it
 *   it = g.guard_chain(iterables, translate=None)
 *                          the items of each iterable in turn (as
 *                          itertools.chain.from_iterable), every step counted:
 *                          one iterator between the caller and the engine's
 *                          iterators
 *   g.run(fn, *args, **kw) fn(*args, **kw), counted (for a body of several calls)
 *   g.close()              every later call refuses; calls in flight go on
 *   g.inflight             the calls in flight now
 *   g.closed               whether close() was called
 *
 * and, for a store view's engine calls whether gated or not
 * (keyspace.stores._translated.translated_py is its reference):
 *
 *   f = translated(fn, translate)
 *   f(*args, **kw)         fn(*args, **kw), not counted; an Exception it raises
 *                          that is not a keyspace error is raised as
 *                          translate(error, key) (key: the first positional
 *                          argument, None without one), chained from it
 *
 * A translated error is never a keyspace error: those, and BaseExceptions other
 * than Exception, go through as they are, here and in the gate's iterators.
 *
 * and a lock for the statements of a connection that a store's threads share
 * (threading.Lock is its reference, with the same behaviour but for signals):
 *
 *   m = Mutex()
 *   with m: ...            acquire, then release; a thread that waits for it
 *                          lets the others run (the GIL released while it
 *                          waits), and a signal is handled once it has it
 *   m.acquire() / m.release() / m.locked()
 *                          as threading.Lock's (release of an unlocked Mutex:
 *                          RuntimeError); acquire takes no arguments
 *
 * Its acquire parses no arguments (threading.Lock's acquire, and its `with`
 * entry, parse their keywords at every call: about 700 instructions).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

typedef struct {
    PyObject_HEAD
    Py_ssize_t inflight;
    int closed;
} Gate;

static PyTypeObject GateType;
static PyTypeObject GuardedType;
static PyTypeObject GuardedIterType;
static PyObject *keyspace_error; /* keyspace.errors.KeyspaceError */

static int
gate_refuses(Gate *gate)
{
    if (gate->closed) {
        PyErr_SetString(PyExc_RuntimeError, "the store is closed");
        return 1;
    }
    return 0;
}

static PyObject *raise_translated(PyObject *translate, PyObject *key);

/* -- Guarded: an engine call, counted by its gate, its errors translated ------- */

typedef struct {
    PyObject_HEAD
    Gate *gate;          /* NULL: not counted */
    PyObject *fn;
    PyObject *translate; /* NULL: errors as they are */
    vectorcallfunc vectorcall;
} Guarded;

static PyObject *
guarded_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Guarded *self = (Guarded *)op;
    Gate *gate = self->gate;
    PyObject *out;
    if (gate == NULL) {
        out = PyObject_Vectorcall(self->fn, args, nargsf, kwnames);
    }
    else {
        if (gate_refuses(gate)) {
            out = NULL;
        }
        else {
            gate->inflight++;
            out = PyObject_Vectorcall(self->fn, args, nargsf, kwnames);
            gate->inflight--;
        }
    }
    if (out == NULL && self->translate != NULL) {
        return raise_translated(self->translate, PyVectorcall_NARGS(nargsf) > 0 ? args[0] : Py_None);
    }
    return out;
}

static int
guarded_traverse(PyObject *op, visitproc visit, void *arg)
{
    Guarded *self = (Guarded *)op;
    Py_VISIT(self->gate);
    Py_VISIT(self->fn);
    Py_VISIT(self->translate);
    return 0;
}

static int
guarded_clear(PyObject *op)
{
    Guarded *self = (Guarded *)op;
    Py_CLEAR(self->gate);
    Py_CLEAR(self->fn);
    Py_CLEAR(self->translate);
    return 0;
}

static void
guarded_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    guarded_clear(op);
    Py_TYPE(op)->tp_free(op);
}

static PyTypeObject GuardedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace.stores._gate_accel.Guarded",
    .tp_doc = "An engine call counted by its Gate (if any), its errors translated (if asked; see the module).",
    .tp_basicsize = sizeof(Guarded),
    .tp_vectorcall_offset = offsetof(Guarded, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_traverse = guarded_traverse,
    .tp_clear = guarded_clear,
    .tp_dealloc = guarded_dealloc,
};

/* -- GuardedIter: an iterator whose steps its gate counts ----------------------- */

typedef struct {
    PyObject_HEAD
    Gate *gate;
    PyObject *it;       /* the iterator stepped now; NULL between two of a chain */
    iternextfunc next;  /* its tp_iternext */
    PyObject *rest;     /* a chain's iterator of the iterables still to come; NULL: none */
    PyObject *translate; /* NULL: errors as they are */
    int running;        /* inside a step: a step from inside it is refused */
} GuardedIter;

/* Raise translate(error) (key not NULL: translate(error, key)) from the error
 * set now, as the reference's `except Exception as exc: raise translate(exc)
 * from exc` does: only an Exception that is not a keyspace error is translated
 * (StopIteration and the end of the iteration are not errors; keyspace errors,
 * KeyboardInterrupt, SystemExit and other BaseExceptions go through as they
 * are), the new error's __cause__ and __context__ are the error; a translation
 * that returns the error itself raises it as it was. Always returns NULL. */
static PyObject *
raise_translated(PyObject *translate, PyObject *key)
{
    if (translate == NULL || !PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_StopIteration)
        || !PyErr_ExceptionMatches(PyExc_Exception) || PyErr_ExceptionMatches(keyspace_error)) {
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
    PyObject *exc = PyObject_Vectorcall(translate, args, key == NULL ? 1 : 2, NULL);
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

/* A chain's next iterator, from the iterables still to come: 1 when there is one,
 * 0 at the end of the chain, -1 on an error. */
static int
guarded_advance(GuardedIter *self)
{
    PyObject *iterable = PyIter_Next(self->rest);
    if (iterable == NULL) {
        Py_CLEAR(self->rest);
        return PyErr_Occurred() ? -1 : 0;
    }
    self->it = PyObject_GetIter(iterable);
    Py_DECREF(iterable);
    if (self->it == NULL) {
        return -1;
    }
    self->next = Py_TYPE(self->it)->tp_iternext;
    return 1;
}

static PyObject *guarded_step(GuardedIter *self);

/* A step; one asked for from inside a step (an iterable, or translate, stepping
 * this iterator again) raises ValueError, as a running generator does: it would
 * otherwise replace or free the iterator that the outer step is inside. After
 * the end or an error every step ends the iteration (StopIteration). */
static PyObject *
guarded_iternext(PyObject *op)
{
    GuardedIter *self = (GuardedIter *)op;
    if (self->running) {
        PyErr_SetString(PyExc_ValueError, "generator already executing");
        return NULL;
    }
    self->running = 1;
    PyObject *out = guarded_step(self);
    if (out == NULL) {
        /* ended, or failed: finished for good, as a generator is once it has
           returned or raised (a later step neither refuses nor steps again) */
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        Py_CLEAR(self->it);
        Py_CLEAR(self->rest);
        PyErr_Restore(type, value, tb);
    }
    self->running = 0;
    return out;
}

static PyObject *
guarded_step(GuardedIter *self)
{
    Gate *gate = self->gate;
    for (;;) {
        if (self->it == NULL) {
            int more = self->rest == NULL ? 0 : guarded_advance(self);
            if (more <= 0) {
                return more < 0 ? raise_translated(self->translate, NULL) : NULL;
            }
        }
        if (gate_refuses(gate)) {
            return raise_translated(self->translate, NULL);
        }
        gate->inflight++;
        PyObject *out = self->next(self->it);
        gate->inflight--;
        if (out != NULL) {
            return out;
        }
        if (self->rest == NULL) { /* one iterator (guard_iter), or a chain's last */
            return self->translate != NULL ? raise_translated(self->translate, NULL) : NULL;
        }
        if (PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_StopIteration)) {
                return raise_translated(self->translate, NULL);
            }
            PyErr_Clear();
        }
        Py_CLEAR(self->it); /* on to the chain's next iterable */
    }
}

static int
guarded_iter_traverse(PyObject *op, visitproc visit, void *arg)
{
    GuardedIter *self = (GuardedIter *)op;
    Py_VISIT(self->gate);
    Py_VISIT(self->it);
    Py_VISIT(self->rest);
    Py_VISIT(self->translate);
    return 0;
}

static int
guarded_iter_clear(PyObject *op)
{
    GuardedIter *self = (GuardedIter *)op;
    Py_CLEAR(self->gate);
    Py_CLEAR(self->it);
    Py_CLEAR(self->rest);
    Py_CLEAR(self->translate);
    return 0;
}

static void
guarded_iter_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    guarded_iter_clear(op);
    Py_TYPE(op)->tp_free(op);
}

static PyTypeObject GuardedIterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace.stores._gate_accel.GuardedIter",
    .tp_doc = "An iterator whose steps its Gate counts (see the module).",
    .tp_basicsize = sizeof(GuardedIter),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = guarded_iternext,
    .tp_traverse = guarded_iter_traverse,
    .tp_clear = guarded_iter_clear,
    .tp_dealloc = guarded_iter_dealloc,
};

/* -- Gate ------------------------------------------------------------------------ */

static PyObject *
gate_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) != 0 || (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)) {
        PyErr_SetString(PyExc_TypeError, "Gate() takes no arguments");
        return NULL;
    }
    Gate *self = (Gate *)type->tp_alloc(type, 0);
    if (self != NULL) {
        self->inflight = 0;
        self->closed = 0;
    }
    return (PyObject *)self;
}

/* A Guarded of fn, counted by gate (NULL: not counted), its errors translated by
 * translate (NULL or None: not translated). */
static PyObject *
guarded_new(Gate *gate, PyObject *fn, PyObject *translate)
{
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "an engine call must be callable, not %.100s", Py_TYPE(fn)->tp_name);
        return NULL;
    }
    if (translate == Py_None) {
        translate = NULL;
    }
    if (translate != NULL && !PyCallable_Check(translate)) {
        PyErr_Format(PyExc_TypeError, "translate must be callable, not %.100s", Py_TYPE(translate)->tp_name);
        return NULL;
    }
    Guarded *out = PyObject_GC_New(Guarded, &GuardedType);
    if (out == NULL) {
        return NULL;
    }
    out->gate = (Gate *)Py_XNewRef((PyObject *)gate);
    out->fn = Py_NewRef(fn);
    out->translate = Py_XNewRef(translate);
    out->vectorcall = guarded_vectorcall;
    PyObject_GC_Track(out);
    return (PyObject *)out;
}

static PyObject *
gate_guard(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "guard(fn, translate=None) takes one or two arguments");
        return NULL;
    }
    return guarded_new((Gate *)op, args[0], nargs == 2 ? args[1] : NULL);
}

/* translated(fn, translate): fn with its errors translated, not counted. */
static PyObject *
module_translated(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || args[1] == Py_None) {
        PyErr_SetString(PyExc_TypeError, "translated(fn, translate) takes an engine call and its translation");
        return NULL;
    }
    return guarded_new(NULL, args[0], args[1]);
}

static PyMethodDef module_methods[] = {
    {"translated", (PyCFunction)(void (*)(void))module_translated, METH_FASTCALL,
     "translated(fn, translate): fn, its errors raised as translate(error, key) (see the module)."},
    {NULL, NULL, 0, NULL},
};

/* The guarded iterator of guard_iter (chain 0: args[0] is the iterable) and
 * guard_chain (chain 1: args[0] is the iterable of iterables). */
static PyObject *
guarded_iter_new(PyObject *op, PyObject *const *args, Py_ssize_t nargs, int chain)
{
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError,
                        chain ? "guard_chain takes an iterable of iterables and, optionally, translate"
                              : "guard_iter takes an iterable and, optionally, translate");
        return NULL;
    }
    PyObject *translate = nargs == 2 && args[1] != Py_None ? args[1] : NULL;
    if (translate != NULL && !PyCallable_Check(translate)) {
        PyErr_Format(PyExc_TypeError, "translate must be callable, not %.100s", Py_TYPE(translate)->tp_name);
        return NULL;
    }
    PyObject *it = PyObject_GetIter(args[0]);
    if (it == NULL) {
        return NULL;
    }
    GuardedIter *out = PyObject_GC_New(GuardedIter, &GuardedIterType);
    if (out == NULL) {
        Py_DECREF(it);
        return NULL;
    }
    Py_INCREF(op);
    out->gate = (Gate *)op;
    out->it = chain ? NULL : it;
    out->next = chain ? NULL : Py_TYPE(it)->tp_iternext;
    out->rest = chain ? it : NULL;
    Py_XINCREF(translate);
    out->translate = translate;
    out->running = 0;
    PyObject_GC_Track(out);
    return (PyObject *)out;
}

static PyObject *
gate_guard_iter(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    return guarded_iter_new(op, args, nargs, 0);
}

static PyObject *
gate_guard_chain(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    return guarded_iter_new(op, args, nargs, 1);
}

static PyObject *
gate_run(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Gate *gate = (Gate *)op;
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "run takes a callable and its arguments");
        return NULL;
    }
    if (gate_refuses(gate)) {
        return NULL;
    }
    gate->inflight++;
    PyObject *out = PyObject_Vectorcall(args[0], args + 1, (size_t)(nargs - 1), kwnames);
    gate->inflight--;
    return out;
}

static PyObject *
gate_close(PyObject *op, PyObject *Py_UNUSED(ignored))
{
    ((Gate *)op)->closed = 1;
    Py_RETURN_NONE;
}

static PyObject *
gate_get_inflight(PyObject *op, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(((Gate *)op)->inflight);
}

static PyObject *
gate_get_closed(PyObject *op, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(((Gate *)op)->closed);
}

static PyMethodDef gate_methods[] = {
    {"guard", (PyCFunction)(void (*)(void))gate_guard, METH_FASTCALL,
     "guard(fn, translate=None): fn, its calls counted; with translate, its errors raised as "
     "translate(error, key)."},
    {"guard_iter", (PyCFunction)(void (*)(void))gate_guard_iter, METH_FASTCALL,
     "guard_iter(iterable, translate=None): its iterator, its steps counted; with translate, "
     "an error of a step is raised as translate(error), chained from it."},
    {"guard_chain", (PyCFunction)(void (*)(void))gate_guard_chain, METH_FASTCALL,
     "guard_chain(iterables, translate=None): the items of each iterable in turn, every step "
     "counted (errors as guard_iter's)."},
    {"run", (PyCFunction)(void (*)(void))gate_run, METH_FASTCALL | METH_KEYWORDS,
     "run(fn, *args, **kw): fn(*args, **kw), counted."},
    {"close", gate_close, METH_NOARGS, "close(): every later call refuses."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef gate_getset[] = {
    {"inflight", gate_get_inflight, NULL, "The calls in flight now.", NULL},
    {"closed", gate_get_closed, NULL, "Whether close() was called.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject GateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace.stores._gate_accel.Gate",
    .tp_doc = "Gate(): counts the calls in flight into an engine handle (see the module).",
    .tp_basicsize = sizeof(Gate),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = gate_new,
    .tp_methods = gate_methods,
    .tp_getset = gate_getset,
};

typedef struct {
    PyObject_HEAD
    PyThread_type_lock lock;
    char held;
} Mutex;

static PyObject *
mutex_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) != 0 || (kwds != NULL && PyDict_GET_SIZE(kwds) != 0)) {
        PyErr_SetString(PyExc_TypeError, "Mutex() takes no arguments");
        return NULL;
    }
    Mutex *self = (Mutex *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->lock = PyThread_allocate_lock();
    if (self->lock == NULL) {
        Py_DECREF(self);
        PyErr_SetString(PyExc_MemoryError, "cannot allocate a lock");
        return NULL;
    }
    return (PyObject *)self;
}

static void
mutex_dealloc(PyObject *op)
{
    Mutex *self = (Mutex *)op;
    if (self->lock != NULL) {
        if (self->held) {
            PyThread_release_lock(self->lock);
        }
        PyThread_free_lock(self->lock);
    }
    Py_TYPE(op)->tp_free(op);
}

static PyObject *
mutex_acquire(PyObject *op, PyObject *Py_UNUSED(ignored))
{
    Mutex *self = (Mutex *)op;
    if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(self->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
    }
    self->held = 1;
    Py_RETURN_TRUE;
}

static PyObject *
mutex_release(PyObject *op, PyObject *Py_UNUSED(ignored))
{
    Mutex *self = (Mutex *)op;
    if (!self->held) {
        PyErr_SetString(PyExc_RuntimeError, "release unlocked lock");
        return NULL;
    }
    self->held = 0;
    PyThread_release_lock(self->lock);
    Py_RETURN_NONE;
}

static PyObject *
mutex_exit(PyObject *op, PyObject *const *Py_UNUSED(args), Py_ssize_t Py_UNUSED(n))
{
    return mutex_release(op, NULL);
}

static PyObject *
mutex_locked(PyObject *op, PyObject *Py_UNUSED(ignored))
{
    return PyBool_FromLong(((Mutex *)op)->held);
}

static PyMethodDef mutex_methods[] = {
    {"acquire", mutex_acquire, METH_NOARGS, "acquire(): wait for the lock and take it; True."},
    {"release", mutex_release, METH_NOARGS, "release(): give the lock back."},
    {"locked", mutex_locked, METH_NOARGS, "locked(): whether the lock is taken."},
    {"__enter__", mutex_acquire, METH_NOARGS, "Take the lock (acquire)."},
    {"__exit__", (PyCFunction)(void (*)(void))mutex_exit, METH_FASTCALL, "Give the lock back (release)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MutexType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace.stores._gate_accel.Mutex",
    .tp_doc = "Mutex(): a lock as threading.Lock, whose acquire parses no arguments (see the module).",
    .tp_basicsize = sizeof(Mutex),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = mutex_new,
    .tp_dealloc = mutex_dealloc,
    .tp_methods = mutex_methods,
};

static struct PyModuleDef gate_accel_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "keyspace.stores._gate_accel",
    .m_doc = "Optional C gate that counts the calls in flight into an engine handle, a store view's "
              "translated engine calls, and a lock of a shared connection.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__gate_accel(void)
{
    PyObject *errors = PyImport_ImportModule("keyspace.errors");
    if (errors == NULL) {
        return NULL;
    }
    keyspace_error = PyObject_GetAttrString(errors, "KeyspaceError");
    Py_DECREF(errors);
    if (keyspace_error == NULL || PyType_Ready(&GateType) < 0 || PyType_Ready(&GuardedType) < 0
        || PyType_Ready(&GuardedIterType) < 0 || PyType_Ready(&MutexType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&gate_accel_module);
    if (module == NULL) {
        return NULL;
    }
    Py_INCREF(&GateType);
    if (PyModule_AddObject(module, "Gate", (PyObject *)&GateType) < 0) {
        Py_DECREF(&GateType);
        Py_DECREF(module);
        return NULL;
    }
    Py_INCREF(&MutexType);
    if (PyModule_AddObject(module, "Mutex", (PyObject *)&MutexType) < 0) {
        Py_DECREF(&MutexType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
