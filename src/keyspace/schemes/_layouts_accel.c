/* Optional C forms of scheme layouts: key transforms, child steps and the memo of
 * Scheme.encode (keyspace.schemes, whose pure-Python functions are the reference).
 *
 * Transform(kind, prefix, forbidden, text, fallback, chunk_fallback) is the C
 * form of a layout's stored() and decode_chunk() (keyspace.schemes._layouts,
 * whose pure-Python functions are the reference). kind:
 *
 *   0 raw     prefix + key                (a key starting with the byte
 *                                          `forbidden` >= 0 goes to fallback)
 *   1 tuple   prefix + 01 key(00 -> 00 ff) 00 for bytes keys,
 *             prefix + 02 utf8(00 -> 00 ff) 00 for str keys
 *   2 hex     prefix + lower-case hex digits of key
 *   3 u64len  prefix + u64le(len key) + key
 *
 * text: 0 the scheme's own keys (bytes; str too in the tuple kind), 1 str keys
 * UTF-8 encoded first (the str codec over a byte scheme), 2 str keys only (the
 * str codec in the tuple scheme), 3 keys of a codec: Transform(..., encode) calls
 * encode(key) first and takes its bytes as text 0 takes a bytes key (a key
 * codec composed with the layout, with no Python frame between them); its
 * decode_chunk is chunk_fallback (the codec decodes the keys). With
 * Transform(..., encode, int_size, int_signed) (int_size 1, 2, 4 or 8) the codec
 * declares that it encodes an int within the range of that many bytes (signed
 * or not) as its little-endian two's complement: such a key (an exact int) is
 * packed in C, and every other key goes to encode.
 *
 * t(key) returns the stored key for the keys above; for every other key it
 * returns fallback(key), which raises the scheme's or codec's error.
 *
 * t.with_reserved(reserved, refuse) is a copy of t that checks every stored key
 * it returns against reserved, a tuple of (lo, hi) bytes ranges: a key in one
 * of them calls refuse(key, stored, lo, hi), which raises (the keyspace's
 * records live there). Cost: a memcmp or two per range.
 *
 * t.stored_pairs(pairs), for a list or tuple of exact (key, value) tuples or a
 * dict, all of whose values are exactly bytes, returns [(t(key), value), ...] in
 * their order; for any other input (or one that changes meanwhile) it returns
 * NotImplemented, and the caller's reference reads it. t(key)'s errors propagate.
 * Cost: t(key) and one tuple a pair.
 *
 * t.decode_chunk(items), for a list of (stored key, value) pairs read from the
 * layout's own ranges, returns [(key, value), ...], dropping pairs whose key is a
 * child's (hex: a 00 after the prefix). When any pair is not one it handles
 * (another element type, invalid digits, a length field that does not match,
 * invalid UTF-8 for text 1) it returns chunk_fallback(items) instead, so results
 * and errors are the reference's.
 *
 * Cost of t(key): one pass over the key (memchr for the tuple kind) and one
 * allocation; a chunk costs one allocation per key and pair.
 *
 * memo_encode(fallback) makes the method Scheme.encode of keyspace.schemes._base
 * (its class body defines encode as memo_encode(the pure-Python encode, the
 * reference), where the module is built). Called as s.encode(path, key) it
 * does what the reference does: it looks path up in s._memo (a dict of path ->
 * (kept path, stored)), and when it finds an entry and path is the kept path
 * itself or a tuple of exactly str and bytes components it returns
 * stored(key) (a Transform is called in C); it calls s._encode_new(path, key)
 * where the reference does: no s._memo (AttributeError), no entry, a lookup
 * that raises any Exception but MemoryError (an unhashable path, whatever a
 * component's __hash__ or __eq__ raises), or a path of other component types.
 * Anything else (keyword arguments, another number of arguments, a memo that is
 * not a dict or an entry that is not a pair, neither of which _compiled makes) is
 * handed to fallback, which then reads the memo itself. A subclass that
 * defines encode overrides it as it would the Python method. Cost: one
 * attribute lookup, one dict lookup and the call of stored, with no Python
 * frame in between.
 *
 * lp_decode(fallback) makes the method LengthPrefixed.decode (its reference,
 * fallback). Called as s.decode(stored, depth) with stored exactly bytes and
 * depth an exact int from 0 to half its length, it returns what the reference
 * does, (components, key), for a stored key that holds depth length-prefixed
 * components; every other call (keyword arguments, other types, a depth out of
 * that range, a key that ends inside a length field or a component) is handed
 * to fallback, which returns or raises as the reference. Cost: one pass over
 * the length fields and depth + 1 allocations of bytes.
 *
 * hex_child_step(at, depth, fallback) is the C form of AsciiHex.child_step(path)
 * (depth: len(path), at: the length of its prefix; fallback: the Python step,
 * the reference): a key of lower-case digits and 00 separators whose parts are
 * all even and whose part number depth starts at at and ends at a separator
 * gives (child, the key up to that separator + 01); every other call goes to
 * fallback. Cost: one pass over the key.
 *
 * sep_child_step(at, sep, allowed, fallback) is the C form of
 * Sublevel.child_step(path) (at: the length of its prefix, sep: the separator
 * byte, allowed: the bytes a name may hold, fallback: the Python step): a key
 * with the separator at at, a next separator that no separator follows and an
 * allowed name between gives (name, the key up to that separator + sep + 1);
 * every other call goes to fallback. Cost: one memchr and a pass over the name.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "structmember.h"

enum { K_RAW, K_TUPLE, K_HEX, K_U64LEN };
enum { T_SCHEME, T_UTF8, T_STR, T_CODEC };


/* -- Transform ------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int kind;
    int text;
    int forbidden;
    PyObject *prefix;
    PyObject *fallback;
    PyObject *chunk_fallback;
    PyObject *reserved; /* NULL, or a tuple of (lo, hi) bytes pairs */
    PyObject *refuse;   /* with reserved: refuse(key, stored, lo, hi) raises */
    PyObject *encode;   /* text T_CODEC: the key codec's encode, else NULL */
    int int_size;       /* T_CODEC: 1, 2, 4 or 8 when int keys are packed here, else 0 */
    int int_signed;
} Transform;

static PyTypeObject TransformType;

