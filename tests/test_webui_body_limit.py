"""Request bodies are limited per route before they are read (issue 27, `webui/bodylimit.py`):
only the host's three file uploads take large bodies; a stranger's 300 MB to ``/login``
leaves the server's memory where it was."""

from __future__ import annotations

import io
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from webui_kit import Server, make_kit

from webui.bodylimit import SMALL_BODY, UPLOADS

MB = 1024 * 1024
SENT = 300 * MB


def memory_mb(pid: int) -> tuple[float, float]:
    """(RSS, PSS) of a process, from /proc."""
    rss = pss = 0.0
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Rss:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("Pss:"):
                pss = int(line.split()[1]) / 1024
    return rss, pss


def worker_of(pid: int) -> int:
    """gunicorn's one worker: the child of the server process."""
    for _ in range(100):
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if kids:
            return int(kids[0])
        time.sleep(0.05)
    raise AssertionError("the server has no worker")


def stream(port: int, path: str, chunked: bool, total: int = SENT) -> tuple[int, bytes]:
    """POST `total` bytes of form to `path`, a megabyte at a time (never built in memory
    whole); returns (bytes the server took before it answered, its status line)."""
    c = socket.create_connection(("127.0.0.1", port), timeout=60)
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\n")
    head += "Transfer-Encoding: chunked\r\n\r\n" if chunked else f"Content-Length: {total}\r\n\r\n"
    chunk = b"pin=" + b"1" * (min(MB, total) - 4)
    sent = 0
    try:
        c.sendall(head.encode())
        while sent < total:
            c.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
            sent += len(chunk)
        if chunked:
            c.sendall(b"0\r\n\r\n")
    except OSError:  # the server answered and closed: the rest was never read
        pass
    try:
        status = c.recv(200).split(b"\r\n")[0]
    except OSError:
        status = b""
    c.close()
    return sent, status


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    data = tmp_path_factory.mktemp("limits") / "data"
    data.mkdir()
    s = Server(data).start()
    yield s
    s.stop()


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "content-length"])
def test_300_mb_to_login_leaves_the_memory_flat(server: Any, chunked: bool) -> None:
    assert server.proc is not None
    worker = worker_of(server.proc.pid)
    before = memory_mb(worker)
    peak = list(before)
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            rss, pss = memory_mb(worker)
            peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)
            time.sleep(0.005)

    t = threading.Thread(target=watch)
    t.start()
    try:
        _, status = stream(server.port, "/login", chunked)
    finally:
        done.set()
        t.join()
    assert b" 413 " in status, status
    assert peak[0] - before[0] < 20, (before, peak)  # RSS within 20 MB of its start
    assert peak[1] - before[1] < 20, (before, peak)  # and PSS
    _, status = stream(server.port, "/login", chunked, total=1024)  # still serves
    assert b" 403 " in status, status


def test_limits_per_route_and_per_host(tmp_path: Path) -> None:
    k = make_kit(tmp_path)
    try:
        stranger = k.app.test_client()
        big = b"x" * (SMALL_BODY + 1)
        r = stranger.post("/login", data=b"pin=" + big,
                          content_type="application/x-www-form-urlencoded")
        assert r.status_code == 413
        text = r.get_data(as_text=True)
        assert "64 КиБ" in text and "64 KiB" in text
        for path in sorted(UPLOADS):  # a stranger's file is small even where files go
            r = stranger.post(path, data={"file": (io.BytesIO(big), "f.bin")},
                              content_type="multipart/form-data")
            assert r.status_code == 413, path
        host = k.app.test_client()
        assert host.post("/login", data={"pin": k.services.settings.pin}).status_code == 302
        r = host.post("/admin/tournament/create", data={"title": "x" * (SMALL_BODY + 1)})
        assert r.status_code == 413  # a form is small for the host too
        for path in sorted(UPLOADS):  # the host's file goes through to its handler
            r = host.post(path, data={"file": (io.BytesIO(big * 4), "f.bin")},
                          content_type="multipart/form-data")
            assert r.status_code != 413, path
        assert host.post("/login", data={"pin": "0"}).status_code in (403, 429)  # small ok
    finally:
        k.close()
