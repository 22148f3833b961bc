"""A keyspace that opened a store before another turned a feature on there
(``changes=True``, ``ttl=True``) and had not yet written: its first write is
refused, naming the feature, and writes nothing, where it used to go on
without the feature: a change log that misses its commits (watches and feeds
never see them), or deadlines its puts leave standing (a key put again
without a ttl expired, and was swept, under its old deadline). Opened again,
it runs what the store records. Accounting's refusal is this one check too
(``tests/accounting/test_accounting_kept_by_early_openers.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _etcd import own_url

import keyspace
from keyspace.errors import SchemeMismatch
from keyspace.stores import MemoryStore


@pytest.mark.parametrize("feature", ["changes", "ttl"])
def test_the_first_write_of_a_keyspace_opened_before_is_refused(feature: str) -> None:
    store = MemoryStore()
    plain = keyspace.attach(store, close_store=False)
    turned_on = keyspace.attach(store, close_store=False, **{feature: True})  # type: ignore[arg-type]
    turned_on.scope("a")[b"x"] = b"1"  # records the feature
    before = list(store.scan(b"", None))
    with pytest.raises(SchemeMismatch, match=f"keeps {feature} since another keyspace turned it on"):
        plain.scope("a")[b"y"] = b"2"
    with pytest.raises(SchemeMismatch, match=feature), plain.transaction() as tx:
        tx.scope("b")[b"z"] = b"3"
    assert list(store.scan(b"", None)) == before  # nothing written
    again = keyspace.attach(store, close_store=False)  # opened again: it runs the feature
    again.scope("a")[b"y"] = b"2"
    assert again.store.hook(feature) is not None  # type: ignore[attr-defined]


def test_a_plain_writer_opened_before_changes_is_seen_by_a_watch_once_opened_again(tmp_path: Path) -> None:
    url = f"lmdb:///{tmp_path / 'db'}"
    plain = keyspace.open(url)  # an empty store: nothing recorded yet
    logged = keyspace.open(url, changes=True)
    watch = logged.scope("a").watch()
    logged.scope("a")[b"first"] = b"1"
    with pytest.raises(SchemeMismatch, match="changes"):
        plain.scope("a")[b"lost"] = b"2"
    plain.close()
    plain = keyspace.open(url)
    plain.scope("a")[b"seen"] = b"3"
    keys = []
    while (event := watch.get(5)) is not None:
        keys.append(event.key)
        if event.key == b"seen":
            break
    assert keys == [b"first", b"seen"]
    assert logged.scope("a").get(b"lost") is None
    watch.close()
    plain.close()
    logged.close()


def test_a_keyspace_must_run_every_recorded_feature_not_only_some(tmp_path: Path) -> None:
    """Opened before any write: one with changes, one with changes and ttl, one
    with both too. The second writes first (the store records both); the first
    is refused naming ttl alone; the third, running both, writes."""
    url = f"lmdb:///{tmp_path / 'db'}"
    first = keyspace.open(url, changes=True)
    second = keyspace.open(url, changes=True, ttl=True)
    third = keyspace.open(url, ttl=True, changes=True)
    second.scope("a")[b"x"] = b"1"
    with pytest.raises(SchemeMismatch, match=r"keeps ttl since another keyspace turned it on"):
        first.scope("a")[b"y"] = b"2"
    third.scope("a")[b"z"] = b"3"
    assert sorted(k for k, _ in third.scope("a").items()) == [b"x", b"z"]
    for ks in (first, second, third):
        ks.close()


def test_on_etcd_a_writer_opened_before_changes_writes_and_is_seen() -> None:
    """On etcd the cluster's own revisions and watch are the change log, for
    every writer: one opened before changes were turned on is not refused, and
    a watch sees its writes."""
    for url in own_url("early-openers"):
        plain = keyspace.open(url)
        logged = keyspace.open(url, changes=True)
        watch = logged.scope("a").watch()
        logged.scope("a")[b"first"] = b"1"
        plain.scope("a")[b"second"] = b"2"
        keys = []
        while len(keys) < 2 and (event := watch.get(5)) is not None:
            keys.append(event.key)
        assert keys == [b"first", b"second"]
        watch.close()
        plain.close()
        logged.close()


def _refused_and_nothing_written(ks: keyspace.Keyspace, write: Any, feature: str) -> None:
    inner = ks.store.inner  # type: ignore[attr-defined]
    before = list(inner.scan(b"", None))
    with pytest.raises(SchemeMismatch, match=f"keeps {feature} since another keyspace turned it on"):
        write()
    assert list(inner.scan(b"", None)) == before


@pytest.mark.parametrize("engine", ["memory", "lmdb", "sqlite"])
def test_a_keyspace_with_a_feature_that_had_written_is_refused_when_another_is_turned_on(
    tmp_path: Path, engine: str
) -> None:
    """A keyspace running changes writes, then another turns ttl on: every
    later write of the first (a single put or delete, a transaction, a batch)
    is refused naming ttl, inside the write, and writes nothing, where it used
    to go on without ttl (a key it put again kept the deadline another gave
    it, and expired). One running both goes on."""
    if engine == "memory":
        store = MemoryStore()
        logged = keyspace.attach(store, close_store=False, changes=True)
        later = lambda **options: keyspace.attach(store, close_store=False, **options)  # noqa: E731
    else:
        url = f"lmdb:///{tmp_path / 'db'}" if engine == "lmdb" else f"sqlite:///{tmp_path / 'db.sqlite'}"
        logged = keyspace.open(url, changes=True)
        later = lambda **options: keyspace.open(url, **options)  # noqa: E731
    logged.scope("a")[b"x"] = b"1"  # written: its first write's check is behind it
    both = later(changes=True, ttl=True)
    both.scope("a").put(b"x", b"2", ttl=60)  # records ttl, and a deadline for x
    scope = logged.scope("a")
    _refused_and_nothing_written(logged, lambda: scope.__setitem__(b"x", b"3"), "ttl")
    _refused_and_nothing_written(logged, lambda: scope.__delitem__(b"x"), "ttl")

    def in_transaction() -> None:
        with logged.transaction() as tx:
            tx.scope("a")[b"y"] = b"4"

    _refused_and_nothing_written(logged, in_transaction, "ttl")
    key = logged.scheme.encode(("a",), b"z")
    _refused_and_nothing_written(logged, lambda: logged.store.write([(key, b"5")]), "ttl")
    third = later(ttl=True, changes=True)  # runs both: writes
    third.scope("a")[b"x"] = b"6"
    assert both.scope("a")[b"x"] == b"6"
    for ks in (logged, both, third):
        ks.close()


def test_a_batch_checks_the_feature_record_inside_its_write(tmp_path: Path) -> None:
    """LMDB's single batches of a keyspace with changes alone read the committed
    store first and commit only if nothing changed since (one checked write):
    the feature record is one of what is checked. The keyspace's first read of
    the record here answers as before ttl was turned on, as if the other
    keyspace had turned it on between that read and the write: the write finds
    it and writes nothing, and the batch run again is refused."""
    url = f"lmdb:///{tmp_path / 'db'}"
    logged = keyspace.open(url, changes=True)
    logged.scope("a")[b"x"] = b"1"
    inner = logged.store.inner  # type: ignore[attr-defined]
    record_key = logged.store._record_key  # type: ignore[attr-defined]
    before_ttl = inner.get(record_key)
    both = keyspace.open(url, changes=True, ttl=True)
    both.scope("a").put(b"x", b"2", ttl=60)
    reads = {"record": 0}
    get = inner.get

    def stale_once(key: bytes) -> bytes | None:
        if key == record_key:
            reads["record"] += 1
            if reads["record"] == 1:
                return before_ttl  # type: ignore[no-any-return]
        return get(key)  # type: ignore[no-any-return]

    own = inner.__dict__.get("get")  # the store's own point read, where it sets one
    inner.get = stale_once
    key = logged.scheme.encode(("a",), b"z")
    try:
        _refused_and_nothing_written(logged, lambda: logged.store.write([(key, b"5")]), "ttl")
    finally:
        if own is None:
            del inner.get
        else:
            inner.get = own
    assert reads["record"] >= 2  # read again after the checked write found it changed
    logged.close()
    both.close()
