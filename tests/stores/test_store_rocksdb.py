"""RocksDBStore runs the conformance suite."""

import uuid
from pathlib import Path

import pytest

from keyspace.stores import RocksDBStore, Store, open_store
from keyspace.testing import MakeStore, StoreSuite


class TestRocksDBStore(StoreSuite):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> MakeStore:
        def make(url: str | None = None) -> Store:
            return open_store(url or f"rocksdb://{tmp_path / uuid.uuid4().hex}")

        return make


def test_open_store_gives_rocksdb(tmp_path: Path) -> None:
    with open_store(f"rocksdb://{tmp_path / 'db'}") as store:
        assert isinstance(store, RocksDBStore)


def _files(path: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes()
        for p in sorted(path.iterdir())
        if p.name != "LOG" and not p.name.startswith("LOG.")
    }


@pytest.mark.parametrize("readonly", [False, True])
def test_a_store_of_rocksdicts_default_mode_is_refused_and_left_unchanged(
    tmp_path: Path, readonly: bool
) -> None:
    """An open of a store rocksdict wrote in its default (type-tagged) mode
    rewrote its rocksdict-config.json to raw mode and its options to the bytewise
    comparator, then refused it: its own program could no longer open it."""
    from rocksdict import Rdict

    import keyspace
    from keyspace.errors import StoreError

    path = tmp_path / "app"
    db = Rdict(str(path))
    db["a"] = 1
    db[2] = "x"
    db.close()
    before = _files(path)
    with pytest.raises(StoreError, match=r"raw_mode=False.*left unchanged"):
        keyspace.open(f"rocksdb://{path}", readonly=readonly)
    assert _files(path) == before
    db = Rdict(str(path))
    assert dict(db.items()) == {"a": 1, 2: "x"}
    db.close()


def test_a_refused_readonly_open_leaves_no_file(tmp_path: Path) -> None:
    """A read-only open that RocksDB refuses (a store whose comparator is not the
    bytewise one) left a new rocksdict-config.json behind."""
    from rocksdict import Rdict

    from keyspace.errors import StoreError

    path = tmp_path / "other"
    db = Rdict(str(path))  # comparator "rocksdict", as another program keeps it ...
    db["a"] = 1
    db.close()
    (path / "rocksdict-config.json").unlink()  # ... with no rocksdict file
    before = sorted(p.name for p in path.iterdir())
    with pytest.raises(StoreError):
        open_store(f"rocksdb://{path}?readonly=true")
    assert sorted(p.name for p in path.iterdir()) == before


@pytest.mark.parametrize("engine", ["rocksdb", "leveldb"])
def test_a_path_holding_an_engine_word_changes_no_error(tmp_path: Path, engine: str) -> None:
    """The engine's words were looked for in its messages with the store's path in
    them: under /…/blockchain a closed store was reported as already open (lock)."""
    import keyspace
    from keyspace.errors import StoreClosed

    for name in ("blockchain", "closed-accounts", "corruption-reports"):
        (tmp_path / name).mkdir()
        ks = keyspace.open(f"{engine}://{tmp_path / name}/db")
        scope = ks.scope("a")
        scope[b"k"] = b"v"
        ks.close()
        with pytest.raises(StoreClosed):
            scope.get(b"k")
