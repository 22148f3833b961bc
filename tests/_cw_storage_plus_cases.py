"""Test cases of cw-storage-plus 3.0's own unit tests, ported as data.

Each case names its source (``file::test``), the collection it builds and its
steps, in order: writes (``do``), reads with the expected answer (``eq``; a
range's answer is its list of items in order), refusals (``err``) and, for the
CosmWasm layout only, stored bytes (``stored``: full key hex -> value bytes) or
keys (``eq(..., cw=True)``). A call is ``(name, *args)``, with a last dict of range
keywords (``reverse``, ``include_start``, ``include_stop``, ``limit``) as its
keyword arguments; ``("values",)`` after a range keeps its values.
``raw=True`` marks an answer of raw ranges: the
keys are compared on the CosmWasm layout only (the tuple layout's raw keys are
packed tuples) and the values are JSON-decoded before comparing. ``PB`` is a
prefix bound. Record values are the tests' ``Data`` structs as JSON objects.

Adapted where the Rust tests reach below the collections: ``src/prefix.rs``
builds a ``Prefix`` over the raw bytes ``foo``; here it is the prefix ``"foo"``
of a map keyed ``(str, bytes)``, with the same remainders, bounds and answers.
Index functions are given as the record fields that make the index key.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class PB(NamedTuple):
    """A prefix bound: ``inclusive`` or not."""

    prefix: Any
    inclusive: bool = True


_KEYWORDS = {"reverse", "include_start", "include_stop", "limit"}


def _call(spec: tuple[Any, ...]) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    """``(name, *args, kwargs?)``: a last dict of range keywords is the kwargs."""
    name, *rest = spec
    last = rest[-1] if rest else None
    kwargs = rest.pop() if isinstance(last, dict) and last and set(last) <= _KEYWORDS else {}
    return name, tuple(rest), kwargs


def do(*calls: tuple[Any, ...]) -> dict[str, Any]:
    """Run the chain of calls (``("prefix", 5), ("clear", 1)``)."""
    return {"kind": "do", "calls": [_call(c) for c in calls]}


def eq(expected: Any, *calls: tuple[Any, ...], raw: bool = False, cw: bool = False) -> dict[str, Any]:
    """The chain of calls answers ``expected`` (a range: its items as a list)."""
    return {"kind": "eq", "calls": [_call(c) for c in calls], "expected": expected, "raw": raw, "cw": cw}


def err(error: str, *calls: tuple[Any, ...]) -> dict[str, Any]:
    """The chain of calls raises ``keyspace.errors.<error>`` (or a builtin)."""
    return {"kind": "err", "calls": [_call(c) for c in calls], "error": error}


def stored(key_hex: str, value: bytes | None) -> dict[str, Any]:
    """CosmWasm layout, root of a LengthPrefixed keyspace: the store holds
    ``value`` (``None``: nothing) at ``key_hex``."""
    return {"kind": "stored", "key": bytes.fromhex(key_hex), "value": value}


def _lp(*parts: bytes) -> str:
    """Hex of every part length-prefixed (u16 big-endian)."""
    return b"".join(len(p).to_bytes(2, "big") + p for p in parts).hex()


def D(name: str, age: int, last_name: str | None = None) -> dict[str, Any]:
    """The tests' ``Data`` record."""
    if last_name is None:
        return {"name": name, "age": age}
    return {"name": name, "last_name": last_name, "age": age}


JOHN, JIM, ADA = D("John", 32), D("Jim", 44), D("Ada", 23)

CASES: list[dict[str, Any]] = []


def case(source: str, test: str, collection: dict[str, Any], *steps: dict[str, Any]) -> None:
    CASES.append({"source": source, "test": test, "collection": collection, "steps": list(steps)})


PEOPLE = {"kind": "map", "ns": "people", "key": "bytes"}
ALLOW = {"kind": "map", "ns": "allow", "key": ("bytes", "bytes")}
TRIPLE = {"kind": "map", "ns": "triple", "key": ("bytes", "u8", "str")}

# -- src/map.rs ----------------------------------------------------------------------

