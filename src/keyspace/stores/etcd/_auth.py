"""TLS and authentication of the etcd connection.

- TLS: :func:`tls_credentials` reads the PEM files named by the options (CA, client
  certificate and key); a file that cannot be read is a ``ValueError`` at open.
- Authentication: :class:`TokenKeeper` holds the token etcd's ``Authenticate``
  returned and puts it in every call's metadata. When the server answers that the
  token is invalid or expired, the call that met it asks for a new token once and
  is repeated; a refused password raises
  :class:`~keyspace.errors.AuthenticationFailed` and is never retried.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import grpc

from ._proto import watch_auth_pb2 as wa

__all__ = ["Caller", "ConnectionOptions", "TokenKeeper", "tls_channel_options", "tls_credentials"]


class ConnectionOptions(Protocol):
    """The connection options this module reads (``EtcdOptions`` of
    :mod:`keyspace.stores.etcd._rpc`, which builds on this module, offers them)."""

    @property
    def endpoints(self) -> tuple[tuple[str, int], ...]: ...
    @property
    def user(self) -> str | None: ...
    @property
    def password(self) -> str | None: ...
    @property
    def cacert(self) -> str | None: ...
    @property
    def cert(self) -> str | None: ...
    @property
    def key(self) -> str | None: ...


class Caller(Protocol):
    """What sends one request within the connection's retry budget
    (``EtcdConnection.call``)."""

    def call(self, what: str, method: Callable[..., Any], request: Any, *, retry: bool = True) -> Any: ...


def _read(path: str | None, what: str) -> bytes | None:
    if path is None:
        return None
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read the etcd {what} file {path!r}: {exc.strerror}") from None


def tls_credentials(options: ConnectionOptions) -> grpc.ChannelCredentials:
    """Channel credentials from ``cacert`` (the CA that signed the members'
    certificates; the system's CAs when absent) and the client ``cert``/``key``."""
    return grpc.ssl_channel_credentials(
        root_certificates=_read(options.cacert, "CA certificate (cacert)"),
        private_key=_read(options.key, "client key (key)"),
        certificate_chain=_read(options.cert, "client certificate (cert)"),
    )


def tls_channel_options(options: ConnectionOptions) -> list[tuple[str, Any]]:
    """The name the members' certificates are checked against: the first endpoint's
    host as written in the URL (the channel target lists resolved addresses)."""
    host = options.endpoints[0][0]
    return [("grpc.ssl_target_name_override", host), ("grpc.default_authority", host)]


_EXPIRED_WORDS = ("invalid auth token", "auth token", "token expired")


class TokenKeeper:
    """The current auth token of a connection (none without a user)."""

    def __init__(self, stub: Any, options: ConnectionOptions) -> None:
        self._stub = stub
        self._user = options.user
        self._password = options.password or ""
        self._token: str | None = None
        self._lock = threading.Lock()
        self.refreshes = 0
        """How many tokens were obtained (the first one included)."""

    def metadata(self) -> tuple[tuple[str, str], ...] | None:
        token = self._token
        return None if token is None else (("token", token),)

    def expired(self, exc: grpc.RpcError) -> bool:
        """Whether ``exc`` says the token is no longer valid (and there is a user to
        get a new one for)."""
        if self._user is None or exc.code() != grpc.StatusCode.UNAUTHENTICATED:
            return False
        detail = (exc.details() or "").lower()
        return any(word in detail for word in _EXPIRED_WORDS)

    def refresh(self, conn: Caller) -> None:
        """Authenticate again (one ``Authenticate`` call, retried only while the
        cluster is unavailable, within the connection's retry budget)."""
        if self._user is None:
            return
        stale = self._token
        with self._lock:
            if self._token is not stale and self._token is not None:
                return  # another thread refreshed meanwhile
            request = wa.AuthenticateRequest(name=self._user, password=self._password)
            response = conn.call("authenticate", self._authenticate(), request)
            self._token = str(response.token)
            self.refreshes += 1

    @property
    def user(self) -> str | None:
        return self._user

    def request(self) -> wa.AuthenticateRequest:
        """The ``Authenticate`` request of this user (for a client that sends it
        itself, like the asyncio one)."""
        return wa.AuthenticateRequest(name=self._user or "", password=self._password)

    def accept(self, stale: tuple[tuple[str, str], ...] | None, token: str) -> None:
        """Take ``token`` from an ``Authenticate`` answer, unless the metadata moved
        on from ``stale`` meanwhile (another caller refreshed first)."""
        with self._lock:
            if self.metadata() == stale:
                self._token = token
                self.refreshes += 1

    def _authenticate(self) -> Callable[..., Any]:
        stub = self._stub

        def call(request: Any, *, timeout: float, metadata: object = None) -> Any:
            return stub.Authenticate(request, timeout=timeout)

        return call
