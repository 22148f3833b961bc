"""TLS, authentication and per-scope access on a 3-member etcd cluster that this
module starts (client TLS with client certificates, auth on, short token TTL) and
stops by PID. Certificates are made here.

Tenant A's credentials read and write A's scopes and are refused by the server on
B's scopes, on the ``ff``-tail edge names next to A's, and on the root; root sees
everything; a plain-text client, a wrong password and a wrong certificate are
refused at open, with one attempt.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import grpc
import pytest
from _etcd import own_cluster
from _tls import Pki, make_pki
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
import keyspace.aio
from keyspace import _metadata, access
from keyspace.cli import main
from keyspace.errors import AccessDenied, AuthenticationFailed, StoreError
from keyspace.schemes import scheme_from_name
from keyspace.stores.etcd import EtcdStore
from keyspace.stores.etcd._rpc import EtcdUnavailable, translate
from keyspace.testing.etcd_cluster import LocalCluster, ServerTLS
from keyspace.tuples import pack

# grant's warning about the test server's own access gaps is asserted in
# test_granted_scope_commands.py; here it would only repeat
pytestmark = [
    pytest.mark.etcd,
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore::keyspace.access.ServerAccessWarning"),
]

ROOT_PASSWORD = "root pw:@/?"  # characters that need percent-encoding in a URL
TOKEN_TTL = 2


@dataclass
class Secure:
    cluster: LocalCluster
    pki: Pki

    def url(
        self, user: str | None = None, password: str | None = None, prefix: str = "", **files: Path
    ) -> str:
        tls = {"cacert": self.pki.ca, "cert": self.pki.client_cert, "key": self.pki.client_key, **files}
        query = "&".join(f"{k}={quote(str(v))}" for k, v in tls.items())
        who = f"{quote(user, safe='')}:{quote(password or '', safe='')}@" if user else ""
        return f"etcd://{who}{','.join(self.cluster.endpoints)}{'/' + prefix if prefix else ''}?{query}"


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secure]:
    pki = make_pki(tmp_path_factory.mktemp("pki"))
    tls = ServerTLS(pki.ca, pki.server_cert, pki.server_key)
    with own_cluster(
        3,
        tls=tls,
        health_context=tls.context(pki.client_cert, pki.client_key),
        extra_args=("--auth-token-ttl", str(TOKEN_TTL), "--bcrypt-cost", "4"),
        port_env=("KEYSPACE_ETCD_TLS_CLIENT_BASE", "KEYSPACE_ETCD_TLS_PEER_BASE"),
    ) as cluster:
        env = Secure(cluster, pki)
        admin = EtcdStore(env.url())
        try:
            admin.access().enable(ROOT_PASSWORD)
        finally:
            admin.close()
        yield env


@pytest.fixture(scope="module")
def root(secure: Secure) -> Iterator[keyspace.Keyspace]:
    ks = keyspace.open(secure.url("root", ROOT_PASSWORD))
    ks.scope("admin")[b"a"] = b"A's"  # records the scheme, as root
    for name in ("admin2", "admin\xff", "admin\x00", "admim", "admio", "B"):
        ks.scope(name)[b"k"] = name.encode("utf-8", "surrogatepass")
    ks.scope()[b"root-key"] = b"root"
    access.grant(ks, ("admin",), user="alice", password="alice-pw")
    access.grant(ks, ("B",), user="bob", password="bob-pw", read_only=True)
    yield ks
    ks.close()


@pytest.fixture
def alice(secure: Secure, root: keyspace.Keyspace) -> Iterator[keyspace.Keyspace]:
    ks = keyspace.open(secure.url("alice", "alice-pw"))
    yield ks
    ks.close()


def _everything(root: keyspace.Keyspace) -> list[tuple[bytes, bytes]]:
    return list(root.store.scan())


# -- tenant isolation, enforced by the server ------------------------------------------


def test_tenant_works_inside_its_scope(alice: keyspace.Keyspace) -> None:
    a = alice.scope("admin")
    a[b"new"] = b"1"
    a.scope("deep", 3)[b"x"] = b"2"
    assert a[b"a"] == b"A's" and dict(a.items()) == {b"a": b"A's", b"new": b"1"}
    assert a.scopes() == ["deep"]
    with alice.transaction() as tx:
        s = tx.scope("admin")
        s[b"counter"] = b"%d" % (int(s.get(b"counter", b"0")) + 1)
    with alice.snapshot() as snap:
        assert snap.scope("admin")[b"counter"] == b"1"
    with a.watch() as w:
        w.store_watch.wait_started(10)  # type: ignore[attr-defined]
        a[b"watched"] = b"w"
        event = w.get(10)
        assert event is not None and event.key == b"watched"
    a.scope("deep").drop()
    del a[b"new"], a[b"counter"], a[b"watched"]


@pytest.mark.parametrize("scheme", ["sublevel", "length-prefixed"])
def test_tenant_opens_a_keyspace_whose_scheme_keeps_no_record(
    secure: Secure, root: keyspace.Keyspace, scheme: str
) -> None:
    """Opening a keyspace of a scheme with no record scanned the whole store, which
    a user granted one scope may not: the open was refused with AccessDenied."""
    prefix, user = f"apps-{scheme}", f"carol-{scheme}"
    with keyspace.open(secure.url("root", ROOT_PASSWORD, prefix=prefix), scheme=scheme) as admin:
        admin.scope("acme", "users")[b"k"] = b"acme's"
        admin.scope("globex", "users")[b"k"] = b"globex's"
        access.grant(admin, ("acme",), user=user, password="carol-pw")
        before = list(admin.store.scan())
    with keyspace.open(secure.url(user, "carol-pw", prefix=prefix), scheme=scheme) as carol:
        users = carol.scope("acme", "users")
        assert users[b"k"] == b"acme's"
        users[b"k2"] = b"carol's"
        assert dict(users.items()) == {b"k": b"acme's", b"k2": b"carol's"}
        for next_door in (
            lambda: carol.scope("globex", "users")[b"k"],
            lambda: list(carol.scope("globex", "users").items()),
        ):
            with pytest.raises(AccessDenied):
                next_door()
        del users[b"k2"]
    with keyspace.open(secure.url("root", ROOT_PASSWORD, prefix=prefix), scheme=scheme) as admin:
        assert list(admin.store.scan()) == before


@pytest.mark.parametrize("name", ["admin2", "admin\xff", "admin\x00", "admim", "admio", "B"])
def test_tenant_is_refused_next_door(alice: keyspace.Keyspace, root: keyspace.Keyspace, name: str) -> None:
    before = _everything(root)
    other = alice.scope(name)
    operations = {
        "get": lambda: other.get(b"k"),
        "put": lambda: other.__setitem__(b"k", b"stolen"),
        "delete": lambda: other.discard(b"k"),
        "scan": lambda: list(other.items()),
        "drop": other.drop,
        "scopes": other.scopes,
        "update": lambda: other.update({b"x": b"1"}),
        "watch": lambda: other.watch().get(10),
    }
    for what, operation in operations.items():
        with pytest.raises(AccessDenied, match="refused by the etcd server"):
            operation()
            pytest.fail(f"{what} on {name!r} was allowed")
    assert _everything(root) == before


def test_tenant_is_refused_on_the_root(alice: keyspace.Keyspace, root: keyspace.Keyspace) -> None:
    before = _everything(root)
    for operation in (
        lambda: alice.scope().scopes(),
        lambda: alice.scope().get(b"root-key"),
        lambda: alice.scope()[b"root-key"],
        lambda: alice.scope().drop(),
        lambda: list(alice.scope().subtree()),
        lambda: alice.store.delete_range(b"", None),
    ):
        with pytest.raises(AccessDenied):
            operation()
    with pytest.raises(AccessDenied), alice.transaction() as tx:  # one key outside A: all refused
        tx.scope("admin")[b"ok"] = b"1"
        tx.scope("B")[b"k"] = b"stolen"
    assert _everything(root) == before


def test_a_tenants_watch_of_every_key_is_refused(alice: keyspace.Keyspace) -> None:
    """A watch of the whole store began at the revision probe key, which every
    granted user may read: an etcd before 3.5.33 checks a watch to the end of the
    keys as a watch of its first key, and let alice see every change (the root of
    a Sublevel or LengthPrefixed keyspace asks for that range). It now starts after
    the probe key, which holds no scope's key, so the server checks the rest."""
    with pytest.raises(AccessDenied):
        alice.store.watch([(b"", None)]).get(10)


