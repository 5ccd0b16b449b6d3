"""Capacity with priority on the real server (gunicorn, one gthread worker) on loopback:
a stranger opening sockets cannot stop the host or the TV, and a full box says so.

The box itself is 127.0.0.1 (the TV kiosk); strangers connect from other loopback
addresses (127.0.0.0/8 is all loopback on Linux), which the box counts as phones."""

from __future__ import annotations

import json
import socket
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from webui_kit import Server

from webui.admission import PER_ADDRESS

STRANGER = "127.0.0.2"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path / "data").start()
    yield s
    s.stop()


def upgrade(port: int, source: str) -> tuple[socket.socket, bytes]:
    """A raw Engine.IO WebSocket upgrade from `source`, then nothing (an idle socket)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    s.sendall(b"GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\n"
              b"Host: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            break
        head += chunk
    return s, head


def get(url: str, timeout: float = 5.0) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_a_socket_flood_from_one_address_does_not_stop_the_host(server: Server) -> None:
    held: list[socket.socket] = []
    try:
        answers = []
        for _ in range(120):
            s, head = upgrade(server.port, STRANGER)
            held.append(s)
            answers.append(head.split(b"\r\n", 1)[0])
        accepted = [a for a in answers if b" 101 " in a]
        assert len(accepted) == PER_ADDRESS
        assert all(b" 503 " in a for a in answers if a not in accepted)
        # The TV and the host still get through, at once.
        t0 = time.monotonic()
        assert get(f"{server.base}/board")[0] == 200
        s, head = upgrade(server.port, "127.0.0.1")
        held.append(s)
        assert b" 101 " in head
        assert time.monotonic() - t0 < 4.5  # a hang would be the 5 s timeout
        # A phone at another address still gets in; the stranger's page says the box is
        # full for it, in both languages.
        s, head = upgrade(server.port, "127.0.0.3")
        held.append(s)
        assert b" 101 " in head
        refused = socket.create_connection(("127.0.0.1", server.port), timeout=5,
                                           source_address=(STRANGER, 0))
        held.append(refused)
        refused.sendall(b"GET /play HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        body = b""
        while chunk := refused.recv(65536):
            body += chunk
        assert b" 503 " in body.split(b"\r\n", 1)[0]
        text = body.decode()
        assert "Коробка заполнена" in text and "The box is full" in text
    finally:
        for s in held:
            s.close()


def test_deep_json_over_a_real_socket_is_answered(server: Server) -> None:
    """A message nested 20,000 deep (40 kB, under the size limit) is answered with a
    refusal and the socket lives on (before, the parser's RecursionError killed it)."""
    import socketio

    client = socketio.Client(reconnection=False)
    client.connect(server.base, auth={"role": "board"}, transports=["websocket"])
    try:
        deep = json.loads("[" * 50 + "]" * 50)  # what python-socketio can encode itself
        answer = client.call("press", {"player": deep}, timeout=5)
        assert answer["ok"] is False
        # The raw case: the client library cannot produce it, so send the frame by hand.
        got: list[object] = []
        client.callbacks.setdefault("/", {})[99] = lambda *a: got.append(a)
        client.eio.send("299[\"press\"," + "[" * 20_000 + "]" * 20_000 + "]")
        end = time.monotonic() + 5
        while not got and time.monotonic() < end:
            time.sleep(0.02)
        assert got and got[0][0]["ok"] is False  # type: ignore[index]
        assert client.connected
        assert client.call("press", {"player": 0}, timeout=5) is not None
    finally:
        client.disconnect()
