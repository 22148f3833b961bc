/* The C twin of the scan plan's short scan (keyspace._scan_plan.short_py is its
 * reference).
 *
 * Short(reference) is a callable taking the seventeen arguments of
 * short_py (layout, own, bound, scheme, codec, guard, hidden, view, decoder,
 * touch, start, stop, include_start, include_stop, reverse, limit, prefix). It
 * reads the common short scan itself: a limit that is an int from 1 to 1024,
 * flags that are True or False, no prefix, no read guard, and own ranges that
 * are a tuple of (bytes, bytes | None) pairs. Then, as the reference does: lo = bound(start)
 * (layout.prefix without a start; a NUL byte added where include_start is
 * False), hi = bound(stop) (a NUL byte added where include_stop is True), the
 * own ranges clipped to [lo, hi), touch() and [] where none is left, reversed
 * with reverse. Where the layout's ranges hold others' keys (layout.exact
 * false), each range is read in limited reads, each decoded (the decoder
 * leaves others' keys out), as the reference does; else one call of
 * view.read_pages(ranges, reverse, limit), each
 * page decoded by decoder, or where the layout is plain and decoder is
 * layout.decode_chunk, view.read_pages(ranges, reverse, limit, False,
 * len(layout.prefix)), whose pages are the items. Every other call (and one
 * whose bound gives no bytes) is the reference's own, with the same arguments:
 * results and errors are the reference's. Cost: the calls of bound, read_pages
 * and decoder, and no Python frame.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <string.h>

#define N_ARGS 17
#define MOST 1024

static PyObject *str_exact, *str_plain, *str_prefix, *str_decode_chunk, *str_read_pages, *nul_byte;

typedef struct {
    PyObject_HEAD
    PyObject *reference;
    vectorcallfunc vectorcall;
} Short;

/* -1, 0 or 1 as a < b, a == b or a > b, for exact bytes */
static int
compare(PyObject *a, PyObject *b)
{
    Py_ssize_t an = PyBytes_GET_SIZE(a), bn = PyBytes_GET_SIZE(b);
    int c = memcmp(PyBytes_AS_STRING(a), PyBytes_AS_STRING(b), (size_t)(an < bn ? an : bn));
    if (c != 0) {
        return c < 0 ? -1 : 1;
    }
    return an < bn ? -1 : an > bn;
}

/* 1 when the attribute name of obj is True, 0 when not, -1 with an error set */
static int
attribute_true(PyObject *obj, PyObject *name)
{
    PyObject *value = PyObject_GetAttr(obj, name);
    if (value == NULL) {
        return -1;
    }
    int truth = value == Py_True;
    Py_DECREF(value);
    return truth;
}

/* the stored bound of key: bound(key), with a NUL byte added where nul; NULL with
 * an error set, or Py_None (a new reference) where bound gives no bytes */
static PyObject *
stored_bound(PyObject *bound, PyObject *key, int nul)
{
    PyObject *made = PyObject_CallOneArg(bound, key);
    if (made == NULL) {
        return NULL;
    }
    if (!PyBytes_CheckExact(made)) {
        Py_DECREF(made);
        Py_RETURN_NONE;
    }
    if (nul) {
        PyBytes_Concat(&made, nul_byte);
    }
    return made;
}

/* own clipped to [lo, hi) (hi NULL: no end), as the reference's loop and intersect
 * do; Py_None (a new reference) where own is not a tuple of (bytes, bytes | None) */
static PyObject *
clipped(PyObject *own, PyObject *lo, PyObject *hi)
{
    PyObject *ranges = PyList_New(0);
    if (ranges == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(own); i++) {
        PyObject *range = PyTuple_GET_ITEM(own, i);
        if (!PyTuple_CheckExact(range) || PyTuple_GET_SIZE(range) != 2 || !PyBytes_CheckExact(PyTuple_GET_ITEM(range, 0))
            || (PyTuple_GET_ITEM(range, 1) != Py_None && !PyBytes_CheckExact(PyTuple_GET_ITEM(range, 1)))) {
            Py_DECREF(ranges);
            Py_RETURN_NONE;
        }
        PyObject *r_lo = PyTuple_GET_ITEM(range, 0), *r_hi = PyTuple_GET_ITEM(range, 1);
        PyObject *a = compare(r_lo, lo) >= 0 ? r_lo : lo;
        PyObject *b;
        if (hi == NULL) {
            b = r_hi;
        }
        else if (r_hi == Py_None) {
            b = hi;
        }
        else {
            b = compare(r_hi, hi) <= 0 ? r_hi : hi;
        }
        if (b != Py_None && compare(a, b) >= 0) {
            continue;
        }
        PyObject *pair = PyTuple_Pack(2, a, b);
        if (pair == NULL || PyList_Append(ranges, pair) < 0) {
            Py_XDECREF(pair);
            Py_DECREF(ranges);
            return NULL;
        }
        Py_DECREF(pair);
    }
    return ranges;
}

