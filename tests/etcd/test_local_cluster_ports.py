"""The test clusters' ports (``keyspace.testing.etcd_cluster``) are drawn outside
the system's ephemeral range where it names one, so that no outgoing
connection of the test run can take a member's port between the draw and
etcd's bind (a member that cannot bind never becomes healthy); distinct and
free, and the system's choice where it names no range."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from keyspace.testing import etcd_cluster


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.mark.skipif(etcd_cluster._ephemeral_range() is None, reason="the system names no ephemeral range")
def test_ports_are_drawn_below_the_ephemeral_range() -> None:
    span = etcd_cluster._ephemeral_range()
    assert span is not None
    for _ in range(20):
        ports = etcd_cluster._free_ports(6)
        assert len(set(ports)) == 6
        assert all(etcd_cluster._LOWEST_PORT <= p < span[0] for p in ports), ports
        assert all(_bindable(p) for p in ports)


def test_without_a_named_range_the_system_chooses(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(etcd_cluster, "_EPHEMERAL", tmp_path / "absent")
    assert etcd_cluster._ephemeral_range() is None
    ports = etcd_cluster._free_ports(4)
    assert len(set(ports)) == 4 and all(_bindable(p) for p in ports)
