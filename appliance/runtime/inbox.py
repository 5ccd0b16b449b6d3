"""The game loop's inbox («очередь команд»): bounded, with one capacity per source.

Three sources («полосы») share one first-in-first-out queue, each with its own room:

- ``buttons``: the wired buttons (a command ``by`` ``"button"``);
- ``host``: the host tablet, scripts, the tournament director, other boxes' rooms, new games
  (``by`` ``"host"``, and the loop's own ``"loop"``);
- ``screens``: everything a phone or a simulator sends (``"phone"``, ``"key"``, ``"sim"``,
  ``"player:N"``, anything else).

A source whose room is full is refused at once (`put` returns False and counts it); the other
sources are untouched, so no storm of phone commands can crowd out a wired press or the host.

Why one queue in arrival order rather than a queue per source served by priority: the loop
decides commands in the order they arrived, and fires a deadline only once every command that
arrived before it is decided. Serving a wired press ahead of a phone command that arrived
earlier could let a deadline fall between the two (the phone's command would then be decided
against a state it arrived before), and serving the host ahead of a press could put a press
after the ``announce`` it preceded. So sources get separate room, not separate order; the
screens' room is kept small so that what waits ahead of a wired press is bounded.
"""

from __future__ import annotations

import queue
import threading
from collections import Counter
from collections.abc import Mapping
from typing import Any

from appliance.rules.protocol import HOST, LOOP

BUTTONS = "buttons"
HOST_LANE = "host"
SCREENS = "screens"

# Room per source. Wired buttons: 16 seats, each debounced at the edge, can never queue this
# many. Host: a tablet waits for each answer, scripts and the director a few at a time.
# Screens: one command in flight per phone socket (each handler waits for its answer), so
# 128 serves a full room of 120 phones pressing at once; beyond that a phone is told the box
# is busy. The web UI refuses earlier still (webui/inbound.py INBOX_HIGH_WATER).
CAPACITY: Mapping[str, int] = {BUTTONS: 1024, HOST_LANE: 256, SCREENS: 128}


def lane_of(by: str) -> str:
    """The source a command's sender belongs to (see the module docstring)."""
    if by == "button":
        return BUTTONS
    if by in (HOST, LOOP):
        return HOST_LANE
    return SCREENS


class Inbox:
    """A `queue.SimpleQueue` (the loop sleeps on it until its next deadline) with a count of
    what each source holds in it. Control items (wake, stop) have no source and no limit."""

    def __init__(self, capacity: Mapping[str, int] = CAPACITY) -> None:
        self.capacity = dict(capacity)
        self._queue: queue.SimpleQueue[tuple[str | None, int, Any]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._held = dict.fromkeys(self.capacity, 0)
        self._refused = dict.fromkeys(self.capacity, 0)
        self._arrivals: Counter[int] = Counter()  # of the items queued, by arrival

    def put(self, item: Any, lane: str | None = None, arrival_ns: int = 0) -> bool:
        """Queue `item` for `lane`; False (and counted) if that source's room is full.
        `arrival_ns`: when it reached the box (box clock; see `earliest`)."""
        if lane is not None:
            with self._lock:
                if self._held[lane] >= self.capacity[lane]:
                    self._refused[lane] += 1
                    return False
                self._held[lane] += 1
                self._arrivals[arrival_ns] += 1
        self._queue.put((lane, arrival_ns, item))
        return True

    def get(self, timeout: float | None = None) -> Any:
        """The oldest item; raises `queue.Empty` after `timeout` seconds."""
        lane, arrival, item = self._queue.get(timeout=timeout)
        if lane is not None:
            with self._lock:
                self._held[lane] -= 1
                self._arrivals[arrival] -= 1
                if not self._arrivals[arrival]:
                    del self._arrivals[arrival]
        return item

    def earliest(self) -> int | None:
        """The earliest arrival among the items queued (control items aside), or None."""
        with self._lock:
            return min(self._arrivals) if self._arrivals else None

    def empty(self) -> bool:
        return self._queue.empty()

    def pending(self, lane: str | None = None) -> int:
        """Items a source holds (all sources: `lane` None)."""
        with self._lock:
            return self._held[lane] if lane is not None else sum(self._held.values())

    def refused(self) -> dict[str, int]:
        """How many items each source had refused because its room was full."""
        with self._lock:
            return dict(self._refused)
