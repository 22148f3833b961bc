"""The C gate (``keyspace.stores._gate_accel.Gate``) against its pure-Python
reference (``PyGate``): its guarded iterators end, refuse and translate errors as
the reference's generator does, a step asked for from inside a step is refused
(never a crash), and a call passes its keyword arguments through alike."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from itertools import islice
from typing import Any

import pytest

from keyspace.stores import _gate
from keyspace.stores._gate import PyGate

GATES = [PyGate] if _gate.Gate is PyGate else [_gate.Gate, PyGate]
needs_c = pytest.mark.skipif(_gate.Gate is PyGate, reason="keyspace.stores._gate_accel was not built")


@pytest.fixture(params=GATES, ids=lambda g: f"{g.__module__}.{g.__name__}")
def gate(request: pytest.FixtureRequest) -> Any:
    return request.param()


class _Translated(Exception):
    pass


def _translate(exc: BaseException) -> BaseException:
    return _Translated(repr(exc))


_REENTER = textwrap.dedent(
    """
    import sys
    from keyspace.stores import _gate
    gate = _gate.Gate() if sys.argv[1] == "c" else _gate.PyGate()
    calls = []

    def keep(item):
        calls.append(item)
        if len(calls) == 1:
            try:
                print("inner", next(chain))
            except ValueError as exc:
                print("inner refused:", exc)
            garbage = [bytearray(64) for _ in range(1000)]
        return False

    def sources():
        # only the chain holds the filter and its iterator
        yield filter(keep, iter([bytearray(100) for _ in range(3)]))
        yield [7]
        yield [8]

    chain = gate.guard_chain(sources())
    print("outer", next(chain))
    print("rest", list(chain))
    """
)


@pytest.mark.parametrize("kind", ["c", "python"] if len(GATES) == 2 else ["python"])
def test_a_step_from_inside_a_step_is_refused(kind: str) -> None:
    """In a child process (a crash ends it with a signal; PYTHONMALLOC=debug makes
    a use of freed memory crash at once): an iterable whose step steps the chain
    again gets ValueError, and the outer step goes on as the reference's does."""
    done = subprocess.run(
        [sys.executable, "-c", _REENTER, kind],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONMALLOC": "debug"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [
        "inner refused: generator already executing",
        "outer 7",
        "rest [8]",
    ]


def test_a_step_from_inside_translate_is_refused(gate: Any) -> None:
    seen: list[str] = []

    def translate(exc: BaseException) -> BaseException:
        try:
            next(it)
        except ValueError as refused:
            seen.append(str(refused))
        return _Translated(repr(exc))

    def fails() -> Iterator[int]:
        raise KeyError("engine")
        yield  # pragma: no cover - a generator

    it = gate.guard_iter(fails(), translate)
    with pytest.raises(_Translated):
        next(it)
    assert seen == ["generator already executing"]
    assert gate.inflight == 0


class _Resuming:
    """An iterator that fails once, then gives items again (as an engine's
    iterator may after a transient error)."""

    def __init__(self) -> None:
        self.steps = 0

    def __iter__(self) -> _Resuming:
        return self

    def __next__(self) -> int:
        self.steps += 1
        if self.steps == 1:
            raise KeyError("transient")
        return self.steps


@pytest.mark.parametrize("translate", [None, _translate], ids=["as-is", "translated"])
def test_an_iteration_is_over_after_its_first_error(gate: Any, translate: Any) -> None:
    source = _Resuming()
    it = gate.guard_iter(source, translate)
    with pytest.raises(KeyError if translate is None else _Translated):
        next(it)
    assert list(islice(it, 3)) == []
    assert source.steps == 1  # not stepped again
    chained = gate.guard_chain([[1], _Resuming(), [2]], translate)
    assert next(chained) == 1
    with pytest.raises(KeyError if translate is None else _Translated):
        next(chained)
    assert list(islice(chained, 3)) == []


def test_an_iteration_is_over_after_its_end_closed_or_not(gate: Any) -> None:
    ended = gate.guard_iter([1])
    chain_ended = gate.guard_chain([[1], [2]])
    assert list(ended) == [1] and list(chain_ended) == [1, 2]
    refused = gate.guard_iter([1, 2], _translate)
    gate.close()
    for it in (ended, chain_ended):  # an ended iteration ends again: no refusal
        with pytest.raises(StopIteration):
            next(it)
    with pytest.raises(_Translated, match="closed"):
        next(refused)
    with pytest.raises(StopIteration):  # refused once, then over
        next(refused)