/* The stored key of the key bytes k[0:n] (code: tuple type code), or NULL. */
static PyObject *
build(Transform *t, const char *k, Py_ssize_t n, char code)
{
    const char *p = PyBytes_AS_STRING(t->prefix);
    Py_ssize_t plen = PyBytes_GET_SIZE(t->prefix);
    PyObject *out;
    char *o;
    switch (t->kind) {
    case K_RAW:
        out = PyBytes_FromStringAndSize(NULL, plen + n);
        if (out == NULL) {
            return NULL;
        }
        o = PyBytes_AS_STRING(out);
        memcpy(o, p, (size_t)plen);
        memcpy(o + plen, k, (size_t)n);
        return out;
    case K_TUPLE: {
        Py_ssize_t zeros = 0;
        const char *z = k, *end = k + n;
        while (z < end && (z = memchr(z, 0, (size_t)(end - z))) != NULL) {
            zeros++;
            z++;
        }
        out = PyBytes_FromStringAndSize(NULL, plen + n + zeros + 2);
        if (out == NULL) {
            return NULL;
        }
        o = PyBytes_AS_STRING(out);
        memcpy(o, p, (size_t)plen);
        o += plen;
        *o++ = code;
        if (zeros == 0) {
            memcpy(o, k, (size_t)n);
            o += n;
        }
        else {
            for (Py_ssize_t i = 0; i < n; i++) {
                *o++ = k[i];
                if (k[i] == 0) {
                    *o++ = (char)0xff;
                }
            }
        }
        *o = 0;
        return out;
    }
    case K_HEX: {
        static const char digits[] = "0123456789abcdef";
        out = PyBytes_FromStringAndSize(NULL, plen + 2 * n);
        if (out == NULL) {
            return NULL;
        }
        o = PyBytes_AS_STRING(out);
        memcpy(o, p, (size_t)plen);
        o += plen;
        for (Py_ssize_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)k[i];
            *o++ = digits[c >> 4];
            *o++ = digits[c & 15];
        }
        return out;
    }
    default: { /* K_U64LEN */
        out = PyBytes_FromStringAndSize(NULL, plen + 8 + n);
        if (out == NULL) {
            return NULL;
        }
        o = PyBytes_AS_STRING(out);
        memcpy(o, p, (size_t)plen);
        o += plen;
        uint64_t len = (uint64_t)n;
        for (int i = 0; i < 8; i++) {
            *o++ = (char)((len >> (8 * i)) & 0xff);
        }
        memcpy(o, k, (size_t)n);
        return out;
    }
    }
}

/* stored key of key, or NULL with an exception (the fallback's, or MemoryError). */
static PyObject *
build_key(Transform *t, PyObject *key)
{
    if (t->text == T_CODEC) {
        if (t->int_size > 0 && PyLong_CheckExact(key)) {
            unsigned long long bits = 0;
            int fits = 0;
            if (t->int_signed) {
                int overflow = 0;
                long long v = PyLong_AsLongLongAndOverflow(key, &overflow);
                if (v == -1 && PyErr_Occurred()) {
                    return NULL;
                }
                long long half = t->int_size == 8 ? 0 : (1LL << (8 * t->int_size - 1));
                fits = !overflow && (t->int_size == 8 || (v >= -half && v < half));
                bits = (unsigned long long)v;
            }
            else {
                unsigned long long v = PyLong_AsUnsignedLongLong(key);
                if (v == (unsigned long long)-1 && PyErr_Occurred()) {
                    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
                        return NULL;
                    }
                    PyErr_Clear(); /* negative or too large: encode names the fault */
                }
                else {
                    fits = t->int_size == 8 || v < (1ULL << (8 * t->int_size));
                    bits = v;
                }
            }
            if (fits) {
                char buf[8];
                for (int i = 0; i < t->int_size; i++) {
                    buf[i] = (char)((bits >> (8 * i)) & 0xff);
                }
                if (!(t->forbidden >= 0 && (unsigned char)buf[0] == t->forbidden)) {
                    return build(t, buf, t->int_size, 0x01);
                }
            }
        }
        PyObject *raw = PyObject_CallOneArg(t->encode, key);
        if (raw == NULL) {
            return NULL; /* the codec's error, as the reference raises it */
        }
        if (PyBytes_CheckExact(raw)) {
            const char *k = PyBytes_AS_STRING(raw);
            Py_ssize_t n = PyBytes_GET_SIZE(raw);
            if (!(t->forbidden >= 0 && n > 0 && (unsigned char)k[0] == t->forbidden)) {
                PyObject *out = build(t, k, n, 0x01);
                Py_DECREF(raw);
                return out;
            }
        }
        Py_DECREF(raw);
        return PyObject_CallOneArg(t->fallback, key);
    }
    if (PyBytes_CheckExact(key) && t->text == T_SCHEME) {
        const char *k = PyBytes_AS_STRING(key);
        Py_ssize_t n = PyBytes_GET_SIZE(key);
        if (!(t->forbidden >= 0 && n > 0 && (unsigned char)k[0] == t->forbidden)) {
            return build(t, k, n, 0x01);
        }
    }
    else if (PyUnicode_CheckExact(key) && (t->text != T_SCHEME || t->kind == K_TUPLE)
             && (t->kind == K_TUPLE || t->text == T_UTF8)) {
        char code = t->text == T_UTF8 ? 0x01 : 0x02;
        if (PyUnicode_IS_ASCII(key)) {
            const char *k = (const char *)PyUnicode_DATA(key);
            Py_ssize_t n = PyUnicode_GET_LENGTH(key);
            if (!(t->forbidden >= 0 && n > 0 && (unsigned char)k[0] == t->forbidden)) {
                return build(t, k, n, code);
            }
        }
        else {
            /* a temporary: PyUnicode_AsUTF8AndSize would keep a copy in the key */
            PyObject *utf8 = PyUnicode_AsUTF8String(key);
            if (utf8 == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
                    return NULL;
                }
                PyErr_Clear(); /* lone surrogates: the fallback names the fault */
            }
            else {
                const char *k = PyBytes_AS_STRING(utf8);
                Py_ssize_t n = PyBytes_GET_SIZE(utf8);
                PyObject *out = NULL;
                int ok = !(t->forbidden >= 0 && n > 0 && (unsigned char)k[0] == t->forbidden);
                if (ok) {
                    out = build(t, k, n, code);
                }
                Py_DECREF(utf8);
                if (ok) {
                    return out;
                }
            }
        }
    }
    return PyObject_CallOneArg(t->fallback, key);
}

/* Whether stored lies in [lo, hi) (both bytes). */
static int
in_range(PyObject *stored, PyObject *lo, PyObject *hi)
{
    const char *s = PyBytes_AS_STRING(stored);
    Py_ssize_t n = PyBytes_GET_SIZE(stored);
    Py_ssize_t ln = PyBytes_GET_SIZE(lo), hn = PyBytes_GET_SIZE(hi);
    int c = memcmp(s, PyBytes_AS_STRING(lo), (size_t)(n < ln ? n : ln));
    if (c < 0 || (c == 0 && n < ln)) {
        return 0; /* below lo */
    }
    c = memcmp(s, PyBytes_AS_STRING(hi), (size_t)(n < hn ? n : hn));
    return c < 0 || (c == 0 && n < hn);
}

