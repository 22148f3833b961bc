from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..errors import KeyspaceError

class Gate:
    inflight: int
    closed: bool
    def __init__(self) -> None: ...
    def guard(
        self,
        fn: Callable[..., Any],
        translate: Callable[[BaseException, Any], KeyspaceError] | None = None,
        /,
    ) -> Callable[..., Any]: ...
    def guard_iter(
        self, iterable: Iterable[Any], translate: Callable[[BaseException], BaseException] | None = None, /
    ) -> Iterator[Any]: ...
    def guard_chain(
        self,
        iterables: Iterable[Iterable[Any]],
        translate: Callable[[BaseException], BaseException] | None = None,
        /,
    ) -> Iterator[Any]: ...
    def run(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any: ...
    def close(self) -> None: ...

def translated(
    fn: Callable[..., Any], translate: Callable[[BaseException, Any], KeyspaceError], /
) -> Callable[..., Any]: ...
