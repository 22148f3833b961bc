"""An etcd URL without TLS to a member that serves only TLS: the client retried
"Socket closed" for the whole retry budget and said nothing within 10 s, then
"cluster unavailable". It now says at once that the member serves only TLS and
how to give the CA. A member that is down, or that serves plain text, is not
taken for a TLS one.

Starts its own one-member etcd with client TLS on free loopback ports."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from _etcd import own_cluster
from _tls import Pki, make_pki

import keyspace
import keyspace.aio
from keyspace.errors import EtcdUnavailable, StoreError
from keyspace.stores.etcd import EtcdStore
from keyspace.stores.etcd._tls_probe import speaks_tls
from keyspace.testing.etcd_cluster import LocalCluster, ServerTLS

pytestmark = [pytest.mark.etcd, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def tls_member(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalCluster, Pki]]:
    pki = make_pki(tmp_path_factory.mktemp("pki"))
    tls = ServerTLS(pki.ca, pki.server_cert, pki.server_key)
    with own_cluster(1, tls=tls, health_context=tls.context(pki.client_cert, pki.client_key)) as cluster:
        yield cluster, pki


@pytest.fixture(scope="module")
def plain_member() -> Iterator[LocalCluster]:
    with own_cluster(1) as cluster:
        yield cluster


def _check(message: str, endpoint: str) -> None:
    assert f"etcd member {endpoint} serves only TLS" in message, message
    assert "cacert=" in message and "without TLS" in message, message


def test_open_without_tls_says_the_member_expects_tls(tls_member: tuple[LocalCluster, Pki]) -> None:
    cluster, pki = tls_member
    (endpoint,) = cluster.endpoints
    started = time.monotonic()
    with pytest.raises(StoreError) as info:
        keyspace.open(f"etcd://{endpoint}")  # default retry budget: 15 s
    assert time.monotonic() - started < 5.0
    assert not isinstance(info.value, EtcdUnavailable)
    _check(str(info.value), endpoint)
    store = EtcdStore(f"etcd://{endpoint}")
    try:
        started = time.monotonic()
        with pytest.raises(StoreError) as info:
            store.get(b"k")
        assert time.monotonic() - started < 5.0
        _check(str(info.value), endpoint)
    finally:
        store.close()
    # the way it names works (this member asks for client certificates too)
    files = {"cacert": pki.ca, "cert": pki.client_cert, "key": pki.client_key}
    query = "&".join(f"{name}={quote(str(path))}" for name, path in files.items())
    with keyspace.open(f"etcd://{endpoint}?{query}") as ks:
        ks.scope("a")[b"k"] = b"v"
        assert ks.scope("a")[b"k"] == b"v"


def test_asyncio_client_says_so_too(tls_member: tuple[LocalCluster, Pki]) -> None:
    cluster, _pki = tls_member
    (endpoint,) = cluster.endpoints

    async def main() -> str:
        with pytest.raises(StoreError) as info:
            ks = await keyspace.aio.open(f"etcd://{endpoint}")
            try:
                await ks.scope("a").get(b"k")
            finally:
                await ks.close()
        return str(info.value)

    started = time.monotonic()
    message = asyncio.run(asyncio.wait_for(main(), 30))
    assert time.monotonic() - started < 5.0
    _check(message, endpoint)


def test_a_plain_member_or_a_closed_port_is_no_tls_member(
    plain_member: LocalCluster, tls_member: tuple[LocalCluster, Pki]
) -> None:
    host, port = plain_member.endpoints[0].rsplit(":", 1)
    assert not speaks_tls(host, int(port), 1.0)
    with socket.socket() as free:  # a port nobody listens on
        free.bind(("127.0.0.1", 0))
        closed_port = free.getsockname()[1]
    assert not speaks_tls("127.0.0.1", closed_port, 1.0)
    tls_host, tls_port = tls_member[0].endpoints[0].rsplit(":", 1)
    assert speaks_tls(tls_host, int(tls_port), 1.0)
    # a cluster that is down is still reported as unavailable, after its budget
    started = time.monotonic()
    store = EtcdStore(f"etcd://127.0.0.1:{closed_port}", retry_budget=1.0)
    try:
        with pytest.raises(EtcdUnavailable):
            store.get(b"k")
    finally:
        store.close()
    assert time.monotonic() - started < 10.0
