"""A throwaway etcd cluster on 127.0.0.1 for tests: find it, start it, kill and
restart a member, stop it.

``scripts/etcd-test-cluster.sh`` (run by ``make test``) starts the cluster and exports
``KEYSPACE_ETCD_ENDPOINTS``, ``KEYSPACE_ETCD_PIDS`` and ``KEYSPACE_ETCD_DIR``;
:func:`shared_cluster` uses that cluster, or reports why there is none
(``KEYSPACE_ETCD_UNAVAILABLE`` / ``KEYSPACE_ETCD_ERROR``), or — when pytest runs on
its own and ``etcd`` is installed — starts a 3-member cluster on free loopback ports
itself and stops it when the process exits.

The cluster directory holds, per member ``mN``: ``etcd.pid``, ``args`` (the command
line, one argument a line), ``etcd.log`` and ``data/``. Every wait here is bounded.
"""

from __future__ import annotations

import atexit
import os
import random
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ClusterUnavailable", "LocalCluster", "ServerTLS", "shared_cluster", "start_cluster"]

START_TIMEOUT = 30.0


class ClusterUnavailable(RuntimeError):
    """No etcd cluster can be had here; ``reason`` says why. ``skip`` is true when the
    reason is that etcd is not installed and cannot be (tests may skip then), false
    when etcd is there but the cluster failed (tests must fail)."""

    def __init__(self, reason: str, *, skip: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.skip = skip


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, killed but not yet reaped, does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    return "\nState:\tZ" not in status


def _stopped(pid: int) -> bool:
    """Whether every thread of ``pid`` is stopped by a signal (Linux: ``T`` in the
    ``State`` of each ``/proc/PID/task/*/status``); ``True`` where ``/proc`` does
    not tell (the signal is then all there is to wait for)."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return True
    for task in tasks:
        try:
            status = (task / "status").read_text()
        except OSError:
            continue  # the thread ended
        if "\nState:\tT" not in status and "\nState:\tt" not in status:
            return False
    return True


def _wait_gone(pid: int, timeout: float) -> bool:
    child = _children.pop(pid, None)
    if child is not None:
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            _children[pid] = child
            return False
        return True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return not _alive(pid)


def _healthy(port: int, context: ssl.SSLContext | None = None) -> bool:
    scheme = "http" if context is None else "https"
    try:
        with urllib.request.urlopen(
            f"{scheme}://127.0.0.1:{port}/health", timeout=1, context=context
        ) as response:
            return b'"health":"true"' in response.read()
    except OSError:
        return False


_children: dict[int, subprocess.Popen[bytes]] = {}


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Linux: SIGKILL this process when its parent dies (a killed test run leaks no
    member)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _spawn(args: list[str], log: Path, *, attached: bool) -> int:
    """Start ``args`` with output appended to ``log``; return its PID.

    ``attached``: our child, killed by the kernel if this process dies (for clusters
    this process owns). Otherwise detached (a shell starts it and exits), so it
    outlives this process, as a member of a cluster the test script owns must."""
    if attached:
        with log.open("ab") as sink:
            child = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,
            )
        _children[child.pid] = child
        return child.pid
    script = '"$@" >>"$KS_LOG" 2>&1 </dev/null & echo $!'
    out = subprocess.run(
        ["sh", "-c", script, "sh", *args],
        env={**os.environ, "KS_LOG": str(log)},
        capture_output=True,
        text=True,
        timeout=10,
        check=True,
    )
    return int(out.stdout.strip())


@dataclass
class LocalCluster:
    """A loopback etcd cluster: ``endpoints`` (``host:port``), and its directory when
    known (needed to kill and restart members)."""

    endpoints: list[str]
    directory: Path | None = None
    owned: bool = False
    ssl_context: ssl.SSLContext | None = None
    """For a TLS cluster: how the health checks connect."""

    @property
    def url(self) -> str:
        return "etcd://" + ",".join(self.endpoints)

    def ports(self) -> list[int]:
        return [int(e.rsplit(":", 1)[1]) for e in self.endpoints]

    def pids(self) -> list[int]:
        """Member PIDs in endpoint order."""
        if self.directory is not None:
            return [int((self.directory / f"m{n}" / "etcd.pid").read_text()) for n in self._members()]
        text = os.environ.get("KEYSPACE_ETCD_PIDS", "")
        return [int(p) for p in text.split(",") if p]

    def _members(self) -> range:
        return range(1, len(self.endpoints) + 1)

    def wait_healthy(self, timeout: float = START_TIMEOUT) -> float:
        """Wait until every member's ``/health`` is true; return the seconds waited.
        Raises ``TimeoutError`` after ``timeout``."""
        started = time.monotonic()
        while not all(_healthy(p, self.ssl_context) for p in self.ports()):
            if time.monotonic() - started > timeout:
                raise TimeoutError(f"etcd cluster {self.endpoints} not healthy after {timeout} s")
            time.sleep(0.1)
        return time.monotonic() - started

    def kill(self, index: int, sig: int = signal.SIGKILL) -> int:
        """Send ``sig`` to member ``index`` (0-based) and wait (≤ 10 s) until it is
        gone. Returns its PID."""
        pid = self.pids()[index]
        os.kill(pid, sig)
        if not _wait_gone(pid, 10.0):
            raise TimeoutError(f"etcd member pid {pid} still running 10 s after signal {sig}")
        return pid

    def pause(self, timeout: float = 10.0) -> list[int]:
        """Stop every member (``SIGSTOP``) and wait (≤ ``timeout`` s) until each of
        their threads is stopped: a thread inside a system call (a ``fsync``, say)
        stops only when it returns, and no request sent after this returns is
        answered before :meth:`resume`. Returns the PIDs to resume; on a timeout
        the members are resumed and ``TimeoutError`` raised."""
        pids = self.pids()
        paused: list[int] = []
        try:
            for pid in pids:
                os.kill(pid, signal.SIGSTOP)
                paused.append(pid)
            deadline = time.monotonic() + timeout
            while not all(_stopped(pid) for pid in pids):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"etcd members {pids} not all stopped {timeout} s after SIGSTOP")
                time.sleep(0.005)
        except BaseException:
            self.resume(paused)
            raise
        return paused

    def resume(self, pids: list[int]) -> None:
        """Continue the members :meth:`pause` stopped (``SIGCONT``)."""
        for pid in pids:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                continue

    def restart(self, index: int) -> int:
        """Start member ``index`` (0-based) again with its recorded command line and
        data; returns the new PID (also written to its ``etcd.pid``)."""
        if self.directory is None:
            raise RuntimeError("the cluster directory is unknown (KEYSPACE_ETCD_DIR unset)")
        member = self.directory / f"m{index + 1}"
        args = (member / "args").read_text().splitlines()
        pid = _spawn(args, member / "etcd.log", attached=self.owned)
        (member / "etcd.pid").write_text(f"{pid}\n")
        return pid

    def stop(self) -> None:
        """Stop the members one at a time (SIGTERM, ≤ 5 s, then SIGKILL) and delete the
        directory. Only for a cluster this process started."""
        for pid in self.pids() if self.directory is not None else []:
            if not _alive(pid):
                continue
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            if not _wait_gone(pid, 5.0):
                os.kill(pid, signal.SIGKILL)
                _wait_gone(pid, 5.0)
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)


_EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
_LOWEST_PORT = 10_000


def _ephemeral_range() -> tuple[int, int] | None:
    """The ports the system hands to outgoing connections and to ``bind(0)``
    (Linux), or ``None`` where it does not say."""
    try:
        low, high = (int(part) for part in _EPHEMERAL.read_text().split())
    except (OSError, ValueError):
        return None
    return low, high


def _free_ports(count: int) -> list[int]:
    """``count`` distinct ports of 127.0.0.1 free now. Where the system names its
    ephemeral range, they are drawn below it: a port of that range that is free
    now may be taken by any outgoing connection before etcd binds it (the test
    run's own clients make many), which one outside it cannot. Each is checked
    by binding it; at most ``100 * count`` draws, then the system's choice."""
    sockets: list[socket.socket] = []
    span = _ephemeral_range()
    draws = random.Random()
    try:
        if span is not None and span[0] > _LOWEST_PORT + 4 * count:
            for _ in range(100 * count):
                if len(sockets) == count:
                    break
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                try:
                    s.bind(("127.0.0.1", draws.randrange(_LOWEST_PORT, span[0])))
                except OSError:
                    s.close()
                    continue
                sockets.append(s)
        while len(sockets) < count:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@dataclass(frozen=True)
class ServerTLS:
    """PEM files of a TLS cluster: the CA, the members' certificate and key, and
    whether members demand a client certificate signed by that CA."""

    ca: Path
    cert: Path
    key: Path
    client_cert_auth: bool = True

    def context(self, client_cert: Path | None = None, client_key: Path | None = None) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.ca))
        if client_cert is not None:
            context.load_cert_chain(str(client_cert), str(client_key) if client_key else None)
        return context


