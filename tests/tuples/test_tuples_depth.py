"""Tuples nested past the documented limit, ``keyspace.tuples.MAX_NESTING``.

Packing a tuple nested deeper than the limit raises :class:`InvalidKey` naming
the element (cut short) and the limit, never ``RecursionError``; unpacking bytes
that open more nested tuples than the limit raises :class:`DecodeError` naming
the limit and the offset of the level too many. The C module and the
pure-Python code draw the line at the same depth and give the same error. A
scope refuses such a key on every operation and leaves the store as it was; a
stored key nested too deep reads as any other key that does not decode, in the
library and on the command line.
"""

from __future__ import annotations

import collections
import enum
import functools
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import fdb.tuple as fdbt
import pytest
from _tuple_values import canon

import keyspace
from keyspace import tuples
from keyspace.cli import main
from keyspace.errors import DecodeError, InvalidKey, InvalidName, show_bytes
from keyspace.schemes import TupleScheme
from keyspace.stores import open_store
from keyspace.tuples import MAX_NESTING

accel: Any
try:
    from keyspace import _tuples_accel as accel
except ImportError:  # built without a C compiler: the pure-Python path only
    accel = None

LIMIT_WORDS = f"tuples nest deeper than the limit, {MAX_NESTING} levels"
OVER = (MAX_NESTING + 1, 5_000, 100_000)


def nest(levels: int, inner: tuple[Any, ...] = (1,)) -> tuple[Any, ...]:
    """A tuple whose packing nests ``levels`` tuples inside one another, the
    deepest holding the elements of ``inner``: ``nest(0) == (1,)``,
    ``nest(1) == ((1,),)``."""
    t = inner
    for _ in range(levels):
        t = (t,)
    return t


def nested_bytes(levels: int, inner: bytes = b"\x15\x01") -> bytes:
    """The encoding of ``nest(levels)`` written out, for any depth."""
    return b"\x05" * levels + inner + b"\x00" * levels


