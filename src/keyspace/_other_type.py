"""The :class:`KeyError` of a miss that names a key of the other type.

In a scheme whose keys keep their type (tuple, the default) ``s["user1"]`` and
``s[b"user1"]`` are two keys; a program that wrote one and reads the other gets a
miss. :class:`KeyOfOtherType` says which key exists."""

from __future__ import annotations

from typing import Any

__all__ = ["KeyOfOtherType", "other_type"]


def other_type(key: Any) -> str | bytes | None:
    """``key`` as the other of ``str`` and ``bytes`` (UTF-8), or ``None`` for a
    key of another type or bytes that are not UTF-8."""
    if type(key) is bytes:
        try:
            return key.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if type(key) is str:
        try:
            return key.encode("utf-8")
        except UnicodeEncodeError:
            return None
    return None


class KeyOfOtherType(KeyError):
    """A :class:`KeyError` for ``key`` (its only argument, as every ``KeyError``)
    where ``other``, the same text as the other type, is a key of the scope."""

    def __init__(self, key: Any, other: str | bytes) -> None:
        super().__init__(key)
        self.other = other

    def __str__(self) -> str:
        kind = type(self.other).__name__
        return f"{self.args[0]!r} (a {kind} key {self.other!r} exists: this scope's keys are {kind})"
