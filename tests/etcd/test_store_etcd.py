"""EtcdStore on the 3-member test cluster (scripts/etcd-test-cluster.sh, or started
here when pytest runs on its own and etcd is installed).

The cluster is for tests only: every test starts and ends with an empty keyspace.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator

import grpc
import pytest
from _etcd import etcd_cluster

from keyspace._bytes import prefix_end
from keyspace.errors import InvalidKey, KeyTooLarge, StoreClosed, StoreError, TransactionTooLarge
from keyspace.stores import Store, open_store
from keyspace.stores.etcd import MAX_KEY_SIZE, EtcdStore, TransactionConflict
from keyspace.stores.etcd._rpc import EtcdUnavailable, parse_etcd_url
from keyspace.testing import MakeStore, StoreSuite
from keyspace.testing.etcd_cluster import LocalCluster

pytestmark = pytest.mark.etcd


@pytest.fixture(scope="module")
def cluster() -> LocalCluster:
    return etcd_cluster()


@pytest.fixture
def store(cluster: LocalCluster) -> Iterator[EtcdStore]:
    s = EtcdStore(cluster.url)
    s.delete_range(b"", None)
    try:
        yield s
    finally:
        if not s._conn.closed:
            s.delete_range(b"", None)
        s.close()


def _all(s: EtcdStore) -> list[tuple[bytes, bytes]]:
    return list(s.scan())


# -- basics -------------------------------------------------------------------


def test_put_get_delete(store: EtcdStore) -> None:
    assert store.get(b"k") is None
    store.put(b"k", b"v1")
    store.put(b"k", b"v2")
    assert store.get(b"k") == b"v2"
    store.delete(b"k")
    store.delete(b"k")  # missing: not an error
    assert store.get(b"k") is None


BINARY_KEYS = [
    b"\x00",
    b"\x00\x00",
    b"\x00\xff",
    b"\x7f",
    b"\x80",
    b"\xff",
    b"\xff\xff",
    b"a",
    b"a\x00",
    b"ab",
]


def test_binary_keys_in_byte_order(store: EtcdStore) -> None:
    for i, key in enumerate(reversed(BINARY_KEYS)):
        store.put(key, b"%d" % i)
    assert [k for k, _ in store.scan()] == sorted(BINARY_KEYS)
    assert [k for k, _ in store.scan(reverse=True)] == sorted(BINARY_KEYS, reverse=True)
    inside = [k for k in sorted(BINARY_KEYS) if b"\x00\x00" <= k < b"\x80"]
    assert inside == [b"\x00\x00", b"\x00\xff", b"a", b"a\x00", b"ab", b"\x7f"]
    assert [k for k, _ in store.scan(b"\x00\x00", b"\x80")] == inside
    assert [k for k, _ in store.scan(b"\x00\x00", b"\x80", reverse=True)] == inside[::-1]
    assert list(store.scan(b"b", b"a")) == []
    assert list(store.scan(b"", b"\x00")) == []
    assert [k for k, _ in store.scan(b"\xff")] == [b"\xff", b"\xff\xff"]


def test_prefix_ranges_with_ff_and_decoys(store: EtcdStore) -> None:
    inside = [
        b"ns\x00" + s
        for s in (b"", b"\x00", b"\x00\x00", b"\x00\xff", b"\x7f", b"\x80", b"\xff", b"\xff\xff")
    ]
    decoys = [b"ns", b"ns\x01", b"nr\xff", b"nt"]
    q_inside = [b"q\xff", b"q\xff\x00", b"q\xff\xff"]
    q_decoys = [b"r", b"r\x00", b"r\xfe", b"q"]
    store.put_many((k, k) for k in inside + decoys + q_inside + q_decoys)
    assert [k for k, _ in store.scan(b"ns\x00", prefix_end(b"ns\x00"))] == sorted(inside)
    assert [k for k, _ in store.scan_prefix(b"q\xff")] == sorted(q_inside)
    assert [k for k, _ in store.scan_prefix(b"q\xff", reverse=True)] == sorted(q_inside, reverse=True)
    assert prefix_end(b"\xff\xff") is None
    assert [k for k, _ in store.scan_prefix(b"\xff")] == []


def test_limit_honoured(store: EtcdStore) -> None:
    store.put_many((b"k%03d" % i, b"v") for i in range(20))
    assert [k for k, _ in store.scan(limit=3)] == [b"k000", b"k001", b"k002"]
    assert [k for k, _ in store.scan(reverse=True, limit=2)] == [b"k019", b"k018"]
    assert list(store.scan(limit=0)) == []
    assert len(list(store.scan(limit=100))) == 20


def test_pagination_many_keys(store: EtcdStore) -> None:
    keys = [b"p%05d" % i for i in range(3000)]
    assert store.put_many((k, k[::-1]) for k in keys) == 3000
    assert [k for k, _ in store.scan()] == keys
    assert [k for k, _ in store.scan(reverse=True)] == keys[::-1]
    for limit in (255, 256, 257, 1000, 2999, 3000, 5000):
        assert [k for k, _ in store.scan(limit=limit)] == keys[:limit]
        assert [k for k, _ in store.scan(reverse=True, limit=limit)] == keys[::-1][:limit]
    assert [k for k, _ in store.scan(b"p00100", b"p02100")] == keys[100:2100]


def test_pagination_large_values_under_grpc_limit(store: EtcdStore) -> None:
    # 24 values of 400 kB: 9.6 MB in all, over the 4 MiB default gRPC message limit.
    value = os.urandom(400_000)
    store.put_many((b"big%02d" % i, value) for i in range(24))
    got = list(store.scan())
    assert [k for k, _ in got] == [b"big%02d" % i for i in range(24)]
    assert all(v == value for _, v in got)
    assert len(list(store.scan(reverse=True))) == 24


def test_scan_is_one_consistent_revision(store: EtcdStore) -> None:
    store.put_many((b"c%04d" % i, b"old") for i in range(1000))
    it = store.scan()
    first = next(it)
    store.put(b"c0999", b"new")
    store.put(b"c9999", b"added")
    rest = list(it)
    assert first == (b"c0000", b"old")
    assert len(rest) == 999 and all(v == b"old" for _, v in rest)


def test_delete_range_native(store: EtcdStore) -> None:
    store.put_many((k, b"v") for k in BINARY_KEYS)
    store.delete_range(b"\x00\x00", b"\x80")
    assert [k for k, _ in store.scan()] == [b"\x00", b"\x80", b"\xff", b"\xff\xff"]
    store.delete_range(b"\xff", None)
    assert [k for k, _ in store.scan()] == [b"\x00", b"\x80"]
    store.delete_range(b"z", b"a")  # empty range: nothing
    store.delete_range(b"", b"\x01")
    assert [k for k, _ in store.scan()] == [b"\x80"]
    assert store.capabilities.native_delete_range


# -- batches --------------------------------------------------------------------


def test_write_atomic_batch_last_op_per_key_wins(store: EtcdStore) -> None:
    store.put(b"gone", b"x")
    store.write([(b"a", b"1"), (b"b", b"2"), (b"a", b"3"), (b"gone", None), (b"b", None), (b"b", b"4")])
    assert _all(store) == [(b"a", b"3"), (b"b", b"4")]
    store.write([])


def test_write_128_ok_129_refused(store: EtcdStore) -> None:
    store.write([(b"w%03d" % i, b"v") for i in range(128)])
    assert len(_all(store)) == 128
    store.delete_range(b"", None)
    with pytest.raises(TransactionTooLarge, match=r"129 .*128"):
        store.write([(b"w%03d" % i, b"v") for i in range(129)])
    assert _all(store) == []
    # 129 ops that merge to 128 keys fit
    store.write([(b"w%03d" % i, b"v") for i in range(128)] + [(b"w000", b"again")])
    assert store.get(b"w000") == b"again"


def test_write_over_request_bytes_refused(store: EtcdStore) -> None:
    value = b"v" * 600_000
    with pytest.raises(TransactionTooLarge, match="1572864"):
        store.write([(b"a", value), (b"b", value), (b"c", value)])
    assert _all(store) == []


def test_put_many_batches_and_is_complete(store: EtcdStore) -> None:
    items = [(b"m%04d" % (i % 700), b"%d" % i) for i in range(1000)]
    assert store.put_many(items) == 1000
    got = dict(_all(store))
    assert len(got) == 700
    assert got[b"m0000"] == b"700" and got[b"m0299"] == b"999" and got[b"m0300"] == b"300"
    big = os.urandom(500_000)
    store.put_many((b"big%d" % i, big) for i in range(7))  # 3.5 MB: several transactions
    assert all(store.get(b"big%d" % i) == big for i in range(7))


# -- keys and limits ------------------------------------------------------------


def test_empty_key(store: EtcdStore) -> None:
    assert not store.capabilities.empty_keys
    with pytest.raises(InvalidKey):
        store.put(b"", b"v")
    assert store.get(b"") is None
    with pytest.raises(InvalidKey):
        store.delete(b"")
    with pytest.raises(InvalidKey):
        store.write([(b"", b"v")])
    with pytest.raises(InvalidKey), store.transaction() as tx:
        tx.put(b"", b"v")


def test_key_size_limit(store: EtcdStore) -> None:
    assert store.capabilities.max_key_size == MAX_KEY_SIZE
    assert 1_500_000 < MAX_KEY_SIZE < 1_572_864
    big = b"K" * MAX_KEY_SIZE
    store.put(big, b"")
    assert store.get(big) == b""
    store.delete(big)
    with pytest.raises(KeyTooLarge, match=str(MAX_KEY_SIZE)):
        store.put(big + b"K", b"")
    with pytest.raises(TransactionTooLarge):
        store.put(b"k", b"v" * (MAX_KEY_SIZE + 200))
    assert _all(store) == []


def test_key_prefix_isolates_stores(cluster: LocalCluster, store: EtcdStore) -> None:
    store.put(b"outside", b"0")
    one = EtcdStore(cluster.url + "/ns%00one/")
    two = EtcdStore(cluster.url + "/ns%00two/")
    try:
        assert one.options.prefix == b"ns\x00one/"
        assert one.capabilities.empty_keys and one.capabilities.max_key_size == MAX_KEY_SIZE - 7
        one.put(b"", b"empty")
        one.write([(b"a", b"1"), (b"\xff", b"2")])
        two.put(b"a", b"other")
        assert list(one.scan()) == [(b"", b"empty"), (b"a", b"1"), (b"\xff", b"2")]
        assert list(one.scan(reverse=True, limit=2)) == [(b"\xff", b"2"), (b"a", b"1")]
        assert list(two.scan()) == [(b"a", b"other")]
        with one.transaction() as tx:
            tx.delete_range(b"", None)
            tx.put(b"a", b"kept")
        assert list(one.scan()) == [(b"a", b"kept")]
        one.delete_range(b"", None)
        assert list(one.scan()) == [] and two.get(b"a") == b"other"
        assert [k for k, _ in store.scan()] == [b"ns\x00two/a", b"outside"]
    finally:
        one.close()
        two.close()


def test_capabilities(store: EtcdStore) -> None:
    caps = store.capabilities
    assert caps.atomic_batch and caps.snapshots and caps.persistent and caps.multi_process
    assert caps.max_batch_ops == 128


# -- snapshots and transactions -------------------------------------------------


def test_snapshot_is_fixed(store: EtcdStore) -> None:
    store.put_many([(b"a", b"1"), (b"b", b"2")])
    with store.snapshot() as snap:
        store.put(b"a", b"changed")
        store.delete(b"b")
        store.put(b"c", b"3")
        assert snap.get(b"a") == b"1"
        assert snap.get(b"b") == b"2"
        assert snap.get(b"c") is None
        assert list(snap.scan()) == [(b"a", b"1"), (b"b", b"2")]
        assert list(snap.scan(reverse=True, limit=1)) == [(b"b", b"2")]
    assert _all(store) == [(b"a", b"changed"), (b"c", b"3")]


def test_transaction_reads_own_writes_and_commits(store: EtcdStore) -> None:
    store.put_many([(b"a", b"1"), (b"b", b"2"), (b"c", b"3")])
    with store.transaction() as tx:
        tx.put(b"b", b"20")
        tx.delete(b"c")
        tx.put(b"d", b"4")
        assert tx.get(b"b") == b"20" and tx.get(b"c") is None
        assert list(tx.scan()) == [(b"a", b"1"), (b"b", b"20"), (b"d", b"4")]
        assert list(tx.scan(reverse=True, limit=2)) == [(b"d", b"4"), (b"b", b"20")]
        assert store.get(b"b") == b"2"  # not yet committed
    assert _all(store) == [(b"a", b"1"), (b"b", b"20"), (b"d", b"4")]


def test_transaction_discards_on_error(store: EtcdStore) -> None:
    store.put(b"a", b"1")
    with pytest.raises(RuntimeError), store.transaction() as tx:
        tx.put(b"a", b"2")
        tx.delete_range(b"", None)
        raise RuntimeError("boom")
    assert _all(store) == [(b"a", b"1")]


def test_transaction_delete_range_then_put_inside(store: EtcdStore) -> None:
    store.put_many((b"r%02d" % i, b"old") for i in range(10))
    with store.transaction() as tx:
        tx.delete_range(b"r02", b"r08")
        tx.put(b"r03", b"new")
        tx.put(b"r07", b"new")
        tx.delete(b"r05")
        assert [k for k, _ in tx.scan()] == [b"r00", b"r01", b"r03", b"r07", b"r08", b"r09"]
    assert [k for k, _ in store.scan()] == [b"r00", b"r01", b"r03", b"r07", b"r08", b"r09"]
    assert store.get(b"r03") == b"new"


def test_transaction_conflict_on_changed_key(store: EtcdStore) -> None:
    store.put(b"counter", b"1")
    with pytest.raises(TransactionConflict), store.transaction() as tx:
        value = tx.get(b"counter")
        store.put(b"counter", b"other writer")
        tx.put(b"counter", (value or b"") + b"+1")
    assert store.get(b"counter") == b"other writer"


def test_transaction_conflict_on_deleted_and_created_keys(store: EtcdStore) -> None:
    store.put(b"x", b"1")
    with pytest.raises(TransactionConflict), store.transaction() as tx:
        assert tx.get(b"x") == b"1"
        store.delete(b"x")
        tx.put(b"y", b"2")
    with pytest.raises(TransactionConflict), store.transaction() as tx:
        assert tx.get(b"absent") is None
        store.put(b"absent", b"now here")
        tx.put(b"y", b"2")
    assert store.get(b"y") is None


def test_transaction_conflict_on_scanned_range(store: EtcdStore) -> None:
    store.put_many([(b"s1", b"1"), (b"s3", b"3")])
    with pytest.raises(TransactionConflict), store.transaction() as tx:
        assert len(list(tx.scan(b"s", b"t"))) == 2
        store.put(b"s2", b"phantom")
        tx.put(b"summary", b"2 keys")
    with pytest.raises(TransactionConflict), store.transaction() as tx:
        assert len(list(tx.scan(b"s", b"t"))) == 3
        store.delete(b"s1")
        tx.put(b"summary", b"3 keys")
    assert store.get(b"summary") is None


def test_transaction_blind_writes_do_not_conflict(store: EtcdStore) -> None:
    with store.transaction() as tx:
        tx.put(b"a", b"mine")
        store.put(b"a", b"theirs")
        tx.put(b"b", b"mine")
    assert _all(store) == [(b"a", b"mine"), (b"b", b"mine")]
    with store.transaction() as tx:  # unrelated reads stay valid
        tx.get(b"b")
        store.put(b"c", b"unrelated")
        tx.put(b"b", b"again")
    assert store.get(b"b") == b"again"


def test_transaction_too_large(store: EtcdStore) -> None:
    with pytest.raises(TransactionTooLarge, match="129 operations"), store.transaction() as tx:
        for i in range(129):
            tx.put(b"t%03d" % i, b"v")
    assert _all(store) == []
    with store.transaction() as tx:
        for i in range(128):
            tx.put(b"t%03d" % i, b"v")
    assert len(_all(store)) == 128


def test_transaction_commit_retried_after_lost_answer(
    store: EtcdStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first commit reaches etcd but its answer is lost: the re-read finds it
    applied, so the commit succeeds without applying twice."""
    store.put(b"n", b"1")
    real_call = store._conn.call
    lost: list[str] = []

    def flaky(what: str, method: object, request: object, *, retry: bool = True) -> object:
        response = real_call(what, method, request, retry=retry)  # type: ignore[arg-type]
        if what == "commit" and not lost:
            lost.append(what)
            raise EtcdUnavailable("commit: simulated lost answer")
        return response

    monkeypatch.setattr(store._conn, "call", flaky)
    with store.transaction() as tx:
        value = int(tx.get(b"n") or b"0")
        tx.put(b"n", b"%d" % (value + 1))
    assert lost and store.get(b"n") == b"2"


