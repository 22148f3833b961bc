"""The C point operations of scopes (the methods of ``keyspace._scope_accel.ScopeFields``,
the C base type of every scope): ``[]``, ``get`` and ``[]=`` store and return exactly
what their pure-Python reference (``keyspace._scope_fields.PointOps``) does, for every
scheme and for typed scopes, hand every other case to it, and translate engine
errors."""

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
from keyspace._scope_fields import FIELDS, PointOps
from keyspace._scope_fields import ScopeFields as PyScopeFields
from keyspace.catalog import SETTLED
from keyspace.codecs import BYTES
from keyspace.errors import InvalidKey, InvalidName, KeyTooLarge, StoreClosed
from keyspace.schemes import AsciiHex, LengthPrefixed, Naive, Scheme, ScopeHash, Sublevel, TupleScheme
from keyspace.schemes._layouts import LayoutCache
from keyspace.scope import Scope

try:
    from keyspace import _scope_accel as accel
except ImportError:  # built without a C compiler: the Python methods are the only ones
    accel = None

needs_accel = pytest.mark.skipif(accel is None, reason="keyspace._scope_accel was not built")

GETITEM = Scope.__getitem__
GET = Scope.get
SETITEM = Scope.__setitem__
# the pure-Python methods (what the C methods hand on; the methods themselves without C)
PY_GETITEM, PY_GET, PY_SETITEM = PointOps.__getitem__, PointOps.get, PointOps.__setitem__
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
def test_every_scope_is_an_instance_of_the_c_fields_type_whose_methods_it_inherits() -> None:
    assert accel is not None
    fields = accel.ScopeFields
    assert Scope.__mro__.index(fields) < Scope.__mro__.index(PointOps)
    assert fields.__bases__ == (PointOps,)
    members = [name for name, v in vars(fields).items() if type(v).__name__ == "member_descriptor"]
    assert members == list(FIELDS)
    for name in ("__getitem__", "get", "__setitem__", "__delitem__", "_copy", "_rebound"):
        assert name in vars(fields)
        assert all(name not in vars(cls) for cls in Scope.__mro__[: Scope.__mro__.index(fields)])
    assert type(vars(fields)["get"]).__name__ == "ScopeGet"  # a method descriptor with vectorcall
    assert type(vars(fields)["__getitem__"]).__name__ == "wrapper_descriptor"
    assert Scope.__basicsize__ == fields.__basicsize__  # the classes above add no field


def test_the_c_type_refuses_fields_other_than_the_declared_ones() -> None:
    """The C type checks at import that its members are FIELDS, in order: a field
    renamed on one side only fails the import, never reads another field."""
    program = """
import keyspace._scope_fields as f
f.FIELDS = (*f.FIELDS[:-1], "renamed")
try:
    import keyspace._scope_accel
except ImportError as exc:
    print("refused:", exc)
"""
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    if accel is not None:
        assert (
            out.stdout.strip()
            == "refused: keyspace._scope_fields.FIELDS[25] is not the C type's member scheme"
        )


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
        PY_SETITEM(py_scope, k, v)
    stored = raw_items(ks)
    c_raw = sorted(
        (s, v) for s, v in stored if c_scope.layout.is_own(s) and _within(s, c_scope.layout.ranges)
    )
    assert c_raw == sorted((scheme.encode(c_path, k), v) for k, v in pairs.items())
    assert len(stored) - len(c_raw) >= len(pairs)  # py_scope's, and any registry or record
    for k in pairs:
        assert scheme.encode(py_path, k) in dict(stored)
    for k, v in pairs.items():
        assert c_scope[k] == PY_GETITEM(c_scope, k) == v
        assert c_scope.get(k) == c_scope.get(k, b"default") == v
    if missing not in pairs:
        with pytest.raises(KeyError) as caught:
            c_scope[missing]
        assert caught.value.args == (missing,)
        assert c_scope.get(missing) is None
        assert c_scope.get(missing, 7) == 7
        assert PY_GET(c_scope, missing, 7) == 7


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
        PY_SETITEM(py_scope, k, v)
    assert list(ks.store.scan(lo, hi)) == c_raw
    for k, v in pairs.items():
        assert c_scope[k] == PY_GETITEM(py_scope, k) == v
    if missing not in pairs:
        assert c_scope.get(missing, 5) == PY_GET(py_scope, missing, 5) == 5
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
    assert PY_GET(parent, stored_tail) is None
    with pytest.raises(KeyError):
        PY_GETITEM(parent, stored_tail)


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
def test_the_c_methods_refuse_an_instance_of_another_class() -> None:
    class Other:
        pass

    with pytest.raises(TypeError):
        GET(Other(), b"k")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        GETITEM(Other(), b"k")  # type: ignore[arg-type]


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
            PY_GETITEM(inside, b"k" * 600)
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


def test_without_the_c_module_the_python_methods_run(tmp_path: Path) -> None:
    program = """
import sys
for name in ("keyspace._scope_accel", "keyspace.schemes._layouts_accel", "keyspace._bincode_accel"):
    sys.modules[name] = None  # as if it had not been built
import keyspace
from keyspace._scope_fields import FIELDS, PointOps
from keyspace._scope_fields import ScopeFields as PyScopeFields
from keyspace.scope import Scope
assert Scope.__getitem__ is keyspace._scope_fields.PointOps.__getitem__
assert "ScopeFields" in [c.__name__ for c in Scope.__mro__]
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
    for _ in range(2):  # the second snapshot's scope: the first one's rebound, in Python
        with ks.snapshot() as snap:
            assert snap.scope("t")[b"c"] == b"2" and snap.scope("t")._view is snap.view
    print(sorted(ks.store.scan(b"", None)))
"""
    out = subprocess.run(
        [sys.executable, "-c", program, str(tmp_path / "db")], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    with keyspace.open(str(tmp_path / "db")) as ks:
        assert out.stdout.strip() == repr(sorted(ks.store.scan(b"", None)))
        assert dict(ks.scope("t")) == {b"a\x00b": b"1", b"c": b"2"}


class _Reads:
    """A view whose point read is a method, or set on the instance (an engine's
    own C call) where given."""

    def __init__(self, call: Any = None) -> None:
        if call is not None:
            self.get = call

    def get(self, key: bytes) -> bytes | None:
        return None


@needs_accel
@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: s.name)
@pytest.mark.parametrize("fast", [False, True])
def test_rebound_in_c_sets_what_the_python_twin_sets(scheme: Scheme, fast: bool) -> None:
    """``_rebound(view)`` of the C type gives the copy the pure twin's gives: the
    view, data view, point read (the view's ``get``) and the read route; every
    other field the scope's own."""
    with keyspace.open("memory:", scheme=scheme) as ks, ks.snapshot() as snap:
        scope = snap.scope("t")
        view = _Reads(dict().get if fast else None)
        made = scope._rebound(view)
        reference = PyScopeFields._rebound(scope, view)
        assert type(made) is type(reference) is type(scope)
        for name in FIELDS:
            mine, theirs = getattr(made, name), getattr(reference, name)
            if name in ("_get", "_read_route") and not fast:  # bound methods: equal, not identical
                assert mine == theirs, name
            else:
                assert mine is theirs or mine == theirs, name
        assert made._view is made._data is view
        assert made._get == view.get
        with pytest.raises(AttributeError):
            scope._rebound(object())
