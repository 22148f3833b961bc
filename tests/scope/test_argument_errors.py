"""Bad arguments of the scheme, asyncio and access entry points raise
:class:`~keyspace.errors.InvalidArgument` or :class:`~keyspace.errors.InvalidName`
naming the value, never a bare ``ValueError``/``TypeError``/``AttributeError``
(which a caller catching ``KeyspaceError`` would miss), and a path that is not a
tuple is never read as one (a str as its characters, ``None`` as the root)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from _schemes import SCOPE_AND_SIBLING

import keyspace
import keyspace.aio
from keyspace.access import grant
from keyspace.errors import InvalidArgument, InvalidName
from keyspace.schemes import Scheme
from keyspace.schemes.scoped_heed import ScopedHeed

SCHEMES: dict[str, Callable[[], Scheme]] = {
    **{name: make for name, (make, _scope, _sibling) in SCOPE_AND_SIBLING.items()},
    "scoped-heed-bytes": lambda: ScopedHeed("raw_bytes"),
    "scoped-heed-types": lambda: ScopedHeed("types"),
}
PATH_METHODS: dict[str, Callable[[Scheme, Any], object]] = {
    "prefix": lambda s, p: s.prefix(p),
    "validate_path": lambda s, p: s.validate_path(p),
    "own_range": lambda s, p: s.own_range(p),
    "own_ranges": lambda s, p: s.own_ranges(p),
    "subtree_range": lambda s, p: s.subtree_range(p),
    "layout": lambda s, p: s.layout(p),
    "encode": lambda s, p: s.encode(p, b"k"),
}
NOT_PATHS = [None, "ab", b"ab", ["a"], 5, iter(("a",))]


@pytest.mark.parametrize("method", PATH_METHODS)
@pytest.mark.parametrize("scheme_name", SCHEMES)
def test_a_path_that_is_not_a_tuple_is_refused_by_name(scheme_name: str, method: str) -> None:
    """``Sublevel().own_range("abc")`` was the range of ``("a", "b", "c")``, and
    ``subtree_range(None)`` of AsciiHex, Sublevel and scoped-heed the root's: the
    whole store, for a caller deleting it."""
    scheme, call = SCHEMES[scheme_name](), PATH_METHODS[method]
    for path in NOT_PATHS:
        with pytest.raises(InvalidName, match="must be a tuple") as info:
            call(scheme, path)
        assert type(path).__name__ in str(info.value)


class _Path(tuple[Any, ...]):
    __slots__ = ()

    def __iter__(self) -> Any:
        raise AssertionError("a path subclass's own __iter__ ran")


@pytest.mark.parametrize("method", PATH_METHODS)
@pytest.mark.parametrize("scheme_name", SCHEMES)
def test_a_tuple_subclass_path_is_its_tuple(scheme_name: str, method: str) -> None:
    scheme, call = SCHEMES[scheme_name](), PATH_METHODS[method]
    path = SCOPE_AND_SIBLING[scheme_name][1] if scheme_name in SCOPE_AND_SIBLING else ("s",)
    if method == "layout":
        assert call(scheme, _Path(path)).prefix == call(scheme, path).prefix  # type: ignore[attr-defined]
    else:
        assert call(scheme, _Path(path)) == call(scheme, path)


@pytest.mark.parametrize("api", ["nope", None, ["types"], b"types"])
def test_an_unknown_scoped_heed_api_is_invalid_argument(api: Any) -> None:
    with pytest.raises(InvalidArgument, match="unknown scoped-heed api"):
        ScopedHeed(api)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"workers": 0}, "workers"),
        ({"workers": "2"}, "workers"),
        ({"workers": True}, "workers"),
        ({"chunk": 0}, "chunk"),
        ({"chunk": 2.5}, "chunk"),
    ],
)
def test_bad_asyncio_worker_options_are_invalid_argument(options: dict[str, Any], named: str) -> None:
    """``workers="2"`` raised a bare TypeError, and ``workers=0`` was accepted on
    an engine that runs on one thread."""
    sync = keyspace.open("memory:")
    try:
        with pytest.raises(InvalidArgument, match=f"{named} must be an int of at least 1"):
            keyspace.aio.AsyncKeyspace(sync, **options)
    finally:
        sync.close()

    async def main() -> None:
        with pytest.raises(InvalidArgument, match=f"{named} must be an int of at least 1"):
            await keyspace.aio.open("memory:", **options)

    asyncio.run(asyncio.wait_for(main(), 30))


def test_grant_of_no_path_is_invalid_argument() -> None:
    with keyspace.open("memory:") as ks, pytest.raises(InvalidArgument, match="at least one scope path"):
        grant(ks, user="ann", password="pw")