def test_read_only_grant(secure: Secure, root: keyspace.Keyspace) -> None:
    bob = keyspace.open(secure.url("bob", "bob-pw"))
    try:
        assert bob.scope("B")[b"k"] == b"B"
        with pytest.raises(AccessDenied):
            bob.scope("B")[b"k"] = b"changed"
        with pytest.raises(AccessDenied):
            bob.scope("admin").get(b"a")
    finally:
        bob.close()
    assert root.scope("B")[b"k"] == b"B"


def test_passwords_stay_out_of_urls_and_messages(root: keyspace.Keyspace, secure: Secure) -> None:
    assert ROOT_PASSWORD not in root.url and quote(ROOT_PASSWORD, safe="") not in root.url
    assert "root:***@" in root.url and quote(ROOT_PASSWORD, safe="") not in repr(root.store)
    with pytest.raises(AuthenticationFailed) as info:
        keyspace.open(secure.url("alice", "wrong-secret"))
    assert "wrong-secret" not in str(info.value)


def test_root_sees_everything(root: keyspace.Keyspace) -> None:
    assert set(root.scope().scopes()) >= {"admin", "admin2", "admin\xff", "admin\x00", "admim", "admio", "B"}
    assert root.scope().get(b"root-key") == b"root"


def test_grant_is_exactly_the_subtree_range(root: keyspace.Keyspace) -> None:
    perms = access.permissions(root, "alice")
    assert perms is not None
    start, stop = root.scheme.subtree_range(("admin",))
    assert any(p.key == start and p.range_end == stop and p.write for p in perms)
    # and the sequencing keys of the subtree's appends: the same range under their base
    appends = b"\xffkeyspace-append\x00" + pack((root.scheme.raw_prefix,))
    assert any(p.key == appends + start and p.range_end == appends + stop and p.write for p in perms)
    writable = [p for p in perms if p.write]
    assert len(writable) == 2, writable  # nothing else is writable
    read_only_keys = {p.key for p in perms if not p.write}
    records = b"\xffkeyspace"  # where keyspaces keep their records (the footprint registry)
    layout = (b"\xff\xffkeyspace-layout\x00", b"\xff\xffkeyspace-layout\x01")  # recorded layouts
    # the directory nodes that would name a prefix among the keyspace's keys (read at open)
    store = root.store
    assert isinstance(store, EtcdStore)
    nodes = {store.etcd_range(a, b) for a, b in _metadata.directory_node_ranges(root.scheme)}
    for p in perms:  # read-only: single keys, or ranges inside the records space
        if not p.write and p.range_end:
            inside = p.key.startswith(records) and p.range_end <= b"\xffkeyspacf"
            assert inside or (p.key, p.range_end) == layout or (p.key, p.range_end) in nodes, p
    assert root.scheme.metadata_key in read_only_keys


