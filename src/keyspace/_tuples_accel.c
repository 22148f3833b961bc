/* Optional C decoder for keyspace.tuples.unpack.
 *
 * unpack(b, prefix_len) decodes the common top-level element types of the
 * FoundationDB tuple encoding (None, bytes, str, ints of at most 8 bytes, bools,
 * doubles) in one pass over b. It returns None, never an exception, for
 * anything it does not handle or that is malformed (nested tuples, UUIDs,
 * single floats, big ints, unknown codes, truncated or invalid input, a
 * prefix_len that is not a position in b, an argument that is not bytes): the
 * Python decoder then decides, so results and error messages are those of
 * keyspace.tuples in every case. Only MemoryError propagates.
 *
 * Cost: one memchr per bytes/str element, one allocation per element, no
 * intermediate copies unless a value holds escaped 00 bytes.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define STACK_ITEMS 16

typedef struct {
    PyObject **items;
    Py_ssize_t len;
    Py_ssize_t cap;
    PyObject *stack[STACK_ITEMS];
} Items;

static void
items_clear(Items *it)
{
    for (Py_ssize_t i = 0; i < it->len; i++) {
        Py_DECREF(it->items[i]);
    }
    if (it->items != it->stack) {
        PyMem_Free(it->items);
    }
}

/* Takes the reference to v. Returns -1 (exception set) on memory errors. */
static int
items_push(Items *it, PyObject *v)
{
    if (it->len == it->cap) {
        Py_ssize_t cap = it->cap * 2;
        PyObject **grown;
        if (it->items == it->stack) {
            grown = PyMem_New(PyObject *, cap);
            if (grown != NULL) {
                memcpy(grown, it->stack, sizeof(it->stack));
            }
        }
        else {
            grown = PyMem_Resize(it->items, PyObject *, cap);
        }
        if (grown == NULL) {
            Py_DECREF(v);
            PyErr_NoMemory();
            return -1;
        }
        it->items = grown;
        it->cap = cap;
    }
    it->items[it->len++] = v;
    return 0;
}

/* The value of a bytes/str element starting at s[start], whose terminator is
 * searched from there: a new object, Py_None (borrowed, not a value) when the
 * element is unterminated or not valid UTF-8, or NULL on memory errors.
 * *next is set to the position after the terminator. */
static PyObject *
read_string(const unsigned char *s, Py_ssize_t n, Py_ssize_t start, int is_str, Py_ssize_t *next)
{
    const unsigned char *z = memchr(s + start, 0, (size_t)(n - start));
    PyObject *v;
    if (z == NULL) {
        return Py_None;
    }
    Py_ssize_t end = z - s;
    if (end + 1 < n && s[end + 1] == 0xFF) {
        /* escaped 00 bytes: find the first 00 not followed by ff, then unescape */
        for (;;) {
            z = memchr(s + end + 2, 0, (size_t)(n - end - 2)); /* end + 2 <= n here */
            if (z == NULL) {
                return Py_None;
            }
            end = z - s;
            if (end + 1 >= n || s[end + 1] != 0xFF) {
                break;
            }
        }
        char *buf = PyMem_Malloc((size_t)(end - start) + 1);
        if (buf == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        Py_ssize_t m = 0;
        for (Py_ssize_t i = start; i < end; i++) {
            buf[m++] = (char)s[i];
            if (s[i] == 0) {
                i++; /* the ff of the escape */
            }
        }
        v = is_str ? PyUnicode_DecodeUTF8(buf, m, "strict") : PyBytes_FromStringAndSize(buf, m);
        PyMem_Free(buf);
    }
    else {
        v = is_str ? PyUnicode_DecodeUTF8((const char *)s + start, end - start, "strict")
                   : PyBytes_FromStringAndSize((const char *)s + start, end - start);
    }
    if (v == NULL) {
        if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
            PyErr_Clear();
            return Py_None;
        }
        return NULL;
    }
    *next = end + 1;
    return v;
}

