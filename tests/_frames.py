"""The Python functions an operation calls, for the tests of one-frame routes."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable
from typing import Any


def python_calls(op: Callable[[], object], runs: int = 3) -> list[str]:
    """The Python functions ``op()`` calls (its own frame included): the
    shortest list of ``runs`` runs, each with the cyclic collector off, so that
    what runs beside the route now and then (a collection's finalizers, a
    store's periodic measure of its map) is not counted as the route."""
    shortest: list[str] | None = None
    for _ in range(runs):
        seen: list[str] = []

        def profile(frame: Any, event: str, arg: Any, seen: list[str] = seen) -> None:
            if event == "call":
                seen.append(frame.f_code.co_name)

        gc.disable()
        sys.setprofile(profile)
        try:
            op()
        finally:
            sys.setprofile(None)
            gc.enable()
        if shortest is None or len(seen) < len(shortest):
            shortest = seen
    assert shortest is not None
    return shortest