case(
    "src/map.rs",
    "create_path",
    TRIPLE,
    eq(_lp(b"triple", b"john", b"\x08") + b"pedro".hex(), ("path", (b"john", 8, "pedro")), ("hex",), cw=True),
)
case(
    "src/map.rs",
    "create_path (Map<&[u8]>, Map<(&[u8], &[u8])>)",
    ALLOW,
    eq(_lp(b"allow", b"john") + b"maria".hex(), ("path", (b"john", b"maria")), ("hex",), cw=True),
)
case(
    "src/map.rs",
    "save_and_load",
    PEOPLE,
    eq(None, ("path", b"john"), ("may_load",)),
    do(("path", b"john"), ("save", JOHN)),
    eq(JOHN, ("path", b"john"), ("load",)),
    eq(None, ("may_load", b"jack")),
    eq(JOHN, ("load", b"john")),
    stored(_lp(b"people") + b"john".hex(), b'{"name":"John","age":32}'),
    do(("path", b"john"), ("remove",)),
    eq(None, ("path", b"john"), ("may_load",)),
    stored(_lp(b"people") + b"john".hex(), None),
)
case(
    "src/map.rs",
    "existence",
    PEOPLE,
    do(("save", b"john", JOHN)),
    do(("save", b"removed", JOHN)),
    do(("remove", b"removed")),
    eq(True, ("has", b"john")),
    eq(False, ("has", b"never-writen")),
    eq(False, ("has", b"removed")),
)
case(
    "src/map.rs",
    "composite_keys",
    ALLOW,
    eq(None, ("path", (b"owner", b"spender")), ("may_load",)),
    do(("path", (b"owner", b"spender")), ("save", 1234)),
    eq(1234, ("path", (b"owner", b"spender")), ("load",)),
    eq(None, ("may_load", (b"owners", b"pender"))),
    eq(1234, ("load", (b"owner", b"spender"))),
    stored(_lp(b"allow", b"owner") + b"spender".hex(), b"1234"),
)
case(
    "src/map.rs",
    "triple_keys",
    TRIPLE,
    eq(None, ("path", (b"owner", 10, "recipient")), ("may_load",)),
    do(("path", (b"owner", 10, "recipient")), ("save", 1234)),
    eq(1234, ("path", (b"owner", 10, "recipient")), ("load",)),
    eq(None, ("may_load", (b"owners", 10, "receiver"))),
    eq(1234, ("load", (b"owner", 10, "recipient"))),
    stored(_lp(b"triple", b"owner", b"\x0a") + b"recipient".hex(), b"1234"),
)
case(
    "src/map.rs",
    "range_raw_simple_key",
    PEOPLE,
    do(("save", b"john", JOHN)),
    do(("save", b"jim", JIM)),
    eq([(b"jim", JIM), (b"john", JOHN)], ("range_raw",), raw=True),
    eq([(b"jim", JIM), (b"john", JOHN)], ("range_raw", b"j"), raw=True),
    eq([(b"john", JOHN)], ("range_raw", b"jo"), raw=True),
)
case(
    "src/map.rs",
    "range_simple_string_key",
    PEOPLE,
    do(("save", b"john", JOHN)),
    do(("save", b"jim", JIM)),
    do(("save", b"ada", ADA)),
    eq([(b"ada", ADA), (b"jim", JIM), (b"john", JOHN)], ("range",)),
    eq([(b"jim", JIM), (b"john", JOHN)], ("range", b"j")),
    eq([(b"john", JOHN)], ("range", b"jo")),
)
case(
    "src/map.rs",
    "range_simple_integer_key",
    {"kind": "map", "ns": "people_id", "key": "u32"},
    do(("save", 1234, JOHN)),
    do(("save", 56, JIM)),
    eq([(56, JIM), (1234, JOHN)], ("range",)),
    eq([(56, JIM), (1234, JOHN)], ("range", 56)),
    eq([(1234, JOHN)], ("range", 57)),
    stored(_lp(b"people_id") + "000004d2", b'{"name":"John","age":32}'),
)
case(
    "src/map.rs",
    "range_simple_signed_integer_key",
    {"kind": "map", "ns": "signed_id", "key": "i32"},
    do(("save", -1234, JOHN)),
    do(("save", -56, JIM)),
    do(("save", 50, ADA)),
    eq([(-1234, JOHN), (-56, JIM), (50, ADA)], ("range",)),
    eq([(-56, JIM), (50, ADA)], ("range", -56)),
    eq([(50, ADA)], ("range", -55, 50, {"include_stop": True, "reverse": True})),
    stored(_lp(b"signed_id") + "7ffffb2e", b'{"name":"John","age":32}'),
)
case(
    "src/map.rs",
    "range_raw_composite_key",
    ALLOW,
    do(("save", (b"owner", b"spender"), 1000)),
    do(("save", (b"owner", b"spender2"), 3000)),
    do(("save", (b"owner2", b"spender"), 5000)),
    eq(
        [
            (bytes.fromhex(_lp(b"owner")) + b"spender", 1000),
            (bytes.fromhex(_lp(b"owner")) + b"spender2", 3000),
            (bytes.fromhex(_lp(b"owner2")) + b"spender", 5000),
        ],
        ("range_raw",),
        raw=True,
    ),
    eq([(b"spender", 1000), (b"spender2", 3000)], ("prefix", b"owner"), ("range_raw",), raw=True),
)
case(
    "src/map.rs",
    "range_composite_key",
    ALLOW,
    do(("save", (b"owner", b"spender"), 1000)),
    do(("save", (b"owner", b"spender2"), 3000)),
    do(("save", (b"owner2", b"spender"), 5000)),
    eq(
        [((b"owner", b"spender"), 1000), ((b"owner", b"spender2"), 3000), ((b"owner2", b"spender"), 5000)],
        ("range",),
    ),
    eq([(b"spender", 1000), (b"spender2", 3000)], ("prefix", b"owner"), ("range",)),
    eq([(b"spender", 1000), (b"spender2", 3000)], ("prefix", b"owner"), ("range", b"spender")),
    eq(
        [(b"spender2", 3000)],
        ("prefix", b"owner"),
        ("range", b"spender", None, {"include_start": False}),
    ),
)
_TRIPLE_ROWS = [
    ((b"owner", 9, "recipient"), 1000),
    ((b"owner", 9, "recipient2"), 3000),
    ((b"owner", 10, "recipient3"), 3000),
    ((b"owner2", 9, "recipient"), 5000),
]
case(
    "src/map.rs",
    "range_raw_triple_key",
    TRIPLE,
    *[do(("save", k, v)) for k, v in _TRIPLE_ROWS],
    eq(
        [(bytes.fromhex(_lp(a, bytes([b]))) + c.encode(), v) for (a, b, c), v in _TRIPLE_ROWS],
        ("range_raw",),
        raw=True,
    ),
    eq([(b"recipient", 1000), (b"recipient2", 3000)], ("prefix", (b"owner", 9)), ("range_raw",), raw=True),
    eq(
        [
            (bytes.fromhex(_lp(b"\x09")) + b"recipient", 1000),
            (bytes.fromhex(_lp(b"\x09")) + b"recipient2", 3000),
            (bytes.fromhex(_lp(b"\x0a")) + b"recipient3", 3000),
        ],
        ("sub_prefix", b"owner"),
        ("range_raw",),
        raw=True,
    ),
)
case(
    "src/map.rs",
    "range_triple_key",
    TRIPLE,
    *[do(("save", k, v)) for k, v in _TRIPLE_ROWS],
    eq(list(_TRIPLE_ROWS), ("range",)),
    eq([("recipient", 1000), ("recipient2", 3000)], ("prefix", (b"owner", 9)), ("range",)),
    eq(
        [((9, "recipient"), 1000), ((9, "recipient2"), 3000), ((10, "recipient3"), 3000)],
        ("sub_prefix", b"owner"),
        ("range",),
    ),
    eq(
        [("recipient2", 3000)],
        ("prefix", (b"owner", 9)),
        ("range", "recipient", None, {"include_start": False}),
    ),
    eq(
        [((10, "recipient3"), 3000)],
        ("sub_prefix", b"owner"),
        ("range", (9, "recipient2"), None, {"include_start": False}),
    ),
    eq(
        [((9, "recipient2"), 3000), ((9, "recipient"), 1000)],
        ("sub_prefix", b"owner"),
        ("range", None, (10, "recipient3"), {"reverse": True}),
    ),
)
_AGES = [
    ((2, "123"), 123),
    ((3, "456"), 456),
    ((5, "789"), 789),
    ((5, "987"), 987),
    ((7, "202122"), 2002),
    ((8, "232425"), 2332),
]
for test, key, rows, raw in (
    ("prefixed_range_works", ("u32", "str"), _AGES, False),
    ("prefixed_range_raw_works", ("u32", "bytes"), [((a, b.encode()), v) for (a, b), v in _AGES], True),
):
    case(
        "src/map.rs",
        test,
        {"kind": "map", "ns": "ages", "key": key},
        *[do(("save", k, v)) for k, v in rows],
        eq([456, 789, 987, 2002], ("prefix_range", PB(3), PB(7)), ("values",)),
        eq([789, 987], ("prefix_range", PB(3, False), PB(7, False)), ("values",)),
        eq([987, 789, 456], ("prefix_range", PB(3), PB(5), {"reverse": True}), ("values",)),
        eq([456], ("prefix_range", PB(2, False), PB(5, False), {"reverse": True}), ("values",)),
        eq([rows[2][0][1], rows[3][0][1]], ("prefix", 5), ("keys",)),
        *(
            [
                eq(
                    [(bytes.fromhex(_lp((3).to_bytes(4, "big"))) + b"456", 456)],
                    ("prefix_range_raw", PB(3), PB(4, False)),
                    raw=True,
                )
            ]
            if raw
            else []
        ),
    )
