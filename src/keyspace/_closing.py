"""Objects that close themselves when a ``with`` block ends."""

from __future__ import annotations

from types import TracebackType
from typing import Self

__all__ = ["Closing"]


class Closing:
    """A context manager on :meth:`close`: ``with x as y`` gives ``y is x`` and
    calls ``x.close()`` when the block ends, normally or by an exception (which
    goes on: a close that fails too adds its error to it as a note, and does not
    take its place)."""

    __slots__ = ()

    def close(self) -> None:
        """Release what the object holds."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is None:
            self.close()
            return
        try:
            self.close()
        except Exception as error:  # the block's error tells what went wrong first
            exc.add_note(f"closing {self!r} failed too: {type(error).__name__}: {error}")
