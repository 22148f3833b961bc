"""Paths that compare equal to a path already made: the memos of compiled paths
answer exactly what a keyspace that made nothing before answers.

A keyspace keeps compiled paths (layouts, own ranges, default scopes, a
scheme's encode memo) keyed by the path, and a dictionary finds an entry for
any path that compares equal to its key: ``memoryview(b"a") == b"a"``, a bytes
subclass equals its bytes, ``1 == 1.0 == True``. Only paths of exactly ``str``
and ``bytes`` components are kept, but a lookup by an equal path of other
types must not be answered from the memo: the tuple scheme refuses a
memoryview component and the byte schemes refuse a bytes subclass
(:class:`InvalidName`), so such a path must be refused whatever was made
before, never given a scope that reads and clears the other path's keys while
its writes are refused.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.errors import InvalidName


class Text(str):
    """A str subclass (the schemes take it as the str it is)."""


class Raw(bytes):
    """A bytes subclass (the byte schemes refuse it; the tuple scheme packs it as bytes)."""


def _equal_classes() -> list[list[Any]]:
    """Components grouped by equality: every member of a group equals the others."""
    return [
        ["a", Text("a")],
        [b"a", Raw(b"a"), memoryview(b"a")],
        [1, 1.0, True],
        [0, 0.0, -0.0, False],
        [("a",), (Text("a"),)],
        [(b"a",), (Raw(b"a"),), (memoryview(b"a"),)],
        [(1,), (1.0,), (True,)],
    ]


SCHEMES = ["tuple", "sublevel", "length-prefixed", "asciihex", "scopehash"]


def _outcome(make: Any) -> tuple[Any, ...]:
    """What making a scope answers: the error's type, or the scope's path
    types, prefix and own ranges."""
    try:
        scope = make()
    except keyspace.errors.KeyspaceError as exc:
        return ("error", type(exc).__name__)
    return ("scope", scope.prefix, tuple(scope._ranges), tuple(type(c) for c in scope.path))


def _encoded(scheme: keyspace.schemes.Scheme, path: tuple[Any, ...]) -> tuple[Any, ...]:
    try:
        return ("stored", scheme.encode(path, b"k"))
    except keyspace.errors.KeyspaceError as exc:
        return ("error", type(exc).__name__)


def _answers(ks: keyspace.Keyspace, path: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    root = ks.scope()
    with ks.snapshot() as snap:
        in_snapshot = _outcome(lambda: snap.scope(*path))
    return [
        _outcome(lambda: ks.scope(*path)),
        _outcome(lambda: root.scope(*path)),
        _outcome(lambda: ks.scope(*path, value="json")),
        in_snapshot,
        _encoded(ks.scheme, path),
    ]


@pytest.mark.parametrize("scheme", SCHEMES)
@settings(max_examples=150, deadline=None)
@given(data=st.data(), shape=st.lists(st.integers(0, len(_equal_classes()) - 1), min_size=1, max_size=3))
def test_a_path_is_answered_as_by_a_keyspace_that_made_nothing(
    scheme: str, data: Any, shape: list[int]
) -> None:
    """Make the scopes of one path, then ask for a path equal to it (each
    component drawn from the same equality group): the answers are those of a
    keyspace that made nothing before."""
    groups = _equal_classes()
    made = tuple(data.draw(st.sampled_from(groups[i]), label="made") for i in shape)
    path = tuple(data.draw(st.sampled_from(groups[i]), label="path") for i in shape)
    warm = keyspace.open("memory:", scheme=scheme)
    for make in (
        lambda: warm.scope(*made),
        lambda: warm.scope().scope(*made),
        lambda: warm.scheme.encode(made, b"k"),
    ):
        with contextlib.suppress(keyspace.errors.KeyspaceError):
            make()
    cold = keyspace.open("memory:", scheme=scheme)
    assert _answers(warm, path) == _answers(cold, path)


@pytest.mark.parametrize(
    ("scheme", "odd"),
    [
        ("tuple", memoryview(b"a")),
        ("sublevel", Raw(b"a")),
        ("length-prefixed", Raw(b"a")),
        ("asciihex", Raw(b"a")),
    ],
)
def test_a_refused_path_never_reaches_the_keys_of_the_equal_path(scheme: str, odd: Any) -> None:
    ks = keyspace.open("memory:", scheme=scheme)
    ks.scope(b"a")[b"k"] = b"v"
    root = ks.scope()
    with pytest.raises(InvalidName):
        root.scope(odd)
    with pytest.raises(InvalidName):
        ks.scope(odd)
    with pytest.raises(InvalidName), ks.transaction() as tx:
        tx.scope(odd).clear()
    with pytest.raises(InvalidName):
        ks.scheme.encode((odd,), b"k")
    assert dict(ks.scope(b"a")) == {b"k": b"v"}


_COMPONENTS = st.one_of(
    st.text(max_size=3),
    st.binary(max_size=3),
    st.builds(Text, st.text(max_size=3)),
    st.builds(Raw, st.binary(max_size=3)),
    st.builds(memoryview, st.binary(max_size=3)),
    st.integers(),
    st.booleans(),
    st.floats(allow_nan=True),
    st.none(),
)


@given(st.lists(_COMPONENTS, max_size=4), st.sampled_from([tuple, list]))
@settings(max_examples=300)
def test_the_c_check_of_memoisable_paths_agrees_with_its_reference(components: list[Any], kind: type) -> None:
    from keyspace.schemes._base import _exact_path, exact_path

    path = kind(components)
    expected = kind is tuple and all(type(c) in (str, bytes) for c in components)
    assert _exact_path(path) is expected
    assert exact_path(path) is expected
