/* Optional C helpers of the stores, each with a pure-Python reference: the log
 * of put pairs for the overlay transaction (keyspace.stores._overlay, which runs
 * without it), the size check of a batch of keys, and a page of an engine
 * iterator cut at a bound.
 *
 * PairLog() holds two lists, keys and values, of bytes.
 *
 *   log(key, value)        appends key to keys and value to values: one C call,
 *                          no tuple and no hashing (a dict store hashes every
 *                          fresh key); TypeError unless both are bytes
 *   log.extend(ks, vs)     appends the lists ks and vs (of equal length)
 *   log.take()             returns (keys, values) and starts two new lists
 *   len(log)               the pairs logged since the last take()
 *   log.close()            ends the log: a later log(...) or extend raises
 *                          ReferenceError, take() returns two empty lists
 *
 * first_bad_key(keys, max_size, empty_ok) -> int: the index of the first item of
 * the list keys that is not a storable key, or -1; an item is a key or a pair
 * (tuple) whose first item is the key. Not storable: longer than max_size bytes
 * (None: no limit), or empty unless empty_ok. One pass reading the sizes (of bytes
 * directly, of anything else as len() does): no Python call per key.
 * Reference: keyspace.stores._key_sizes.first_bad_key_py.
 *
 * take_until(items, bound, size, descending, cut=0, is_record=None,
 * record_size=-1) -> list: at most size items of the iterator items, ending
 * before the first whose key lies past bound (None: no bound): ascending, a key
 * >= bound; descending, a key < bound. An item is a key or a tuple whose first
 * item is the key. The item past bound is consumed and dropped. Bytes keys are
 * compared with memcmp (no Python call per item), any other key with its own
 * comparison. With cut, each (key, value) pair is given as (key[cut:], value)
 * (cut_keys's error where it is no such pair); with is_record, a pair that may
 * be an LMDB database record (as name_candidates finds them, of record_size
 * bytes) is asked is_record(key, value) and left out where it answers true,
 * taking no place of size. Reference: keyspace.stores._take.take_until_py.
 *
 * cursor_take(txn, db, start, stop, limit, reverse, cut=0, is_record=None,
 * record_size=-1) -> list: at most limit (key, value) pairs of the range
 * [start, stop) (stop None: to the end) read by one cursor of the py-lmdb
 * transaction txn (txn.cursor(db)), in key order, or descending with reverse
 * (then from the last key before stop down to start; an empty start: no lower
 * bound): take_until over the cursor placed by one seek (with cut, is_record
 * and record_size as take_until takes them), every call C to C. Reference:
 * keyspace.stores.lmdb._cursor.cursor_take_py.
 *
 * name_candidates(items, size) -> list: the indices of the items (pairs or keys)
 * that may be LMDB database records: a pair whose value has size bytes and whose
 * key holds no NUL, a key holding no NUL. One memchr an item.
 * Reference: keyspace.stores.lmdb._records.name_candidates_py.
 *
 * page_bytes(page) -> int: the sizes of the keys and values of page, a list of
 * (key, value) pairs, added up: one pass reading bytes sizes directly (anything
 * else as len() does), no Python call per pair. Reference:
 * keyspace.stores._page_bytes.page_bytes_py.
 *
 * RecordGetter(get, is_record, size): a point read of an LMDB unnamed database
 * that finds no database record: getter(key) calls get(key) and, when it gives
 * bytes of size bytes under a key holding no NUL, is_record(key, value), giving
 * None where that is true. Reference: keyspace.stores.lmdb._records.getter_py.
 *
 * PointRead(begin, shared, is_record, size, slow, error): a point read of an LMDB
 * unnamed database, each in a read transaction of its own. read(key) reads
 * shared.resizing; where it is false, calls begin(), txn.get(key) and
 * txn.abort(), and gives None where the value is a database record (as
 * RecordGetter tells it; is_record None: never). Where the read is closed
 * (read.close()), the map is being resized, or begin or get raises error
 * (py-lmdb's base error), it gives slow(key) instead: the route that waits,
 * retries and names what went wrong. Reference: keyspace.stores.lmdb.LMDBStore.get.
 * read.checked(check, slow): the same read made only in a transaction where
 * check(txn) answers true, asked once per state of the environment (txn.id());
 * else slow(key), as where check raises error; closed with read. References:
 * keyspace.stores.lmdb._checked.LMDBCheckedReads.get_py and
 * keyspace.stores.lmdb._watched.LMDBWatchedReads.get_py.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

typedef struct {
    PyObject_HEAD
    PyObject *keys;   /* list, or NULL once closed */
    PyObject *values; /* list, or NULL once closed */
    vectorcallfunc vectorcall;
} PairLog;

static int
log_closed(PairLog *self)
{
    if (self->keys == NULL) {
        PyErr_SetString(PyExc_ReferenceError, "this transaction has ended");
        return 1;
    }
    return 0;
}

