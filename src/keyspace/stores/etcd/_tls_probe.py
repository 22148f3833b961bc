"""Telling a member that serves only TLS from one that is down, for a client that
connects without TLS.

gRPC reports a plain-text connection that a TLS-only member closes as
``UNAVAILABLE: Socket closed``, the same words as a member that went away, and
retries it until the budget is spent: without this probe the caller learns
nothing for the whole retry budget and then reads "cluster unavailable". The
probe opens one TCP connection to a member and starts a TLS handshake (no
certificate is checked: only whether the member speaks TLS at all).
"""

from __future__ import annotations

import socket
import ssl
import time

__all__ = ["PROBE_SECONDS", "speaks_tls", "tls_only_endpoint"]

PROBE_SECONDS = 1.5
"""The most time :func:`tls_only_endpoint` spends, over all members."""

_found: dict[tuple[tuple[str, int], ...], tuple[str, int] | None] = {}
"""Endpoint lists already found to hold a TLS-only member (probed again otherwise)."""


def speaks_tls(host: str, port: int, timeout: float) -> bool:
    """Whether the server at ``host:port`` completes (or answers as TLS does) a TLS
    handshake within ``timeout`` seconds. False for a server that is down, that
    closes the connection or that answers in plain text. Never raises."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=timeout) as raw:
            raw.settimeout(timeout)
            with context.wrap_socket(raw, do_handshake_on_connect=False) as tls:
                tls.do_handshake()
        return True
    except ssl.SSLCertVerificationError:
        return True
    except ssl.SSLError as exc:
        # an alert (a client certificate required, a protocol the server refuses)
        # is the server speaking TLS; "wrong version number" or a broken record is not
        return "alert" in str(exc).lower()
    except (OSError, ValueError):
        return False


def tls_only_endpoint(endpoints: tuple[tuple[str, int], ...]) -> tuple[str, int] | None:
    """The first of ``endpoints`` that speaks TLS, or None; at most
    :data:`PROBE_SECONDS` in all (a member that is down costs nothing when its
    port refuses the connection). A list found to hold one is not probed again."""
    if _found.get(endpoints) is not None:
        return _found[endpoints]
    end = time.monotonic() + PROBE_SECONDS
    for host, port in endpoints:
        left = end - time.monotonic()
        if left <= 0.05:
            break
        if speaks_tls(host.strip("[]"), port, min(left, 1.0)):
            _found[endpoints] = (host, port)
            return host, port
    return None
