"""Closing a store while other threads are inside its engine's calls: the gate
counts the calls in flight (C and pure-Python gate alike), closing waits for them,
and a LevelDB store closed under running gets, puts and scans no longer crashes
the process (plyvel releases the GIL inside LevelDB)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from typing import Any

import pytest

from keyspace.stores import _gate
from keyspace.stores._gate import PyGate, close_when_idle

GATES = [PyGate] if _gate.Gate is PyGate else [_gate.Gate, PyGate]


@pytest.fixture(params=GATES, ids=lambda g: f"{g.__module__}.{g.__name__}")
def gate(request: pytest.FixtureRequest) -> Any:
    return request.param()


def test_calls_are_counted_while_they_run(gate: Any) -> None:
    seen: list[int] = []
    guarded = gate.guard(lambda a, b=0: seen.append(gate.inflight) or a + b)
    assert guarded(1, b=2) == 3
    assert gate.run(lambda x, y=0: seen.append(gate.inflight) or x + y, 5, y=1) == 6
    assert [*gate.guard_iter(iter([seen.append(0)]))] == [None]
    steps = gate.guard_iter(range(3))
    assert next(steps) == 0
    assert gate.inflight == 0  # a suspended iteration is no call in flight
    assert seen == [1, 1, 0]


def test_an_error_ends_the_call(gate: Any) -> None:
    def boom() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        gate.guard(boom)()
    with pytest.raises(KeyError):
        gate.run(boom)
    assert gate.inflight == 0


def test_a_closed_gate_refuses_without_calling(gate: Any) -> None:
    called: list[int] = []
    guarded = gate.guard(called.append)
    steps = gate.guard_iter(range(3))
    assert next(steps) == 0
    gate.close()
    assert gate.closed
    for attempt in (lambda: guarded(1), lambda: gate.run(called.append, 2), lambda: next(steps)):
        with pytest.raises(RuntimeError, match="closed"):
            attempt()
    assert called == []


class _Translated(Exception):
    pass


def _translate(exc: BaseException) -> BaseException:
    return _Translated(f"translated: {exc}")


def test_an_iteration_can_raise_its_errors_translated(gate: Any) -> None:
    def steps() -> Any:
        yield 1
        raise KeyError("engine")

    it = gate.guard_iter(steps(), _translate)
    assert next(it) == 1
    with pytest.raises(_Translated, match="translated: 'engine'") as caught:
        next(it)
    assert isinstance(caught.value.__cause__, KeyError)
    assert caught.value.__suppress_context__  # raise ... from the engine's error
    assert gate.inflight == 0
    # the end of an iteration is no error; without translate, errors are as they are
    assert list(gate.guard_iter(iter([1, 2]), _translate)) == [1, 2]
    assert list(gate.guard_iter(iter([]), _translate)) == []
    for untranslated in (gate.guard_iter(_fail_at_once()), gate.guard_iter(_fail_at_once(), None)):
        with pytest.raises(KeyError, match="at once"):
            next(untranslated)
    refused = gate.guard_iter(range(3), _translate)
    gate.close()
    with pytest.raises(_Translated, match="closed") as caught:
        next(refused)
    assert isinstance(caught.value.__cause__, RuntimeError)


def _fail_at_once() -> Any:
    raise KeyError("at once")
    yield  # pragma: no cover - a generator


def test_closing_waits_for_the_calls_in_flight(gate: Any) -> None:
    entered, release = threading.Event(), threading.Event()
    order: list[str] = []

    def slow() -> None:
        entered.set()
        assert release.wait(10)
        order.append("call ended")

    worker = threading.Thread(target=gate.guard(slow))
    worker.start()
    assert entered.wait(10)
    threading.Timer(0.05, release.set).start()
    assert close_when_idle(gate, lambda: order.append("closed"), wait=10)
    worker.join(10)
    assert order == ["call ended", "closed"]


def test_a_call_that_does_not_end_leaves_the_handle_open(gate: Any) -> None:
    entered, release = threading.Event(), threading.Event()
    worker = threading.Thread(target=gate.guard(lambda: entered.set() or release.wait(10)))
    worker.start()
    assert entered.wait(10)
    closed: list[bool] = []
    assert not close_when_idle(gate, lambda: closed.append(True), wait=0.05)
    assert closed == []
    release.set()
    worker.join(10)


_CLOSE_UNDER_LOAD = textwrap.dedent(
    """
    import sys, tempfile, threading
    import keyspace
    from keyspace.errors import StoreClosed
    from keyspace.stores import _gate, leveldb
    if sys.argv[2] == "python":
        leveldb.Gate = _gate.PyGate
    mode = sys.argv[1]
    for _ in range(20):
        ks = keyspace.open(f"leveldb://{tempfile.mkdtemp()}")
        scope = ks.scope("a")
        scope.update({b"k%d" % i: b"v" for i in range(200)})
        started = threading.Event()
        def work():
            try:
                for i in range(200000):
                    if i == 10:
                        started.set()
                    if mode == "get":
                        scope[b"k1"]
                    elif mode == "put":
                        scope[b"k1"] = b"w"
                    else:
                        list(scope.items())
            except StoreClosed:
                pass
            finally:
                started.set()
        worker = threading.Thread(target=work)
        worker.start()
        started.wait(10)
        ks.close()
        worker.join(30)
    print("closed under load")
    """
)


@pytest.mark.parametrize("gate_kind", ["c", "python"] if len(GATES) == 2 else ["python"])
@pytest.mark.parametrize("mode", ["get", "put", "scan"])
def test_a_leveldb_store_closed_under_running_calls(mode: str, gate_kind: str) -> None:
    """In a child process (a crash would end it with a signal): 20 stores, each
    closed while a thread is reading or writing it; the thread ends with
    StoreClosed and the process with 0."""
    done = subprocess.run(
        [sys.executable, "-c", _CLOSE_UNDER_LOAD, mode, gate_kind],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "closed under load" in done.stdout


class _Raising:
    """An iterator that ends by raising StopIteration (as plyvel's do), not by
    returning nothing."""

    def __init__(self, items: list[int]) -> None:
        self._items = iter(items)

    def __iter__(self) -> _Raising:
        return self

    def __next__(self) -> int:
        item = next(self._items, None)
        if item is None:
            raise StopIteration
        return item


def test_a_chain_gives_each_iterable_in_turn_every_step_counted(gate: Any) -> None:
    inside: list[int] = []

    def counted(items: list[int]) -> Any:
        for item in items:
            inside.append(gate.inflight)
            yield item

    chain = gate.guard_chain([_Raising([1, 2]), [], counted([3]), _Raising([]), iter([4])])
    assert list(chain) == [1, 2, 3, 4]
    assert inside == [1]  # the step runs inside the count
    assert list(chain) == []  # an ended chain stays ended
    assert list(gate.guard_chain([])) == []
    assert list(gate.guard_chain(iter([range(2), range(1)]), _translate)) == [0, 1, 0]
    assert gate.inflight == 0


def test_a_chain_translates_the_errors_of_its_steps_and_refuses_once_closed(gate: Any) -> None:
    chain = gate.guard_chain([iter([1]), _fail_at_once()], _translate)
    assert next(chain) == 1
    with pytest.raises(_Translated, match="at once") as caught:
        next(chain)
    assert isinstance(caught.value.__cause__, KeyError)
    not_iterable = gate.guard_chain([[1], 5], _translate)
    assert next(not_iterable) == 1
    with pytest.raises(_Translated) as caught:
        next(not_iterable)
    assert isinstance(caught.value.__cause__, TypeError)
    with pytest.raises(KeyError, match="at once"):  # no translate: errors as they are
        next(gate.guard_chain([_fail_at_once()]))
    refused = gate.guard_chain([iter([1]), iter([2])], _translate)
    assert next(refused) == 1
    gate.close()
    with pytest.raises(_Translated, match="closed"):
        next(refused)
    assert gate.inflight == 0