/* build_key, then refuse a stored key in one of the reserved ranges. */
static PyObject *
transform_key(Transform *t, PyObject *key)
{
    PyObject *out = build_key(t, key);
    if (out == NULL || t->reserved == NULL || !PyBytes_Check(out)) {
        return out;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(t->reserved);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PyTuple_GET_ITEM(t->reserved, i);
        PyObject *lo = PyTuple_GET_ITEM(pair, 0), *hi = PyTuple_GET_ITEM(pair, 1);
        if (in_range(out, lo, hi)) {
            PyObject *args[4] = {key, out, lo, hi};
            PyObject *res = PyObject_Vectorcall(t->refuse, args, 4, NULL);
            Py_DECREF(out);
            if (res != NULL) {
                Py_DECREF(res);
                PyErr_SetString(PyExc_SystemError, "refuse returned instead of raising");
            }
            return NULL;
        }
    }
    return out;
}

static PyObject *
transform_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (kwnames != NULL || PyVectorcall_NARGS(nargsf) != 1) {
        PyErr_SetString(PyExc_TypeError, "a layout transform takes exactly one key");
        return NULL;
    }
    return transform_key((Transform *)callable, args[0]);
}

/* The key of one stored key (a new reference), Py_None (borrowed) when the key is
 * not an own key (hex: a child's), NULL with no exception set when this code does
 * not handle it, NULL with an exception on memory errors. */
static PyObject *
decode_key(Transform *t, PyObject *stored, int *skip)
{
    *skip = 0;
    if (!PyBytes_CheckExact(stored)) {
        return NULL;
    }
    Py_ssize_t plen = PyBytes_GET_SIZE(t->prefix);
    Py_ssize_t n = PyBytes_GET_SIZE(stored);
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(stored);
    if (n < plen) {
        return NULL;
    }
    const unsigned char *r = s + plen;
    Py_ssize_t rn = n - plen;
    PyObject *key;
    int as_text = t->text == T_UTF8;
    switch (t->kind) {
    case K_RAW:
        key = as_text ? PyUnicode_DecodeUTF8((const char *)r, rn, NULL)
                      : PyBytes_FromStringAndSize((const char *)r, rn);
        break;
    case K_TUPLE: {
        if (rn < 2 || (r[0] != 0x01 && r[0] != 0x02) || r[rn - 1] != 0x00) {
            return NULL;
        }
        int is_str = r[0] == 0x02;
        const unsigned char *body = r + 1, *end = r + rn - 1;
        const unsigned char *z = memchr(body, 0, (size_t)(end - body));
        if (z == NULL) {
            key = (is_str || as_text) ? PyUnicode_DecodeUTF8((const char *)body, end - body, NULL)
                                      : PyBytes_FromStringAndSize((const char *)body, end - body);
            break;
        }
        Py_ssize_t escapes = 0;
        do {
            if (z + 1 >= end || z[1] != 0xFF) {
                return NULL; /* an unescaped 00: more than one element */
            }
            escapes++;
            z = memchr(z + 2, 0, (size_t)(end - z - 2));
        } while (z != NULL);
        PyObject *raw = PyBytes_FromStringAndSize(NULL, (end - body) - escapes);
        if (raw == NULL) {
            return NULL;
        }
        unsigned char *o = (unsigned char *)PyBytes_AS_STRING(raw);
        for (const unsigned char *p = body; p < end; p++) {
            *o++ = *p;
            if (*p == 0) {
                p++;
            }
        }
        if (!(is_str || as_text)) {
            return raw;
        }
        key = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw), NULL);
        Py_DECREF(raw);
        break;
    }
    case K_HEX: {
        if (memchr(r, 0, (size_t)rn) != NULL) {
            *skip = 1;
            return Py_None;
        }
        if (rn % 2) {
            return NULL;
        }
        PyObject *raw = PyBytes_FromStringAndSize(NULL, rn / 2);
        if (raw == NULL) {
            return NULL;
        }
        unsigned char *o = (unsigned char *)PyBytes_AS_STRING(raw);
        for (Py_ssize_t i = 0; i < rn; i += 2) {
            int hi = r[i] >= '0' && r[i] <= '9' ? r[i] - '0' : r[i] >= 'a' && r[i] <= 'f' ? r[i] - 'a' + 10 : -1;
            int lo = r[i + 1] >= '0' && r[i + 1] <= '9'   ? r[i + 1] - '0'
                     : r[i + 1] >= 'a' && r[i + 1] <= 'f' ? r[i + 1] - 'a' + 10
                                                          : -1;
            if (hi < 0 || lo < 0) {
                Py_DECREF(raw);
                return NULL;
            }
            *o++ = (unsigned char)(hi << 4 | lo);
        }
        if (!as_text) {
            return raw;
        }
        key = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw), NULL);
        Py_DECREF(raw);
        break;
    }
    default: { /* K_U64LEN */
        if (rn < 8) {
            return NULL;
        }
        uint64_t len = 0;
        for (int i = 7; i >= 0; i--) {
            len = len << 8 | r[i];
        }
        if (len != (uint64_t)(rn - 8)) {
            return NULL;
        }
        key = as_text ? PyUnicode_DecodeUTF8((const char *)r + 8, rn - 8, NULL)
                      : PyBytes_FromStringAndSize((const char *)r + 8, rn - 8);
        break;
    }
    }
    if (key == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
        PyErr_Clear(); /* the reference raises the codec's error */
    }
    return key;
}

/* A new (key, value) pair: it takes over `key` (a new reference, released where
   the pair cannot be made) and takes a reference of its own to `value`. */
static PyObject *
pair_of(PyObject *key, PyObject *value)
{
    PyObject *pair = PyTuple_New(2);
    if (pair == NULL) {
        Py_DECREF(key);
        return NULL;
    }
    PyTuple_SET_ITEM(pair, 0, key); /* steals */
    PyTuple_SET_ITEM(pair, 1, Py_NewRef(value));
    return pair;
}

