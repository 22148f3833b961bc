"""Shared test configuration."""

from hypothesis import HealthCheck, settings

# Timing varies a lot on shared CI machines; the guarantees are checked by examples,
# not by per-example deadlines.
settings.register_profile(
    "keyspace",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("keyspace")
