from collections.abc import Callable
from typing import Any

from ..errors import KeyspaceError

class Translated:
    def __init__(
        self, fn: Callable[..., Any], translate: Callable[[BaseException, Any], KeyspaceError], /
    ) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
