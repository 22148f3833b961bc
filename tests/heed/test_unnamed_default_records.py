"""A scoped-heed database whose default scope is the unnamed database
(``unnamed_for_default()``): LMDB's records of the named databases, which share
that database, are no data of the default scope; and the environment, not the
caller, says where a database's default scope is."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import lmdb
import pytest
from _cli import run
from _heed_env import HEED_DATA, reference_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keyspace import scoped_heed
from keyspace.errors import SchemeMismatch, StoreError

MANIFEST = [
    json.loads(line) for line in (HEED_DATA / "write_manifest.jsonl").read_text().splitlines() if line
]


def _every_database(env: Path) -> dict[bytes | None, dict[bytes, bytes]]:
    """The unnamed database (``None``) and each named database, read with py-lmdb."""
    e = lmdb.open(str(env), max_dbs=64, readonly=True, lock=False)
    try:
        out: dict[bytes | None, dict[bytes, bytes]] = {}
        with e.begin() as txn:
            out[None] = dict(txn.cursor())
            for name in out[None]:
                if b"\x00" in name:
                    continue  # LMDB reads a name up to its first NUL: never a database
                try:
                    db = e.open_db(name, txn=txn, create=False)
                except lmdb.IncompatibleError:
                    continue
                out[name] = dict(txn.cursor(db=db))
        return out
    finally:
        e.close()


def _manifest_default(db: str) -> dict[bytes, bytes]:
    return {
        bytes.fromhex(line["key_hex"]): bytes.fromhex(line["value_hex"])
        for line in MANIFEST
        if line["db"] == db and line["scope"] is None and line["result"] == "ok"
    }


def test_the_default_scope_lists_what_the_service_wrote_and_clears_alone(tmp_path: Path) -> None:
    env = reference_env(tmp_path)
    before = _every_database(env)
    expected = _manifest_default("legacy")
    assert len(before[None]) > len(expected)  # the unnamed database holds the records too
    with scoped_heed.open(env, "legacy", unnamed_default=True) as ks:
        default = ks.scope()
        assert dict(default.items()) == expected
        assert len(default) == len(expected) and sorted(default) == sorted(expected)
        assert list(default.keys(reverse=True)) == sorted(expected, reverse=True)
        assert b"cache_scoped" not in default and default.get(b"legacy_scoped") is None
        tenant1 = dict(ks.scope("tenant1").items())
        default.clear()
        assert dict(default.items()) == {} and len(default) == 0
        assert dict(ks.scope("tenant1").items()) == tenant1
    after = _every_database(env)
    assert sorted(after[None]) == sorted(set(before[None]) - set(expected))  # the records stay
    for name, items in before.items():
        if name is not None:
            assert after[name] == items, name  # every named database intact


def test_without_unnamed_default_the_environment_says_where_the_default_is(tmp_path: Path) -> None:
    env = reference_env(tmp_path)
    before = sorted(k for k in _every_database(env) if k is not None)
    for readonly in (False, True):
        with pytest.raises(
            SchemeMismatch, match=r"default scope in the unnamed database.*unnamed_default=True"
        ):
            scoped_heed.open(env, "legacy", readonly=readonly)
    proc = run("put", f"scoped-heed://{env}?name=legacy", "-k", "k", "-v", "v", ok=False)
    assert proc.returncode != 0 and "unnamed_default" in proc.stderr
    assert sorted(k for k in _every_database(env) if k is not None) == before  # no database "legacy" made
    assert "--scoped-heed legacy --unnamed-default" in run("inspect", str(env)).stdout


def test_unnamed_default_for_a_database_with_its_own_default_is_refused(tmp_path: Path) -> None:
    env = reference_env(tmp_path)
    with pytest.raises(
        SchemeMismatch, match=r"default scope in the database 'cache'.*without unnamed_default"
    ):
        scoped_heed.open(env, "cache", unnamed_default=True)


def test_a_sha384_under_a_key_holding_nul_is_data(tmp_path: Path) -> None:
    digest = hashlib.sha384(b"x").digest()
    with scoped_heed.open(tmp_path, "db", unnamed_default=True) as ks:
        ks.scope()[b"h\x00x"] = digest
        ks.scope("t")[b"k"] = b"v"
    with scoped_heed.open(tmp_path, "db", unnamed_default=True) as ks:  # was: every open failed
        assert dict(ks.scope().items()) == {b"h\x00x": digest}
    with scoped_heed.open(tmp_path, "other") as ks:
        assert dict(ks.scope().items()) == {}


def test_writing_a_record_as_data_is_refused(tmp_path: Path) -> None:
    env = reference_env(tmp_path)
    with scoped_heed.open(env, "legacy", unnamed_default=True) as ks:
        with pytest.raises(StoreError, match="record of a named database"):
            ks.scope()[b"cache"] = b"data"
        with pytest.raises(KeyError):
            del ks.scope()[b"cache"]
    with scoped_heed.open(env, "cache") as ks:
        assert ks.scope()[b"key1"] == b"default-value1"


_names = st.lists(st.sampled_from(["a", "b", "zz", "db2"]), max_size=3, unique=True)
_items = st.dictionaries(
    st.binary(min_size=1, max_size=6),
    st.one_of(st.binary(max_size=3), st.binary(min_size=48, max_size=48)),
    max_size=10,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(others=_names, items=_items)
def test_the_unnamed_default_scope_is_exactly_its_data(
    tmp_path_factory: pytest.TempPathFactory, others: list[str], items: dict[bytes, bytes]
) -> None:
    env = tmp_path_factory.mktemp("env")
    for name in others:  # other scoped-heed databases: their records join the unnamed database
        with scoped_heed.open(env, name) as ks:
            ks.scope("t")[b"k"] = b"v"
    with scoped_heed.open(env, "main", unnamed_default=True) as ks:
        names = {d.encode() for n in [*others, "main"] for d in (n, f"{n}_scoped")} | {
            b"__global_scope_metadata"
        }
        data = {k: v for k, v in items.items() if k not in names}
        ks.scope().update(data)
        assert dict(ks.scope().items()) == data and len(ks.scope()) == len(data)
        ks.scope().clear()
        assert len(ks.scope()) == 0
    for name in others:
        with scoped_heed.open(env, name) as ks:
            assert ks.scope("t")[b"k"] == b"v"


def test_inspect_counts_the_bytes_lmdb_stores(tmp_path: Path) -> None:
    """The union of the database's default scope and its scoped database tells
    their keys apart by a one-byte tag that LMDB does not store: ``inspect``
    counted it, one byte a key too many."""
    env = reference_env(tmp_path)
    tree = json.loads(
        run("inspect", str(env), "--scoped-heed", "legacy", "--unnamed-default", "--json").stdout
    )
    databases = _every_database(env)
    default = {k: v for k, v in databases[None].items() if k in (b"\x00legacy", b"legacy-key1")}
    scoped = databases[b"legacy_scoped"]
    assert (tree["keys"], tree["bytes"]) == (len(default), sum(len(k) + len(v) for k, v in default.items()))
    (tenant,) = tree["children"]
    assert (tenant["keys"], tenant["bytes"]) == (len(scoped), sum(len(k) + len(v) for k, v in scoped.items()))
