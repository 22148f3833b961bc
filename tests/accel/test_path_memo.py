"""The C method that hands out a transaction's scopes
(``keyspace._scope_accel.path_memo``): for every path, with and without
keywords, it returns exactly what its reference (the fallback, called with the
instance) returns, the kept object only for an exact str and bytes path kept in
the instance's dict of them, and raises what the reference raises;
``Transaction.scope`` is that method over the Python method."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import keyspace
from keyspace.errors import InvalidName, NotEntered
from keyspace.keyspace import Transaction

path_memo: Callable[..., Callable[..., Any]] | None
try:
    from keyspace._scope_accel import path_memo
except ImportError:  # pragma: no cover - built without a C compiler
    path_memo = None

pytestmark = pytest.mark.skipif(path_memo is None, reason="keyspace._scope_accel was not built")


class _Unhashable:
    __hash__ = None  # type: ignore[assignment]


class _RaisingHash:
    def __hash__(self) -> int:
        raise ValueError("a component's own fault")


class _Fatal(BaseException):
    pass


class _FatalHash:
    def __hash__(self) -> int:
        raise _Fatal


_COMPONENTS = st.one_of(
    st.sampled_from(["a", "b", b"a", b"b", 1, True, 1.0, None]),
    st.text(max_size=3),
    st.binary(max_size=3),
)


def _holder(memo: Any = None) -> Any:
    """A class whose ``made`` is the C method over a reference that reports its
    call and keeps exact paths in the instance's ``kept``."""

    def made(self: Any, *path: Any, **kw: Any) -> Any:
        got = ("made", path, tuple(sorted(kw.items())))
        if not kw and all(type(c) in (str, bytes) for c in path):
            self.kept.setdefault(path, got)
        return got

    assert path_memo is not None

    class Holder:
        def __init__(self) -> None:
            self.kept: Any = {} if memo is None else memo

    Holder.made = path_memo("kept", made)  # type: ignore[attr-defined]
    return Holder()


@given(calls=st.lists(st.tuples(st.lists(_COMPONENTS, max_size=3).map(tuple), st.booleans()), max_size=30))
def test_the_method_returns_what_its_reference_returns(calls: list[tuple[tuple[Any, ...], bool]]) -> None:
    holder = _holder()
    hoisted = holder.made  # a bound method of it: the same answers
    model: dict[tuple[Any, ...], Any] = {}
    for i, (path, keyword) in enumerate(calls):
        call = hoisted if i % 2 else holder.made
        got = call(*path, key="k") if keyword else call(*path)
        exact = all(type(x) in (str, bytes) for x in path)
        if keyword:
            assert got == ("made", path, (("key", "k"),))
        elif exact and path in model:
            assert got is model[path]
        else:
            assert got == ("made", path, ())
            if exact:
                model.setdefault(path, got)
                assert holder.kept[path] is model[path]


def test_an_equal_path_of_another_type_is_not_the_kept_one() -> None:
    holder = _holder({(1,): "kept for (1,)"})
    assert (True,) == (1,) and holder.made(True) == ("made", (True,), ())
    assert holder.made(1) == ("made", (1,), ())  # not exact either: the reference decides


def test_a_lookup_that_raises_goes_to_the_reference_but_fatal_errors_propagate() -> None:
    holder = _holder({("a",): 1})
    odd = _Unhashable()
    assert holder.made(odd) == ("made", (odd,), ())
    assert holder.made("a", _RaisingHash())[0] == "made"
    with pytest.raises(_Fatal):
        holder.made(_FatalHash())


def test_no_dict_under_the_name_goes_to_the_reference() -> None:
    for memo in ([], {("a",): 1}.items()):
        holder = _holder(memo)
        with pytest.raises(AttributeError):  # the reference keeps into a list or view: no setdefault
            holder.made("a")
    holder = _holder()
    del holder.kept
    with pytest.raises(AttributeError):
        holder.made("a")


def test_bad_arguments_are_refused_by_name() -> None:
    assert path_memo is not None
    with pytest.raises(TypeError, match="name must be a str"):
        path_memo(1, print)
    with pytest.raises(TypeError, match="fallback must be callable"):
        path_memo("kept", 1)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        path_memo("kept")


def test_a_transactions_scope_is_the_method_over_its_reference(tmp_path: Path) -> None:
    assert type(Transaction.__dict__["scope"]).__name__ == "PathMemo"
    with keyspace.open(tmp_path / "s") as ks:
        with ks.transaction() as tx:
            scope = tx.scope  # hoisted, as a request loop does
            scope("t", "users")[b"k"] = b"v"
            assert scope("t", "users") is tx.scope("t", "users")
            assert tx.scope("t", "users", key="str") is not tx.scope("t", "users", key="str")
            assert tx.scope("t", "users", value="str")[b"k"] == "v"
            with pytest.raises(InvalidName):
                tx.scope("t", object())
        block = ks.snapshot()
        with pytest.raises(NotEntered):
            block.scope("t", "users")
        with block as snap:
            assert snap.scope("t", "users")[b"k"] == b"v"
            assert snap.scope("t", "users") is snap.scope("t", "users")
        ks.scope("t", "users")[b"k"] = b"new"
        with block as again:  # the block entered again: scopes of its new view
            assert again.scope("t", "users")[b"k"] == b"new"
            assert again.scope("t", "users")[b"k"] == b"new"


def test_without_the_schemes_c_module_every_call_is_the_references(tmp_path: Path) -> None:
    """The memo takes ``is_exact_path`` from the schemes' C module; built without
    that module, it hands every call to its reference, which keeps and finds
    the scopes itself."""
    program = """
import sys
sys.modules["keyspace.schemes._layouts_accel"] = None  # as if it had not been built
import keyspace
from keyspace.keyspace import Transaction
assert type(Transaction.__dict__["scope"]).__name__ == "PathMemo"
with keyspace.open(sys.argv[1]) as ks, ks.snapshot() as snap:
    first = snap.scope("t", "users")
    assert snap.scope("t", "users") is first and snap._bound[("t", "users")] is first
print("ok")
"""
    out = subprocess.run(
        [sys.executable, "-c", program, f"lmdb://{tmp_path}/db"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
