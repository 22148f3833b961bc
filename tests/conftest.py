"""Shared test configuration.

Two Hypothesis profiles, chosen with ``KEYSPACE_HYPOTHESIS``:

- ``keyspace`` (the default, what ``make test`` and CI run): every property test draws
  the same examples on every run, so a run's verdict depends on the code alone;
- ``explore`` (``make explore``): fresh random examples on every run (500 where a test
  does not set its own count), to search for cases the fixed ones miss. What it finds
  is kept as an ``@example`` on the test, or mended.
"""

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Timing varies a lot on shared CI machines; the guarantees are checked by examples,
# not by per-example deadlines.
_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}
settings.register_profile("keyspace", derandomize=True, **_COMMON)
settings.register_profile("explore", derandomize=False, max_examples=500, **_COMMON)
settings.load_profile(os.environ.get("KEYSPACE_HYPOTHESIS", "keyspace"))

# Tests sit in folders by subject; the shared helper modules (_cli, _etcd, ...) sit
# here, beside this file, and are imported by name from every folder, as are the
# test modules whose fixtures or cases another file reuses (file names are unique
# across the folders).
_HERE = Path(__file__).parent
for _folder in [_HERE, *sorted(p.parent for p in _HERE.glob("*/test_*.py"))]:
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))


_ETCD_FILES: dict[str, bool] = {}


def _uses_etcd(path: Path) -> bool:
    """A test file that talks to the etcd test cluster (by name or by its helpers)."""
    key = str(path)
    if key not in _ETCD_FILES:
        _ETCD_FILES[key] = "etcd" in path.read_text(encoding="utf-8").lower()
    return _ETCD_FILES[key]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "shared_etcd: the test's file uses the shared etcd cluster (set by tests/conftest.py)"
    )
    config.addinivalue_line(
        "markers",
        "quiet: the test bounds how long the scheduler may hold a process back; make test runs it"
        " before the other tests start, with none beside it",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of every file that uses the shared etcd cluster
    ``shared_etcd``: ``make test`` runs them one after another, apart from the
    others, which run on both cores (some stop and restart members, or clear the
    whole cluster, which no other test may see mid-call)."""
    for item in items:
        if _uses_etcd(Path(str(item.path))):
            item.add_marker(pytest.mark.shared_etcd)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """The expiring keys' clock, a :class:`_expiry_clock.Clock` standing still
    for the test (``keyspace._expiry.clock``), moved on by ``clock.now += s``."""
    from _expiry_clock import Clock

    from keyspace import _expiry

    fake = Clock()
    monkeypatch.setattr(_expiry, "clock", fake)
    yield fake
