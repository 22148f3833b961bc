"""Hostile input to every public encode path, as an attacker would send it.

Arbitrary Python values (ints of any size, floats with nan and infinities, bytes
subclasses, ``bytearray``, ``memoryview`` (released, and of other formats),
``None``, str with lone surrogates, objects whose ``__eq__``, ``__hash__``,
``__len__``, ``__index__``, ``__iter__``, ``__repr__``, ``encode`` … raise,
tuples, lists and dicts nested past the recursion limit or inside themselves)
go to ``keyspace.tuples.pack``/``unpack``, to every scheme's ``encode``,
``encode_key`` and ``decode``, to every codec of ``keyspace.codecs`` and
``keyspace.bincode``, and as keys and values to a scope's ``[]=``, ``get``,
``in`` and ``items(start=…)``, with the C modules and with the pure-Python code.

Each call returns, or raises a named error of :mod:`keyspace.errors` whose
message stays one short line; nothing else escapes (``KeyboardInterrupt`` and
``MemoryError`` aside), and a refused scope operation leaves the store as it
was. The examples are drawn deterministically (see ``conftest.py``).
"""

from __future__ import annotations

import enum
import math
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import keyspace
from keyspace import bincode, codecs, tuples
from keyspace._scope_fields import PointOps
from keyspace.errors import InvalidArgument, InvalidKey, InvalidName, KeyspaceError, show_bytes
from keyspace.schemes import (
    AsciiHex,
    Delimited,
    LengthPrefixed,
    Naive,
    Scheme,
    ScopeHash,
    Sublevel,
    TupleScheme,
)
from keyspace.schemes._layouts import LayoutCache
from keyspace.schemes.length_prefixed import decompose
from keyspace.schemes.scoped_heed import ScopedHeed
from keyspace.scope import Scope

MESSAGE_LIMIT = 1500
"""Longest message a refusal may have: every value in it is shown cut short."""

DEEP = 3_000  # past the default recursion limit (1,000)
FIXTURE_OK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]
"""The ``accel`` fixture chooses the code path for the whole test: it is not
meant to be reset between examples."""


# -- hostile values -------------------------------------------------------------------


class Refused(Exception):
    """What a hostile object's methods raise."""


class _Raises:
    """Protocol methods that raise when their name is in ``self.raising``, and
    otherwise answer as an unremarkable object would."""

    raising: frozenset[str] = frozenset()

    def _maybe(self, name: str) -> None:
        if name in self.raising:
            raise Refused(f"{name} refused")

    def __eq__(self, other: object) -> bool:
        self._maybe("__eq__")
        return self is other

    def __ne__(self, other: object) -> bool:
        self._maybe("__eq__")
        return self is not other

    def __lt__(self, other: object) -> bool:
        self._maybe("__lt__")
        return False

    def __hash__(self) -> int:
        self._maybe("__hash__")
        return 7

    def __len__(self) -> int:
        self._maybe("__len__")
        return 1

    def __index__(self) -> int:
        self._maybe("__index__")
        return 1

    def __iter__(self) -> Iterator[Any]:
        self._maybe("__iter__")
        return iter((1,))

    def __bool__(self) -> bool:
        self._maybe("__bool__")
        return True

    def __repr__(self) -> str:
        self._maybe("__repr__")
        return f"<{type(self).__name__}>"

    def __str__(self) -> str:
        self._maybe("__str__")
        return "hostile"

    def __bytes__(self) -> bytes:
        self._maybe("__bytes__")
        return b"hostile"

    def __contains__(self, item: object) -> bool:
        self._maybe("__contains__")
        return False

    def __getitem__(self, item: object) -> Any:
        self._maybe("__getitem__")
        return 1

    def encode(self, *args: Any, **kwargs: Any) -> bytes:
        self._maybe("encode")
        return b"not the text"

    def replace(self, *args: Any, **kwargs: Any) -> Any:
        self._maybe("replace")
        return b"not the bytes"

    def keys(self) -> Any:
        self._maybe("keys")
        return iter(())

    def items(self) -> Any:
        self._maybe("items")
        return iter(())


class HostileObject(_Raises):
    pass