case(
    "src/map.rs",
    "clear_works",
    {"kind": "map", "ns": "test_map", "key": "str"},
    *[do(("save", f"key{i}", i)) for i in range(5)],
    do(("clear",)),
    *[eq(False, ("has", f"key{i}")) for i in range(5)],
    stored(_lp(b"test_map") + b"key0".hex(), None),
)
case(
    "src/map.rs",
    "is_empty_works",
    {"kind": "map", "ns": "test_map", "key": "str"},
    eq(True, ("is_empty",)),
    do(("save", "key1", 1)),
    do(("save", "key2", 2)),
    eq(False, ("is_empty",)),
)
case(
    "src/map.rs",
    "first_last_work",
    {"kind": "map", "ns": "map", "key": "str"},
    eq(None, ("first",)),
    eq(None, ("last",)),
    do(("save", "ghi", 1)),
    do(("save", "abc", 2)),
    do(("save", "def", 3)),
    eq(("abc", 2), ("first",)),
    eq(("ghi", 1), ("last",)),
)

# -- src/prefix.rs (a Prefix over "foo": here the prefix "foo" of a (str, bytes) map) --

FOO = {"kind": "map", "ns": "m", "key": ("str", "bytes")}
_FOO_ROWS = [
    do(("save", ("foo", b"bar"), 1)),
    do(("save", ("foo", b"ra"), 2)),
    do(("save", ("foo", b"zi"), 3)),
    do(("save", ("fop", b"ly"), 100)),
    do(("save", ("fo", b"nt"), 200)),
]
_E = [(b"bar", 1), (b"ra", 2), (b"zi", 3)]
_R = list(reversed(_E))
case(
    "src/prefix.rs",
    "ensure_proper_range_bounds",
    FOO,
    *_FOO_ROWS,
    eq(_E, ("prefix", "foo"), ("items",)),
    eq(_R, ("prefix", "foo"), ("items", {"reverse": True})),
    eq(_E[1:], ("prefix", "foo"), ("items", b"ra")),
    eq(_E[2:], ("prefix", "foo"), ("items", b"ra", None, {"include_start": False})),
    eq(_E[1:], ("prefix", "foo"), ("items", b"r", None, {"include_start": False})),
    eq(_R[1:], ("prefix", "foo"), ("items", None, b"ra", {"include_stop": True, "reverse": True})),
    eq(_R[2:], ("prefix", "foo"), ("items", None, b"ra", {"reverse": True})),
    eq(_R[1:], ("prefix", "foo"), ("items", None, b"rb", {"reverse": True})),
    eq(_E[1:2], ("prefix", "foo"), ("items", b"ra", b"zi")),
    eq(_E[1:2], ("prefix", "foo"), ("items", b"ra", b"zi", {"reverse": True})),
    eq(_R[:2], ("prefix", "foo"), ("items", b"ra", b"zi", {"include_stop": True, "reverse": True})),
    eq([], ("prefix", "foo"), ("items", b"ra", b"zi", {"include_start": False})),
)
case(
    "src/prefix.rs",
    "prefix_clear_limited",
    FOO,
    *[do(("save", ("foo", f"{i}".encode()), 1)) for i in range(100)],
    do(("save", ("fop", b"x"), 1)),
    do(("prefix", "foo"), ("clear", 1)),
    eq(99, ("prefix", "foo"), ("len",)),
    do(("prefix", "foo"), ("clear", 12)),
    eq(99 - 12, ("prefix", "foo"), ("len",)),
    do(("prefix", "foo"), ("clear", 20)),
    eq(99 - 12 - 20, ("prefix", "foo"), ("len",)),
    do(("prefix", "foo"), ("clear", 1000)),
    eq(0, ("prefix", "foo"), ("len",)),
    eq(True, ("has", ("fop", b"x"))),
)
case(
    "src/prefix.rs",
    "prefix_clear_unlimited",
    FOO,
    *[do(("save", ("foo", f"{i}".encode()), 1)) for i in range(1000)],
    do(("prefix", "foo"), ("clear",)),
    eq(0, ("prefix", "foo"), ("len",)),
    *[do(("save", ("foo", f"{i}".encode()), 1)) for i in range(5)],
    do(("prefix", "foo"), ("clear", None)),
    eq(0, ("prefix", "foo"), ("len",)),
)
case(
    "src/prefix.rs",
    "is_empty_works",
    FOO,
    eq(True, ("prefix", "foo"), ("is_empty",)),
    do(("save", ("foo", b"key1"), 1)),
    do(("save", ("foo", b"key2"), 2)),
    eq(False, ("prefix", "foo"), ("is_empty",)),
)
case(
    "src/prefix.rs",
    "keys_raw_works",
    FOO,
    do(("save", ("foo", b"key1"), 1)),
    do(("save", ("foo", b"key2"), 2)),
    eq([b"key1", b"key2"], ("prefix", "foo"), ("keys",)),
    eq([b"key2"], ("prefix", "foo"), ("keys", b"key1", None, {"include_start": False})),
    eq([b"key1", b"key2"], ("prefix", "foo"), ("keys_raw",), cw=True),
    stored(_lp(b"m", b"foo") + b"key1".hex(), b"1"),
)

# -- src/snapshot/mod.rs, src/snapshot/map.rs, src/snapshot/item.rs --------------------


def _snap(strategy: str, ns: str, key: Any = "str") -> dict[str, Any]:
    return {
        "kind": "snapshot_map",
        "ns": ns,
        "checkpoints": f"{ns}__check",
        "changelog": f"{ns}__change",
        "key": key,
        "strategy": strategy,
    }


def _init_data(a: Any = "A", b: Any = "B", c: Any = "C", d: Any = "D") -> list[dict[str, Any]]:
    return [
        do(("save", a, 5, 1)),
        do(("save", b, 7, 2)),
        do(("add_checkpoint", 3)),
        do(("save", c, 1, 3)),
        do(("update", a, {"const": 8}, 3)),
        do(("remove", b, 4)),
        do(("save", c, 13, 4)),
        do(("add_checkpoint", 5)),
        do(("remove", a, 5)),
        do(("update", d, {"const": 22}, 5)),
        do(("remove_checkpoint", 5)),
    ]


