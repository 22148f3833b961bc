"""The C translated call (``keyspace.stores._gate_accel.translated``) against its
pure-Python reference: the same results, the same errors (a translated error
chained from the engine's, keyspace errors and other BaseExceptions as they
are, the translation's own error as it is), keyword arguments passed through."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from keyspace.errors import KeyspaceError, StoreClosed, StoreError
from keyspace.stores import _translated
from keyspace.stores._translated import translated_py

TRANSLATED = (
    [translated_py] if _translated.translated is translated_py else [_translated.translated, translated_py]
)


@pytest.fixture(params=TRANSLATED, ids=lambda f: getattr(f, "__name__", "C"))
def make(request: pytest.FixtureRequest) -> Callable[..., Any]:
    return request.param  # type: ignore[no-any-return]


def _translate(exc: BaseException, key: Any) -> KeyspaceError:
    return StoreError(f"translated {type(exc).__name__} at {key!r}")


class _Engine:
    """An engine call that answers, or raises what it is told to."""

    def __init__(self) -> None:
        self.raise_: BaseException | None = None
        self.calls: list[tuple[Any, ...]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((*args, tuple(sorted(kwargs.items()))))
        if self.raise_ is not None:
            raise self.raise_
        return (args, kwargs)


def test_an_answer_is_the_engines(make: Callable[..., Any]) -> None:
    engine = _Engine()
    call = make(engine, _translate)
    assert call(b"k") == ((b"k",), {})
    assert call(b"k", b"v", db=1) == ((b"k", b"v"), {"db": 1})
    assert call() == ((), {})
    assert engine.calls == [(b"k", ()), (b"k", b"v", (("db", 1),)), ((),)]


def test_an_engine_error_is_translated_and_chained(make: Callable[..., Any]) -> None:
    engine = _Engine()
    engine.raise_ = LookupError("engine trouble")
    call = make(engine, _translate)
    with pytest.raises(StoreError, match=r"translated LookupError at b'key'") as raised:
        call(b"key", b"value")
    assert raised.value.__cause__ is engine.raise_ and raised.value.__context__ is engine.raise_
    with pytest.raises(StoreError, match="at None"):  # no positional argument: no key
        call()


def test_keyspace_errors_and_base_exceptions_go_through(make: Callable[..., Any]) -> None:
    engine = _Engine()
    call = make(engine, _translate)
    for error in (StoreClosed("ended"), KeyboardInterrupt(), SystemExit(3)):
        engine.raise_ = error
        with pytest.raises(type(error)) as raised:
            call(b"k")
        assert raised.value is error


def test_a_translation_that_returns_the_error_raises_it_as_it_was(make: Callable[..., Any]) -> None:
    engine = _Engine()
    engine.raise_ = ValueError("as it is")
    call = make(engine, lambda exc, key: exc)
    with pytest.raises(ValueError, match="as it is") as raised:
        call(b"k")
    assert raised.value is engine.raise_


def test_a_failing_translation_raises_its_own_error(make: Callable[..., Any]) -> None:
    engine = _Engine()
    engine.raise_ = ValueError("engine")

    def broken(exc: BaseException, key: Any) -> KeyspaceError:
        raise RuntimeError("translation broke")

    with pytest.raises(RuntimeError, match="translation broke"):
        make(engine, broken)(b"k")


@pytest.mark.skipif(_translated.translated is translated_py, reason="the C module was not built")
def test_the_c_type_refuses_what_is_not_callable_and_a_non_exception() -> None:
    with pytest.raises(TypeError):
        _translated.translated(b"not callable", _translate)
    engine = _Engine()
    engine.raise_ = ValueError("engine")
    with pytest.raises(TypeError, match="not an exception"):
        _translated.translated(engine, lambda exc, key: "text")(b"k")
