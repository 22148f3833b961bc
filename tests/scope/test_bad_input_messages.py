"""Bad input to scheme constructors, open options, codecs and scope paths: a named
error of ``keyspace.errors`` whose message holds the offending value and the
limit, raised before anything is created or written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import keyspace
from keyspace.errors import InvalidKey, InvalidName, KeyspaceError, LayoutError, StoreError
from keyspace.schemes import AsciiHex, Delimited, LengthPrefixed, Sublevel, TupleScheme
from keyspace.stores import open_store

CONSTRUCTORS: list[tuple[str, Callable[[], object], type[KeyspaceError], list[str]]] = [
    ("two-byte delimiter", lambda: Delimited("ab"), InvalidName, ["'ab'", "one byte"]),
    ("empty delimiter", lambda: Delimited(""), InvalidName, ["''", "one byte"]),
    ("delimited depth 0", lambda: Delimited(":", depth=0), LayoutError, ["0", "1 or more"]),
    ("sublevel separator of two", lambda: Sublevel(separator="!!"), InvalidName, ["'!!'", "124"]),
    (
        "raw prefix of the wrong type",
        lambda: TupleScheme(raw_prefix=123),
        InvalidKey,
        ["123", "int", "bytes"],
    ),  # type: ignore[arg-type]
    ("raw prefix not hex", lambda: TupleScheme(raw_prefix="zz"), InvalidName, ["'zz'", "hex"]),
]


@pytest.mark.parametrize(
    ("make", "error", "words"), [c[1:] for c in CONSTRUCTORS], ids=[c[0] for c in CONSTRUCTORS]
)
def test_a_scheme_refuses_bad_parameters_by_name(
    make: Callable[[], object], error: type[Exception], words: list[str]
) -> None:
    with pytest.raises(error) as info:
        make()
    for word in words:
        assert word in str(info.value)


OPTIONS: list[tuple[str, str, dict[str, Any], list[str]]] = [
    ("negative map size", "lmdb", {"map_size": -5}, ["map_size=-5", "0 or more"]),
    ("map size of the wrong type", "lmdb", {"map_size": 1.5}, ["map_size=1.5", "int"]),
    ("a flag that is no bool", "lmdb", {"sync": "maybe"}, ["sync='maybe'", "boolean"]),
    ("a flag given as a number", "leveldb", {"create_if_missing": 1}, ["create_if_missing=1", "boolean"]),
    ("a count given as a bool", "lmdb", {"max_dbs": True}, ["max_dbs=True", "int"]),
    ("negative cache size", "leveldb", {"cache_size": -1}, ["cache_size=-1", "0 or more"]),
]


@pytest.mark.parametrize(("engine", "given", "words"), [o[1:] for o in OPTIONS], ids=[o[0] for o in OPTIONS])
def test_a_keyword_option_of_the_wrong_kind_is_refused_before_anything_is_made(
    tmp_path: Path, engine: str, given: dict[str, Any], words: list[str]
) -> None:
    where = tmp_path / "store"
    with pytest.raises(StoreError) as info:
        keyspace.open(f"{engine}://{where}", **given)
    for word in words:
        assert word in str(info.value)
    assert not where.exists()


def test_keyword_options_as_text_read_as_in_a_url(tmp_path: Path) -> None:
    with keyspace.open(str(tmp_path / "s"), map_size="4MiB", sync="false") as ks:
        ks.scope("a")[b"k"] = b"v"
    with open_store(f"lmdb://{tmp_path / 's'}", map_size=1 << 22, sync=False) as store:
        assert len(list(store.scan(b"", None))) == 2  # the key and the scheme record


SCOPE_INPUT: list[tuple[str, Any, Callable[[keyspace.Keyspace], object], type[KeyspaceError], list[str]]] = [
    (
        "a float name",
        AsciiHex(),
        lambda ks: ks.scope(1.5).__setitem__(b"k", b"v"),
        InvalidName,
        ["1.5", "float", "bytes or str"],
    ),
    (
        "a list in a path",
        TupleScheme(),
        lambda ks: ks.scope(["a"]).__setitem__(b"k", b"v"),
        InvalidName,
        ["['a']", "list", "supported"],
    ),
    (
        "an int key over 64 bits",
        TupleScheme(),
        lambda ks: ks.scope("a", key="int").__setitem__(2**70, b"v"),
        InvalidKey,
        [str(2**70), "9223372036854775807"],
    ),
    (
        "a set as JSON",
        TupleScheme(),
        lambda ks: ks.scope("a", value="json").__setitem__(b"k", {1}),
        InvalidKey,
        ["{1}", "JSON"],
    ),
    (
        "a delimited name holding the separator",
        Delimited(":"),
        lambda ks: ks.scope(b"a:b").__setitem__(b"k", b"v"),
        InvalidName,
        ["a:b", "':'", "offset 1"],
    ),
    (
        "a delimited scope of another depth",
        Delimited(":", depth=2),
        lambda ks: ks.scope("a").__setitem__(b"k", b"v"),
        LayoutError,
        ["('a',)", "depth 1", "depth 2"],
    ),
    ("a negative leaf depth", LengthPrefixed(), None, LayoutError, ["leaf_depth", "-1", "0 or more"]),
]


@pytest.mark.parametrize(
    ("scheme", "action", "error", "words"), [s[1:] for s in SCOPE_INPUT], ids=[s[0] for s in SCOPE_INPUT]
)
@pytest.mark.parametrize("engine", ["memory", "lmdb", "leveldb"])
def test_bad_scope_input_is_named_and_changes_nothing(
    tmp_path: Path,
    engine: str,
    scheme: Any,
    action: Callable[[keyspace.Keyspace], object] | None,
    error: type[Exception],
    words: list[str],
) -> None:
    url = "memory:" if engine == "memory" else f"{engine}://{tmp_path}"
    store = open_store(url)
    try:
        if action is None:  # the option itself is the bad input
            with pytest.raises(error) as info:
                keyspace.attach(store, scheme=scheme, close_store=False, leaf_depth=-1).scope(b"a")[b"k"] = (
                    b"v"
                )
        else:
            ks = keyspace.attach(store, scheme=scheme, close_store=False)
            path = (b"x", b"y") if isinstance(scheme, Delimited) and scheme.depth == 2 else ("ok",)
            ks.scope(*path)[b"k"] = b"v"
            before = list(store.scan(b"", None))
            with pytest.raises(error) as info:
                action(ks)
            assert list(store.scan(b"", None)) == before
        for word in words:
            assert word in str(info.value), (word, str(info.value))
    finally:
        store.close()


class _AnswersNoBytes:
    def __init__(self, answer: object) -> None:
        self.answer = answer

    def encode(self, key: object) -> object:
        return self.answer

    def decode(self, raw: bytes) -> object:
        return raw


@pytest.mark.parametrize("answer", ["text", 42, None])
@pytest.mark.parametrize("scheme", [TupleScheme(), AsciiHex(), Sublevel()], ids=repr)
def test_a_key_codec_whose_encode_gives_no_bytes_is_refused(scheme: object, answer: object) -> None:
    """The tuple scheme stored a str or an int answer as it was."""
    with keyspace.open("memory:", scheme=scheme) as ks:
        s = ks.scope("users", key=_AnswersNoBytes(answer))
        with pytest.raises(InvalidKey, match="must return bytes"):
            s["alice"] = b"v"
        assert list(ks.store.scan(b"", None)) == []


class _TextOrNoBytes(_AnswersNoBytes):
    """A codec declaring str keys, whose encode of any other key gives no bytes."""

    native_type = str

    def encode(self, key: object) -> object:
        return key.encode() if isinstance(key, str) else self.answer


@pytest.mark.parametrize("scheme", [AsciiHex(), Sublevel()], ids=repr)
def test_a_str_key_codec_whose_encode_of_another_key_gives_no_bytes_is_refused(scheme: object) -> None:
    """The C transform of str keys hands other keys to the codec, whose answer is
    checked as on every other route (a byte scheme's own refusal named the key
    only)."""
    with keyspace.open("memory:", scheme=scheme) as ks:
        s = ks.scope("users", key=_TextOrNoBytes(42))
        s["alice"] = b"v"
        before = list(ks.store.scan(b"", None))
        with pytest.raises(InvalidKey, match="must return bytes"):
            s[7] = b"v"
        assert list(ks.store.scan(b"", None)) == before


def test_a_write_through_a_snapshot_is_a_store_error_and_changes_nothing(tmp_path: Path) -> None:
    with keyspace.open(f"lmdb://{tmp_path}/db") as ks:
        ks.scope("a")[b"k"] = b"v"
        with ks.snapshot() as snap:
            s = snap.scope("a")
            for write in (
                lambda: s.__setitem__(b"k", b"w"),
                lambda: s.update({}),
                s.clear,
                lambda: s.pop(b"k"),
            ):
                with pytest.raises(StoreError, match="read-only here"):
                    write()
        assert dict(ks.scope("a").items()) == {b"k": b"v"}
