"""The CLI's key reader takes the keyspace's reserved record ranges from the one
place that defines them: a record key inside a scope's range is reported as a
record, never as data, whether keys are read one by one or counted in runs."""

from __future__ import annotations

import pytest

import keyspace
from keyspace._metadata import reserved_ranges
from keyspace.cli._walk import Entry, KeyReader, Run, Skipped, tally, walk
from keyspace.schemes import LengthPrefixed, Naive, Scheme, Sublevel, TupleScheme

RECORDS = [b"\xffkeyspace\x00footprint", b"ks\xff"]  # a footprint-registry entry, a scheme record


@pytest.mark.parametrize("scheme", [Sublevel(), Naive(), LengthPrefixed()], ids=lambda s: s.name)
def test_every_reserved_range_reads_as_a_record(scheme: Scheme) -> None:
    reader = KeyReader(scheme, 0)
    ranges = reserved_ranges(scheme)
    assert ranges
    for lo, _ in ranges:
        assert reader.read(lo, b"") is None  # RESERVED
        assert reader.read(lo + b"\x00x", b"") is None or not lo.startswith(b"\xffkeyspace")


@pytest.mark.parametrize("scheme", [Sublevel(), Sublevel("#")], ids=lambda s: s.separator)
def test_records_inside_a_root_are_not_counted_as_its_keys(scheme: Scheme) -> None:
    ks = keyspace.open("memory:", scheme=scheme)
    data = {bytes([b, c]): b"v" for b in range(0x61, 0x7B) for c in range(0x61, 0x7B)}  # 676 root keys
    data.update({b"\xff" + bytes([c]) * 3: b"v" for c in range(0x61, 0x7B)})  # around the records
    ks.scope().update(data)
    for key in RECORDS:
        ks.store.put(key, b"record")  # as another keyspace sharing the store writes them
    reader = KeyReader(scheme, 0, ks.store)
    singles = list(walk(ks.store, reader))
    assert sorted(e.stored for e in singles if isinstance(e, Entry)) == sorted(data)
    assert {s.stored for s in singles if isinstance(s, Skipped) and s.reason is None} >= set(RECORDS)
    counted = list(tally(ks.store, reader, ks._space.layouts.get))
    in_runs = sum(r.keys for r in counted if isinstance(r, Run))
    assert in_runs == len(data)
    assert {s.stored for s in counted if isinstance(s, Skipped)} == {
        s.stored for s in singles if isinstance(s, Skipped)
    }


def test_a_tuple_keyspace_reads_exactly_as_before() -> None:
    ks = keyspace.open("memory:", scheme=TupleScheme())
    ks.scope("a").update({b"k%d" % i: b"v" for i in range(40)})
    reader = KeyReader(ks.scheme, None, ks.store)
    items = list(walk(ks.store, reader))
    assert sum(isinstance(e, Entry) for e in items) == 40
    assert all(s.reason is None for s in items if isinstance(s, Skipped))
