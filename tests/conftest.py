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
from pathlib import Path

from hypothesis import HealthCheck, settings

# Timing varies a lot on shared CI machines; the guarantees are checked by examples,
# not by per-example deadlines.
_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}
settings.register_profile("keyspace", derandomize=True, **_COMMON)
settings.register_profile("explore", derandomize=False, max_examples=500, **_COMMON)
settings.load_profile(os.environ.get("KEYSPACE_HYPOTHESIS", "keyspace"))

# Tests sit in folders by subject; the shared helper modules (_cli, _etcd, ...) sit
# here, beside this file, and are imported by name from every folder.
_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
