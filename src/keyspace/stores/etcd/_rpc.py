"""The gRPC connection under :class:`~keyspace.stores.etcd.EtcdStore`.

One channel whose target lists every endpoint (gRPC balances calls over the members
that are up), a bounded retry with backoff on ``UNAVAILABLE`` / ``DEADLINE_EXCEEDED``
for calls that are safe to repeat, and :func:`translate` — the one place where a gRPC
error becomes a keyspace error.
"""

from __future__ import annotations

import ipaddress
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, unquote_to_bytes, urlsplit

import grpc

from ...errors import (
    AccessDenied,
    AuthenticationFailed,
    EtcdUnavailable,
    StoreClosed,
    StoreError,
    TransactionTooLarge,
)
from ._auth import TokenKeeper, tls_channel_options, tls_credentials
from ._proto import kv_pb2 as pb
from ._proto import kv_pb2_grpc as pb_grpc
from ._proto import watch_auth_pb2_grpc as wa_grpc
from ._tls_probe import tls_only_endpoint
from ._versions import nested_txn_checked

__all__ = [
    "DEFAULT_PORT",
    "MAX_REQUEST_BYTES",
    "MAX_TXN_OPS",
    "REQUEST_OVERHEAD",
    "EtcdConnection",
    "EtcdOptions",
    "EtcdUnavailable",
    "ResponseTooLarge",
    "closed_under_call",
    "parse_etcd_url",
    "redact_url",
    "translate",
]

DEFAULT_PORT = 2379
MAX_REQUEST_BYTES = 1_572_864
"""etcd's default ``--max-request-bytes`` (1.5 MiB): the whole request, framing included."""
REQUEST_OVERHEAD = 64
"""Bytes etcd adds around a request before checking it against the limit (measured: 18
for a put; 64 leaves room)."""
MAX_TXN_OPS = 128
"""etcd's default ``--max-txn-ops``: compares, success ops and failure ops each."""
MAX_RECEIVE_BYTES = 64 << 20
"""Largest response the channel accepts. Scans page to about 1 MiB, so only a single
pathological page comes near it; one key-value pair is at most 1.5 MiB."""

_RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
_UNAVAILABLE_DETAILS = (
    "context deadline exceeded",  # a member without quorum answers UNKNOWN with this
    "request timed out",
    "leader changed",
    "no leader",
    "not capable",
    "timed out",
)
"""etcd details that mean "no quorum or no leader right now", whatever the status code."""


def retryable(exc: grpc.RpcError) -> bool:
    """Whether ``exc`` means the cluster could not answer now (safe to retry for
    calls that are safe to repeat; an unknown outcome for writes)."""
    if exc.code() in _RETRYABLE:
        return True
    detail = (exc.details() or "").lower()
    return any(text in detail for text in _UNAVAILABLE_DETAILS)


class ResponseTooLarge(StoreError):
    """A response over the channel's receive limit; scans catch it and shrink the page."""


@dataclass(frozen=True)
class EtcdOptions:
    """Where and how to reach the cluster.

    ``timeout``: deadline of one gRPC call, in seconds.
    ``retry_budget``: the most time one operation may spend, retries and backoff
    included, before it fails with :class:`EtcdUnavailable`.
    ``max_attempts``: the most calls one operation may make.
    ``prefix``: every key is stored under this etcd key prefix (the URL's path).
    ``user`` / ``password``: etcd authentication (the URL's ``user:password@``).
    ``cacert``: PEM file of the CA that signed the members' certificates (turns TLS
    on); ``cert`` / ``key``: PEM files of a client certificate and its key.
    """

    endpoints: tuple[tuple[str, int], ...]
    prefix: bytes = b""
    timeout: float = 2.0
    retry_budget: float = 15.0
    max_attempts: int = 60
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    cacert: str | None = None
    cert: str | None = None
    key: str | None = None

    @property
    def tls(self) -> bool:
        """Whether the channel uses TLS (a CA or a client certificate was given)."""
        return self.cacert is not None or self.cert is not None

    def __post_init__(self) -> None:
        if not self.endpoints:
            raise ValueError("an etcd URL needs at least one endpoint: etcd://host:port[,host:port…]")
        if not (self.timeout > 0 and self.retry_budget > 0 and self.max_attempts > 0):
            raise ValueError(
                f"timeout ({self.timeout}), retry_budget ({self.retry_budget}) and "
                f"max_attempts ({self.max_attempts}) must be positive"
            )
        if (self.cert is None) != (self.key is None):
            raise ValueError(
                f"a client certificate needs both cert and key (got cert={self.cert!r}, key={self.key!r})"
            )
        if self.password is not None and not self.user:
            raise ValueError("an etcd password was given without a user name (etcd://user:password@host…)")