static PyObject *
log_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PairLog *self = (PairLog *)op;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (n != 2 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        PyErr_Format(PyExc_TypeError, "a pair log takes a key and a value, not %zd arguments", n);
        return NULL;
    }
    if (log_closed(self)) {
        return NULL;
    }
    if (!PyBytes_CheckExact(args[0]) || !PyBytes_CheckExact(args[1])) {
        PyErr_Format(PyExc_TypeError, "a pair log takes bytes, not %.100s and %.100s",
                     Py_TYPE(args[0])->tp_name, Py_TYPE(args[1])->tp_name);
        return NULL;
    }
    if (PyList_Append(self->keys, args[0]) < 0) {
        return NULL;
    }
    if (PyList_Append(self->values, args[1]) < 0) {
        Py_ssize_t last = PyList_GET_SIZE(self->keys);
        PyList_SetSlice(self->keys, last - 1, last, NULL); /* keep the lists in step */
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
log_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) != 0 || (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)) {
        PyErr_SetString(PyExc_TypeError, "PairLog() takes no arguments");
        return NULL;
    }
    PairLog *self = (PairLog *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->vectorcall = log_vectorcall;
    self->keys = PyList_New(0);
    self->values = PyList_New(0);
    if (self->keys == NULL || self->values == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyObject *
log_extend(PyObject *op, PyObject *const *args, Py_ssize_t n)
{
    PairLog *self = (PairLog *)op;
    if (n != 2 || !PyList_CheckExact(args[0]) || !PyList_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "extend takes two lists");
        return NULL;
    }
    if (PyList_GET_SIZE(args[0]) != PyList_GET_SIZE(args[1])) {
        PyErr_Format(PyExc_ValueError, "extend takes lists of equal length, not %zd and %zd",
                     PyList_GET_SIZE(args[0]), PyList_GET_SIZE(args[1]));
        return NULL;
    }
    if (log_closed(self)) {
        return NULL;
    }
    Py_ssize_t keys_end = PyList_GET_SIZE(self->keys);
    Py_ssize_t values_end = PyList_GET_SIZE(self->values);
    if (PyList_SetSlice(self->keys, keys_end, keys_end, args[0]) < 0) {
        return NULL;
    }
    if (PyList_SetSlice(self->values, values_end, values_end, args[1]) < 0) {
        PyList_SetSlice(self->keys, keys_end, PyList_GET_SIZE(self->keys), NULL);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
log_take(PyObject *op, PyObject *Py_UNUSED(ignored))
{
    PairLog *self = (PairLog *)op;
    PyObject *keys = PyList_New(0);
    PyObject *values = PyList_New(0);
    if (keys == NULL || values == NULL) {
        Py_XDECREF(keys);
        Py_XDECREF(values);
        return NULL;
    }
    if (self->keys == NULL) {
        return Py_BuildValue("(NN)", keys, values);
    }
    PyObject *out = Py_BuildValue("(NN)", self->keys, self->values);
    if (out == NULL) {
        Py_DECREF(keys);
        Py_DECREF(values);
        return NULL;
    }
    /* the old lists' references moved into out ("N") */
    self->keys = keys;
    self->values = values;
    return out;
}

static PyObject *
log_close(PyObject *op, PyObject *Py_UNUSED(ignored))
{
    PairLog *self = (PairLog *)op;
    Py_CLEAR(self->keys);
    Py_CLEAR(self->values);
    Py_RETURN_NONE;
}

static Py_ssize_t
log_length(PyObject *op)
{
    PairLog *self = (PairLog *)op;
    return self->keys == NULL ? 0 : PyList_GET_SIZE(self->keys);
}

static int
log_traverse(PyObject *op, visitproc visit, void *arg)
{
    PairLog *self = (PairLog *)op;
    Py_VISIT(self->keys);
    Py_VISIT(self->values);
    return 0;
}

static int
log_clear(PyObject *op)
{
    PairLog *self = (PairLog *)op;
    Py_CLEAR(self->keys);
    Py_CLEAR(self->values);
    return 0;
}

static void
log_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    log_clear(op);
    Py_TYPE(op)->tp_free(op);
}

static PyMethodDef log_methods[] = {
    {"extend", (PyCFunction)(void (*)(void))log_extend, METH_FASTCALL,
     "extend(keys, values): append two lists of equal length."},
    {"take", log_take, METH_NOARGS, "take() -> (keys, values); the log starts two new lists."},
    {"close", log_close, METH_NOARGS, "close(): later appends raise ReferenceError."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods log_as_sequence = {
    .sq_length = log_length,
};

static PyTypeObject PairLogType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace.stores._pairs_accel.PairLog",
    .tp_doc = "PairLog(): the put pairs of an overlay transaction, in two lists (see the module).",
    .tp_basicsize = sizeof(PairLog),
    .tp_vectorcall_offset = offsetof(PairLog, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = log_new,
    .tp_traverse = log_traverse,
    .tp_clear = log_clear,
    .tp_dealloc = log_dealloc,
    .tp_methods = log_methods,
    .tp_as_sequence = &log_as_sequence,
};

static PyObject *
first_bad_key(PyObject *module, PyObject *const *args, Py_ssize_t n)
{
    if (n != 3 || !PyList_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "first_bad_key(keys: list, max_size: int | None, empty_ok: bool)");
        return NULL;
    }
    Py_ssize_t max_size = PY_SSIZE_T_MAX;
    if (args[1] != Py_None) {
        max_size = PyLong_AsSsize_t(args[1]);
        if (max_size == -1 && PyErr_Occurred()) {
            return NULL;
        }
    }
    int empty_ok = PyObject_IsTrue(args[2]);
    if (empty_ok < 0) {
        return NULL;
    }
    Py_ssize_t min_size = empty_ok ? 0 : 1;
    PyObject *keys = args[0];
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys); i++) {
        PyObject *item = PyList_GET_ITEM(keys, i);
        PyObject *key = item;
        if (PyTuple_CheckExact(item) && PyTuple_GET_SIZE(item) > 0) {
            key = PyTuple_GET_ITEM(item, 0);
        }
        Py_ssize_t size;
        if (PyBytes_Check(key)) {
            size = PyBytes_GET_SIZE(key);
        }
        else { /* len() may run code that changes the list: hold the item */
            Py_INCREF(item);
            size = PyObject_Size(key);
            Py_DECREF(item);
            if (size < 0) {
                return NULL; /* not sized: the TypeError of len() */
            }
        }
        if (size > max_size || size < min_size) {
            return PyLong_FromSsize_t(i);
        }
    }
    return PyLong_FromLong(-1);
}

/* 1 when key < bound, 0 when not, -1 with an exception set */
static int
key_below(PyObject *key, PyObject *bound)
{
    if (PyBytes_CheckExact(key)) {
        Py_ssize_t kn = PyBytes_GET_SIZE(key), bn = PyBytes_GET_SIZE(bound);
        int c = memcmp(PyBytes_AS_STRING(key), PyBytes_AS_STRING(bound), (size_t)(kn < bn ? kn : bn));
        return c < 0 || (c == 0 && kn < bn);
    }
    return PyObject_RichCompareBool(key, bound, Py_LT);
}

/* a call's answer as a truth value: -1 with an error set */
static int
called_true(PyObject *answer)
{
    if (answer == NULL) {
        return -1;
    }
    int truth = PyObject_IsTrue(answer);
    Py_DECREF(answer);
    return truth;
}

/* 1 when the bytes-like ``key`` holds no NUL byte (or is no bytes: the caller decides) */
static int
nul_free(PyObject *key)
{
    if (!PyBytes_CheckExact(key)) {
        return 1;
    }
    return memchr(PyBytes_AS_STRING(key), 0, (size_t)PyBytes_GET_SIZE(key)) == NULL;
}

/* the pair (key[cut:], value) of the (key, value) pair item (a new reference;
 * NULL with ValueError naming index where item is no such pair). A pair no one
 * else holds (a cursor's fresh tuple, refcount 1) takes its new key in place. */
static PyObject *
cut_pair(PyObject *item, Py_ssize_t cut, Py_ssize_t index, int reuse)
{
    if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2 || !PyBytes_CheckExact(PyTuple_GET_ITEM(item, 0))
        || PyBytes_GET_SIZE(PyTuple_GET_ITEM(item, 0)) < cut) {
        PyErr_Format(PyExc_ValueError,
                     "cut_keys: item %zd of the page is not a (key, value) pair whose key "
                     "holds the %zd bytes to cut", index, cut);
        return NULL;
    }
    PyObject *key = PyTuple_GET_ITEM(item, 0), *value = PyTuple_GET_ITEM(item, 1);
    PyObject *rest = PyBytes_FromStringAndSize(PyBytes_AS_STRING(key) + cut, PyBytes_GET_SIZE(key) - cut);
    if (rest == NULL) {
        return NULL;
    }
    if (reuse && Py_REFCNT(item) == 1) {
        PyTuple_SET_ITEM(item, 0, rest);
        Py_DECREF(key);
        Py_INCREF(item);
        return item;
    }
    PyObject *pair = PyTuple_New(2);
    if (pair == NULL) {
        Py_DECREF(rest);
        return NULL;
    }
    Py_INCREF(value);
    PyTuple_SET_ITEM(pair, 0, rest);
    PyTuple_SET_ITEM(pair, 1, value);
    return pair;
}

