/* Optional C encoder and decoder for keyspace.tuples.
 *
 * unpack(b, prefix_len) decodes the common element types of the FoundationDB
 * tuple encoding (None, bytes, str, ints of at most 8 bytes, bools, doubles, and
 * tuples of them nested up to MAX_NESTING deep, such as the path tuple that
 * leads every stored key of the tuple scheme) in one pass over b. It returns
 * None, never an exception, for anything it does not handle or that is
 * malformed (UUIDs, single floats, versionstamps, big ints, unknown codes,
 * deeper nesting, truncated or invalid input, a prefix_len that is not a position in b, an
 * argument that is not bytes): the Python decoder then decides, so results and
 * error messages are those of keyspace.tuples in every case.
 *
 * pack(t) encodes a tuple (exactly tuple) whose elements are exactly None,
 * bytes, str, bool, int of at most 8 bytes, float or such tuples (nested up to
 * MAX_NESTING deep), into one growing buffer; for anything else (subclasses,
 * UUIDs, SingleFloat and Versionstamp values, bigger ints, str that is not
 * valid Unicode, deeper nesting, a t that is not a tuple) it returns None and the Python encoder decides, so results
 * and errors are those of keyspace.tuples.
 *
 * MAX_NESTING is keyspace.tuples.MAX_NESTING, exported as the module constant
 * of that name; keyspace.tuples uses this module only when the two are equal.
 * Python refuses input nested deeper by name (InvalidKey from pack, DecodeError
 * from unpack); this module hands such input over after at most MAX_NESTING
 * levels of recursion, so its C stack use is bounded whatever the input (about
 * 300 bytes a level for unpack and 130 for pack with gcc -O2 on x86-64: under
 * 40 KB at the limit).
 *
 * None of them raises anything but MemoryError (and TypeError for a wrong
 * number of arguments).
 *
 * Cost: one memchr per bytes/str element or key, one allocation per element
 * (pack: one per call, plus one UTF-8 copy per non-ASCII str), no intermediate
 * copies unless a value holds 00 bytes; the depth check is one comparison per
 * nested tuple.
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

/* keyspace.tuples.MAX_NESTING: the most tuples nested inside one another within
 * a packed tuple (05 openers open at once). */
#define MAX_NESTING 128

static int decode_elements(const unsigned char *s, Py_ssize_t n, Py_ssize_t *at, Items *it, int depth);

/* The elements from s[*at] to the end (depth 0) or to the 00 that ends a nested
 * tuple (depth > 0), pushed onto it. Returns 1 when decoded, 0 when this decoder
 * hands the input to Python (an unhandled type, malformed input, nesting deeper
 * than MAX_NESTING), -1 with an exception set on memory errors. */
static int
decode_elements(const unsigned char *s, Py_ssize_t n, Py_ssize_t *at, Items *it, int depth)
{
    Py_ssize_t pos = *at;
    while (pos < n) {
        unsigned int code = s[pos];
        PyObject *v;
        if (code == 0x02 || code == 0x01) {
            v = read_string(s, n, pos + 1, code == 0x02, &pos);
            if (v == Py_None) {
                return 0;
            }
        }
        else if (code >= 0x0C && code <= 0x1C) {
            unsigned int k = code >= 0x14 ? code - 0x14 : 0x14 - code;
            if (pos + 1 + (Py_ssize_t)k > n) {
                return 0;
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
                        return -1;
                    }
                    v = PyNumber_Negative(magnitude);
                    Py_DECREF(magnitude);
                }
            }
            pos += 1 + (Py_ssize_t)k;
        }
        else if (code == 0x00) {
            if (depth == 0) {
                v = Py_NewRef(Py_None); /* a top-level None */
                pos += 1;
            }
            else if (pos + 1 < n && s[pos + 1] == 0xFF) {
                v = Py_NewRef(Py_None); /* a None inside a nested tuple: 00 ff */
                pos += 2;
            }
            else {
                *at = pos + 1; /* the end of this nested tuple */
                return 1;
            }
        }
        else if (code == 0x05) {
            if (depth >= MAX_NESTING) {
                return 0;
            }
            Items inner;
            inner.items = inner.stack;
            inner.len = 0;
            inner.cap = STACK_ITEMS;
            pos += 1;
            int rc = decode_elements(s, n, &pos, &inner, depth + 1);
            if (rc <= 0) {
                items_clear(&inner);
                return rc;
            }
            v = PyTuple_New(inner.len);
            if (v == NULL) {
                items_clear(&inner);
                return -1;
            }
            for (Py_ssize_t i = 0; i < inner.len; i++) {
                PyTuple_SET_ITEM(v, i, inner.items[i]); /* steals */
            }
            inner.len = 0;
            items_clear(&inner);
        }
        else if (code == 0x26 || code == 0x27) {
            v = Py_NewRef(code == 0x27 ? Py_True : Py_False);
            pos += 1;
        }
        else if (code == 0x21) {
            if (pos + 9 > n) {
                return 0;
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
            return 0;
        }
        if (v == NULL || items_push(it, v) < 0) {
            return -1;
        }
    }
    if (depth > 0) {
        return 0; /* a nested tuple without its terminator */
    }
    *at = pos;
    return 1;
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
    int rc = decode_elements(s, n, &pos, &it, 0);
    if (rc <= 0) {
        items_clear(&it);
        if (rc < 0) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    PyObject *result = PyTuple_New(it.len);
    if (result == NULL) {
        items_clear(&it);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < it.len; i++) {
        PyTuple_SET_ITEM(result, i, it.items[i]); /* steals */
    }
    it.len = 0;
    items_clear(&it);
    return result;
}

