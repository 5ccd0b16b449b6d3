"""sd_notify over a real unix datagram socket, as systemd listens for it."""

from __future__ import annotations

import os
import socket

import pytest

from appliance.runtime import systemd


@pytest.fixture()
def listener(tmp_path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = str(tmp_path / "notify")
    sock.bind(path)
    sock.settimeout(5)
    yield sock, path
    sock.close()


def test_notify_sends_the_state(listener):
    sock, path = listener
    assert systemd.notify("READY=1\nSTATUS=listening", {"NOTIFY_SOCKET": path})
    assert sock.recv(1024) == b"READY=1\nSTATUS=listening"


def test_abstract_socket_name():
    name = f"svoyak-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(5)
        assert systemd.notify("WATCHDOG=1", {"NOTIFY_SOCKET": "@" + name})
        assert sock.recv(64) == b"WATCHDOG=1"


def test_without_systemd_nothing_happens(tmp_path):
    assert not systemd.notify("READY=1", {})
    assert not systemd.notify("READY=1", {"NOTIFY_SOCKET": "relative/path"})
    assert not systemd.notify("READY=1", {"NOTIFY_SOCKET": str(tmp_path / "nobody")})


def test_watchdog_interval():
    pid = str(os.getpid())
    assert systemd.watchdog_interval({"WATCHDOG_USEC": "30000000"}) == 15.0
    assert systemd.watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": pid}) == 15.0
    assert systemd.watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"},
                                     pids=(os.getpid(),)) is None
    # A pre-fork server's worker: the unit's main process is its parent.
    parent = {"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getppid())}
    assert systemd.watchdog_interval(parent) == 15.0
    assert systemd.watchdog_interval({**parent, "WATCHDOG_PID": "999999999"}) is None
    assert systemd.watchdog_interval({}) is None
    assert systemd.watchdog_interval({"WATCHDOG_USEC": "0"}) is None
    assert systemd.watchdog_interval({"WATCHDOG_USEC": "x"}) is None


def test_watchdog_pings_only_while_healthy(listener):
    sock, path = listener
    healthy = [True]
    env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "20000"}  # a ping every 10 ms
    dog = systemd.Watchdog(lambda: healthy[0], env).start()
    try:
        assert [sock.recv(64) for _ in range(3)] == [b"WATCHDOG=1"] * 3
        healthy[0] = False
        # Drain what was in flight, then silence: the check now fails every time.
        sock.settimeout(0.3)
        with pytest.raises(TimeoutError):
            while True:
                sock.recv(64)
    finally:
        dog.stop()


def test_watchdog_without_systemd_starts_no_thread():
    dog = systemd.Watchdog(env={}).start()
    assert dog.interval is None and dog._thread is None
    dog.stop()


def test_watchdogs_first_ping_comes_at_once(listener):
    """systemd counts WatchdogSec from the master's READY=1, before the worker has even
    built the app: the first ping must not wait an interval (15 s on the box)."""
    sock, path = listener
    env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "30000000"}  # a ping every 15 s
    sock.settimeout(2)
    dog = systemd.Watchdog(env=env).start()
    try:
        assert sock.recv(64) == b"WATCHDOG=1"
    finally:
        dog.stop()


def test_serve_pings_the_watchdog_before_the_web_ui_is_built(listener, tmp_path, monkeypatch):
    """`svoyak serve`'s worker: the first ping is sent as soon as the game loop is up,
    before the buttons, the rooms link and the web UI (the slow part on a Pi)."""
    import webui.app
    from svoyak.serve import build

    sock, path = listener
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    monkeypatch.setenv("WATCHDOG_USEC", "30000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    seen: list[bytes] = []
    real = webui.app.create_app

    def create_app(services):  # type: ignore[no-untyped-def]
        sock.settimeout(3)
        seen.append(sock.recv(64))  # already sent, or sent while we wait
        return real(services)

    monkeypatch.setattr(webui.app, "create_app", create_app)
    box = build(tmp_path, simulate=True, pins=None, demo=False)
    box.close()
    assert seen == [b"WATCHDOG=1"]
