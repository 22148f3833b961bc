"""Opening stores: options, read-only opens, and every open failure as a StoreError."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.errors import InvalidArgument, LayoutError, StoreClosed, StoreError
from keyspace.stores import open_store
from keyspace.stores._options import parse_value


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` with a hash of its bytes: "byte-for-byte unchanged"."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            found[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _photos(tmp_path: Path) -> Path:
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "cat.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    return folder


# -- read-only opens never create or change anything ---------------------------


@pytest.mark.parametrize("engine", ["lmdb", "leveldb", "rocksdb"])
@pytest.mark.parametrize("readonly", [True, False])
def test_a_folder_that_is_not_a_store_is_refused_and_left_unchanged(
    tmp_path: Path, engine: str, readonly: bool
) -> None:
    folder = _photos(tmp_path)
    before = _tree(tmp_path)
    with pytest.raises(StoreError, match=r"not an? .* store") as caught:
        keyspace.open(f"{engine}://{folder}", readonly=readonly)
    assert not isinstance(caught.value, StoreClosed)
    assert _tree(tmp_path) == before


@pytest.mark.parametrize(
    ("engine", "stray"),
    [
        ("leveldb", "LOCK"),
        ("leveldb", "CURRENT"),
        ("rocksdb", "LOCK"),
        ("rocksdb", "CURRENT"),
        ("lmdb", "lock.mdb"),
    ],
)
@pytest.mark.parametrize("readonly", [True, False])
def test_a_folder_with_one_file_of_an_engines_name_is_not_its_store(
    tmp_path: Path, engine: str, stray: str, readonly: bool
) -> None:
    """One file named LOCK (or lock.mdb) in someone's folder made it a store: a
    writable open made a new store among the photos, and a refused one (a CURRENT
    that is no engine's) left the engine's LOCK and LOG files there."""
    folder = _photos(tmp_path)
    (folder / stray).write_bytes(b"someone else's file\n")
    before = _tree(tmp_path)
    with pytest.raises(StoreError, match=r"not an? .* store"):
        keyspace.open(f"{engine}://{folder}", readonly=readonly)
    assert _tree(tmp_path) == before


@pytest.mark.parametrize(
    ("engine", "stray"),
    [
        ("lmdb", "CURRENT"),
        ("rocksdb", "data.mdb"),
        ("lmdb", "IDENTITY"),
        ("leveldb", "IDENTITY"),
        ("leveldb", "data.mdb"),
    ],
)
def test_a_stray_file_of_another_engines_name_is_no_store_of_it(
    tmp_path: Path, engine: str, stray: str
) -> None:
    """A folder of photos with one file named CURRENT, opened as lmdb://, was called
    a LevelDB store, and the message said to open it as leveldb://."""
    folder = _photos(tmp_path)
    (folder / stray).write_bytes(b"someone else's file\n")
    before = _tree(tmp_path)
    with pytest.raises(StoreError, match=r"not an? .* store: .* is a directory of \d+ other files") as caught:
        keyspace.open(f"{engine}://{folder}")
    assert "open it as" not in str(caught.value)
    assert _tree(tmp_path) == before


@pytest.mark.parametrize(
    ("engine", "other"), [("lmdb", "leveldb"), ("leveldb", "rocksdb"), ("rocksdb", "lmdb")]
)
def test_another_engines_store_is_named_with_the_url_to_open_it(
    tmp_path: Path, engine: str, other: str
) -> None:
    with keyspace.open(f"{other}://{tmp_path / 'db'}") as ks:
        ks.scope("a")[b"k"] = b"v"
    before = _tree(tmp_path)
    with pytest.raises(StoreError, match=f"open it as {other}://"):
        keyspace.open(f"{engine}://{tmp_path / 'db'}")
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("engine", ["lmdb", "leveldb", "rocksdb", "sqlite", "memory"])
@pytest.mark.parametrize("readonly", [None, 0, 1, [], 0.5])
def test_a_readonly_flag_that_is_not_a_bool_is_refused(tmp_path: Path, engine: str, readonly: Any) -> None:
    """readonly=None, 0 or [] opened the store writable (and created it), read as
    false; every other flag was already refused so."""
    url = "memory:" if engine == "memory" else f"{engine}://{tmp_path}/db"
    with pytest.raises(StoreError, match=f"option readonly={re.escape(repr(readonly))} is not a boolean"):
        keyspace.open(url, readonly=readonly)
    assert not (tmp_path / "db").exists()


@pytest.mark.parametrize("engine", ["lmdb", "leveldb", "rocksdb", "sqlite"])
def test_readonly_open_of_a_missing_store_creates_nothing(tmp_path: Path, engine: str) -> None:
    with pytest.raises(StoreError, match=r"not an? .* store"):
        keyspace.open(f"{engine}://{tmp_path / 'missing'}", readonly=True)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("readonly", [True, False])
@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_another_applications_sqlite_file_is_refused_unchanged(
    tmp_path: Path, readonly: bool, journal: str
) -> None:
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA journal_mode={journal}")
    conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO photos (name) VALUES ('cat')")
    conn.commit()
    conn.close()
    before = _tree(tmp_path)
    with pytest.raises(StoreError, match="another application"):
        keyspace.open(f"sqlite://{path}", readonly=readonly)
    assert _tree(tmp_path) == before
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == journal  # no WAL switch
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["photos"]
    conn.close()


@pytest.mark.parametrize("engine", ["lmdb", "sqlite", "leveldb", "rocksdb"])
def test_readonly_open_reads_and_refuses_every_write(tmp_path: Path, engine: str) -> None:
    url = f"{engine}://{tmp_path / 'store'}"
    with keyspace.open(url) as ks:
        ks.scope("a")[b"k"] = b"v"
    with keyspace.open(url, readonly=True) as ks:
        scope = ks.scope("a")
        assert scope[b"k"] == b"v"
        assert list(scope.items()) == [(b"k", b"v")]
        for write in (
            lambda: scope.__setitem__(b"x", b"y"),
            lambda: scope.__delitem__(b"k"),
            lambda: scope.update({b"x": b"y"}),
            scope.clear,
        ):
            with pytest.raises(StoreError, match="read-only"):
                write()
        with pytest.raises(StoreError, match="read-only"), ks.transaction() as tx:
            tx.scope("a")[b"x"] = b"y"
        with ks.snapshot() as snap:
            assert snap.scope("a")[b"k"] == b"v"
    with keyspace.open(url) as ks:
        assert dict(ks.scope("a").items()) == {b"k": b"v"}


def test_readonly_via_url_query(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 's'}"
    keyspace.open(url).close()
    with keyspace.open(url + "?readonly=true") as ks, pytest.raises(StoreError, match="read-only"):
        ks.scope()[b"k"] = b"v"


# -- URLs and options ------------------------------------------------------------


@pytest.mark.parametrize("url", ["", "  ", "memory", "lmdb", "sqlite/x.db", "etcd"])
def test_empty_url_and_scheme_typos_raise_and_create_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError):
        keyspace.open(url)
    assert list(tmp_path.iterdir()) == []