def _port_base(variable: str, members: int) -> list[int] | None:
    """``base+1 … base+members`` from the environment variable, if it is set."""
    text = os.environ.get(variable)
    return [int(text) + n for n in range(1, members + 1)] if text else None


def start_cluster(
    members: int = 3,
    *,
    timeout: float = START_TIMEOUT,
    tls: ServerTLS | None = None,
    health_context: ssl.SSLContext | None = None,
    extra_args: tuple[str, ...] = (),
    port_env: tuple[str, str] | None = None,
) -> LocalCluster:
    """Start ``members`` etcd members on loopback ports under a new temporary
    directory and wait (≤ ``timeout``) until all are healthy. The caller stops it.

    Ports are free ones, or ``base+1…`` of the two environment variables named by
    ``port_env`` (client base, peer base) when they are set. With ``tls`` the
    client URLs are HTTPS with those certificates (peers stay plain on loopback);
    ``health_context`` is how the health checks connect then. ``extra_args`` go to
    every member (e.g. ``--auth-token-ttl``)."""
    etcd = shutil.which("etcd")
    if etcd is None:
        raise ClusterUnavailable("etcd is not installed (apt-get install etcd-server etcd-client)", skip=True)
    ports = _free_ports(2 * members)
    clients, peers = ports[:members], ports[members:]
    if port_env is not None:
        clients = _port_base(port_env[0], members) or clients
        peers = _port_base(port_env[1], members) or peers
    client_scheme = "http" if tls is None else "https"
    tls_args: list[str] = []
    if tls is not None:
        tls_args = [
            "--cert-file",
            str(tls.cert),
            "--key-file",
            str(tls.key),
            "--trusted-ca-file",
            str(tls.ca),
        ]
        if tls.client_cert_auth:
            tls_args.append("--client-cert-auth")
    directory = Path(tempfile.mkdtemp(prefix="keyspace-etcd-"))
    initial = ",".join(f"m{n + 1}=http://127.0.0.1:{peers[n]}" for n in range(members))
    for n in range(members):
        member = directory / f"m{n + 1}"
        member.mkdir()
        args = [
            etcd,
            *("--name", f"m{n + 1}", "--data-dir", str(member / "data")),
            *("--listen-client-urls", f"{client_scheme}://127.0.0.1:{clients[n]}"),
            *("--advertise-client-urls", f"{client_scheme}://127.0.0.1:{clients[n]}"),
            *("--listen-peer-urls", f"http://127.0.0.1:{peers[n]}"),
            *("--initial-advertise-peer-urls", f"http://127.0.0.1:{peers[n]}"),
            *("--initial-cluster", initial, "--initial-cluster-state", "new"),
            *("--initial-cluster-token", f"keyspace-test-{os.getpid()}"),
            *("--heartbeat-interval", "50", "--election-timeout", "500"),
            *("--logger", "zap", "--log-outputs", "stderr"),
            *tls_args,
            *extra_args,
        ]
        (member / "args").write_text("\n".join(args) + "\n")
        pid = _spawn(args, member / "etcd.log", attached=True)
        (member / "etcd.pid").write_text(f"{pid}\n")
    cluster = LocalCluster(
        [f"127.0.0.1:{p}" for p in clients], directory, owned=True, ssl_context=health_context
    )
    try:
        cluster.wait_healthy(timeout)
    except BaseException:
        cluster.stop()
        raise
    return cluster


