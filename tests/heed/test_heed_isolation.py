"""scoped-heed scopes keep apart on every read and removal, across the databases of
one environment.

Two scoped databases (``users`` and ``cache``, raw_bytes) of one LMDB environment;
the target is the named scope ``a`` of ``users`` or its default scope, among
neighbours: the other of the two, the named scopes ``ab`` and ``b``, and scope ``a``
and the default scope of ``cache`` (same hash, another database). Hypothesis fills
them, then reads the target with drawn range arguments and point reads of the
neighbours' keys, and applies one removal (``clear_range``, ``pop``, ``popitem``,
``discard``), each answer against a model of the target's keys alone, in the
format's order (named scopes: ``u64le(len key) key``; the default scope: the key).
"""

from __future__ import annotations

import shutil
import tempfile
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_scan_isolation import KEYS, Case, _expected, _len_first, _raw_order, apply_removal, ranges

from keyspace import scoped_heed
from keyspace.errors import InvalidName

NEIGHBOURS = [
    ("users", ()),
    ("users", ("a",)),
    ("users", ("ab",)),
    ("users", ("b",)),
    ("cache", ("a",)),
    ("cache", ()),
]


@pytest.mark.parametrize("target", [("users", ("a",)), ("users", ())], ids=["named", "default"])
def test_a_scoped_heed_scope_reads_and_removes_only_its_own_keys(target: tuple[str, tuple[str, ...]]) -> None:
    others = [n for n in NEIGHBOURS if n != target]
    case = Case("scoped-heed", lambda: None, target[1], (), order=_len_first if target[1] else _raw_order)  # type: ignore[arg-type,return-value]

    @settings(max_examples=15)
    @given(
        data=st.lists(st.tuples(st.integers(0, len(others)), KEYS), max_size=20),
        reads=st.lists(ranges, min_size=1, max_size=3),
        removal=st.one_of(
            st.tuples(st.just("clear_range"), ranges),
            st.tuples(st.sampled_from(["pop", "discard"]), KEYS),
            st.tuples(st.just("popitem"), st.none()),
        ),
    )
    def check(data: list[tuple[int, bytes]], reads: list[dict[str, Any]], removal: tuple[str, Any]) -> None:
        where = tempfile.mkdtemp()
        dbs = {name: scoped_heed.open(where, name) for name in ("users", "cache")}
        try:
            places = [target, *others]
            models: dict[Any, dict[bytes, bytes]] = {p: {} for p in places}
            for n, (i, key) in enumerate(data):
                db, path = places[i]
                if not path and not key:  # a default scope's key is the LMDB key: never empty
                    with pytest.raises(InvalidName, match="empty key"):
                        dbs[db].scope(*path)[key] = b"v%d" % n
                    continue
                dbs[db].scope(*path)[key] = b"v%d" % n
                models[places[i]][key] = b"v%d" % n
            scope = dbs[target[0]].scope(*target[1])
            own = models[target]
            for key in {k for p in others for k in models[p]} - set(own):
                if not target[1] and not key:  # no key of the default scope: refused by name
                    with pytest.raises(InvalidName, match="empty key"):
                        scope.get(key)
                    continue
                assert scope.get(key) is None and key not in scope
            assert len(scope) == len(own)
            for args in reads:
                args = dict(args)
                start, stop, prefix = args.pop("start"), args.pop("stop"), args.pop("prefix")
                if prefix is not None:
                    got = list(scope.items(prefix=prefix, **args))
                    want = _expected(case, own, None, None, {**args, "prefix": prefix})
                else:
                    got = list(scope.items(start, stop, **args))
                    want = _expected(case, own, start, stop, {**args, "prefix": None})
                assert got == want, (start, stop, prefix, args)
            removed = apply_removal(
                case, scope, own, removal, lambda bound: False, lambda key: not target[1] and not key
            )
            for key in removed:
                del own[key]
            assert dict(scope.items()) == own
            for db, path in others:
                assert dict(dbs[db].scope(*path).items()) == models[(db, path)], (db, path)
        finally:
            for ks in dbs.values():
                ks.close()
            shutil.rmtree(where, ignore_errors=True)

    check()
