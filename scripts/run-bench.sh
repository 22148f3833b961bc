#!/usr/bin/env bash
# `make bench`: the benchmark harness, with the etcd test cluster running for the
# etcd workload (started and stopped by PID, as in the test run).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/etcd-test-cluster.sh
trap etcd_cluster_stop EXIT
etcd_cluster_start
.venv/bin/python -m benchmarks "$@"
