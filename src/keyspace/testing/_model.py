"""A Hypothesis state machine that checks a store against a plain dict model.

Random sequences of put, delete, delete_range, write, scan (both directions, with
limits) and transactions (committed or discarded) run on the store under test and on
the model; every read must agree. The store's ``MemoryStore`` twin is the model's
reference semantics, so this is the adapter-versus-``MemoryStore`` comparison.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from ..stores._base import Op, Store, WriteView

__all__ = ["StoreModelMachine"]

# A small alphabet with the edge bytes, so that operations hit the same keys often.
_ALPHABET = [b"\x00", b"\x01", b"a", b"\x7f", b"\xfe", b"\xff"]
_keys = st.lists(st.sampled_from(_ALPHABET), max_size=3).map(b"".join)
_values = st.binary(max_size=8)
_bounds = st.one_of(st.none(), _keys)


class _Abort(Exception):
    """Raised inside a transaction to make it discard."""


def _model_range(model: dict[bytes, bytes], start: bytes, stop: bytes | None) -> list[bytes]:
    return sorted(k for k in model if k >= start and (stop is None or k < stop))


class StoreModelMachine(RuleBasedStateMachine):
    """Set ``factory`` (returns a fresh store) on a subclass, then run it."""

    factory: ClassVar[Callable[[], Store]]

    def __init__(self) -> None:
        super().__init__()
        self.store = type(self).factory()
        self.empty_ok = self.store.capabilities.empty_keys
        self.model: dict[bytes, bytes] = {}

    def teardown(self) -> None:
        self.store.close()

    def _key(self, key: bytes) -> bytes:
        return key if key or self.empty_ok else b"\x01"

    # -- writes outside a transaction ----------------------------------------

    @rule(key=_keys, value=_values)
    def put(self, key: bytes, value: bytes) -> None:
        key = self._key(key)
        self.store.put(key, value)
        self.model[key] = value

    @rule(key=_keys)
    def delete(self, key: bytes) -> None:
        key = self._key(key)
        self.store.delete(key)
        self.model.pop(key, None)

    @rule(start=_keys, stop=_bounds)
    def delete_range(self, start: bytes, stop: bytes | None) -> None:
        self.store.delete_range(start, stop)
        for key in _model_range(self.model, start, stop):
            del self.model[key]

    @rule(ops=st.lists(st.tuples(_keys, st.one_of(st.none(), _values)), max_size=6))
    def write(self, ops: list[tuple[bytes, bytes | None]]) -> None:
        batch: list[Op] = [(self._key(k), v) for k, v in ops]
        self.store.write(batch)
        for key, value in batch:
            if value is None:
                self.model.pop(key, None)
            else:
                self.model[key] = value

    # -- transactions --------------------------------------------------------

    @rule(
        steps=st.lists(
            st.tuples(
                st.sampled_from(["put", "fast_replace", "put_many", "delete", "range", "check"]),
                _keys,
                _values,
                _bounds,
            ),
            max_size=8,
        ),
        commit=st.booleans(),
    )
    def transaction(self, steps: list[tuple[str, bytes, bytes, bytes | None]], commit: bool) -> None:
        pending = dict(self.model)
        try:
            with self.store.transaction() as tx:
                for kind, key, value, stop in steps:
                    self._tx_step(tx, pending, kind, self._key(key), value, stop)
                if not commit:
                    raise _Abort
        except _Abort:
            pass
        if commit:
            self.model = pending

    def _tx_step(
        self,
        tx: WriteView,
        pending: dict[bytes, bytes],
        kind: str,
        key: bytes,
        value: bytes,
        stop: bytes | None,
    ) -> None:
        if kind == "put":
            tx.put(key, value)
            pending[key] = value
        elif kind == "fast_replace":  # the view's one-call replace where it has one
            replace = tx.fast_replace
            if replace is None:
                tx.put(key, value)
            else:
                replace(key, value)
            pending[key] = value
        elif kind == "put_many":  # a batch that puts the key twice: the later pair wins
            other = self._key(value)
            assert tx.put_many([(key, b"first"), (other, value), (key, value)]) == 3
            pending.update({key: value, other: value})
        elif kind == "delete":
            tx.delete(key)
            pending.pop(key, None)
        elif kind == "range":
            tx.delete_range(key, stop)
            for k in _model_range(pending, key, stop):
                del pending[k]
        else:
            assert tx.get(key) == pending.get(key)
            expected = [(k, pending[k]) for k in _model_range(pending, key, stop)]
            assert list(tx.scan(key, stop)) == expected
            assert list(tx.scan(key, stop, reverse=True, limit=2)) == expected[::-1][:2]

    # -- reads ---------------------------------------------------------------

    @rule(start=_keys, stop=_bounds, reverse=st.booleans(), limit=st.one_of(st.none(), st.integers(0, 4)))
    def scan(self, start: bytes, stop: bytes | None, reverse: bool, limit: int | None) -> None:
        expected = [(k, self.model[k]) for k in _model_range(self.model, start, stop)]
        if reverse:
            expected.reverse()
        if limit is not None:
            expected = expected[:limit]
        assert list(self.store.scan(start, stop, reverse=reverse, limit=limit)) == expected

    @precondition(lambda self: bool(self.model))
    @rule(data=st.data())
    def get_present(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.model)))
        assert self.store.get(key) == self.model[key]

    @invariant()
    def same_contents(self) -> None:
        assert list(self.store.scan()) == sorted(self.model.items())