def test_transaction_commit_retried_when_not_applied(
    store: EtcdStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.put(b"n", b"1")
    real_call = store._conn.call
    failed: list[str] = []

    def flaky(what: str, method: object, request: object, *, retry: bool = True) -> object:
        if what == "commit" and not failed:
            failed.append(what)
            raise EtcdUnavailable("commit: simulated failure before sending")
        return real_call(what, method, request, retry=retry)  # type: ignore[arg-type]

    monkeypatch.setattr(store._conn, "call", flaky)
    with store.transaction() as tx:
        tx.put(b"n", b"%d" % (int(tx.get(b"n") or b"0") + 1))
    assert failed and store.get(b"n") == b"2"


# -- lifecycle, URLs, errors ----------------------------------------------------


def test_closed_store(cluster: LocalCluster) -> None:
    s = EtcdStore(cluster.url)
    s.close()
    s.close()
    for call in (
        lambda: s.get(b"a"),
        lambda: s.put(b"a", b"b"),
        lambda: s.delete(b"a"),
        lambda: s.delete_range(b"a", b"b"),
        lambda: list(s.scan()),
        lambda: s.write([(b"a", b"b")]),
        lambda: s.transaction(),
        lambda: s.snapshot(),
    ):
        with pytest.raises(StoreClosed):
            call()


def test_open_store_dispatches_etcd_urls(cluster: LocalCluster) -> None:
    with open_store(cluster.url) as s:
        assert isinstance(s, EtcdStore)
        assert s.get(b"\x00never") is None


def test_url_parsing() -> None:
    opts = parse_etcd_url("etcd://a:1,b,[::1]:3?timeout=0.5&retry_budget=4")
    assert opts.endpoints == (("a", 1), ("b", 2379), ("::1", 3))
    assert opts.timeout == 0.5 and opts.retry_budget == 4
    assert parse_etcd_url("etcd://a:1", timeout=9).timeout == 9
    for bad in ("http://a:1", "etcd://", "etcd://a:x", "etcd://a:1?colour=red", "etcd://a:99999"):
        with pytest.raises(ValueError):
            parse_etcd_url(bad)


def test_readonly_and_numbers_in_the_url(cluster: LocalCluster) -> None:
    """``?readonly=true``, an option of every store, was refused as an unknown
    etcd option; a number option that is not one said "could not convert string
    to float", and an empty one was dropped."""
    with open_store(cluster.url) as s:
        s.put(b"ro-key", b"v")
    for url in (f"{cluster.url}?readonly=true", f"{cluster.url}?timeout=5&readonly=yes&retry_budget=9"):
        with open_store(url) as ro:
            assert ro.get(b"ro-key") == b"v"
            with pytest.raises(StoreError, match="read-only"):
                ro.put(b"ro-key", b"w")
    with open_store(cluster.url) as s:
        assert s.get(b"ro-key") == b"v"
        s.delete(b"ro-key")
    for name, value, kind in (
        ("timeout", "abc", "a number"),
        ("timeout", "", "a number"),
        ("max_attempts", "x", "an integer"),
    ):
        with pytest.raises(StoreError, match=rf"{name}='{value}' is not {kind}"):
            open_store(f"{cluster.url}?{name}={value}")


def test_unreachable_cluster_fails_within_budget() -> None:
    with EtcdStore("etcd://127.0.0.1:1", timeout=0.2, retry_budget=1.0) as s:
        started = time.monotonic()
        with pytest.raises(StoreError, match="UNAVAILABLE") as info:
            s.get(b"a")
        assert time.monotonic() - started < 3
        assert isinstance(info.value.__cause__, grpc.RpcError)


# -- the shared conformance suite ----------------------------------------------


class TestEtcdStore(StoreSuite):
    """The conformance suite; each store is isolated under its own random key prefix
    (``etcd://…/t-<hex>/``), deleted when the test ends."""

    @pytest.fixture
    def make_store(self, cluster: LocalCluster) -> Iterator[MakeStore]:
        prefixes: list[bytes] = []

        def make(url: str | None = None) -> Store:
            if url is None:
                name = f"t-{uuid.uuid4().hex[:16]}/"
                prefixes.append(name.encode())
                url = f"{cluster.url}/{name}"
            return EtcdStore(url)

        yield make
        with EtcdStore(cluster.url) as admin:
            for prefix in prefixes:
                admin.delete_range(prefix, prefix_end(prefix))


@pytest.mark.parametrize("prefixed", [False, True], ids=["no prefix", "prefix"])
def test_no_scope_key_is_stored_at_the_revision_probe_key(
    cluster: LocalCluster, store: EtcdStore, prefixed: bool
) -> None:
    """``keyspace grant`` lets every user read the probe key (a snapshot or a
    transaction reads it to learn the revision): a scope's key stored there (an
    AsciiHex scope ``("",)``'s key ``b""``, a Sublevel root's ``00`` or, under a
    prefix, its empty key) was read by every granted user. The store reserves it.
    (``store``: the cluster's root, emptied before and after.)"""
    import keyspace
    from keyspace.errors import ReservedKey
    from keyspace.schemes import AsciiHex, Sublevel

    url = f"{cluster.url}/probe-{uuid.uuid4().hex}" if prefixed else cluster.url
    with EtcdStore(url) as raw:
        probe = raw.probe_key()[len(raw._prefix) :]
        assert raw.capabilities.reserved == ((probe, probe + b"\x00"),)
    cases = [(Sublevel(), (), probe)] + ([(AsciiHex(), ("",), b"")] if not prefixed else [])
    for scheme, path, key in cases:
        with keyspace.open(url, scheme=scheme) as ks:
            scope = ks.scope(*path)
            with pytest.raises(ReservedKey, match="probe key"):
                scope[key] = b"secret"
            with pytest.raises(ReservedKey):
                scope.get(key)
            assert key not in list(scope.keys()) and len(scope) == 0
    with EtcdStore(url) as raw:
        assert raw.get(probe) is None
        if prefixed:
            raw.delete_range(b"", None)


def test_a_bound_longer_than_any_key(store: EtcdStore) -> None:
    """A 3 MB scan or delete bound was sent as it was and failed with gRPC's
    "Sent message larger than max" (an internal error); it is sent as the bound
    that holds the same keys."""
    from keyspace.stores.etcd._plan import MAX_KEY_SIZE as ETCD_KEY_MOST
    from keyspace.stores.etcd._plan import etcd_bounds

    long = b"k" * 3_000_000
    store.write([(b"a", b"1"), (b"k", b"2"), (b"kl", b"3"), (b"z", b"4")])
    assert [k for k, _ in store.scan(long)] == [b"kl", b"z"]
    assert [k for k, _ in store.scan(b"", long)] == [b"a", b"k"]
    assert [k for k, _ in store.scan(long, reverse=True)] == [b"z", b"kl"]
    assert list(store.scan(long, long + b"x")) == []
    assert list(store.scan(b"\xff" * 3_000_000)) == []
    store.delete_range(long, None)
    assert [k for k, _ in store.scan()] == [b"a", b"k"]
    for prefix in (b"", b"p/"):
        low, _ = etcd_bounds(prefix, long, None) or (b"", b"")
        assert len(low) <= ETCD_KEY_MOST and low == (prefix + long)[: ETCD_KEY_MOST - 1] + b"l"
    assert etcd_bounds(b"", b"\xff" * 3_000_000, None) is None
    assert etcd_bounds(b"", b"a", b"\xff" * 3_000_000) == (b"a", b"\x00")
