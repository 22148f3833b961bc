"""A delete of a scope whose layout or name was not settled when it began, racing
a writer that settles it meanwhile: another keyspace object makes a child leaf of a
LengthPrefixed path, or registers a ScopeHash name of the same hash, in a
transaction that commits while the delete waits for the store's write lock. The
delete asks the scope's guard again inside its own atomic write, so the other
scope's keys stay: a parent's ``clear`` finds a branch (no own keys), a name whose
hash another name now holds raises ``HashCollision`` (a delete that found nothing
stored at its path deletes nothing). Both deleted the other scope's keys before."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from _xxh32 import colliding_name

import keyspace
from keyspace.errors import HashCollision

ENGINES = {"lmdb": "lmdb://{}/db", "sqlite": "sqlite://{}/db.sqlite"}
TWIN = colliding_name("alice")


def _recorded(url: str, scheme: str, seed: tuple[object, ...]) -> keyspace.Keyspace:
    """A keyspace of ``scheme`` on a store another keyspace object has recorded
    (one key at ``seed``)."""
    with keyspace.open(url, scheme=scheme) as ks:
        ks.scope(*seed)[b"k"] = b"v"
    return keyspace.open(url, scheme=scheme)


def _race(
    url: str, scheme: str, make: Callable[[keyspace.Keyspace], None], delete: Callable[[], None]
) -> list[BaseException]:
    """Run ``delete`` in a thread while ``make`` is inside an open transaction of
    another keyspace object; the transaction commits after the delete has begun
    (it waits for the write lock). Returns what the delete raised."""
    maker = keyspace.open(url, scheme=scheme)
    raised: list[BaseException] = []

    def run() -> None:
        try:
            delete()
        except BaseException as exc:  # reported to the test
            raised.append(exc)

    thread = threading.Thread(target=run)
    with maker.transaction() as tx:
        make(tx)  # type: ignore[arg-type]
        thread.start()
        time.sleep(0.3)  # the delete has read the guard and waits for the lock
    thread.join(30)
    assert not thread.is_alive()
    maker.close()
    return raised


@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize("how", ["clear", "clear_range", "discard"])
def test_a_parents_delete_never_takes_a_child_leaf_made_meanwhile(
    tmp_path: Path, engine: str, how: str
) -> None:
    url = ENGINES[engine].format(tmp_path)
    deleter = _recorded(url, "length-prefixed", (b"seed", b"x"))  # (p,) has no layout yet
    parent = deleter.scope(b"p")
    assert list(parent.items()) == []
    stored_child_key = b"\x00\x01ck"  # the child's key, under the parent's prefix
    delete = {
        "clear": parent.clear,
        "clear_range": lambda: parent.clear_range(start=b"\x00"),
        "discard": lambda: parent.discard(stored_child_key),
    }[how]
    raised = _race(
        url, "length-prefixed", lambda tx: tx.scope(b"p", b"c").__setitem__(b"k", b"child"), delete
    )
    assert raised == []
    assert dict(deleter.scope(b"p", b"c").items()) == {b"k": b"child"}
    deleter.close()


@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize("how", ["clear", "discard", "drop"])
def test_a_names_delete_never_takes_a_twin_registered_meanwhile(
    tmp_path: Path, engine: str, how: str
) -> None:
    url = ENGINES[engine].format(tmp_path)
    deleter = _recorded(url, "scopehash", ("seed",))
    alice = deleter.scope("alice")
    assert list(alice.items()) == []  # no name holds the hash yet
    delete = {"clear": alice.clear, "discard": lambda: alice.discard(b"k"), "drop": alice.drop}[how]
    raised = _race(url, "scopehash", lambda tx: tx.scope(TWIN).__setitem__(b"k", b"twin"), delete)
    # a delete that found no name there deleted nothing (it came first); one that
    # asks again inside its write meets the twin's entry and raises
    assert [type(exc) for exc in raised] in ([], [HashCollision])
    if how == "drop":
        assert raised, "a drop asks inside its write: the twin's entry is there"
    assert dict(deleter.scope(TWIN).items()) == {b"k": b"twin"}
    deleter.close()
