#!/usr/bin/env bash
# Everything `make test` runs: lint, types, the services the tests need, the
# benchmark harness once in quick mode (it must run; its ratios are not asserted
# here), then the tests: the files that use the shared etcd cluster one after
# another, then the rest on both cores (pytest-xdist), whose summary is the last
# thing printed.
# Services are stopped by PID on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin

$BIN/ruff check .
$BIN/ruff format --check .
$BIN/mypy

source scripts/etcd-test-cluster.sh
trap etcd_cluster_stop EXIT
etcd_cluster_start

# headless Chromium opens the page of `keyspace inspect --html` (tests/accounting);
# installed when missing and we are root, else those tests skip saying why
if ! command -v chromium >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    { timeout 300 apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq chromium; } \
        >/dev/null 2>&1 || echo "chromium could not be installed" >&2
fi

$BIN/python -m benchmarks --quick --no-write
# The files that use the shared etcd cluster first, one test after another; then
# every other test on both cores; the exit status is the worse of the two runs.
status=0
$BIN/python -m pytest -m shared_etcd -q "$@" || status=$?
if [ "$status" = 5 ]; then status=0; fi  # none selected (a -k or a path given)
$BIN/python -m pytest -n 2 -m "not shared_etcd" "$@" || { s=$?; [ "$s" = 5 ] && [ "$status" = 0 ] || status=$s; }
exit "$status"
