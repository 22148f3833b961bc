"""The optional C modules hold no memory and no reference after a call, on their
fast paths, on the paths that hand over to the pure-Python reference and on
their error paths: each operation runs a few thousand times, and neither the
memory Python has allocated (``tracemalloc``) nor the reference counts of its
inputs grow."""

from __future__ import annotations

import contextlib
import gc
import sys
import tracemalloc
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import lmdb
import pytest

import keyspace
from keyspace import bincode, tuples
from keyspace.schemes import AsciiHex, LengthPrefixed, ScopeHash, TupleScheme

try:
    from keyspace import _bincode_accel, _put_route_accel, _scope_accel, _tuples_accel
    from keyspace.stores import _gate_accel, _pairs_accel
except ImportError:  # pragma: no cover - built without a C compiler
    _tuples_accel = None

pytestmark = pytest.mark.skipif(_tuples_accel is None, reason="the C modules were not built")

RUNS = 3000
# A leak of one object per call costs at least 16 bytes a call; what a warmed-up
# operation may still allocate once (a cache entry, a grown free list) is far less
# than this bound.
BOUND = RUNS * 4


def attempt(call: Callable[[], Any]) -> Callable[[], None]:
    """``call`` with any Exception it raises dropped (an error path run as a case)."""

    def run() -> None:
        with contextlib.suppress(Exception):
            call()

    return run


def growth(call: Callable[[], None]) -> int:
    for _ in range(200):  # warm up: caches, free lists, lazily built state
        call()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(RUNS):
            call()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return after - before


def check(call: Callable[[], None], *inputs: Any) -> None:
    gc.collect()  # garbage of earlier tests (cycles through a store's bound methods) is not counted
    counts = [sys.getrefcount(x) for x in inputs]
    grew = growth(call)
    assert grew < BOUND, f"{grew} bytes more after {RUNS} calls"
    assert [sys.getrefcount(x) for x in inputs] == counts


def _nested(depth: int) -> tuple[Any, ...]:
    t: tuple[Any, ...] = (1,)
    for _ in range(depth):
        t = (t,)
    return t


# -- keyspace._tuples_accel --------------------------------------------------------

PACKED = tuples.pack(("a", b"b\x00c", 1, -(2**63), 1.5, None, True, (1, None, "é")))
TUPLE_CASES: dict[str, tuple[Callable[[], Any], tuple[Any, ...]]] = {}


def _tuple_cases() -> None:
    value = ("a", b"b\x00c", 1, -(2**63), 1.5, None, True, (1, None, "é"))
    handed = (uuid.UUID(int=1), 2**70, _nested(20))
    bad_str = ("ok", "\ud800")
    big = (2**2050,)
    too_deep = ("k", _nested(tuples.MAX_NESTING))
    cases = {
        "pack": (lambda: tuples.pack(value), (value,)),
        "pack-handed-over": (lambda: tuples.pack(handed), (handed,)),
        "pack-too-deep": (attempt(lambda: tuples.pack(too_deep)), (too_deep,)),
        "pack-invalid-str": (attempt(lambda: tuples.pack(bad_str)), (bad_str,)),
        "pack-too-big-int": (attempt(lambda: tuples.pack(big)), (big,)),
        "unpack": (lambda: tuples.unpack(PACKED), (PACKED,)),
        "unpack-prefix": (lambda: _tuples_accel.unpack(PACKED, 1), (PACKED,)),
    }
    for name, raw in {
        "truncated": PACKED[:-3],
        "bad-utf8": b"\x02\xff\xfe\x00",
        "unterminated-nested": b"\x05\x01a\x00\x15\x01",
        "deep": tuples.pack((_nested(20),)),
        "at-the-limit": tuples.pack((_nested(tuples.MAX_NESTING - 1),)),
        "too-deep": b"\x05" * (tuples.MAX_NESTING + 1) + b"\x02a\x00" + b"\x00" * (tuples.MAX_NESTING + 1),
        "escaped": b"\x01a\x00\xffb\x00\x02c\x00\xff",
        "unknown-code": b"\x01a\x00\x40",
    }.items():
        cases[f"unpack-{name}"] = (attempt(lambda raw=raw: tuples.unpack(raw)), (raw,))
    TUPLE_CASES.update(cases)


_tuple_cases()