def _parse_endpoint(text: str) -> tuple[str, int]:
    text = text.strip()
    if not text:
        raise ValueError("empty endpoint in etcd URL")
    if text.startswith("["):  # [v6]:port
        host, sep, rest = text[1:].partition("]")
        if not sep:
            raise ValueError(f"bad IPv6 endpoint {text!r} in etcd URL")
        port = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:
        host, port = text, ""
    try:
        number = int(port) if port else DEFAULT_PORT
    except ValueError:
        raise ValueError(f"bad port in endpoint {text!r} of etcd URL") from None
    if not 0 < number < 65536:
        raise ValueError(f"port {number} of endpoint {text!r} is out of range")
    return host, number


_TEXT_OPTIONS = ("user", "password", "cacert", "cert", "key")


def parse_etcd_url(url: str, **overrides: float | int | str | None) -> EtcdOptions:
    """Parse ``etcd://[user:password@]h1:p1,h2:p2[/prefix][?options]``.

    A missing port means 2379. The path after the first ``/`` (percent-encoded bytes)
    is a key prefix: the store then sees only the etcd keys under it, with the prefix
    removed. Options: ``timeout=2``, ``retry_budget=15``, ``max_attempts=60``,
    ``cacert=``, ``cert=``, ``key=`` (PEM file paths; ``cacert`` turns TLS on),
    ``user=`` / ``password=`` (also as the URL's percent-encoded ``user:password@``).
    Keyword ``overrides`` that are not ``None`` win over the URL.
    """
    parts = urlsplit(url)
    if parts.scheme != "etcd":
        raise ValueError(f"not an etcd URL: {url!r} (expected etcd://host:port[,host:port…])")
    userinfo, at, hosts = parts.netloc.rpartition("@")
    endpoints = tuple(_parse_endpoint(e) for e in hosts.split(",") if e.strip())
    settings: dict[str, Any] = {"prefix": unquote_to_bytes(parts.path[1:])}
    if at:
        user, colon, password = userinfo.partition(":")
        settings["user"] = unquote(user)
        if colon:
            settings["password"] = unquote(password)
    for name, value in parse_qsl(parts.query, keep_blank_values=True, strict_parsing=False):
        if name in ("timeout", "retry_budget", "max_attempts"):
            try:
                settings[name] = int(value) if name == "max_attempts" else float(value)
            except ValueError:
                kind = "an integer" if name == "max_attempts" else "a number"
                raise ValueError(f"etcd URL option {name}={value!r} is not {kind}") from None
        elif name in _TEXT_OPTIONS:
            settings[name] = value
        else:
            raise ValueError(
                f"unknown etcd URL option {name!r} (known: timeout, retry_budget, max_attempts, "
                "cacert, cert, key, user, password)"
            )
    settings.update({k: v for k, v in overrides.items() if v is not None})
    return EtcdOptions(endpoints=endpoints, **settings)


def redact_url(url: str) -> str:
    """``url`` with the password of ``user:password@`` and of ``?password=`` replaced
    by ``***``, for messages and ``repr``."""
    parts = urlsplit(url)
    userinfo, at, hosts = parts.netloc.rpartition("@")
    if at and ":" in userinfo:
        userinfo = userinfo.split(":", 1)[0] + ":***"
    query = "&".join(
        f"{name}=***" if name == "password" else f"{name}={value}"
        for name, _, value in (item.partition("=") for item in parts.query.split("&") if item)
    )
    netloc = f"{userinfo}@{hosts}" if at else hosts
    return parts._replace(netloc=netloc, query=query).geturl()


