"""Floors the benches measure in their own run, so a figure taken on a shared machine says
how far it is from what the machine itself allows at that moment."""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time


class BareWakeup:
    """A thread that sleeps on a `queue.SimpleQueue` with a timeout to a deadline (the wait
    the game loop does for a settle window) and notes how late it woke, nothing else."""

    def __init__(self) -> None:
        self.inbox: queue.SimpleQueue[int | None] = queue.SimpleQueue()
        self.done = threading.Event()
        self.late_ns = 0
        self.thread = threading.Thread(target=self._run, name="bare-wakeup", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        wait: queue.SimpleQueue[None] = queue.SimpleQueue()
        while (deadline := self.inbox.get()) is not None:
            with contextlib.suppress(queue.Empty):
                wait.get(timeout=max(0.0, (deadline - time.monotonic_ns()) / 1e9))
            self.late_ns = time.monotonic_ns() - deadline
            self.done.set()

    def trial(self, ahead_ns: int) -> float:
        """One timed wait `ahead_ns` from now; returns how late it woke, in ms."""
        self.done.clear()
        self.inbox.put(time.monotonic_ns() + ahead_ns)
        if not self.done.wait(2):
            raise RuntimeError("the bare wake-up never woke")
        return self.late_ns / 1e6

    def close(self) -> None:
        self.inbox.put(None)
        self.thread.join(2)


def load_1m() -> float:
    """The 1-minute load average (how busy the shared cores were)."""
    return round(os.getloadavg()[0], 2)
