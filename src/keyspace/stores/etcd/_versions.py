"""Facts about etcd releases that the clients act on, without any import of
gRPC (:mod:`keyspace.access` and the CLI read them too)."""

from __future__ import annotations

__all__ = [
    "NESTED_TXN_AUTH_FIXED",
    "WATCH_AUTH_FIXED",
    "access_gaps",
    "nested_txn_checked",
    "watch_range_checked",
]

NESTED_TXN_AUTH_FIXED = ((3, 4, 42), (3, 5, 28), (3, 6, 9))
"""The first etcd release of each line that checks the key permissions of the
operations inside nested transactions (GHSA-rfx7-8w68-q57q); 3.7 and later do."""

WATCH_AUTH_FIXED = ((3, 5, 33), (3, 6, 14), (3, 7, 1))
"""The first etcd release of each line that checks an open-ended Watch (``range_end``
``00``: from a key to the end) against the whole range it watches, not only its
first key (GHSA-xg4h-6gfc-h4m8); 3.8 and later do, no 3.4 release does."""


def _version(text: str) -> tuple[int, int, int] | None:
    try:
        major, minor, patch = (int(part) for part in text.split("-")[0].split(".")[:3])
    except ValueError:
        return None
    return major, minor, patch


def _fixed(text: str, fixed: tuple[tuple[int, int, int], ...], later: tuple[int, int]) -> bool:
    version = _version(text)
    if version is None:
        return False
    if version[:2] >= later:
        return True
    return any(version[:2] == first[:2] and version[2] >= first[2] for first in fixed)


def nested_txn_checked(version: str) -> bool:
    """Whether etcd ``version`` (``Maintenance.Status``'s, e.g. ``"3.4.23"``) checks
    the key permissions of nested transactions. Before the fix a user restricted to
    some keys could read, write and delete any key from inside a nested ``Txn``.
    An unreadable version counts as unchecked."""
    return _fixed(version, NESTED_TXN_AUTH_FIXED, (3, 7))


def watch_range_checked(version: str) -> bool:
    """Whether etcd ``version`` checks an open-ended Watch against its whole range.
    Before the fix a user who may read any one key could watch every key after it.
    An unreadable version counts as unchecked."""
    return _fixed(version, WATCH_AUTH_FIXED, (3, 8))


def access_gaps(version: str) -> list[str]:
    """What a user restricted by etcd roles can still reach on etcd ``version``,
    one sentence each (empty: the server enforces its roles against any client)."""
    gaps = []
    if not nested_txn_checked(version):
        fixed = ", ".join(".".join(map(str, v)) for v in NESTED_TXN_AUTH_FIXED)
        gaps.append(
            f"a nested Txn reads and changes any key, unchecked (GHSA-rfx7-8w68-q57q, fixed in {fixed})"
        )
    if not watch_range_checked(version):
        fixed = ", ".join(".".join(map(str, v)) for v in WATCH_AUTH_FIXED)
        gaps.append(
            "a Watch from any key the user may read to the end of the keys sees every change "
            f"after that key (GHSA-xg4h-6gfc-h4m8, fixed in {fixed}; in no 3.4 release)"
        )
    return gaps
