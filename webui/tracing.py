"""Where an update's fan-out spends its time, for the fan-out bench (off unless asked).

With ``SVOYAK_TRACE_DIR`` set in the server's environment the hub profiles its notifier
subscriber with cProfile (``notifier.prof`` in that directory) and notes one JSON line per
update (``updates.jsonl``), both written when the process exits, so that writing them is not
measured: the command's type, how long after the command's stamp the notifier started on
it (for a timeout, the stamp is the deadline: so this is the loop's wake-up, the decision,
the commit and the hand-off to the notifier thread), how long the frames took to build and
how long handing them to Socket.IO took; and, from an early subscriber on the loop thread,
when each command was decided and when committed. `bench/fanout_trace.py` lines these up
with the bench's own times. Nothing of this runs without the variable: the box on the Pi
never pays for it.
"""

from __future__ import annotations

import atexit
import cProfile
import gc
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ENV = "SVOYAK_TRACE_DIR"


class Trace:
    """The profile of one thread's subscriber and the per-update timings."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.profile = cProfile.Profile()
        self.lock = threading.Lock()
        self.lines: list[str] = []
        self._gc_start = 0.0
        gc.callbacks.append(self._gc)
        atexit.register(self.dump)

    def _gc(self, phase: str, info: dict[str, Any]) -> None:
        """Each garbage collection of the process, on whichever thread ran it."""
        if phase == "start":
            self._gc_start = time.perf_counter()
        else:
            self.lines.append(json.dumps({"gc": info["generation"], "ms": round(
                (time.perf_counter() - self._gc_start) * 1e3, 3), "at": time.monotonic()}))

    def wrap(self, fn: Callable[[Any], None]) -> Callable[[Any], None]:
        def traced(update: Any) -> None:
            self.profile.enable()
            try:
                fn(update)
            finally:
                self.profile.disable()
        return traced

    def note(self, record: dict[str, Any]) -> None:
        with self.lock:
            self.lines.append(json.dumps(record))

    def dump(self) -> None:
        with self.lock:
            self.profile.dump_stats(str(self.directory / "notifier.prof"))
            lines, self.lines = self.lines, []
        with (self.directory / "updates.jsonl").open("a") as f:
            f.writelines(line + "\n" for line in lines)


def from_environment() -> Trace | None:
    """A `Trace` if the environment asks for one."""
    where = os.environ.get(ENV)
    return Trace(Path(where)) if where else None