_FINAL = {"A": None, "B": None, "C": 13, "D": 22}
_AT3 = {"A": 5, "B": 7, "C": None, "D": None}
_AT5 = {"A": 8, "B": None, "C": 13, "D": None}


def _values(table: dict[str, Any], height: int | None = None) -> list[dict[str, Any]]:
    if height is None:
        return [eq(v, ("may_load", k)) for k, v in table.items()]
    return [eq(v, ("may_load_at_height", k, height)) for k, v in table.items()]


def _missing(height: int) -> list[dict[str, Any]]:
    return [err("InvalidArgument", ("may_load_at_height", k, height)) for k in "ABCD"]


case(
    "src/snapshot/map.rs",
    "never_works_like_normal_map",
    _snap("never", "never"),
    *_init_data(),
    *_values(_FINAL),
    *_missing(3),
    *_missing(5),
)
case(
    "src/snapshot/map.rs",
    "every_blocks_stores_present_and_past",
    _snap("every_block", "every"),
    *_init_data(),
    *_values(_FINAL),
    *_values(_AT3, 3),
    *_values(_AT5, 5),
)
case(
    "src/snapshot/map.rs",
    "selected_shows_3_not_5",
    _snap("selected", "select"),
    *_init_data(),
    *_values(_FINAL),
    *_values(_AT3, 3),
    *_missing(1),
    *_missing(5),
)
case(
    "src/snapshot/map.rs",
    "handle_multiple_writes_in_one_block",
    _snap("every_block", "every"),
    do(("save", "A", 5, 1)),
    do(("save", "B", 7, 2)),
    do(("save", "C", 2, 2)),
    do(("update", "A", {"const": 9}, 3)),
    do(("save", "A", 12, 3)),
    eq(5, ("may_load_at_height", "A", 2)),
    eq(5, ("may_load_at_height", "A", 3)),
    eq(12, ("may_load_at_height", "A", 4)),
    do(("save", "B", 17, 4)),
    do(("remove", "B", 4)),
    eq(7, ("may_load_at_height", "B", 3)),
    eq(7, ("may_load_at_height", "B", 4)),
    eq(None, ("may_load_at_height", "B", 5)),
    do(("remove", "C", 5)),
    do(("update", "C", {"const": 16}, 5)),
    eq(2, ("may_load_at_height", "C", 4)),
    eq(2, ("may_load_at_height", "C", 5)),
    eq(16, ("may_load_at_height", "C", 6)),
)
case(
    "src/snapshot/map.rs",
    "changelog_range_works",
    _snap("every_block", "every"),
    do(("save", "A", 5, 1)),
    do(("save", "B", 7, 2)),
    do(("update", "A", {"const": 8}, 3)),
    do(("remove", "B", 4)),
    eq(
        [
            (("A", 1), {"old": None}),
            (("A", 3), {"old": 5}),
            (("B", 2), {"old": None}),
            (("B", 4), {"old": 7}),
        ],
        ("changelog",),
        ("items",),
    ),
    eq([(2, {"old": None}), (4, {"old": 7})], ("changelog",), ("prefix", "B"), ("items",)),
    eq([(3, {"old": 5})], ("changelog",), ("prefix", "A"), ("items", 3)),
    stored(_lp(b"every__change", b"A") + "0000000000000003", b'{"old":5}'),
    stored(_lp(b"every__change", b"A") + "0000000000000001", b'{"old":null}'),
)
case(
    "src/snapshot/map.rs",
    "range_simple_string_key",
    _snap("every_block", "every"),
    *_init_data(),
    eq([("C", 13), ("D", 22)], ("range",)),
    eq([("C", 13), ("D", 22)], ("range", "C")),
    eq([("D", 22)], ("range", "D")),
)
_CK = ("str", "str")
case(
    "src/snapshot/map.rs",
    "range_composite_key",
    _snap("every_block", "every", _CK),
    *_init_data(("A", "B"), ("B", "A"), ("B", "B"), ("C", "A")),
    eq([(("B", "B"), 13), (("C", "A"), 22)], ("range",)),
)
case(
    "src/snapshot/map.rs",
    "prefix_range_composite_key",
    _snap("every_block", "every", _CK),
    *_init_data(("A", "B"), ("B", "A"), ("B", "B"), ("C", "A")),
    eq([(("B", "B"), 13)], ("prefix_range", None, PB("C", False), {"reverse": True})),
)
case(
    "src/snapshot/map.rs",
    "prefix_composite_key",
    _snap("every_block", "every", _CK),
    *_init_data(("A", "B"), ("B", "A"), ("B", "B"), ("C", "A")),
    eq([("A", 22)], ("prefix", "C"), ("range",)),
)
case(
    "src/snapshot/mod.rs",
    "assert_checkpointed / may_load_at_height (Selected)",
    _snap("selected", "select"),
    err("InvalidArgument", ("assert_checkpointed", 1)),
    do(("add_checkpoint", 1)),
    do(("assert_checkpointed", 1)),
    do(("remove_checkpoint", 1)),
    err("InvalidArgument", ("assert_checkpointed", 1)),
    err("InvalidArgument", ("may_load_at_height", "dummy", 3)),
    do(("add_checkpoint", 3)),
    eq(None, ("may_load_at_height", "dummy", 3)),
    stored(_lp(b"select__check") + "0000000000000003", b"1"),
    do(("add_checkpoint", 3)),
    stored(_lp(b"select__check") + "0000000000000003", b"2"),
    do(("remove_checkpoint", 3)),
    stored(_lp(b"select__check") + "0000000000000003", b"1"),
)
case(
    "src/snapshot/mod.rs",
    "assert_checkpointed (Never, EveryBlock)",
    _snap("never", "never"),
    err("InvalidArgument", ("assert_checkpointed", 1)),
    do(("add_checkpoint", 1)),
    err("InvalidArgument", ("assert_checkpointed", 1)),
)
case(
    "src/snapshot/mod.rs",
    "assert_checkpointed (EveryBlock)",
    _snap("every_block", "every"),
    do(("assert_checkpointed", 1)),
    do(("add_checkpoint", 1)),
    do(("remove_checkpoint", 1)),
    do(("assert_checkpointed", 1)),
)


def _snap_item(strategy: str, ns: str) -> dict[str, Any]:
    return {
        "kind": "snapshot_item",
        "ns": ns,
        "checkpoints": f"{ns}__check",
        "changelog": f"{ns}__change",
        "strategy": strategy,
    }


