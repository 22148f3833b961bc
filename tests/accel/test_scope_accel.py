"""The C point operations of scopes (``keyspace._scope_accel``): ``[]``, ``get`` and
``[]=`` store and return exactly what their pure-Python methods (``__wrapped__``) do,
for every scheme and for typed scopes, hand every other case to those methods, and
translate engine errors. The C form of ``Scheme.encode`` returns the bytes and
raises the errors of its Python method for every scheme and path, calls
``_encode_new`` where that method does, and survives a memo changed under it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lmdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.catalog import SETTLED
from keyspace.codecs import BYTES
from keyspace.errors import InvalidKey, InvalidName, KeyTooLarge, LayoutError, StoreClosed
from keyspace.schemes import AsciiHex, LengthPrefixed, Naive, Scheme, ScopeHash, Sublevel, TupleScheme
from keyspace.schemes._layouts import LayoutCache
from keyspace.scope import Scope

try:
    from keyspace import _scope_accel as accel
except ImportError:  # built without a C compiler: the Python methods are the only ones
    accel = None

needs_accel = pytest.mark.skipif(accel is None, reason="keyspace._scope_accel was not built")

GETITEM = Scope.__dict__["__getitem__"]
GET = Scope.__dict__["get"]
SETITEM = Scope.__dict__["__setitem__"]
# the pure-Python methods (the C methods' fallbacks; the methods themselves without C)
PY_GETITEM, PY_GET, PY_SETITEM = (getattr(op, "__wrapped__", op) for op in (GETITEM, GET, SETITEM))
SCHEMES: list[Scheme] = [TupleScheme(), LengthPrefixed(), AsciiHex(), Sublevel(), ScopeHash(), Naive(True)]


@pytest.fixture(params=["memory", "lmdb", "leveldb", "sqlite"])
def ks(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[keyspace.Keyspace]:
    url = {
        "memory": "memory:",
        "lmdb": str(tmp_path / "db"),
        "leveldb": f"leveldb://{tmp_path / 'ldb'}",
        "sqlite": f"sqlite:///{tmp_path / 'db.sqlite'}",
    }
    with keyspace.open(url[request.param]) as opened:
        yield opened


def raw_items(ks: keyspace.Keyspace) -> list[tuple[bytes, bytes]]:
    return list(ks.store.scan(b"", None))


@needs_accel
def test_the_c_methods_are_installed() -> None:
    for op, name in ((GETITEM, "__getitem__"), (GET, "get"), (SETITEM, "__setitem__")):
        assert type(op).__name__ == "PointOp"
        assert op.__name__ == name
        assert op.__doc__ == op.__wrapped__.__doc__
        assert callable(op.__wrapped__) and type(op.__wrapped__).__name__ == "function"


keys = st.binary(max_size=40) | st.sampled_from([b"", b"\x00", b"\x00\x00", b"a\x00", b"\xff\x00\xff"])


@needs_accel
@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: s.name)
@settings(max_examples=60, deadline=None)
@given(pairs=st.dictionaries(keys, st.binary(max_size=20), max_size=12), missing=keys)
def test_c_and_python_store_and_read_the_same_bytes(
    scheme: Scheme, pairs: dict[bytes, bytes], missing: bytes
) -> None:
    if isinstance(scheme, Sublevel):
        pairs = {k: v for k, v in pairs.items() if k[:1] != b"!"}
        missing = missing.lstrip(b"!")
    ks = keyspace.open("memory:", scheme=scheme)
    c_path, py_path = ("c",), ("p",)
    c_scope, py_scope = ks.scope(*c_path), ks.scope(*py_path)
    for k, v in pairs.items():
        c_scope[k] = v  # the C method (after the first write has prepared the writer)
        SETITEM.__wrapped__(py_scope, k, v)
    stored = raw_items(ks)
    c_raw = sorted(
        (s, v) for s, v in stored if c_scope.layout.is_own(s) and _within(s, c_scope.layout.ranges)
    )
    assert c_raw == sorted((scheme.encode(c_path, k), v) for k, v in pairs.items())
    assert len(stored) - len(c_raw) >= len(pairs)  # py_scope's, and any registry or record
    for k in pairs:
        assert scheme.encode(py_path, k) in dict(stored)
    for k, v in pairs.items():
        assert c_scope[k] == GETITEM.__wrapped__(c_scope, k) == v
        assert c_scope.get(k) == c_scope.get(k, b"default") == v
    if missing not in pairs:
        with pytest.raises(KeyError) as caught:
            c_scope[missing]
        assert caught.value.args == (missing,)
        assert c_scope.get(missing) is None
        assert c_scope.get(missing, 7) == 7
        assert GET.__wrapped__(c_scope, missing, 7) == 7


@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: s.name)
@settings(max_examples=40, deadline=None)
@given(pairs=st.dictionaries(keys, st.binary(max_size=20), max_size=12), missing=keys)
def test_python_methods_over_python_layouts_store_the_schemes_bytes(
    scheme: Scheme, pairs: dict[bytes, bytes], missing: bytes
) -> None:
    """Without the C module: the pure-Python methods on pure-Python layouts (the
    one-frame route where the layout has an escape, the general route elsewhere)
    store ``scheme.encode(path, key)``, read it back, and refuse what the scheme
    refuses with the scheme's error."""
    ks = keyspace.open("memory:", scheme=scheme)
    ks._space.layouts = LayoutCache(ks.scheme, accelerate=False)
    scope, other = ks.scope("p"), ks.scope("p", key="str")
    assert not scope.layout.accelerated
    if isinstance(scheme, Sublevel):
        for refused in (b"!", b"!x"):  # a key with the separator first is a child's
            with pytest.raises(InvalidName):
                PY_SETITEM(scope, refused, b"v")
            with pytest.raises(InvalidName):
                PY_GET(scope, refused)
        pairs = {k: v for k, v in pairs.items() if k[:1] != b"!"}
        missing = missing.lstrip(b"!")
    for k, v in pairs.items():
        PY_SETITEM(scope, k, v)
    stored = raw_items(ks)
    own = sorted((s, v) for s, v in stored if scope.layout.is_own(s) and _within(s, scope.layout.ranges))
    assert own == sorted((scheme.encode(("p",), k), v) for k, v in pairs.items())
    for k, v in pairs.items():
        assert PY_GETITEM(scope, k) == PY_GET(scope, k) == PY_GET(scope, k, b"default") == v
    if missing not in pairs:
        with pytest.raises(KeyError) as caught:
            PY_GETITEM(scope, missing)
        assert caught.value.args == (missing,)
        assert PY_GET(scope, missing) is None
        assert PY_GET(scope, missing, 7) == 7
    with pytest.raises(InvalidKey):
        PY_SETITEM(scope, bytearray(b"k"), b"v")
    with pytest.raises(InvalidKey):
        PY_GETITEM(scope, bytearray(b"k"))
    with pytest.raises(InvalidKey):
        PY_SETITEM(other, b"a bytes key in a str scope", b"v")
    assert raw_items(ks) == stored  # the refusals wrote nothing