/* take_until's loop: items an iterator, bound bytes or None. With cut > 0 each
 * item is a (key, value) pair given as (key[cut:], value). With is_record (not
 * NULL), a pair whose value has record_size bytes (or is no bytes) and whose
 * key holds no NUL is asked is_record(key, value) and left out where it answers
 * true: it takes no place of size. */
static PyObject *
take_until_impl(PyObject *items, PyObject *bound, Py_ssize_t size, int descending, Py_ssize_t cut,
                PyObject *is_record, Py_ssize_t record_size)
{
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        return NULL;
    }
    Py_INCREF(bound); /* the items' code may drop every other reference */
    Py_XINCREF(is_record);
    while (PyList_GET_SIZE(out) < size) {
        PyObject *item = PyIter_Next(items);
        if (item == NULL) {
            if (PyErr_Occurred()) {
                goto error;
            }
            break;
        }
        if (bound != Py_None) {
            PyObject *key = item;
            if (PyTuple_Check(item) && PyTuple_GET_SIZE(item) > 0) {
                key = PyTuple_GET_ITEM(item, 0);
            }
            int below = key_below(key, bound);
            if (below < 0) {
                Py_DECREF(item);
                goto error;
            }
            if (below == descending) {
                Py_DECREF(item);
                break;
            }
        }
        if (is_record != NULL && PyTuple_CheckExact(item) && PyTuple_GET_SIZE(item) == 2) {
            PyObject *key = PyTuple_GET_ITEM(item, 0), *value = PyTuple_GET_ITEM(item, 1);
            if ((!PyBytes_CheckExact(value) || PyBytes_GET_SIZE(value) == record_size) && nul_free(key)) {
                PyObject *pair[2] = {key, value};
                int record = called_true(PyObject_Vectorcall(is_record, pair, 2, NULL));
                if (record != 0) {
                    Py_DECREF(item);
                    if (record < 0) {
                        goto error;
                    }
                    continue;
                }
            }
        }
        if (cut > 0) {
            PyObject *pair = cut_pair(item, cut, PyList_GET_SIZE(out), 1);
            Py_DECREF(item);
            if (pair == NULL) {
                goto error;
            }
            item = pair;
        }
        int failed = PyList_Append(out, item);
        Py_DECREF(item);
        if (failed) {
            goto error;
        }
    }
    Py_DECREF(bound);
    Py_XDECREF(is_record);
    return out;

