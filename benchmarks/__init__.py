"""Speed as a measured property of keyspace.

``python -m benchmarks [--quick] [--no-write] [--only NAME]`` runs every registered
workload against its hand-written competitors in one process and reports ratios
(keyspace / hand-written raw code that stores the same bytes). See ``_harness`` for
how timing is done and ``results.md`` for the latest full run.
"""