def test_python_reads_run_the_read_guard_while_one_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one-frame route of the Python reads is taken only while the scope has no
    read guard left to run; with one, every read runs it first, and once it
    settles the route is taken."""
    ks = keyspace.open("memory:")
    ks._space.layouts = LayoutCache(ks.scheme, accelerate=False)
    scope = ks.scope("t")
    PY_SETITEM(scope, b"k", b"v")
    assert scope._guard is not None  # type: ignore[attr-defined]  # made before the record was written
    assert PY_GET(scope, b"k") == b"v"  # a read sees the record and settles the guard
    assert scope._escape is not None and scope._guard is None  # type: ignore[attr-defined]
    assert PY_GETITEM(scope, b"k") == PY_GET(scope, b"k") == b"v"
    answers: list[object] = [False, False, SETTLED]  # no own keys, twice; then readable for good
    seen: list[object] = []

    def guard(view: object) -> object:
        seen.append(view)
        return answers.pop(0)

    monkeypatch.setattr(type(ks.catalog), "guard", lambda self, path: guard)
    guarded = Scope(ks._space, ks.store, ks.catalog, ("t",), BYTES, BYTES)  # ks.scope() caches the first
    assert guarded._guard is guard  # type: ignore[attr-defined]
    assert PY_GET(guarded, b"k", 5) == 5
    with pytest.raises(KeyError):
        PY_GETITEM(guarded, b"k")
    assert PY_GET(guarded, b"k") == b"v"  # the guard settles here
    assert PY_GETITEM(guarded, b"k") == PY_GET(guarded, b"k") == b"v"
    assert len(seen) == 3


def test_python_methods_translate_engine_errors_in_a_transaction(tmp_path: Path) -> None:
    """The pure-Python methods call py-lmdb's own get and put inside a transaction
    and translate their raw errors, as the C methods do."""
    ks = keyspace.open(str(tmp_path / "db"))
    ks._space.layouts = LayoutCache(ks.scheme, accelerate=False)
    ks.scope("t")[b"first"] = b"v"
    with pytest.raises(KeyTooLarge, match="511") as caught, ks.transaction() as tx:
        inside = tx.scope("t")
        PY_SETITEM(inside, b"second", b"v")
        assert PY_GETITEM(inside, b"second") == b"v"
        with pytest.raises(KeyError):  # a key no store can hold is missing
            PY_GETITEM(inside, b"k" * 600)
        assert PY_GET(inside, b"k" * 600, 5) == 5
        PY_SETITEM(inside, b"k" * 600, b"v")  # raises, and so aborts the transaction
    assert isinstance(caught.value.__cause__, lmdb.Error)
    assert dict(ks.scope("t")) == {b"first": b"v"}
    ks.close()


def _within(key: bytes, ranges: tuple[tuple[bytes, bytes | None], ...]) -> bool:
    return any(lo <= key and (hi is None or key < hi) for lo, hi in ranges)


@needs_accel
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pairs=st.dictionaries(
        st.text(max_size=8), st.dictionaries(st.text(max_size=3), st.integers()), max_size=8
    ),
    missing=st.text(max_size=8),
)
def test_typed_scopes_alike_in_c_and_python(
    ks: keyspace.Keyspace, pairs: dict[str, Any], missing: str
) -> None:
    lo, hi = ks.scheme.subtree_range(("c",))
    ks.store.delete_range(lo, hi)
    c_scope, py_scope = ks.scope("c", key="str", value="json"), ks.scope("c", key="str", value="json")
    for k, v in pairs.items():
        c_scope[k] = v
    c_raw = list(ks.store.scan(lo, hi))
    ks.store.delete_range(lo, hi)
    for k, v in pairs.items():
        SETITEM.__wrapped__(py_scope, k, v)
    assert list(ks.store.scan(lo, hi)) == c_raw
    for k, v in pairs.items():
        assert c_scope[k] == GETITEM.__wrapped__(py_scope, k) == v
    if missing not in pairs:
        assert c_scope.get(missing, 5) == GET.__wrapped__(py_scope, missing, 5) == 5
    with pytest.raises(InvalidKey):
        c_scope[b"bytes key"] = 1
    assert dict(c_scope) == pairs


@needs_accel
def test_a_branch_scope_holds_no_own_keys_in_c() -> None:
    ks = keyspace.open("memory:", scheme=LengthPrefixed())
    child = ks.scope(b"a", b"b")
    child[b"k"] = b"v"
    parent = ks.scope(b"a")
    stored_tail = LengthPrefixed().prefix((b"b",)) + b"k"  # the child's key, read from the parent
    assert ks.store.get(parent.layout.stored(stored_tail)) == b"v"
    with pytest.raises(KeyError):
        parent[stored_tail]
    assert parent.get(stored_tail) is None
    assert GET.__wrapped__(parent, stored_tail) is None
    with pytest.raises(KeyError):
        GETITEM.__wrapped__(parent, stored_tail)


@needs_accel
def test_inside_a_transaction(ks: keyspace.Keyspace) -> None:
    with ks.transaction() as tx:
        scope = tx.scope("t")
        scope[b"a\x00b"] = b"1"
        scope[b"c"] = b"2"
        assert scope[b"a\x00b"] == b"1"
        assert scope.get(b"c") == b"2"
        assert ks.scope("t").get(b"c") is None  # not committed yet
    assert dict(ks.scope("t")) == {b"a\x00b": b"1", b"c": b"2"}


@needs_accel
def test_every_other_case_takes_the_python_method(ks: keyspace.Keyspace) -> None:
    scope = ks.scope("t")
    scope[b"bytes"] = b"v"
    scope["text"] = b"str key"  # not bytes: the general path
    scope[(b"a", 2)] = b"composite"
    with pytest.raises(InvalidKey):
        scope[bytearray(b"ba")] = b"bytearray key"
    with pytest.raises(InvalidKey):
        scope[bytearray(b"ba")]
    scope[b"value"] = bytearray(b"bytearray value")
    assert scope["text"] == b"str key"
    assert scope[(b"a", 2)] == b"composite"
    assert scope.get("missing", default=3) == 3  # keyword argument
    assert scope.get(key=b"bytes") == b"v"
    assert scope[b"value"] == b"bytearray value"
    assert dict(scope) == {
        b"bytes": b"v",
        b"value": b"bytearray value",
        "text": b"str key",
        (b"a", 2): b"composite",
    }
    with pytest.raises(TypeError):
        scope.get()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        scope.get(b"a", 1, 2)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        SETITEM(scope, b"k")


@needs_accel
def test_bound_and_unbound_calls(ks: keyspace.Keyspace) -> None:
    scope = ks.scope("t")
    scope.__setitem__(b"k", b"v")
    SETITEM(scope, b"k2", b"v2")
    assert scope.__getitem__(b"k") == b"v"
    assert GETITEM(scope, b"k2") == b"v2"
    bound = scope.get
    assert bound(b"k") == b"v" and bound.__self__ is scope
    assert Scope.__getitem__ is GETITEM


@needs_accel
def test_an_instance_of_another_class_gets_the_python_method() -> None:
    class Other:
        pass

    with pytest.raises(AttributeError):
        GETITEM(Other(), b"k")  # the Python method, which finds no slots on Other


@needs_accel
def test_engine_errors_are_translated(tmp_path: Path) -> None:
    ks = keyspace.open(str(tmp_path / "db"))
    scope = ks.scope("t")
    scope[b"first"] = b"v"
    with pytest.raises(KeyTooLarge, match="511"):
        scope[b"k" * 600] = b"v"  # over LMDB's 511-byte key limit
    # in a transaction, py-lmdb's own get and put: raw errors, translated
    with pytest.raises(KeyTooLarge, match="511") as caught, ks.transaction() as tx:
        inside = tx.scope("t")
        inside[b"second"] = b"v"
        with pytest.raises(KeyError):  # a key no store can hold is missing, as in Python
            inside[b"k" * 600]
        with pytest.raises(KeyError):
            GETITEM.__wrapped__(inside, b"k" * 600)
        inside[b"k" * 600] = b"v"  # raises, and so aborts the transaction
    assert isinstance(caught.value.__cause__, lmdb.Error)
    assert dict(scope) == {b"first": b"v"}  # the store is unchanged
    ks.close()
    with pytest.raises(StoreClosed):
        scope[b"first"]
    with pytest.raises(StoreClosed):
        scope.get(b"first")
    with pytest.raises(StoreClosed):
        scope[b"second"] = b"v"


@needs_accel
def test_point_op_checks_its_arguments() -> None:
    assert accel is not None
    cls = Scope
    slots = [cls._stored, cls._get, cls._get_raw, cls._vdec, cls._guard, cls._view]  # type: ignore[attr-defined]
    args: list[Any] = [cls, GETITEM.__wrapped__, cls._raise_raw, *slots, SETTLED]
    with pytest.raises(ValueError, match="kind must be"):
        accel.point_op("delitem", *args)
    with pytest.raises(TypeError, match="cls must be a type"):
        accel.point_op("get", "not a type", *args[1:])
    with pytest.raises(TypeError, match="must be callable"):
        accel.point_op("get", cls, None, *args[2:])
    with pytest.raises(TypeError, match="member descriptor"):
        accel.point_op("get", cls, args[1], args[2], "prefix", *slots[1:], SETTLED)
    with pytest.raises(TypeError, match="object slot of"):
        accel.point_op("get", int, *args[1:])
    with pytest.raises(TypeError, match="11 arguments"):
        accel.point_op("get", cls)


def test_without_the_c_module_the_python_methods_run(tmp_path: Path) -> None:
    program = """