@pytest.mark.parametrize("name", list(TUPLE_CASES))
def test_tuples_accel_holds_nothing(name: str) -> None:
    call, inputs = TUPLE_CASES[name]
    check(call, *inputs)


# -- keyspace.schemes._layouts_accel: transforms, chunks; keyspace._bincode_accel ---


def _refuse(key: Any, stored: bytes, lo: bytes, hi: bytes) -> None:
    raise keyspace.errors.InvalidKey(f"{key!r} is reserved")


def _transform_cases() -> dict[str, tuple[Callable[[], Any], tuple[Any, ...]]]:
    tup = TupleScheme().layout(("p",))
    hexed = AsciiHex().layout(("p",))
    framed = ScopeHash().layout(("p",))
    assert tup.accelerated and hexed.accelerated and framed.accelerated
    int_stored = tup.route(keyspace.codecs.resolve_codec("bincode:u32"), False, False)[0]
    reserved = tup.stored.with_reserved(((b"", b"\xff"),), _refuse)
    key, text, composite, lone = b"k\x00ey", "é\x00", ("a", 1), "\ud800"
    good = [(tup.stored(b"a\x00b"), b"1"), (tup.stored("s"), b"2")]
    mixed = [*good, (tup.stored(("x", 2)), b"3")]
    corrupt = [(tup.prefix + b"\x01a\x00\x00", b"1")]
    children = [(hexed.stored(b"ab"), b"1"), (hexed.prefix + b"61\x00x", b"2")]
    bad_len = [(framed.prefix + (9).to_bytes(8, "little") + b"ab", b"1")]
    return {
        "stored-bytes": (lambda: tup.stored(key), (key,)),
        "stored-str": (lambda: tup.stored(text), (text,)),
        "stored-fallback": (lambda: tup.stored(composite), (composite,)),
        "stored-error": (attempt(lambda: tup.stored(lone)), (lone,)),
        "stored-hex": (lambda: hexed.stored(key), (key,)),
        "stored-u64len": (lambda: framed.stored(key), (key,)),
        "stored-codec-int": (lambda: int_stored(70000), ()),
        "stored-codec-error": (attempt(lambda: int_stored(-1)), ()),
        "stored-reserved": (attempt(lambda: reserved(key)), (key, reserved)),
        "chunk": (lambda: tup.decode_chunk(good), (good, *good)),
        "chunk-handed-over": (lambda: tup.decode_chunk(mixed), (mixed, *mixed)),
        "chunk-error": (attempt(lambda: tup.decode_chunk(corrupt)), (corrupt, *corrupt)),
        "chunk-children": (lambda: hexed.decode_chunk(children), (children, *children)),
        "chunk-bad-length": (attempt(lambda: framed.decode_chunk(bad_len)), (bad_len, *bad_len)),
    }


@pytest.mark.parametrize("name", list(_transform_cases()))
def test_scope_accel_transforms_hold_nothing(name: str) -> None:
    call, inputs = _transform_cases()[name]
    check(call, *inputs)


def test_len_text_holds_nothing() -> None:
    assert type(bincode.STRING.encode) is _bincode_accel.LenText
    enc, dec = bincode.STRING.encode, bincode.STRING.decode
    text, wide, raw = "text", "wïde", enc("text")
    short, wrong, bad = b"\x01", (5).to_bytes(8, "little") + b"ab", (1).to_bytes(8, "little") + b"\xff"
    check(lambda: dec(enc(text)), text, raw)
    check(lambda: enc(wide), wide)
    for value in (short, wrong, bad, 5):
        check(attempt(lambda value=value: dec(value)), value)


# -- keyspace._scope_accel: the point operations of ScopeFields ----------------------


