"""What the LMDB views read of their store: :class:`LMDBStoreParts`.

The snapshot, the write transaction, the keys-only reads and the checked and
watched reads (``_snapshot``, ``_txn``, ``_keys``,
``_checked``, ``_watched``) each hold the
:class:`~keyspace.stores.lmdb.LMDBStore` that made them and read its
environment, databases, records and checks. They know it by this protocol, so
that ``lmdb.py`` imports them and none of them imports ``lmdb.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any, Protocol

from ...errors import KeyspaceError
from .._base import ReadView
from ._env import SharedEnv
from ._records import Records

__all__ = ["LMDBStoreParts"]


class LMDBStoreParts(Protocol):
    """The fields and helpers of an LMDB store that its views use (every
    :class:`~keyspace.stores.lmdb.LMDBStore` offers them)."""

    url: str
    db_name: str
    _env: Any
    _db: Any
    _shared: SharedEnv
    _records: Records | None
    _is_record: Callable[[bytes, bytes], bool] | None  # ``_records.is_record``, for cursor_take
    _point_read: Any  # the C point read of its database, or None
    _txn_ended: Callable[..., Any]

    def translate(self, exc: BaseException, key: bytes | None = None) -> KeyspaceError: ...

    # -- the environment and its map (see _growth.MapGrowth) -----------------

    def _live(self) -> Any: ...
    def _grow(self, pending: int = 0) -> None: ...
    def _resize(self, size: int) -> None: ...
    def _headroom(self) -> int: ...
    def _roomy(self) -> bool: ...
    def _view_closed(self, opener: int) -> None: ...

    # -- keys, records and reads of the store itself --------------------------------

    def _bad_key(self, key: bytes) -> KeyspaceError | None: ...
    def _check(self, key: bytes) -> None: ...
    def _check_all(self, items: list[Any] | tuple[Any, ...]) -> None: ...
    def _records_in(self, db: Any) -> Records | None: ...
    def _count(
        self,
        start: bytes,
        stop: bytes | None,
        hold: Callable[[Any], object] | None = None,
        without: tuple[int, int] | None = None,
    ) -> int: ...
    def _pages(
        self,
        start: bytes,
        stop: bytes | None,
        reverse: bool,
        limit: int | None,
        keys: bool = False,
        hold: Callable[[Any], object] | None = None,
        cut: int = 0,
    ) -> Iterator[list[Any]]: ...
    def snapshot(self) -> AbstractContextManager[ReadView]: ...
