"""Byte helpers shared by every layer: the one place that computes range ends, and
the one that reads the bytes of a bytes-like object. Imports nothing of keyspace
(:mod:`keyspace.errors` sits above it and uses it)."""

from __future__ import annotations

__all__ = ["buffer_bytes", "prefix_end"]


def buffer_bytes(value: object) -> bytes | None:
    """Return the bytes a bytes-like object holds (a ``bytearray``, a ``memoryview``
    of any format or shape, a subclass of ``bytes`` or ``bytearray``), read through
    the buffer protocol, so that none of the object's own methods runs (a subclass
    may define ``__bytes__``, ``__len__`` or ``__iter__`` to do anything); ``None``
    when it has no bytes to give: it has no buffer, or it is a released
    ``memoryview``. ``bytes(value)`` would call ``__bytes__``, and raise
    ``ValueError`` for a released view. Cost: one copy of the bytes."""
    try:
        with memoryview(value) as view:  # type: ignore[arg-type]  # any object: None when no buffer
            return view.tobytes()
    except (TypeError, ValueError, BufferError):
        return None


def prefix_end(prefix: bytes) -> bytes | None:
    """Return the smallest byte string greater than every string starting with
    ``prefix``, or ``None`` when there is none (``prefix`` is empty or all ``ff``).

    Trailing ``ff`` bytes are dropped and the last remaining byte is incremented,
    so the end is tight: ``prefix_end(b"a\\xff") == b"b"`` (not ``b"b\\x00"``,
    which would also admit the key ``b"b"``). ``[prefix, prefix_end(prefix))`` is
    exactly the set of keys that start with ``prefix``; ``None`` means "to the end
    of the keyspace".

    Cost: O(len(prefix)), in C; a prefix that does not end in ``ff`` (almost
    every one) takes one slice and one concatenation.
    """
    last = prefix[-1] if prefix else 0xFF
    if last != 0xFF:
        return prefix[:-1] + _BYTE[last + 1]
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + _BYTE[stripped[-1] + 1]


_BYTE = tuple(bytes((b,)) for b in range(256))
