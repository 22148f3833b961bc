from collections.abc import Callable
from typing import Any

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
    def stored_pairs(self, pairs: object, /) -> list[tuple[bytes, bytes]]: ...
    def decode_chunk(self, items: list[tuple[bytes, bytes]], /) -> list[tuple[Any, bytes]]: ...

def exact_path(path: object, /) -> bool: ...
def hex_child_step(
    at: int, depth: int, fallback: Callable[[bytes], tuple[bytes, bytes | None] | None], /
) -> Callable[[bytes], tuple[bytes, bytes | None] | None]: ...
def sep_child_step(
    at: int, sep: int, allowed: bytes, fallback: Callable[[bytes], tuple[bytes, bytes | None] | None], /
) -> Callable[[bytes], tuple[bytes, bytes | None] | None]: ...
def memo_encode(fallback: Callable[..., bytes], /) -> Callable[..., bytes]: ...
def lp_decode(fallback: Callable[..., Any], /) -> Callable[..., Any]: ...