static PyObject *
transform_decode_chunk(PyObject *self, PyObject *items)
{
    Transform *t = (Transform *)self;
    if (!PyList_CheckExact(items) || t->text == T_CODEC) {
        return PyObject_CallOneArg(t->chunk_fallback, items);
    }
    Py_ssize_t n = PyList_GET_SIZE(items);
    PyObject *result = PyList_New(n);
    if (result == NULL) {
        return NULL;
    }
    Py_ssize_t j = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyList_GET_SIZE(items) != n) { /* changed under us: the reference decides */
            goto fallback;
        }
        PyObject *item = PyList_GET_ITEM(items, i);
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2) {
            goto fallback;
        }
        Py_INCREF(item); /* the allocations below may run arbitrary code (gc) */
        int skip;
        PyObject *key = decode_key(t, PyTuple_GET_ITEM(item, 0), &skip);
        if (skip) {
            Py_DECREF(item);
            continue;
        }
        if (key == NULL) {
            Py_DECREF(item);
            if (PyErr_Occurred()) {
                goto error;
            }
            goto fallback;
        }
        PyObject *pair = pair_of(key, PyTuple_GET_ITEM(item, 1));
        Py_DECREF(item);
        if (pair == NULL) {
            goto error;
        }
        PyList_SET_ITEM(result, j++, pair); /* steals */
    }
    if (j < n && PyList_SetSlice(result, j, n, NULL) < 0) {
        goto error;
    }
    return result;

fallback:
    Py_DECREF(result); /* the unset slots are NULL: list_dealloc skips them */
    return PyObject_CallOneArg(t->chunk_fallback, items);

error:
    Py_DECREF(result);
    return NULL;
}

/* One (t(key), value) pair of an element of t.stored_pairs' input; NULL with no error
   set where the element is no exact 2-tuple of a value exactly bytes. */
static PyObject *
stored_pair(Transform *t, PyObject *key, PyObject *value)
{
    if (!PyBytes_CheckExact(value)) {
        return NULL;
    }
    Py_INCREF(key); /* t(key) may run Python code (its fallback) that drops the element */
    Py_INCREF(value);
    PyObject *stored = transform_key(t, key);
    Py_DECREF(key);
    if (stored == NULL) {
        Py_DECREF(value);
        return NULL;
    }
    PyObject *pair = pair_of(stored, value);
    Py_DECREF(value);
    return pair;
}

/* t.stored_pairs(pairs): [(t(key), value) for key, value in pairs] for a list or tuple
   of exact 2-tuples, or a dict, whose values are all exactly bytes; NotImplemented
   (nothing kept) for anything else, or where the input changes meanwhile, so that
   the caller's reference reads it all. The errors of t(key) propagate (a key met
   before them had its pair made, as the reference makes it). */
static PyObject *
transform_stored_pairs(PyObject *self, PyObject *pairs)
{
    Transform *t = (Transform *)self;
    int is_dict = PyDict_CheckExact(pairs);
    if (!is_dict && !PyList_CheckExact(pairs) && !PyTuple_CheckExact(pairs)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    Py_ssize_t n = is_dict ? PyDict_GET_SIZE(pairs) : Py_SIZE(pairs);
    PyObject *result = PyList_New(n);
    if (result == NULL) {
        return NULL;
    }
    Py_ssize_t at = 0; /* PyDict_Next's position */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key, *value, *pair;
        if (is_dict) {
            if (PyDict_GET_SIZE(pairs) != n || !PyDict_Next(pairs, &at, &key, &value)) {
                goto not_handled;
            }
        }
        else {
            if (Py_SIZE(pairs) != n) {
                goto not_handled;
            }
            PyObject *item = PyList_CheckExact(pairs) ? PyList_GET_ITEM(pairs, i) : PyTuple_GET_ITEM(pairs, i);
            if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2) {
                goto not_handled;
            }
            key = PyTuple_GET_ITEM(item, 0);
            value = PyTuple_GET_ITEM(item, 1);
        }
        pair = stored_pair(t, key, value);
        if (pair == NULL) {
            if (PyErr_Occurred()) {
                Py_DECREF(result);
                return NULL;
            }
            goto not_handled;
        }
        PyList_SET_ITEM(result, i, pair); /* steals */
    }
    return result;

not_handled:
    Py_DECREF(result); /* the unset slots are NULL: list_dealloc skips them */
    Py_RETURN_NOTIMPLEMENTED;
}

static PyObject *
transform_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    int kind, forbidden, text, int_size = 0, int_signed = 0;
    PyObject *prefix, *fallback, *chunk_fallback, *encode = NULL;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "Transform() takes positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "iO!iiOO|Oip:Transform", &kind, &PyBytes_Type, &prefix, &forbidden, &text, &fallback,
                          &chunk_fallback, &encode, &int_size, &int_signed)) {
        return NULL;
    }
    if (int_size != 0 && int_size != 1 && int_size != 2 && int_size != 4 && int_size != 8) {
        PyErr_Format(PyExc_ValueError, "Transform: int_size %d is not 0, 1, 2, 4 or 8", int_size);
        return NULL;
    }
    if (kind < K_RAW || kind > K_U64LEN || text < T_SCHEME || text > T_CODEC || forbidden < -1 || forbidden > 255) {
        PyErr_Format(PyExc_ValueError, "Transform: kind %d, text %d or forbidden byte %d out of range", kind, text,
                     forbidden);
        return NULL;
    }
    if (text == T_STR && kind != K_TUPLE) {
        PyErr_SetString(PyExc_ValueError, "Transform: str keys only (text 2) are for the tuple kind");
        return NULL;
    }
    if (!PyCallable_Check(fallback) || !PyCallable_Check(chunk_fallback)) {
        PyErr_SetString(PyExc_TypeError, "Transform: fallback and chunk_fallback must be callable");
        return NULL;
    }
    if ((text == T_CODEC) != (encode != NULL) || (encode != NULL && !PyCallable_Check(encode))) {
        PyErr_SetString(PyExc_TypeError, "Transform: a callable encode is given with text 3, and only then");
        return NULL;
    }
    Transform *t = PyObject_GC_New(Transform, type);
    if (t == NULL) {
        return NULL;
    }
    t->vectorcall = transform_vectorcall;
    t->kind = kind;
    t->text = text;
    t->forbidden = forbidden;
    t->prefix = Py_NewRef(prefix);
    t->fallback = Py_NewRef(fallback);
    t->chunk_fallback = Py_NewRef(chunk_fallback);
    t->reserved = NULL;
    t->refuse = NULL;
    t->encode = Py_XNewRef(encode);
    t->int_size = int_size;
    t->int_signed = int_signed;
    PyObject_GC_Track(t);
    return (PyObject *)t;
}

