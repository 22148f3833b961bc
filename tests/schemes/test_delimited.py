"""The Delimited scheme: vectors, the LevelDB namespacing note's listings, the
injection refused, scopes of one depth, and separator detection.

The note (heapwolf's LevelDB "Namespacing" gist, summarised in the reference notes)
stores session keys ``<user><SEP><field>`` for the users ``rod``, ``rod.vagg``,
``rod1977`` and ``roderick`` and lists the order LevelDB keeps them in for the
separators ``:``, ``!``, ``~`` and ``\\x00``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.errors import DecodeError, InvalidName, LayoutError
from keyspace.schemes import Delimited, NulDelimited, Property, scheme_from_name
from keyspace.schemes.delimited import guess_delimited, guess_separator
from keyspace.stores import open_store
from keyspace.tuples import pack

USERS = ["rod", "rod.vagg", "rod1977", "roderick"]
FIELDS = [b"last_login", b"default_theme"]

NOTE_ORDER = {
    ":": ["rod.vagg", "rod1977", "rod", "roderick"],
    "!": ["rod", "rod.vagg", "rod1977", "roderick"],
    "~": ["rod.vagg", "rod1977", "roderick", "rod"],
    "\x00": ["rod", "rod.vagg", "rod1977", "roderick"],
}
"""The user order of the note's four listings, one per separator."""


# -- vectors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scheme", "path", "key", "stored"),
    [
        (Delimited(), ("rod",), b"last_login", b"rod:last_login"),
        (Delimited("!"), ("rod",), b"default_theme", b"rod!default_theme"),
        (Delimited("~"), (b"rod.vagg",), b"x", b"rod.vagg~x"),
        (Delimited("\x00"), ("tenant",), b"key", b"tenant\x00key"),
        (Delimited(b"|"), ("acme",), b"users|alice", b"acme|users|alice"),
        (Delimited(":", depth=2), ("user", "42"), b"name", b"user:42:name"),
        (Delimited(":", depth=2), ("", ""), b"", b"::"),
        (Delimited("\xff"), ("a",), b"k", b"a\xffk"),
        (Delimited(":"), ("été",), b"k", "été:k".encode()),
    ],
)
def test_vectors(scheme: Delimited, path: tuple[Any, ...], key: bytes, stored: bytes) -> None:
    assert scheme.encode(path, key) == stored
    assert scheme.decode(stored) == (tuple(c if isinstance(c, bytes) else c.encode() for c in path), key)
    assert scheme.decode(stored, scheme.depth) == scheme.decode(stored)
    start, stop = scheme.own_range(path)
    assert start == scheme.prefix(path) and start <= stored and (stop is None or stored < stop)


def test_decode_splits_at_the_first_depth_separators() -> None:
    assert Delimited(":").decode(b"user:42:name") == ((b"user",), b"42:name")
    assert Delimited(":", depth=2).decode(b"user:42:name") == ((b"user", b"42"), b"name")
    with pytest.raises(DecodeError, match="1 separator") as info:
        Delimited(":", depth=2).decode(b"user:name")
    assert info.value.offset == 5
    with pytest.raises(DecodeError, match="depth 1"):
        Delimited(":").decode(b"a:b", 2)


def test_ranges_and_parameters() -> None:
    assert Delimited(":").own_range(("rod",)) == (b"rod:", b"rod;")
    assert Delimited("\xff").own_range(("",)) == (b"\xff", None)  # no end above an all-ff prefix
    assert Delimited(":").subtree_range(("rod",)) == (b"rod:", b"rod;")
    scheme = Delimited("|", depth=3)
    assert scheme.params() == {"separator": "|", "depth": 3}
    assert scheme_from_name("delimited", separator="|", depth=3) == scheme
    assert scheme != Delimited("|", depth=2) and scheme != Delimited(":", depth=3)
    assert repr(Delimited("\x00")) == "Delimited(separator='\\x00', depth=1)"
    assert isinstance(Delimited("\x00"), NulDelimited) and isinstance(Delimited(b"\x00"), NulDelimited)
    assert type(Delimited(":")) is Delimited
    assert Property.NAMESPACE_ORDER in Delimited("\x00").properties
    assert Property.NAMESPACE_ORDER not in Delimited(":").properties
    assert Delimited(":").metadata_key is None  # other programs' data: nothing is added


@pytest.mark.parametrize("separator", ["::", "", "\u0100", b"ab", 58])
def test_bad_separators(separator: Any) -> None:
    with pytest.raises(InvalidName, match="must be one byte"):
        Delimited(separator)


@pytest.mark.parametrize("depth", [0, -1, True, "1"])
def test_bad_depths(depth: Any) -> None:
    with pytest.raises(LayoutError, match="depth"):
        Delimited(":", depth=depth)