def channel_target(endpoints: tuple[tuple[str, int], ...]) -> str:
    """A gRPC target naming every endpoint's address: ``ipv4:a:p,b:p`` or
    ``ipv6:[a]:p,…``. Host names are resolved once, here (IPv4 preferred)."""
    v4: list[str] = []
    v6: list[str] = []
    for host, port in endpoints:
        try:
            addresses = [ipaddress.ip_address(host)]
        except ValueError:
            try:
                infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except OSError as exc:
                raise StoreError(f"cannot resolve etcd endpoint {host}:{port}: {exc}") from exc
            addresses = [ipaddress.ip_address(info[4][0]) for info in infos]
        four = [a for a in addresses if a.version == 4]
        six = [a for a in addresses if a.version == 6]
        if four:
            v4.append(f"{four[0]}:{port}")
        if six:
            v6.append(f"[{six[0]}]:{port}")
    if len(v4) == len(endpoints):
        return "ipv4:" + ",".join(v4)
    if len(v6) == len(endpoints):
        return "ipv6:" + ",".join(v6)
    raise StoreError(f"etcd endpoints {endpoints} mix IPv4-only and IPv6-only hosts; use one family")


def closed_under_call(what: str) -> StoreClosed:
    """The error of a call the store's own close cut short (gRPC says ``CANCELLED``):
    :class:`StoreClosed`, as for a call made after the close; a write it carried
    may have been applied."""
    return StoreClosed(
        f"{what}: the etcd store was closed while this call was under way (a write it carried "
        "may or may not have been applied)"
    )


def translate(exc: grpc.RpcError, what: str, attempts: int = 1) -> StoreError:
    """The one place where a gRPC error from etcd becomes a keyspace error.

    The message names the operation, the gRPC status and etcd's detail; callers chain
    the gRPC error as ``__cause__``.
    """
    code = exc.code()
    name = getattr(code, "name", str(code))
    detail = exc.details() or ""
    text = f"{what}: etcd answered {name}: {detail}"
    if "request is too large" in detail:
        return _too_large(f"{text} (etcd accepts at most {MAX_REQUEST_BYTES} bytes per request)")
    if "required revision has been compacted" in detail:
        return StoreError(
            f"{what}: the revision this snapshot, transaction or scan reads at has been compacted "
            f"away by the etcd cluster (its history is kept only since the last compaction); nothing "
            f"was changed: read again from a new snapshot or transaction ({name}: {detail})"
        )
    if "too many operations in txn request" in detail:
        return _too_large(f"{text} (etcd accepts at most {MAX_TXN_OPS} operations per transaction)")
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" in detail:
        return ResponseTooLarge(text)
    if code == grpc.StatusCode.PERMISSION_DENIED or "permission denied" in detail:
        return AccessDenied(
            f"{what}: refused by the etcd server: the credentials in use have no permission for "
            f"these keys; nothing was changed ({name}: {detail})"
        )
    if _is_credentials_failure(code, detail):
        return AuthenticationFailed(f"{what}: etcd refused the credentials: {name}: {detail}")
    if retryable(exc):
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return EtcdUnavailable(f"{what}: etcd cluster unavailable{tries}: {name}: {detail}")
    return StoreError(text)


_TLS_WORDS = ("handshake", "ssl", "certificate", "tls", "tsi_data_corrupted")
"""Words of gRPC's details for a refused TLS handshake (``TSI_DATA_CORRUPTED``: the
server answered our client certificate with a "bad certificate" alert)."""


def _is_credentials_failure(code: grpc.StatusCode, detail: str) -> bool:
    """A refused password or token, or a TLS handshake that failed (wrong CA, wrong
    or missing client certificate): never worth retrying."""
    low = detail.lower()
    if code == grpc.StatusCode.UNAUTHENTICATED or "authentication failed" in low:
        return True
    if "user name is empty" in low:  # auth is on and no user was given
        return True
    return code == grpc.StatusCode.UNAVAILABLE and any(w in low for w in _TLS_WORDS)


class _TooLarge(TransactionTooLarge, StoreError):
    """A request etcd refused for its size: both a TransactionTooLarge and a StoreError."""


def _too_large(message: str) -> StoreError:
    return _TooLarge(message)