class HostileBytes(_Raises, bytes):
    pass


class HostileStr(_Raises, str):
    pass


class HostileInt(_Raises, int):
    pass


class HostileFloat(_Raises, float):
    pass


class HostileTuple(_Raises, tuple):  # type: ignore[misc]  # methods of both on purpose
    pass


class HostileList(_Raises, list):  # type: ignore[misc]
    pass


class HostileDict(_Raises, dict):  # type: ignore[misc]
    pass


class HostileUUID(_Raises, uuid.UUID):
    @property
    def bytes(self) -> bytes:  # type: ignore[override]
        self._maybe("bytes")
        return b"\x00" * 16


METHODS = [
    "__eq__",
    "__lt__",
    "__hash__",
    "__len__",
    "__index__",
    "__iter__",
    "__bool__",
    "__repr__",
    "__str__",
    "__bytes__",
    "__contains__",
    "__getitem__",
    "encode",
    "replace",
    "keys",
    "items",
    "bytes",
]


def _hostile(kind: str, payload: bytes, raising: frozenset[str]) -> Any:
    obj: Any
    if kind == "object":
        obj = HostileObject()
    elif kind == "bytes":
        obj = HostileBytes(payload)
    elif kind == "str":
        obj = HostileStr(payload.decode("latin-1"))
    elif kind == "int":
        obj = HostileInt(int.from_bytes(payload, "big"))
    elif kind == "float":
        obj = HostileFloat(len(payload) / 3)
    elif kind == "tuple":
        obj = HostileTuple((payload, len(payload)))
    elif kind == "list":
        obj = HostileList([payload])
    elif kind == "dict":
        obj = HostileDict({"k": payload})
    else:
        obj = HostileUUID(bytes=payload.ljust(16, b"\x00")[:16])
    object.__setattr__(obj, "raising", raising)
    return obj


hostile = st.builds(
    _hostile,
    st.sampled_from(["object", "bytes", "str", "int", "float", "tuple", "list", "dict", "uuid"]),
    st.binary(max_size=20),
    st.frozensets(st.sampled_from(METHODS), max_size=len(METHODS)),
)


def _nested(kind: type, levels: int) -> Any:
    x: Any = kind()
    for _ in range(levels):
        x = {"k": x} if kind is dict else kind((x,))
    return x


def _cyclic_list() -> list[Any]:
    x: list[Any] = [1]
    x.append(x)
    return x


def _cyclic_dict() -> dict[str, Any]:
    x: dict[str, Any] = {}
    x["self"] = [x]
    return x


def _released() -> memoryview:
    view = memoryview(b"gone")
    view.release()
    return view


class Color(enum.IntEnum):
    RED = 1


def _big_int(bits: int, offset: int, negative: bool) -> int:
    """``±(2**bits + offset)``: around the limits of the encodings, and past the
    4,300 digits Python turns into decimal text (shown through this function:
    Hypothesis would print the value itself)."""
    value = (1 << bits) + offset
    return -value if negative else value


def _deep(kind: str) -> Any:
    """A value nested past the recursion limit (made by this function, which
    Hypothesis shows instead of the value)."""
    if kind == "enum-then-list":
        return (Color.RED, _nested(list, DEEP))
    return _nested({"list": list, "tuple": tuple, "dict": dict}[kind], DEEP)


text = st.text(
    st.one_of(st.characters(), st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)), max_size=12
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.builds(
        _big_int, st.sampled_from([64, 2040, 2041, 16_610, 100_000]), st.integers(-1, 1), st.booleans()
    ),
    st.floats(),
    st.sampled_from([math.nan, -math.nan, math.inf, -math.inf, -0.0]),
    st.binary(max_size=20),
    text,
    st.uuids(),
    st.builds(bytearray, st.binary(max_size=8)),
    st.builds(memoryview, st.binary(max_size=8)),
    st.builds(lambda raw: memoryview(raw.ljust(8, b"\x00")[:8]).cast("Q"), st.binary(max_size=8)),
    st.builds(_released),
    st.builds(_cyclic_list),
    st.builds(_cyclic_dict),
    st.sampled_from([Color.RED, 1j, Ellipsis, object, NotImplemented]),
    st.builds(object),
    hostile,
)