def test_url_options_are_passed_and_never_part_of_the_path(tmp_path: Path) -> None:
    store = open_store(f"lmdb://{tmp_path / 'db'}?sync=false&map_size=4MiB&max_readers=7")
    try:
        info = store._env.info()  # type: ignore[attr-defined]
        assert info["map_size"] == 4 << 20
        assert info["max_readers"] == 7
    finally:
        store.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db"]
    with keyspace.open(f"sqlite://{tmp_path / 'x.db'}?timeout=0.5&sync=false") as ks:
        assert ks.store._timeout == 0.5  # type: ignore[attr-defined]
    with keyspace.open(tmp_path / "bare", map_size=1 << 20) as ks:
        assert ks.store._env.info()["map_size"] == 1 << 20  # type: ignore[attr-defined]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bare", "db", "x.db"]


@pytest.mark.parametrize(
    ("url", "options", "known"),
    [
        ("lmdb://{}/a?syncc=false", {}, "map_size, max_dbs, max_readers, readonly, sync"),
        ("lmdb://{}/a", {"mapsize": 1}, "map_size"),
        ("sqlite://{}/a.db?busy=1", {}, "readonly, sync, timeout"),
        ("leveldb://{}/a", {"cache": 1}, "cache_size, create_if_missing"),
        ("rocksdb://{}/a?wal=1", {}, "cache_size, create_if_missing"),
        ("memory:?size=1", {}, "known options: readonly"),
    ],
)
def test_unknown_options_are_refused_with_the_known_ones(
    tmp_path: Path, url: str, options: dict[str, int], known: str
) -> None:
    with pytest.raises(StoreError, match=r"unknown .*option") as caught:
        keyspace.open(url.format(tmp_path), **options)
    assert known in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_bad_option_value_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not a boolean"):
        keyspace.open(f"lmdb://{tmp_path}/a?sync=maybe")
    with pytest.raises(StoreError, match="not an integer"):
        keyspace.open(f"lmdb://{tmp_path}/a?map_size=lots")


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"db": 5}, StoreError, "db=5 must be a str"),
        (
            {"map_size": 2**70},
            StoreError,
            "map_size=1180591620717411303424 must be an int of 0 or more and at most 9223372036854775807",
        ),
        ({"map_size": -1}, StoreError, "map_size=-1 must be an int of 0 or more"),
        ({"max_readers": 0}, StoreError, "max_readers=0 must be 1 or more"),
        ({"scheme": 5}, InvalidArgument, "scheme=5 has type int, not a Scheme"),
        ({"scheme": object()}, InvalidArgument, "not a Scheme or a scheme name"),
        ({"leaf_depth": -1}, LayoutError, "leaf_depth must be an int of 0 or more, not -1"),
        ({"scheme": "length-prefixed", "leaf_depth": "2"}, LayoutError, "not '2'"),
    ],
)
def test_bad_arguments_to_open_are_refused_before_a_store_is_made(
    tmp_path: Path, arguments: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        keyspace.open(str(tmp_path / "store"), **arguments)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(StoreError, match="at most 9223372036854775807"):  # the same bound in a URL
        keyspace.open(f"lmdb://{tmp_path}/store?map_size=9999999PiB")
    assert list(tmp_path.iterdir()) == []


def test_bad_arguments_to_attach_are_refused() -> None:
    with keyspace.open("memory:") as ks:
        with pytest.raises(InvalidArgument, match="has type list"):
            keyspace.attach(ks.store, scheme=[], close_store=False)
        with pytest.raises(LayoutError, match="leaf_depth"):
            keyspace.attach(ks.store, leaf_depth=1.5, close_store=False)


def test_create_if_missing_false(tmp_path: Path) -> None:
    for engine in ("leveldb", "rocksdb"):
        with pytest.raises(StoreError, match="does not exist"):
            keyspace.open(f"{engine}://{tmp_path / engine}?create_if_missing=false")
    assert list(tmp_path.iterdir()) == []


# -- each cause of a failed open is named ----------------------------------------


@pytest.mark.parametrize("engine", ["lmdb", "sqlite", "leveldb", "rocksdb"])
def test_missing_parent_directory(tmp_path: Path, engine: str) -> None:
    with pytest.raises(StoreError, match=r"parent directory .* does not exist"):
        keyspace.open(f"{engine}://{tmp_path / 'no' / 'such'}")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("engine", ["lmdb", "leveldb", "rocksdb"])
def test_a_file_where_a_directory_is_expected(tmp_path: Path, engine: str) -> None:
    (tmp_path / "f").write_bytes(b"x")
    with pytest.raises(StoreError, match="is a file, not a directory"):
        keyspace.open(f"{engine}://{tmp_path / 'f'}")


def test_a_directory_where_an_sqlite_file_is_expected(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        keyspace.open(f"sqlite://{tmp_path}")


def test_a_file_that_is_not_sqlite(tmp_path: Path) -> None:
    (tmp_path / "x.db").write_bytes(b"this is no database " * 300)
    before = _tree(tmp_path)
    for readonly in (False, True):
        with pytest.raises(StoreError, match="not an SQLite database"):
            keyspace.open(f"sqlite://{tmp_path / 'x.db'}", readonly=readonly)
    assert _tree(tmp_path) == before


def test_lmdb_data_file_that_is_not_lmdb(tmp_path: Path) -> None:
    store = tmp_path / "s"
    store.mkdir()
    (store / "data.mdb").write_bytes(b"garbage" * 2000)
    before = _tree(tmp_path)
    with pytest.raises(StoreError, match="no LMDB header"):
        keyspace.open(store)
    assert _tree(tmp_path) == before


_TRUNCATED = """
import sys, keyspace
from keyspace.errors import StoreError
try:
    with keyspace.open(sys.argv[1]) as ks:
        print(len(list(ks.scope("s").items())))
except StoreError as exc:
    print("StoreError:", exc)
"""


@pytest.mark.parametrize("keep", [90_000, 8192, 5000, 100])
def test_truncated_lmdb_file_is_a_store_error_not_sigbus(tmp_path: Path, keep: int) -> None:
    path = tmp_path / "s"
    with keyspace.open(path, map_size=8 << 20) as ks:
        ks.scope("s").update({b"k%05d" % i: b"v" * 100 for i in range(3000)})
    assert (path / "data.mdb").stat().st_size > keep
    os.truncate(path / "data.mdb", keep)
    proc = subprocess.run(
        [sys.executable, "-c", _TRUNCATED, str(path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr)  # -7 would be SIGBUS
    assert proc.stdout.startswith("StoreError:"), proc.stdout
    assert "truncated" in proc.stdout or "LMDB header" in proc.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to an unprivileged user")
@pytest.mark.parametrize("engine", ["lmdb", "sqlite", "leveldb", "rocksdb"])
@pytest.mark.parametrize("where", ["store", "folder"])
def test_permission_denied(tmp_path: Path, engine: str, where: str) -> None:
    """An unprivileged process opens a store it may not read (``store``: the store
    itself is private; ``folder``: the folder holding it is)."""
    base = Path(tempfile.mkdtemp(prefix="keyspace-perm-", dir="/tmp"))  # reachable by any user
    try:
        base.chmod(0o755)
        private = base / "private"
        private.mkdir(mode=0o755)
        store = private / "store"
        target = f"{engine}://{store}"
        with keyspace.open(target) as ks:
            ks.scope()[b"k"] = b"v"
        (private if where == "folder" else store).chmod(0o700 if engine != "sqlite" else 0o600)
        if where == "folder":
            private.chmod(0o700)
        code = (
            "import os, sys, pickle, keyspace\nfrom keyspace.errors import StoreError\n"
            "import keyspace.stores.lmdb, keyspace.stores.sqlite\n"
            "import keyspace.stores.leveldb, keyspace.stores.rocksdb\n"
            "import keyspace.keyspace\n"  # keyspace.open is imported when first used
            "os.setgid(65534)\nos.setuid(65534)\n"  # imports done: now an unprivileged user
            "try:\n    keyspace.open(sys.argv[1], readonly=sys.argv[2] == 'r')\n    print('opened')\n"
            "except StoreError as exc:\n    print('StoreError:', exc)\n"
        )
        for mode in ("r", "w"):
            proc = subprocess.run(
                [sys.executable, "-c", code, target, mode],
                capture_output=True,
                text=True,
                timeout=60,
                cwd="/",
            )
            assert proc.returncode == 0, proc.stderr
            assert proc.stdout.startswith("StoreError:"), proc.stdout
            assert "permission denied" in proc.stdout.lower(), proc.stdout
    finally:
        shutil.rmtree(base)


@pytest.mark.parametrize("engine", ["leveldb", "rocksdb"])
def test_store_locked_by_another_process(tmp_path: Path, engine: str) -> None:
    url = f"{engine}://{tmp_path / 'db'}"
    keyspace.open(url).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import keyspace, sys; ks = keyspace.open({url!r}); print('ok'); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ok"
        with pytest.raises(StoreError, match="already open") as caught:
            keyspace.open(url)
        assert not isinstance(caught.value, StoreClosed)
    finally:
        holder.communicate("", timeout=60)


@pytest.mark.parametrize(
    ("module", "adapter", "scheme", "extra"),
    [
        ("plyvel", "leveldb", "leveldb", "leveldb"),
        ("rocksdict", "rocksdb", "rocksdb", "rocksdb"),
        ("grpc", "etcd", "etcd", "etcd"),
    ],
)
def test_optional_engine_not_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, adapter: str, scheme: str, extra: str
) -> None:
    import keyspace.stores as stores

    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    for name in list(sys.modules):  # the adapter and its helpers, imported afresh
        if name == f"keyspace.stores.{adapter}" or name.startswith(f"keyspace.stores.{adapter}."):
            monkeypatch.delitem(sys.modules, name)
    for name in ("LevelDBStore", "RocksDBStore", "EtcdStore"):
        monkeypatch.delitem(stores.__dict__, name, raising=False)
    url = "etcd://127.0.0.1:1" if scheme == "etcd" else f"{scheme}://{tmp_path / 'db'}"
    with pytest.raises(StoreError, match=rf"pip install keyspace\[{extra}\]"):
        keyspace.open(url)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("engine", ["leveldb", "rocksdb"])
def test_corrupt_leveldb_and_rocksdb_manifest(tmp_path: Path, engine: str) -> None:
    url = f"{engine}://{tmp_path / 'db'}"
    with keyspace.open(url) as ks:
        ks.scope("a").update({b"k%d" % i: b"v" * 100 for i in range(500)})
    manifest = tmp_path / "db" / (tmp_path / "db" / "CURRENT").read_text().strip()
    manifest.write_bytes(b"garbage" * 10)
    with pytest.raises(StoreError, match="corrupt") as caught:
        keyspace.open(url)
    assert not isinstance(caught.value, StoreClosed)


def test_corrupt_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    with keyspace.open(f"sqlite://{path}") as ks:
        ks.scope("a").update({b"k%d" % i: b"v" * 100 for i in range(3000)})
    data = bytearray(path.read_bytes())
    data[4096:8192] = b"\xff" * 4096
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="corrupt"), keyspace.open(f"sqlite://{path}") as ks:
        list(ks.scope("a").keys())


def test_readers_full_names_the_max_readers_option_which_exists(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path / 'r'}?max_readers=2"
    with keyspace.open(url) as ks:
        held = []
        with pytest.raises(StoreError, match="max_readers") as caught:
            for _ in range(3):
                snap = ks.snapshot()
                held.append(snap)
                snap.__enter__()
        for snap in held:
            snap.__exit__(None, None, None)
    assert "larger max_readers" in str(caught.value)
    with keyspace.open(url.replace("max_readers=2", "max_readers=8")) as ks:
        snaps = [ks.snapshot() for _ in range(3)]
        for snap in snaps:
            snap.__enter__()
        for snap in snaps:
            snap.__exit__(None, None, None)


# -- properties --------------------------------------------------------------------

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
_UNITS |= {"KB": 10**3, "MB": 10**6, "GB": 10**9, "TiB": 1 << 40}


@given(st.integers(min_value=0, max_value=1 << 20), st.sampled_from(sorted(_UNITS)))
def test_size_options_read_every_suffix(number: int, unit: str) -> None:
    assert parse_value("map_size", f"{number}{unit}", 1) == number * _UNITS[unit]


_WRITES = st.lists(
    st.tuples(
        st.sampled_from(["put", "delete", "update", "clear", "drop", "transaction"]),
        st.binary(min_size=1, max_size=8),
    ),
    min_size=1,
    max_size=8,
)


@pytest.fixture(scope="module")
def readonly_stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("ro")
    urls = {}
    for engine in ("lmdb", "sqlite", "leveldb", "rocksdb"):
        url = f"{engine}://{root / engine}"
        with keyspace.open(url) as ks:
            ks.scope("a").update({b"k%d" % i: b"v%d" % i for i in range(20)})
            ks.scope("a", "child")[b"c"] = b"1"
        urls[engine] = url
    return urls


@settings(max_examples=25)
@given(engine=st.sampled_from(["lmdb", "sqlite", "leveldb", "rocksdb"]), writes=_WRITES)
def test_a_readonly_store_refuses_every_write_and_stays_unchanged(
    readonly_stores: dict[str, str], engine: str, writes: list[tuple[str, bytes]]
) -> None:
    with keyspace.open(readonly_stores[engine], readonly=True) as ks:
        before = list(ks.scope("a").subtree())
        scope = ks.scope("a")
        for kind, key in writes:
            with pytest.raises(StoreError, match="read-only"):
                if kind == "put":
                    scope[key] = b"x"
                elif kind == "delete":
                    del scope[b"k%d" % (key[0] % 20)]  # a key that is there
                elif kind == "update":
                    scope.update({key: b"x", key + b"2": b"y"})
                elif kind == "clear":
                    scope.clear()
                elif kind == "drop":
                    scope.drop()
                else:
                    with ks.transaction() as tx:
                        tx.scope("a")[key] = b"x"
        assert list(ks.scope("a").subtree()) == before