error:
    Py_DECREF(bound);
    Py_XDECREF(is_record);
    Py_DECREF(out);
    return NULL;
}

/* the optional arguments cut, is_record and record_size of take_until and
 * cursor_take, from args[first] on (n in all): 0 with them set, -1 with an error */
static int
take_options(PyObject *const *args, Py_ssize_t n, Py_ssize_t first, const char *name, Py_ssize_t *cut,
             PyObject **is_record, Py_ssize_t *record_size)
{
    *cut = 0;
    *is_record = NULL;
    *record_size = -1;
    if (n > first) {
        *cut = PyNumber_AsSsize_t(args[first], PyExc_OverflowError);
        if (*cut == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (*cut < 0) {
            PyErr_Format(PyExc_ValueError, "%s: cut=%zd is negative", name, *cut);
            return -1;
        }
    }
    if (n > first + 1 && args[first + 1] != Py_None) {
        if (!PyCallable_Check(args[first + 1])) {
            PyErr_Format(PyExc_TypeError, "%s: is_record must be callable or None", name);
            return -1;
        }
        *is_record = args[first + 1];
    }
    if (n > first + 2) {
        *record_size = PyNumber_AsSsize_t(args[first + 2], PyExc_OverflowError);
        if (*record_size == -1 && PyErr_Occurred()) {
            return -1;
        }
    }
    return 0;
}

static PyObject *
take_until(PyObject *module, PyObject *const *args, Py_ssize_t n)
{
    if (n < 4 || n > 7 || !PyIter_Check(args[0]) || (args[1] != Py_None && !PyBytes_CheckExact(args[1]))) {
        PyErr_SetString(PyExc_TypeError,
                        "take_until(items: iterator, bound: bytes | None, size: int, descending: bool, "
                        "cut: int = 0, is_record=None, record_size: int = -1)");
        return NULL;
    }
    Py_ssize_t size = PyNumber_AsSsize_t(args[2], PyExc_OverflowError);
    if (size == -1 && PyErr_Occurred()) {
        return NULL;
    }
    int descending = PyObject_IsTrue(args[3]);
    if (descending < 0) {
        return NULL;
    }
    Py_ssize_t cut, record_size;
    PyObject *is_record;
    if (take_options(args, n, 4, "take_until", &cut, &is_record, &record_size) < 0) {
        return NULL;
    }
    return take_until_impl(args[0], args[1], size, descending, cut, is_record, record_size);
}

static PyObject *str_cursor, *str_set_range, *str_iternext, *str_iterprev, *str_last, *str_prev;

static PyObject *
cursor_take(PyObject *module, PyObject *const *args, Py_ssize_t n)
{
    if (n < 6 || n > 9 || !PyBytes_CheckExact(args[2]) || (args[3] != Py_None && !PyBytes_CheckExact(args[3]))) {
        PyErr_SetString(PyExc_TypeError,
                        "cursor_take(txn, db, start: bytes, stop: bytes | None, limit: int, reverse: bool, "
                        "cut: int = 0, is_record=None, record_size: int = -1)");
        return NULL;
    }
    PyObject *txn = args[0], *db = args[1], *start = args[2], *stop = args[3];
    Py_ssize_t limit = PyNumber_AsSsize_t(args[4], PyExc_OverflowError);
    if (limit == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t cut, record_size;
    PyObject *is_record;
    if (take_options(args, n, 6, "cursor_take", &cut, &is_record, &record_size) < 0) {
        return NULL;
    }
    int reverse = PyObject_IsTrue(args[5]);
    if (reverse < 0) {
        return NULL;
    }
    PyObject *cursor = PyObject_CallMethodOneArg(txn, str_cursor, db);
    if (cursor == NULL) {
        return NULL;
    }
    PyObject *bound;
    int found;
    if (!reverse) {
        found = called_true(PyObject_CallMethodOneArg(cursor, str_set_range, start));
        bound = stop;
    }
    else {
        /* the last key before stop: last() where stop is None or no key lies at or after it, else prev() */
        int after = stop == Py_None ? 0 : called_true(PyObject_CallMethodOneArg(cursor, str_set_range, stop));
        found = after < 0 ? -1 : called_true(PyObject_CallMethodNoArgs(cursor, after ? str_prev : str_last));
        bound = PyBytes_GET_SIZE(start) ? start : Py_None;
    }
    if (found <= 0) {
        Py_DECREF(cursor);
        return found < 0 ? NULL : PyList_New(0);
    }
    PyObject *items = PyObject_CallMethodNoArgs(cursor, reverse ? str_iterprev : str_iternext);
    Py_DECREF(cursor);
    if (items == NULL) {
        return NULL;
    }
    PyObject *page = take_until_impl(items, bound, limit, reverse, cut, is_record, record_size);
    Py_DECREF(items);
    return page;
}


static PyObject *
name_candidates(PyObject *module, PyObject *const *args, Py_ssize_t n)
{
    if (n != 2 || !PyList_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "name_candidates(items: list, size: int)");
        return NULL;
    }
    Py_ssize_t size = PyNumber_AsSsize_t(args[1], PyExc_OverflowError);
    if (size == -1 && PyErr_Occurred()) {
        return NULL;
    }
    PyObject *items = args[0];
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        int hit;
        if (PyTuple_CheckExact(item) && PyTuple_GET_SIZE(item) == 2) {
            PyObject *value = PyTuple_GET_ITEM(item, 1);
            hit = (!PyBytes_CheckExact(value) || PyBytes_GET_SIZE(value) == size)
                  && nul_free(PyTuple_GET_ITEM(item, 0));
        }
        else {
            hit = nul_free(item);
        }
        if (hit) {
            PyObject *index = PyLong_FromSsize_t(i);
            if (index == NULL || PyList_Append(out, index) < 0) {
                Py_XDECREF(index);
                Py_DECREF(out);
                return NULL;
            }
            Py_DECREF(index);
        }
    }
    return out;
}