static PyObject *
transform_with_reserved(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Transform *t = (Transform *)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "with_reserved(reserved, refuse) takes 2 arguments");
        return NULL;
    }
    PyObject *reserved = args[0], *refuse = args[1];
    if (!PyTuple_CheckExact(reserved) || !PyCallable_Check(refuse)) {
        PyErr_SetString(PyExc_TypeError, "with_reserved: a tuple of (lo, hi) bytes pairs and a callable");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(reserved); i++) {
        PyObject *pair = PyTuple_GET_ITEM(reserved, i);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyBytes_CheckExact(PyTuple_GET_ITEM(pair, 0))
            || !PyBytes_CheckExact(PyTuple_GET_ITEM(pair, 1))) {
            PyErr_SetString(PyExc_TypeError, "with_reserved: each reserved range is a (lo, hi) pair of bytes");
            return NULL;
        }
    }
    Transform *c = PyObject_GC_New(Transform, Py_TYPE(self));
    if (c == NULL) {
        return NULL;
    }
    c->vectorcall = transform_vectorcall;
    c->kind = t->kind;
    c->text = t->text;
    c->forbidden = t->forbidden;
    c->prefix = Py_NewRef(t->prefix);
    c->fallback = Py_NewRef(t->fallback);
    c->chunk_fallback = Py_NewRef(t->chunk_fallback);
    c->reserved = PyTuple_GET_SIZE(reserved) ? Py_NewRef(reserved) : NULL;
    c->refuse = PyTuple_GET_SIZE(reserved) ? Py_NewRef(refuse) : NULL;
    c->encode = Py_XNewRef(t->encode);
    c->int_size = t->int_size;
    c->int_signed = t->int_signed;
    PyObject_GC_Track(c);
    return (PyObject *)c;
}

static int
transform_traverse(PyObject *self, visitproc visit, void *arg)
{
    Transform *t = (Transform *)self;
    Py_VISIT(t->fallback);
    Py_VISIT(t->chunk_fallback);
    Py_VISIT(t->reserved);
    Py_VISIT(t->refuse);
    Py_VISIT(t->encode);
    return 0;
}

static int
transform_clear(PyObject *self)
{
    Transform *t = (Transform *)self;
    Py_CLEAR(t->fallback);
    Py_CLEAR(t->chunk_fallback);
    Py_CLEAR(t->reserved);
    Py_CLEAR(t->refuse);
    Py_CLEAR(t->encode);
    return 0;
}

static void
transform_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    transform_clear(self);
    Py_CLEAR(((Transform *)self)->prefix);
    Py_TYPE(self)->tp_free(self);
}

static PyMethodDef transform_methods[] = {
    {"with_reserved", (PyCFunction)(void (*)(void))transform_with_reserved, METH_FASTCALL,
     "with_reserved(reserved, refuse, /)\n--\n\n"
     "This transform, refusing every stored key in one of the reserved (lo, hi)\n"
     "ranges: refuse(key, stored, lo, hi) is called instead, and must raise."},
    {"stored_pairs", transform_stored_pairs, METH_O,
     "stored_pairs(pairs): [(t(key), value) ...] for a list or tuple of pairs, or a dict, whose values\n"
     "are all exactly bytes; else NotImplemented (see the module)."},
    {"decode_chunk", transform_decode_chunk, METH_O,
     "decode_chunk(items, /)\n--\n\n"
     "[(key, value), ...] of the own keys among a list of (stored key, value)\n"
     "pairs of the layout's own ranges (see the module)."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef transform_members[] = {
    {"prefix", T_OBJECT, offsetof(Transform, prefix), READONLY, "the layout's prefix"},
    {"fallback", T_OBJECT, offsetof(Transform, fallback), READONLY, "the reference stored()"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject TransformType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace.schemes._layouts_accel.Transform",
    .tp_basicsize = sizeof(Transform),
    .tp_dealloc = transform_dealloc,
    .tp_vectorcall_offset = offsetof(Transform, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Transform(kind, prefix, forbidden, text, fallback, chunk_fallback): a layout's stored()\n"
              "and decode_chunk() in C (see keyspace.schemes._layouts_accel).",
    .tp_traverse = transform_traverse,
    .tp_clear = transform_clear,
    .tp_methods = transform_methods,
    .tp_members = transform_members,
    .tp_new = transform_new,
};


/* The binding of the C method Scheme.encode to an
   instance, as a Python function's: the descriptor itself from the class. */
static PyObject *
method_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        return Py_NewRef(self);
    }
    return PyMethod_New(self, obj);
}

/* Whether path is a tuple of exact str and bytes objects (runs no Python code). */
static int
is_exact_path(PyObject *path)
{
    if (!PyTuple_CheckExact(path)) {
        return 0;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(path);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *component = PyTuple_GET_ITEM(path, i);
        if (!PyUnicode_CheckExact(component) && !PyBytes_CheckExact(component)) {
            return 0;
        }
    }
    return 1;
}

/* exact_path(path): whether path is a tuple of exact str and bytes objects (the
   reference: keyspace.schemes._base._exact_path). */
static PyObject *
exact_path(PyObject *Py_UNUSED(module), PyObject *path)
{
    return PyBool_FromLong(is_exact_path(path));
}

/* -- Scheme.encode -------------------------------------------------------------------- */

/* A scheme's method in C (Scheme.encode's memo, LengthPrefixed.decode): its
   vectorcall serves the calls it knows and hands every other to fallback. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fallback; /* the pure-Python method, the reference */
} SchemeMethod;

static PyObject *str_memo;       /* "_memo", interned */
static PyObject *str_encode_new; /* "_encode_new", interned */

/* self._encode_new(path, key), as the reference calls it (an override is honoured). */
static PyObject *
encode_new(PyObject *self, PyObject *path, PyObject *key)
{
    PyObject *args[3] = {self, path, key};
    return PyObject_VectorcallMethod(str_encode_new, args, 3, NULL);
}

static PyObject *
memo_encode_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    SchemeMethod *e = (SchemeMethod *)callable;
    if (kwnames != NULL || PyVectorcall_NARGS(nargsf) != 3) {
        return PyObject_Vectorcall(e->fallback, args, nargsf, kwnames);
    }
    PyObject *self = args[0], *path = args[1], *key = args[2];
    PyObject *memo = PyObject_GetAttr(self, str_memo);
    if (memo == NULL) {
        if (PyErr_ExceptionMatches(PyExc_MemoryError) || !PyErr_ExceptionMatches(PyExc_Exception)) {
            return NULL;
        }
        PyErr_Clear(); /* no memo yet (AttributeError), as the reference's lookup catches it */
        return encode_new(self, path, key);
    }
    if (!PyDict_CheckExact(memo)) {
        /* not the memo _compiled makes: the reference does all of it */
        Py_DECREF(memo);
        return PyObject_Vectorcall(e->fallback, args, nargsf, NULL);
    }
    PyObject *entry = PyDict_GetItemWithError(memo, path); /* borrowed */
    if (entry == NULL) {
        Py_DECREF(memo);
        if (PyErr_Occurred()) {
            /* the errors the reference's lookup catches: every Exception but
               MemoryError (an unhashable path, whatever a component's __hash__ or
               __eq__ raises); _encode_new then refuses the path by name */
            if (PyErr_ExceptionMatches(PyExc_MemoryError) || !PyErr_ExceptionMatches(PyExc_Exception)) {
                return NULL;
            }
            PyErr_Clear();
        }
        return encode_new(self, path, key); /* a path not kept */
    }
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 2) {
        /* not an entry _compiled makes: the reference unpacks it (and looks again) */
        Py_DECREF(memo);
        return PyObject_Vectorcall(e->fallback, args, nargsf, NULL);
    }
    /* the kept path itself, or one of exactly str and bytes components (an equal
       path of other types goes to _encode_new); no Python code runs from the lookup
       to here, so the borrowed entry is alive */
    int hit = PyTuple_GET_ITEM(entry, 0) == path || is_exact_path(path);
    /* stored may run Python code that changes or drops the memo (or its entry):
       hold our own reference for the length of the call */
    PyObject *stored = Py_NewRef(PyTuple_GET_ITEM(entry, 1));
    Py_DECREF(memo);
    PyObject *res;
    if (!hit) {
        res = encode_new(self, path, key);
    }
    else if (Py_IS_TYPE(stored, &TransformType)) {
        res = transform_key((Transform *)stored, key);
    }
    else {
        res = PyObject_CallOneArg(stored, key);
    }
    Py_DECREF(stored);
    return res;
}