class Shown:
    """A drawn value, which Hypothesis prints as :func:`show_bytes` draws it: its
    own printer would recurse into a value nested past the recursion limit, and
    call the ``repr`` of hostile objects."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Shown({show_bytes(self.value)})"


values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=3), inner, max_size=2),
    ),
    max_leaves=6,
).map(Shown)
raw_bytes = st.binary(max_size=40)
depths = st.one_of(st.none().map(Shown), st.integers(-3, 40).map(Shown), values)

DEEP_VALUES = [Shown(_deep(kind)) for kind in ["list", "tuple", "dict", "enum-then-list"]]
"""The values nested past the recursion limit. They are not drawn (four fixed
values were two draws in five, and each costs milliseconds to refuse and show):
:func:`with_deep_values` runs every one of them in every value argument of a
property, as explicit examples beside the drawn ones."""

F = TypeVar("F", bound=Callable[..., Any])


def with_deep_values(*slots: str, **others: Any) -> Callable[[F], F]:
    """One explicit example per value of :data:`DEEP_VALUES`, which goes to the
    first of ``slots`` while the next kinds go to the others in turn (so every
    slot gets every kind); ``others`` gives the remaining arguments, a list
    of choices taken in turn too."""

    def add(test: F) -> F:
        for i in range(len(DEEP_VALUES)):
            args = {slot: DEEP_VALUES[(i + j) % len(DEEP_VALUES)] for j, slot in enumerate(slots)}
            args.update({name: choices[i % len(choices)] for name, choices in others.items()})
            test = example(**args)(test)
        return test

    return add


# -- the property ---------------------------------------------------------------------


def refused_by_name_or_done(what: str, call: Callable[..., Any], *args: Any) -> KeyspaceError | None:
    """Run ``call(*args)``: it returns (``None``) or raises a named error, which
    is returned after its message is checked; anything else fails the test."""
    try:
        result = call(*args)
        if isinstance(result, Iterator):
            for _ in result:  # a lazy result raises when it is read
                pass
    except KeyspaceError as exc:
        message = str(exc)
        assert len(message) < MESSAGE_LIMIT, f"{what}: a message of {len(message)} characters"
        return exc
    except (KeyboardInterrupt, MemoryError):
        raise
    except BaseException as exc:  # the property under test
        shown = ", ".join(show_bytes(a) for a in args)
        raise AssertionError(f"{what}({shown}) raised {type(exc).__name__}: {exc!s:.300}") from exc
    return None


@pytest.fixture(params=["c", "python"])
def accel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Runs a test with the C modules where built, and again with the pure-Python
    tuple encoder and decoder."""
    if request.param == "python":
        monkeypatch.setattr(tuples, "_accel_pack", None)
        monkeypatch.setattr(tuples, "_accel_unpack", None)
    return request.param == "c"


# -- tuples ---------------------------------------------------------------------------


@settings(max_examples=200, suppress_health_check=FIXTURE_OK)
@given(values, raw_bytes, depths)
@with_deep_values("shown", "skip", raw=[b"", b"\x05\x02a\x00", b"\x05" * 40])
def test_tuples_pack_and_unpack(accel: bool, shown: Shown, raw: bytes, skip: Shown) -> None:
    value, prefix_len = shown.value, skip.value
    for t in (value, (value,), (Color.RED, value), ("a", (1, value)), (value, "\ud800")):
        refused_by_name_or_done("pack", tuples.pack, t)
        refused_by_name_or_done("range", tuples.range, t)
    refused_by_name_or_done("unpack", tuples.unpack, raw)
    refused_by_name_or_done("unpack", tuples.unpack, raw, prefix_len)
    refused_by_name_or_done("unpack", tuples.unpack, value)


# -- schemes --------------------------------------------------------------------------