def test_revoke_then_refused(secure: Secure, root: keyspace.Keyspace) -> None:
    access.grant(root, ("carol",), user="carol", password="carol-pw")
    carol = keyspace.open(secure.url("carol", "carol-pw"))
    try:
        carol.scope("carol")[b"k"] = b"v"
        remaining = access.revoke(root, ("carol",), user="carol")
        assert all(not p.write for p in remaining)
        with pytest.raises(AccessDenied):
            carol.scope("carol").get(b"k")
        access.revoke(root, user="carol")
        assert access.permissions(root, "carol") is None
    finally:
        carol.close()
    assert root.scope("carol")[b"k"] == b"v"


def test_cli_grant_and_revoke(
    secure: Secure, root: keyspace.Keyspace, capsys: pytest.CaptureFixture[str]
) -> None:
    url = secure.url("root", ROOT_PASSWORD)
    assert main(["grant", url, "dave", "--user", "dave", "--password", "dave-pw", "--read-only"]) == 0
    out = capsys.readouterr().out
    start, stop = root.scheme.subtree_range(("dave",))
    assert f"read      [{start.hex()}, {stop.hex()})" in out  # type: ignore[union-attr]
    dave = keyspace.open(secure.url("dave", "dave-pw"))
    try:
        assert dave.scope("dave").get(b"k") is None
        with pytest.raises(AccessDenied):
            dave.scope("dave")[b"k"] = b"v"
    finally:
        dave.close()
    assert main(["revoke", url, "--user", "dave"]) == 0
    assert access.permissions(root, "dave") is None
    assert main(["grant", url, "erin", "--user", "erin"]) == 1  # a new user needs --password
    assert "give a password" in capsys.readouterr().err
    # a tenant cannot grant itself more
    assert main(["grant", secure.url("alice", "alice-pw"), "B", "--user", "alice"]) == 1
    assert "refused by the etcd server" in capsys.readouterr().err


