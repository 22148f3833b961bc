"""Collections on a scheme whose stored order is not key order (ScopeHash stores a
key's length first) give the same answers, in the same order, as on a scheme that
keeps key order (LengthPrefixed), for every range a collection takes: whole maps,
prefixes of composite keys, start/stop with either end in or out, reverse, limit,
index prefixes, and ``clear``; a sibling namespace and a child scope keep their
keys."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import keyspace
from keyspace.collections import IndexedMap, Map, MultiIndex
from keyspace.schemes import LengthPrefixed, ScopeHash

_WHO = st.text(alphabet="abz", max_size=4)
_KEYS = st.tuples(_WHO, st.integers(min_value=0, max_value=300))
_BOUND = st.none() | st.integers(min_value=0, max_value=300)
_RANGE = st.fixed_dictionaries(
    {
        "start": _BOUND,
        "stop": _BOUND,
        "include_start": st.booleans(),
        "include_stop": st.booleans(),
        "reverse": st.booleans(),
        "limit": st.none() | st.integers(min_value=0, max_value=5),
    }
)


@given(
    saves=st.lists(st.tuples(_KEYS, st.integers()), max_size=25),
    removes=st.lists(_KEYS, max_size=5),
    who=_WHO,
    ranges=st.lists(_RANGE, min_size=1, max_size=4),
    clear=st.booleans(),
)
def test_a_map_answers_every_range_as_on_a_scheme_in_key_order(
    saves: list[tuple[tuple[str, int], int]],
    removes: list[tuple[str, int]],
    who: str,
    ranges: list[dict[str, Any]],
    clear: bool,
) -> None:
    model = dict(saves)
    for key in removes:
        model.pop(key, None)
    answers = []
    for scheme in (LengthPrefixed(), ScopeHash()):
        ks = keyspace.open("memory:", scheme=scheme)
        scores = Map(ks.scope("app"), "scores", key=("str", "u32"))
        other = Map(ks.scope("app"), "scoresx", key="str")  # a namespace the first one's bytes start
        other.save("kept", 1)
        for key, value in saves:
            scores.save(key, value)
        for key in removes:
            scores.remove(key)
        whole = list(scores.items())
        assert dict(whole) == model
        seen: list[Any] = [whole, list(scores.items(reverse=True))]
        seen += [list(scores.prefix(who).items(**bounds)) for bounds in ranges]
        seen += [
            list(
                scores.items(
                    start=(who, 0), **{k: v for k, v in ranges[0].items() if k != "start" and k != "stop"}
                )
            )
        ]
        if clear:
            scores.clear()
            seen.append(list(scores.items()))
        assert list(other.items()) == [("kept", 1)]
        answers.append(seen)
    assert answers[0] == answers[1]


@given(
    people=st.dictionaries(st.text(alphabet="xyz", min_size=1, max_size=5), _WHO, max_size=15),
    team=_WHO,
    bounds=_RANGE,
)
def test_an_index_prefix_answers_as_on_a_scheme_in_key_order(
    people: dict[str, str], team: str, bounds: dict[str, Any]
) -> None:
    answers = []
    for scheme in (LengthPrefixed(), ScopeHash()):
        ks = keyspace.open("memory:", scheme=scheme)
        users = IndexedMap(
            ks.scope("app"),
            "users",
            key="str",
            indexes={"team": MultiIndex(lambda u: u["team"], "users__team", key="str")},
        )
        for name, their_team in people.items():
            users.save(name, {"team": their_team})
        text = {k: v for k, v in bounds.items() if k in ("reverse", "limit")}
        found = list(users.index("team").prefix(team).items(**text))
        if text["limit"] is None:
            assert sorted(k for k, _ in found) == sorted(name for name, t in people.items() if t == team)
        answers.append((found, list(users.items(reverse=bounds["reverse"], limit=bounds["limit"]))))
    assert answers[0] == answers[1]