/* -- encoding ---------------------------------------------------------------- */

#define STACK_BYTES 256

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
    char stack[STACK_BYTES];
} Buf;

/* Room for extra more bytes. Returns -1 (MemoryError set) on failure. */
static int
buf_reserve(Buf *b, Py_ssize_t extra)
{
    if (extra <= b->cap - b->len) {
        return 0;
    }
    if (extra > PY_SSIZE_T_MAX / 2 - b->len) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t cap = (b->len + extra) * 2;
    char *grown;
    if (b->data == b->stack) {
        grown = PyMem_Malloc((size_t)cap);
        if (grown != NULL) {
            memcpy(grown, b->stack, (size_t)b->len);
        }
    }
    else {
        grown = PyMem_Realloc(b->data, (size_t)cap);
    }
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = grown;
    b->cap = cap;
    return 0;
}

static void
buf_free(Buf *b)
{
    if (b->data != b->stack) {
        PyMem_Free(b->data);
    }
}

/* code | s[0:n] with every 00 written as 00 ff | 00 */
static int
put_escaped(Buf *b, unsigned char code, const char *s, Py_ssize_t n)
{
    Py_ssize_t zeros = 0;
    const char *p = s;
    const char *end = s + n;
    const char *z;
    while (p < end && (z = memchr(p, 0, (size_t)(end - p))) != NULL) {
        zeros++;
        p = z + 1;
    }
    if (n > PY_SSIZE_T_MAX - 2 - zeros) {
        PyErr_NoMemory();
        return -1;
    }
    if (buf_reserve(b, n + zeros + 2) < 0) {
        return -1;
    }
    char *out = b->data + b->len;
    *out++ = (char)code;
    if (zeros == 0) {
        memcpy(out, s, (size_t)n);
        out += n;
    }
    else {
        p = s;
        while (p < end && (z = memchr(p, 0, (size_t)(end - p))) != NULL) {
            memcpy(out, p, (size_t)(z - p + 1));
            out += z - p + 1;
            *out++ = (char)0xFF;
            p = z + 1;
        }
        memcpy(out, p, (size_t)(end - p));
        out += end - p;
    }
    *out++ = 0;
    b->len = out - b->data;
    return 0;
}

/* code | the k low bytes of u, big-endian (k <= 8) */
static int
put_fixed(Buf *b, unsigned char code, uint64_t u, unsigned int k)
{
    if (buf_reserve(b, 1 + (Py_ssize_t)k) < 0) {
        return -1;
    }
    unsigned char *out = (unsigned char *)b->data + b->len;
    out[0] = code;
    for (unsigned int i = k; i > 0; i--) {
        out[i] = (unsigned char)(u & 0xFF);
        u >>= 8;
    }
    b->len += 1 + (Py_ssize_t)k;
    return 0;
}

static unsigned int
byte_length(uint64_t u)
{
    unsigned int k = 0;
    while (u != 0) {
        k++;
        u >>= 8;
    }
    return k;
}

/* An int of type int: 1 written, 0 not handled (|v| >= 2**64 - 1, which takes
 * the 9-255 byte form), -1 on memory errors. */
static int
put_int(Buf *b, PyObject *x)
{
    int overflow;
    long long ll = PyLong_AsLongLongAndOverflow(x, &overflow);
    uint64_t magnitude;
    int negative;
    if (ll == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError)) {
            return -1;
        }
        PyErr_Clear();
        return 0;
    }
    if (overflow == 0) {
        if (ll == 0) {
            return put_fixed(b, 0x14, 0, 0) < 0 ? -1 : 1;
        }
        negative = ll < 0;
        /* -(ll + 1) + 1 has no overflow for LLONG_MIN */
        magnitude = negative ? (uint64_t)(-(ll + 1)) + 1 : (uint64_t)ll;
    }
    else {
        negative = overflow < 0;
        PyObject *m = negative ? PyNumber_Negative(x) : Py_NewRef(x);
        if (m == NULL) {
            return -1;
        }
        magnitude = PyLong_AsUnsignedLongLong(m);
        Py_DECREF(m);
        if (magnitude == (uint64_t)-1 && PyErr_Occurred()) {
            if (PyErr_ExceptionMatches(PyExc_MemoryError)) {
                return -1;
            }
            PyErr_Clear();
            return 0;
        }
    }
    if (magnitude == UINT64_MAX) {
        return 0;
    }
    unsigned int k = byte_length(magnitude);
    if (!negative) {
        return put_fixed(b, (unsigned char)(0x14 + k), magnitude, k) < 0 ? -1 : 1;
    }
    /* one's complement: (2**(8k) - 1) - |v| */
    uint64_t ones = k == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * k)) - 1;
    return put_fixed(b, (unsigned char)(0x14 - k), ones - magnitude, k) < 0 ? -1 : 1;
}