/* items extended by the items of page (any iterable): 0, or -1 with an error set */
static int
extend(PyObject *items, PyObject *page)
{
    PyObject *list = PyList_CheckExact(page) ? (Py_INCREF(page), page) : PySequence_List(page);
    if (list == NULL) {
        return -1;
    }
    int failed = PyList_SetSlice(items, PY_SSIZE_T_MAX, PY_SSIZE_T_MAX, list);
    Py_DECREF(list);
    return failed;
}

/* the items of every page of pages (NULL: an error is set, returned as it is), each
 * page decoded by decoder where it is not NULL, in one new list; steals pages */
static PyObject *
joined(PyObject *pages, PyObject *decoder)
{
    if (pages == NULL) {
        return NULL;
    }
    PyObject *out = PyList_New(0);
    PyObject *it = out == NULL ? NULL : PyObject_GetIter(pages);
    Py_DECREF(pages);
    if (it == NULL) {
        Py_XDECREF(out);
        return NULL;
    }
    PyObject *page;
    while ((page = PyIter_Next(it)) != NULL) {
        PyObject *items = decoder == NULL ? Py_NewRef(page) : PyObject_CallOneArg(decoder, page);
        Py_DECREF(page);
        int failed = items == NULL || extend(out, items) < 0;
        Py_XDECREF(items);
        if (failed) {
            Py_DECREF(it);
            Py_DECREF(out);
            return NULL;
        }
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* the items of view.read_pages([(lo, hi)], reverse, want), its pages joined in one list */
static PyObject *
read_joined(PyObject *view, PyObject *lo, PyObject *hi, PyObject *reverse, Py_ssize_t want)
{
    PyObject *range = PyTuple_Pack(2, lo, hi);
    PyObject *one = range == NULL ? NULL : PyList_New(1);
    PyObject *limit = one == NULL ? NULL : PyLong_FromSsize_t(want);
    if (limit == NULL) {
        Py_XDECREF(one);
        Py_XDECREF(range);
        return NULL;
    }
    PyList_SET_ITEM(one, 0, range);
    PyObject *call[5] = {NULL, view, one, reverse, limit}; /* call[0]: the offset's spare slot */
    PyObject *pages = PyObject_VectorcallMethod(str_read_pages, call + 1, 4 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    Py_DECREF(one);
    Py_DECREF(limit);
    return joined(pages, NULL);
}

/* the short scan of a layout whose ranges hold others' keys, as the reference
 * reads it: each range in limited reads (the first of as many items as are still
 * wanted, each next, after the last key read, four times larger up to 1024),
 * each read decoded (decoder leaves the others' keys out), until most own items
 * are found or the range ends */
static PyObject *
filtered_read(PyObject *view, PyObject *decoder, PyObject *ranges, int reverse, Py_ssize_t most)
{
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        return NULL;
    }
    PyObject *flag = reverse ? Py_True : Py_False;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ranges) && PyList_GET_SIZE(out) < most; i++) {
        PyObject *range = PyList_GET_ITEM(ranges, i);
        PyObject *lo = Py_NewRef(PyTuple_GET_ITEM(range, 0)), *hi = Py_NewRef(PyTuple_GET_ITEM(range, 1));
        Py_ssize_t want = most - PyList_GET_SIZE(out);
        int failed = 0;
        while (PyList_GET_SIZE(out) < most) {
            if (want < most - PyList_GET_SIZE(out)) {
                want = most - PyList_GET_SIZE(out);
            }
            PyObject *got = read_joined(view, lo, hi, flag, want);
            if (got == NULL) {
                failed = 1;
                break;
            }
            Py_ssize_t n = PyList_GET_SIZE(got);
            if (n > 0) {
                PyObject *decoded = PyObject_CallOneArg(decoder, got);
                if (decoded == NULL || extend(out, decoded) < 0) {
                    Py_XDECREF(decoded);
                    Py_DECREF(got);
                    failed = 1;
                    break;
                }
                Py_DECREF(decoded);
            }
            if (n < want) {
                Py_DECREF(got);
                break;
            }
            PyObject *last = PyList_GET_ITEM(got, n - 1);
            PyObject *key = PyTuple_Check(last) && PyTuple_GET_SIZE(last) > 0 ? PyTuple_GET_ITEM(last, 0) : NULL;
            if (key == NULL || !PyBytes_CheckExact(key)) {
                Py_DECREF(got);
                PyErr_SetString(PyExc_TypeError, "a short scan's read gave an item that is no (bytes, value) pair");
                failed = 1;
                break;
            }
            if (reverse) {
                Py_SETREF(hi, Py_NewRef(key));
            }
            else {
                PyObject *after = PyBytes_FromStringAndSize(NULL, PyBytes_GET_SIZE(key) + 1);
                if (after == NULL) {
                    Py_DECREF(got);
                    failed = 1;
                    break;
                }
                memcpy(PyBytes_AS_STRING(after), PyBytes_AS_STRING(key), (size_t)PyBytes_GET_SIZE(key));
                PyBytes_AS_STRING(after)[PyBytes_GET_SIZE(key)] = 0;
                Py_SETREF(lo, after);
            }
            Py_DECREF(got);
            want = want * 4 < MOST ? want * 4 : MOST;
        }
        Py_DECREF(lo);
        Py_DECREF(hi);
        if (failed) {
            Py_DECREF(out);
            return NULL;
        }
    }
    if (PyList_GET_SIZE(out) > most && PyList_SetSlice(out, most, PY_SSIZE_T_MAX, NULL) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* the short scan of the plan's common case (see the module comment), or Py_None
 * (a new reference) where the reference must answer */
static PyObject *
short_read(PyObject *const *args)
{
    PyObject *layout = args[0], *own = args[1], *bound = args[2], *guard = args[5], *view = args[7];
    PyObject *decoder = args[8], *touch = args[9], *start = args[10], *stop = args[11];
    PyObject *include_start = args[12], *include_stop = args[13], *reverse = args[14], *limit = args[15];
    if (!PyLong_CheckExact(limit) || args[16] != Py_None || guard != Py_None || !PyTuple_CheckExact(own)
        || (include_start != Py_True && include_start != Py_False)
        || (include_stop != Py_True && include_stop != Py_False) || (reverse != Py_True && reverse != Py_False)) {
        Py_RETURN_NONE;
    }
    int overflow;
    long most = PyLong_AsLongAndOverflow(limit, &overflow);
    if (overflow || most < 1 || most > MOST) {
        Py_RETURN_NONE;
    }
    int exact = attribute_true(layout, str_exact);
    if (exact < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    PyObject *lo, *hi = NULL;
    if (start == Py_None) {
        lo = PyObject_GetAttr(layout, str_prefix);
        if (lo != NULL && !PyBytes_CheckExact(lo)) {
            Py_SETREF(lo, Py_NewRef(Py_None));
        }
    }
    else {
        lo = stored_bound(bound, start, include_start == Py_False);
    }
    if (lo == NULL || lo == Py_None) {
        return lo;
    }
    if (stop != Py_None) {
        hi = stored_bound(bound, stop, include_stop == Py_True);
        if (hi == NULL || hi == Py_None) {
            Py_DECREF(lo);
            return hi;
        }
    }
    PyObject *ranges = clipped(own, lo, hi);
    Py_DECREF(lo);
    Py_XDECREF(hi);
    if (ranges == NULL || ranges == Py_None) {
        return ranges;
    }
    if (PyList_GET_SIZE(ranges) == 0) {
        Py_DECREF(ranges);
        PyObject *touched = PyObject_CallNoArgs(touch);
        if (touched == NULL) {
            return NULL;
        }
        Py_DECREF(touched);
        return PyList_New(0);
    }
    if (reverse == Py_True && PyList_Reverse(ranges) < 0) {
        Py_DECREF(ranges);
        return NULL;
    }
    if (!exact) {
        PyObject *out = filtered_read(view, decoder, ranges, reverse == Py_True, most);
        Py_DECREF(ranges);
        return out;
    }
    /* plain: the view's pages, cut, are the items */
    int plain = attribute_true(layout, str_plain);
    PyObject *cut = NULL;
    if (plain > 0) {
        PyObject *chunk = PyObject_GetAttr(layout, str_decode_chunk);
        plain = chunk == NULL ? -1 : chunk == decoder;
        Py_XDECREF(chunk);
        if (plain > 0) {
            PyObject *prefix = PyObject_GetAttr(layout, str_prefix);
            if (prefix == NULL || !PyBytes_CheckExact(prefix)) {
                Py_XDECREF(prefix);
                Py_DECREF(ranges);
                return prefix == NULL ? NULL : Py_NewRef(Py_None);
            }
            cut = PyLong_FromSsize_t(PyBytes_GET_SIZE(prefix));
            Py_DECREF(prefix);
            plain = cut == NULL ? -1 : 1;
        }
    }
    if (plain < 0) {
        Py_DECREF(ranges);
        return NULL;
    }
    PyObject *call[7] = {NULL, view, ranges, reverse, limit, Py_False, cut}; /* call[0]: the offset's spare slot */
    size_t given = (size_t)(plain ? 6 : 4) | PY_VECTORCALL_ARGUMENTS_OFFSET;
    PyObject *pages = PyObject_VectorcallMethod(str_read_pages, call + 1, given, NULL);
    Py_DECREF(ranges);
    Py_XDECREF(cut);
    return joined(pages, plain ? NULL : decoder);
}

static PyObject *
short_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Short *self = (Short *)op;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (n == N_ARGS && (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0)) {
        if (args[15] == Py_None) {
            Py_RETURN_NONE; /* no limit: the chunked route */
        }
        PyObject *done = short_read(args);
        if (done != Py_None) {
            return done;
        }
        Py_DECREF(done);
    }
    return PyObject_Vectorcall(self->reference, args, nargsf, kwnames);
}

static PyObject *
short_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *reference;
    if (!PyArg_ParseTuple(args, "O:Short", &reference)) {
        return NULL;
    }
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "Short(reference) takes no keywords");
        return NULL;
    }
    if (!PyCallable_Check(reference)) {
        PyErr_SetString(PyExc_TypeError, "Short(reference): the reference must be callable");
        return NULL;
    }
    Short *self = (Short *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->reference = Py_NewRef(reference);
    self->vectorcall = short_vectorcall;
    return (PyObject *)self;
}