def _raising(exc: BaseException) -> Iterator[int]:
    raise exc
    yield  # pragma: no cover - a generator


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit, GeneratorExit])
def test_only_an_exception_is_translated(gate: Any, exc_type: type[BaseException]) -> None:
    """An interrupt (Ctrl-C) during a scan stays an interrupt: translate, which makes
    a store error of an engine's error, sees only Exceptions."""
    seen: list[BaseException] = []

    def translate(exc: BaseException) -> BaseException:
        seen.append(exc)
        return _Translated(repr(exc))

    with pytest.raises(exc_type):
        next(gate.guard_iter(_raising(exc_type()), translate))
    with pytest.raises(exc_type):
        next(gate.guard_chain([[], _raising(exc_type())], translate))
    assert seen == []
    with pytest.raises(_Translated):
        next(gate.guard_iter(_raising(ValueError("engine")), translate))
    assert [type(e) for e in seen] == [ValueError]


def test_a_translated_error_is_chained_from_the_error(gate: Any) -> None:
    original = KeyError("engine")
    it = gate.guard_iter(_raising(original), _translate)
    try:
        raise LookupError("handled by the caller")
    except LookupError:
        with pytest.raises(_Translated) as caught:
            next(it)
    assert caught.value.__cause__ is original
    assert caught.value.__context__ is original
    assert caught.value.__suppress_context__
    assert isinstance(original.__context__, LookupError)  # raised while the caller handled it
    failing = gate.guard_iter(_raising(KeyError("x")), lambda exc: "not an exception")
    with pytest.raises(TypeError):
        next(failing)


def test_a_keyword_argument_named_fn_goes_to_the_call(gate: Any) -> None:
    def echo(*args: Any, **kwargs: Any) -> Any:
        return args, kwargs

    assert gate.run(echo, 1, fn=2) == ((1,), {"fn": 2})
    assert gate.guard(echo)(1, fn=2, self=3) == ((1,), {"fn": 2, "self": 3})
    assert gate.inflight == 0


def test_guard_iter_takes_the_iterator_at_once(gate: Any) -> None:
    """As iter(): a value that is not iterable is refused by guard_iter itself (with
    or without translate), and the iterable's __iter__ runs once, in the call."""
    for translate in (None, _translate):
        with pytest.raises(TypeError):
            gate.guard_iter(5, translate)
    taken: list[str] = []

    class Source:
        def __iter__(self) -> Iterator[int]:
            taken.append("iter")
            return iter([1])

    it = gate.guard_iter(Source())
    assert taken == ["iter"]
    assert list(it) == [1] and taken == ["iter"]


def test_translate_may_return_the_error_itself(gate: Any) -> None:
    original = KeyError("engine")
    with pytest.raises(KeyError) as caught:
        next(gate.guard_iter(_raising(original), lambda exc: exc))
    assert caught.value is original  # raised as it was, not chained from itself
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None


def test_a_keyspace_error_of_a_step_is_not_translated(gate: Any) -> None:
    from keyspace.errors import StoreClosed

    original = StoreClosed("this snapshot has ended")
    with pytest.raises(StoreClosed) as caught:
        next(gate.guard_iter(_raising(original), lambda exc: _Translated(repr(exc))))
    assert caught.value is original and caught.value.__cause__ is None


def test_a_guarded_call_with_a_translation_translates_its_errors_and_the_refusal(gate: Any) -> None:
    from keyspace.errors import StoreClosed, StoreError

    def translate(exc: BaseException, key: Any) -> StoreError:
        return (
            StoreClosed(f"closed at {key!r}") if "closed" in str(exc) else StoreError(f"{exc!r} at {key!r}")
        )

    def engine(key: bytes) -> bytes:
        if key == b"bad":
            raise KeyError("engine")
        return key

    call = gate.guard(engine, translate)
    assert call(b"k") == b"k" and gate.inflight == 0
    with pytest.raises(StoreError, match=r"KeyError\('engine'\) at b'bad'") as raised:
        call(b"bad")
    assert isinstance(raised.value.__cause__, KeyError) and gate.inflight == 0
    gate.close()
    with pytest.raises(StoreClosed, match="closed at b'k'"):  # the gate's refusal, translated
        call(b"k")