def test_point_operations_hold_nothing() -> None:
    ks = keyspace.open("memory:")
    scope = ks.scope("t")
    typed = ks.scope("j", key="json", value="json")
    scope[b"k"] = b"v"
    typed[[1, "a"]] = {"x": 1}
    key, missing, composite, value = b"k", b"missing", ("a", 1), b"v"
    default, not_bytes, json_key, json_value = object(), bytearray(b"v"), [1, "a"], {"x": 1}
    check(lambda: scope[key], key)
    check(attempt(lambda: scope[missing]), missing)
    check(attempt(lambda: scope[composite]), composite)
    check(lambda: scope.get(missing, default), missing, default)
    check(lambda: scope.__setitem__(key, value), key, value)
    check(attempt(lambda: scope.__setitem__(key, not_bytes)), key, not_bytes)
    check(lambda: typed[json_key], json_key)
    check(lambda: typed.__setitem__(json_key, json_value), json_key, json_value)
    check(attempt(lambda: typed[object()]))
    check(lambda: (scope.__setitem__(key, value), scope.__delitem__(key)), key, value)
    check(attempt(lambda: scope.__delitem__(missing)), missing)
    check(lambda: scope._copy())
    with ks.snapshot() as snap:
        view = snap.view
        check(lambda: scope._rebound(view), view)
    check(attempt(lambda: scope._rebound(object())))  # no get: refused, nothing held
    ks.close()
    check(attempt(lambda: scope[key]), key)  # the closed store's error


# -- keyspace.schemes._layouts_accel: Scheme.encode ---------------------------------


class _GeneralTuple(TupleScheme):
    """The tuple scheme on the general layout, whose ``stored`` is a Python function."""

    def layout(self, path: Any, *, accelerate: bool = True) -> Any:
        from keyspace.schemes._layouts import Layout

        return Layout(self, path, accelerate=accelerate)


def test_scheme_encode_holds_nothing() -> None:
    scheme, general, refusing = TupleScheme(), _GeneralTuple(), keyspace.schemes.Naive()
    assert type(keyspace.schemes.Scheme.__dict__["encode"]).__name__ == "MemoEncode"
    path, key = ("a", b"b"), b"k\x00"
    other, unhashable, odd = (memoryview(b"a"),), (["a"],), ("a", 1)
    scheme.encode(path, key)
    general.encode(path, key)
    check(lambda: scheme.encode(path, key), path, key)  # from the memo
    check(lambda: scheme.encode(tuple(list(path)), key), path, key)  # an equal path
    check(lambda: general.encode(path, key), path, key)  # a Python stored
    check(lambda: scheme.encode(odd, key), odd, key)  # not memoised: _encode_new each time
    check(attempt(lambda: scheme.encode(other, key)), other, key)  # refused by _encode_new
    check(attempt(lambda: scheme.encode(unhashable, key)), unhashable, key)
    check(attempt(lambda: scheme.encode(path, bytearray(b"k"))), path)  # the layout's error
    check(attempt(lambda: refusing.encode(path, key)), path, key)  # refused, no memo
    check(lambda: scheme.encode(path=path, key=key), path, key)  # the Python method


def test_length_prefixed_decode_holds_nothing() -> None:
    scheme = LengthPrefixed()
    assert type(LengthPrefixed.__dict__["decode"]).__name__ == "LPDecode"
    stored = scheme.encode((b"tenant", b"users"), b"k")
    short, negative = stored[:5], -1
    check(lambda: scheme.decode(stored, 2), stored)  # in C
    check(lambda: scheme.decode(stored, depth=2), stored)  # the Python method
    check(attempt(lambda: scheme.decode(short, 2)), short)  # the reference names the fault
    check(attempt(lambda: scheme.decode(stored, negative)), stored)
    check(attempt(lambda: scheme.decode(stored, 10**30)), stored)


def test_stored_pairs_holds_nothing() -> None:
    stored = keyspace.open("memory:").scope("t")._stored  # type: ignore[attr-defined]
    key, value = b"k\x00", b"v"
    pairs, as_dict = [(key, value)] * 3, {key: value}
    other, refused = [(key, bytearray(b"v"))], [(key, value), ("text", value)]
    check(lambda: stored.stored_pairs(pairs), key, value)
    check(lambda: stored.stored_pairs(as_dict), key, value)
    check(lambda: stored.stored_pairs(other), key)  # NotImplemented
    check(attempt(lambda: stored.stored_pairs(refused)), key, value)  # the key's error