_shared: LocalCluster | ClusterUnavailable | None = None


def shared_cluster() -> LocalCluster:
    """The cluster the etcd tests use, found or started once per process.

    Raises :class:`ClusterUnavailable` with the reason when there is none.
    """
    global _shared
    if _shared is None:
        _shared = _find_or_start()
    if isinstance(_shared, ClusterUnavailable):
        raise _shared
    return _shared


def _find_or_start() -> LocalCluster | ClusterUnavailable:
    endpoints = os.environ.get("KEYSPACE_ETCD_ENDPOINTS")
    if endpoints:
        directory = os.environ.get("KEYSPACE_ETCD_DIR")
        return LocalCluster(endpoints.split(","), Path(directory) if directory else None)
    reason = os.environ.get("KEYSPACE_ETCD_UNAVAILABLE")
    if reason:
        return ClusterUnavailable(reason, skip=True)
    reason = os.environ.get("KEYSPACE_ETCD_ERROR")
    if reason:
        return ClusterUnavailable(reason, skip=False)
    try:
        cluster = start_cluster()
    except ClusterUnavailable as exc:
        return exc
    except (OSError, TimeoutError, subprocess.SubprocessError) as exc:
        return ClusterUnavailable(f"could not start a local etcd cluster: {exc}", skip=False)
    atexit.register(cluster.stop)
    return cluster
