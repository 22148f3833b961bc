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
