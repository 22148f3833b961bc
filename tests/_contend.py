"""One contender of a race between processes, for the tests that race first
writes: it opens the store, waits for the others at a barrier, writes, and
reports its outcome (or the traceback of whatever went wrong) on a queue."""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from typing import Any

import keyspace


def contend(
    url: str, scheme: Any, who: str, barrier: Any, results: Any, write: Callable[[keyspace.Keyspace], str]
) -> None:
    """Open ``url`` with ``scheme``, wait at ``barrier`` (at most 30 s), then put
    ``(who, write(ks))`` on ``results``: ``write`` names the outcome it expects
    (a win, the error it was refused with). Any other outcome, an exception's
    traceback included, is reported too, for the parent to fail the test."""
    try:
        ks = keyspace.open(url, scheme=scheme)
    except BaseException:  # reported to the parent, which fails the test
        barrier.abort()
        results.put((who, f"open failed: {traceback.format_exc()}"))
        return
    try:
        try:
            barrier.wait(timeout=30)
        except threading.BrokenBarrierError:
            results.put((who, "the other contender did not start"))
            return
        try:
            results.put((who, write(ks)))
        except BaseException:
            results.put((who, f"failed: {traceback.format_exc()}"))
    finally:
        ks.close()