/* the answer of is_record(key, value) for a value of size bytes under a key
 * holding no NUL: 1 a record, 0 data, -1 with an error set */
static int
is_record_answer(PyObject *is_record, Py_ssize_t size, PyObject *key, PyObject *value)
{
    if (!PyBytes_CheckExact(value) || PyBytes_GET_SIZE(value) != size) {
        return 0;
    }
    if (PyBytes_CheckExact(key)
        && memchr(PyBytes_AS_STRING(key), 0, (size_t)PyBytes_GET_SIZE(key)) != NULL) {
        return 0;
    }
    PyObject *stack[2] = {key, value};
    PyObject *answer = PyObject_Vectorcall(is_record, stack, 2, NULL);
    if (answer == NULL) {
        return -1;
    }
    int record = PyObject_IsTrue(answer);
    Py_DECREF(answer);
    return record;
}

typedef struct {
    PyObject_HEAD
    PyObject *get;
    PyObject *is_record;
    Py_ssize_t size;
    vectorcallfunc vectorcall;
} RecordGetter;

static PyObject *
getter_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    RecordGetter *self = (RecordGetter *)op;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (n != 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        PyErr_Format(PyExc_TypeError, "a record getter takes one key, not %zd arguments", n);
        return NULL;
    }
    PyObject *value = PyObject_Vectorcall(self->get, args, 1, NULL);
    if (value == NULL) {
        return NULL;
    }
    int record = is_record_answer(self->is_record, self->size, args[0], value);
    if (record != 0) {
        Py_DECREF(value);
        if (record < 0) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    return value;
}

static PyObject *
getter_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *get, *is_record;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "OOn:RecordGetter", &get, &is_record, &size)) {
        return NULL;
    }
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "RecordGetter(get, is_record, size) takes no keywords");
        return NULL;
    }
    RecordGetter *self = (RecordGetter *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    Py_INCREF(get);
    Py_INCREF(is_record);
    self->get = get;
    self->is_record = is_record;
    self->size = size;
    self->vectorcall = getter_vectorcall;
    return (PyObject *)self;
}

