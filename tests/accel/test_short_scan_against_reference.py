"""The C short scan of the scan plan (``keyspace._scan_plan_accel.Short``) against
its pure-Python reference (``keyspace._scan_plan.short_py``), on real scopes of
every scheme on the memory store, LMDB and LevelDB, outside and inside
transactions: for every start, stop, flag, limit and prefix (those the C route
takes and those it leaves to the reference: bad flags, limits of the wrong
type, 0, negative or past 1024, keys the scope refuses) the same items, or the
same error, and a view that ended raises for both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace
from keyspace._scan_plan import short_py

try:
    from keyspace._scan_plan_accel import Short
except ImportError:  # pragma: no cover - built without a C compiler
    Short = None

pytestmark = pytest.mark.skipif(Short is None, reason="keyspace._scan_plan_accel was not built")

SCHEMES = {
    "tuple": ("t", "users"),
    "length-prefixed": (b"t", b"users"),
    "sublevel": (b"t", b"users"),
    "asciihex": (b"t", b"users"),
    "scopehash": ("users",),
}
KEYS = [b"a", b"ab", b"b", b"b\x00", b"c", b"k\xff", b"z"]


def _answer(call: Any, *args: Any) -> Any:
    try:
        got = call(*args)
    except Exception as exc:  # the same error from both, its type and words
        return ("raised", type(exc), str(exc))
    return got if got is None else ("items", list(got))


@pytest.fixture(scope="module", params=[(e, s) for e in ("memory", "lmdb", "leveldb") for s in SCHEMES])
def scope(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    engine, scheme = request.param
    if engine == "leveldb":
        pytest.importorskip("plyvel")
    url = "memory://" if engine == "memory" else f"{engine}://{tmp_path_factory.mktemp(engine)}"
    ks = keyspace.open(url, scheme=scheme)
    path = SCHEMES[scheme]
    made = ks.scope(*path)
    for key in KEYS:
        made[key] = key * 2
    if len(path) > 1 and scheme != "length-prefixed":  # children's keys beside the scope's own
        for child in ("a", "b", "k", "users"):
            name = child.encode() if isinstance(path[-1], bytes) else child
            ks.scope(*path, name).update({b"c%02d" % i: b"c" for i in range(30)})
    yield ks, made
    ks.close()


_key = st.one_of(st.none(), st.sampled_from([*KEYS, b"", b"aa", b"zz"]))
_flag = st.one_of(st.booleans(), st.sampled_from([0, 1, "yes", None]))
_limit = st.one_of(st.none(), st.integers(-2, 12), st.sampled_from([1024, 1025, True, 2.0, "3"]))


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start=_key,
    stop=_key,
    include_start=_flag,
    include_stop=_flag,
    reverse=_flag,
    limit=_limit,
    prefix=st.one_of(st.none(), st.sampled_from([b"a", b"k"])),
    in_transaction=st.booleans(),
)
def test_the_c_short_scan_answers_as_its_reference(
    scope: Any,
    start: Any,
    stop: Any,
    include_start: Any,
    include_stop: Any,
    reverse: Any,
    limit: Any,
    prefix: Any,
    in_transaction: bool,
) -> None:
    assert Short is not None
    ks, made = scope
    c_short = Short(short_py)
    args = (start, stop, include_start, include_stop, reverse, limit, prefix)
    if in_transaction:
        with ks.transaction() as tx:
            inner = tx.scope(*made.path)
            inner.get(b"a")  # its read guard settled, as a scope's after its first read
            want = _answer(short_py, *inner._plan(), *args)
            assert _answer(c_short, *inner._plan(), *args) == want
    else:
        made.get(b"a")
        want = _answer(short_py, *made._plan(), *args)
        assert _answer(c_short, *made._plan(), *args) == want
    if want is not None and want[0] == "items" and type(limit) is int:
        assert len(want[1]) <= limit


def test_the_c_short_scan_takes_the_common_case_itself(scope: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A short scan with no prefix= and no read guard never calls the reference
    (of a layout whose ranges hold others' keys too); one it leaves (a bad flag)
    does, with the same arguments."""
    assert Short is not None
    _ks, made = scope
    made.get(b"a")
    called: list[tuple[Any, ...]] = []

    def reference(*args: Any) -> Any:
        called.append(args)
        return short_py(*args)

    c_short = Short(reference)
    args = (*made._plan(), b"a", None, True, False, False, 3, None)
    assert c_short(*args) == short_py(*args)
    assert called == []
    called.clear()
    with pytest.raises(keyspace.errors.InvalidArgument, match="reverse must be True or False"):
        c_short(*made._plan(), b"a", None, True, False, "no", 3, None)
    assert len(called) == 1


def test_a_short_scan_of_an_ended_view_raises_as_the_reference(tmp_path: Path) -> None:
    assert Short is not None
    ks = keyspace.open(f"lmdb://{tmp_path}", scheme="length-prefixed")
    ks.scope(b"t")[b"a"] = b"1"
    with ks.snapshot() as snap:
        inner = snap.scope(b"t")
        inner.get(b"a")
        plan = inner._plan()
    for start in (b"a", b"zz"):  # items to read, and none left (the view touched)
        want = _answer(short_py, *plan, start, None, True, False, False, 5, None)
        assert want[0] == "raised"
        assert _answer(Short(short_py), *plan, start, None, True, False, False, 5, None) == want
    ks.close()


def test_short_refuses_a_reference_that_is_not_callable() -> None:
    assert Short is not None
    with pytest.raises(TypeError, match="must be callable"):
        Short(5)
    with pytest.raises(TypeError, match="no keywords"):
        Short(short_py, extra=1)  # type: ignore[call-arg]