def open_channel(module: Any, target: str, options: EtcdOptions) -> Any:
    """A channel to ``target`` made by ``module`` (``grpc``, or ``grpc.aio`` for the
    asyncio client): round-robin over the members, etcd's message limits, fast
    reconnects, and TLS credentials when the options ask for TLS. The one place
    where both clients get their channel settings."""
    channel_options: list[tuple[str, Any]] = [
        ("grpc.lb_policy_name", "round_robin"),
        ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
        ("grpc.max_send_message_length", MAX_REQUEST_BYTES + (1 << 20)),
        ("grpc.enable_retries", 0),
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.min_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 1000),
    ]
    if options.tls:
        channel_options += tls_channel_options(options)
        return module.secure_channel(target, tls_credentials(options), options=channel_options)
    return module.insecure_channel(target, options=channel_options)


def is_credentials_failure(exc: grpc.RpcError) -> bool:
    """Whether ``exc`` is a refused password, token or TLS handshake (never retried)."""
    return _is_credentials_failure(exc.code(), exc.details() or "")


UNREACHED_BUDGET = 2.0
"""Seconds a connection that no member has answered yet keeps retrying refused
connections before it gives up (:class:`Backoff`): a wrong host or port fails
in under 3 s; the retry budget is for a cluster that was reached."""

_CONNECT_FAILURES = (
    "failed to connect",
    "connections to all backends failing",
    "connection refused",
    "dns resolution failed",
    "no route to host",
    "network is unreachable",
)


def connect_failure(exc: grpc.RpcError) -> bool:
    """Whether ``exc`` says no member could be connected to (no member answered:
    refused, unresolvable, unroutable), not an answer of a member."""
    if exc.code() != grpc.StatusCode.UNAVAILABLE:
        return False
    detail = (exc.details() or "").lower()
    return any(text in detail for text in _CONNECT_FAILURES)


def show_endpoints(endpoints: tuple[tuple[str, int], ...]) -> str:
    return ", ".join(f"{host}:{port}" for host, port in endpoints)


class Backoff:
    """The retry policy of one etcd call, shared by the synchronous and the asyncio
    clients (each drives it with its own sleep): every attempt's deadline is the
    ``timeout`` option cut to what is left of the budget; a retryable answer
    (:func:`retryable`, never a refused credential) is retried after 50 ms doubling
    to 1 s, jittered, while attempts and budget last; an expired token is renewed
    once per call."""

    __slots__ = (
        "attempts",
        "budget_end",
        "delay",
        "options",
        "probed",
        "reached",
        "refreshed",
        "unreached_end",
        "what",
    )

    def __init__(self, what: str, options: EtcdOptions, budget_end: float, *, reached: bool = True) -> None:
        self.what = what
        self.options = options
        self.budget_end = budget_end
        self.delay = 0.05
        self.attempts = 0
        self.refreshed = False
        self.probed = False
        # a connection no member has answered yet retries refused connections
        # for UNREACHED_BUDGET seconds only (see pause)
        self.reached = reached
        self.unreached_end = time.monotonic() + min(UNREACHED_BUDGET, options.retry_budget)

    def attempt_timeout(self) -> float:
        """Count an attempt and return its deadline; raises :class:`EtcdUnavailable`
        when the budget is spent."""
        self.attempts += 1
        remaining = self.budget_end - time.monotonic()
        if remaining <= 0:
            raise EtcdUnavailable(
                f"{self.what}: the retry budget of {self.options.retry_budget} s was spent before the "
                "etcd cluster answered"
            )
        return max(0.05, min(self.options.timeout, remaining))

    def renew_token(self, exc: grpc.RpcError, tokens: TokenKeeper) -> bool:
        """Whether ``exc`` says the token expired and it is renewed now (once a call:
        no storm on a bad password)."""
        if self.refreshed or not tokens.expired(exc):
            return False
        self.refreshed = True
        return True

    def pause(self, exc: grpc.RpcError, *, retry: bool, closed: bool) -> float | None:
        """How long to wait before retrying after ``exc``, or ``None``: give up.

        Raises :class:`StoreError` at once when a connection without TLS is
        closed by the server (``UNAVAILABLE: Socket closed``) and a member turns
        out to serve only TLS
        (:func:`~._etcd_tls_probe.tls_only_endpoint`, probed once per call, at
        most 1.5 s): retrying could never succeed.

        Raises :class:`EtcdUnavailable` saying that no member answered when
        every attempt of a connection no member has answered yet
        (``reached=False``) was refused (:func:`connect_failure`) and
        :data:`UNREACHED_BUDGET` seconds have passed."""
        if not connect_failure(exc):
            self.reached = True
        elif not self.reached and time.monotonic() + self.delay >= self.unreached_end:
            raise EtcdUnavailable(
                f"{self.what}: no etcd member answered on any endpoint "
                f"({show_endpoints(self.options.endpoints)}) in {UNREACHED_BUDGET} s "
                f"({self.attempts} attempts): is etcd running there, at that port? "
                f"(last error: {exc.code().name}: {exc.details()})"
            ) from exc
        if (
            not self.probed
            and not self.options.tls
            and exc.code() == grpc.StatusCode.UNAVAILABLE
            and "socket closed" in (exc.details() or "").lower()  # what a TLS member's refusal reads as
        ):
            self.probed = True
            found = tls_only_endpoint(self.options.endpoints)
            if found is not None:
                raise StoreError(tls_only_message(self.what, found)) from exc
        pause = self.delay * (0.5 + random.random())
        if (
            retry
            and retryable(exc)
            and not is_credentials_failure(exc)
            and self.attempts < self.options.max_attempts
            and time.monotonic() + pause < self.budget_end
            and not closed
        ):
            self.delay = min(self.delay * 2, 1.0)
            return pause
        return None


