"""Bad input: each row is one bad input, the named error it must raise, the words its
message must contain (the offending value, and the limit where there is one), and
— after each — the store's raw contents are unchanged.

Rows run on LMDB (a real engine with a key-size limit); the oversized transaction
runs on the etcd test cluster (128 operations per transaction).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from _etcd import own_url

import keyspace
from keyspace.errors import (
    HashCollision,
    InvalidKey,
    InvalidName,
    KeyspaceError,
    KeyTooLarge,
    LayoutError,
    SchemeMismatch,
    StoreClosed,
    TransactionTooLarge,
)
from keyspace.schemes import AsciiHex, LengthPrefixed, Scheme, ScopeHash, Sublevel, TupleScheme


def _set(path: tuple[Any, ...], key: Any, value: Any = b"v") -> Callable[[keyspace.Keyspace], None]:
    def action(ks: keyspace.Keyspace) -> None:
        ks.scope(*path)[key] = value

    return action


def _reopen_with(scheme: Scheme) -> Callable[[keyspace.Keyspace], None]:
    def action(ks: keyspace.Keyspace) -> None:
        url = ks.url
        ks.close()
        keyspace.open(url, scheme=scheme).close()

    return action


def _closed_write(ks: keyspace.Keyspace) -> None:
    scope = ks.scope("users")
    ks.close()
    scope[b"k"] = b"v"


@dataclass
class Row:
    id: str
    scheme: Scheme
    action: Callable[[keyspace.Keyspace], None]
    error: type[KeyspaceError]
    words: list[str]
    setup: Callable[[keyspace.Keyspace], None] = field(default=lambda ks: None)


ROWS = [
    Row("wrong key type", AsciiHex(), _set(("users",), 12345), InvalidKey, ["12345", "int"]),
    Row(
        "wrong key type (str codec)",
        TupleScheme(),
        lambda ks: ks.scope("u", key="str").__setitem__(b"raw", b"v"),
        InvalidKey,
        ["b'raw'", "bytes", "str"],
    ),
    Row("wrong value type", AsciiHex(), _set(("users",), b"k", 67890), InvalidKey, ["67890", "int"]),
    Row(
        "oversize key (LMDB limit)",
        TupleScheme(),
        _set(("users",), b"K" * 600),
        KeyTooLarge,
        ["511", "611 bytes", "KKKK"],
    ),
    Row(
        "oversize key in an existing scope",
        TupleScheme(),
        _set(("existing",), b"K" * 600),
        KeyTooLarge,
        ["511", "KKKK"],
        setup=_set(("existing",), b"a"),
    ),
    Row(
        "oversize CosmWasm component",
        LengthPrefixed(),
        _set((b"C" * 65536, b"x"), b"k"),
        KeyTooLarge,
        ["65535", "65536", "CCCC"],
    ),
    Row("invalid sublevel name", Sublevel(), _set(("a!b",), b"k"), InvalidName, ["a!b", "35..126"]),
    Row(
        "sublevel key starting with the separator",
        Sublevel(),
        _set(("users",), b"!k"),
        InvalidName,
        ["!k", "separator"],
    ),
    Row("empty ScopeHash name", ScopeHash(), _set(("",), b"k"), InvalidName, ["empty scope name"]),
    Row(
        "ScopeHash path too deep", ScopeHash(), _set(("a", "b"), b"k"), InvalidName, ["'a', 'b'", "at most 1"]
    ),
    Row(
        "lone surrogate in a name",
        AsciiHex(),
        _set(("bad\udc80",), b"k"),
        InvalidName,
        ["bad\\udc80", "UTF-8"],
    ),
    Row(
        "lone surrogate in a tuple key",
        TupleScheme(),
        _set(("users",), "k\udc80"),
        InvalidName,
        ["k\\udc80", "UTF-8"],
    ),
    Row("empty stored key (LMDB)", AsciiHex(), _set((), b""), InvalidName, ["empty key"]),
    Row(
        "wrong scheme on reopen",
        TupleScheme(),
        _reopen_with(AsciiHex()),
        SchemeMismatch,
        ["TupleScheme", "AsciiHex"],
        setup=_set(("users",), b"k"),
    ),
    Row(
        "hash collision",
        ScopeHash(),
        _set(("scope159129",), b"k"),
        HashCollision,
        ["scope159129", "scope72590", "xxh32"],
        setup=_set(("scope72590",), b"k"),
    ),
    Row(
        "layout mix (leaf under a leaf)",
        LengthPrefixed(),
        _set((b"a", b"b", b"c"), b"k"),
        LayoutError,
        ["(b'a', b'b')", "(b'a', b'b', b'c')"],
        setup=_set((b"a", b"b"), b"k"),
    ),
    Row(
        "layout mix (keys in a branch)",
        LengthPrefixed(),
        _set((b"a",), b"k"),
        LayoutError,
        ["(b'a',)"],
        setup=_set((b"a", b"b"), b"k"),
    ),
    Row("closed keyspace", TupleScheme(), _closed_write, StoreClosed, ["closed"]),
]


def _raw(url: str) -> list[tuple[bytes, bytes]]:
    from keyspace.stores import open_store

    with open_store(url) as store:
        return list(store.scan(b"", None))


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_bad_input_raises_named_error_and_changes_nothing(row: Row, tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path}"
    ks = keyspace.open(url, scheme=row.scheme)
    try:
        row.setup(ks)  # in the same keyspace object: the layout is learnt per object
        other = ("other",) if not isinstance(row.scheme, LengthPrefixed) else (b"o", b"p")
        ks.scope(*other)[b"k"] = b"v"
        before = list(ks.store.scan(b"", None))
        with pytest.raises(row.error) as info:
            row.action(ks)
    finally:
        ks.close()
    message = str(info.value)
    for word in row.words:
        assert word in message, f"{word!r} not in {message!r}"
    assert _raw(url) == before


@pytest.fixture
def etcd_url() -> Iterator[str]:
    yield from own_url("bad-input")


@pytest.mark.etcd
def test_oversized_transaction_on_etcd(etcd_url: str) -> None:
    with keyspace.open(etcd_url) as ks:
        limit = ks.store.capabilities.max_batch_ops
        assert limit == 128
        ks.scope("users")[b"existing"] = b"v"
        before = list(ks.store.scan())
        with pytest.raises(TransactionTooLarge) as info:
            ks.scope("users").update({b"k%04d" % i: b"v" for i in range(limit + 1)})
        assert str(limit) in str(info.value) and str(limit + 1) in str(info.value)
        with pytest.raises(TransactionTooLarge), ks.transaction() as tx:
            for i in range(limit + 1):
                tx.scope("users")[b"t%04d" % i] = b"v"
        assert list(ks.store.scan()) == before
