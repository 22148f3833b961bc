"""An LMDB database name holding a NUL character, or with no UTF-8 form, is refused
before LMDB sees it.

LMDB reads a database name up to its first NUL, so ``db="cache\\x00x"`` opened the
database ``cache``: a plain store wrote its keys and scheme record there, and a
scoped-heed database ``cache\\x00x`` had its default scope and its named scopes
both in ``cache`` (a write to the named scope ``tenant1`` became a default-scope
key that the Rust side reads). Now the library, the scoped-heed opener and the
command refuse such a name with :class:`StoreError` and leave the environment as
it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import run
from _heed_env import data_digest, reference_env

from keyspace import scoped_heed
from keyspace.errors import StoreError
from keyspace.stores import LMDBStore

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def env(tmp_path: Path) -> Path:
    return reference_env(tmp_path)


@pytest.mark.parametrize("readonly", [False, True])
def test_the_store_refuses_a_name_with_a_nul(env: Path, readonly: bool) -> None:
    before = data_digest(env)
    with pytest.raises(StoreError, match=r"NUL character at offset 5.*'cache'") as info:
        LMDBStore(env, db="cache\x00x", max_dbs=64, readonly=readonly)
    assert "'cache\\x00x'" in str(info.value)
    assert data_digest(env) == before


def test_a_new_environment_gets_no_database_of_the_cut_name(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="NUL character"):
        LMDBStore(tmp_path / "fresh", db="a\x00b")
    with LMDBStore(tmp_path / "fresh", max_dbs=4) as store:
        assert store.databases() == []


def test_scoped_heed_refuses_a_database_name_with_a_nul(env: Path) -> None:
    before = data_digest(env)
    with pytest.raises(StoreError, match="NUL character"):
        scoped_heed.open(env, "cache\x00x")
    assert data_digest(env) == before


@pytest.mark.parametrize(
    "args",
    [
        ("put", "lmdb://{env}?db=cache%00zz", "--scheme", "sublevel", "--key", "a", "--value", "b"),
        ("put", "scoped-heed://{env}?name=cache%00x", "tenant1", "--key", "a", "--value", "b"),
    ],
)
def test_the_command_refuses_a_database_name_with_a_nul(env: Path, args: tuple[str, ...]) -> None:
    before = data_digest(env)
    proc = run(*(a.format(env=env) for a in args), ok=False)
    assert proc.returncode == 1 and "NUL character" in proc.stderr, proc.stderr
    assert data_digest(env) == before


def test_a_name_with_no_utf8_form_is_a_store_error(env: Path) -> None:
    """A lone surrogate (as ``os.fsdecode`` makes of undecodable bytes) raised a raw
    ``UnicodeEncodeError`` out of the scoped-heed opener."""
    before = data_digest(env)
    said = r"'cache\\udcff' .* has no UTF-8 form \(surrogates not allowed at offset 5\)"
    with pytest.raises(StoreError, match=said):
        scoped_heed.open(env, "cache\udcff")
    with pytest.raises(StoreError, match="has no UTF-8 form"):
        LMDBStore(env, db="\udcff", max_dbs=64)
    assert data_digest(env) == before