SCHEMES: list[Scheme] = [
    TupleScheme(),
    TupleScheme(raw_prefix=b"app/"),
    LengthPrefixed(),
    AsciiHex(),
    Sublevel(),
    ScopeHash(),
    Naive(),
    Naive(allow_collisions=True),
    Delimited(":"),
    Delimited("\x00", depth=2),
    ScopedHeed("raw_bytes"),
    ScopedHeed("bytes_keys"),
    ScopedHeed("types"),
]
PY_ENCODE = Scheme.__dict__["encode"]
PY_ENCODE = getattr(PY_ENCODE, "__wrapped__", PY_ENCODE)


def _encoders(scheme: Scheme) -> list[tuple[str, Callable[[Any, Any], bytes]]]:
    """``scheme.encode`` (its C form where built), the pure-Python method, and the
    pure-Python layout's ``stored``."""
    out: list[tuple[str, Callable[[Any, Any], bytes]]] = [(f"{scheme!r}.encode", scheme.encode)]
    if "encode" not in type(scheme).__dict__:
        out.append((f"{scheme!r}.encode (Python)", lambda path, key: PY_ENCODE(scheme, path, key)))

    def stored(path: Any, key: Any) -> bytes:
        return scheme.scope_scheme(path).layout(path, accelerate=False).stored(key)

    out.append((f"{scheme!r}.layout(accelerate=False).stored", stored))
    return out


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
@settings(max_examples=60, suppress_health_check=FIXTURE_OK)
@given(values, values)
@with_deep_values("shown", "shown_other")
def test_scheme_encode(accel: bool, scheme: Scheme, shown: Shown, shown_other: Shown) -> None:
    value, other = shown.value, shown_other.value
    for name, encode in _encoders(scheme):
        for path, key in [
            (("a",), value),
            ((value,), b"k"),
            (("a", value), b"k"),
            (value, b"k"),
            ((value,), other),
            ((), value),
        ]:
            refused_by_name_or_done(name, encode, path, key)
    refused_by_name_or_done(f"{scheme!r}.encode_key", scheme.encode_key, value)


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
@settings(max_examples=100, suppress_health_check=FIXTURE_OK)
@given(raw_bytes, depths, values)
@with_deep_values("shown", "shown_depth", raw=[b"", b"\x05\x00k", b"\x02a\x00"])
def test_scheme_decode(accel: bool, scheme: Scheme, raw: bytes, shown_depth: Shown, shown: Shown) -> None:
    depth, value = shown_depth.value, shown.value
    refused_by_name_or_done(f"{scheme!r}.decode", scheme.decode, raw)
    refused_by_name_or_done(f"{scheme!r}.decode", scheme.decode, raw, depth)
    refused_by_name_or_done(f"{scheme!r}.decode", scheme.decode, value, depth)
    refused_by_name_or_done(f"{scheme!r}.decode_key", scheme.decode_key, raw)
    refused_by_name_or_done("decompose", decompose, raw, depth)


# -- codecs ---------------------------------------------------------------------------

CODECS: list[Any] = [
    codecs.BYTES,
    codecs.STR,
    codecs.INT,
    codecs.JSON,
    codecs.JsonCodec(sort_keys=False),
    bincode.BOOL,
    bincode.BYTES,
    bincode.STRING,
    bincode.U8,
    bincode.U16,
    bincode.U32,
    bincode.U64,
    bincode.I8,
    bincode.I16,
    bincode.I32,
    bincode.I64,
    bincode.F32,
    bincode.F64,
    bincode.UNIT,
    bincode.Option(bincode.U32),
    bincode.Seq(bincode.STRING),
    bincode.Seq(bincode.Seq(bincode.U8)),
    bincode.Tuple(bincode.STRING, bincode.I64),
    bincode.Struct(("name", bincode.STRING), ("age", bincode.U8)),
]


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: getattr(c, "name", repr(c)))
@settings(max_examples=80)
@given(values, raw_bytes)
@with_deep_values("shown", raw=[b"", b"\x01"])
def test_codecs(codec: Any, shown: Shown, raw: bytes) -> None:
    value = shown.value
    for obj in (value, [value], (value, value), {"name": value, "age": 1}):
        refused_by_name_or_done(f"{codec.name}.encode", codec.encode, obj)
    refused_by_name_or_done(f"{codec.name}.decode", codec.decode, raw)
    refused_by_name_or_done(f"{codec.name}.decode", codec.decode, value)


