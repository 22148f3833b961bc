"""``keyspace migrate`` out of and into Delimited stores, its conflict choices and
dry run, and ``--depth`` refused where a scheme records the depth itself.

A store written through keyspace's own :class:`~keyspace.schemes.Delimited`
scopes holds keys whose key part holds the separator (``rod:a:b``): migrate
splits them as the scheme reads them, so such a store goes to the tuple scheme
and back unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.cli import main
from keyspace.schemes import Delimited
from keyspace.stores import open_store

USERS = ["rod", "rod.vagg", "rod1977", "roderick"]


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    got = capsys.readouterr()
    return code, got.out, got.err


def _raw(url: str) -> list[tuple[bytes, bytes]]:
    with open_store(url, readonly=True) as store:
        return list(store.scan(b"", None))


def _sessions(url: str, separator: str = ":") -> dict[bytes, bytes]:
    """Written through the Delimited API: keys holding the separator included."""
    with keyspace.open(url, scheme=Delimited(separator)) as ks:
        for n, user in enumerate(USERS):
            ks.scope(user).update(
                {
                    b"last_login": b"13674%08d" % n,
                    b"theme:dark": b"yes",  # a key part that holds the separator
                    b"a:b:c": b"%d" % n,
                }
            )
    return dict(_raw(url))


def _inspect(capsys: pytest.CaptureFixture[str], url: str, *args: str) -> Any:
    code, out, err = _cli(capsys, "inspect", url, "--json", *args)
    assert code == 0, err
    return json.loads(out)


def test_a_delimited_store_goes_to_the_tuple_scheme_and_back(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src = f"leveldb://{tmp_path / 'sessions'}"
    written = _sessions(src)
    assert len(written) == 12
    before = _inspect(capsys, src, "--separator", ":", "--depth", "1")
    middle = str(tmp_path / "safe.lmdb")
    code, out, err = _cli(
        capsys, "migrate", src, middle, "--from-scheme", "delimited", "--separator", ":", "--depth", "1",
        "--to-scheme", "tuple",
    )  # fmt: skip
    assert code == 0, err
    assert "12 keys read: 12 copied" in out
    # the eight keys whose key part holds ':' are counted and shown with their split
    assert "8 source key(s) hold the separator in their key part" in out
    assert "b'rod.vagg:a:b:c' -> scope (b'rod.vagg',) key b'a:b:c'" in out
    with keyspace.open(middle, create=False) as ks:
        assert ks.scope("rod")[b"a:b:c"] == b"0" and ks.scope("rod")[b"theme:dark"] == b"yes"
    back = f"leveldb://{tmp_path / 'back'}"
    code, out, err = _cli(capsys, "migrate", middle, back, "--to-separator", ":")
    assert code == 0, err
    assert "12 keys read: 12 copied" in out
    assert _raw(back) == sorted(written.items())
    after = _inspect(capsys, back, "--separator", ":", "--depth", "1")
    assert after == before


def test_the_destination_has_its_own_separator_and_depth(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src = str(tmp_path / "src.lmdb")
    with keyspace.open(src) as ks:
        ks.scope("user", "42")[b"name"] = b"ada"
        ks.scope("user", "7")[b"a|b"] = b"bob"
    dst = f"sqlite:///{tmp_path / 'dst.sqlite'}"
    code, _, err = _cli(
        capsys, "migrate", src, dst, "--to-scheme", "delimited", "--to-separator", "|", "--to-depth", "2"
    )
    assert code == 0, err
    assert [k for k, _ in _raw(dst)] == [b"user|42|name", b"user|7|a|b"]
    # --depth and --separator describe the source: a tuple source takes no --depth
    code, _, err = _cli(capsys, "migrate", src, f"{dst}2", "--depth", "2", "--to-separator", "|")
    assert code == 1 and "--depth 2 does not apply to tuple keys" in err, err
    assert not (tmp_path / "dst.sqlite2").exists()
    code, _, err = _cli(capsys, "migrate", src, f"{dst}3", "--to-scheme", "tuple", "--to-depth", "1")
    assert code == 1 and "--to-depth 1 does not apply to tuple keys" in err, err
    code, _, err = _cli(capsys, "migrate", src, f"{dst}4", "--to-scheme", "tuple", "--to-separator", "|")
    assert code == 1 and "takes no --to-separator" in err, err


def _stores(tmp_path: Path) -> tuple[str, str]:
    """A source of three keys and a destination holding one of them equal, one with
    another value, and one of its own."""
    src, dst = str(tmp_path / "src.lmdb"), str(tmp_path / "dst.lmdb")
    with keyspace.open(src) as ks:
        ks.scope("a").update({b"same": b"1", b"differs": b"source", b"new": b"3"})
    with keyspace.open(dst) as ks:
        ks.scope("a").update({b"same": b"1", b"differs": b"destination", b"mine": b"4"})
    return src, dst


def test_a_conflict_is_refused_by_default_naming_the_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src, dst = _stores(tmp_path)
    before = _raw(dst)
    code, _, err = _cli(capsys, "migrate", src, dst)
    assert code == 1
    assert "1 destination key(s) hold another value than the source's: scope ('a',) key b'differs'" in err
    assert "nothing was written" in err
    assert _raw(dst) == before


@pytest.mark.parametrize(("choice", "value"), [("keep", b"destination"), ("overwrite", b"source")])
def test_keep_or_overwrite_names_the_keys(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, choice: str, value: bytes
) -> None:
    src, dst = _stores(tmp_path)
    code, out, err = _cli(capsys, "migrate", src, dst, "--on-conflict", choice)
    assert code == 0, err
    if choice == "keep":
        assert "3 keys read: 1 copied, 0 overwritten, 1 already present, 1 kept" in out
        assert "kept (DST held another value): scope ('a',) key b'differs'" in out
    else:
        assert "3 keys read: 1 copied, 1 overwritten, 1 already present;" in out
        assert "overwritten (DST held another value): scope ('a',) key b'differs'" in out
    with keyspace.open(dst) as ks:
        assert dict(ks.scope("a")) == {b"same": b"1", b"differs": value, b"new": b"3", b"mine": b"4"}


def test_a_dry_run_writes_nothing_and_reports_the_copy(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src, dst = _stores(tmp_path)
    before, source = _raw(dst), _raw(src)
    code, out, err = _cli(capsys, "migrate", src, dst, "--dry-run")
    assert code == 0, err
    assert "dry run, nothing written: 3 keys read: 1 would be copied, 1 already present, 1 conflict(s)" in out
    assert "conflicts (refused with --on-conflict fail): scope ('a',) key b'differs'" in out
    with keyspace.open(dst) as ks:  # the destination named by its URL, as the copy names it
        assert f"to   {ks.url}: " in err
    assert _raw(dst) == before and _raw(src) == source
    new = tmp_path / "new.lmdb"
    code, out, err = _cli(capsys, "migrate", src, str(new), "--dry-run", "--to-scheme", "delimited")
    assert code == 0, err
    assert "3 keys read: 3 would be copied, 0 already present, 0 conflict(s)" in out
    assert not new.exists()  # a dry run makes no store


def test_a_dry_run_refuses_what_the_copy_would_refuse(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src = str(tmp_path / "src.lmdb")
    with keyspace.open(src) as ks:
        ks.scope("a", "b")[b"k"] = b"v"  # depth 2: a delimited scheme of depth 1 refuses it
    new = tmp_path / "new.sqlite"
    code, _, err = _cli(capsys, "migrate", src, f"sqlite:///{new}", "--dry-run", "--to-separator", ":")
    assert code == 1 and "has depth 2; this delimited keyspace" in err, err
    assert not new.exists()


def test_inspect_refuses_a_depth_the_scheme_records_itself(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = str(tmp_path / "tuple.lmdb")
    with keyspace.open(url) as ks:
        ks.scope()[b"root"] = b"1"
        ks.scope("a")[b"k"] = b"1"
        ks.scope("a", "b").update({b"k": b"1", b"l": b"2"})
        ks.scope("c")[b"k"] = b"1"
    for depth in ("0", "1"):
        code, out, err = _cli(capsys, "inspect", url, "--depth", depth)
        assert code == 1 and out == ""
        assert f"--depth {depth} does not apply to tuple keys: they record their own depth" in err
        assert "length-prefixed" in err and "delimited" in err  # the schemes it is for
    code, _, err = _cli(capsys, "scan", url, "a", "--depth", "0")
    assert code == 1 and "does not apply to tuple keys" in err
    tree = _inspect(capsys, url)
    assert tree["keys"] == 1 and sum(c["keys"] for c in tree["children"]) == 2


def test_a_dry_run_rehearses_on_what_the_destination_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The scopes are rehearsed on the existing destination, as the copy does: a
    length-prefixed scope that holds keys there cannot take a child scope, and
    both the dry run and the copy say so, with nothing written."""
    src, dst = str(tmp_path / "src.lmdb"), str(tmp_path / "dst.lmdb")
    with keyspace.open(dst, scheme="length-prefixed") as ks:
        ks.scope("a")[b"k"] = b"v"  # ("a",) is a leaf of the destination
    with keyspace.open(src) as ks:
        ks.scope("a", "b")[b"k"] = b"v"
    before = _raw(dst)
    refused = "holds keys, so it cannot hold the child scope ('a', 'b')"
    for dry in (["--dry-run"], []):
        code, out, err = _cli(capsys, "migrate", src, dst, "--to-scheme", "length-prefixed", *dry)
        assert code == 1 and refused in err, (dry, out, err)
        assert _raw(dst) == before