static int
getter_traverse(PyObject *op, visitproc visit, void *arg)
{
    RecordGetter *self = (RecordGetter *)op;
    Py_VISIT(self->get);
    Py_VISIT(self->is_record);
    return 0;
}

static int
getter_clear(PyObject *op)
{
    RecordGetter *self = (RecordGetter *)op;
    Py_CLEAR(self->get);
    Py_CLEAR(self->is_record);
    return 0;
}

static void
getter_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    getter_clear(op);
    Py_TYPE(op)->tp_free(op);
}

static PyTypeObject RecordGetterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace.stores._pairs_accel.RecordGetter",
    .tp_doc = "RecordGetter(get, is_record, size): a point read that finds no LMDB database record.",
    .tp_basicsize = sizeof(RecordGetter),
    .tp_vectorcall_offset = offsetof(RecordGetter, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = getter_new,
    .tp_traverse = getter_traverse,
    .tp_clear = getter_clear,
    .tp_dealloc = getter_dealloc,
};

typedef struct PointRead {
    PyObject_HEAD
    PyObject *begin;
    PyObject *shared;
    PyObject *is_record; /* None: no record test */
    Py_ssize_t size;
    PyObject *slow;
    PyObject *error;
    struct PointRead *owner; /* the read whose open flag counts (a checked read's store read), or NULL */
    PyObject *check;         /* check(txn) -> bool, asked once per state, or NULL: no check */
    long long state; /* the id of the last state the check held in, -1: none */
    int open;
    vectorcallfunc vectorcall;
} PointRead;

static PyObject *str_resizing, *str_get, *str_abort, *str_id;

/* whether the check of self holds in txn (remembered for its state where it does):
 * 1 holds, 0 not, -1 with an error set */
static int
check_holds(PointRead *self, PyObject *txn)
{
    PyObject *id = PyObject_VectorcallMethod(str_id, &txn, 1, NULL);
    if (id == NULL) {
        return -1;
    }
    long long state = PyLong_AsLongLong(id);
    Py_DECREF(id);
    if (state == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (state == self->state) {
        return 1;
    }
    PyObject *answer = PyObject_CallOneArg(self->check, txn);
    if (answer == NULL) {
        return -1;
    }
    int holds = PyObject_IsTrue(answer);
    Py_DECREF(answer);
    if (holds == 1) {
        self->state = state;
    }
    return holds;
}

static PyObject *
point_read_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PointRead *self = (PointRead *)op;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (n != 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        PyErr_Format(PyExc_TypeError, "a point read takes one key, not %zd arguments", n);
        return NULL;
    }
    PyObject *key = args[0];
    if (!(self->owner != NULL ? self->owner->open : self->open)) {
        return PyObject_Vectorcall(self->slow, args, 1, NULL);
    }
    PyObject *resizing = PyObject_GetAttr(self->shared, str_resizing);
    if (resizing == NULL) {
        return NULL;
    }
    int waits = PyObject_IsTrue(resizing);
    Py_DECREF(resizing);
    if (waits) {
        return waits < 0 ? NULL : PyObject_Vectorcall(self->slow, args, 1, NULL);
    }
    PyObject *txn = PyObject_CallNoArgs(self->begin);
    if (txn == NULL) {
        if (!PyErr_ExceptionMatches(self->error)) {
            return NULL;
        }
        PyErr_Clear();
        return PyObject_Vectorcall(self->slow, args, 1, NULL);
    }
    PyObject *value = NULL;
    int holds = self->check == NULL ? 1 : check_holds(self, txn);
    if (holds == 1) {
        PyObject *get_args[2] = {txn, key};
        value = PyObject_VectorcallMethod(str_get, get_args, 2, NULL);
    }
    int slow = holds == 0; /* the check failed, or py-lmdb raised: the slow route decides */
    if (holds < 0 || (holds == 1 && value == NULL)) {
        if (!PyErr_ExceptionMatches(self->error)) {
            PyObject *type, *exc, *tb; /* abort as the Python route's finally does, the error kept */
            PyErr_Fetch(&type, &exc, &tb);
            PyObject *done = PyObject_VectorcallMethod(str_abort, &txn, 1, NULL);
            Py_XDECREF(done);
            Py_DECREF(txn);
            PyErr_Restore(type, exc, tb);
            return NULL;
        }
        PyErr_Clear();
        slow = 1;
    }
    PyObject *done = PyObject_VectorcallMethod(str_abort, &txn, 1, NULL);
    Py_DECREF(txn);
    if (done == NULL) {
        Py_XDECREF(value);
        return NULL;
    }
    Py_DECREF(done);
    if (slow) {
        return PyObject_Vectorcall(self->slow, args, 1, NULL);
    }
    if (self->is_record != Py_None) {
        int record = is_record_answer(self->is_record, self->size, key, value);
        if (record != 0) {
            Py_DECREF(value);
            if (record < 0) {
                return NULL;
            }
            Py_RETURN_NONE;
        }
    }
    return value;
}