def _item_data() -> list[dict[str, Any]]:
    # src/snapshot/item.rs init_data
    return [
        do(("save", 5, 1)),
        do(("save", 7, 2)),
        do(("add_checkpoint", 3)),
        do(("save", 1, 3)),
        do(("update", {"const": 8}, 3)),
        do(("remove", 4)),
        do(("save", 13, 4)),
        do(("add_checkpoint", 5)),
        do(("remove", 5)),
        do(("update", {"const": 22}, 5)),
        do(("remove_checkpoint", 5)),
    ]


case(
    "src/snapshot/item.rs",
    "never_works_like_normal_item",
    _snap_item("never", "never"),
    *_item_data(),
    eq(22, ("may_load",)),
    err("InvalidArgument", ("may_load_at_height", 3)),
    err("InvalidArgument", ("may_load_at_height", 5)),
)
case(
    "src/snapshot/item.rs",
    "every_blocks_stores_present_and_past",
    _snap_item("every_block", "every"),
    *_item_data(),
    eq(22, ("may_load",)),
    eq(7, ("may_load_at_height", 3)),
    eq(13, ("may_load_at_height", 5)),
)
case(
    "src/snapshot/item.rs",
    "selected_shows_3_not_5",
    _snap_item("selected", "select"),
    *_item_data(),
    eq(22, ("may_load",)),
    eq(7, ("may_load_at_height", 3)),
    err("InvalidArgument", ("may_load_at_height", 1)),
    err("InvalidArgument", ("may_load_at_height", 5)),
)

# -- src/deque.rs ----------------------------------------------------------------------

DQ = {"kind": "deque", "ns": "test"}
case(
    "src/deque.rs",
    "push_and_pop",
    {"kind": "deque", "ns": "people"},
    do(("push_back", "jack")),
    do(("push_back", "john")),
    do(("push_back", "joanne")),
    eq("jack", ("pop_front",)),
    eq("john", ("pop_front",)),
    do(("push_back", "jason")),
    eq("joanne", ("pop_front",)),
    eq("jason", ("pop_front",)),
    eq(None, ("pop_front",)),
    do(("push_front", "pascal")),
    do(("push_front", "peter")),
    do(("push_front", "paul")),
    eq("pascal", ("pop_back",)),
    eq("paul", ("pop_front",)),
    eq("peter", ("pop_back",)),
)
case(
    "src/deque.rs",
    "length",
    DQ,
    eq(0, ("len",)),
    eq(True, ("is_empty",)),
    do(("push_front", 1234)),
    do(("push_back", 2345)),
    do(("push_front", 3456)),
    do(("push_back", 4567)),
    eq(4, ("len",)),
    do(("pop_front",)),
    do(("pop_back",)),
    do(("pop_front",)),
    eq(1, ("len",)),
    do(("pop_front",)),
    eq(0, ("len",)),
    eq(None, ("pop_back",)),
    eq(0, ("len",)),
)
case(
    "src/deque.rs",
    "iterator",
    DQ,
    *[do(("push_back", i)) for i in (1, 2, 3, 4)],
    eq([1, 2, 3, 4], ("iter",)),
    eq([], ("iter", 6)),
    eq([2, 3, 4], ("iter", 1)),
    stored(_lp(b"test") + "00000000", b"1"),
    stored(_lp(b"test") + b"t".hex(), b"\x00\x00\x00\x04"),
)
case(
    "src/deque.rs",
    "reverse_iterator",
    DQ,
    *[do(("push_back", i)) for i in (1, 2, 3, 4)],
    eq([4, 3, 2, 1], ("iter", {"reverse": True})),
    eq([4, 3, 2, 1], ("reversed",)),
    eq([], ("iter", 0, -6, {"reverse": True})),
    eq([3, 2, 1], ("iter", None, -1, {"reverse": True})),
    eq([3, 2], ("iter", 1, 3, {"reverse": True})),
)
case(
    "src/deque.rs",
    "wrapping",
    DQ,
    do(("_set_ends", 0xFFFFFFFF, 0xFFFFFFFF)),
    eq(None, ("pop_front",)),
    eq(0, ("len",)),
    do(("push_back", 1)),
    eq(1, ("len",)),
    eq(1, ("pop_front",)),
)
case(
    "src/deque.rs",
    "wrapping_iterator",
    DQ,
    do(("_set_ends", 0xFFFFFFFF, 0xFFFFFFFF)),
    *[do(("push_back", i)) for i in (1, 2, 3, 4, 5)],
    eq([1, 2, 3, 4, 5], ("iter",)),
    eq([5, 4, 3, 2, 1], ("iter", {"reverse": True})),
    eq([4], ("iter", 3, 4)),
    stored(_lp(b"test") + "ffffffff", b"1"),
    stored(_lp(b"test") + "00000000", b"2"),
    stored(_lp(b"test") + b"h".hex(), b"\xff\xff\xff\xff"),
    stored(_lp(b"test") + b"t".hex(), b"\x00\x00\x00\x04"),
)
case(
    "src/deque.rs",
    "front_back",
    DQ,
    eq(None, ("back",)),
    do(("push_back", 1)),
    eq(1, ("back",)),
    eq(1, ("front",)),
    do(("push_back", 2)),
    eq(2, ("back",)),
    eq(1, ("front",)),
    do(("push_front", 3)),
    eq(2, ("back",)),
    eq(3, ("front",)),
)
_P1, _P2 = D("admin", 1234), D("user", 123)
case(
    "src/deque.rs",
    "readme_works",
    {"kind": "deque", "ns": "data"},
    eq(None, ("front",)),
    do(("push_back", _P1)),
    do(("push_back", _P2)),
    eq(_P1, ("pop_front",)),
    eq(_P2, ("pop_front",)),
    do(("push_back", _P1)),
    do(("push_back", _P2)),
    eq(_P2, ("pop_back",)),
    eq(_P1, ("pop_back",)),
    do(("push_front", _P1)),
    do(("push_front", _P2)),
    eq([_P2, _P1], ("iter",)),
    eq(_P2, ("get", 0)),
    eq(_P1, ("get", 1)),
    eq(None, ("get", 3)),
)
case(
    "src/deque.rs",
    "iterator_errors_when_item_missing",
    {"kind": "deque", "ns": "error_test"},
    do(("push_back", 1)),
    do(("_remove_position", 0)),
    err("DecodeError", ("iter",)),
    err("DecodeError", ("iter", {"reverse": True})),
    err("DecodeError", ("get", 0)),
)
case(
    "src/deque.rs",
    "get",
    DQ,
    do(("push_back", 1)),
    do(("push_back", 2)),
    eq(1, ("get", 0)),
    eq(2, ("get", 1)),
    eq(None, ("get", 2)),
    do(("_remove_position", 1)),
    err("DecodeError", ("get", 1)),
)
case(
    "src/deque.rs",
    "get (head moved by push_front)",
    {"kind": "deque", "ns": "test2"},
    do(("push_back", 0)),
    do(("push_back", 1)),
    do(("push_front", 0xFFFFFFFF)),
    do(("push_front", 0xFFFFFFFE)),
    eq(0xFFFFFFFE, ("get", 0)),
    eq(0xFFFFFFFF, ("get", 1)),
    eq(0, ("get", 2)),
    eq(1, ("get", 3)),
    eq(None, ("get", 5)),
    stored(_lp(b"test2") + "fffffffe", b"4294967294"),
)
case(
    "src/deque.rs",
    "set",
    DQ,
    do(("push_back", 1)),
    do(("push_back", 2)),
    do(("set", 1, 3)),
    eq(3, ("get", 1)),
    eq(3, ("back",)),
    eq(None, ("get", 2)),
    err("InvalidArgument", ("set", 2, 3)),
    eq(3, ("pop_back",)),
    err("InvalidArgument", ("set", 1, 3)),
    stored(_lp(b"test") + "00000001", None),
)

