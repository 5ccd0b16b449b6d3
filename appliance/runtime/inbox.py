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
arrived before it is decided. Serving the host ahead of a press could put a press after the
``announce`` it preceded. Serving a wired press P ahead of screens commands S1..Sk queued
before it (arrived at a1 <= ... <= ak <= aP) would change no decision only if each Si is
decided the same with P already in the state and P the same without them, and that does not
hold in general:

- the arbiter orders presses by tick only in choosing the winner (`arbiter.settle` takes the
  lowest tick among the candidates, and a press's status depends on its own seat's earlier
  presses and on the lamp, not on other seats'); `Race.presses` keeps the order the presses
  were decided in, so the state differs (the views sort it by tick);
- a command's decision depends on the deadlines due by its arrival (`RunningGame.run` feeds
  them first; the engines catch up to the arrival themselves, and a TV press that arrives
  past its own settle window settles at once). Those deadlines are made by the very
  commands being reordered: S1, a phone press, opens a window at its tick plus the settle
  window, which may close before aP, so in arrival order P meets a decided race and is late,
  while served first P would be a candidate. P's own window, when its edge reached the box
  late, may close before a1, and served first it would settle before S1 is decided. So "no
  deadline between a1 and aP" cannot be checked before the commands between are decided;
- a screens command other than a press (a bet, a written answer, a seat taken) has no order
  with a press that the arbiter restores.

And where it is safe it gains nothing for the lamp: the deadline that lights it fires only
after every command that arrived before it is decided, so it waits for S1..Sk either way; only
P's own future would resolve sooner. So sources get separate room, not separate order; the
screens' room is kept small so that what waits ahead of a wired press is bounded. (What the
box does do for a wired press queued behind a commit is in `appliance.runtime.lampwatch`.)
"""

from __future__ import annotations

import queue
import threading
from collections import Counter, deque
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
        self._items: deque[tuple[int, str, Any]] = deque()  # the same, in queue order

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
                self._items.append((arrival_ns, lane, item))
                self._queue.put((lane, arrival_ns, item))  # in the same order as `_items`
                return True
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
                self._items.popleft()
        return item

    def earliest(self) -> int | None:
        """The earliest arrival among the items queued (control items aside), or None."""
        with self._lock:
            return min(self._arrivals) if self._arrivals else None

    def before(self, arrival_ns: int) -> list[tuple[str, Any]]:
        """(source, item) of the items queued (control items aside) that arrived before
        `arrival_ns`, in the order the loop will take them."""
        with self._lock:
            return [(lane, item) for at, lane, item in self._items if at < arrival_ns]

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
