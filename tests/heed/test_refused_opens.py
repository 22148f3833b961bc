"""``scoped_heed.open`` refused leaves the environment as it was; its store options
are checked as ``keyspace.open`` checks them.

The opener creates up to three LMDB databases (``NAME``, ``NAME_scoped`` and the
registry), each in its own transaction. With too few ``max_dbs`` slots for all
of them it created the first ones and then refused, leaving ``NAME`` and
``NAME_scoped`` without the registry: every later open (with enough slots) took
the environment for scoped-heed 0.1.x and refused it. It now asks for room for
all three first, and creates none when they do not fit.
"""

from __future__ import annotations

from pathlib import Path

import lmdb
import pytest
from _heed_env import reference_env

from keyspace import scoped_heed
from keyspace.errors import StoreError

pytestmark = pytest.mark.timeout(60)


def _names(path: Path) -> list[bytes]:
    env = lmdb.open(str(path), max_dbs=64, readonly=True, lock=False)
    try:
        with env.begin() as txn:
            return [k for k, _ in txn.cursor()]
    finally:
        env.close()


def test_too_few_slots_in_a_new_environment_create_no_database(tmp_path: Path) -> None:
    env = tmp_path / "env"
    with pytest.raises(StoreError, match=r"max_dbs=2, 0 of them in use, and these need 3 more"):
        scoped_heed.open(env, "db", max_dbs=2)
    assert not env.exists()  # no environment either: nothing was created
    with pytest.raises(StoreError, match=r"max_dbs=1, 0 of them in use, and these need 2 more"):
        scoped_heed.open(env, "db", max_dbs=1, unnamed_default=True)
    assert not env.exists()
    env.mkdir()
    with pytest.raises(StoreError, match=r"max_dbs=0"):
        scoped_heed.open(env, "db", max_dbs=0)
    assert list(env.iterdir()) == []  # an empty folder stays as it was
    with scoped_heed.open(env, "db") as ks:  # not taken for scoped-heed 0.1.x
        ks.scope("t")[b"k"] = b"v"
        assert ks.scope("t")[b"k"] == b"v"


def test_too_few_slots_in_an_existing_environment_create_no_database(tmp_path: Path) -> None:
    env = reference_env(tmp_path)
    before = _names(env)
    assert len(before) == 12  # ten named databases and two keys of the unnamed default scope
    # telling the databases from data takes no slot: the three new ones need three
    with pytest.raises(StoreError, match=r"'fresh', 'fresh_scoped'.*max_dbs=2, 0 of them in use"):
        scoped_heed.open(env, "fresh", max_dbs=2)
    assert _names(env) == before
    with scoped_heed.open(env, "fresh", max_dbs=3) as ks:
        ks.scope("tenant1")[b"k"] = b"v"
    assert sorted(_names(env)) == sorted([*before, b"fresh", b"fresh_scoped"])


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("map_size", -1, "must be an int of 0 or more"),
        ("max_dbs", 2**64, "must be an int of 0 or more"),
        ("max_dbs", "x", "is not an integer"),
        ("max_dbs", True, "must be an int of 0 or more"),
        ("readonly", "maybe", "is not a boolean"),
    ],
)
def test_a_bad_store_option_is_named(tmp_path: Path, option: str, value: object, said: str) -> None:
    """Checked as keyspace.open checks them (no raw OverflowError or TypeError of
    the engine), before anything is created."""
    env = tmp_path / "env"
    with pytest.raises(StoreError, match=rf"option {option}={value!r} {said}"):
        scoped_heed.open(env, "db", **{option: value})  # type: ignore[arg-type]
    assert not env.exists()


def test_store_options_given_as_text_are_read_as_in_a_url(tmp_path: Path) -> None:
    with scoped_heed.open(tmp_path / "env", "db", map_size="64MiB", readonly="no") as ks:  # type: ignore[arg-type]
        ks.scope("t")[b"k"] = b"v"
        assert ks.scope("t")[b"k"] == b"v"
