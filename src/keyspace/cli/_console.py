"""Terminal output: one console for results (stdout), one for progress and
messages (stderr), and a progress bar that appears only when it is worth it."""

from __future__ import annotations

import time
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:  # imported when a bar is first shown: most commands never show one
    from rich.progress import Progress, TaskID

__all__ = ["Ticker", "err", "out"]


class _Console(Console):
    """A console whose closed pipe (``keyspace inspect … | head``) ends the
    command as a success: :func:`keyspace.cli.main` stops quietly on the
    :class:`BrokenPipeError` (rich's own handling exits with 1)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError("the reader of the output went away")


_out: Console | None = None
_err: Console | None = None


def out() -> Console:
    """The console for results (stdout); plain text when stdout is not a terminal.
    No emoji codes: a key such as ``rod:a:b`` prints as it is."""
    global _out
    if _out is None:
        _out = _Console(highlight=False, soft_wrap=True, emoji=False)
    return _out


def err() -> Console:
    """The console for progress and notes (stderr)."""
    global _err
    if _err is None:
        _err = _Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)
    return _err


class Ticker:
    """Counts work; shows a rich progress bar on stderr once the work has taken
    longer than ``delay`` seconds, and only when stderr is a terminal. With
    ``total`` the bar shows progress and time left, without it a running count.

    ``advance(n)`` costs one addition, plus a clock read every 4,096 items.
    """

    def __init__(self, label: str, total: int | None = None, *, delay: float = 0.4) -> None:
        self.label = label
        self.total = total
        self.count = 0
        self._delay = delay
        self._started = time.monotonic()
        self._next_check = 4096
        self._enabled = err().is_terminal
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Ticker:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._refresh()
            self._progress.stop()

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more items done."""
        self.count += n
        if self.count < self._next_check or not self._enabled:
            return
        self._next_check = self.count + 4096
        if self._progress is None:
            if time.monotonic() - self._started < self._delay:
                return
            self._start()
        self._refresh()

    def _start(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
        if self.total is not None:
            columns.append(TimeRemainingColumn())
        self._progress = Progress(*columns, console=err(), transient=False)
        self._task = self._progress.add_task(self.label, total=self.total)
        self._progress.start()

    def _refresh(self) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=self.count)
