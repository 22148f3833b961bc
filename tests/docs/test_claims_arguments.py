"""docs/guarantees.md, "Bad input": an argument a call does not take raises
:class:`InvalidArgument` before anything is read or written. The range flags
(``include_start``, ``include_stop``, ``reverse``) are bools: a truthy string such
as ``"false"`` taken as it is would read the stop key, reverse the order or, in
``clear_range``, delete a key the caller meant to keep."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import keyspace
import keyspace.aio
from keyspace.errors import InvalidArgument
from keyspace.schemes import AsciiHex, LengthPrefixed, ScopeHash, Sublevel, TupleScheme

SCHEMES = [TupleScheme(), LengthPrefixed(), AsciiHex(), Sublevel(), ScopeHash()]
BAD = ["false", 0, 1, None, "yes"]


@pytest.fixture(params=["memory", "lmdb"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return "memory:" if request.param == "memory" else f"lmdb://{tmp_path}/db"


def _filled(url: str, scheme: Any) -> Any:
    ks = keyspace.open(url, scheme=scheme)
    scope = ks.scope("t")
    scope.update({b"a": b"1", b"m": b"2", b"z": b"3"})
    ks.scope("u")[b"m"] = b"other"
    return ks


@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: s.name)
@pytest.mark.parametrize("flag", ["include_start", "include_stop", "reverse"])
@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_a_range_flag_that_is_not_a_bool_is_refused(url: str, scheme: Any, flag: str, bad: Any) -> None:
    ks = _filled(url, scheme)
    scope = ks.scope("t")
    before = list(ks.store.scan())
    for limit in (None, 2, 5000):  # the chunked route, the short scan, the long limit
        for method in ("items", "keys", "values"):
            kwargs: dict[str, Any] = {"start": b"a", "stop": b"m", flag: bad, "limit": limit}
            with pytest.raises(InvalidArgument) as caught:
                list(getattr(scope, method)(**kwargs))
            assert flag in str(caught.value) and repr(bad) in str(caught.value)
    if flag != "reverse":
        with pytest.raises(InvalidArgument, match=flag):
            scope.clear_range(start=b"a", stop=b"m", **{flag: bad})
    assert list(ks.store.scan()) == before
    # the same calls with bools answer as documented
    assert list(scope.keys(start=b"a", stop=b"m", include_stop=True)) == [b"a", b"m"]
    assert list(scope.keys(start=b"a", stop=b"z", reverse=True, include_start=False)) == [b"m"]
    ks.close()


@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: s.name)
def test_clear_range_with_include_stop_false_as_text_keeps_the_stop_key(url: str, scheme: Any) -> None:
    ks = _filled(url, scheme)
    scope = ks.scope("t")
    with pytest.raises(InvalidArgument):
        scope.clear_range(stop=b"m", include_stop="false")
    assert dict(scope.items()) == {b"a": b"1", b"m": b"2", b"z": b"3"}
    scope.clear_range(stop=b"m", include_stop=False)
    assert dict(scope.items()) == {b"m": b"2", b"z": b"3"}
    assert ks.scope("u")[b"m"] == b"other"
    ks.close()


def test_the_asyncio_api_refuses_the_same_arguments() -> None:
    async def run() -> None:
        ks = await keyspace.aio.open("memory:")
        scope = ks.scope("t")
        await scope.put(b"a", b"1")
        await scope.put(b"b", b"2")
        for kwargs in ({"reverse": "false"}, {"include_stop": "no", "stop": b"b"}, {"limit": "1"}):
            with pytest.raises(InvalidArgument):
                [item async for item in scope.items(**kwargs)]
        assert [item async for item in scope.items(reverse=True, limit=1)] == [(b"b", b"2")]
        await ks.close()

    asyncio.run(run())
