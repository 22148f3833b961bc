"""Paths and memos: what a scheme and the layouts it compiles both take.

A namespace path is a tuple of components (:data:`Path`); :func:`checked_path`
is the one check every compiled path passes, :func:`exact_path` says whether a
memo keyed by paths may answer for one, and :func:`remember` keeps such a memo
bounded. Below both :mod:`keyspace.schemes._base` (the schemes) and
:mod:`keyspace.schemes._layouts` (the layouts they compile), which import it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import InvalidName, show_bytes

__all__ = ["Component", "Key", "Path", "checked_path", "exact_path", "remember"]

Component = Any
"""One element of a namespace path: ``bytes`` or ``str`` in the byte schemes; any
tuple-layer element (None, bytes, str, int, float, bool, UUID, tuple, SingleFloat,
Versionstamp) in TupleScheme."""

Path = tuple[Component, ...]
Key = Any
"""A key: ``bytes`` in the byte schemes; any tuple-layer element, or a tuple of them
(a composite key), in TupleScheme."""


def checked_path(path: Any) -> Path:
    """Return ``path`` as a scheme takes it: a tuple of components (a tuple
    subclass as the exact tuple of its elements, read without its own methods).
    Raises :class:`~keyspace.errors.InvalidName` naming the value for anything
    that is not a tuple. Every path a scheme compiles passes here first
    (:meth:`Scheme._compiled`, :class:`~keyspace.schemes._layouts.Layout`), so
    that no scheme iterates, measures or tests the truth of another object.
    Cost: one type test."""
    if type(path) is tuple:
        return path
    if issubclass(type(path), tuple):
        return tuple.__getitem__(path, slice(None))
    raise InvalidName(f"scope path {show_bytes(path)} must be a tuple, not {type(path).__name__}")


def _exact_path(path: Path) -> bool:
    """Whether a memo of compiled paths may answer for ``path``: it is a tuple of
    components that are exactly ``str`` or ``bytes``. Only such paths are kept,
    and a lookup by any other path must miss even where it finds an entry: a
    dictionary finds one for every path that compares equal to its key, yet
    ``memoryview(b"a")`` (which the tuple scheme refuses), a bytes subclass
    (which the byte schemes refuse), a str subclass, ``1.0`` and ``True`` are
    each equal to a path they are not. The reference of the C ``exact_path``
    (:mod:`keyspace.schemes._layouts_accel`), which costs about as much as a call of
    ``len``; this one two identity tests per component."""
    if type(path) is not tuple:
        return False
    for component in path:  # noqa: SIM110 - a loop: all() of a generator costs twice as much
        if type(component) is not str and type(component) is not bytes:
            return False
    return True


exact_path: Callable[[Path], bool]
try:
    from ._layouts_accel import exact_path
except ImportError:  # pragma: no cover - the optional C module is not built
    exact_path = _exact_path


_EVICTION_RETRIES = 8
"""Extra looks :func:`remember` takes at a memo that other threads change while
it drops entries (then it may hold a few entries over its size, briefly)."""


def remember(memo: dict[Any, Any], key: Any, value: Any, size: int) -> None:
    """Keep ``value`` at ``key`` in ``memo``, a memo of at most ``size`` entries
    (none when ``size`` is 0 or less): when it is full, the oldest entries go
    first. Other threads may change ``memo`` meanwhile: an entry another thread
    dropped first is not dropped again, a memo changed between finding and
    dropping its oldest entry is looked at again (a bounded number of times: it
    may then hold a few entries over ``size``), and nothing raises, so that a
    lookup through a full memo never fails. Cost: one dictionary insertion, and
    one deletion when full."""
    if size <= 0:
        return
    for _ in range(len(memo) - size + 1 + _EVICTION_RETRIES):  # bounded, however threads interleave
        if len(memo) < size:
            break
        try:
            oldest = next(iter(memo))
        except StopIteration:  # emptied by another thread meanwhile
            break
        except RuntimeError:  # changed by another thread between iter and next
            continue
        memo.pop(oldest, None)
    memo[key] = value
