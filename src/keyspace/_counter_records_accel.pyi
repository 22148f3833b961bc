from collections.abc import Callable, Sequence
from typing import Any

def bump(
    get: Callable[[bytes], bytes | None],
    put: Callable[[bytes, bytes], object],
    delete: Callable[[bytes], object],
    rows: Sequence[tuple[Any, bytes, int, int, int, int]],
    check: bool,
    /,
) -> tuple[Any, ...] | None: ...
