from collections.abc import Callable
from typing import Any

class PutRoute:
    replace: Callable[[bytes, bytes], object] | dict[bytes, bytes]
    knows_old: bool
    old: dict[bytes, Any]
    merged: dict[bytes, Any]
    exact: bool
    puts: int
    keeps: bool
    low: bytes | None
    high: bytes | None
    def __init__(
        self,
        replace: Callable[[bytes, bytes], object] | dict[bytes, bytes],
        old: dict[bytes, Any],
        merged: dict[bytes, Any],
        knows_old: bool = True,
        *,
        bound: bytes | None = None,
        rest: Callable[[bytes, bytes], object] | None = None,
        keeps: bool = True,
    ) -> None: ...
    def __call__(self, key: bytes, value: bytes) -> object: ...
    def end(self, ended: Callable[[bytes, bytes], object], /) -> None: ...
    def settle(self) -> None: ...
    def columns(self) -> tuple[list[bytes], list[bytes]]: ...
    def summary(self) -> tuple[bytes, bytes, int, int] | None: ...
