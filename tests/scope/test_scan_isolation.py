"""Every read and removal of one scope, with every range argument, against its
neighbours: on memory, LMDB and LevelDB, for every scheme that keeps scopes apart.

One target scope sits among neighbours chosen to sit next to it in stored order:
its parent and a child (where the scheme nests), a sibling whose name extends the
target's (``a``/``ab``), siblings whose names end in ``00`` or sort just past the
target's own range (``a;`` under ``:``), the same name as bytes and as text (tuple).
Hypothesis fills them with keys drawn from the bytes that matter (``00``, ``01``,
``!``, ``:``, ``;``, ``ff``), then reads the target with drawn ``start``/``stop``/
``include_*``/``reverse``/``limit``/``prefix`` through ``items``, ``keys`` and
``values``, and the point reads (``get``, ``in``, ``[]``) with every neighbour's
keys; each answer must be the model's, computed from the target's keys alone in
the order the scheme's format defines. A drawn removal (``clear_range``, ``pop``,
``popitem``, ``discard``, ``setdefault``) then must leave every neighbour as it was
and the target as the model says, and the raw store must have lost exactly the
target's removed keys.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.errors import InvalidArgument, InvalidName
from keyspace.schemes import AsciiHex, Delimited, LengthPrefixed, Scheme, ScopeHash, Sublevel, TupleScheme
from keyspace.stores import open_store

ALPHABET = [0x00, 0x01, 0x21, 0x3A, 0x3B, 0x61, 0x62, 0xFF]
KEYS = st.binary(max_size=3).map(lambda b: bytes(ALPHABET[x % len(ALPHABET)] for x in b))


def _raw_order(key: bytes) -> bytes:
    return key


def _len_first(key: bytes) -> bytes:
    """ScopeHash stores ``u64le(len key) key``: its scopes are in that order."""
    return struct.pack("<Q", len(key)) + key


@dataclass(frozen=True)
class Case:
    id: str
    make: Callable[[], Scheme]
    target: tuple[Any, ...]
    neighbours: tuple[tuple[Any, ...], ...]
    order: Callable[[bytes], bytes] = _raw_order
    prefix_is_element: bool = False  # tuple scheme: a prefix is a leading key element
    bad_key: Callable[[bytes], bool] = lambda key: False


CASES = [
    Case(
        "tuple",
        TupleScheme,
        ("t", "a"),
        (("t",), ("t", "a", "c"), ("t", "ab"), ("t", "a\x00"), ("t", b"a"), ("t", "`")),
        prefix_is_element=True,
    ),
    Case(
        "asciihex", AsciiHex, ("t", "a"), (("t",), ("t", "a", "c"), ("t", "ab"), ("t", "a\x00"), ("t", "`"))
    ),
    Case(
        "sublevel",
        Sublevel,
        ("t", "a"),
        (("t",), ("t", "a", "c"), ("t", "ab"), ("t", "`"), ("t", "a#")),
        bad_key=lambda key: key.startswith(b"!"),
    ),
    Case("scopehash", ScopeHash, ("a",), ((), ("ab",), ("b",)), order=_len_first),
    Case("delimited-colon", lambda: Delimited(":"), ("a",), (("ab",), ("",), ("a;",), ("a\x00",))),
    Case("delimited-nul", lambda: Delimited("\x00"), ("a",), (("ab",), ("",), ("a\x01",), ("a:",))),
    Case(
        "length-prefixed",
        LengthPrefixed,
        (b"t", b"a"),
        ((b"t", b"ab"), (b"t", b""), (b"u", b"a"), (b"t\x00", b"a"), (b"t", b"a\x00")),
    ),
]
STORES = {"memory": "memory:", "lmdb": "lmdb://{}", "leveldb": "leveldb://{}"}


def _expected(
    case: Case, model: dict[bytes, bytes], start: bytes | None, stop: bytes | None, args: dict[str, Any]
) -> list[tuple[bytes, bytes]]:
    order = case.order
    keys = sorted(model, key=order)
    prefix = args.get("prefix")
    if prefix is not None:
        keys = [k for k in keys if (k == prefix if case.prefix_is_element else k.startswith(prefix))]
    if start is not None:
        keys = [k for k in keys if order(k) > order(start) or (args["include_start"] and k == start)]
    if stop is not None:
        keys = [k for k in keys if order(k) < order(stop) or (args["include_stop"] and k == stop)]
    if args["reverse"]:
        keys.reverse()
    if args["limit"] is not None:
        keys = keys[: max(args["limit"], 0)]
    return [(k, model[k]) for k in keys]


ranges = st.fixed_dictionaries(
    {
        "start": st.none() | KEYS,
        "stop": st.none() | KEYS,
        "include_start": st.booleans(),
        "include_stop": st.booleans(),
        "reverse": st.booleans(),
        "limit": st.none() | st.integers(-1, 5) | st.just(2000),
        "prefix": st.none() | KEYS,
    }
)
removals = st.one_of(
    st.tuples(st.just("clear_range"), ranges),
    st.tuples(st.sampled_from(["pop", "discard", "setdefault"]), KEYS),
    st.tuples(st.just("popitem"), st.none()),
)


def apply_removal(
    case: Case,
    target: Any,
    own: dict[bytes, bytes],
    removal: tuple[str, Any],
    bad_bound: Callable[[bytes], bool],
    bad_key: Callable[[bytes], bool],
) -> set[bytes]:
    """Apply a drawn removal to ``target`` and return the keys of ``own`` it must
    have removed (``setdefault`` adds its key to ``own``). A bound or key the scope
    cannot take must raise :class:`InvalidName`, removing nothing."""
    kind, arg = removal
    if kind == "clear_range":
        r = dict(arg)
        prefix = r["prefix"]
        start, stop = (None, None) if prefix is not None else (r["start"], r["stop"])
        if any(b is not None and bad_bound(b) for b in (start, stop, prefix)):
            with pytest.raises(InvalidName):
                target.clear_range(start, stop, prefix=prefix)
            return set()
        target.clear_range(
            start, stop, include_start=r["include_start"], include_stop=r["include_stop"], prefix=prefix
        )
        cut = {**r, "reverse": False, "limit": None, "prefix": prefix}
        return {k for k, _ in _expected(case, own, start, stop, cut)}
    if kind == "popitem":
        if not own:
            with pytest.raises(KeyError):
                target.popitem()
            return set()
        key, value = target.popitem()
        assert key == max(own, key=case.order) and value == own[key]
        return {key}
    if bad_key(arg):
        with pytest.raises(InvalidName):
            getattr(target, kind)(arg, *((b"d",) if kind != "discard" else ()))
        return set()
    if kind == "pop":
        assert target.pop(arg, b"missing") == own.get(arg, b"missing")
        return {arg} & set(own)
    if kind == "discard":
        target.discard(arg)
        return {arg} & set(own)
    assert target.setdefault(arg, b"new") == own.get(arg, b"new")  # adds to the target only
    own.setdefault(arg, b"new")
    return set()


@pytest.mark.parametrize("engine", list(STORES))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_a_scope_reads_and_removes_only_its_own_keys(case: Case, engine: str, tmp_path: Path) -> None:
    store = open_store(STORES[engine].format(tmp_path))
    runs = iter(range(10**6))

    @settings(max_examples=30 if engine == "memory" else 10)
    @given(
        data=st.lists(st.tuples(st.integers(0, len(case.neighbours)), KEYS), max_size=24),
        reads=st.lists(ranges, min_size=1, max_size=4),
        removal=removals,
    )
    def check(data: list[tuple[int, bytes]], reads: list[dict[str, Any]], removal: tuple[str, Any]) -> None:
        store.delete_range(b"", None)
        ks = keyspace.attach(store, scheme=case.make(), close_store=False)
        paths = (case.target, *case.neighbours)
        models: dict[tuple[Any, ...], dict[bytes, bytes]] = {p: {} for p in paths}
        for i, key in data:
            value = b"v%d" % next(runs)
            scope = ks.scope(*paths[i])
            if case.bad_key(key):
                with pytest.raises(InvalidName):
                    scope[key] = value
                continue
            scope[key] = value
            models[paths[i]][key] = value
        target = ks.scope(*case.target)
        own = models[case.target]
        others = {k for p in case.neighbours for k in models[p]} - set(own)

        # point reads: a neighbour's key is never the target's
        for key in sorted(others):
            assert target.get(key) is None and key not in target
            with pytest.raises(KeyError):
                target[key]
        assert len(target) == len(own) and bool(target) == bool(own)
        assert dict(target.items()) == own
        for args in reads:
            args = dict(args)
            start, stop, prefix = args.pop("start"), args.pop("stop"), args.pop("prefix")
            if prefix is not None:
                start = stop = None
            bad = [b for b in (start, stop, prefix) if b is not None and case.bad_key(b)]
            want = _expected(case, own, start, stop, {**args, "prefix": prefix})
            for view, pick in (
                ("items", lambda kv: kv),
                ("keys", lambda kv: kv[0]),
                ("values", lambda kv: kv[1]),
            ):
                call = getattr(target, view)
                if prefix is None:
                    read = lambda: list(call(start, stop, **args))  # noqa: B023, E731
                else:
                    read = lambda: list(call(prefix=prefix, **args))  # noqa: B023, E731
                if bad:
                    with pytest.raises(InvalidName):
                        read()
                    continue
                if args["limit"] is not None and args["limit"] < 0:  # refused by name, never read as none
                    with pytest.raises(InvalidArgument, match="limit must be 0 or more"):
                        read()
                    continue
                assert read() == [pick(kv) for kv in want], (view, start, stop, prefix, args)

        # one removal on the target
        before_raw = list(store.scan(b"", None))
        kind, arg = removal
        own_before = dict(own)
        removed = apply_removal(case, target, own, removal, case.bad_key, case.bad_key)
        for key in removed:
            del own[key]
        assert dict(target.items()) == own
        for path in case.neighbours:
            assert dict(ks.scope(*path).items()) == models[path], path
        after_raw = list(store.scan(b"", None))
        # values are unique: what left the store is the target's removed values, what
        # came is setdefault's value (and, on a first write, the keyspace's records:
        # a scheme record, a registered name, a leaf, none of them b"v..." or b"new")
        gone = sorted(v for _, v in set(before_raw) - set(after_raw))
        assert gone == sorted(own_before[k] for k in removed)
        came = [v for _, v in set(after_raw) - set(before_raw) if v == b"new" or v.startswith(b"v")]
        assert came == (
            [b"new"] if kind == "setdefault" and arg not in own_before and not case.bad_key(arg) else []
        )

    try:
        check()
    finally:
        store.close()