def test_path_memo_holds_nothing() -> None:
    kept, made = ("a", b"b"), object()

    class Holder:
        def __init__(self) -> None:
            self.memo = {kept: made}

    Holder.get = _scope_accel.path_memo("memo", lambda self, *path, **kw: (path, kw))  # type: ignore[attr-defined]
    holder: Any = Holder()
    hoisted = holder.get

    class _BadHash:
        def __hash__(self) -> int:
            raise ValueError("no hash")

    bad, equal, unhashable = (_BadHash(),), (True,), (["a"],)
    check(lambda: holder.get("a", b"b"), made, holder, *kept)  # kept
    check(lambda: hoisted("a", b"b"), made, holder, *kept)  # through a bound method
    check(lambda: holder.get("x"), made, holder)  # not kept: the fallback
    check(lambda: holder.get(*equal), made)  # an equal path of another type
    check(lambda: holder.get(*unhashable), unhashable)
    check(lambda: holder.get(*bad), bad)  # the lookup raised: the fallback
    check(lambda: holder.get("a", b"b", key="str"), made)  # keywords: the fallback
    bare: Any = Holder()
    del bare.memo
    check(lambda: bare.get("a"), bare)  # no memo: the fallback


def test_hex_child_step_holds_nothing() -> None:
    scheme = AsciiHex()
    step = scheme.child_step(("t",))
    assert type(step).__name__ == "HexChild"
    child, own, odd = (
        scheme.encode(("t", "u1"), b"k"),
        scheme.encode(("t",), b"k"),
        scheme.prefix(("t",)) + b"6\x00",
    )
    check(lambda: step(child), child)  # in C
    check(lambda: step(own), own)  # an own key: the reference
    check(lambda: step(odd), odd)  # an odd part: the reference


def test_sep_child_step_holds_nothing() -> None:
    scheme = keyspace.schemes.Sublevel()
    step = scheme.child_step(("t",))
    assert type(step).__name__ == "SepChild"
    child, own, deep = b"!t!!u1!k", b"!t!k", b"!t!!u1!!deep!k"
    check(lambda: step(child), child)  # in C
    check(lambda: step(own), own)  # an own key: the reference
    check(lambda: step(deep), deep)  # a deeper scope's key: in C


# -- keyspace.stores._gate_accel ----------------------------------------------------


class _Translated(Exception):
    pass


def _failing() -> Iterator[int]:
    yield 1
    raise KeyError("engine")


def test_gate_holds_nothing() -> None:
    gate = _gate_accel.Gate()
    fn, arg = (lambda x, y=0: x), object()
    guarded = gate.guard(fn)
    items = [1, 2, 3]

    def translate(exc: BaseException) -> BaseException:
        return _Translated(str(exc))

    check(lambda: guarded(arg, y=1), fn, arg, guarded)
    counted = gate.guard(int, lambda exc, key: _Translated(str(exc)))  # a call and its translation
    check(lambda: counted("7"), counted)
    check(attempt(lambda: counted("not a number")), counted)
    check(lambda: gate.run(fn, arg, y=2), fn, arg)
    check(lambda: list(gate.guard_iter(items, translate)), items, translate)
    check(lambda: list(gate.guard_chain([items, items])), items)
    check(attempt(lambda: list(gate.guard_iter(_failing(), translate))), translate)
    check(attempt(lambda: list(gate.guard_iter(_failing()))))
    check(attempt(lambda: gate.run(int, "not a number")))
    gate.close()
    check(attempt(lambda: guarded(arg)), arg, guarded)
    check(attempt(lambda: next(gate.guard_iter(items, translate))), items, translate)


# -- keyspace.stores._gate_accel.translated and keyspace._put_route_accel.PutRoute's split --


def test_translated_calls_and_split_puts_hold_nothing() -> None:
    from keyspace.errors import StoreClosed, StoreError

    key, value = b"k", b"v"

    def answer(k: bytes, v: bytes = b"") -> bytes:
        return k

    def fail(k: bytes) -> None:
        raise KeyError("engine")  # a new error each time: one raised again keeps its traceback

    def closed(k: bytes) -> None:
        raise StoreClosed("ended")

    def translate(exc: BaseException, k: Any) -> StoreError:
        return StoreError(f"{exc} at {k!r}")

    call = _gate_accel.translated(answer, translate)
    check(lambda: call(key, v=value), key, value, call, answer)
    check(attempt(lambda: _gate_accel.translated(fail, translate)(key)), key, translate)
    check(attempt(lambda: _gate_accel.translated(closed, translate)(key)), key, translate)
    check(attempt(lambda: _gate_accel.translated(fail, lambda e, k: e)(key)), key)
    check(attempt(lambda: _gate_accel.translated(fail, lambda e, k: 1)(key)), key)
    seen: set[int] = set()

    def below(k: bytes, v: bytes) -> None:
        seen.add(1)

    def rest(k: bytes, v: bytes) -> None:
        seen.add(2)

    split = _put_route_accel.PutRoute(below, {}, {}, bound=b"\xff", rest=rest, keeps=False)
    check(lambda: (split(key, value), split(b"\xff\x01", value)), key, value, split)
    check(attempt(lambda: split("not bytes", value)), value, split)
    assert seen == {1, 2}

    def ended(k: bytes, v: bytes) -> None:
        raise StoreClosed("ended")

    def end_and_put() -> None:
        made = _put_route_accel.PutRoute(below, {}, {}, False, bound=b"\xff", rest=rest)
        made(key, value)
        made.end(ended)
        with contextlib.suppress(StoreClosed):
            made(key, value)

    check(end_and_put, key, value, below, rest, ended)


