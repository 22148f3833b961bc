"""Opening a store that does not exist says what the user can do, naming no
parameter of the library."""

from __future__ import annotations

from pathlib import Path

import pytest

import keyspace
from keyspace.errors import StoreError


@pytest.mark.parametrize("name", ["nothere.lmdb", "nothere.sqlite"])
def test_a_missing_path_says_what_to_do(tmp_path: Path, name: str) -> None:
    with pytest.raises(StoreError) as info:
        keyspace.open(str(tmp_path / name), create=False)
    message = str(info.value)
    assert "nothing exists at that path; check the path, or make a new store there" in message
    assert "create=False" not in message
    assert not (tmp_path / name).exists()