def test_names_with_the_separator_are_refused_keys_may_hold_it() -> None:
    scheme = Delimited("|")
    with pytest.raises(InvalidName, match=r"b'acme\|users' contains the separator '\|' at offset 4"):
        scheme.encode(("acme|users",), b"alice")
    with pytest.raises(InvalidName, match="offset 0"):
        scheme.validate_path((b"|",))
    with pytest.raises(InvalidName):  # the name is reported before the depth
        scheme.prefix(("acme|users", "x"))
    assert scheme.encode(("acme",), b"users|alice") == b"acme|users|alice"


def test_paths_of_another_depth_are_refused() -> None:
    scheme = Delimited(":", depth=2)
    for path in [(), ("a",), ("a", "b", "c")]:
        with pytest.raises(LayoutError, match=f"depth {len(path)}; .* depth 2"):
            scheme.encode(path, b"k")
        with pytest.raises(LayoutError):
            scheme.own_range(path)
    with pytest.raises(LayoutError):
        scheme.validate_path(("a", "b", "c"))
    for branch in [(), ("a",)]:  # shallower paths are branches: they list children, hold no keys
        scheme.validate_path(branch)
        assert scheme.own_ranges(branch) == ()
    assert scheme.subtree_range(("a",)) == (b"a:", b"a;")
    assert scheme.subtree_range(()) == (b"", None)


# -- the note's four listings ---------------------------------------------------------------


@pytest.mark.parametrize("separator", list(NOTE_ORDER), ids=["colon", "bang", "tilde", "nul"])
def test_the_notes_listings_in_its_order(separator: str, tmp_path: Path) -> None:
    """Written through keyspace into LevelDB, read back raw from the store: the users
    come in exactly the note's order, each user's keys together."""
    url = f"leveldb://{tmp_path / 'sessions'}"
    with keyspace.open(url, scheme=Delimited(separator)) as ks:
        for user in USERS:  # written in name order; LevelDB keeps its own
            ks.scope(user).update({field: b"v" for field in FIELDS})
        stored = [k for k, _ in ks.store.scan(b"", None)]
    sep = separator.encode("latin-1")
    expected = [user.encode() + sep + field for user in NOTE_ORDER[separator] for field in sorted(FIELDS)]
    assert stored == expected
    users = [k.split(sep, 1)[0].decode() for k in stored[:: len(FIELDS)]]
    assert users == NOTE_ORDER[separator]
    # name order for these names with '!' and '\x00' only ('!' fails for others, see below)
    assert (users == sorted(USERS)) == (separator in ("!", "\x00"))


def test_bang_order_fails_for_names_below_the_separator() -> None:
    """Why only ``\\x00`` declares property 4: under ``!`` a name holding a space
    sorts before its own prefix."""
    bang, nul = Delimited("!"), Delimited("\x00")
    assert bang.prefix(("rod rod",)) < bang.prefix(("rod",))
    assert nul.prefix(("rod",)) < nul.prefix(("rod rod",))


# -- the injection, through the API -----------------------------------------------------------


def test_injection_is_refused_through_every_scope_route() -> None:
    with keyspace.open("memory:", scheme=Delimited("|")) as ks:
        ks.scope("acme")[b"users|alice"] = b"acme-only"
        before = list(ks.store.scan(b"", None))
        for name in ["acme|users", b"acme|users", "|", "acme|"]:
            with pytest.raises(InvalidName, match="contains the separator"):
                ks.scope(name)
            with pytest.raises(InvalidName), ks.transaction() as tx:
                tx.scope(name)[b"alice"] = b"stolen"
            with pytest.raises(InvalidName), ks.snapshot() as snap:
                snap.scope(name).get(b"alice")
        assert list(ks.store.scan(b"", None)) == before
        assert ks.scope("acme")[b"users|alice"] == b"acme-only"


def test_keyspace_scopes_of_one_depth() -> None:
    with keyspace.open("memory:", scheme=Delimited(":", depth=2)) as ks:
        ks.scope("user", "42")[b"name"] = b"ada"
        ks.scope("user", "42")[b"a:b"] = b"key with the separator"
        ks.scope("user", "7")[b"name"] = b"bob"
        assert list(ks.scope("user", "42").items()) == [
            (b"a:b", b"key with the separator"),
            (b"name", b"ada"),
        ]
        assert len(ks.scope("user", "7")) == 1 and ks.scope("user", "7").scopes() == []
        with pytest.raises(LayoutError):
            ks.scope("user")[b"x"] = b"a branch holds no keys"
        with pytest.raises(LayoutError):
            ks.scope("user", "42", "x")
        assert [(p, k) for p, k, _ in ks.scope("user", "42").subtree()] == [
            ((b"user", b"42"), b"a:b"),
            ((b"user", b"42"), b"name"),
        ]
        ks.scope("user", "42").drop()
        assert [k for k, _ in ks.store.scan(b"", None)] == [b"user:7:name"]


