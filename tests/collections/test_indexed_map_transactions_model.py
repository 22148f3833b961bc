"""An IndexedMap with a unique and a multi index, driven by random saves,
updates, removes and clears (alone, in a committed transaction, or in one that
is rolled back, with a plain Map sharing the transaction), answers as a dict
model does: the records, each index's entries in index order, and
UniqueViolation exactly where another record holds the unique key, with nothing
written. Composite keys carry separator bytes and empty parts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import keyspace
from keyspace.collections import IndexedMap, Map, MultiIndex, UniqueIndex
from keyspace.errors import UniqueViolation
from keyspace.schemes import AsciiHex, Delimited, LengthPrefixed, ScopeHash, Sublevel, TupleScheme

SCHEMES = [TupleScheme(), LengthPrefixed(), AsciiHex(), Sublevel(), Delimited(":"), ScopeHash()]
PART = st.sampled_from(["", "a", "ab", "a\x00", ":", "!", "\x00\x01a", "\xff"])
KEY = st.tuples(PART, st.integers(0, 3))
VALUE = st.fixed_dictionaries({"u": st.integers(0, 4), "team": PART})
MODE = st.sampled_from(["alone", "commit", "rollback"])
OP = st.one_of(
    st.tuples(st.just("save"), KEY, VALUE),
    st.tuples(st.just("update"), KEY, VALUE),
    st.tuples(st.just("remove"), KEY, st.none()),
    st.tuples(st.just("clear"), st.none(), st.none()),
)


def _apply(op: tuple[str, Any, Any], users: IndexedMap, model: dict[Any, Any]) -> None:
    kind, key, value = op
    holder = {v["u"]: k for k, v in model.items()}
    if kind in ("save", "update"):
        if value["u"] in holder and holder[value["u"]] != key:
            with pytest.raises(UniqueViolation):
                if kind == "save":
                    users.save(key, value)
                else:
                    users.update(key, lambda _: value)
            return
        if kind == "save":
            users.save(key, value)
        else:
            users.update(key, lambda _: value)
        model[key] = value
    elif kind == "remove":
        users.remove(key)
        model.pop(key, None)
    else:
        users.clear()
        model.clear()


def _lead(text: str, cosmwasm: bool) -> Any:
    """The sort key of a str element that is not a key's last: under the
    CosmWasm layout it is stored length-prefixed, so it sorts by length first."""
    raw = text.encode()
    return (len(raw), raw) if cosmwasm else raw


def _check(users: IndexedMap, model: dict[Any, Any]) -> None:
    cw = users.layout.name == "cosmwasm"

    def pk(k: tuple[str, int]) -> Any:
        return (_lead(k[0], cw), k[1])

    assert list(users.items()) == sorted(model.items(), key=lambda kv: pk(kv[0]))
    assert list(users.index("u").items()) == sorted(model.items(), key=lambda kv: kv[1]["u"])
    by_team = sorted(model.items(), key=lambda kv: (_lead(kv[1]["team"], cw), pk(kv[0])))
    assert list(users.index("team").items()) == by_team
    for team in {v["team"] for v in model.values()}:
        want = sorted((k for k, v in model.items() if v["team"] == team), key=pk)
        assert list(users.index("team").prefix(team).keys()) == want


@pytest.mark.parametrize("store", ["memory", "lmdb"])
@pytest.mark.parametrize("scheme", SCHEMES, ids=repr)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    batches=st.lists(
        st.tuples(st.sampled_from(["alone", "commit", "rollback"]), st.lists(OP, max_size=6)), max_size=6
    )
)
def test_indexed_map_matches_a_model(
    tmp_path: Path, store: str, scheme: Any, batches: list[tuple[str, list[Any]]]
) -> None:
    url = "memory:" if store == "memory" else f"lmdb://{tmp_path}/db{abs(hash(repr(batches)))}"
    with keyspace.open(url, scheme=scheme) as ks:
        app = ks.scope("app")
        users = IndexedMap(
            app,
            "users",
            key=("str", "u8"),
            indexes={
                "u": UniqueIndex(lambda v: v["u"], "users_u", key="u8"),
                "team": MultiIndex(lambda v: v["team"], "users_t", key="str"),
            },
        )
        side = Map(app, "users_", key="str")  # a neighbour sharing the transactions
        model: dict[Any, Any] = {}
        count = 0
        for mode, ops in batches:
            if mode == "alone":
                for op in ops:
                    _apply(op, users, model)
                continue
            trial = dict(model)
            try:
                with ks.transaction() as tx:
                    bound = users.using(tx)
                    for op in ops:
                        _apply(op, bound, trial)
                    side.using(tx).save(str(count), count)
                    _check(bound, trial)
                    if mode == "rollback":
                        raise LookupError("roll back")
            except LookupError:
                pass
            else:
                model = trial
                count += 1
            _check(users, model)
        _check(users, model)
        assert list(side.keys()) == sorted(str(i) for i in range(count))
