"""The C put route of a hooked transaction (``keyspace._put_route_accel.PutRoute``)
against its pure-Python reference (``PythonPutRoute``). Made with a bound and a
rest (the transaction's put), it hands each key where the reference does, keeps
only what it routes (nothing with ``keeps=False``), and once ended hands every
put to its end. The route: for any sequence of puts,
settles and cleared summaries both call
the engine's replace alike and leave the same dicts (values before, values
after, in the order first written), the same summary, count and columns; an
engine error passes through with nothing recorded; the C type holds no
reference after its calls."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from _leaks import holds_nothing
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace import _put_route
from keyspace._put_route import PythonPutRoute

ROUTES: list[Any] = (
    [PythonPutRoute] if _put_route.PutRoute is PythonPutRoute else [_put_route.PutRoute, PythonPutRoute]
)


class Engine:
    """A dict with a replace that answers the value it replaced, and a log of its calls."""

    def __init__(self, before: dict[bytes, bytes]) -> None:
        self.data = dict(before)
        self.calls: list[tuple[bytes, bytes]] = []

    def replace(self, key: bytes, value: bytes) -> bytes | None:
        if key == b"bad":
            raise ValueError("the engine refuses b'bad'")
        self.calls.append((key, value))
        before = self.data.get(key)
        self.data[key] = value
        return before


_keys = st.sampled_from([b"a", b"ab", b"b", b"\x00", b"zz", b"m\xff", b"bad"])
_ops = st.lists(
    st.one_of(
        st.tuples(st.just("put"), _keys, st.binary(max_size=6)),
        st.tuples(st.just("settle")),
        st.tuples(st.just("inexact")),
    ),
    max_size=40,
)


def _run(route_type: Any, before: dict[bytes, bytes], ops: list[tuple[Any, ...]]) -> dict[str, Any]:
    engine = Engine(before)
    old: dict[bytes, Any] = {}
    merged: dict[bytes, Any] = {}
    route = route_type(engine.replace, old, merged)
    refused = 0
    seen = []
    for op in ops:
        if op[0] == "put":
            try:
                route(op[1], op[2])
            except ValueError:
                refused += 1
        elif op[0] == "settle":
            route.settle()
        else:
            route.exact = False
        seen.append((route.summary(), route.low, route.high, route.exact, route.puts, route.columns()))
    route.settle()
    return {
        "calls": engine.calls,
        "old": list(old.items()),
        "merged": list(merged.items()),
        "seen": seen,
        "refused": refused,
    }


@settings(max_examples=300, deadline=None)
@given(before=st.dictionaries(_keys.filter(lambda k: k != b"bad"), st.binary(max_size=4)), ops=_ops)
def test_the_routes_agree_with_each_other_and_with_a_model(
    before: dict[bytes, bytes], ops: list[tuple[Any, ...]]
) -> None:
    got = [_run(route_type, before, ops) for route_type in ROUTES]
    assert all(g == got[0] for g in got)
    result = got[0]
    puts = [(op[1], op[2]) for op in ops if op[0] == "put" and op[1] != b"bad"]
    assert result["calls"] == puts
    assert result["refused"] == sum(1 for op in ops if op[0] == "put" and op[1] == b"bad")
    # the model: values before the first put of each key, values after its last, first written first
    expected_old: dict[bytes, Any] = {}
    expected_merged: dict[bytes, Any] = {}
    engine = dict(before)
    unsettled: list[tuple[bytes, bytes, Any]] = []
    for op in [*ops, ("settle",)]:
        if op[0] == "put" and op[1] != b"bad":
            unsettled.append((op[1], op[2], engine.get(op[1])))
            engine[op[1]] = op[2]
        elif op[0] == "settle":
            for key, value, was in unsettled:
                expected_old.setdefault(key, was)
                expected_merged[key] = value
            unsettled.clear()
    assert result["old"] == list(expected_old.items())
    assert result["merged"] == list(expected_merged.items())
    assert [s[4] for s in result["seen"]] == [
        sum(1 for o in ops[: i + 1] if o[0] == "put" and o[1] != b"bad") for i in range(len(ops))
    ]
    summary = result["seen"][-1][0] if result["seen"] else None
    if ops and all(op[0] == "put" for op in ops):  # nothing settled: the columns are the puts made
        assert result["seen"][-1][5] == ([k for k, _ in puts], [v for _, v in puts])
    if puts and all(op[0] != "inexact" for op in ops):
        after = {**before, **expected_merged}
        keys = len(after) - len(before)
        size = sum(len(k) + len(v) for k, v in after.items())
        size -= sum(len(k) + len(v) for k, v in before.items())
        assert summary == (min(k for k, _ in puts), max(k for k, _ in puts), keys, size)
    else:
        assert summary is None


@settings(max_examples=200, deadline=None)
@given(before=st.dictionaries(_keys.filter(lambda k: k != b"bad"), st.binary(max_size=4)), ops=_ops)
def test_a_route_that_knows_no_values_before_keeps_the_puts_alone(
    before: dict[bytes, bytes], ops: list[tuple[Any, ...]]
) -> None:
    """With ``knows_old=False`` over a plain put (py-lmdb's answers ``True``): the
    puts reach the engine in order, ``merged`` and the columns are as with a
    replace, ``old`` is never touched and there is no summary."""
    got = []
    for route_type in ROUTES:
        engine = Engine(before)
        old: dict[bytes, Any] = {}
        merged: dict[bytes, Any] = {}

        def put(key: bytes, value: bytes, engine: Engine = engine) -> bool:
            engine.replace(key, value)
            return True

        route = route_type(put, old, merged, knows_old=False)
        seen = []
        for op in ops:
            if op[0] == "put":
                with contextlib.suppress(ValueError):
                    route(op[1], op[2])
            elif op[0] == "settle":
                route.settle()
            else:
                route.exact = False
            seen.append((route.summary(), route.exact, route.puts, route.columns()))
        route.settle()
        assert route.knows_old is False
        got.append((engine.calls, engine.data, old, list(merged.items()), seen))
    assert all(g == got[0] for g in got)
    calls, data, old, merged, seen = got[0]
    puts = [(op[1], op[2]) for op in ops if op[0] == "put" and op[1] != b"bad"]
    assert calls == puts
    assert data == {**before, **dict(puts)}
    assert old == {}
    assert merged == list(dict(puts).items())
    assert all(summary is None for summary, *_ in seen)


@pytest.mark.parametrize("route_type", ROUTES, ids=lambda t: f"{t.__module__}.{t.__name__}")
def test_an_engine_error_passes_through_and_nothing_is_recorded(route_type: Any) -> None:
    engine = Engine({})
    old: dict[bytes, Any] = {}
    merged: dict[bytes, Any] = {}
    route = route_type(engine.replace, old, merged)
    route(b"k", b"v")
    with pytest.raises(ValueError, match="refuses"):
        route(b"bad", b"v")
    route.settle()
    assert (old, merged, route.summary()) == ({b"k": None}, {b"k": b"v"}, (b"k", b"k", 1, 2))


def test_the_c_route_is_the_one_used_where_built() -> None:
    try:
        from keyspace._put_route_accel import PutRoute
    except ImportError:  # pragma: no cover - built without a C compiler
        pytest.skip("keyspace._put_route_accel was not built")
    assert _put_route.PutRoute is PutRoute


@pytest.mark.skipif(_put_route.PutRoute is PythonPutRoute, reason="keyspace._put_route_accel was not built")
def test_the_c_route_holds_nothing_after_its_calls() -> None:
    key, value = b"key-" + bytes(range(40)), b"value-" + bytes(range(60))

    def one() -> None:
        engine = Engine({key: b"x"})
        old: dict[bytes, Any] = {}
        merged: dict[bytes, Any] = {}
        route = _put_route.PutRoute(engine.replace, old, merged)
        route(key, value)
        with contextlib.suppress(ValueError):
            route(b"bad", value)
        route.settle()
        route.summary()

    assert holds_nothing(one, key, value)


@pytest.mark.parametrize("kind", ROUTES, ids=lambda f: "Python" if f is PythonPutRoute else "C")
@pytest.mark.parametrize("keeps", [True, False])
@given(
    low=st.binary(max_size=3),
    keys=st.lists(
        st.one_of(st.binary(max_size=4), st.sampled_from([b"\xff", b"\xff\x00", b""])), max_size=20
    ),
)
def test_a_split_route_hands_each_key_where_the_reference_does(
    kind: Any, keeps: bool, low: bytes, keys: list[bytes]
) -> None:
    seen: list[tuple[str, bytes, bytes]] = []
    old: dict[bytes, Any] = {}
    merged: dict[bytes, Any] = {}

    def rest(k: bytes, v: bytes) -> str:
        seen.append(("rest", k, v))
        return "rest's answer"

    put = kind(
        lambda k, v: seen.append(("below", k, v)), old, merged, False, bound=low, rest=rest, keeps=keeps
    )
    answers = [put(key, b"v" + key) for key in keys]
    answers.append(put("not bytes", b"v"))  # no key of the store: rest decides
    expected = [("below" if key < low else "rest", key, b"v" + key) for key in keys]
    assert seen == [*expected, ("rest", "not bytes", b"v")]
    assert answers == [None if where == "below" else "rest's answer" for where, _, _ in seen]
    routed = [(k, v) for where, k, v in expected if where == "below"]
    put.settle()
    assert (put.puts, merged, old) == ((len(routed), dict(routed), {}) if keeps else (0, {}, {}))


@pytest.mark.parametrize("kind", ROUTES, ids=lambda f: "Python" if f is PythonPutRoute else "C")
def test_an_ended_route_hands_every_put_to_its_end_and_keeps_its_puts(kind: Any) -> None:
    seen: list[str] = []
    old: dict[bytes, Any] = {}
    merged: dict[bytes, Any] = {}
    put = kind(
        lambda k, v: seen.append("below"),
        old,
        merged,
        False,
        bound=b"\xff",
        rest=lambda k, v: seen.append("rest"),
    )
    put(b"a", b"1")

    def ended(key: bytes, value: bytes) -> None:
        raise KeyError(key)

    put.end(ended)
    for key in (b"a", b"\xff\x01"):
        with pytest.raises(KeyError):
            put(key, b"v")
    assert seen == ["below"]
    assert put.columns() == ([b"a"], [b"1"])
    with pytest.raises(TypeError):
        put.end(b"not callable")


@pytest.mark.parametrize("kind", ROUTES, ids=lambda f: "Python" if f is PythonPutRoute else "C")
@pytest.mark.parametrize(
    "arguments",
    [
        {"bound": b"\xff"},  # a bound without a rest
        {"rest": print},  # a rest without a bound
        {"bound": "not bytes", "rest": print},
        {"bound": b"\xff", "rest": b"not callable"},
    ],
)
def test_a_route_refuses_a_split_given_by_half(kind: Any, arguments: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        kind(lambda k, v: None, {}, {}, **arguments)
    with pytest.raises(TypeError):
        kind(b"not callable", {}, {})


@pytest.mark.parametrize("kind", ROUTES, ids=lambda f: "Python" if f is PythonPutRoute else "C")
@pytest.mark.parametrize("keeps", [True, False])
@given(
    low=st.binary(max_size=3),
    keys=st.lists(st.binary(max_size=4), max_size=20),
)
def test_a_route_into_a_dict_sets_the_keys_below_its_bound_in_it(
    kind: Any, keeps: bool, low: bytes, keys: list[bytes]
) -> None:
    """A hooked transaction whose puts wait for the commit splits them into its
    dict of pending puts: the dict itself, its items set by the route."""
    pending: dict[bytes, bytes] = {b"there": b"before"}
    rest: list[bytes] = []
    put = kind(pending, {}, {}, False, bound=low, rest=lambda k, v: rest.append(k), keeps=keeps)
    for key in keys:
        assert put(key, b"v" + key) is None
    below = [key for key in keys if key < low]
    assert pending == {b"there": b"before", **{key: b"v" + key for key in below}}
    assert rest == [key for key in keys if key >= low]
    assert put.columns() == ((below, [b"v" + key for key in below]) if keeps else ([], []))


@pytest.mark.parametrize("kind", ROUTES, ids=lambda f: "Python" if f is PythonPutRoute else "C")
def test_a_route_into_a_dict_knows_no_values_before(kind: Any) -> None:
    with pytest.raises(TypeError, match="knows_old=False"):
        kind({}, {}, {})
    with pytest.raises(TypeError):  # a dict of another type: its own item set may differ
        kind(type("Pending", (dict,), {})(), {}, {}, False)