@pytest.fixture(params=["c", "python"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs a test with the C module, and again with the pure-Python code only."""
    if request.param == "c":
        if accel is None:
            pytest.skip("keyspace._tuples_accel was not built")
        assert tuples._accel_pack is accel.pack and tuples._accel_unpack is accel.unpack
    else:
        monkeypatch.setattr(tuples, "_accel_pack", None)
        monkeypatch.setattr(tuples, "_accel_unpack", None)
    return str(request.param)


def _refused_by_name(message: str) -> None:
    assert LIMIT_WORDS in message, message
    assert "((((" in message, message  # the value, shown
    assert len(message) < 400, message  # ... and cut short


# -- the limit ----------------------------------------------------------------------


def test_the_limit_is_generous_and_within_what_fdb_tuple_reads_and_writes() -> None:
    assert "MAX_NESTING" in tuples.__all__
    assert 100 <= MAX_NESTING <= 300
    # fdb.tuple packs and unpacks every depth keyspace accepts, byte for byte the same
    at_limit = nest(MAX_NESTING)
    raw = tuples.pack(at_limit)
    assert raw == fdbt.pack(at_limit) == nested_bytes(MAX_NESTING)
    assert canon(fdbt.unpack(raw)) == canon(tuples.unpack(raw)) == canon(at_limit)
    with pytest.raises(InvalidKey):
        tuples.pack(nest(MAX_NESTING + 1))


# -- pack -----------------------------------------------------------------------------


@pytest.mark.parametrize("levels", OVER)
def test_pack_refuses_tuples_nested_past_the_limit(path: str, levels: int) -> None:
    for value in (nest(levels), ("tenant", nest(levels), b"key"), (nest(3), (1, (2, nest(levels - 2))))):
        with pytest.raises(InvalidKey) as info:
            tuples.pack(value)
        assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
        _refused_by_name(str(info.value))
        with pytest.raises(InvalidKey):
            tuples.range(value)
    # nesting exactly to the limit is packed, byte-identical to fdb.tuple
    ok = ("tenant", nest(MAX_NESTING - 1, ("a", None, b"\x00", -2, 1.5, True)), b"key")
    assert tuples.pack(ok) == fdbt.pack(ok)
    assert canon(tuples.unpack(tuples.pack(ok))) == canon(ok)


class _Color(enum.IntEnum):
    RED = 1


_Pair = collections.namedtuple("_Pair", "left right")


@pytest.mark.parametrize(
    "inner",
    [(uuid.UUID(int=7),), (_Color.RED, "x"), (2**70,), (_Pair(1, 2),)],
    ids=["uuid", "int-enum", "big-int", "namedtuple"],
)
def test_pack_refuses_deep_nesting_on_the_general_path(path: str, inner: tuple[Any, ...]) -> None:
    """Elements that the fast encoders leave to the general one (subclasses, UUIDs,
    big ints) do not move the limit."""
    own = 1 if any(isinstance(x, tuple) for x in inner) else 0  # a namedtuple nests one more
    at_limit = nest(MAX_NESTING - own, inner)
    assert tuples.pack(at_limit) == fdbt.pack(nest(MAX_NESTING - own, tuple(_plain(x) for x in inner)))
    for levels in OVER:
        with pytest.raises(InvalidKey) as info:
            tuples.pack(nest(levels - own, inner))
        _refused_by_name(str(info.value))


def _plain(x: Any) -> Any:
    """``x`` as the base type the tuple encoding sees (fdb.tuple refuses IntEnum)."""
    if isinstance(x, tuple):
        return tuple(x)
    if isinstance(x, int) and not isinstance(x, bool):
        return int(x)
    return x


def test_a_tuple_nested_past_the_recursion_limit_is_shown_in_messages() -> None:
    deep = nest(100_000)
    shown = show_bytes(deep)
    assert shown.startswith("(" * 48) and shown.endswith(f"… ({len('(1,)') + 3 * 100_000} characters)")
    assert show_bytes(("a", nest(3, (b"\x00", None)))) == repr(("a", nest(3, (b"\x00", None))))


# -- unpack ---------------------------------------------------------------------------


@pytest.mark.parametrize("levels", OVER)
def test_unpack_refuses_bytes_nested_past_the_limit(path: str, levels: int) -> None:
    for raw, first in [
        (nested_bytes(levels), 0),  # well formed, too deep
        (b"\x05" * levels, 0),  # never closed
        (b"\x02a\x00" + nested_bytes(levels, b"\x02b\x00") + b"\x15\x07", 3),  # between other elements
    ]:
        for prefix in (b"", b"\x01pfx\x00"):
            with pytest.raises(DecodeError) as info:
                tuples.unpack(prefix + raw, len(prefix))
            message = str(info.value)
            assert LIMIT_WORDS in message and "invalid tuple encoding" in message, message
            assert len(message) < 400, message
            # the 05 that opens the level too many
            assert info.value.offset == len(prefix) + first + MAX_NESTING
            assert f"offset {info.value.offset}" in message
    at_limit = nested_bytes(MAX_NESTING)
    assert tuples.unpack(at_limit) == nest(MAX_NESTING) == fdbt.unpack(at_limit)


# -- the C module and the pure-Python code agree ------------------------------------


def _outcomes(values: list[tuple[Any, ...]], raws: list[bytes]) -> list[tuple[str, Any]]:
    """What ``tuples.pack`` makes of each value and ``tuples.unpack`` of each input:
    the result, or the error's class and message."""
    calls: list[Callable[[], Any]] = [functools.partial(tuples.pack, v) for v in values]
    calls += [functools.partial(tuples.unpack, r) for r in raws]
    got: list[tuple[str, Any]] = []
    for call in calls:
        try:
            got.append(("ok", canon(call())))
        except (InvalidKey, DecodeError) as exc:
            got.append((type(exc).__name__, str(exc)))
    return got


@pytest.mark.skipif(accel is None, reason="keyspace._tuples_accel was not built")
def test_the_c_module_draws_the_line_where_python_does(monkeypatch: pytest.MonkeyPatch) -> None:
    assert accel is not None
    assert accel.MAX_NESTING == MAX_NESTING
    inner = ("a", None, b"\x00", -2, 1.5, True)
    for levels in (MAX_NESTING - 1, MAX_NESTING):
        value = (b"k", *nest(levels, inner))
        raw = accel.pack(value)
        assert raw is not None and raw == tuples._pack_py(value) == fdbt.pack(value)
        decoded = accel.unpack(raw, 0)
        assert decoded is not None and canon(decoded) == canon(tuples._unpack_exact(raw, 0))
    for levels in (MAX_NESTING + 1, 100_000):
        value = (b"k", *nest(levels, inner))
        assert accel.pack(value) is None  # handed to Python, which refuses it
        assert accel.unpack(b"\x01k\x00" + nested_bytes(levels), 0) is None
    # the same error, class and message, with and without the C module
    cases = [nest(MAX_NESTING + 1), ("x", nest(5_000))]
    raws = [nested_bytes(MAX_NESTING + 1), b"\x05" * 5_000, nested_bytes(MAX_NESTING)]
    with_c = _outcomes(cases, raws)
    monkeypatch.setattr(tuples, "_accel_pack", None)
    monkeypatch.setattr(tuples, "_accel_unpack", None)
    assert _outcomes(cases, raws) == with_c
    assert [kind for kind, _ in with_c] == ["InvalidKey", "InvalidKey", "DecodeError", "DecodeError", "ok"]


@pytest.mark.skipif(accel is None, reason="keyspace._tuples_accel was not built")
def test_a_c_module_built_with_another_limit_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    assert accel is not None
    assert tuples._load_accel() is accel
    monkeypatch.setattr(accel, "MAX_NESTING", 16)
    assert tuples._load_accel() is None
    monkeypatch.delattr(accel, "MAX_NESTING")
    assert tuples._load_accel() is None


# -- the tuple scheme and scopes ------------------------------------------------------


def test_the_tuple_scheme_refuses_keys_and_paths_nested_past_the_limit(path: str) -> None:
    scheme = TupleScheme()
    for levels in (MAX_NESTING + 1, 100_000):
        with pytest.raises(InvalidKey) as key_info:
            scheme.encode_key(nest(levels))
        _refused_by_name(str(key_info.value))
        with pytest.raises(InvalidKey):
            scheme.encode(("acme",), ("k", nest(levels)))
        # a path component is nested one level more, inside the path tuple
        with pytest.raises(InvalidName) as path_info:
            scheme.prefix(("acme", *nest(levels - 1)))
        _refused_by_name(str(path_info.value))
        stored = scheme.prefix(("acme",)) + nested_bytes(levels)
        with pytest.raises(DecodeError, match=LIMIT_WORDS):
            scheme.decode(stored)
        with pytest.raises(DecodeError, match=LIMIT_WORDS):
            scheme.decode_key(nested_bytes(levels))
        assert scheme.child_step(())(stored) is None  # a key that does not decode
    deepest = nest(MAX_NESTING - 1)  # *deepest: a component reaching the limit inside the path
    stored = scheme.encode(("acme", *deepest), ("k", *nest(MAX_NESTING)))
    assert scheme.decode(stored) == (("acme", *deepest), ("k", *nest(MAX_NESTING)))


@pytest.fixture(params=["lmdb", "memory"])
def ks(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[keyspace.Keyspace]:
    url = f"lmdb://{tmp_path / 'db'}" if request.param == "lmdb" else "memory:"
    with keyspace.open(url) as opened:
        opened.scope("acme")["k"] = b"v"
        opened.scope("acme", "users")[("alice", 1)] = b"a"
        yield opened


def _writes(scope: Any, ks: keyspace.Keyspace, key: Any) -> list[Callable[[], Any]]:
    def in_transaction() -> None:
        with ks.transaction() as tx:
            tx.scope("acme")[b"first"] = b"written first"
            tx.scope("acme")[key] = b"x"

    def delete_in_transaction() -> None:
        with ks.transaction() as tx:
            del tx.scope("acme")["k"]
            del tx.scope("acme")[key]

    def pop() -> Any:
        return scope.pop(key)

    return [
        lambda: scope.__setitem__(key, b"x"),
        lambda: scope.__getitem__(key),
        lambda: scope.get(key),
        lambda: key in scope,
        lambda: scope.__delitem__(key),
        pop,
        lambda: scope.update([(b"other", b"o"), (key, b"x")]),  # all or nothing
        lambda: list(scope.keys(start=key)),
        in_transaction,
        delete_in_transaction,
    ]


@pytest.mark.parametrize("levels", [MAX_NESTING + 1, 5_000])  # 5,000: past the recursion limit
def test_scope_operations_refuse_keys_nested_past_the_limit_and_change_nothing(
    ks: keyspace.Keyspace, path: str, levels: int
) -> None:
    before = list(ks.store.scan(b"", None))
    scope = ks.scope("acme")
    for key in (nest(levels), ("alice", nest(levels))):
        for operation in _writes(scope, ks, key):
            with pytest.raises(InvalidKey) as info:
                operation()
            _refused_by_name(str(info.value))
            assert list(ks.store.scan(b"", None)) == before
    # a path component nested too deep
    with pytest.raises(InvalidName) as path_info:
        ks.scope("acme", nest(levels))
    _refused_by_name(str(path_info.value))
    with pytest.raises(InvalidName), ks.transaction() as tx:
        tx.scope("acme")[b"first"] = b"written first"
        tx.scope("acme", nest(levels))[b"k"] = b"v"
    assert list(ks.store.scan(b"", None)) == before
    assert dict(ks.scope("acme")) == {"k": b"v"}


def test_a_stored_key_nested_past_the_limit_reads_as_a_decode_error(ks: keyspace.Keyspace, path: str) -> None:
    scope = ks.scope("acme")
    scope[("deepest", nest(MAX_NESTING - 1))] = b"ok"
    assert scope[("deepest", nest(MAX_NESTING - 1))] == b"ok"
    own = TupleScheme().prefix(("acme",))
    ks.store.put(own + b"\x02zz\x00" + nested_bytes(MAX_NESTING + 1), b"written by someone else")
    with pytest.raises(DecodeError, match=LIMIT_WORDS):
        list(scope.keys())
    with pytest.raises(DecodeError, match=LIMIT_WORDS):
        list(scope.items())
    # the keys before it, and the point reads, are as they were
    assert list(scope.keys(stop="zz")) == [("deepest", nest(MAX_NESTING - 1)), "k"]
    assert scope["k"] == b"v"


# -- the command line -----------------------------------------------------------------


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("levels", [MAX_NESTING + 1, 5_000])
@pytest.mark.parametrize("json", [False, True], ids=["text", "json"])
def test_cli_decode_reports_nesting_past_the_limit_as_a_decode_error(
    capsys: pytest.CaptureFixture[str], levels: int, json: bool
) -> None:
    flags = ["--json"] if json else []
    stored = TupleScheme().prefix(("acme",)) + nested_bytes(levels)
    code, out, err = _cli(capsys, "decode", "--scheme", "tuple", *flags, stored.hex())
    assert (code, out) == (1, "")
    assert err.startswith("error: invalid tuple encoding at offset ") and err.count("\n") == 1, err
    assert LIMIT_WORDS in err and "unexpected" not in err and len(err) < 400, err
    # as it reports any other stored key that does not decode
    code, out, other = _cli(capsys, "decode", "--scheme", "tuple", *flags, "0533")
    assert (code, out) == (1, "") and other.startswith("error: invalid tuple encoding at offset ")
    # nesting exactly to the limit decodes
    ok = TupleScheme().prefix(("acme",)) + nested_bytes(MAX_NESTING)
    assert _cli(capsys, "decode", "--scheme", "tuple", *flags, ok.hex())[0] == 0


@pytest.mark.parametrize("levels", [MAX_NESTING + 1, 200])
def test_cli_readers_report_a_stored_key_nested_past_the_limit_as_undecodable(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, levels: int
) -> None:
    """``inspect`` counts it among the keys that do not decode, ``scan`` and
    ``migrate`` stop with one line naming it, exactly as for another key that
    does not decode (a versionstamp)."""
    reports: dict[str, list[tuple[int, str, str]]] = {}
    for name, bad in [("deep", nested_bytes(levels)), ("versionstamp", b"\x33")]:
        url = f"lmdb://{tmp_path / name}"
        with keyspace.open(url) as ks:
            ks.scope("acme")["k"] = b"v"
        with open_store(url) as store:
            store.put(TupleScheme().prefix(("acme",)) + b"\x02zz\x00" + bad, b"written by someone else")
        reports[name] = [
            _cli(capsys, "inspect", url),
            _cli(capsys, "scan", url, "acme"),
            _cli(capsys, "migrate", url, f"lmdb://{tmp_path / (name + '-copy')}"),
        ]
        with open_store(f"lmdb://{tmp_path / (name + '-copy')}") as copy:
            assert list(copy.scan(b"", None)) == []  # nothing was written
    inspect, scan, migrate = reports["deep"]
    inspect_other, scan_other, migrate_other = reports["versionstamp"]
    assert inspect[0] == inspect_other[0] == 0
    assert "warning: 1 keys do not decode as tuple" in inspect[2] and LIMIT_WORDS in inspect[2], inspect
    assert "warning: 1 keys do not decode as tuple" in inspect_other[2]
    # the same tree: the key is not counted
    assert _tree(inspect[1]) == _tree(inspect_other[1]) and "acme     1" in inspect[1], inspect
    for got, other in [(scan, scan_other), (migrate, migrate_other)]:
        assert got[0] == other[0] == 1 and got[1] == other[1], (got, other)
        error = got[2].splitlines()[-1]
        assert error.startswith("error: ") and LIMIT_WORDS in error and "unexpected" not in error, got
        assert other[2].splitlines()[-1].startswith("error: ")


def _tree(out: str) -> list[str]:
    """The output of ``inspect`` without the line naming the store."""
    return [line for line in out.splitlines() if "lmdb://" not in line]
