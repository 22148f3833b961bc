"""The C form of ``Scheme.encode`` (``keyspace.schemes._layouts_accel.memo_encode``)
returns the bytes and raises the errors of its Python method for every scheme and
path, calls ``_encode_new`` where that method does, and survives a memo changed
under it."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.errors import LayoutError
from keyspace.schemes import AsciiHex, LengthPrefixed, Naive, Scheme, ScopeHash, Sublevel, TupleScheme

try:
    from keyspace.schemes import _layouts_accel as accel
except ImportError:  # built without a C compiler: the Python method is the only one
    accel = None

needs_accel = pytest.mark.skipif(accel is None, reason="keyspace.schemes._layouts_accel was not built")

SCHEMES: list[Scheme] = [TupleScheme(), LengthPrefixed(), AsciiHex(), Sublevel(), ScopeHash(), Naive(True)]

# -- Scheme.encode ------------------------------------------------------------------

ENCODE = Scheme.__dict__["encode"]
PY_ENCODE = getattr(ENCODE, "__wrapped__", ENCODE)  # the reference (the method itself without C)


class _Text(str):
    """A str subclass: equal to its str, a different path component."""


class _Raw(bytes):
    """A bytes subclass: equal to its bytes, refused by the byte schemes."""


class _BadHash:
    """A component whose hash raises ``exc``: the lookup's TypeError, KeyError and
    AttributeError send the path to ``_encode_new``, any other error propagates."""

    def __init__(self, exc: type[Exception]) -> None:
        self.exc = exc

    def __hash__(self) -> int:
        raise self.exc(f"no hash ({self.exc.__name__})")

    def __repr__(self) -> str:
        return f"_BadHash({self.exc.__name__})"


class _GeneralTuple(TupleScheme):
    """The tuple scheme on the general layout: its ``stored`` is a Python function."""

    def layout(self, path: Any, *, accelerate: bool = True) -> Any:
        from keyspace.schemes._layouts import Layout

        return Layout(self, path, accelerate=accelerate)


def _encode_schemes() -> dict[str, Any]:
    from keyspace.schemes import Delimited
    from keyspace.schemes.scoped_heed import ScopedHeed

    return {
        "tuple": TupleScheme,
        "tuple-raw-prefix": lambda: TupleScheme(raw_prefix=b"rp"),
        "length-prefixed": LengthPrefixed,
        "asciihex": AsciiHex,
        "sublevel": Sublevel,
        "scopehash": ScopeHash,
        "naive-allowed": lambda: Naive(allow_collisions=True),
        "naive-refusing": Naive,
        "delimited": lambda: Delimited("/", 2),
        "nul-delimited": lambda: Delimited("\x00"),
        "scoped-heed-bytes": lambda: ScopedHeed("raw_bytes"),
        "scoped-heed-types": lambda: ScopedHeed("types"),
        "general-layout": _GeneralTuple,
    }


ENCODE_SCHEMES = _encode_schemes()
_COMPONENTS: list[Any] = [
    "a",
    "b",
    "é",
    "",
    "\ud800",
    b"a",
    b"\x00",
    b"",
    b"!",
    _Text("a"),
    _Raw(b"a"),
    memoryview(b"a"),
    bytearray(b"a"),
    1,
    True,
    1.0,
    None,
    ["a"],  # unhashable
    _BadHash(TypeError),
    _BadHash(KeyError),
    _BadHash(AttributeError),
    _BadHash(ValueError),
]
_MEMOISED = ["a", "b", b"a", b"b"]
# paths as (shape, component indices), built in the test (Hypothesis hashes what
# it draws, and some components refuse to be hashed)
_PATH_SPECS = st.one_of(
    st.tuples(st.just("tuple"), st.lists(st.integers(0, len(_COMPONENTS) - 1), max_size=3)),
    st.tuples(st.just("memoised"), st.lists(st.integers(0, len(_MEMOISED) - 1), max_size=3)),
    st.tuples(st.just("list"), st.lists(st.integers(0, len(_COMPONENTS) - 1), max_size=2)),  # unhashable
    st.tuples(st.just("other"), st.lists(st.integers(0, 2), min_size=1, max_size=1)),
)


def _path(spec: tuple[str, list[int]]) -> Any:
    shape, indices = spec
    if shape == "memoised":
        return tuple(_MEMOISED[i] for i in indices)
    if shape == "other":
        return ["ab", None, b"a"][indices[0]]
    components = [_COMPONENTS[i] for i in indices]
    return tuple(components) if shape == "tuple" else components


_KEYS: list[Any] = [b"", b"k", b"\x00", b"!x", "text", 1, None, bytearray(b"k"), _Raw(b"k"), ("a", 1), [1]]


def _encoded_by(encode: Any, scheme: Any, path: Any, key: Any) -> tuple[Any, ...]:
    """What an encode returns, or the type and text of its error."""
    try:
        return ("ok", encode(scheme, path, key))
    except Exception as exc:
        return ("error", type(exc), str(exc))


def _memo_of(scheme: Any) -> list[tuple[Any, ...]]:
    """The memo's paths, in order, with their component types."""
    return [(path, tuple(map(type, path))) for path in getattr(scheme, "_memo", {})]


