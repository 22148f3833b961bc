"""Every read of a closed keyspace raises StoreClosed, also where the layout alone
would answer it."""

from __future__ import annotations

from typing import Any

import pytest

import keyspace
from keyspace.errors import StoreClosed
from keyspace.schemes import LengthPrefixed, Naive, Scheme, ScopeHash, TupleScheme


@pytest.mark.parametrize(
    ("scheme", "options"),
    [
        (ScopeHash(), {}),
        (LengthPrefixed(), {"leaf_depth": 1}),
        (LengthPrefixed(), {}),
        (Naive(allow_collisions=True), {}),
        (TupleScheme(), {}),
    ],
    ids=lambda v: getattr(v, "name", str(v)),
)
@pytest.mark.parametrize("engine", ["memory", "lmdb", "leveldb"])
def test_scopes_of_a_closed_store_raise(
    scheme: Scheme, options: dict[str, Any], engine: str, tmp_path: Any
) -> None:
    """``scopes()`` of a scope with no children by its layout (a ScopeHash name, a
    LengthPrefixed leaf, a Naive scope) reads the store all the same: [] while it is
    open, StoreClosed once it is closed, as every other read."""
    url = "memory:" if engine == "memory" else f"{engine}://{tmp_path}/db"
    ks = keyspace.open(url, scheme=scheme, **options)
    scope = ks.scope("a")
    scope[b"k"] = b"v"
    assert scope.scopes() == []
    ks.close()
    with pytest.raises(StoreClosed):
        scope.scopes()
    with pytest.raises(StoreClosed):
        scope.get(b"k")