def tls_only_message(what: str, endpoint: tuple[str, int]) -> str:
    """The error for a connection without TLS to ``endpoint``, a member that serves
    only TLS: what the server expects and how to give the CA."""
    host, port = endpoint
    return (
        f"{what}: the etcd member {host}:{port} serves only TLS, and this URL connects without TLS: "
        "give the CA certificate that signed the members' certificates, "
        f"etcd://{host}:{port}?cacert=/path/to/ca.pem (or cacert= to keyspace.open), and a client "
        "certificate with cert= and key= when the members ask for one (--client-cert-auth)"
    )


class EtcdConnection:
    """One gRPC channel to the cluster and the retry loop every call goes through.

    Thread-safe (gRPC channels are). :meth:`close` is idempotent; calls after it raise
    :class:`StoreClosed`.
    """

    def __init__(self, options: EtcdOptions) -> None:
        self.options = options
        self._local = threading.local()  # .end: the budget end of an enclosing operation
        self.target = channel_target(options.endpoints)
        self._closed = False
        self._channel = open_channel(grpc, self.target, options)
        self.kv = pb_grpc.KVStub(self._channel)  # type: ignore[no-untyped-call]
        self.maintenance = pb_grpc.MaintenanceStub(self._channel)  # type: ignore[no-untyped-call]
        self.watch = wa_grpc.WatchStub(self._channel)  # type: ignore[no-untyped-call]
        self.auth = wa_grpc.AuthStub(self._channel)  # type: ignore[no-untyped-call]
        self.lease_grant = self._channel.unary_unary(
            "/etcdserverpb.Lease/LeaseGrant",
            request_serializer=encode_lease_grant,
            response_deserializer=decode_lease_grant,
        )
        """etcd's ``Lease.LeaseGrant``: a TTL in seconds in, the lease's ID out."""
        self.tokens = TokenKeeper(self.auth, options)
        self._nesting: bool | None = None
        self.reached = False  # whether a member has answered a call yet (see Backoff)

    def restricted(self) -> bool:
        """Whether the connection's user may be restricted by etcd roles: a user
        other than ``root`` (a password, or a client certificate whose name is the
        user)."""
        opts = self.options
        return opts.user != "root" if opts.user else opts.cert is not None

    def may_nest(self) -> bool:
        """Whether a commit may put operations in nested transactions (one ``Txn``
        of more than 128 operations). Always without credentials and as ``root``;
        for any other user (a password, or a client certificate whose name is the
        user) only where the server checks the permissions of nested transactions
        (:func:`nested_txn_checked`): on an older server a nested delete outside the
        user's grant would be applied where a plain one is refused. Cost: one
        ``Status`` call the first time, for such a user; the answer is kept."""
        if self._nesting is None:
            if not self.restricted():
                self._nesting = True
            else:
                try:
                    status = self.call("status", self.maintenance.Status, pb.StatusRequest())
                    self._nesting = nested_txn_checked(str(status.version))
                except StoreError:
                    self._nesting = False
        return self._nesting

    def metadata(self) -> tuple[tuple[str, str], ...] | None:
        """The call metadata: the auth token, when the connection authenticates."""
        return self.tokens.metadata()

    def open_check(self) -> None:
        """With credentials or TLS: authenticate (or ask one member's status) now, so
        that a wrong password or certificate fails at open with
        :class:`~keyspace.errors.AuthenticationFailed` rather than at first use.
        Without them nothing is sent."""
        if self.options.user:
            self.tokens.refresh(self)
        elif self.options.tls:
            self.call("open", self.maintenance.Status, pb.StatusRequest())

    @property
    def closed(self) -> bool:
        return self._closed

    def check_open(self, what: str) -> None:
        if self._closed:
            raise StoreClosed(f"{what}: the etcd store has been closed")

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._channel.close()

    @contextmanager
    def budget(self) -> Iterator[float]:
        """Bound every call made in this thread inside the block by ONE retry budget
        (``retry_budget`` seconds from now; an enclosing block's end wins when it is
        earlier), so that an operation made of several calls — a commit, its
        re-reads and its retries — ends within the budget. Yields the end time."""
        previous = getattr(self._local, "end", None)
        end = time.monotonic() + self.options.retry_budget
        if previous is not None:
            end = min(end, previous)
        self._local.end = end
        try:
            yield end
        finally:
            self._local.end = previous

    def call(self, what: str, method: Callable[..., Any], request: Any, *, retry: bool = True) -> Any:
        """Send ``request`` with ``method`` (a stub method) and return the response.

        With ``retry`` (only for calls that are safe to repeat), ``UNAVAILABLE``,
        ``DEADLINE_EXCEEDED`` and etcd's no-quorum answers (:func:`retryable`) are
        retried with exponential backoff (50 ms doubling to
        1 s, jittered) within ``retry_budget`` seconds and ``max_attempts`` calls. Each
        call's deadline is ``timeout``, cut to what is left of the budget. Any other
        error, or the last retryable one, is translated by :func:`translate`.
        """
        budget_end = time.monotonic() + self.options.retry_budget
        outer = getattr(self._local, "end", None)
        if outer is not None:
            budget_end = min(budget_end, outer)
        backoff = Backoff(what, self.options, budget_end, reached=self.reached)
        while True:  # bounded: Backoff raises or gives up after max_attempts or the budget
            self.check_open(what)
            timeout = backoff.attempt_timeout()
            try:
                answer = method(request, timeout=timeout, metadata=self.metadata())
                self.reached = True
                return answer
            except grpc.RpcError as exc:
                if self._closed:  # CANCELLED by the channel's close, not by the cluster
                    raise closed_under_call(what) from exc
                self.reached = self.reached or not connect_failure(exc)
                if backoff.renew_token(exc, self.tokens):
                    self.tokens.refresh(self)
                    continue
                pause = backoff.pause(exc, retry=retry, closed=self._closed)
                if pause is None:
                    raise translate(exc, what, backoff.attempts) from exc
                time.sleep(pause)
            except ValueError as exc:  # gRPC raises ValueError on a closed channel
                if self._closed:
                    raise StoreClosed(f"{what}: the etcd store has been closed") from exc
                raise


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def encode_lease_grant(ttl: int) -> bytes:
    """A ``LeaseGrantRequest`` of ``ttl`` seconds (field 1, ``TTL``; ``ID`` 0: the
    server picks it), in protobuf's wire format."""
    return b"\x08" + _varint(ttl)


def decode_lease_grant(raw: bytes) -> int:
    """The ``ID`` (field 2) of a ``LeaseGrantResponse``; :class:`StoreError` where it
    has none or says an ``error`` (field 4)."""
    at, found, error = 0, None, b""
    while at < len(raw):
        tag, at = _read_varint(raw, at)
        field, kind = tag >> 3, tag & 7
        if kind == 0:
            value, at = _read_varint(raw, at)
            if field == 2:
                found = value
        elif kind == 2:
            size, at = _read_varint(raw, at)
            if field == 4:
                error = raw[at : at + size]
            at += size
        else:
            raise StoreError(f"lease grant: an answer etcd does not give (wire type {kind})")
    if found is None or error:
        raise StoreError(f"lease grant: etcd granted no lease: {error.decode(errors='replace')}")
    return found


def _read_varint(raw: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(raw) or shift > 63:
            raise StoreError("lease grant: a truncated answer")
        byte = raw[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at