static PyObject *
point_read_made(PyTypeObject *type, PyObject *begin, PyObject *shared, PyObject *is_record, Py_ssize_t size,
                PyObject *slow, PyObject *error)
{
    PointRead *self = (PointRead *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    Py_INCREF(begin);
    Py_INCREF(shared);
    Py_INCREF(is_record);
    Py_INCREF(slow);
    Py_INCREF(error);
    self->begin = begin;
    self->shared = shared;
    self->is_record = is_record;
    self->size = size;
    self->slow = slow;
    self->error = error;
    self->state = -1;
    self->open = 1;
    self->vectorcall = point_read_vectorcall;
    return (PyObject *)self;
}

static PyObject *
point_read_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *begin, *shared, *is_record, *slow, *error;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "OOOnOO:PointRead", &begin, &shared, &is_record, &size, &slow, &error)) {
        return NULL;
    }
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "PointRead(begin, shared, is_record, size, slow, error) takes no keywords");
        return NULL;
    }
    return point_read_made(type, begin, shared, is_record, size, slow, error);
}

static PyObject *
point_read_checked(PyObject *op, PyObject *const *args, Py_ssize_t n)
{
    PointRead *self = (PointRead *)op;
    if (n != 2 || !PyCallable_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "checked(check, slow): check is a callable of the transaction");
        return NULL;
    }
    PointRead *made = (PointRead *)point_read_made(
        Py_TYPE(op), self->begin, self->shared, self->is_record, self->size, args[1], self->error);
    if (made == NULL) {
        return NULL;
    }
    PointRead *owner = self->owner != NULL ? self->owner : self; /* whose close() ends it */
    Py_INCREF(owner);
    made->owner = owner;
    Py_INCREF(args[0]);
    made->check = args[0];
    return (PyObject *)made;
}

static PyObject *
point_read_close(PyObject *op, PyObject *Py_UNUSED(ignored))
{
    ((PointRead *)op)->open = 0;
    Py_RETURN_NONE;
}

static PyMethodDef point_read_methods[] = {
    {"close", point_read_close, METH_NOARGS,
     "close(): every later read of it, and of the checked reads made from it, takes the slow route."},
    {"checked", (PyCFunction)(void (*)(void))point_read_checked, METH_FASTCALL,
     "checked(check, slow) -> PointRead: the same read made only in a transaction where check(txn) "
     "answers true (a check that held is "
     "remembered for the state it was read in, as txn.id() tells it); where it does not, slow(key)."},
    {NULL, NULL, 0, NULL},
};

static int
point_read_traverse(PyObject *op, visitproc visit, void *arg)
{
    PointRead *self = (PointRead *)op;
    Py_VISIT(self->begin);
    Py_VISIT(self->shared);
    Py_VISIT(self->is_record);
    Py_VISIT(self->slow);
    Py_VISIT(self->error);
    Py_VISIT(self->owner);
    Py_VISIT(self->check);
    return 0;
}

static int
point_read_clear(PyObject *op)
{
    PointRead *self = (PointRead *)op;
    Py_CLEAR(self->begin);
    Py_CLEAR(self->shared);
    Py_CLEAR(self->is_record);
    Py_CLEAR(self->slow);
    Py_CLEAR(self->error);
    Py_CLEAR(self->owner);
    Py_CLEAR(self->check);
    return 0;
}

static void
point_read_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    point_read_clear(op);
    Py_TYPE(op)->tp_free(op);
}

static PyTypeObject PointReadType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace.stores._pairs_accel.PointRead",
    .tp_doc = "PointRead(begin, shared, is_record, size, slow, error): an LMDB point read in a read "
              "transaction of its own that finds no database record.",
    .tp_basicsize = sizeof(PointRead),
    .tp_vectorcall_offset = offsetof(PointRead, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = point_read_new,
    .tp_methods = point_read_methods,
    .tp_traverse = point_read_traverse,
    .tp_clear = point_read_clear,
    .tp_dealloc = point_read_dealloc,
};

static PyObject *
cut_keys(PyObject *module, PyObject *const *args, Py_ssize_t n)
{
    if (n != 2 || !PyList_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "cut_keys(page: list, cut: int)");
        return NULL;
    }
    Py_ssize_t cut = PyLong_AsSsize_t(args[1]);
    if (cut == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (cut < 0) {
        PyErr_Format(PyExc_ValueError, "cut_keys: cut=%zd is negative", cut);
        return NULL;
    }
    PyObject *page = args[0];
    Py_ssize_t size = PyList_GET_SIZE(page);
    PyObject *out = PyList_New(size);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < size; i++) {
        PyObject *pair = cut_pair(PyList_GET_ITEM(page, i), cut, i, 0);
        if (pair == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, pair);
    }
    return out;
}

/* the size of one key or value: bytes read directly, else len(); -1 with an error set */
static Py_ssize_t
stored_size(PyObject *item)
{
    if (PyBytes_CheckExact(item)) {
        return PyBytes_GET_SIZE(item);
    }
    return PyObject_Size(item);
}

