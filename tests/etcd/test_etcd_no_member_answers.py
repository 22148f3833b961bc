"""An opener that finds no etcd member answering on any endpoint (a closed
port: every connection refused) fails within 3 s saying so, with the
endpoints it tried; the retry budget (15 s) is for a cluster that was reached.
The command line names the command the user ran."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time

import pytest

import keyspace
import keyspace.aio
from keyspace.errors import EtcdUnavailable


def _closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_open_fails_within_3_s_naming_the_endpoints() -> None:
    ports = (_closed_port(), _closed_port())
    url = f"etcd://127.0.0.1:{ports[0]},127.0.0.1:{ports[1]}"
    start = time.monotonic()
    with pytest.raises(EtcdUnavailable) as info:
        keyspace.open(url).close()
    took = time.monotonic() - start
    assert took < 3.0, took
    message = str(info.value)
    assert "no etcd member answered on any endpoint" in message
    assert f"127.0.0.1:{ports[0]}, 127.0.0.1:{ports[1]}" in message
    assert "is etcd running there" in message


def test_asyncio_open_fails_within_3_s() -> None:
    url = f"etcd://127.0.0.1:{_closed_port()}"

    async def go() -> None:
        ks = await keyspace.aio.open(url)
        try:
            await ks.scope("a").get(b"k")
        finally:
            await ks.close()

    start = time.monotonic()
    with pytest.raises(EtcdUnavailable, match="no etcd member answered"):
        asyncio.run(go())
    assert time.monotonic() - start < 3.5


def test_inspect_names_inspect() -> None:
    port = _closed_port()
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "keyspace.cli", "inspect", f"etcd://127.0.0.1:{port}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - start < 6.0  # the interpreter's start-up included
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: inspect: no etcd member answered on any endpoint"), proc.stderr
    assert proc.stderr.count("\n") == 1
