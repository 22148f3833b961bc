"""A store whose only keys are keyspace records holds no data.

A keyspace opened with a feature on records the feature in any commit that
writes, a ``clear()`` of a fresh store included, while the scheme is recorded by
the first write of data. Such a store must open as the empty store it is,
without ``scheme=`` and from the command line, while a key another program
wrote still makes an unnamed open refuse to guess."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import run

import keyspace
from keyspace.errors import SchemeMismatch
from keyspace.stores import open_store

FEATURES = [{"changes": True}, {"ttl": True}]


@pytest.mark.parametrize("engine", ["lmdb", "sqlite"])
@pytest.mark.parametrize("features", FEATURES, ids=lambda f: next(iter(f)))
@pytest.mark.parametrize("scheme", ["tuple", "sublevel"])
def test_a_clear_as_first_commit_leaves_a_store_that_opens_unnamed(
    tmp_path: Path, engine: str, features: dict[str, bool], scheme: str
) -> None:
    url = f"{engine}://{tmp_path / 'db'}"
    with keyspace.open(url, scheme=scheme, **features) as ks:
        ks.scope("a").clear()
    with open_store(url) as store:
        assert list(store.scan(b"", None)), "the clear recorded the feature"
    with keyspace.open(url) as ks:  # raised SchemeMismatch: the feature record was taken for data
        assert list(ks.scope("a").items()) == []
        ks.scope("a")[b"k"] = b"v"
    with keyspace.open(url) as ks:
        assert ks.scope("a")[b"k"] == b"v"


def test_the_command_line_reads_and_writes_such_a_store(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'db'}"
    with keyspace.open(url, changes=True, scheme="sublevel") as ks:
        ks.scope("a").clear()
    run("put", url, "a", "-k", "k", "-v", "v")  # refused before: "holds keys but no scheme record"
    assert run("get", url, "a", "-k", "k").stdout.strip() == "v"


@pytest.mark.parametrize("scheme", ["tuple", "sublevel"])
def test_accounting_names_the_scheme_it_counts_for(tmp_path: Path, scheme: str) -> None:
    """Accounting's record names the scheme its counters belong to: the store
    opens unnamed under that scheme's default, else the error names it."""
    url = f"lmdb://{tmp_path / 'db'}"
    with keyspace.open(url, scheme=scheme, accounting=True) as ks:
        ks.scope("a").clear()
    if scheme == "tuple":
        with keyspace.open(url) as ks:
            ks.scope("a")[b"k"] = b"v"
            assert len(ks.scope("a")) == 1
    else:
        with pytest.raises(SchemeMismatch, match="keeps accounting for the scheme 'sublevel'"):
            keyspace.open(url)
    with keyspace.open(url, scheme=scheme) as ks:
        ks.scope("a")[b"j"] = b"w"
        assert ks.scope("a")[b"j"] == b"w"


def test_a_key_another_program_wrote_still_needs_the_scheme_named(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'db'}"
    with keyspace.open(url, changes=True) as ks:
        ks.scope("a").clear()
    with open_store(url) as store:
        store.put(b"!users!alice", b"1")  # a sublevel key written by another program
    with pytest.raises(SchemeMismatch, match="no scheme record"):
        keyspace.open(url)
    with keyspace.open(url, scheme="sublevel") as ks:
        assert ks.scope("users")[b"alice"] == b"1"