# -- authentication and TLS at open ------------------------------------------------------


def test_wrong_password_fails_at_open_once(secure: Secure, root: keyspace.Keyspace) -> None:
    started = time.monotonic()
    with pytest.raises(AuthenticationFailed, match="etcd refused the credentials"):
        keyspace.open(secure.url("alice", "wrong"))
    assert time.monotonic() - started < 2.0  # no retries with backoff


def test_keyword_options_equal_url_options(secure: Secure, root: keyspace.Keyspace) -> None:
    plain_hosts = "etcd://" + ",".join(secure.cluster.endpoints)
    ks = keyspace.open(
        plain_hosts,
        user="alice",
        password="alice-pw",
        cacert=str(secure.pki.ca),
        cert=str(secure.pki.client_cert),
        key=str(secure.pki.client_key),
    )
    try:
        assert ks.scope("admin")[b"a"] == b"A's"
    finally:
        ks.close()


@pytest.mark.parametrize("case", ["untrusted server CA", "untrusted client certificate"])
def test_wrong_certificate_fails_at_open(secure: Secure, case: str) -> None:
    files = (
        {"cacert": secure.pki.rogue_ca}
        if case == "untrusted server CA"
        else {"cert": secure.pki.rogue_cert, "key": secure.pki.rogue_key}
    )
    started = time.monotonic()
    with pytest.raises(AuthenticationFailed):
        EtcdStore(secure.url("root", ROOT_PASSWORD, **files), retry_budget=10)
    assert time.monotonic() - started < 5.0  # refused at once, not after the retry budget


def test_plain_text_client_is_refused(secure: Secure) -> None:
    store = EtcdStore("etcd://" + ",".join(secure.cluster.endpoints), retry_budget=1.0)
    try:
        with pytest.raises(StoreError):
            store.get(b"anything")
    finally:
        store.close()


def test_token_is_refreshed_after_expiry(alice: keyspace.Keyspace) -> None:
    store = alice.store
    assert isinstance(store, EtcdStore)
    tokens = store._conn.tokens
    first = tokens.refreshes
    assert alice.scope("admin")[b"a"] == b"A's"
    time.sleep(TOKEN_TTL + 1.5)  # the simple token expires after TOKEN_TTL s unused
    assert alice.scope("admin")[b"a"] == b"A's"
    assert tokens.refreshes == first + 1


def test_aio_is_native_over_tls_and_auth(secure: Secure, root: keyspace.Keyspace) -> None:
    """keyspace.aio on etcd with TLS and auth: the native client uses the same
    credentials, works inside the granted scope, is refused by the server outside
    it with nothing changed, and renews an expired token once."""
    before = [kv for kv in _everything(root) if b"aio" not in kv[0]]

    async def main() -> None:
        aks = await keyspace.aio.open(secure.url("alice", "alice-pw"))
        store = aks.sync.store
        assert isinstance(store, EtcdStore) and aks.workers == 0
        try:
            a = aks.scope("admin")
            await a.put(b"aio", b"1")
            async with aks.transaction() as tx:
                s = tx.scope("admin")
                await s.put(b"aio", b"%d" % (int(await s.get(b"aio")) + 1))
            assert (b"aio", b"2") in [kv async for kv in a.items()]
            other = aks.scope("admin2")
            for operation in (
                lambda: other.get(b"k"),
                lambda: other.put(b"k", b"stolen"),
                lambda: other.update({b"x": b"1"}),
                other.drop,
                aks.scope().scopes,
            ):
                with pytest.raises(AccessDenied, match="refused by the etcd server"):
                    await operation()
            with pytest.raises(AccessDenied):
                async with aks.transaction() as tx:
                    await tx.scope("admin").put(b"ok", b"1")
                    await tx.scope("B").put(b"k", b"stolen")
            first = store._conn.tokens.refreshes
            await asyncio.sleep(TOKEN_TTL + 1.5)  # the token expires unused
            assert await a.get(b"a") == b"A's"
            assert store._conn.tokens.refreshes == first + 1
            await a.delete(b"aio")
        finally:
            await aks.close()

    asyncio.run(asyncio.wait_for(main(), 60))
    assert _everything(root) == before


# -- the granted range, as a property (no server needed) ---------------------------------

