"""The counts of every scope equal a model's under every countable scheme, for
transactions that write into a scope and its children in any order: AsciiHex
keeps a child's keys inside its parent's own byte range (``74 00`` holds
``74 00 75 00 …``), so a key is a scope's own only as the scheme decodes it.
The model is computed from the keys written (``scheme.encode``), not from a
recount, so a recount that attributed keys as wrongly as the counters would
not hide it; the recount (``differences``) must agree too."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace._accounting import accounting_of
from keyspace.schemes import AsciiHex, Delimited, Sublevel, TupleScheme

SCHEMES = {
    "tuple": (TupleScheme, [(), ("t",), ("t", "u"), ("t", "u", "v"), ("tt",)]),
    "sublevel": (Sublevel, [(), ("t",), ("t", "u"), ("t", "u", "v"), ("tt",)]),
    "asciihex": (AsciiHex, [(), ("t",), ("t", "u"), ("t", "u", "v"), ("tt",)]),
    "delimited": (lambda: Delimited(depth=2), [("t", "u"), ("t", "v"), ("tt", "u")]),
}
KEYS = st.sampled_from([b"a", b"b", b"u", b"\x00", b"zz"])


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(list(SCHEMES)),
    commits=st.lists(
        st.lists(
            st.tuples(st.integers(0, 4), KEYS, st.none() | st.binary(max_size=3)), min_size=1, max_size=6
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_counts_equal_a_model_of_the_keys_written(
    name: str, commits: list[list[tuple[int, bytes, bytes | None]]]
) -> None:
    make, paths = SCHEMES[name]
    scheme = make()
    ks = keyspace.open("memory:", scheme=scheme, accounting=True)
    model: dict[tuple[Any, ...], dict[bytes, bytes]] = {p: {} for p in paths}
    for ops in commits:
        with ks.transaction() as tx:
            for index, key, value in ops:
                path = paths[index % len(paths)]
                if value is None:
                    tx.scope(*path).pop(key, None)
                    model[path].pop(key, None)
                else:
                    tx.scope(*path)[key] = value
                    model[path][key] = value
    for path in paths:
        own = model[path]
        below = [(p, k, v) for p, d in model.items() if p[: len(path)] == path for k, v in d.items()]
        want = (
            len(own),
            sum(len(scheme.encode(path, k)) + len(v) for k, v in own.items()),
            len(below),
            sum(len(scheme.encode(p, k)) + len(v) for p, k, v in below),
        )
        assert tuple(ks.scope(*path).stats()) == want, path
    counts = accounting_of(ks.store)
    assert counts is not None
    with ks.store.snapshot() as view:
        assert counts.differences(view) == []
