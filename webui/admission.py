"""Who gets one of the server's threads: capacity with priority, before any Flask code runs.

In the threading deployment (`webui/server.py`) every WebSocket and every long-poll holds
one worker thread for as long as it lasts, so the number of threads is the number of
screens. Anyone on the box's Wi-Fi may open sockets, so without a limit one phone could
take every thread and the host and the TV would wait for ever.

This WSGI middleware counts the requests in flight (a WebSocket is one request that lasts
as long as the socket) in three classes:

- **box**: from the box itself (127.0.0.1 or ::1: the TV kiosk, the console);
- **host**: carrying a valid host session cookie;
- **public**: everyone else (phones, spectators, a board opened on a laptop).

Box and host requests are always let through: the server keeps `RESERVED` threads that the
public class can never take. A public request is refused at once with 503 and a one-page
"the box is full" answer (Russian and English) when its address already holds
`PER_ADDRESS` requests or the public class holds `public_limit`, or its socket stormed in the last
`PENALTY_S`; refusing costs a few microseconds and no socket.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

# Requests one public address may have in flight: a phone needs one socket, two while it
# upgrades from long-polling to a WebSocket or reloads its page before the old socket times out.
PER_ADDRESS = 6
# Threads the public class can never take: the host, the TV and their page loads.
RESERVED = 32
# How long an address whose socket stormed (webui.ratelimit) is turned away.
PENALTY_S = 30.0

FULL_PAGE = """<!doctype html>
<html lang="ru"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Svoyak</title></head>
<body>
<h1>Коробка заполнена</h1>
<p>К игре подключено слишком много устройств. Закройте лишние вкладки и попробуйте снова
через минуту.</p>
<h1 lang="en">The box is full</h1>
<p lang="en">Too many devices are connected to the game. Close other tabs and try again in
a minute.</p>
</body></html>
""".encode()


def is_loopback(address: str | None) -> bool:
    """The box itself: 127.0.0.1 or ::1. Other 127.x addresses count as strangers, which
    lets tests and benches play phones from many addresses on one machine."""
    return address in ("127.0.0.1", "::1", "::ffff:127.0.0.1")


class Admission:
    """WSGI middleware; `stats()` tells the host screen and the benches what it did."""

    def __init__(self, app: Callable[..., Iterable[bytes]], *, public_limit: int,
                 is_host: Callable[[dict[str, Any]], bool],
                 per_address: int = PER_ADDRESS):
        self.app = app
        self.public_limit = public_limit
        self.per_address = per_address
        self.is_host = is_host
        self._lock = threading.Lock()
        self._public = 0
        self._by_address: Counter[str] = Counter()
        self._penalized: dict[str, float] = {}  # address -> until (monotonic)
        self.refused = 0

    def penalize(self, address: str, seconds: float = PENALTY_S) -> None:
        """Turn `address` away for `seconds` (its socket stormed)."""
        if is_loopback(address):
            return
        with self._lock:
            now = time.monotonic()
            self._penalized = {a: t for a, t in self._penalized.items() if t > now}
            self._penalized[address] = now + seconds

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"public": self._public, "public_limit": self.public_limit,
                    "per_address": self.per_address, "refused": self.refused,
                    "addresses": len(self._by_address)}

    def full(self) -> bool:
        with self._lock:
            return self._public >= self.public_limit

    def _classify(self, environ: dict[str, Any]) -> str | None:
        """The public address to count, or None for the box and the host."""
        address = environ.get("REMOTE_ADDR") or "?"
        if is_loopback(address):
            return None
        try:
            if self.is_host(environ):
                return None
        except Exception:  # a bad cookie is just not a host
            pass
        return address

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        address = self._classify(environ)
        if address is None:
            return self.app(environ, start_response)
        with self._lock:
            until = self._penalized.get(address)
            if until is not None and until <= time.monotonic():
                del self._penalized[address]
                until = None
            if until is not None or self._public >= self.public_limit or \
                    self._by_address[address] >= self.per_address:
                self.refused += 1
                admitted = False
            else:
                self._public += 1
                self._by_address[address] += 1
                admitted = True
        if not admitted:
            start_response("503 Service Unavailable", [
                ("Content-Type", "text/html; charset=utf-8"),
                ("Content-Length", str(len(FULL_PAGE))), ("Retry-After", "30"),
                ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff")])
            return [FULL_PAGE]
        # Counted until the app returns: a WebSocket's (and a long-poll's) call lasts as long
        # as it holds its thread; a page returns at once (a media file may still stream,
        # from a thread that is then not counted).
        try:
            return self.app(environ, start_response)
        finally:
            with self._lock:
                self._public -= 1
                self._by_address[address] -= 1
                if self._by_address[address] <= 0:
                    del self._by_address[address]
