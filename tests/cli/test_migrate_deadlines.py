"""``keyspace migrate`` of a keyspace whose keys expire: every copied key keeps
its deadline (the destination keeps deadlines from then on), keys without one
stay without, keys already expired are not copied; a copy into a keyspace that
keeps no deadlines is refused before anything is written, and a copy run
again over its own output finds every key already there."""

from __future__ import annotations

from pathlib import Path

import pytest

import keyspace
from keyspace import _expiry
from keyspace._expiry import expiry_of
from keyspace.cli.migrate import copy_all
from keyspace.errors import KeyspaceError
from tests._cli import run


def _deadlines(ks: keyspace.Keyspace, path: tuple[str, ...], keys: list[bytes]) -> dict[bytes, int | None]:
    hook = expiry_of(ks.store)
    assert hook is not None
    encode = ks.store.scheme.encode
    return {k: hook.deadline(ks.store, encode(path, k)) for k in keys}


def test_migrate_keeps_every_deadline(tmp_path: Path) -> None:
    src, dst = f"lmdb://{tmp_path}/src", f"sqlite://{tmp_path}/dst.sqlite"
    with keyspace.open(src, ttl=True) as ks:
        scope = ks.scope("t", "users")
        scope.put(b"soon", b"1", ttl=3600)
        scope.put(b"later", b"2", ttl=86400)
        scope[b"never"] = b"3"
        ks.scope("other")[b"k"] = b"4"
        before = _deadlines(ks, ("t", "users"), [b"soon", b"later", b"never"])
    assert before[b"soon"] is not None and before[b"later"] is not None and before[b"never"] is None
    proc = run("migrate", src, dst, "--to-scheme", "sublevel")
    assert "4 keys read: 4 copied" in proc.stdout
    with keyspace.open(dst, scheme="sublevel") as ks:  # ttl recorded by the copy: no option needed
        assert _deadlines(ks, ("t", "users"), [b"soon", b"later", b"never"]) == before
        assert dict(ks.scope("t", "users").items()) == {b"soon": b"1", b"later": b"2", b"never": b"3"}
        assert dict(ks.scope("other").items()) == {b"k": b"4"}
    again = run("migrate", src, dst, "--to-scheme", "sublevel")
    assert "4 keys read: 0 copied, 0 overwritten, 4 already present" in again.stdout


def test_expired_keys_are_not_copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1_000_000.0]
    monkeypatch.setattr(_expiry, "clock", lambda: now[0])
    with (
        keyspace.open(f"lmdb://{tmp_path}/src", ttl=True) as src,
        keyspace.open(f"lmdb://{tmp_path}/dst", ttl=True) as dst,
    ):
        scope = src.scope("t")
        scope.put(b"gone", b"1", ttl=10)
        scope.put(b"kept", b"2", ttl=100)
        now[0] += 50
        with src.store.snapshot() as view:
            tally = copy_all(src, dst, batch=10, view=view)
        assert tally.new == 1
        assert dict(dst.scope("t").items()) == {b"kept": b"2"}
        assert _deadlines(dst, ("t",), [b"kept"]) == _deadlines(src, ("t",), [b"kept"])
        now[0] += 100  # past the copied deadline too: gone from the destination as from the source
        assert dict(dst.scope("t").items()) == {}


def test_a_destination_without_deadlines_is_refused_before_writing(tmp_path: Path) -> None:
    with (
        keyspace.open(f"lmdb://{tmp_path}/src", ttl=True) as src,
        keyspace.open(f"lmdb://{tmp_path}/dst") as dst,
    ):
        src.scope("t")[b"plain"] = b"1"
        src.scope("t").put(b"expiring", b"2", ttl=3600)
        with pytest.raises(KeyspaceError, match=r"keeps no deadlines.*nothing was written"):
            copy_all(src, dst, batch=10)
        assert dict(dst.scope("t").items()) == {}


def test_a_source_whose_keys_have_no_deadline_copies_into_any_destination(tmp_path: Path) -> None:
    with (
        keyspace.open(f"lmdb://{tmp_path}/src", ttl=True) as src,
        keyspace.open(f"lmdb://{tmp_path}/dst") as dst,
    ):
        src.scope("t")[b"plain"] = b"1"
        assert copy_all(src, dst, batch=10).new == 1
        assert dict(dst.scope("t").items()) == {b"plain": b"1"}
        assert expiry_of(dst.store) is None
