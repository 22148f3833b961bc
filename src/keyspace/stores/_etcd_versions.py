"""Facts about etcd releases that the clients act on, without any import of
gRPC (:mod:`keyspace.access` and the CLI read them too)."""

from __future__ import annotations

__all__ = ["NESTED_TXN_AUTH_FIXED", "nested_txn_checked"]


NESTED_TXN_AUTH_FIXED = ((3, 4, 42), (3, 5, 28), (3, 6, 9))
"""The first etcd release of each line that checks the key permissions of the
operations inside nested transactions (CVE-2026-33343); 3.7 and later do."""


def nested_txn_checked(version: str) -> bool:
    """Whether etcd ``version`` (``Maintenance.Status``'s, e.g. ``"3.4.23"``) checks
    the key permissions of nested transactions. Before the fix a user restricted to
    some keys could read, write and delete any key from inside a nested ``Txn``.
    An unreadable version counts as unchecked."""
    try:
        major, minor, patch = (int(part) for part in version.split("-")[0].split(".")[:3])
    except ValueError:
        return False
    if (major, minor) >= (3, 7):
        return True
    return any((major, minor) == fixed[:2] and patch >= fixed[2] for fixed in NESTED_TXN_AUTH_FIXED)
