from collections.abc import Callable, Iterator
from typing import Any, TypeVar

_T = TypeVar("_T")

class PairLog:
    def __init__(self) -> None: ...
    def __call__(self, key: bytes, value: bytes, /) -> None: ...
    def __len__(self) -> int: ...
    def extend(self, keys: list[bytes], values: list[bytes], /) -> None: ...
    def take(self) -> tuple[list[bytes], list[bytes]]: ...
    def close(self) -> None: ...

class RecordGetter:
    def __init__(
        self, get: Callable[[bytes], bytes | None], is_record: Callable[[bytes, bytes], bool], size: int, /
    ) -> None: ...
    def __call__(self, key: bytes, /) -> bytes | None: ...

class PointRead:
    def __init__(
        self,
        begin: Callable[[], Any],
        shared: Any,
        is_record: Callable[[bytes, bytes], bool] | None,
        size: int,
        slow: Callable[[bytes], bytes | None],
        error: type[BaseException] | tuple[type[BaseException], ...],
        /,
    ) -> None: ...
    def __call__(self, key: bytes, /) -> bytes | None: ...
    def close(self) -> None: ...
    def checked(
        self, check: Callable[[Any], bool], slow: Callable[[bytes], bytes | None], /
    ) -> PointRead: ...

def cursor_take(
    txn: Any,
    db: Any,
    start: bytes,
    stop: bytes | None,
    limit: int,
    reverse: bool,
    cut: int = 0,
    is_record: Callable[[bytes, bytes], bool] | None = None,
    record_size: int = -1,
    /,
) -> list[tuple[bytes, bytes]]: ...
def cut_keys(page: list[tuple[bytes, Any]], cut: int, /) -> list[tuple[bytes, Any]]: ...
def first_bad_key(keys: list[Any], max_size: int | None, empty_ok: bool, /) -> int: ...
def name_candidates(items: list[Any], size: int, /) -> list[int]: ...
def page_bytes(page: list[tuple[Any, Any]], /) -> int: ...
def take_until(
    items: Iterator[_T],
    bound: bytes | None,
    size: int,
    descending: bool,
    cut: int = 0,
    is_record: Callable[[bytes, bytes], bool] | None = None,
    record_size: int = -1,
    /,
) -> list[_T]: ...