# -- scopes ---------------------------------------------------------------------------

PY_SET = PointOps.__setitem__
PY_GET = PointOps.get
SCOPE_SCHEMES: list[Scheme] = [
    TupleScheme(),
    LengthPrefixed(),
    AsciiHex(),
    Sublevel(),
    ScopeHash(),
    Naive(allow_collisions=True),
    Delimited(":"),
    ScopedHeed("raw_bytes"),
]
GOOD_KEYS: dict[Any, Any] = {
    None: b"k",
    "str": "k",
    "int": 1,
    "json": "k",
    "bincode:u8": 1,
    "bincode:i64": -1,
    "bincode:String": "k",
    "bincode:Vec<u8>": b"k",
}
"""The key codecs a scope is made with, and a key each takes."""
GOOD_VALUES: dict[Any, Any] = {None: b"v", "json": {"v": [1]}, "str": "v", "bincode:u8": 2}
"""The value codecs, and a value each takes."""


def _scope_ops(scope: Scope, key: Any, value: Any) -> list[tuple[str, Callable[[], Any]]]:
    return [
        ("[]=", lambda: scope.__setitem__(key, value)),
        ("[]= (a good value)", lambda: scope.__setitem__(key, b"v")),
        ("[]= (Python)", lambda: PY_SET(scope, key, value)),
        ("get", lambda: scope.get(key)),
        ("get (Python)", lambda: PY_GET(scope, key)),
        ("in", lambda: key in scope),
        ("items(start=)", lambda: scope.items(start=key)),
        ("items(stop=, limit=)", lambda: scope.items(stop=key, limit=3)),
        ("items(prefix=)", lambda: scope.items(prefix=key)),
        ("keys(start=, reverse=)", lambda: scope.keys(start=key, reverse=True)),
        ("update", lambda: scope.update([(b"x", b"y"), (key, value)])),
        ("setdefault", lambda: scope.setdefault(key, value)),
        ("pop", lambda: scope.pop(key, None)),
        ("a child scope", lambda: scope.scope(key).get(b"k")),
    ]


@pytest.mark.parametrize("scheme", SCOPE_SCHEMES, ids=repr)
@pytest.mark.parametrize("c", [True, False], ids=["c", "python"])
@settings(max_examples=40)
@given(values, values, st.sampled_from(list(GOOD_KEYS)), st.sampled_from(list(GOOD_VALUES)))
@with_deep_values("shown_key", "shown_value", kcodec=list(GOOD_KEYS), vcodec=list(GOOD_VALUES))
def test_scope_operations(
    scheme: Scheme, c: bool, shown_key: Shown, shown_value: Shown, kcodec: Any, vcodec: Any
) -> None:
    key, value = shown_key.value, shown_value.value
    ks = keyspace.open("memory:", scheme=scheme)
    if not c:
        ks._space.layouts = LayoutCache(ks.scheme, accelerate=False)
    scope = ks.scope("users", key=kcodec, value=vcodec)
    scope[GOOD_KEYS[kcodec]] = GOOD_VALUES[vcodec]  # a scope that holds a key
    for name, op in _scope_ops(scope, key, value):
        before = list(ks.store.scan(b"", None))
        if refused_by_name_or_done(name, op) is not None:
            assert list(ks.store.scan(b"", None)) == before, f"{name} refused but changed the store"
    refused_by_name_or_done("a scope at the value", lambda: ks.scope(key).get(b"k"))
    refused_by_name_or_done("a scope at the value", lambda: ks.scope("a", key).__setitem__(b"k", b"v"))


# -- the faults the fuzzing found, one test each ----------------------------------------

DEEP_TEST = 100_000


def _refused(error: type[KeyspaceError], call: Callable[..., Any], *args: Any) -> str:
    """The message of the ``error`` that ``call(*args)`` raises (a named error of
    exactly that class or a subclass), checked to be one short line."""
    with pytest.raises(error) as info:
        call(*args)
    message = str(info.value)
    assert len(message) < 600 and "\n" not in message, message
    return message


