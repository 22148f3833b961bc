from collections.abc import Callable
from typing import Any

class LenText:
    fallback: Callable[[Any], Any]
    def __init__(self, mode: int, fallback: Callable[[Any], Any], /) -> None: ...
    def __call__(self, value: Any, /) -> Any: ...
