"""A ``with`` block that raises ends with its own error even when closing what it
opened fails too (that failure is added to it as a note); a block that ends
normally gets the close's error. Store, keyspace and snapshot alike."""

from __future__ import annotations

import pytest

import keyspace
from keyspace.errors import StoreError
from keyspace.stores import MemoryStore


class _CloseFails(MemoryStore):
    def close(self) -> None:
        super().close()
        raise StoreError("closing failed: the writer reports an earlier failed write")


class _BlockError(Exception):
    pass


def test_the_block_error_goes_on_with_the_close_error_as_a_note() -> None:
    with pytest.raises(_BlockError) as caught, keyspace.attach(_CloseFails()) as ks:
        ks.scope("a")[b"k"] = b"v"
        raise _BlockError("the write that failed first")
    assert "closing failed" in "".join(getattr(caught.value, "__notes__", []))


def test_a_store_block_error_goes_on_too() -> None:
    with pytest.raises(_BlockError) as caught, _CloseFails() as store:
        store.put(b"k", b"v")
        raise _BlockError("first")
    assert any("closing failed" in note for note in getattr(caught.value, "__notes__", []))


def test_a_block_that_ends_normally_gets_the_close_error() -> None:
    with pytest.raises(StoreError, match="closing failed"), keyspace.attach(_CloseFails()) as ks:
        ks.scope("a")[b"k"] = b"v"


def test_an_interrupt_in_the_block_goes_on() -> None:
    with pytest.raises(KeyboardInterrupt), keyspace.attach(_CloseFails()):
        raise KeyboardInterrupt
