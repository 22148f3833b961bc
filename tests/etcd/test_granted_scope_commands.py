"""A user granted one scope (``keyspace grant``), in every scheme, on every
command: each method of the scope API and each data command of the CLI works on
the granted scope and is refused by the server on the scope next door
(:class:`AccessDenied`, exit status 1 with the reason), and the other scope's
keys stay byte for byte.

The cluster is one member of this module's own, with authentication on, stopped
by PID at the end (ports from ``KEYSPACE_ETCD_AUDIT_CLIENT_BASE`` /
``KEYSPACE_ETCD_AUDIT_PEER_BASE`` when set, else free ones)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _etcd import ROOT_PASSWORD, auth_cluster

import keyspace
from keyspace import access
from keyspace.cli import main
from keyspace.errors import AccessDenied, TransactionTooLarge
from keyspace.stores.etcd._proto import kv_pb2 as pb
from keyspace.stores.etcd._versions import access_gaps, nested_txn_checked, watch_range_checked
from keyspace.stores.etcd._watch import EtcdWatch
from keyspace.testing.etcd_cluster import LocalCluster

pytestmark = [pytest.mark.etcd, pytest.mark.timeout(120)]

SCHEMES = ["tuple", "scopehash", "sublevel", "asciihex", "length-prefixed"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    yield from auth_cluster(port_env=("KEYSPACE_ETCD_AUDIT_CLIENT_BASE", "KEYSPACE_ETCD_AUDIT_PEER_BASE"))


def _url(cluster: LocalCluster, user: str, password: str, prefix: str) -> str:
    return f"etcd://{user}:{password}@{','.join(cluster.endpoints)}/{prefix}"


def _path(scheme: str, name: str) -> tuple[str, ...]:
    return (name,) if scheme == "scopehash" else (name, "users")  # ScopeHash: one level


def _tx(ks: keyspace.Keyspace, path: tuple[str, ...]) -> None:
    with ks.transaction() as tx:
        scope = tx.scope(*path)
        scope[b"t"] = b"1"
        del scope[b"t"]


def _snapshot(ks: keyspace.Keyspace, path: tuple[str, ...]) -> int:
    with ks.snapshot() as snap:
        return len(snap.scope(*path))


_OPERATIONS: dict[str, Callable[[keyspace.Keyspace, Any], Any]] = {
    "len": lambda ks, s: len(s),
    "keys": lambda ks, s: list(s.keys()),
    "prefix": lambda ks, s: list(s.keys(prefix=b"k")),
    "reverse": lambda ks, s: list(s.items(reverse=True, limit=1)),
    "get": lambda ks, s: s.get(b"k1"),
    "in": lambda ks, s: b"k1" in s,
    "==": lambda ks, s: s == {},
    "setdefault": lambda ks, s: s.setdefault(b"k3", b"n"),
    "pop": lambda ks, s: s.pop(b"k3", None),
    "update": lambda ks, s: s.update({b"k1": b"v1"}),
    "clear_range": lambda ks, s: s.clear_range(start=b"zz"),
    "scopes": lambda ks, s: s.scopes(),
    "subtree": lambda ks, s: list(s.subtree()),
    "transaction": lambda ks, s: _tx(ks, s.path),
    "snapshot": lambda ks, s: _snapshot(ks, s.path),
    "popitem": lambda ks, s: s.popitem(),  # last: takes a key of the granted scope
}


@pytest.mark.filterwarnings("ignore::keyspace.access.ServerAccessWarning")  # shown by the last test
@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_granted_user_reaches_its_scope_and_never_the_next(cluster: LocalCluster, scheme: str) -> None:
    prefix, user = f"tenants-{scheme}", f"alice-{scheme}"
    mine, theirs = _path(scheme, "acme"), _path(scheme, "globex")
    with keyspace.open(_url(cluster, "root", ROOT_PASSWORD, prefix), scheme=scheme) as root:
        for path in (mine, theirs):
            root.scope(*path).update({b"k1": b"v1", b"k2": b"v2"})
        access.grant(root, mine[:1], user=user, password="pw")
        before = _theirs(root, theirs)
        assert before
        tenant_url = _url(cluster, user, "pw", prefix)
        with keyspace.open(tenant_url, scheme=scheme) as ks:
            for what, operation in _OPERATIONS.items():
                operation(ks, ks.scope(*mine))  # works
                with pytest.raises(AccessDenied, match="refused by the etcd server"):
                    operation(ks, ks.scope(*theirs))
                    pytest.fail(f"{what} on the next scope was allowed")
            with pytest.raises(AccessDenied):
                ks.scope(*theirs[:1]).drop()
            for command in ("get", "delete", "put", "scan"):
                argv = [command, tenant_url, *theirs, "--scheme", scheme]
                argv += {
                    "get": ["--key", "k1"],
                    "delete": ["--key", "k1"],
                    "put": ["--key", "k1", "--value", "x"],
                }.get(command, [])
                code, err = _run(argv)
                assert code == 1 and "refused by the etcd server" in err, (command, err)
            assert _run(["put", tenant_url, *mine, "--key", "k9", "--value", "x", "--scheme", scheme])[0] == 0
            assert _run(["delete", tenant_url, *mine, "--key", "k9", "--scheme", scheme])[0] == 0
            ks.scope(*mine[:1]).drop()
            assert dict(root.scope(*mine).items()) == {}
        after = _theirs(root, theirs)
        assert after == before


def _theirs(root: keyspace.Keyspace, path: tuple[str, ...]) -> list[tuple[bytes, bytes]]:
    """The stored keys and values of the subtree of ``path``'s first name (and its
    ScopeHash registry entry), read raw as root."""
    start, stop = root.scheme.subtree_range(path[:1])
    found = list(root.store.scan(start, stop))
    anchor = root.scheme.prefix(path[:1])
    value = root.store.get(anchor)
    assert found
    return found + (
        [(anchor, value)] if value is not None and not start <= anchor < (stop or anchor + b"\x00") else []
    )


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


@pytest.mark.parametrize(
    ("version", "checked"),
    [
        ("3.4.23", False),
        ("3.4.41", False),
        ("3.4.42", True),
        ("3.5.27", False),
        ("3.5.28", True),
        ("3.6.8", False),
        ("3.6.9", True),
        ("3.7.0", True),
        ("3.3.25", False),
        ("3.6.9-rc.1", True),
        ("", False),
        ("3.4", False),
        ("not a version", False),
    ],
)
def test_which_etcd_versions_check_nested_transactions(version: str, checked: bool) -> None:
    assert nested_txn_checked(version) is checked


@pytest.mark.parametrize(
    ("version", "checked"),
    [
        ("3.4.42", False),
        ("3.5.32", False),
        ("3.5.33", True),
        ("3.6.13", False),
        ("3.6.14", True),
        ("3.7.0", False),
        ("3.7.1", True),
        ("3.8.0", True),
        ("x", False),
    ],
)
def test_which_etcd_versions_check_open_ended_watches(version: str, checked: bool) -> None:
    assert watch_range_checked(version) is checked
    assert (len(access_gaps(version)) == 0) is (checked and nested_txn_checked(version))


def test_a_restricted_users_commit_is_never_nested_where_the_server_would_not_check_it(
    cluster: LocalCluster,
) -> None:
    """etcd before 3.4.42 / 3.5.28 / 3.6.9 does not check the permissions of the
    operations inside a nested ``Txn`` (GHSA-rfx7-8w68-q57q). A commit of more than 128
    deletes is nested to stay one ``Txn``; for a restricted user on such a server
    it is not, so a transaction deleting another scope's keys is refused whole
    (before nesting was restricted that way, it deleted them all), and a delete
    of the user's own scope still runs, range by range. ``grant`` warns."""
    prefix, user = "tenants-nesting", "dave"
    mine, theirs = ("acme", "users"), ("globex", "users")
    keys = {b"k%03d" % i: b"v" for i in range(200)}
    with keyspace.open(_url(cluster, "root", ROOT_PASSWORD, prefix), scheme="asciihex") as root:
        for path in (mine, theirs):
            for start in range(0, 200, 100):
                root.scope(*path).update(dict(list(keys.items())[start : start + 100]))
        version = str(root.store.status()["version"])  # type: ignore[attr-defined]
        checked = nested_txn_checked(version)
        if checked:
            access.grant(root, mine[:1], user=user, password="pw")
        else:
            with pytest.warns(access.ServerAccessWarning, match="GHSA-rfx7-8w68-q57q"):
                access.grant(root, mine[:1], user=user, password="pw")
        before = _theirs(root, theirs)
        tenant_url = _url(cluster, user, "pw", prefix)
        with keyspace.open(tenant_url, scheme="asciihex") as ks:
            # what the server does with a nested delete outside the grant
            outside = ks.store.etcd_key(root.scheme.encode(theirs, b"k000"))  # type: ignore[attr-defined]
            conn = ks.store._conn  # type: ignore[attr-defined]
            nested = pb.TxnRequest(
                success=[
                    pb.RequestOp(
                        request_txn=pb.TxnRequest(
                            success=[pb.RequestOp(request_range=pb.RangeRequest(key=outside))]
                        )
                    )
                ]
            )
            try:
                conn.call("nested read", conn.kv.Txn, nested)
                read_outside = True
            except AccessDenied:
                read_outside = False
            assert read_outside is not checked
            assert conn.may_nest() is checked
            # and with an open-ended watch from the first key of its grant
            low = ks.store.etcd_range(*root.scheme.subtree_range(mine[:1]))[0]  # type: ignore[attr-defined]
            watch = EtcdWatch(conn, (low, b"\x00"), len(prefix), [(b"", None)], None)
            try:
                assert watch.wait_started(10)
                root.scope("zzz")[b"secret"] = b"z"  # a scope after acme's
                event = watch.get(2)
                assert (event is not None) is not watch_range_checked(version)
            except AccessDenied:
                assert watch_range_checked(version)
            finally:
                watch.close()
            with pytest.raises((AccessDenied, TransactionTooLarge)), ks.transaction() as tx:
                other = tx.scope(*theirs)
                for key in keys:
                    other.discard(key)
            ks.scope(*mine).clear()  # 200 keys: nested, or range by range
            assert len(root.scope(*mine)) == 0
        assert _theirs(root, theirs) == before
        code, err = _run(
            [
                "grant",
                _url(cluster, "root", ROOT_PASSWORD, prefix),
                *mine[:1],
                "--user",
                user,
                "--scheme",
                "asciihex",
            ]
        )
        assert code == 0
        assert ("warning:" in err and "GHSA-rfx7-8w68-q57q" in err) is not checked