static int
short_traverse(PyObject *op, visitproc visit, void *arg)
{
    Py_VISIT(((Short *)op)->reference);
    return 0;
}

static int
short_clear(PyObject *op)
{
    Py_CLEAR(((Short *)op)->reference);
    return 0;
}

static void
short_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    short_clear(op);
    Py_TYPE(op)->tp_free(op);
}

static PyTypeObject ShortType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace._scan_plan_accel.Short",
    .tp_doc = "Short(reference): the scan plan's short scan, its common case read in C, every other "
              "call the reference's.",
    .tp_basicsize = sizeof(Short),
    .tp_vectorcall_offset = offsetof(Short, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = short_new,
    .tp_traverse = short_traverse,
    .tp_clear = short_clear,
    .tp_dealloc = short_dealloc,
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "keyspace._scan_plan_accel",
    .m_doc = "The scan plan's short scan in C (keyspace._scan_plan.short_py is its reference).",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__scan_plan_accel(void)
{
    str_exact = PyUnicode_InternFromString("exact");
    str_plain = PyUnicode_InternFromString("plain");
    str_prefix = PyUnicode_InternFromString("prefix");
    str_decode_chunk = PyUnicode_InternFromString("decode_chunk");
    str_read_pages = PyUnicode_InternFromString("read_pages");
    nul_byte = PyBytes_FromStringAndSize("\0", 1);
    if (str_exact == NULL || str_plain == NULL || str_prefix == NULL || str_decode_chunk == NULL
        || str_read_pages == NULL || nul_byte == NULL) {
        return NULL;
    }
    if (PyType_Ready(&ShortType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "Short", (PyObject *)&ShortType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