@needs_accel
def test_the_c_encode_is_installed() -> None:
    from keyspace.schemes.scoped_heed import ScopedHeed

    assert type(ENCODE).__name__ == "MemoEncode"
    assert type(PY_ENCODE).__name__ == "function"
    assert ENCODE.__name__ == "encode" and ENCODE.__qualname__ == "Scheme.encode"
    assert ENCODE.__doc__ == PY_ENCODE.__doc__
    for cls in (TupleScheme, LengthPrefixed, AsciiHex, Sublevel, ScopeHash, Naive, ScopedHeed):
        assert cls.encode is ENCODE

    class OwnEncode(Sublevel):
        def encode(self, path: Any, key: Any) -> bytes:
            return b"own"

    # a class that defines encode keeps it
    assert OwnEncode().encode((b"a",), b"k") == b"own"
    assert OwnEncode().encode.__func__ is OwnEncode.__dict__["encode"]


@needs_accel
@pytest.mark.parametrize("name", list(ENCODE_SCHEMES))
@settings(max_examples=150, deadline=None)
@given(calls=st.lists(st.tuples(_PATH_SPECS, st.integers(0, len(_KEYS) - 1)), min_size=1, max_size=8))
def test_c_and_python_encode_alike(name: str, calls: list[tuple[tuple[str, list[int]], int]]) -> None:
    """Two fresh schemes, one encoding with the C form and one with the Python
    method, given the same calls (each path also as an equal new tuple, which
    the memo answers only for exactly str and bytes components): the same bytes,
    the same errors, the same memo."""
    c_scheme, py_scheme = ENCODE_SCHEMES[name](), ENCODE_SCHEMES[name]()
    for spec, k in calls:
        path, key = _path(spec), _KEYS[k]
        for p in (path, path, tuple(list(path)) if isinstance(path, tuple) else path):
            assert _encoded_by(ENCODE, c_scheme, p, key) == _encoded_by(PY_ENCODE, py_scheme, p, key)
        assert _memo_of(c_scheme) == _memo_of(py_scheme)


@needs_accel
def test_each_scheme_encodes_through_the_c_form() -> None:
    """``scheme.encode`` (bound or looked up on the class) is the C form for every
    scheme that does not define encode, and gives the scheme's bytes."""
    for name, make in ENCODE_SCHEMES.items():
        scheme = make()
        if name.startswith("scoped-heed"):
            continue
        depth = getattr(scheme, "_depth", None) or (1 if scheme.max_depth == 1 else 2)
        path = ("a", b"b")[:depth]
        if name == "naive-refusing":
            with pytest.raises(LayoutError, match="refuses"):
                scheme.encode(path, b"k")
            assert not hasattr(scheme, "_memo")  # refused before anything was compiled
            continue
        expected = scheme.prefix(path) + scheme.encode_key(b"k")
        assert scheme.encode(path, b"k") == expected  # a new path
        assert scheme.encode(path, b"k") == expected  # from the memo
        assert type(scheme).encode(scheme, tuple(path), b"k") == expected  # an equal path
        assert scheme._memo[path][0] is path


@needs_accel
def test_an_override_of_encode_new_is_called_where_python_calls_it() -> None:
    class Counting(Sublevel):
        def __init__(self) -> None:
            super().__init__()
            self.new: list[Any] = []

        def _encode_new(self, path: Any, key: Any) -> bytes:
            self.new.append(path)
            return super()._encode_new(path, key)

    c_scheme, py_scheme = Counting(), Counting()
    paths: list[Any] = [("a",), ("a",), ("a", "b"), ("a",), (_Text("a"),), (memoryview(b"a"),), ["a"], ("a",)]
    for path in paths:
        assert _encoded_by(ENCODE, c_scheme, path, b"k") == _encoded_by(PY_ENCODE, py_scheme, path, b"k")
    assert c_scheme.new == py_scheme.new
    assert len(c_scheme.new) == 5  # the two new paths, the three that are not memoised


@needs_accel
def test_a_subclass_that_defines_encode_is_honoured() -> None:
    class Marked(TupleScheme):
        def encode(self, path: Any, key: Any) -> bytes:
            return b"marked:" + super().encode(path, key)  # the C form, bound by super()

    scheme = Marked()
    plain = TupleScheme().encode(("a",), b"k")
    assert scheme.encode(("a",), b"k") == b"marked:" + plain
    assert scheme.encode(("a",), b"k") == b"marked:" + plain  # memoised by the C form
    assert ENCODE(scheme, ("a",), b"k") == plain