static int
scheme_method_traverse(PyObject *self, visitproc visit, void *arg)
{
    SchemeMethod *e = (SchemeMethod *)self;
    Py_VISIT(e->fallback);
    return 0;
}

static int
scheme_method_clear(PyObject *self)
{
    SchemeMethod *e = (SchemeMethod *)self;
    Py_CLEAR(e->fallback);
    return 0;
}

static void
scheme_method_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    scheme_method_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *
scheme_method_get_attr(PyObject *self, void *name)
{
    PyObject *fallback = ((SchemeMethod *)self)->fallback;
    if (fallback == NULL) {
        PyErr_SetString(PyExc_AttributeError, (const char *)name);
        return NULL;
    }
    return PyObject_GetAttrString(fallback, (const char *)name);
}

static PyGetSetDef scheme_method_getset[] = {
    {"__doc__", scheme_method_get_attr, NULL, NULL, "__doc__"},
    {"__name__", scheme_method_get_attr, NULL, NULL, "__name__"},
    {"__qualname__", scheme_method_get_attr, NULL, NULL, "__qualname__"},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef scheme_method_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(SchemeMethod, fallback), READONLY, "the pure-Python method"},
    {NULL, 0, 0, 0, NULL},
};

/* The type of one scheme method in C: `name` its type's name, `doc` its doc. */
#define SCHEME_METHOD_TYPE(name, doc)                                                                           \
    {                                                                                                           \
        PyVarObject_HEAD_INIT(NULL, 0).tp_name = "keyspace.schemes._layouts_accel." name,                     \
        .tp_basicsize = sizeof(SchemeMethod), .tp_dealloc = scheme_method_dealloc,                             \
        .tp_vectorcall_offset = offsetof(SchemeMethod, vectorcall), .tp_call = PyVectorcall_Call,               \
        .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL                        \
                    | Py_TPFLAGS_METHOD_DESCRIPTOR,                                                             \
        .tp_doc = doc, .tp_traverse = scheme_method_traverse, .tp_clear = scheme_method_clear,                  \
        .tp_getset = scheme_method_getset, .tp_members = scheme_method_members,                                 \
        .tp_descr_get = method_descr_get,                                                                       \
    }

static PyTypeObject MemoEncodeType =
    SCHEME_METHOD_TYPE("MemoEncode", "The C encode of schemes (see keyspace.schemes._layouts_accel.memo_encode).");

/* A SchemeMethod of `type` calling `vectorcall`, whose reference is the one
   argument in args (`name` the factory's, for its errors). */
static PyObject *
scheme_method_new(PyTypeObject *type, vectorcallfunc vectorcall, PyObject *const *args, Py_ssize_t nargs,
                  const char *name)
{
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes 1 argument (%zd given)", name, nargs);
        return NULL;
    }
    if (!PyCallable_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "fallback must be callable");
        return NULL;
    }
    SchemeMethod *e = PyObject_GC_New(SchemeMethod, type);
    if (e == NULL) {
        return NULL;
    }
    e->vectorcall = vectorcall;
    e->fallback = Py_NewRef(args[0]);
    PyObject_GC_Track(e);
    return (PyObject *)e;
}

static PyObject *
memo_encode(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    return scheme_method_new(&MemoEncodeType, memo_encode_vectorcall, args, nargs, "memo_encode");
}

/* -- LengthPrefixed.decode ------------------------------------------------------------ */

/* The components and key of raw, `depth` u16be-length-prefixed components then the
   key, or NULL without an error set where raw ends inside a length field or a
   component (the reference names the fault). */
static PyObject *
lp_split(const char *raw, Py_ssize_t n, Py_ssize_t depth)
{
    Py_ssize_t offset = 0;
    for (Py_ssize_t i = 0; i < depth; i++) {
        if (offset + 2 > n) {
            return NULL;
        }
        offset += 2 + (((unsigned char)raw[offset] << 8) | (unsigned char)raw[offset + 1]);
        if (offset > n) {
            return NULL;
        }
    }
    PyObject *components = PyTuple_New(depth);
    if (components == NULL) {
        return NULL;
    }
    offset = 0;
    for (Py_ssize_t i = 0; i < depth; i++) {
        Py_ssize_t size = ((unsigned char)raw[offset] << 8) | (unsigned char)raw[offset + 1];
        PyObject *component = PyBytes_FromStringAndSize(raw + offset + 2, size);
        if (component == NULL) {
            Py_DECREF(components);
            return NULL;
        }
        PyTuple_SET_ITEM(components, i, component);
        offset += 2 + size;
    }
    PyObject *key = PyBytes_FromStringAndSize(raw + offset, n - offset);
    if (key == NULL) {
        Py_DECREF(components);
        return NULL;
    }
    PyObject *res = PyTuple_Pack(2, components, key);
    Py_DECREF(components);
    Py_DECREF(key);
    return res;
}

