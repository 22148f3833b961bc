# Sourced by run-tests.sh: etcd_cluster_start / etcd_cluster_stop (and by run-bench.sh:
# etcd_ensure_installed).
#
# etcd_cluster_start starts a 3-member etcd cluster on 127.0.0.1 for the test run:
# clients on ports 23791-23793, peers on 23801-23803 (override with
# KEYSPACE_ETCD_CLIENT_BASE / KEYSPACE_ETCD_PEER_BASE), data dirs under a fresh
# temporary directory. It waits (at most KEYSPACE_ETCD_WAIT_S, default 30 s) until
# every member reports healthy, then exports
#   KEYSPACE_ETCD_ENDPOINTS  127.0.0.1:23791,127.0.0.1:23792,127.0.0.1:23793
#   KEYSPACE_ETCD_PIDS       the members' PIDs, in endpoint order
#   KEYSPACE_ETCD_DIR        the cluster directory: mN/etcd.pid, mN/args (the member's
#                            command line, one argument a line, so a test can restart
#                            a member it killed), mN/etcd.log, mN/data
# If etcd is missing it is installed with apt-get when we are root (bounded); if it
# cannot be had, KEYSPACE_ETCD_UNAVAILABLE="<reason>" is exported and the etcd tests
# skip with that reason. If etcd is there but the cluster fails to start,
# KEYSPACE_ETCD_ERROR="<reason>" is exported and the etcd tests fail with it.
#
# etcd_cluster_stop stops the members one at a time by PID (SIGTERM, at most 5 s,
# then SIGKILL) and deletes the cluster directory. Idempotent.

_ks_etcd_log() { echo "etcd-test-cluster: $*" >&2; }

_ks_etcd_install() {
  # Installs etcd with apt-get when we are root; returns non-zero with a reason on stdout.
  if [ "$(id -u)" != 0 ]; then
    echo "etcd is not installed and installing it needs root (apt-get install etcd-server etcd-client)"
    return 1
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "etcd is not installed and apt-get is not available to install it"
    return 1
  fi
  _ks_etcd_log "installing etcd-server and etcd-client with apt-get"
  local log
  log=$(mktemp)
  if ! { timeout 300 apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 300 \
      apt-get install -y -qq etcd-server etcd-client; } >"$log" 2>&1; then
    tail -5 "$log" >&2
    rm -f "$log"
    echo "apt-get install etcd-server etcd-client failed"
    return 1
  fi
  rm -f "$log"
  # On a systemd host the package starts its own service on the default ports; ours
  # use other ports, so it is left alone.
  if ! command -v etcd >/dev/null 2>&1; then
    echo "apt-get installed etcd-server but no etcd binary is on PATH"
    return 1
  fi
  return 0
}

