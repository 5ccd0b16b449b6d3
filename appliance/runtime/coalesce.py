"""One call for a burst of changes: the screens that many small changes reach (a room of
phones proposing names at once, a busy venue's batches of room events) are told once the
burst has had time to gather, not once a change."""

from __future__ import annotations

import threading
from collections.abc import Callable


class Coalesced:
    """Calling it asks for `fn()` `delay_s` later, on a timer thread; asks made before that
    call runs share it. An ask made while `fn` runs gets a call of its own."""

    def __init__(self, delay_s: float, fn: Callable[[], None]):
        self.delay_s, self.fn = delay_s, fn
        self._lock = threading.Lock()
        self._due = False

    def __call__(self) -> None:
        with self._lock:
            if self._due:
                return
            self._due = True
        timer = threading.Timer(self.delay_s, self._fire)
        timer.daemon = True
        timer.start()

    def _fire(self) -> None:
        with self._lock:
            self._due = False
        self.fn()
