#!/usr/bin/env bash
# `make bench`: the benchmark harness. The etcd workloads start a 3-member etcd
# cluster of their own while they run (and stop it by PID), so no other workload
# shares the machine with its heartbeats; etcd is installed first when missing
# and we are root, as in the test run.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/etcd-test-cluster.sh
etcd_ensure_installed || true  # the etcd workloads then say why they did not run
.venv/bin/python -m benchmarks "$@"
