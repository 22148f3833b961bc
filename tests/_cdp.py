"""Headless Chromium driven over its DevTools protocol, for the tests of pages
keyspace writes: a small websocket client (RFC 6455 text frames) on 127.0.0.1,
a browser started with a throwaway profile and no network services, and the
few protocol calls the tests use (evaluate, click, hover, screenshot)."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    "--window-size=1200,800",
]


def chromium() -> str:
    """The Chromium binary, or a skip naming why there is none."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no chromium here: install Debian's 'chromium' (make test installs it when run as root)")


class _Socket:
    def __init__(self, url: str) -> None:
        found = re.match(r"ws://([^:/]+):(\d+)(/.*)", url)
        assert found, url
        host, port, path = found.group(1), int(found.group(2)), found.group(3)
        self.sock = socket.create_connection((host, port), timeout=20)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            got = self.sock.recv(4096)
            assert got, "the browser closed the websocket during its handshake"
            head += got
        assert head.startswith(b"HTTP/1.1 101"), head[:200]
        self.buffer = head.split(b"\r\n\r\n", 1)[1]

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            got = self.sock.recv(1 << 16)
            assert got, "the browser closed the websocket"
            self.buffer += got
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def send(self, text: str) -> None:
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            header = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 1 << 16:
            header = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            header = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(header + mask + masked)

    def receive(self) -> str:
        parts = b""
        while True:
            first, second = self._read(2)
            n = second & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            payload = self._read(n)
            opcode = first & 0x0F
            if opcode in (0x9, 0xA):  # ping, pong: not data
                continue
            parts += payload
            if first & 0x80:
                return parts.decode()

    def close(self) -> None:
        self.sock.close()


class Browser:
    """A headless Chromium showing ``page`` (a local file), driven by its DevTools
    protocol; ``close()`` ends it and removes its profile."""

    def __init__(self, page: Path) -> None:
        self.profile = tempfile.mkdtemp(prefix="chromium-profile-")
        self.proc = subprocess.Popen(
            [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}", page.as_uri()],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            self.ws = _Socket(self._page_socket())
        except BaseException:
            self.close()
            raise
        self.next_id = 0

    def _page_socket(self) -> str:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + 30
        port = None
        while port is None and time.monotonic() < deadline:
            line = self.proc.stderr.readline().decode(errors="replace")
            if not line and self.proc.poll() is not None:
                raise AssertionError(f"chromium exited with {self.proc.returncode}")
            found = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if found:
                port = int(found.group(1))
        assert port is not None, "chromium did not say where its DevTools listen within 30 s"
        for _ in range(100):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as answer:
                targets = json.load(answer)
            pages = [t for t in targets if t.get("type") == "page"]
            if pages:
                return str(pages[0]["webSocketDebuggerUrl"])
            time.sleep(0.1)
        raise AssertionError("chromium showed no page")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        me = self.next_id
        self.ws.send(json.dumps({"id": me, "method": method, "params": params}))
        for _ in range(10_000):
            message = json.loads(self.ws.receive())
            if message.get("id") == me:
                assert "error" not in message, message
                return message.get("result", {})  # type: ignore[no-any-return]
        raise AssertionError(f"no answer to {method}")

    def evaluate(self, expression: str) -> Any:
        got = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in got, got
        return got["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.evaluate(expression)
            if got:
                return got
            time.sleep(0.05)
        raise AssertionError(f"never true: {expression}")

    def mouse(self, kind: str, x: float, y: float) -> None:
        extra: dict[str, Any] = {"button": "left", "clickCount": 1} if kind != "mouseMoved" else {}
        self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, **extra)

    def click(self, x: float, y: float) -> None:
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y)
        self.mouse("mouseReleased", x, y)

    def screenshot(self, to: Path) -> bytes:
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        to.write_bytes(data)
        return data

    def close(self) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            ws.close()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=20)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)
