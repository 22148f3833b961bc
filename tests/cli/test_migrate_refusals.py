"""``keyspace migrate`` refuses, before its first batch, everything it would
refuse later: a failed migrate leaves the destination as it was (and no store it
created).

Found here: a source key that does not decode, a scopehash scope whose name is
not in the source's registry, and a scope the destination's scheme refuses (a
LengthPrefixed scope that would hold keys and a child scope) were met only by
the copy itself, after the batches before them had committed: the destination
was left half-written (and a destination the command created stayed).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import keyspace
from keyspace.cli import main
from keyspace.schemes import ScopeHash
from keyspace.stores import open_store


def _raw(url: str) -> list[tuple[bytes, bytes]]:
    with open_store(url, readonly=True) as store:
        return list(store.scan(b"", None))


def _migrate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["migrate", *args])
    return code, capsys.readouterr().err


def _refused(capsys: pytest.CaptureFixture[str], tmp_path: Path, src: str, *options: str) -> str:
    """Migrate ``src`` into a new store and into one that holds a key: both
    refused, the new one not left behind, the other unchanged."""
    new = f"sqlite://{tmp_path / 'new.sqlite'}"
    code, err = _migrate(capsys, src, new, "--batch", "1", *options)
    assert code == 1 and "nothing was written" in err, err
    assert not (tmp_path / "new.sqlite").exists()
    kept = f"lmdb://{tmp_path / 'kept'}"
    scheme = options[options.index("--to-scheme") + 1] if "--to-scheme" in options else "tuple"
    with keyspace.open(kept, scheme=scheme) as ks:
        ks.scope("zzz")[b"kept"] = b"mine"
    before = _raw(kept)
    code, err = _migrate(capsys, src, kept, "--batch", "1", *options)
    assert code == 1 and "nothing was written" in err, err
    assert _raw(kept) == before
    return err


def _source(tmp_path: Path, scheme: str = "tuple") -> str:
    url = f"sqlite://{tmp_path / 'src.sqlite'}"
    with keyspace.open(url, scheme=scheme) as ks:
        for i in range(6):
            ks.scope("a")[b"k%d" % i] = b"v"
    return url


def test_a_source_key_that_does_not_decode(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = _source(tmp_path)
    with open_store(src) as store:
        store.put(b"\xfe\xfe", b"junk")  # after every tuple key
    err = _refused(capsys, tmp_path, src)
    assert "fefe" in err or "\\xfe\\xfe" in err


def test_a_scopehash_scope_without_a_registered_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src = f"sqlite://{tmp_path / 'src.sqlite'}"
    names = [f"s{i}" for i in range(6)]
    with keyspace.open(src, scheme="scopehash") as ks:
        for name in names:
            for i in range(3):
                ks.scope(name)[b"k%d" % i] = b"v"
    last = max(names, key=lambda n: ScopeHash().prefix((n,)))  # the scope copied last
    with open_store(src) as store:
        store.delete(ScopeHash().prefix((last,)))
    err = _refused(capsys, tmp_path, src, "--to-scheme", "tuple")
    assert "no name in the source's registry" in err


def test_a_scope_the_destination_scheme_refuses(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = _source(tmp_path)
    with keyspace.open(src) as ks:
        ks.scope("a", "child")[b"k"] = b"v"  # after every key of ("a",)
    err = _refused(capsys, tmp_path, src, "--to-scheme", "length-prefixed")
    assert "cannot hold the child scope" in err


def test_the_rehearsal_leaves_a_destination_that_reopens(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src = _source(tmp_path)
    with keyspace.open(src) as ks:
        ks.scope("b", "c")[b"k"] = b"deep"
    dst = f"sqlite://{tmp_path / 'dst.sqlite'}"
    code, err = _migrate(capsys, src, dst, "--batch", "2", "--to-scheme", "length-prefixed")
    assert code == 0, err
    with keyspace.open(dst, scheme="length-prefixed", create=False) as ks:
        assert len(ks.scope("a")) == 6 and ks.scope("b", "c")[b"k"] == b"deep"
        with pytest.raises(keyspace.errors.LayoutError):
            ks.scope("b")[b"x"] = b"refused: b holds a child scope"


def test_two_source_scopes_whose_scopehash_names_collide(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``scope72590`` and ``scope159129`` have one xxh32 hash: the rehearsal took
    one key per stored scope prefix, which the two share, so the second name was
    met by the copy after the first's batches."""
    src = f"sqlite://{tmp_path / 'src.sqlite'}"
    with keyspace.open(src) as ks:
        for i in range(5):
            ks.scope("scope72590")[b"k%d" % i] = b"v"
        ks.scope("scope159129")[b"z"] = b"v"
    err = _refused(capsys, tmp_path, src, "--to-scheme", "scopehash")
    assert "same xxh32 hash" in err