_COMPONENT = st.one_of(
    st.text(alphabet=st.sampled_from(["a", "d", "m", "n", "2", "\x00", "\xff", "ÿ"]), min_size=1, max_size=4),
    st.binary(min_size=1, max_size=3).map(lambda b: b + b"\xff"),  # ff tails
)
_PATHS = st.lists(_COMPONENT, min_size=1, max_size=3).map(tuple)


@settings(max_examples=300, deadline=None)
@given(
    granted=_PATHS,
    other=_PATHS,
    key=st.binary(max_size=3),
    scheme_name=st.sampled_from(["tuple", "asciihex"]),
)
def test_granted_range_holds_exactly_the_subtree(
    granted: tuple[Any, ...], other: tuple[Any, ...], key: bytes, scheme_name: str
) -> None:
    """Property: a key of any scope at or below the granted path falls in the one
    writable range of the grant (the store's key prefix applied); a key of any
    other scope (siblings with ff tails, longer or shorter names, the parent) falls
    in no range of the grant, writable or not."""
    scheme = scheme_from_name(scheme_name)
    store = EtcdStore("etcd://127.0.0.1:1/tenant%ff")  # no request is sent
    ks = keyspace.Keyspace.__new__(keyspace.Keyspace)
    ks.store, ks.scheme = store, scheme  # only what scope_permissions reads
    try:
        perms = access.scope_permissions(ks, granted)
    finally:
        store.close()

    def covered(etcd_key: bytes, writable: bool) -> bool:
        return any(
            (p.key <= etcd_key < p.range_end if p.range_end else etcd_key == p.key)
            for p in perms
            if p.write or not writable
        )

    def stored(path: tuple[Any, ...]) -> bytes:
        return b"tenant\xff" + scheme.encode(path, key)

    inside = other[: len(granted)] == granted
    assert covered(stored(granted + other), writable=True)
    if not inside and other != granted:
        assert not covered(stored(other), writable=False), (granted, other)


@settings(max_examples=300, deadline=None)
@given(
    user=st.text(min_size=1, max_size=12).filter(lambda t: "\x00" not in t),
    password=st.text(min_size=1, max_size=12),
    hosts=st.lists(st.integers(1, 65535), min_size=1, max_size=3),
)
def test_credentials_in_the_url_parse_back_and_never_show(user: str, password: str, hosts: list[int]) -> None:
    """Property: any user and password, percent-encoded into the URL, parse back
    exactly, and the redacted URL contains the password in no form."""
    from keyspace.stores.etcd._rpc import parse_etcd_url, redact_url

    def make(secret: str) -> str:
        return (
            f"etcd://{quote(user, safe='')}:{secret}@"
            + ",".join(f"127.0.0.1:{p}" for p in hosts)
            + f"/pre?timeout=3&password={secret}"
        )

    url = make(quote(password, safe=""))
    options = parse_etcd_url(url)
    assert (options.user, options.password) == (user, password)
    assert options.endpoints == tuple(("127.0.0.1", p) for p in hosts) and options.prefix == b"pre"
    assert redact_url(url) == make("***")  # both places, nothing else changed


class _FakeRpcError(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        self._code, self._details = code, details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


@pytest.mark.parametrize(
    ("code", "details", "expected"),
    [
        ("PERMISSION_DENIED", "etcdserver: permission denied", AccessDenied),
        ("INVALID_ARGUMENT", "etcdserver: authentication failed, invalid user ID", AuthenticationFailed),
        ("INVALID_ARGUMENT", "etcdserver: user name is empty", AuthenticationFailed),
        ("UNAUTHENTICATED", "etcdserver: invalid auth token", AuthenticationFailed),
        ("UNAVAILABLE", "Ssl handshake failed: CERTIFICATE_VERIFY_FAILED", AuthenticationFailed),
        ("UNAVAILABLE", "Unwrap failed (TSI_DATA_CORRUPTED)", AuthenticationFailed),
        ("UNAVAILABLE", "failed to connect to all addresses; Connection refused", EtcdUnavailable),
    ],
)
def test_translation_of_refusals(code: str, details: str, expected: type[Exception]) -> None:
    """The one translation point: refusals by the server and credential failures
    get their named errors; a member that is down stays EtcdUnavailable (retried)."""
    error = translate(_FakeRpcError(getattr(grpc.StatusCode, code), details), "get")
    assert type(error) is expected
    assert details in str(error)