/* Encode the elements of tuple t into b; nested tuples (depth > 0) write None as
 * 00 ff. Returns 1 when encoded, 0 when Python must decide (a type or value this
 * encoder leaves to it), -1 with an exception set on memory errors. */
static int
put_elements(Buf *b, PyObject *t, int depth)
{
    Py_ssize_t n = PyTuple_GET_SIZE(t);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyTuple_GET_ITEM(t, i);
        int rc;
        if (PyUnicode_CheckExact(x)) {
            if (PyUnicode_IS_ASCII(x)) {
                rc = put_escaped(b, 0x02, (const char *)PyUnicode_DATA(x), PyUnicode_GET_LENGTH(x));
            }
            else {
                /* a temporary: PyUnicode_AsUTF8AndSize would keep a copy in x */
                PyObject *utf8 = PyUnicode_AsUTF8String(x);
                if (utf8 == NULL) {
                    if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
                        PyErr_Clear(); /* lone surrogates: Python raises InvalidName */
                        return 0;
                    }
                    return -1;
                }
                rc = put_escaped(b, 0x02, PyBytes_AS_STRING(utf8), PyBytes_GET_SIZE(utf8));
                Py_DECREF(utf8);
            }
        }
        else if (PyBytes_CheckExact(x)) {
            rc = put_escaped(b, 0x01, PyBytes_AS_STRING(x), PyBytes_GET_SIZE(x));
        }
        else if (PyLong_CheckExact(x)) {
            rc = put_int(b, x);
            if (rc == 0) {
                return 0;
            }
        }
        else if (x == Py_None) {
            rc = depth == 0 ? put_fixed(b, 0x00, 0, 0) : put_fixed(b, 0x00, 0xFF, 1);
        }
        else if (x == Py_True || x == Py_False) {
            rc = put_fixed(b, x == Py_True ? 0x27 : 0x26, 0, 0);
        }
        else if (PyFloat_CheckExact(x)) {
            double d = PyFloat_AS_DOUBLE(x);
            uint64_t bits;
            memcpy(&bits, &d, sizeof bits);
            bits = (bits & ((uint64_t)1 << 63)) ? ~bits : bits ^ ((uint64_t)1 << 63);
            rc = put_fixed(b, 0x21, bits, 8);
        }
        else if (PyTuple_CheckExact(x) && depth < MAX_NESTING) {
            if (put_fixed(b, 0x05, 0, 0) < 0) {
                return -1;
            }
            int inner = put_elements(b, x, depth + 1);
            if (inner <= 0) {
                return inner;
            }
            rc = put_fixed(b, 0x00, 0, 0);
        }
        else {
            return 0;
        }
        if (rc < 0) {
            return -1;
        }
    }
    return 1;
}

static PyObject *
accel_pack(PyObject *module, PyObject *t)
{
    (void)module;
    if (!PyTuple_CheckExact(t)) {
        Py_RETURN_NONE;
    }
    Buf b;
    b.data = b.stack;
    b.len = 0;
    b.cap = STACK_BYTES;
    int rc = put_elements(&b, t, 0);
    if (rc <= 0) {
        buf_free(&b);
        if (rc < 0) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    PyObject *result = PyBytes_FromStringAndSize(b.data, b.len);
    buf_free(&b);
    return result;
}

static PyMethodDef accel_methods[] = {
    {"unpack", (PyCFunction)(void (*)(void))accel_unpack, METH_FASTCALL,
     "unpack(b, prefix_len, /)\n--\n\n"
     "Decode the tuple in b[prefix_len:] if it holds only None, bytes, str, ints of\n"
     "at most 8 bytes, bools, doubles and such tuples nested at most MAX_NESTING\n"
     "deep, and is well formed; else return None."},
    {"pack", (PyCFunction)accel_pack, METH_O,
     "pack(t, /)\n--\n\n"
     "Encode the tuple t if it is exactly a tuple of None, bytes, str (valid\n"
     "Unicode), bools, ints of at most 8 bytes, floats and such tuples nested at\n"
     "most MAX_NESTING deep (exact types); else return None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef accel_module = {
    PyModuleDef_HEAD_INIT,
    "keyspace._tuples_accel",
    "Optional C encoder and decoders for the common cases of keyspace.tuples.",
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
    PyObject *module = PyModule_Create(&accel_module);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddIntConstant(module, "MAX_NESTING", MAX_NESTING) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