static PyObject *
lp_decode_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    SchemeMethod *e = (SchemeMethod *)callable;
    if (kwnames == NULL && PyVectorcall_NARGS(nargsf) == 3 && PyBytes_CheckExact(args[1])
        && PyLong_CheckExact(args[2])) {
        int overflow;
        long long depth = PyLong_AsLongLongAndOverflow(args[2], &overflow);
        Py_ssize_t n = PyBytes_GET_SIZE(args[1]);
        /* each component takes two bytes at least: a larger depth fails, in the reference */
        if (!overflow && depth >= 0 && depth <= n / 2) {
            PyObject *res = lp_split(PyBytes_AS_STRING(args[1]), n, (Py_ssize_t)depth);
            if (res != NULL || PyErr_Occurred()) {
                return res;
            }
        }
        else if (depth == -1 && PyErr_Occurred()) {
            return NULL;
        }
    }
    return PyObject_Vectorcall(e->fallback, args, nargsf, kwnames);
}

static PyTypeObject LPDecodeType = SCHEME_METHOD_TYPE(
    "LPDecode", "The C decode of the length-prefixed scheme (see keyspace.schemes._layouts_accel.lp_decode).");

static PyObject *
lp_decode(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    return scheme_method_new(&LPDecodeType, lp_decode_vectorcall, args, nargs, "lp_decode");
}

/* hex_child_step(at, depth, fallback): the C form of AsciiHex.child_step(path)
 * for a path of `depth` components whose prefix is `at` bytes long (the
 * reference is fallback, the Python step). For a bytes key of lower-case hex
 * digits and 00 separators only, every part of an even length, whose part
 * number `depth` starts at `at` and ends at a separator, it returns (child,
 * end): the child's name (the part's bytes) and the end of the child's subtree
 * (the key up to that separator, then 01). Every other key (an own key, a key
 * of another shape, a byte that is no lower-case digit, an odd part, another
 * type) goes to fallback(key), which says what it is. Cost: one pass over the
 * key and two allocations. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Py_ssize_t at;
    Py_ssize_t depth;
    PyObject *fallback;
} HexChild;

static inline int
hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1;
}

static PyObject *
hex_child_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    HexChild *h = (HexChild *)callable;
    if (kwnames != NULL || PyVectorcall_NARGS(nargsf) != 1 || !PyBytes_CheckExact(args[0])) {
        return PyObject_Vectorcall(h->fallback, args, nargsf, kwnames);
    }
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    Py_ssize_t n = PyBytes_GET_SIZE(args[0]);
    Py_ssize_t part = 0, start = 0, child_start = -1, child_end = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == 0) {
            if ((i - start) & 1) {
                goto slow;
            }
            if (part == h->depth) {
                child_start = start;
                child_end = i;
            }
            part++;
            start = i + 1;
        }
        else if (hex_digit(c) < 0) {
            goto slow;
        }
    }
    if (((n - start) & 1) || child_end < 0 || child_start != h->at) {
        goto slow;
    }
    PyObject *child = PyBytes_FromStringAndSize(NULL, (child_end - child_start) / 2);
    if (child == NULL) {
        return NULL;
    }
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(child);
    for (Py_ssize_t i = child_start; i < child_end; i += 2) {
        *out++ = (unsigned char)((hex_digit(s[i]) << 4) | hex_digit(s[i + 1]));
    }
    PyObject *end = PyBytes_FromStringAndSize(NULL, child_end + 1);
    if (end == NULL) {
        Py_DECREF(child);
        return NULL;
    }
    memcpy(PyBytes_AS_STRING(end), s, (size_t)child_end);
    PyBytes_AS_STRING(end)[child_end] = 1;
    PyObject *res = PyTuple_New(2);
    if (res == NULL) {
        Py_DECREF(child);
        Py_DECREF(end);
        return NULL;
    }
    PyTuple_SET_ITEM(res, 0, child);
    PyTuple_SET_ITEM(res, 1, end);
    return res;
slow:
    return PyObject_Vectorcall(h->fallback, args, nargsf, kwnames);
}

static int
hex_child_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((HexChild *)self)->fallback);
    return 0;
}

static int
hex_child_clear(PyObject *self)
{
    Py_CLEAR(((HexChild *)self)->fallback);
    return 0;
}

static void
hex_child_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    hex_child_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyMemberDef hex_child_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(HexChild, fallback), READONLY, "the reference"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject HexChildType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace.schemes._layouts_accel.HexChild",
    .tp_basicsize = sizeof(HexChild),
    .tp_dealloc = hex_child_dealloc,
    .tp_vectorcall_offset = offsetof(HexChild, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "The C child step of the asciihex scheme (see keyspace.schemes._layouts_accel.hex_child_step).",
    .tp_traverse = hex_child_traverse,
    .tp_clear = hex_child_clear,
    .tp_members = hex_child_members,
};

static PyObject *
hex_child_step(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "hex_child_step() takes 3 arguments (%zd given)", nargs);
        return NULL;
    }
    Py_ssize_t at = PyLong_AsSsize_t(args[0]);
    if (at == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t depth = PyLong_AsSsize_t(args[1]);
    if (depth == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (at < 0 || depth < 0) {
        PyErr_SetString(PyExc_ValueError, "at and depth must be at least 0");
        return NULL;
    }
    if (!PyCallable_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "fallback must be callable");
        return NULL;
    }
    HexChild *h = PyObject_GC_New(HexChild, &HexChildType);
    if (h == NULL) {
        return NULL;
    }
    h->vectorcall = hex_child_vectorcall;
    h->at = at;
    h->depth = depth;
    h->fallback = Py_NewRef(args[2]);
    PyObject_GC_Track(h);
    return (PyObject *)h;
}

/* sep_child_step(at, sep, allowed, fallback): the C form of Sublevel.child_step(path)
 * for a path whose prefix is `at` bytes long, the separator byte `sep` (below
 * 255) and the bytes a name may hold `allowed` (the reference is fallback, the
 * Python step). For a bytes key whose byte at `at` is the separator, with a
 * next separator after it that another does not follow, and whose name between
 * them holds allowed bytes only, it returns (name, the key up to that next
 * separator, then sep + 1); every other key (an own key, a key of a deeper
 * scope whose name the next separator opens, another type) goes to
 * fallback(key). Cost: one memchr and one pass over the name. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Py_ssize_t at;
    unsigned char sep;
    unsigned char allowed[256];
    PyObject *fallback;
} SepChild;

static PyObject *
sep_child_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    SepChild *c = (SepChild *)callable;
    if (kwnames != NULL || PyVectorcall_NARGS(nargsf) != 1 || !PyBytes_CheckExact(args[0])) {
        return PyObject_Vectorcall(c->fallback, args, nargsf, kwnames);
    }
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    Py_ssize_t n = PyBytes_GET_SIZE(args[0]), at = c->at;
    if (at >= n || s[at] != c->sep) {
        goto slow;
    }
    const unsigned char *found = memchr(s + at + 1, c->sep, (size_t)(n - at - 1));
    if (found == NULL) {
        goto slow;
    }
    Py_ssize_t end = found - s;
    if (end + 1 < n && s[end + 1] == c->sep) {
        goto slow;
    }
    for (Py_ssize_t i = at + 1; i < end; i++) {
        if (!c->allowed[s[i]]) {
            goto slow;
        }
    }
    PyObject *name = PyBytes_FromStringAndSize((const char *)s + at + 1, end - at - 1);
    if (name == NULL) {
        return NULL;
    }
    PyObject *stop = PyBytes_FromStringAndSize(NULL, end + 1);
    if (stop == NULL) {
        Py_DECREF(name);
        return NULL;
    }
    memcpy(PyBytes_AS_STRING(stop), s, (size_t)end);
    PyBytes_AS_STRING(stop)[end] = (char)(c->sep + 1);
    PyObject *res = PyTuple_New(2);
    if (res == NULL) {
        Py_DECREF(name);
        Py_DECREF(stop);
        return NULL;
    }
    PyTuple_SET_ITEM(res, 0, name);
    PyTuple_SET_ITEM(res, 1, stop);
    return res;
slow:
    return PyObject_Vectorcall(c->fallback, args, nargsf, kwnames);
}

static int
sep_child_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((SepChild *)self)->fallback);
    return 0;
}

static int
sep_child_clear(PyObject *self)
{
    Py_CLEAR(((SepChild *)self)->fallback);
    return 0;
}

static void
sep_child_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    sep_child_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyMemberDef sep_child_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(SepChild, fallback), READONLY, "the reference"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject SepChildType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyspace.schemes._layouts_accel.SepChild",
    .tp_basicsize = sizeof(SepChild),
    .tp_dealloc = sep_child_dealloc,
    .tp_vectorcall_offset = offsetof(SepChild, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "The C child step of the sublevel scheme (see keyspace.schemes._layouts_accel.sep_child_step).",
    .tp_traverse = sep_child_traverse,
    .tp_clear = sep_child_clear,
    .tp_members = sep_child_members,
};

static PyObject *
sep_child_step(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "sep_child_step() takes 4 arguments (%zd given)", nargs);
        return NULL;
    }
    Py_ssize_t at = PyLong_AsSsize_t(args[0]);
    if (at == -1 && PyErr_Occurred()) {
        return NULL;
    }
    long sep = PyLong_AsLong(args[1]);
    if (sep == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (at < 0 || sep < 0 || sep > 254) {
        PyErr_SetString(PyExc_ValueError, "at must be at least 0 and sep a byte below 255");
        return NULL;
    }
    if (!PyBytes_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "allowed must be bytes");
        return NULL;
    }
    if (!PyCallable_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "fallback must be callable");
        return NULL;
    }
    SepChild *c = PyObject_GC_New(SepChild, &SepChildType);
    if (c == NULL) {
        return NULL;
    }
    c->vectorcall = sep_child_vectorcall;
    c->at = at;
    c->sep = (unsigned char)sep;
    memset(c->allowed, 0, sizeof(c->allowed));
    const unsigned char *allowed = (const unsigned char *)PyBytes_AS_STRING(args[2]);
    for (Py_ssize_t i = 0; i < PyBytes_GET_SIZE(args[2]); i++) {
        c->allowed[allowed[i]] = 1;
    }
    c->fallback = Py_NewRef(args[3]);
    PyObject_GC_Track(c);
    return (PyObject *)c;
}


/* What the capsule transform_api holds (keyspace._scope_accel declares the same):
   the C call of a layout's Transform, and is_exact_path for its path memo. */
