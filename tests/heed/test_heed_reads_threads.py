"""A scoped-heed read of a name not registered yet, while another thread's write
registers it.

Before a read of the committed store, a scoped-heed scope asks the registry for
its name's hash, then (no entry) whether the database holds keys under the hash.
A write of the name committing between the two reads (its registry entry and its
keys in one transaction) made the reader find keys and no entry, and raise
:class:`HashCollision` saying the entry was removed, on an environment where
nothing is wrong. The reader must answer as of one moment: the value or nothing.

A wrapper around the store's ``get`` holds the reader right after its registry
read until the other thread's write has committed (waits bounded), through the
same keyspace object or a second one over the same environment.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from keyspace import scoped_heed
from keyspace.scoped_heed import ScopedHeed

WAIT = 10.0


@pytest.mark.parametrize("share", [True, False], ids=["one-keyspace", "two-keyspaces"])
def test_a_read_racing_the_names_registration_sees_one_moment(share: bool, tmp_path: Path) -> None:
    env = tmp_path / "env"
    env.mkdir()
    reader = scoped_heed.open(env, "db")
    writer = reader if share else scoped_heed.open(env, "db")
    try:
        reader.scope()[b"seed"] = b"1"
        store = reader.store
        entry = ScopedHeed.registry_key("x")
        real = store.get
        go, done = threading.Event(), threading.Event()
        raised: list[BaseException] = []
        me = threading.get_ident()

        def write() -> None:
            try:
                assert go.wait(WAIT), "the reader never read the registry"
                writer.scope("x")[b"k"] = b"written"
            except BaseException as exc:  # reported to the test
                raised.append(exc)
            finally:
                done.set()

        def get(key: bytes, *args: Any) -> bytes | None:
            answer: bytes | None = real(key, *args)
            if threading.get_ident() == me and key == entry and answer is None and not go.is_set():
                go.set()
                assert done.wait(WAIT), "the write never ended"
            return answer

        thread = threading.Thread(target=write)
        thread.start()
        store.get = get  # type: ignore[method-assign]
        try:
            got = reader.scope("x").get(b"k")
        finally:
            store.get = real  # type: ignore[method-assign]
            go.set()
            thread.join(WAIT)
        assert not thread.is_alive()
        assert raised == []
        assert got in (None, b"written")
        assert reader.scope("x").get(b"k") == b"written"
        assert reader.scope_names() == ["x"]
    finally:
        if writer is not reader:
            writer.close()
        reader.close()
