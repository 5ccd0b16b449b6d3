"""Host PIN check with a rate limit, so four digits cannot be guessed from a phone.

Each client address gets a few free tries; after that every wrong PIN doubles its
lock-out. A global budget slows down guessing from many addresses at once."""

from __future__ import annotations

import hmac
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

FREE_TRIES = 5
FIRST_LOCK_S = 30.0
MAX_LOCK_S = 15 * 60.0
GLOBAL_WINDOW_S = 60.0
GLOBAL_FAILURES = 30


@dataclass
class _Client:
    failures: int = 0
    locked_until: float = 0.0


@dataclass
class PinGuard:
    """Checks PINs; `check` answers (ok, retry_after_seconds)."""

    clock: Callable[[], float] = time.monotonic
    _clients: dict[str, _Client] = field(default_factory=dict)
    _recent: list[float] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def check(self, client: str, given: str, expected: str) -> tuple[bool, float]:
        now = self.clock()
        with self._lock:
            self._recent = [t for t in self._recent if now - t < GLOBAL_WINDOW_S]
            c = self._clients.setdefault(client, _Client())
            wait = max(c.locked_until - now, 0.0)
            if len(self._recent) >= GLOBAL_FAILURES:
                wait = max(wait, GLOBAL_WINDOW_S - (now - self._recent[0]))
            if wait > 0:
                return False, wait
            if hmac.compare_digest(str(given).strip().encode(), str(expected).encode()):
                c.failures = 0
                c.locked_until = 0.0
                return True, 0.0
            c.failures += 1
            self._recent.append(now)
            if c.failures >= FREE_TRIES:
                lock = min(FIRST_LOCK_S * 2 ** (c.failures - FREE_TRIES), MAX_LOCK_S)
                c.locked_until = now + lock
                return False, lock
            return False, 0.0
