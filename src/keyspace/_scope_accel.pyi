from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")

class Transform:
    prefix: bytes
    fallback: Callable[[Any], bytes]
    def __init__(
        self,
        kind: int,
        prefix: bytes,
        forbidden: int,
        text: int,
        fallback: Callable[[Any], bytes],
        chunk_fallback: Callable[[list[tuple[bytes, bytes]]], list[tuple[Any, bytes]]],
        encode: Callable[[Any], Any] = ...,
        int_size: int = ...,
        int_signed: bool = ...,
        /,
    ) -> None: ...
    def __call__(self, key: Any, /) -> bytes: ...
    def with_reserved(
        self, reserved: tuple[tuple[bytes, bytes], ...], refuse: Callable[[Any, bytes, bytes, bytes], None], /
    ) -> Transform: ...
    def decode_chunk(self, items: list[tuple[bytes, bytes]], /) -> list[tuple[Any, bytes]]: ...

class LenText:
    fallback: Callable[[Any], Any]
    def __init__(self, mode: int, fallback: Callable[[Any], Any], /) -> None: ...
    def __call__(self, value: Any, /) -> Any: ...

def copy_slots(obj: _T, /) -> _T: ...
def exact_path(path: object, /) -> bool: ...
def hex_child_step(
    at: int, depth: int, fallback: Callable[[bytes], tuple[bytes, bytes | None] | None], /
) -> Callable[[bytes], tuple[bytes, bytes | None] | None]: ...
def sep_child_step(
    at: int, sep: int, allowed: bytes, fallback: Callable[[bytes], tuple[bytes, bytes | None] | None], /
) -> Callable[[bytes], tuple[bytes, bytes | None] | None]: ...
def path_memo(name: str, fallback: Callable[..., _T], /) -> Callable[..., _T]: ...
def memo_encode(cls: type, fallback: Callable[..., bytes], /) -> Callable[..., bytes]: ...
def point_op(
    kind: str,
    cls: type,
    fallback: Callable[..., Any],
    raise_raw: Callable[..., Any],
    stored_slot: object,
    call_slot: object,
    raw_slot: object,
    codec_slot: object,
    guard_slot: object,
    view_slot: object,
    settled: object,
    /,
) -> Callable[..., Any]: ...