def test_a_lone_surrogate_after_a_subclass_element_is_refused_by_name(accel: bool) -> None:
    """``pack((IntEnum member, "ab\\ud800"))`` raised a bare ``UnicodeEncodeError``
    (the general encoder's str encoding was not guarded), and with a str subclass
    too; and a str of lone surrogates first in a tuple was named as its framed
    text (``'\\x02ab\\ud800\\x00'``) with an index one too far."""
    for value in [
        (Color.RED, "ab\ud800"),
        (HostileStr("ab\ud800"),),
        ("ab\ud800",),
        (Color.RED, ("x", "ab\ud800")),
        ("ab\ud800", Color.RED),
    ]:
        message = _refused(InvalidName, tuples.pack, value)
        assert "'ab\\ud800'" in message and "at index 2" in message and "UTF-8" in message, message
        assert "\\x02" not in message, message
        key = value if len(value) > 1 else value[0]
        assert _refused(InvalidName, TupleScheme().encode, ("a",), key) == message


@pytest.mark.parametrize("kind", [list, dict], ids=["list", "dict"])
def test_a_key_nested_100000_deep_is_refused_with_a_short_message(accel: bool, kind: type) -> None:
    """The message of an unsupported key built the value's ``repr``, which
    recursed past the recursion limit: a bare ``RecursionError`` (a ``list`` or
    ``dict`` key element, or key, nested 100,000 deep)."""
    deep = _nested(kind, DEEP_TEST)
    opening = "[[[[" if kind is list else "{'k': {'k':"
    for call, args in [
        (tuples.pack, ((deep,),)),
        (tuples.pack, ((Color.RED, deep),)),
        (TupleScheme().encode, (("a",), (1, deep))),
        (AsciiHex().encode, (("a",), deep)),
        (AsciiHex().encode, ((deep,), b"k")),
        (codecs.BYTES.encode, (deep,)),
        (codecs.STR.encode, (deep,)),
        (codecs.INT.encode, (deep,)),
        (bincode.U64.encode, (deep,)),
        (bincode.STRING.encode, (deep,)),
    ]:
        message = _refused(InvalidName, call, *args)
        assert opening in message and "characters)" in message, message
    scope = keyspace.open("memory:").scope("a")
    assert opening in _refused(InvalidKey, scope.__setitem__, deep, b"v")
    assert opening in _refused(InvalidKey, scope.get, deep)
    assert opening in _refused(InvalidKey, scope.__setitem__, b"k", deep)
    assert list(scope.keyspace.store.scan(b"", None)) == []


def test_values_whose_decimal_text_python_refuses_are_shown_in_hex() -> None:
    """An int of more than 4,300 digits in a message: Python refuses its decimal
    text, so the message raised a bare ``ValueError``."""
    huge = 10**5000
    for call in (codecs.INT.encode, bincode.U32.encode, bincode.I8.encode):
        message = _refused(InvalidKey, call, huge)
        assert "0x" in message and "an int of 16610 bits" in message, message
    assert "16610 bits" in _refused(InvalidName, tuples.pack, (huge,))


def test_values_whose_repr_raises_are_shown_by_type() -> None:
    """A value whose own ``repr`` raises made the message raise it."""
    bad = _hostile("object", b"", frozenset({"__repr__"}))
    for call in (codecs.BYTES.encode, codecs.STR.encode, codecs.INT.encode, bincode.BOOL.encode):
        assert "<HostileObject object>" in _refused(InvalidKey, call, bad)
    assert "<HostileObject object>" in _refused(InvalidKey, tuples.pack, (1, bad))


def test_a_released_memoryview_is_refused_by_name() -> None:
    """``bytes()`` of a released ``memoryview`` raises ``ValueError``: the bytes
    codec, byte-scheme names and the messages showing one raised it bare."""
    for call, args in [
        (codecs.BYTES.encode, (_released(),)),
        (bincode.BYTES.encode, (_released(),)),
        (AsciiHex().encode, ((_released(),), b"k")),
        (AsciiHex().encode, (("a",), _released())),
    ]:
        assert "released memoryview" in _refused(InvalidName, call, *args)


