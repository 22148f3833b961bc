"""Byte helpers shared by every layer: the one place that computes range ends."""

from __future__ import annotations

__all__ = ["prefix_end"]


def prefix_end(prefix: bytes) -> bytes | None:
    """Return the smallest byte string greater than every string starting with
    ``prefix``, or ``None`` when there is none (``prefix`` is empty or all ``ff``).

    Trailing ``ff`` bytes are dropped and the last remaining byte is incremented,
    so the end is tight: ``prefix_end(b"a\\xff") == b"b"`` (not ``b"b\\x00"``,
    which would also admit the key ``b"b"``). ``[prefix, prefix_end(prefix))`` is
    exactly the set of keys that start with ``prefix``; ``None`` means "to the end
    of the keyspace".

    Cost: O(len(prefix)), in C.
    """
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes((stripped[-1] + 1,))