@needs_accel
def test_calls_the_c_form_does_not_handle_take_the_python_method() -> None:
    scheme = TupleScheme()
    scheme.encode(("a",), b"k")
    assert scheme.encode(path=("a",), key=b"k") == scheme.encode(("a",), b"k")
    assert ENCODE(scheme, ("a",), key=b"k") == scheme.encode(("a",), b"k")
    for args in [(scheme,), (scheme, ("a",)), (scheme, ("a",), b"k", 1), (object(), ("a",), b"k"), ()]:
        expected = _raised(PY_ENCODE, *args)
        assert expected is not None
        assert _raised(ENCODE, *args) == expected


def _raised(call: Any, *args: Any) -> tuple[type[Exception], str] | None:
    try:
        call(*args)
    except Exception as exc:
        return type(exc), str(exc)
    return None


@needs_accel
@pytest.mark.parametrize(
    "memo",
    [
        None,  # not a mapping: the lookup's TypeError sends the path to _encode_new
        {("a",): None},  # an entry that does not unpack (TypeError, caught)
        {("a",): (("a",),)},  # an entry of one item (ValueError, raised)
        {("a",): (("a",), lambda key: b"x" + key, 3)},  # of three items (ValueError)
        {("a",): [("a",), lambda key: b"from a list " + key]},  # a list unpacks
    ],
    ids=["none", "not-iterable", "one-item", "three-items", "list"],
)
def test_an_odd_memo_is_handled_as_by_python(memo: Any) -> None:
    c_scheme, py_scheme = TupleScheme(), TupleScheme()
    c_scheme._memo, py_scheme._memo = memo, memo
    for path in [("a",), ("b",)]:
        assert _encoded_by(ENCODE, c_scheme, path, b"k") == _encoded_by(PY_ENCODE, py_scheme, path, b"k")


@needs_accel
def test_a_memo_read_through_a_property_or_a_mapping_type() -> None:
    class Mapped(TupleScheme):
        reads = 0

        @property
        def _memo(self) -> Any:  # type: ignore[override]
            type(self).reads += 1
            return _Missing()

    class _Missing(dict):  # type: ignore[type-arg]
        def __missing__(self, path: Any) -> Any:
            return (path, lambda key: b"missing " + key)

    assert ENCODE(Mapped(), ("a",), b"k") == PY_ENCODE(Mapped(), ("a",), b"k") == b"missing k"


@needs_accel
def test_a_stored_that_drops_the_memo_while_it_runs() -> None:
    """The compiled function may run Python code that drops the memo (and with it
    the function's last reference): the C form holds its own for the call."""

    scheme = TupleScheme()
    path = ("t",)

    def stored(key: bytes) -> bytes:
        del scheme._memo  # the memo, its entry and so this function's last reference
        gc.collect()
        return b"x" + key

    scheme._memo = {path: (path, stored)}
    gone = weakref.ref(stored)
    del stored
    assert ENCODE(scheme, path, b"k") == b"xk"
    gc.collect()
    assert gone() is None  # and nothing kept it
    assert ENCODE(scheme, path, b"k") == TupleScheme().encode(path, b"k")  # compiled anew


def _sly(scheme: Scheme, change: str) -> object:
    """A component with the hash of ``"a"`` whose ``==`` changes ``scheme``'s memo."""

    class Sly:
        def __hash__(self) -> int:
            return hash("a")

        def __eq__(self, other: object) -> bool:
            if change == "clear":
                scheme._memo.clear()
            else:
                scheme._memo = {}
            return True

    return Sly()


@needs_accel
@pytest.mark.parametrize("change", ["clear", "replace"])
def test_a_component_whose_comparison_changes_the_memo(change: str) -> None:
    """A component equal to a memoised one (same hash) whose ``==`` empties the
    memo or replaces it: no crash, and the Python method's answer."""
    outcomes = []
    for encode in (ENCODE, PY_ENCODE):
        scheme = TupleScheme()
        scheme.encode(("a",), b"k")
        outcomes.append(_encoded_by(encode, scheme, (_sly(scheme, change),), b"k")[:2])
        outcomes.append(_encoded_by(encode, scheme, ("a",), b"k"))
    assert outcomes[:2] == outcomes[2:]


@needs_accel
def test_a_c_transform_that_drops_the_memo_while_it_runs() -> None:
    """The same with a C transform whose key codec drops the memo (and the
    transform's last reference) before the transform builds the key from its
    prefix."""

    assert accel is not None
    scheme = TupleScheme()
    path = ("t",)

    def encode(key: bytes) -> bytes:
        del scheme._memo
        gc.collect()
        [bytes(48) for _ in range(1000)]  # reuse freed memory
        return key

    def refuse(key: Any) -> bytes:
        raise AssertionError(key)

    transform = accel.Transform(0, b"prefix:", -1, 3, refuse, refuse, encode)
    scheme._memo = {path: (path, transform)}
    gone = weakref.ref(transform) if hasattr(transform, "__weakref__") else None
    del transform
    assert ENCODE(scheme, path, b"k") == b"prefix:k"
    gc.collect()
    assert gone is None or gone() is None