_NAMES = st.sampled_from([b"", b"a", b"a9", b"a;", b"a\x00", b"b", b"\xff"])
KEYS = [b"", b"k", b":", b"k:", b":k", b"a:b", b"\xff"]
_KEYS = st.sampled_from(KEYS)


_OPS = st.lists(
    st.tuples(st.sampled_from(["put", "put", "delete", "clear", "drop"]), st.tuples(_NAMES, _NAMES), _KEYS),
    max_size=25,
)
ENGINES = {"memory": ("memory:", 150), "lmdb": ("lmdb://{}", 30), "leveldb": ("leveldb://{}", 30)}


@pytest.mark.parametrize("engine", list(ENGINES))
def test_scopes_match_a_model(engine: str, tmp_path: Path) -> None:
    """Puts, deletes, clears and drops on scopes whose names sit around ':' and whose
    keys hold it: every scope reads and counts exactly its own keys, and the store
    holds exactly the model's stored keys. One store per engine, wiped per example."""
    url, examples = ENGINES[engine]
    store = open_store(url.format(tmp_path / engine))

    @settings(max_examples=examples, deadline=None)
    @given(ops=_OPS)
    def run(ops: list[tuple[str, tuple[bytes, bytes], bytes]]) -> None:
        store.delete_range(b"", None)
        ks = keyspace.attach(store, scheme=Delimited(":", depth=2), close_store=False)
        model: dict[tuple[bytes, bytes], dict[bytes, bytes]] = {}
        for n, (op, path, key) in enumerate(ops):
            scope, own = ks.scope(*path), model.setdefault(path, {})
            if op == "put":
                scope[key] = b"%d" % n
                own[key] = b"%d" % n
            elif op == "delete":
                scope.discard(key)
                own.pop(key, None)
            elif op == "clear":
                scope.clear()
                own.clear()
            else:
                scope.drop()
                own.clear()
        for path, own in model.items():
            scope = ks.scope(*path)
            assert list(scope.items()) == sorted(own.items())
            assert len(scope) == len(own) and scope.scopes() == []
            for key in KEYS:
                assert scope.get(key) == own.get(key)
        raw = {k for k, _ in store.scan(b"", None)}
        assert raw == {b":".join(path) + b":" + key for path, own in model.items() for key in own}

    try:
        run()
    finally:
        store.close()


# -- separator detection ---------------------------------------------------------------------------


def test_guess_separator() -> None:
    note = [user.encode() + b":" + field for user in USERS for field in FIELDS]
    assert guess_separator(note) == ":"
    assert guess_separator([k.replace(b":", b"\x00") for k in note]) == "\x00"
    assert guess_separator([b"a:b|c", b"d|e:f"]) is None  # both fit: ambiguous
    assert guess_separator([b"a:b", b"plain"]) is None  # one key has no separator
    assert guess_separator([]) is None
    tuple_keys = [pack(((name,), b"k")) for name in ("acme", "globex")]
    assert guess_separator(tuple_keys) is None  # binary names are not hand-made
    assert guess_delimited([b"user:42:name", b"user:7:email:work"]) == Delimited(":", depth=2)
    assert guess_delimited([b"user:42:name"], depth=1) == Delimited(":", depth=1)


def test_ambiguity() -> None:
    scheme = Delimited(":")
    assert scheme.ambiguous_splits
    assert scheme.ambiguity(b"rod:last_login") is None
    assert "fewer than the depth 1" in (scheme.ambiguity(b"plain") or "")
    assert "one of 2 possible" in (scheme.ambiguity(b"user:42:name") or "")
    assert not keyspace.TupleScheme().ambiguous_splits
    assert keyspace.TupleScheme().ambiguity(b"anything") is None


def test_open_by_name_and_by_instance(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'd.db'}"
    with keyspace.open(url, scheme="delimited") as ks:
        assert ks.scheme == Delimited(":", depth=1)
        ks.scope("rod")[b"last_login"] = b"1"
    with keyspace.open(url, scheme=Delimited(":", depth=1)) as ks:
        assert ks.scope("rod")[b"last_login"] == b"1"
        assert [k for k, _ in ks.store.scan(b"", None)] == [b"rod:last_login"]  # no record added
    deeper = scheme_from_name("delimited", separator=":", depth=2)
    with keyspace.open(url, scheme=deeper) as ks, pytest.raises(LayoutError, match=r"depth 1; .* depth 2"):
        ks.scope("rod").get(b"last_login")


def test_guess_refuses_keys_of_other_formats() -> None:
    cosmwasm = [keyspace.LengthPrefixed().encode((b"balance", o), b"uatom") for o in (b"alice", b"bob")]
    assert guess_separator(cosmwasm) is None  # 00 07 balance …: no text name before the first 00
    assert guess_separator([b":k", b":j"]) is None  # empty names are not hand-made
    assert guess_delimited([b"a:b::k", b"c:d::j"]) == Delimited(":", depth=2)  # the third name is empty
