"""``Layout.lacks``: where a scheme's own ranges also hold other keys, the byte
that tells them apart. For every scheme and path, either ``lacks`` is -1 (exact
ranges, or no such byte), or a stored key of the scope's subtree is an own key
(``is_own``, what scans filter by) exactly when it holds no ``lacks`` after the
prefix, so a count of the keys without it is ``len``. Rebased layouts keep it."""

from __future__ import annotations

from typing import Any

from _schemes import SCOPE_AND_SIBLING
from hypothesis import given, settings
from hypothesis import strategies as st

from keyspace.errors import KeyspaceError
from keyspace.schemes import AsciiHex


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(sorted(SCOPE_AND_SIBLING)),
    path=st.lists(st.text("ab\x00!", min_size=1, max_size=3), max_size=3).map(tuple),
    below=st.lists(st.text("ab\x00!", min_size=1, max_size=3), max_size=2).map(tuple),
    key=st.binary(max_size=5),
)
def test_lacks_tells_own_keys_from_the_rest(
    name: str, path: tuple[Any, ...], below: tuple[Any, ...], key: bytes
) -> None:
    scheme = SCOPE_AND_SIBLING[name][0]()
    try:
        layout = scheme.layout(path)
        stored = scheme.encode(path + below, key)
    except KeyspaceError:
        return  # a path or key the scheme cannot hold
    if layout.exact:
        assert layout.lacks == -1
        return
    if layout.lacks < 0:
        return
    within = any(lo <= stored and (hi is None or stored < hi) for lo, hi in layout.ranges)
    if within:
        own = layout.is_own(stored)
        assert own == (bytes((layout.lacks,)) not in stored[len(layout.prefix) :])
        assert own == (below == ())
    assert layout.rebased(len(layout.prefix) // 2).lacks == layout.lacks


def test_asciihex_declares_its_separator() -> None:
    assert AsciiHex().layout(("a", "b")).lacks == 0
    assert AsciiHex().layout(()).lacks == 0