typedef struct {
    PyTypeObject *type;
    PyObject *(*stored_key)(PyObject *transform, PyObject *key);
    int (*is_exact_path)(PyObject *path);
} TransformApi;

static PyObject *
transform_stored_key(PyObject *transform, PyObject *key)
{
    return transform_key((Transform *)transform, key);
}

static PyMethodDef layouts_accel_methods[] = {
    {"exact_path", exact_path, METH_O,
     "exact_path(path): whether path is a tuple of exact str and bytes objects."},
    {"memo_encode", (PyCFunction)(void (*)(void))memo_encode, METH_FASTCALL,
     "memo_encode(fallback)\n\n"
     "The C form of Scheme.encode(path, key), whose reference is fallback (see the module)."},
    {"lp_decode", (PyCFunction)(void (*)(void))lp_decode, METH_FASTCALL,
     "lp_decode(fallback)\n\n"
     "The C form of LengthPrefixed.decode(stored, depth), whose reference is fallback (see the module)."},
    {"hex_child_step", (PyCFunction)(void (*)(void))hex_child_step, METH_FASTCALL,
     "hex_child_step(at, depth, fallback)\n\n"
     "The C child step of the asciihex scheme, whose reference is fallback (see the module)."},
    {"sep_child_step", (PyCFunction)(void (*)(void))sep_child_step, METH_FASTCALL,
     "sep_child_step(at, sep, allowed, fallback)\n\n"
     "The C child step of the sublevel scheme, whose reference is fallback (see the module)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef layouts_accel_module = {
    PyModuleDef_HEAD_INIT,
    "keyspace.schemes._layouts_accel",
    "Optional C forms of scheme layouts: key transforms, child steps and the memo of Scheme.encode.",
    0,
    layouts_accel_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit__layouts_accel(void)
{
    if (PyType_Ready(&TransformType) < 0 || PyType_Ready(&MemoEncodeType) < 0 || PyType_Ready(&LPDecodeType) < 0
        || PyType_Ready(&HexChildType) < 0 || PyType_Ready(&SepChildType) < 0) {
        return NULL;
    }
    if (str_memo == NULL && (str_memo = PyUnicode_InternFromString("_memo")) == NULL) {
        return NULL;
    }
    if (str_encode_new == NULL && (str_encode_new = PyUnicode_InternFromString("_encode_new")) == NULL) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&layouts_accel_module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "Transform", (PyObject *)&TransformType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    /* the stored key of a Transform, for C callers (keyspace._scope_accel): the
       call without a vectorcall in between */
    static TransformApi api = {&TransformType, transform_stored_key, is_exact_path};
    PyObject *capsule = PyCapsule_New(&api, "keyspace.schemes._layouts_accel.transform_api", NULL);
    if (capsule == NULL || PyModule_AddObject(m, "transform_api", capsule) < 0) {
        Py_XDECREF(capsule);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