# -- src/indexed_map.rs, src/indexed_snapshot.rs, src/indexes/ ------------------------

_MARIA, _JUAN, _YOUNG, _LUISA = (
    D("Maria", 42, ""),
    D("Juan", 13, "Perez"),
    D("Maria", 24, "Young"),
    D("Maria Luisa", 43, "Bemberg"),
)
_NAME_AGE = {"name_age": ("multi", "data__name_age", ("str", "u32"), ("name", "age"))}


def _save_people(
    keys: tuple[Any, ...] = ("5627", "5628", "5629", "5630"), h: tuple[Any, ...] = ()
) -> list[dict[str, Any]]:
    """The four saves the indexed-map tests begin with: Maria, Juan, Young and
    Luisa under ``keys``, in that order (``h``: the height a snapshot map takes)."""
    people = (_MARIA, _JUAN, _YOUNG, _LUISA)
    return [do(("save", key, person, *h)) for key, person in zip(keys, people, strict=True)]


def _indexed(key: Any, indexes: dict[str, Any], snapshot: bool = False) -> dict[str, Any]:
    out = {"kind": "indexed_map", "ns": "data", "key": key, "indexes": indexes}
    if snapshot:
        out.update(
            kind="indexed_snapshot_map",
            checkpoints="data__checkpoints",
            changelog="data__changelog",
            strategy="every_block",
        )
    return out


for source, snapshot in (("src/indexed_map.rs", False), ("src/indexed_snapshot.rs", True)):
    h: tuple[Any, ...] = (1,) if snapshot else ()
    case(
        source,
        "prefix_range_simple_key",
        _indexed(("str", "str"), _NAME_AGE, snapshot),
        *_save_people((("1", "5627"), ("2", "5628"), ("2", "5629"), ("3", "5630")), h),
        eq(
            [(("2", "5628"), _JUAN), (("2", "5629"), _YOUNG), (("3", "5630"), _LUISA)],
            ("prefix_range", PB("2")),
        ),
        eq([(("2", "5628"), _JUAN), (("2", "5629"), _YOUNG)], ("prefix_range", PB("2"), PB("3", False))),
    )
    case(
        source,
        "range_simple_key_by_multi_index",
        _indexed("str", {"name": ("multi", "data__name", "str", "name")}, snapshot),
        *_save_people(h=h),
        eq(
            [("5628", _JUAN), ("5627", _MARIA), ("5629", _YOUNG), ("5630", _LUISA)],
            ("index", "name"),
            ("items",),
        ),
        eq([("5627", _MARIA), ("5629", _YOUNG)], ("index", "name"), ("prefix", "Maria"), ("items",)),
        eq(
            [("5629", _YOUNG), ("5627", _MARIA)],
            ("index", "name"),
            ("prefix", "Maria"),
            ("items", {"reverse": True}),
        ),
        eq(
            [(b"5628", _JUAN), (b"5627", _MARIA), (b"5629", _YOUNG), (b"5630", _LUISA)],
            ("index", "name"),
            ("range_raw",),
            raw=True,
        ),
        stored(_lp(b"data__name", b"Maria") + b"5627".hex(), b"4"),
        stored(_lp(b"data") + b"5627".hex(), b'{"name":"Maria","last_name":"","age":42}'),
    )
    case(
        source,
        "range_simple_key_by_unique_index",
        _indexed("str", {"age": ("unique", "data__age", "u32", "age")}, snapshot),
        *_save_people(h=h),
        eq(
            [("5628", _JUAN), ("5629", _YOUNG), ("5627", _MARIA), ("5630", _LUISA)],
            ("index", "age"),
            ("items",),
        ),
        eq(
            [("5630", _LUISA), ("5627", _MARIA), ("5629", _YOUNG), ("5628", _JUAN)],
            ("index", "age"),
            ("items", {"reverse": True}),
        ),
        eq([(b"5628", _JUAN), (b"5629", _YOUNG)], ("index", "age"), ("range_raw", None, 42), raw=True),
        stored(
            _lp(b"data__age") + "0000002a",
            b'{"pk":"NTYyNw==","value":{"name":"Maria","last_name":"","age":42}}',
        ),
        err("UniqueViolation", ("save", "5631", D("Other", 42, "X"), *h)),
    )