static PyObject *
accel_unpack(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "unpack() takes exactly 2 arguments");
        return NULL;
    }
    PyObject *b = args[0];
    if (!PyBytes_CheckExact(b) || !PyLong_CheckExact(args[1])) {
        Py_RETURN_NONE;
    }
    Py_ssize_t n = PyBytes_GET_SIZE(b);
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    if (pos == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (pos < 0 || pos > n) {
        Py_RETURN_NONE;
    }
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(b);
    Items it;
    it.items = it.stack;
    it.len = 0;
    it.cap = STACK_ITEMS;

    while (pos < n) {
        unsigned int code = s[pos];
        PyObject *v;
        if (code == 0x02 || code == 0x01) {
            v = read_string(s, n, pos + 1, code == 0x02, &pos);
            if (v == Py_None) {
                goto fallback;
            }
        }
        else if (code >= 0x0C && code <= 0x1C) {
            unsigned int k = code >= 0x14 ? code - 0x14 : 0x14 - code;
            if (pos + 1 + (Py_ssize_t)k > n) {
                goto fallback;
            }
            uint64_t u = 0;
            for (unsigned int i = 1; i <= k; i++) {
                u = (u << 8) | s[pos + i];
            }
            if (code >= 0x14) {
                v = PyLong_FromUnsignedLongLong(u);
            }
            else {
                /* one's complement: the value is u - (2**(8k) - 1) */
                uint64_t d = (k == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * k)) - 1) - u;
                if (k < 8) {
                    v = PyLong_FromLongLong(-(long long)d);
                }
                else {
                    PyObject *magnitude = PyLong_FromUnsignedLongLong(d);
                    if (magnitude == NULL) {
                        goto error;
                    }
                    v = PyNumber_Negative(magnitude);
                    Py_DECREF(magnitude);
                }
            }
            pos += 1 + (Py_ssize_t)k;
        }
        else if (code == 0x00) {
            /* top level: a None (this decoder leaves nested tuples to Python) */
            v = Py_NewRef(Py_None);
            pos += 1;
        }
        else if (code == 0x26 || code == 0x27) {
            v = Py_NewRef(code == 0x27 ? Py_True : Py_False);
            pos += 1;
        }
        else if (code == 0x21) {
            if (pos + 9 > n) {
                goto fallback;
            }
            uint64_t bits = 0;
            for (int i = 1; i <= 8; i++) {
                bits = (bits << 8) | s[pos + i];
            }
            bits = (bits & ((uint64_t)1 << 63)) ? bits ^ ((uint64_t)1 << 63) : ~bits;
            double d;
            memcpy(&d, &bits, sizeof d);
            v = PyFloat_FromDouble(d);
            pos += 9;
        }
        else {
            goto fallback;
        }
        if (v == NULL || items_push(&it, v) < 0) {
            goto error;
        }
    }

    PyObject *result = PyTuple_New(it.len);
    if (result == NULL) {
        goto error;
    }
    for (Py_ssize_t i = 0; i < it.len; i++) {
        PyTuple_SET_ITEM(result, i, it.items[i]); /* steals */
    }
    it.len = 0;
    items_clear(&it);
    return result;

fallback:
    items_clear(&it);
    Py_RETURN_NONE;

error:
    items_clear(&it);
    return NULL;
}

static PyMethodDef accel_methods[] = {
    {"unpack", (PyCFunction)(void (*)(void))accel_unpack, METH_FASTCALL,
     "unpack(b, prefix_len, /)\n--\n\n"
     "Decode the tuple in b[prefix_len:] if it holds only None, bytes, str, ints of\n"
     "at most 8 bytes, bools and doubles, and is well formed; else return None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef accel_module = {
    PyModuleDef_HEAD_INIT,
    "keyspace._tuples_accel",
    "Optional C decoder for the common cases of keyspace.tuples.unpack.",
    0,
    accel_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit__tuples_accel(void)
{
    return PyModule_Create(&accel_module);
}
