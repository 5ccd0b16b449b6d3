"""systemd's service notification protocol (sd_notify), without a dependency.

The unit (provisioning/roles/app) is Type=notify with WatchdogSec: the server says
READY=1 once it listens (gunicorn's master does it by itself when NOTIFY_SOCKET is set),
then WATCHDOG=1 at least every WatchdogSec/2 while it is healthy.
If the pings stop (a hung game loop, a deadlock), systemd kills the server and starts it
again. Outside systemd (a laptop, the tests) NOTIFY_SOCKET is unset and all this is a no-op.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Mapping


def notify(state: str, env: Mapping[str, str] | None = None) -> bool:
    """Send one notification ("READY=1", "WATCHDOG=1", "STATUS=..."); False without systemd."""
    env = os.environ if env is None else env
    path = env.get("NOTIFY_SOCKET", "")
    if not path or path[0] not in "/@":
        return False
    address = "\0" + path[1:] if path[0] == "@" else path  # "@" = Linux abstract socket
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
        try:
            sock.sendto(state.encode(), address)
        except OSError:
            return False
    return True


def watchdog_interval(env: Mapping[str, str] | None = None,
                      pids: tuple[int, ...] | None = None) -> float | None:
    """Seconds between pings (half the unit's WatchdogSec), or None if no watchdog is
    asked of this process.

    systemd names the unit's main process in WATCHDOG_PID. `svoyak serve` runs gunicorn,
    whose master is that process and whose one worker runs the game loop, so the worker
    (its child) feeds the watchdog too; the unit has NotifyAccess=all for that."""
    env = os.environ if env is None else env
    try:
        usec = int(env.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    wpid = env.get("WATCHDOG_PID")
    ours = (os.getpid(), os.getppid()) if pids is None else pids
    if usec <= 0 or (wpid and wpid not in {str(p) for p in ours}):
        return None
    return usec / 2e6


class Watchdog:
    """Pings systemd's watchdog from a daemon thread while `healthy()` says so.

    healthy should prove the part that can hang is alive (say, the game loop answered a
    no-op within a second); a False answer skips the ping, so a stuck loop gets restarted.
    """

    def __init__(self, healthy: Callable[[], bool] = lambda: True,
                 env: Mapping[str, str] | None = None):
        self.healthy = healthy
        self.env = os.environ if env is None else env
        self.interval = watchdog_interval(self.env)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Watchdog:
        if self.interval is not None and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="sd-watchdog", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        # The first ping at once, not an interval later: systemd's clock runs from the
        # master's READY=1, and the worker's start (imports, the log, the game's resume)
        # already took part of it; on the slowest Pi the margin is what is left.
        assert self.interval is not None
        while True:
            try:
                ok = self.healthy()
            except Exception:  # a failing health check is an unhealthy server
                ok = False
            if ok:
                notify("WATCHDOG=1", self.env)
            if self._stop.wait(self.interval):
                return