case(
    "src/indexed_map.rs",
    "prefix_range_triple_key",
    _indexed(("str", "str", "str"), _NAME_AGE),
    *_save_people((("1", "1", "5627"), ("1", "2", "5628"), ("2", "1", "5629"), ("2", "2", "5630"))),
    eq(
        [(("1", "2", "5628"), _JUAN), (("2", "1", "5629"), _YOUNG), (("2", "2", "5630"), _LUISA)],
        ("prefix_range", PB(("1", "2"))),
    ),
    eq(
        [(("1", "2", "5628"), _JUAN), (("2", "1", "5629"), _YOUNG)],
        ("prefix_range", PB(("1", "2")), PB(("2", "1"))),
    ),
    eq([(("1", "5629"), _YOUNG), (("2", "5630"), _LUISA)], ("sub_prefix", "2"), ("items",)),
    eq([("5629", _YOUNG)], ("prefix", ("2", "1")), ("items",)),
)
case(
    "src/indexed_map.rs",
    "bounds_unique_index::composite_key_query",
    {
        "kind": "indexed_map",
        "ns": "test_map",
        "key": "str",
        "indexes": {"secondary": ("unique", "test_map__secondary", "u64", None)},
    },
    do(("save", "one", 1)),
    do(("save", "two", 2)),
    do(("save", "three", 3)),
    eq([1], ("index", "secondary"), ("values", None, 1, {"include_stop": True})),
    eq([("three", 3)], ("index", "secondary"), ("items", 2, None, {"include_start": False})),
)
case(
    "src/indexed_map.rs",
    "bounds_multi_index::composite_key_query",
    {
        "kind": "indexed_map",
        "ns": "test_map",
        "key": "str",
        "indexes": {"secondary": ("multi", "test_map__secondary", "u64", None)},
    },
    do(("save", "one", 1)),
    do(("save", "two", 2)),
    do(("save", "two2", 2)),
    do(("save", "three", 3)),
    eq([(b"one", 1)], ("index", "secondary"), ("prefix_range_raw", None, PB(1)), raw=True),
    eq([("one", 1)], ("index", "secondary"), ("prefix_range", None, PB(1))),
    eq([("two", 2), ("two2", 2)], ("index", "secondary"), ("prefix_range", PB(1, False), PB(3, False))),
    eq(
        [("two2", 2), ("three", 3)],
        ("index", "secondary"),
        ("items", (2, "two"), None, {"include_start": False}),
    ),
)
case(
    "src/indexed_map.rs",
    "clear_works / is_empty_works",
    _indexed("str", {"name": ("multi", "data__name", "str", "name")}),
    eq(True, ("is_empty",)),
    do(("save", "1", _MARIA)),
    do(("save", "2", _JUAN)),
    eq(False, ("is_empty",)),
    do(("clear", 1)),
    eq([("2", _JUAN)], ("items",)),
    eq([("2", _JUAN)], ("index", "name"), ("items",)),
    stored(_lp(b"data__name", b"Maria") + b"1".hex(), None),
    do(("clear",)),
    eq(True, ("is_empty",)),
    eq([], ("index", "name"), ("items",)),
)
case(
    "src/indexed_snapshot.rs",
    "changelog_range_works",
    _indexed("str", {"name": ("multi", "data__name", "str", "name")}, True),
    do(("save", "A", D("a", 5), 1)),
    do(("save", "B", D("b", 7), 2)),
    do(("update", "A", {"const": D("a", 8)}, 3)),
    do(("remove", "B", 4)),
    eq(
        [
            (("A", 1), {"old": None}),
            (("A", 3), {"old": D("a", 5)}),
            (("B", 2), {"old": None}),
            (("B", 4), {"old": D("b", 7)}),
        ],
        ("changelog",),
        ("items",),
    ),
    eq(D("a", 5), ("may_load_at_height", "A", 2)),
    eq(D("a", 5), ("may_load_at_height", "A", 3)),
    eq(D("a", 8), ("may_load_at_height", "A", 4)),
    eq(None, ("may_load_at_height", "B", 5)),
    eq([("A", D("a", 8))], ("index", "name"), ("items",)),
)
case(
    "src/indexed_snapshot.rs",
    "remove_and_update_reflected_on_indexes",
    _indexed(
        "str",
        {"name": ("multi", "data__name", "str", "name"), "age": ("unique", "data__age", "u32", "age")},
        True,
    ),
    do(("save", "1", D("John", 12), 1)),
    do(("save", "2", D("John", 13), 1)),
    do(("save", "3", D("Fred", 14), 1)),
    eq(2, ("index", "name"), ("prefix", "John"), ("len",)),
    do(("remove", "1", 2)),
    eq(1, ("index", "name"), ("prefix", "John"), ("len",)),
    eq(None, ("index", "age"), ("may_load", 12)),
    do(("update", "3", {"const": D("Mary", 14)}, 3)),
    eq(0, ("index", "name"), ("prefix", "Fred"), ("len",)),
    eq([("3", D("Mary", 14))], ("index", "name"), ("prefix", "Mary"), ("items",)),
    eq(D("John", 12), ("may_load_at_height", "1", 2)),
    eq(D("Fred", 14), ("may_load_at_height", "3", 3)),
)

# -- src/keys.rs, src/de.rs: key element types ---------------------------------------

case(
    "src/keys.rs",
    "std_uint64_key_works / std_int64_key_works / fixed_size_bytes_key_works",
    {"kind": "map", "ns": "k", "key": ("Uint64", "Int64", "bytes4", "Timestamp")},
    do(("save", (4242, -1, b"\x01\x02\x03\x04", 10**18), 1)),
    eq(
        _lp(b"k", (4242).to_bytes(8, "big"), bytes.fromhex("7fffffffffffffff"), b"\x01\x02\x03\x04")
        + (10**18).to_bytes(8, "big").hex(),
        ("path", (4242, -1, b"\x01\x02\x03\x04", 10**18)),
        ("hex",),
        cw=True,
    ),
    eq([((4242, -1, b"\x01\x02\x03\x04", 10**18), 1)], ("items",)),
    err("InvalidKey", ("save", (1, 1, b"\x01\x02\x03", 1), 1)),
)
case(
    "src/de.rs",
    "deserialize_triple_of_tuples_works",
    {"kind": "map", "ns": "t", "key": (("u32", "str"), ("u16", "bytes"), ("i8", "Addr"))},
    do(("save", ((1, "a"), (2, b"b"), (-3, "c")), 1)),
    eq([(((1, "a"), (2, b"b"), (-3, "c")), 1)], ("items",)),
    eq([(((2, b"b"), (-3, "c")), 1)], ("prefix", (1, "a")), ("items",)),
    eq([("c", 1)], ("prefix", ((1, "a"), (2, b"b"), -3)), ("items",)),
)

# -- keyspace's DequeMap (cw-storage-plus#15): its bytes derived from Map and Deque --

case(
    "cw-storage-plus#15",
    "deque_map (keyspace's layout)",
    {"kind": "deque_map", "ns": "queues", "key": "addr"},
    do(("deque", "alice"), ("push_back", 1)),
    do(("deque", "alice"), ("push_back", 2)),
    do(("deque", "bob"), ("push_front", 9)),
    eq([1, 2], ("deque", "alice"), ("iter",)),
    eq([9], ("deque", "bob"), ("iter",)),
    stored(_lp(b"queues", b"alice") + "00000000", b"1"),
    stored(_lp(b"queues", b"alice") + b"t".hex(), b"\x00\x00\x00\x02"),
    stored(_lp(b"queues", b"bob") + "ffffffff", b"9"),
    stored(_lp(b"queues", b"bob") + b"h".hex(), b"\xff\xff\xff\xff"),
    do(("remove", "alice")),
    eq([], ("deque", "alice"), ("iter",)),
    eq([9], ("deque", "bob"), ("iter",)),
)

# -- src/indexed_map.rs, src/indexes/multi.rs, src/indexes/unique.rs: ranges by prefix
# and sub-prefix of a composite index key yield the records ----------------------------