_ks_etcd_alive() {
  # Running, and not a zombie waiting to be reaped.
  kill -0 "$1" 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

_ks_etcd_port_busy() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

_ks_etcd_healthy() {
  # All members answer /health with "health":"true" (bounded: 1 s per member).
  local n port
  for n in 1 2 3; do
    port=$((KS_ETCD_CB + n))
    if command -v curl >/dev/null 2>&1; then
      curl -sf --max-time 1 "http://127.0.0.1:$port/health" 2>/dev/null | grep -q '"health":"true"' || return 1
    else
      ETCDCTL_API=3 etcdctl --endpoints="127.0.0.1:$port" --dial-timeout=1s --command-timeout=1s \
        endpoint health >/dev/null 2>&1 || return 1
    fi
  done
}

etcd_ensure_installed() {
  # etcd on PATH, installed when missing (see _ks_etcd_install); if it cannot be had,
  # exports KEYSPACE_ETCD_UNAVAILABLE with the reason and returns non-zero.
  local reason
  command -v etcd >/dev/null 2>&1 && return 0
  if ! reason=$(_ks_etcd_install); then
    export KEYSPACE_ETCD_UNAVAILABLE="$reason"
    _ks_etcd_log "$reason; what needs etcd (its tests, its benchmarks) will be skipped"
    return 1
  fi
}

etcd_cluster_start() {
  unset KEYSPACE_ETCD_UNAVAILABLE KEYSPACE_ETCD_ERROR
  KS_ETCD_CB=${KEYSPACE_ETCD_CLIENT_BASE:-23790}
  KS_ETCD_PB=${KEYSPACE_ETCD_PEER_BASE:-23800}
  local wait_s=${KEYSPACE_ETCD_WAIT_S:-30} n port

  etcd_ensure_installed || return 0

  for port in $((KS_ETCD_CB + 1)) $((KS_ETCD_CB + 2)) $((KS_ETCD_CB + 3)) \
              $((KS_ETCD_PB + 1)) $((KS_ETCD_PB + 2)) $((KS_ETCD_PB + 3)); do
    if _ks_etcd_port_busy "$port"; then
      export KEYSPACE_ETCD_ERROR="port 127.0.0.1:$port is already in use; stop whatever holds it"
      _ks_etcd_log "$KEYSPACE_ETCD_ERROR"
      return 0
    fi
  done

  KS_ETCD_DIR=$(mktemp -d "${TMPDIR:-/tmp}/keyspace-etcd.XXXXXX")
  local initial="m1=http://127.0.0.1:$((KS_ETCD_PB + 1)),m2=http://127.0.0.1:$((KS_ETCD_PB + 2)),m3=http://127.0.0.1:$((KS_ETCD_PB + 3))"
  local endpoints="" pids="" started=$SECONDS
  for n in 1 2 3; do
    mkdir -p "$KS_ETCD_DIR/m$n"
    printf '%s\n' etcd --name "m$n" --data-dir "$KS_ETCD_DIR/m$n/data" \
      --listen-client-urls "http://127.0.0.1:$((KS_ETCD_CB + n))" \
      --advertise-client-urls "http://127.0.0.1:$((KS_ETCD_CB + n))" \
      --listen-peer-urls "http://127.0.0.1:$((KS_ETCD_PB + n))" \
      --initial-advertise-peer-urls "http://127.0.0.1:$((KS_ETCD_PB + n))" \
      --initial-cluster "$initial" --initial-cluster-state new \
      --initial-cluster-token "keyspace-test-$$" \
      --heartbeat-interval 50 --election-timeout 500 \
      --logger zap --log-outputs stderr >"$KS_ETCD_DIR/m$n/args"
    mapfile -t _ks_args <"$KS_ETCD_DIR/m$n/args"
    "${_ks_args[@]}" >"$KS_ETCD_DIR/m$n/etcd.log" 2>&1 &
    echo $! >"$KS_ETCD_DIR/m$n/etcd.pid"
    disown "$!" 2>/dev/null || true  # no job notice when the fault test kills a member
    endpoints="${endpoints:+$endpoints,}127.0.0.1:$((KS_ETCD_CB + n))"
    pids="${pids:+$pids,}$!"
  done
  export KEYSPACE_ETCD_DIR="$KS_ETCD_DIR"

  local deadline=$((SECONDS + wait_s))
  until _ks_etcd_healthy; do
    for n in 1 2 3; do
      if ! _ks_etcd_alive "$(cat "$KS_ETCD_DIR/m$n/etcd.pid")"; then
        tail -5 "$KS_ETCD_DIR/m$n/etcd.log" >&2
        export KEYSPACE_ETCD_ERROR="etcd member m$n exited during start-up (see its log above)"
        _ks_etcd_log "$KEYSPACE_ETCD_ERROR"
        etcd_cluster_stop
        return 0
      fi
    done
    if [ "$SECONDS" -ge "$deadline" ]; then
      tail -3 "$KS_ETCD_DIR"/m*/etcd.log >&2
      export KEYSPACE_ETCD_ERROR="etcd cluster not healthy after ${wait_s} s"
      _ks_etcd_log "$KEYSPACE_ETCD_ERROR"
      etcd_cluster_stop
      return 0
    fi
    sleep 0.2
  done
  export KEYSPACE_ETCD_ENDPOINTS="$endpoints"
  export KEYSPACE_ETCD_PIDS="$pids"
  _ks_etcd_log "3 members healthy in $((SECONDS - started)) s at $endpoints (pids $pids)"
}

etcd_cluster_stop() {
  local dir=${KS_ETCD_DIR:-} f pid i
  [ -n "$dir" ] && [ -d "$dir" ] || return 0
  for f in "$dir"/m*/etcd.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    if kill "$pid" 2>/dev/null; then
      for i in $(seq 1 50); do _ks_etcd_alive "$pid" || break; sleep 0.1; done
      if _ks_etcd_alive "$pid"; then kill -9 "$pid" 2>/dev/null || true; fi
      wait "$pid" 2>/dev/null || true
    fi
    rm -f "$f"
  done
  rm -rf "$dir"
  KS_ETCD_DIR=""
  unset KEYSPACE_ETCD_ENDPOINTS KEYSPACE_ETCD_PIDS KEYSPACE_ETCD_DIR
}