# -- keyspace.stores._pairs_accel ---------------------------------------------------


def test_pair_log_and_key_sizes_hold_nothing() -> None:
    key, value, keys, values = b"k", b"v", [b"a", b"b"], [b"1", b"2"]

    def log_and_take() -> None:
        log = _pairs_accel.PairLog()
        log(key, value)
        log.extend(keys, values)
        log.take()
        log(key, value)
        log.close()
        log.take()

    check(log_and_take, key, value, keys, values)
    log = _pairs_accel.PairLog()
    check(attempt(lambda: log(key, "not bytes")), key)
    check(attempt(lambda: log.extend(keys, [b"1"])), keys)
    log.close()
    check(attempt(lambda: log(key, value)), key, value)
    batch, pairs, unsized = [b"a", b"", b"abc"], [(b"a", b"1"), (b"abcdef", b"2")], [b"a", 5]
    check(lambda: _pairs_accel.first_bad_key(batch, 2, False), batch)
    check(lambda: _pairs_accel.first_bad_key(pairs, 3, True), pairs)
    check(attempt(lambda: _pairs_accel.first_bad_key(unsized, None, True)), unsized)


def test_the_check_sees_a_leak() -> None:
    held: list[Any] = []
    target = object()
    with pytest.raises(AssertionError, match="bytes more"):
        check(lambda: held.append(object()))
    held.clear()
    with pytest.raises(AssertionError):
        check(lambda: held.append(target), target)


def test_take_until_holds_nothing() -> None:
    pairs = [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]
    keys, bound, odd = [b"c", b"b", b"a"], b"b", [(1, b"x"), (2, b"y")]
    check(lambda: _pairs_accel.take_until(iter(pairs), bound, 10, False), bound, *pairs)
    check(lambda: _pairs_accel.take_until(iter(keys), bound, 10, True), bound, *keys)
    check(lambda: _pairs_accel.take_until(iter(pairs), None, 2, False), *pairs)
    check(attempt(lambda: _pairs_accel.take_until(iter(odd), bound, 10, False)), bound, *odd)

    def failing() -> Iterator[bytes]:
        yield b"a"
        raise ValueError("the engine failed")

    check(attempt(lambda: _pairs_accel.take_until(failing(), bound, 10, False)), bound)

    def is_record(key: bytes, value: bytes) -> bool:
        return key == b"b"

    def fresh() -> Iterator[tuple[bytes, bytes]]:  # pairs no one else holds: cut in place
        for key, value in pairs:
            yield (bytes(key), value)

    check(lambda: _pairs_accel.take_until(iter(pairs), bound, 10, False, 0, is_record, 1), bound, *pairs)
    check(lambda: _pairs_accel.take_until(fresh(), None, 10, False, 1, is_record, 1), *pairs)
    check(attempt(lambda: _pairs_accel.take_until(iter(pairs), None, 10, False, 2)), *pairs)


def test_cursor_take_holds_nothing(tmp_path: Path) -> None:
    env = lmdb.open(str(tmp_path / "db"), map_size=1 << 20)
    start, stop = b"k-" + bytes(range(30)), b"z-" + bytes(range(30))
    with env.begin(write=True) as txn:
        txn.put(start + b"1", b"v")
    with env.begin() as txn:
        check(lambda: _pairs_accel.cursor_take(txn, None, start, stop, 10, False), start, stop)
        check(lambda: _pairs_accel.cursor_take(txn, None, start, stop, 10, True), start, stop)
        check(attempt(lambda: _pairs_accel.cursor_take(txn, None, "no", stop, 10, False)), stop)
        check(
            lambda: _pairs_accel.cursor_take(txn, None, start, stop, 10, False, 2, lambda k, v: True, 1),
            start,
        )
    env.close()


