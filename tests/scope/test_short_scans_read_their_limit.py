"""A short scan (``items(start=, limit=)``) reads no more stored items than its
limit needs, in every scheme, and returns exactly the items of the full scan
cut at the limit, children's keys between own keys included (a scheme whose
own keys are filtered out of a range: AsciiHex, Sublevel)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.stores.lmdb import LMDBStore

SCHEMES = ["tuple", "asciihex", "sublevel", "length-prefixed", "scopehash"]


def _path(scheme: str) -> tuple[str, ...]:
    return ("users",) if scheme == "scopehash" else ("t", "users")


@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_short_scan_reads_no_more_than_its_limit(
    scheme: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with keyspace.open(f"lmdb://{tmp_path}/store", scheme=scheme) as ks:
        scope = ks.scope(*_path(scheme))
        scope.update({b"k%04d" % i: b"v" for i in range(500)})
        asked: list[int] = []
        page = LMDBStore._page
        prefix = scope.layout.prefix

        def counted(self: Any, start: bytes, stop: Any, reverse: bool, size: int, *rest: Any) -> Any:
            if start.startswith(prefix):  # the scope's items, not a record the catalog reads
                asked.append(size)
            return page(self, start, stop, reverse, size, *rest)

        monkeypatch.setattr(LMDBStore, "_page", counted)
        got = list(scope.items(start=b"k0100", limit=10))
        assert got == [(b"k%04d" % i, b"v") for i in range(100, 110)]
        assert sum(asked) <= 10, asked
        asked.clear()
        got = list(scope.keys(stop=b"k0400", reverse=True, limit=3))
        assert got == [b"k0399", b"k0398", b"k0397"]
        assert sum(asked) <= 3, asked


_KEY = st.binary(min_size=1, max_size=4).filter(lambda k: not k.startswith(b"!"))


@settings(max_examples=40, deadline=None)
@given(
    scheme=st.sampled_from(["asciihex", "sublevel", "tuple"]),
    own=st.lists(_KEY, max_size=30, unique=True),
    child=st.lists(_KEY, max_size=30, unique=True),
    start=st.none() | _KEY,
    reverse=st.booleans(),
    limit=st.integers(0, 40),
)
def test_a_short_scan_is_the_full_scan_cut_at_its_limit(
    tmp_path_factory: pytest.TempPathFactory,
    scheme: str,
    own: list[bytes],
    child: list[bytes],
    start: bytes | None,
    reverse: bool,
    limit: int,
) -> None:
    directory = tmp_path_factory.mktemp("store")
    with keyspace.open(f"lmdb://{directory}/store", scheme=scheme) as ks:
        scope = ks.scope("t", "users")
        scope.update({k: b"own" + k for k in own})
        scope.scope("c").update({k: b"child" + k for k in child})  # keys between the own ones
        full = list(scope.items(start=start, reverse=reverse))
        assert list(scope.items(start=start, reverse=reverse, limit=limit)) == full[:limit]
