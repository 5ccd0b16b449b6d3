"""The production web server: gunicorn with one gthread worker.

Flask-SocketIO's deployment notes give two production set-ups for its threading mode over
simple-websocket: gunicorn with a single worker and many threads, or uWSGI. gunicorn is pure
Python (installs from PyPI on a Pi with no compiler) and needs exactly one worker, which
suits us: the game loop is one thread in one process. Each WebSocket (and each long-poll)
holds one thread, so the thread count bounds the screens: `THREADS` serves 120 phones with
room to spare, and `webui.admission` keeps `RESERVED` of them for the host and the TV
whatever the phones do (docs/architecture.md says why this deployment, with figures).

The app is built in the worker (`load` runs after the fork), so the game loop, the GPIO
threads and the server live in one process; if the worker dies, gunicorn starts a new one,
which resumes the game from the log.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gunicorn.app.base import BaseApplication

THREADS = 192


def public_limit(threads: int = THREADS) -> int:
    """Requests in flight the phones and strangers may hold together."""
    from webui.admission import RESERVED

    return max(threads - RESERVED, 1)


def heartbeat_dir() -> str | None:
    """Where gunicorn keeps its worker's heartbeat file, which it touches every second or
    so: in RAM, never on the card (the default, the temporary directory, is the data
    partition on the box; about 165 MiB a day of writes while idle). The unit's
    RuntimeDirectory= (systemd names it in RUNTIME_DIRECTORY), else /dev/shm; None (the
    default) on a system with neither."""
    import os

    for candidate in (os.environ.get("RUNTIME_DIRECTORY", "").split(":")[0], "/dev/shm"):
        if candidate and os.path.isdir(candidate) and os.access(candidate, os.W_OK):
            return candidate
    return None


class Server(BaseApplication):
    def __init__(self, factory: Callable[[], Any], host: str, port: int,
                 on_exit: Callable[[], None] | None = None, *, threads: int = THREADS):
        self.factory = factory
        self.on_exit = on_exit
        self.options = {
            "bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
            "workers": 1,  # Socket.IO needs one process; the game loop is one thread
            "worker_class": "gthread",
            "threads": threads,
            "timeout": 60,
            "graceful_timeout": 5,
            "keepalive": 30,
            "accesslog": None,
            "errorlog": "-",
            "loglevel": "warning",
            "worker_exit": self._worker_exit,
            "worker_tmp_dir": heartbeat_dir(),
        }
        super().__init__()

    def _worker_exit(self, _server: Any, _worker: Any) -> None:
        if self.on_exit is not None:
            self.on_exit()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        return self.factory()
