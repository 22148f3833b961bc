#!/usr/bin/env bash
# Everything `make test` runs: lint, types, the services the tests need, the
# benchmark harness once in quick mode (it must run; its ratios are not asserted
# here), then the tests: the files that use the shared etcd cluster one after
# another and, at the same time, the rest on both cores (pytest-xdist), whose
# summary is the last thing printed.
# Services are stopped by PID on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin

$BIN/ruff check .
$BIN/ruff format --check .

# The run's files (the tests' stores, the etcd cluster's data, the files below) are
# kept in memory when the machine has a tmpfs at /dev/shm with 4 GiB free: every
# commit of LMDB, SQLite, LevelDB, RocksDB and etcd syncs its files, and each sync
# waited for the disk (tests/scope/test_store_through_scope.py and two other store
# files: 99-112 s on the disk, 53-63 s in memory). A process a test kills leaves
# its writes in the page cache there as on a disk; no test cuts the power.
base=${TMPDIR:-/tmp}
shm_free=$(df --output=avail -k /dev/shm 2>/dev/null | tail -n 1 || true)
if [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null || true)" = tmpfs ] \
    && [ "${shm_free:-0}" -ge $((4 << 20)) ] 2>/dev/null; then
    base=/dev/shm
fi
out=$(mktemp -d "$base/keyspace-tests.XXXXXX")
mkdir "$out/tmp"
export TMPDIR="$out/tmp"
# Every Python process of the run (the test runs, and the commands and workers the
# tests start, hundreds of them) compiles a module once and reads its bytecode
# after that, from a directory of the run's own, removed at the end: an
# environment that writes no bytecode (PYTHONDONTWRITEBYTECODE) made each of them
# compile keyspace again, and each test run rewrite and compile every test file.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="$out/pycache"
bg_pids=()
etcd_run=""
slow_run=""
finish() {
    # a run still going (the script interrupted) is stopped by its PID
    local pid
    for pid in "${bg_pids[@]}" $etcd_run $slow_run; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    etcd_cluster_stop
    rm -rf "$out"
}
source scripts/etcd-test-cluster.sh
trap finish EXIT

# The type check and a collection of every test (which compiles the test files
# for the runs below) run beside the cluster's start and the benchmark harness;
# the type check's output is printed when it ends and stops the run if it fails.
$BIN/mypy >"$out/mypy.txt" 2>&1 &
mypy_run=$!
bg_pids+=("$mypy_run")
$BIN/python -m pytest --collect-only -q "$@" >"$out/collect.txt" 2>&1 &
bg_pids+=("$!")

etcd_cluster_start

# headless Chromium opens the page of `keyspace inspect --html` (tests/accounting);
# installed when missing and we are root, else those tests skip saying why
if ! command -v chromium >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    { timeout 300 apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq chromium; } \
        >/dev/null 2>&1 || echo "chromium could not be installed" >&2
fi

$BIN/python -m benchmarks --quick --no-write

types=0
wait "$mypy_run" || types=$?
cat "$out/mypy.txt"
if [ "$types" != 0 ]; then exit "$types"; fi
wait "${bg_pids[1]}" || true  # the collection's verdict is the runs' below
bg_pids=()

# First, alone on the machine, the tests marked `quiet` (they bound how long the
# scheduler may hold a process back), collected from their own files when no
# arguments narrow the run; their output is kept and printed at the end.
quiet_args=("$@")
if [ $# = 0 ]; then mapfile -t quiet_args < <(grep -rl --include='test_*.py' 'pytest.mark.quiet' tests); fi
quiet=0
$BIN/python -m pytest -m quiet -q "${quiet_args[@]}" >"$out/quiet.txt" 2>&1 || quiet=$?

# Then the other tests, in three runs at the same time: the files that use the
# shared etcd cluster, one test after another (some stop and restart members or clear the
# whole cluster, which no other test may see mid-call; they mostly wait on etcd);
# the tests marked slow, the fault and crash tests that start writer processes,
# kill them and check what they left, one after another (each holds its run for
# 5-60 s, waiting on its processes and for the moments it kills at; where the
# run's files are on a disk, their writers mostly wait for it); both in the background
# with their output kept in a file; and every other test on both cores
# (pytest-xdist), printed as it runs. When all have ended the background runs'
# output is printed, then the other run's summary again, so that summary is the
# last thing printed. The exit status is the worst of the runs (5, "no test
# selected", counts as success when a -k or a path selects none in a run); the
# quiet run's status counts too.
$BIN/python -m pytest -m "shared_etcd and not quiet" -q "$@" >"$out/etcd.txt" 2>&1 &
etcd_run=$!
$BIN/python -m pytest -m "slow and not shared_etcd and not quiet" -q "$@" >"$out/slow.txt" 2>&1 &
slow_run=$!
other=0
$BIN/python -m pytest -n 2 -m "not shared_etcd and not slow and not quiet" "$@" 2>&1 | tee "$out/other.txt" || other=$?
etcd=0
wait "$etcd_run" || etcd=$?
etcd_run=""
slow=0
wait "$slow_run" || slow=$?
slow_run=""
echo
echo "======== the tests marked quiet (run first, alone) ========"
cat "$out/quiet.txt"
echo
echo "======== the tests that use the shared etcd cluster (run beside the others) ========"
cat "$out/etcd.txt"
echo
echo "======== the tests marked slow, but not the etcd files' (run beside the others) ========"
cat "$out/slow.txt"
echo
echo "======== the other tests (their full output is above) ========"
# pytest's closing section: the short summary when there is one, else the last line
awk '/^=+ short test summary info =+$/ { buf = ""; keep = 1 } keep { buf = buf $0 "\n" } END { printf "%s", buf }' "$out/other.txt" >"$out/summary.txt"
if [ -s "$out/summary.txt" ]; then cat "$out/summary.txt"; else tail -n 1 "$out/other.txt"; fi
status=0
for s in "$quiet" "$etcd" "$slow" "$other"; do
    if [ "$s" != 5 ] && [ "$s" -gt "$status" ]; then status=$s; fi
done
exit "$status"