def _path_components() -> list[Any]:
    """Path components whose hash raises: a hostile object, a str subclass, a
    memoryview of 8-byte items (Python hashes only byte formats)."""
    return [
        _hostile("object", b"", frozenset({"__hash__", "__eq__"})),
        _hostile("str", b"a", frozenset({"__hash__", "__eq__"})),
        memoryview(b"\x00" * 8).cast("Q"),
    ]


@pytest.mark.parametrize("scheme", [TupleScheme(), AsciiHex(), LengthPrefixed(), ScopeHash()], ids=repr)
def test_a_path_whose_hash_raises_is_encoded_or_refused_by_name(scheme: Scheme) -> None:
    """The memo lookups by path (``Scheme.encode``, its C form, the keyspace's
    scopes, the layout cache, the catalog's ranges) caught ``TypeError`` only:
    a component whose ``__hash__`` raised anything else escaped."""
    scheme.encode(("x",), b"k")  # the scheme's memo of paths exists: the lookup runs
    for component in _path_components():
        for encode in (scheme.encode, lambda path, key: PY_ENCODE(scheme, path, key)):
            refused_by_name_or_done("encode", encode, (component,), b"k")
        ks = keyspace.open("memory:", scheme=scheme)
        if refused_by_name_or_done("scope", ks.scope, component) is None:
            scope = ks.scope(component)
            refused_by_name_or_done("get", scope.get, b"k")
            refused_by_name_or_done("[]=", scope.__setitem__, b"k", b"v")


def test_a_str_subclass_that_lies_about_hash_and_equality_names_its_scope() -> None:
    """The catalog kept facts under the path as given: a tuple-scheme scope named
    by a str subclass that cannot be hashed raised ``TypeError`` at its first
    write, and a ScopeHash name compared with the registry by the subclass's own
    ``__eq__``."""
    unhashable = _hostile("str", b"users", frozenset({"__hash__"}))
    lying = _hostile("str", b"users", frozenset({"__eq__", "__hash__"}))
    for scheme, name in [(TupleScheme(), unhashable), (TupleScheme(), lying), (ScopeHash(), lying)]:
        ks = keyspace.open("memory:", scheme=scheme)
        ks.scope(name)[b"k"] = b"v"
        assert ks.scope("users")[b"k"] == b"v"
        assert ks.scope(name)[b"k"] == b"v"


@pytest.mark.parametrize("scheme", [s for s in SCHEMES if s != Naive()], ids=repr)  # Naive() refuses all
def test_a_path_that_is_no_tuple_is_refused_by_name(scheme: Scheme) -> None:
    """``encode`` iterated, measured or indexed whatever it was given as a path:
    ``TypeError``, ``KeyError``, or the object's own exceptions."""
    for path in [5, None, {1: 2}, "ab", _hostile("object", b"", frozenset(METHODS))]:
        for encode in (scheme.encode, lambda path, key: PY_ENCODE(scheme, path, key)):
            assert "must be a tuple" in _refused(InvalidName, encode, path, b"k")


def test_subclasses_are_encoded_as_their_base_value_whatever_their_methods_do(accel: bool) -> None:
    """A subclass's own ``encode``, ``__iter__`` or ``bytes`` ran while it was
    encoded: a str subclass whose ``encode`` lies was stored as its lie (tuple
    keys, the str codec, bincode String, byte-scheme names), and one whose
    ``__iter__`` raises raised it."""
    lying = _hostile("str", b"text", frozenset())  # encode returns b"not the text"
    assert tuples.pack((lying,)) == tuples.pack(("text",))
    assert codecs.STR.encode(lying) == b"text"
    assert bincode.STRING.encode(lying) == bincode.STRING.encode("text")
    assert AsciiHex().encode((lying,), b"k") == AsciiHex().encode(("text",), b"k")
    refusing = _hostile("tuple", b"ab", frozenset(METHODS))
    assert tuples.pack((refusing,)) == tuples.pack(((b"ab", 2),))
    assert tuples.pack(refusing) == tuples.pack((b"ab", 2))
    uid = _hostile("uuid", b"\x01" * 16, frozenset(METHODS))
    assert tuples.pack((uid,)) == tuples.pack((uuid.UUID(bytes=b"\x01" * 16),))