for source, snapshot in (("src/indexed_map.rs", False), ("src/indexed_snapshot.rs", True)):
    h = (1,) if snapshot else ()
    case(
        source,
        "range_composite_key_by_multi_index",
        _indexed("str", _NAME_AGE, snapshot),
        *_save_people(h=h),
        eq(
            [("5627", _MARIA), ("5629", _YOUNG)],
            ("index", "name_age"),
            ("sub_prefix", "Maria"),
            ("items", {"reverse": True}),
        ),
        eq([("5629", _YOUNG)], ("index", "name_age"), ("prefix", ("Maria", 24)), ("items",)),
        eq(
            [(b"5627", _MARIA), (b"5629", _YOUNG)],
            ("index", "name_age"),
            ("sub_prefix", "Maria"),
            ("range_raw", {"reverse": True}),
            raw=True,
        ),
        eq(
            [("5628", _JUAN), ("5629", _YOUNG), ("5627", _MARIA)],
            ("index", "name_age"),
            ("prefix_range", None, PB("Maria")),
        ),
        stored(_lp(b"data__name_age", b"Maria", (42).to_bytes(4, "big")) + b"5627".hex(), b"4"),
    )
    case(
        source,
        "range_composite_key_by_unique_index",
        _indexed(
            "str", {"name_age": ("unique", "data__name_age", ("str", "u32"), ("name", "age"))}, snapshot
        ),
        *_save_people(h=h),
        eq(
            [("5627", _MARIA), ("5629", _YOUNG)],
            ("index", "name_age"),
            ("prefix", "Maria"),
            ("items", {"reverse": True}),
        ),
        eq(
            [(b"5629", _YOUNG)], ("index", "name_age"), ("prefix", "Maria"), ("range_raw", None, 42), raw=True
        ),
        eq(
            [("5628", _JUAN), ("5629", _YOUNG), ("5627", _MARIA)],
            ("index", "name_age"),
            ("prefix_range", None, PB("Maria")),
        ),
        eq(("5629", _YOUNG), ("index", "name_age"), ("load", ("Maria", 24))),
        err("UniqueViolation", ("save", "5631", D("Maria", 24, "Other"), *h)),
    )

# -- src/keys.rs: key element bytes (as stored keys of a map) ------------------------

_U256_MAX = b"\xff" * 32
case(
    "src/keys.rs",
    "fixed_size_bytes_key_works",
    {"kind": "map", "ns": "fixed", "key": "bytes32"},
    do(("save", _U256_MAX, 1)),
    eq(_lp(b"fixed") + _U256_MAX.hex(), ("path", _U256_MAX), ("hex",), cw=True),
    eq([(_U256_MAX, 1)], ("items",)),
    err("InvalidKey", ("save", b"\xff" * 31, 1)),
)
case(
    "src/keys.rs",
    "naked_16bit_prefixes (i16, signed: sign-flipped)",
    {"kind": "map", "ns": "p16", "key": ("i16", "bytes")},
    do(("save", (12345, b"random"), 1)),
    stored(_lp(b"p16", bytes([48 ^ 0x80, 57])) + b"random".hex(), b"1"),
    eq([(b"random", 1)], ("prefix", 12345), ("items",)),
)
case(
    "src/keys.rs",
    "naked_proper_prefixes (str, u32, bytes)",
    {"kind": "map", "ns": "p3", "key": ("str", "u32", "bytes")},
    do(("save", ("begin", 12345, b"end"), 1)),
    stored(_lp(b"p3", b"begin", bytes([0, 0, 48, 57])) + b"end".hex(), b"1"),
    eq([((12345, b"end"), 1)], ("sub_prefix", "begin"), ("items",)),
)

# -- src/indexes/prefix.rs (an IndexPrefix over "foo": here the prefix "foo" of a
# multi index, ranging over the record keys) --------------------------------------


def _tagged(tag: str, v: int) -> dict[str, Any]:
    return {"tag": tag, "v": v}


_IDX = {
    "kind": "indexed_map",
    "ns": "recs",
    "key": "bytes",
    "indexes": {"tag": ("multi", "recs__tag", "str", "tag")},
}
_IE = [(b"bar", _tagged("foo", 1)), (b"ra", _tagged("foo", 2)), (b"zi", _tagged("foo", 3))]
_IR = list(reversed(_IE))
case(
    "src/indexes/prefix.rs",
    "ensure_proper_range_bounds",
    _IDX,
    *[do(("save", k, v)) for k, v in _IE],
    do(("save", b"ly", _tagged("fop", 100))),
    do(("save", b"nt", _tagged("fo", 200))),
    eq(_IE, ("index", "tag"), ("prefix", "foo"), ("items",)),
    eq(_IR, ("index", "tag"), ("prefix", "foo"), ("items", {"reverse": True})),
    eq(_IE[1:], ("index", "tag"), ("prefix", "foo"), ("items", b"ra")),
    eq(_IE[2:], ("index", "tag"), ("prefix", "foo"), ("items", b"ra", None, {"include_start": False})),
    eq(_IE[1:], ("index", "tag"), ("prefix", "foo"), ("items", b"r", None, {"include_start": False})),
    eq(
        _IR[1:],
        ("index", "tag"),
        ("prefix", "foo"),
        ("items", None, b"ra", {"include_stop": True, "reverse": True}),
    ),
    eq(_IR[2:], ("index", "tag"), ("prefix", "foo"), ("items", None, b"ra", {"reverse": True})),
    eq(_IR[1:], ("index", "tag"), ("prefix", "foo"), ("items", None, b"rb", {"reverse": True})),
    eq(_IE[1:2], ("index", "tag"), ("prefix", "foo"), ("items", b"ra", b"zi")),
    eq(
        _IR[:2],
        ("index", "tag"),
        ("prefix", "foo"),
        ("items", b"ra", b"zi", {"include_stop": True, "reverse": True}),
    ),
    eq([], ("index", "tag"), ("prefix", "foo"), ("items", b"ra", b"zi", {"include_start": False})),
    eq(_IE, ("index", "tag"), ("prefix", "foo"), ("range_raw",), raw=True),
)
case(
    "src/indexes/prefix.rs",
    "is_empty_works",
    _IDX,
    eq(True, ("index", "tag"), ("prefix", "foo"), ("is_empty",)),
    do(("save", b"key1", _tagged("foo", 1))),
    do(("save", b"key2", _tagged("foo", 2))),
    eq(False, ("index", "tag"), ("prefix", "foo"), ("is_empty",)),
    eq(True, ("index", "tag"), ("prefix", "fo"), ("is_empty",)),
)