static PyObject *
page_bytes(PyObject *module, PyObject *const *args, Py_ssize_t n)
{
    if (n != 1 || !PyList_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "page_bytes(page: list)");
        return NULL;
    }
    PyObject *page = args[0];
    long long total = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(page); i++) {
        PyObject *item = PyList_GET_ITEM(page, i);
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2) {
            PyErr_Format(PyExc_TypeError, "page_bytes: item %zd of the page is not a (key, value) pair", i);
            return NULL;
        }
        Py_ssize_t key = stored_size(PyTuple_GET_ITEM(item, 0));
        if (key < 0) {
            return NULL;
        }
        Py_ssize_t value = stored_size(PyTuple_GET_ITEM(item, 1));
        if (value < 0) {
            return NULL;
        }
        total += (long long)key + (long long)value;
    }
    return PyLong_FromLongLong(total);
}

static PyMethodDef module_methods[] = {
    {"page_bytes", (PyCFunction)(void (*)(void))page_bytes, METH_FASTCALL,
     "page_bytes(page, /) -> int: the sizes of the keys and values of a list of (key, value) "
     "pairs, added up."},
    {"cut_keys", (PyCFunction)(void (*)(void))cut_keys, METH_FASTCALL,
     "cut_keys(page, cut, /) -> list: the (key, value) pairs of page with the first cut bytes "
     "of each key dropped."},
    {"cursor_take", (PyCFunction)(void (*)(void))cursor_take, METH_FASTCALL,
     "cursor_take(txn, db, start, stop, limit, reverse, cut=0, is_record=None, record_size=-1, /) -> "
     "list: at most limit (key, value) pairs of [start, stop) read by one py-lmdb cursor of txn, "
     "descending with reverse, taken as take_until takes them."},
    {"take_until", (PyCFunction)(void (*)(void))take_until, METH_FASTCALL,
     "take_until(items, bound, size, descending, cut=0, is_record=None, record_size=-1, /) -> list: "
     "at most size items, ending before the first whose key lies past bound; each key without its "
     "first cut bytes; the pairs is_record answers true of (asked only of possible LMDB records) "
     "left out."},
    {"first_bad_key", (PyCFunction)(void (*)(void))first_bad_key, METH_FASTCALL,
     "first_bad_key(keys, max_size, empty_ok, /) -> int: the index of the first key (or pair) "
     "that is not storable, or -1."},
    {"name_candidates", (PyCFunction)(void (*)(void))name_candidates, METH_FASTCALL,
     "name_candidates(items, size, /) -> list: the indices of the items that may be an LMDB "
     "database record: a (key, value) pair whose value has size bytes, or a key, whose key "
     "holds no NUL byte."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef pairs_accel_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "keyspace.stores._pairs_accel",
    .m_doc = "Optional C helpers of the stores: the put log of an overlay transaction, "
             "the size check of a batch of keys, a page of an engine iterator cut at a bound, "
             "the items of a page that may be LMDB database records, a point read that finds none.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__pairs_accel(void)
{
    if (PyType_Ready(&PairLogType) < 0 || PyType_Ready(&RecordGetterType) < 0
        || PyType_Ready(&PointReadType) < 0) {
        return NULL;
    }
    str_cursor = PyUnicode_InternFromString("cursor");
    str_set_range = PyUnicode_InternFromString("set_range");
    str_iternext = PyUnicode_InternFromString("iternext");
    str_iterprev = PyUnicode_InternFromString("iterprev");
    str_last = PyUnicode_InternFromString("last");
    str_prev = PyUnicode_InternFromString("prev");
    str_resizing = PyUnicode_InternFromString("resizing");
    str_get = PyUnicode_InternFromString("get");
    str_abort = PyUnicode_InternFromString("abort");
    str_id = PyUnicode_InternFromString("id");
    if (str_cursor == NULL || str_set_range == NULL || str_iternext == NULL || str_iterprev == NULL
        || str_last == NULL || str_prev == NULL || str_resizing == NULL || str_get == NULL
        || str_abort == NULL || str_id == NULL) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&pairs_accel_module);
    if (module == NULL) {
        return NULL;
    }
    Py_INCREF(&PairLogType);
    if (PyModule_AddObject(module, "PairLog", (PyObject *)&PairLogType) < 0) {
        Py_DECREF(&PairLogType);
        Py_DECREF(module);
        return NULL;
    }
    Py_INCREF(&RecordGetterType);
    if (PyModule_AddObject(module, "RecordGetter", (PyObject *)&RecordGetterType) < 0) {
        Py_DECREF(&RecordGetterType);
        Py_DECREF(module);
        return NULL;
    }
    Py_INCREF(&PointReadType);
    if (PyModule_AddObject(module, "PointRead", (PyObject *)&PointReadType) < 0) {
        Py_DECREF(&PointReadType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
