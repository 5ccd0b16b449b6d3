"""Malformed Socket.IO frames are refused with one log line each, never a traceback (issue
27, `webui/malformed.py`): a raw client sends them over long-polling and WebSocket to a real
server, whose log is then read."""

from __future__ import annotations

import base64
import json
import os
import socket
import time
import urllib.error
import urllib.request
from typing import Any

import pytest
from webui_kit import Server

from webui.malformed import _reason

# Each of these made the library raise (Engine.IO then logged a traceback).
MALFORMED = ["42[", "42{}", "42[]", '42["command"', "42-1[\"x\"]", '42[{"a":1}]',
             '42[["a"],1]', "4x", "4\x00", "4", "44", "47", "48", "49", '40{"x":']
LINE = "malformed Socket.IO"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    data = tmp_path_factory.mktemp("frames") / "data"
    data.mkdir()
    s = Server(data).start()
    yield s
    s.stop()


def polling(server: Server) -> str:
    base = f"{server.base}/socket.io/?EIO=4&transport=polling"
    with urllib.request.urlopen(base, timeout=10) as r:
        sid = json.loads(r.read().decode()[1:])["sid"]
    url = f"{base}&sid={sid}"
    post(url, b"40")
    with urllib.request.urlopen(url, timeout=10) as r:
        assert "40{" in r.read().decode()  # connected to the default namespace
    return url


def post(url: str, body: bytes) -> int:
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "text/plain;charset=UTF-8"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def ws_frame(payload: bytes, opcode: int = 1) -> bytes:
    mask = os.urandom(4)
    n = len(payload)
    assert n < 126
    return (bytes([0x80 | opcode, 0x80 | n]) + mask
            + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))


def websocket(server: Server) -> socket.socket:
    c = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    key = base64.b64encode(os.urandom(16)).decode()
    c.sendall((f"GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\n"
               f"Host: 127.0.0.1:{server.port}\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
               "Sec-WebSocket-Version: 13\r\n\r\n").encode())
    assert b" 101 " in c.recv(4096).split(b"\r\n")[0]
    c.sendall(ws_frame(b"40"))
    return c


def lines(server: Server) -> list[str]:
    return [x for x in server.output().splitlines() if LINE in x]


def wait_lines(server: Server, n: int) -> list[str]:
    for _ in range(200):
        if len(found := lines(server)) >= n:
            return found
        time.sleep(0.02)
    return lines(server)


def test_malformed_frames_get_one_line_each_and_no_traceback(server: Server) -> None:
    for frame in MALFORMED:
        before = len(lines(server))
        url = polling(server)
        post(url, frame.encode())
        assert len(wait_lines(server, before + 1)) == before + 1, frame
    before = len(lines(server))
    url = polling(server)
    assert post(url, b"42\xed\xa0\x80") == 400  # not UTF-8
    for frame in (b"42[", b"\x00\x01"):  # over WebSocket, as text and as binary
        c = websocket(server)
        time.sleep(0.1)
        c.sendall(ws_frame(frame, 1 if frame.startswith(b"4") else 2))
        wait_lines(server, before + 2)
        c.close()
    found = wait_lines(server, before + 3)
    assert len(found) == before + 3, found
    time.sleep(0.3)
    log = server.output()
    assert "Traceback" not in log, log[-3000:]
    assert len(lines(server)) == len(MALFORMED) + 3
    # the server still serves screens
    url = polling(server)
    assert post(url, b'42["seat",{"seat":0}]') == 200
    with urllib.request.urlopen(f"{server.base}/board", timeout=10) as r:
        assert r.status == 200


def test_a_log_line_is_one_printable_line() -> None:
    """A stranger's bytes may be in an exception's message: no escape code, no new line."""
    assert _reason(ValueError("a\x1b[31m\nb" + "x" * 500)) == "ValueError: a?[31m?b" + "x" * 112
