"""One reading of a store URL: what ``open_store`` opens is what every other path
takes the URL to name — ``open(create=False)``'s existence check, the command
line's clean-up after a failed command and its same-store check in ``migrate``,
and a ``scoped-heed:`` URL's environment. The URL scheme is case-insensitive and
the ``//`` after its colon optional, everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import run
from _heed_env import reference_env

import keyspace
from keyspace.cli._created import local_path as cli_local_path
from keyspace.cli._heed import open_heed
from keyspace.errors import StoreError
from keyspace.stores import local_path, open_store, parse_url

SPELLINGS = {
    "lmdb": ["{p}", "lmdb://{p}", "LMDB://{p}", "lmdb:{p}", "Lmdb:{p}?map_size=1GiB"],
    "sqlite": ["sqlite://{p}", "SQLite://{p}", "sqlite:{p}", "SQLITE:{p}?timeout=5"],
    "leveldb": ["leveldb://{p}", "LevelDB:{p}"],
}


def _spellings() -> list[tuple[str, str]]:
    return [(engine, spelling) for engine, forms in SPELLINGS.items() for spelling in forms]


@pytest.mark.parametrize(("engine", "spelling"), _spellings())
@pytest.mark.parametrize("relative", [False, True])
def test_local_path_is_where_open_store_makes_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str, spelling: str, relative: bool
) -> None:
    monkeypatch.chdir(tmp_path)
    where = "store" if relative else str(tmp_path / "store")
    url = spelling.format(p=where)
    assert parse_url(url)[0] == engine
    assert local_path(url) == where
    with open_store(url) as store:
        store.put(b"k", b"v")
    assert (tmp_path / "store").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) in (["store"], ["store", "store-shm", "store-wal"])


@pytest.mark.parametrize(("engine", "spelling"), _spellings())
def test_open_without_create_finds_a_store_however_its_url_is_spelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str, spelling: str
) -> None:
    monkeypatch.chdir(tmp_path)
    first = SPELLINGS[engine][0].format(p=str(tmp_path / "store"))
    with keyspace.open(first) as ks:
        ks.scope("s")[b"k"] = b"v"
    for where in ("store", str(tmp_path / "store")):
        with keyspace.open(spelling.format(p=where), create=False) as ks:
            assert ks.scope("s")[b"k"] == b"v"
    with pytest.raises(StoreError, match="no store"):
        keyspace.open(spelling.format(p="elsewhere"), create=False)
    assert not (tmp_path / "elsewhere").exists()


def test_a_url_open_store_refuses_is_refused_alike_by_local_path() -> None:
    for url in ("", "   ", "ftp://x", "sqlite://", "sqlite:", "memory"):
        with pytest.raises(StoreError) as opened:
            open_store(url)
        with pytest.raises(StoreError) as located:
            local_path(url)
        assert str(located.value) == str(opened.value)
    assert local_path("memory:") is None
    assert local_path("etcd://127.0.0.1:2379") is None


def test_the_command_line_reads_a_store_by_any_spelling_of_its_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run("put", "sqlite:x.db", "s", "--key", "k", "--value", "v")
    assert run("get", "SQLITE:x.db", "s", "--key", "k").stdout == "v\n"
    assert run("get", f"sqlite://{tmp_path / 'x.db'}", "s", "--key", "k").stdout == "v\n"
    assert "1" in run("inspect", "sqlite:x.db").stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.db"]  # the reads left no -wal, -shm


def test_scoped_heed_options_take_the_environment_as_any_lmdb_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    reference_env(tmp_path)
    got = {
        env: run(
            "get",
            env,
            "tenant1",
            "--scoped-heed",
            "typed",
            "--api",
            "types",
            "--key-type",
            "String",
            "--value-type",
            "String",
            "--key",
            "b",
        ).stdout
        for env in ("env", "lmdb:env", "LMDB://env", f"lmdb://{tmp_path / 'env'}")
    }
    assert set(got.values()) == {"short\n"}, got
    wrong = run("get", "sqlite:env", "tenant1", "--scoped-heed", "typed", "--key", "b", ok=False)
    assert wrong.returncode == 1 and "LMDB directory, not a sqlite store" in wrong.stderr, wrong.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["env"]


@pytest.mark.parametrize(
    ("src", "dst"),
    [
        ("LMDB://{p}", "{p}"),
        ("{p}", "LMDB://{p}"),
        ("lmdb:{p}", "lmdb://{p}"),
    ],
)
def test_migrate_into_the_same_store_spelled_otherwise_is_refused(tmp_path: Path, src: str, dst: str) -> None:
    where = str(tmp_path / "one.lmdb")
    with keyspace.open(where) as ks:
        ks.scope("s")[b"k"] = b"v"
    urls = src.format(p=where), dst.format(p=where)
    done = run("migrate", *urls, "--to-scheme", "length-prefixed", ok=False)
    assert done.returncode == 1
    assert "source and destination are the same store" in done.stderr, done.stderr
    with keyspace.open(where, create=False) as ks:
        assert ks.scheme.name == "tuple" and ks.scope("s")[b"k"] == b"v"


def test_a_failed_command_takes_back_a_store_it_created_under_a_short_sqlite_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for url in ("sqlite:new.db", "SQLite:new.db", "LMDB:new.lmdb"):
        done = run("put", url, "--scheme", "sublevel", "a!b", "--key", "k", "--value", "v", ok=False)
        assert done.returncode == 1 and "a!b" in done.stderr, done.stderr
        assert list(tmp_path.iterdir()) == [], url


def test_a_scoped_heed_url_names_the_environment_it_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    env = reference_env(tmp_path)
    for url in (f"scoped-heed://{env}?name=cache", f"scoped-heed:lmdb://{env}?name=cache"):
        assert cli_local_path(url) == str(env)
        ks, _ = open_heed(url, readonly=True)
        try:
            assert ks.scope_names()
        finally:
            ks.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["env"]