def test_point_read_holds_nothing(tmp_path: Path) -> None:
    from keyspace.stores import LMDBStore

    store = LMDBStore(tmp_path / "db", max_dbs=1)
    store.put(b"k", b"v")
    with LMDBStore(tmp_path / "db", db="named") as named:
        named.put(b"x", b"y")
    try:
        read, key, missing, record = store.get, b"k", b"missing", b"named"
        assert read(record) is None  # the answer about the record is remembered once, with its key
        check(lambda: read(key), read, key)
        check(lambda: read(missing), read, missing)
        check(lambda: read(record), read, record)
        failing = _pairs_accel.PointRead(store._env.begin, store._shared, None, 48, store.get, KeyError)
        check(attempt(lambda: failing(1)), failing)  # py-lmdb's TypeError: no slow route
        holds = read.checked(lambda txn: txn.get(b"k") == b"v", store.get)
        fails = read.checked(lambda txn: txn.get(b"k") == b"other", store.get)  # the slow route
        check(lambda: holds(key), holds, key)
        check(lambda: fails(key), fails, key)
    finally:
        store.close()
    check(attempt(lambda: read(key)), read, key)  # closed: the slow route raises StoreClosed


def test_page_bytes_holds_nothing() -> None:
    pairs = [(b"p/a", b"1"), (b"p/b", b"2")]
    check(lambda: _pairs_accel.page_bytes(pairs), *pairs)
    check(attempt(lambda: _pairs_accel.page_bytes([(b"p/a", b"1", b"x")])))
    check(attempt(lambda: _pairs_accel.page_bytes([(b"p/a", 5)])))


def test_cut_keys_holds_nothing() -> None:
    pairs = [(b"p/a", b"1"), (b"p/b", b"2")]
    check(lambda: _pairs_accel.cut_keys(pairs, 2), *pairs)
    check(attempt(lambda: _pairs_accel.cut_keys(pairs, 4)), *pairs)
    check(attempt(lambda: _pairs_accel.cut_keys([(b"p/a", b"1", b"x")], 1)))


def _short_scan_cases(c_short: Any, plan: tuple[Any, ...]) -> None:
    held = [x for x in plan if x is not None]  # None's count moves with everything
    start, stop = b"k05", b"k20"
    check(lambda: c_short(*plan, start, stop, True, True, False, 10, None), start, stop, *held)
    check(lambda: c_short(*plan, start, None, False, False, True, 10, None), start, *held)
    check(lambda: c_short(*plan, b"zz", None, True, False, False, 10, None), *held)  # none: touched
    check(attempt(lambda: c_short(*plan, 5, None, True, False, False, 10, None)), *held)  # a refused key
    check(attempt(lambda: c_short(*plan, start, None, True, False, "no", 10, None)), start, *held)


def test_the_short_scan_holds_nothing(tmp_path: Path) -> None:
    from keyspace._scan_plan import short_py
    from keyspace._scan_plan_accel import Short

    c_short = Short(short_py)
    ks = keyspace.open(f"lmdb://{tmp_path}", scheme="length-prefixed")
    made = ks.scope(b"t", b"users")
    for i in range(30):
        made[b"k%02d" % i] = b"v"
    made.get(b"k00")
    _short_scan_cases(c_short, made._plan())
    with ks.snapshot() as snap:
        inner = snap.scope(b"t", b"users")
        inner.get(b"k00")
        _short_scan_cases(c_short, inner._plan())
    ks.close()
    # a layout whose ranges hold a child's keys too: the reads that filter them
    hexed = keyspace.open(f"lmdb://{tmp_path / 'hex'}", scheme="asciihex")
    own = hexed.scope(b"t", b"users")
    own.update({b"k%02d" % i: b"v" for i in range(30)})
    hexed.scope(b"t", b"users", b"k").update({b"c%02d" % i: b"c" for i in range(30)})
    own.get(b"k00")
    _short_scan_cases(c_short, own._plan())
    hexed.close()
