"""The fake clock of expiring keys: the ``clock`` fixture (``tests/conftest.py``)
sets ``keyspace._expiry.clock`` to one for a test; a test moves it on by adding
to ``now`` (seconds)."""

from __future__ import annotations


class Clock:
    """A clock that stands still until a test moves it (``clock.now += 5``)."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