import sys
sys.modules["keyspace._scope_accel"] = None  # as if it had not been built
import keyspace
from keyspace.scope import Scope
assert type(Scope.__dict__["__getitem__"]).__name__ == "function"
assert not keyspace.schemes.TupleScheme().layout(("t",)).accelerated
assert type(keyspace.schemes.Scheme.__dict__["encode"]).__name__ == "function"
scheme = keyspace.schemes.TupleScheme()
assert scheme.encode(("t",), b"k") == scheme.encode(("t",), b"k") == b"\\x05\\x02t\\x00\\x00\\x01k\\x00"
assert list(scheme._memo) == [("t",)]
with keyspace.open(sys.argv[1]) as ks:
    scope = ks.scope("t")
    scope[b"a\\x00b"] = b"1"
    with ks.transaction() as tx:
        assert "scope" not in vars(tx)  # the method, no memo of C
        tx.scope("t")[b"c"] = b"2"
        assert tx.scope("t") is tx.scope("t")
    assert scope[b"a\\x00b"] == b"1" and scope.get(b"c") == b"2" and scope.get(b"x", 3) == 3
    print(sorted(ks.store.scan(b"", None)))
"""
    out = subprocess.run(
        [sys.executable, "-c", program, str(tmp_path / "db")], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    with keyspace.open(str(tmp_path / "db")) as ks:
        assert out.stdout.strip() == repr(sorted(ks.store.scan(b"", None)))
        assert dict(ks.scope("t")) == {b"a\x00b": b"1", b"c": b"2"}


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
    import gc
    import weakref

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
    import gc
    import weakref

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
