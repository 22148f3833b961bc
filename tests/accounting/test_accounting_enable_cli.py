"""Turning accounting on for an existing store (``keyspace accounting enable``,
resumable), checking it (``accounting check``), quotas from the command line,
``inspect`` reading the kept counts, and the refusals: a scheme that cannot tell
a key's scope, and ``accounting=True`` on a store whose keys no counter counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import run

import keyspace
from keyspace._accounting import accounting_of, enable, enabled, progress_key
from keyspace.cli.inspect_cmd import counted_tree, kept_tree
from keyspace.errors import AccountingUnavailable


def _fill(url: str, **options: object) -> None:
    ks = keyspace.open(url, **options)  # type: ignore[arg-type]
    for t in range(3):
        for u in range(3):
            ks.scope(f"t{t}", f"u{u}").update({b"k%d" % i: b"v" * i for i in range(30 * (t + 1))})
    ks.scope()[b"top"] = b"x"
    ks.close()


def test_enable_resumes_where_it_stopped_and_counts_exactly(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path}/db"
    _fill(url)
    ks = keyspace.open(url)
    store, scheme = ks.store, ks.scheme
    assert not enable(store, scheme, chunk=50, max_chunks=3)  # interrupted after three transactions
    assert store.get(progress_key(scheme)) is not None and not enabled(store, scheme)
    assert enable(store, scheme, chunk=50)
    assert store.get(progress_key(scheme)) is None and enabled(store, scheme)
    ks.close()
    ks = keyspace.open(url)  # accounting is recorded: kept without asking
    counts = accounting_of(ks.store)
    assert counts is not None
    with ks.store.snapshot() as view:
        assert counts.differences(view) == []
    assert ks.stats().subtree_keys == 3 * (30 + 60 + 90) + 1
    assert len(ks.scope("t2", "u1")) == 90
    ks.scope("t0", "u0")[b"new"] = b"1"
    assert len(ks.scope("t0", "u0")) == 31
    ks.close()


def test_accounting_cli_enable_check_quota_and_inspect(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path}/db"
    _fill(url)
    refused = run("accounting", "check", url, ok=False)
    assert refused.returncode == 1 and "keeps no counts" in refused.stderr
    done = run("accounting", "enable", url, "--chunk", "100")
    assert "541 keys counted" in done.stdout
    assert "on already" in run("accounting", "enable", url).stdout
    assert "counts match the recount: 541 keys" in run("accounting", "check", url).stdout
    run("quota", url, "t1", "--keys", "181", "--bytes", "10kB")
    listed = run("quota", url).stdout
    assert "t1" in listed and "180 / 181" in listed and "10.0 kB" in listed
    run("put", url, "t1", "u0", "--key", "one-more", "--value", "v")
    past = run("put", url, "t1", "u1", "--key", "two-more", "--value", "v", ok=False)
    assert past.returncode == 1 and "QuotaExceeded" not in past.stderr and "quota of 181 keys" in past.stderr
    run("quota", url, "t1", "--keys", "none")
    run("put", url, "t1", "u1", "--key", "two-more", "--value", "v")
    assert "counts match the recount: 543 keys" in run("accounting", "check", url).stdout
    # inspect reads the kept counts, which equal the scan's
    kept = json.loads(run("inspect", url, "--json").stdout)
    ks = keyspace.open(url)
    tree = kept_tree(ks)
    assert tree is not None
    scanned, _, _ = counted_tree(ks)
    assert tree.to_json(typed=True) == scanned.to_json(typed=True) == kept
    ks.close()


def test_check_reports_counts_that_differ(tmp_path: Path) -> None:
    url = f"lmdb://{tmp_path}/db"
    _fill(url, accounting=True)
    ks = keyspace.open(url)
    inner = ks.store.inner  # type: ignore[attr-defined]
    inner.put(ks.scheme.encode(("t0", "u0"), b"behind its back"), b"x")  # a write that bypasses the counters
    ks.close()
    found = run("accounting", "check", url, ok=False)
    assert found.returncode == 1
    assert "t0 / u0: kept keys=30" in found.stdout and "counted keys=31" in found.stdout
    assert "3 scopes' counts differ" in found.stderr  # the scope, its parent and the root


@pytest.mark.parametrize("scheme", ["length-prefixed", "scopehash", "naive"])
def test_schemes_that_cannot_tell_a_scope_refuse_accounting(scheme: str) -> None:
    with pytest.raises(AccountingUnavailable, match="tells which scope"):
        keyspace.open("memory:", scheme=scheme, accounting=True)


def test_accounting_true_on_uncounted_keys_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/db.sqlite"
    _fill(url)
    with pytest.raises(AccountingUnavailable, match="accounting enable"):
        keyspace.open(url, accounting=True)
    ks = keyspace.open(url)
    assert ks.scope("t0", "u0")[b"k1"] == b"v"  # nothing changed
    with pytest.raises(AccountingUnavailable):
        ks.stats()
    ks.close()


def test_enable_reports_the_keys_it_counted_not_the_reserved_ones(tmp_path: Path) -> None:
    """A Sublevel root's byte range holds the keyspace's reserved keys too (the
    feature record, the change log's parts and counter): ``enable`` counts
    around them, and says how many keys it counted, the ones ``check`` finds."""
    url = f"lmdb://{tmp_path}/db"
    _fill(url, scheme="sublevel", changes=True)
    done = run("accounting", "enable", url, "--scheme", "sublevel")
    assert "accounting is on" in done.stdout and "541 keys counted" in done.stdout, done.stdout
    assert (
        "counts match the recount: 541 keys" in run("accounting", "check", url, "--scheme", "sublevel").stdout
    )


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("9223372036854775807", 9223372036854775807),  # the largest quota: exact, no float between
        ("9007199254740993", 9007199254740993),
        ("1.5kB", 1500),
        ("64MiB", 64 * 2**20),
    ],
)
def test_quota_sizes_from_the_command_are_exact(tmp_path: Path, given: str, stored: int) -> None:
    url = f"lmdb://{tmp_path}/db"
    _fill(url, accounting=True)
    run("quota", url, "t1", "--bytes", given)
    with keyspace.open(url) as ks:
        assert ks.quotas() == {("t1",): (None, stored)}


@pytest.mark.parametrize(
    ("option", "given", "words"),
    [
        ("--bytes", "0.0004kB", "no whole number of bytes"),
        ("--bytes", "1e3", "is no size"),
        ("--bytes", "١٢", "is no size"),  # digits of another script
        ("--keys", "²", "is no count of keys"),
        ("--keys", "1.5", "is no count of keys"),
    ],
)
def test_quota_refuses_what_is_no_size_or_count(tmp_path: Path, option: str, given: str, words: str) -> None:
    url = f"lmdb://{tmp_path}/db"
    _fill(url, accounting=True)
    refused = run("quota", url, "t1", option, given, ok=False)
    assert refused.returncode != 0 and words in refused.stderr and "Traceback" not in refused.stderr
    with keyspace.open(url) as ks:
        assert ks.quotas() == {}
