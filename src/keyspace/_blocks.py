"""Context managers whose handle exists only inside their block.

``ks.transaction()`` and ``aks.transaction()``/``aks.snapshot()`` return one of
these: entering it (``with``, ``async with``) gives the transaction's handle;
any attribute asked of the block itself (``ks.transaction().scope(...)``, the
mistake of leaving out ``with``) raises :class:`~keyspace.errors.NotEntered`
naming the attribute and saying to use ``with``, instead of an ``AttributeError``
naming a class of :mod:`contextlib`. Each entry makes its context manager anew
(``make()``), so a block entered again is a new transaction (or snapshot), as
``ks.snapshot()`` is, rather than a spent generator's ``AttributeError``. Cost:
one object over the wrapped context manager, one call more on entry and exit.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from types import TracebackType
from typing import Generic, NoReturn, TypeVar

from .errors import NotEntered

__all__ = ["AsyncBlock", "Block", "not_entered"]

T = TypeVar("T")


def not_entered(what: str, name: str, *, is_async: bool = False) -> NotEntered:
    """The error for ``name`` asked of ``what`` (``"ks.transaction()"``) used
    without (async) ``with``."""
    with_ = "async with" if is_async else "with"
    return NotEntered(
        f"{what} used without {with_}: its scopes exist only inside the block, "
        f"`{with_} {what} as tx:` then tx.scope(...) in it ({name!r} was asked outside)"
    )


class Block(AbstractContextManager[T], Generic[T]):
    """The context manager ``cm`` under the name ``what``; see the module notes."""

    __slots__ = ("_make", "_open", "_what")

    def __init__(self, make: Callable[[], AbstractContextManager[T]], what: str) -> None:
        self._make = make
        self._open: list[AbstractContextManager[T]] = []  # entered, not exited: innermost last
        self._what = what

    def __enter__(self) -> T:
        cm = self._make()
        entered = cm.__enter__()
        self._open.append(cm)
        return entered

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return self._open.pop().__exit__(exc_type, exc, tb)

    def __getattr__(self, name: str) -> NoReturn:
        if name.startswith("__"):  # protocol probes (copy, pickle): plain AttributeError
            raise AttributeError(name)
        raise not_entered(self._what, name)


class AsyncBlock(AbstractAsyncContextManager[T], Generic[T]):
    """The async context manager ``cm`` under the name ``what``; see the module
    notes."""

    __slots__ = ("_make", "_open", "_what")

    def __init__(self, make: Callable[[], AbstractAsyncContextManager[T]], what: str) -> None:
        self._make = make
        self._open: list[AbstractAsyncContextManager[T]] = []  # entered, not exited: innermost last
        self._what = what

    async def __aenter__(self) -> T:
        cm = self._make()
        entered = await cm.__aenter__()
        self._open.append(cm)
        return entered

    def __enter__(self) -> NoReturn:  # a plain with: refused by name
        raise not_entered(self._what, "__enter__", is_async=True)

    def __exit__(self, *exc_info: object) -> None:  # never reached: __enter__ raises
        return None

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return await self._open.pop().__aexit__(exc_type, exc, tb)

    def __getattr__(self, name: str) -> NoReturn:
        if name.startswith("__"):
            raise AttributeError(name)
        raise not_entered(self._what, name, is_async=True)