def test_bincode_refuses_objects_whose_methods_raise() -> None:
    """The composite bincode codecs call the object's ``len``, iteration, ``in``
    and ``!=``: what those raised escaped bare."""
    for codec, obj in [
        (bincode.Seq(bincode.U8), _hostile("list", b"", frozenset({"__len__"}))),
        (bincode.Seq(bincode.U8), _hostile("list", b"", frozenset({"__iter__"}))),
        (bincode.UNIT, _hostile("object", b"", frozenset({"__eq__"}))),
        (bincode.Struct(("a", bincode.U8)), _hostile("dict", b"", frozenset({"__contains__"}))),
        (bincode.Tuple(bincode.U8), _hostile("list", b"", frozenset({"__len__"}))),
    ]:
        assert "Refused" in _refused(InvalidKey, codec.encode, obj)


def test_bincode_decode_takes_bytes_only() -> None:
    """``decode`` turned its argument into bytes with ``bytes()``: an int ``n``
    was read as ``n`` zero bytes, a negative one raised ``ValueError``."""
    for raw in [1, 8, -1, None, "text"]:
        assert "must be bytes" in _refused(InvalidArgument, bincode.U8.decode, raw)
        assert "must be bytes" in _refused(InvalidArgument, bincode.UNIT.decode, raw)
    assert bincode.U16.decode(bytearray(b"\x01\x00")) == 1


def test_json_refuses_a_mapping_whose_items_raise() -> None:
    """The JSON encoder calls a dict subclass's ``items``: what it raised escaped."""
    assert "Refused" in _refused(InvalidKey, codecs.JSON.encode, _hostile("dict", b"", frozenset({"items"})))


def test_codecs_decode_bytes_only() -> None:
    """The str, int and json codecs' ``decode`` of something other than bytes
    raised ``AttributeError`` or ``TypeError``."""
    for codec in (codecs.STR, codecs.INT, codecs.JSON):
        for raw in [None, 5, "text"]:
            assert "must be bytes" in _refused(InvalidArgument, codec.decode, raw)
    assert codecs.STR.decode(memoryview(b"ab")) == "ab"


@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
def test_scheme_decode_arguments_are_checked(scheme: Scheme) -> None:
    """``decode`` of a ``stored`` that is not bytes, or with a ``depth`` that is
    no int, raised whatever the first operation on it raised; an int depth of
    more than 4,300 digits made the message raise ``ValueError``."""
    for stored in [None, 5, "text"]:
        assert "must be bytes" in _refused(InvalidArgument, scheme.decode, stored)
    for depth in ["1", 1.0, [1], True]:
        assert "depth must be None or an int" in _refused(InvalidArgument, scheme.decode, b"\x00", depth)
    refused_by_name_or_done("decode", scheme.decode, b"\x05\x00k", 10**5000)
    for raw, depth in [(b"x", "1"), (None, 1), (b"x", -(10**5000))]:
        refused_by_name_or_done("decompose", decompose, raw, depth)


def test_tuples_refuse_by_name(accel: bool) -> None:
    """``pack`` raised bare ``TypeError`` for a value that is not a tuple or holds
    an unsupported type, ``unpack`` for an argument that is not bytes; a negative
    ``prefix_len`` decoded bytes counted from the end."""
    assert "pack() takes a tuple" in _refused(InvalidKey, tuples.pack, [1])
    assert "unsupported type list" in _refused(InvalidKey, tuples.pack, ([1],))
    assert "unpack() argument must be bytes" in _refused(InvalidArgument, tuples.unpack, "text")
    for skip in [-1, "1", 1.5]:
        assert "prefix_len" in _refused(InvalidArgument, tuples.unpack, b"\x15\x01\x15\x02", skip)
    assert tuples.unpack(b"\x15\x01\x15\x02", 2) == (2,)
    assert tuples.unpack(b"\x15\x01", 5) == ()


def test_an_int_too_large_for_the_tuple_encoding_is_named(accel: bool) -> None:
    """The refusal of an int over 255 bytes named its size but not the int."""
    assert "0x" in _refused(InvalidName, tuples.pack, (Color.RED, 1 << 2048))
