"""``pop``, ``popitem`` and ``setdefault`` are one atomic step each, outside a
transaction too, while other threads call them on the same scope.

Each reads then writes. Read and write were two store operations, so threads
popping one scope got the same item more than once (LMDB: 3531 pops of 2000 keys
by four threads), and of four threads calling ``setdefault`` on one missing key,
three returned a default that was not the value stored. Every item is now popped
exactly once and every ``setdefault`` returns the stored value, on LMDB, SQLite,
LevelDB, RocksDB and memory.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

import keyspace

URLS = {
    "lmdb": "lmdb://{}",
    "sqlite": "sqlite://{}/s.db",
    "leveldb": "leveldb://{}",
    "rocksdb": "rocksdb://{}",
    "memory": "memory:",
}
THREADS = 4
N = 300


def _together(body: Callable[[int], None]) -> None:
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        barrier.wait(timeout=30)
        try:
            body(i)
        except BaseException as exc:  # the test fails with it below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors


@pytest.mark.parametrize("engine", list(URLS))
def test_each_item_is_popped_once(engine: str, tmp_path: Path) -> None:
    with keyspace.open(URLS[engine].format(tmp_path)) as ks:
        items, keys = ks.scope("items"), ks.scope("keys")
        items.update({b"k%04d" % i: b"v%d" % i for i in range(N)})
        keys.update({b"k%04d" % i: b"v%d" % i for i in range(N)})
        popped: Counter[bytes] = Counter()
        by_key: Counter[bytes] = Counter()

        def pop_all(_: int) -> None:
            for _step in range(N + 1):  # bounded: N items in all
                try:
                    key, value = items.popitem()
                except KeyError:
                    break
                assert value == b"v%d" % int(key[1:])
                popped[key] += 1
            for i in range(N):
                if keys.pop(b"k%04d" % i, None) is not None:
                    by_key[b"k%04d" % i] += 1

        _together(pop_all)
        assert sorted(popped.values()) == [1] * N and len(popped) == N
        assert sorted(by_key.values()) == [1] * N and len(by_key) == N
        assert len(items) == 0 and len(keys) == 0


@pytest.mark.parametrize("engine", list(URLS))
def test_setdefault_returns_the_stored_value(engine: str, tmp_path: Path) -> None:
    with keyspace.open(URLS[engine].format(tmp_path)) as ks:
        scope = ks.scope("defaults")
        got: dict[tuple[int, int], bytes] = {}

        def set_defaults(i: int) -> None:
            for r in range(60):
                got[(r, i)] = scope.setdefault(b"k%02d" % r, b"from %d" % i)

        _together(set_defaults)
        for (r, _), value in got.items():
            assert value == scope[b"k%02d" % r]
        assert len(scope) == 60
