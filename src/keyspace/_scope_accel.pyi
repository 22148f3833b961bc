from collections.abc import Callable
from typing import Any

def point_op(
    kind: str,
    cls: type,
    fallback: Callable[..., Any],
    raise_raw: Callable[..., Any],
    prefix_slot: object,
    call_slot: object,
    raw_slot: object,
    /,
) -> Callable[..., Any]: ...
