"""Player buttons: kernel-stamped edges in, `press` commands out.

Two layers, as in gpiozero:

- `PlayerButton` is an input device on one pin. Its edge handler runs on lgpio's callback
  thread with the kernel's tick (not the time Python noticed the edge). (gpiozero keeps only
  a weak reference to the handler: `Buttons` holds the devices.)
- `Buttons` owns the devices and decides, per seat, in the handler itself (a few comparisons
  under a lock, nothing that waits):

  * **bounce**: a press edge counts only when that seat had no edge (either way) in the
    previous bounce window (default 30 ms). The first edge of a burst counts at once, with its
    own tick; the rest of the burst, and the chatter of a contact opening, are dropped. No
    gpiozero/lgpio ``bounce_time``: that would stamp a press at its *last* bounce.
  * **stuck**: a button held at start-up, or held longer than ``stuck_after_s`` (10 s), is
    reported (`status`, status listeners, the log) and ignored until it is released.
  * a counted press becomes ``protocol.press(seat, t_ns, by="button", at_ns=arrival)`` and is
    handed to ``submit``, which must only enqueue (`GameLoop.submit` puts it on the loop's
    inbox and returns). ``t_ns`` is the kernel's tick; ``at_ns`` is when the edge reached
    Python, which the loop uses to order the press against the settle deadline.

  Everything that may be slow (status listeners, the self-test's printing, the stuck timer)
  runs on a separate watcher thread fed by a queue, so no consumer can delay a button. An
  earlier version handed every edge to an intake thread first; on a loaded machine that hop
  alone cost up to 5–8 ms at p99 (bench/gpio_latency.py), more than the 5 ms settle window.

Presses from the keyboard or a phone in simulator mode enter the same path through
`Buttons.press`, so they meet the same bounce rule and the same ``submit``.
Presses from a pin not in the map cannot exist: only mapped pins get a handler, and each
handler carries its seat.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpiozero import Factory, InputDevice

from appliance.rules import protocol

from .factory import ticks_to_ns
from .pinmap import PinMap

log = logging.getLogger(__name__)

Submit = Callable[[protocol.Command], Any]
Clock = Callable[[], int]


@dataclass(frozen=True, slots=True)
class Edge:
    """One edge and its verdict (for the self-test and the bench)."""

    seat: int
    pin: str | None
    t_ns: int
    pressed: bool
    by: str
    verdict: str  # "press", "bounce", "release", "stuck", "held"
    burst: int = 0  # edges of this seat inside the bounce window so far (bounce verdicts)


class PlayerButton(InputDevice):
    """A player's button on one pin, wired to ground with the internal pull-up.

    Unlike gpiozero's `Button`, the handler receives the pin's ticks (the kernel's timestamp),
    and it only enqueues.
    """

    def __init__(self, pin: str, seat: int, sink: Callable[[int, int, bool], None], *,
                 pin_factory: Factory | None = None) -> None:
        super().__init__(pin, pull_up=True, pin_factory=pin_factory)
        self.seat = seat
        self._sink = sink
        try:
            self.pin.bounce = None
            self.pin.edges = "both"
            self.pin.when_changed = self._pin_changed
        except BaseException:
            self.close()
            raise

    def _pin_changed(self, ticks: float, state: int) -> None:
        self._sink(self.seat, ticks_to_ns(ticks), bool(self._state_to_value(state)))


class HostButton(InputDevice):
    """The optional host reset button: a debounced press calls `on_press(t_ns)`."""

    def __init__(self, pin: str, on_press: Callable[[int], None], bounce_ns: int, *,
                 pin_factory: Factory | None = None) -> None:
        super().__init__(pin, pull_up=True, pin_factory=pin_factory)
        self._on_press = on_press
        self._bounce_ns = bounce_ns
        self._last: int | None = None
        try:
            self.pin.edges = "both"
            self.pin.when_changed = self._pin_changed
        except BaseException:
            self.close()
            raise

    def _pin_changed(self, ticks: float, state: int) -> None:
        t = ticks_to_ns(ticks)
        quiet = self._last is None or t - self._last >= self._bounce_ns
        self._last = t
        if quiet and self._state_to_value(state):
            self._on_press(t)


class _Seat:
    __slots__ = ("seat", "pin", "pressed", "stuck", "last_edge", "since", "burst",
                 "presses", "bounces")

    def __init__(self, seat: int, pin: str | None) -> None:
        self.seat = seat
        self.pin = pin
        self.pressed = False
        self.stuck = False
        self.last_edge: int | None = None
        self.since: int | None = None  # pressed since this tick (for stuck detection)
        self.burst = 0
        self.presses = 0
        self.bounces = 0


_STOP = object()


class Buttons:
    """The player buttons of one pin map, feeding `submit` with press commands."""

    def __init__(self, pin_map: PinMap, submit: Submit, factory: Factory, *,
                 clock: Clock = time.monotonic_ns,
                 on_status: Callable[[dict[str, Any]], None] | None = None,
                 on_edge: Callable[[Edge], None] | None = None) -> None:
        self.pin_map = pin_map
        self.submit = submit
        self.clock = clock
        self.on_edge = on_edge
        self._listeners: list[Callable[[dict[str, Any]], None]] = []
        if on_status is not None:
            self._listeners.append(on_status)
        self._reports: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        # Wired seats by seat number; simulated sources by (seat, by).
        self._seats: dict[Any, _Seat] = {i: _Seat(i, p) for i, p in enumerate(pin_map.buttons)}
        self.submitted = 0
        self.devices: list[PlayerButton] = []
        try:
            for seat, pin in enumerate(pin_map.buttons):
                self.devices.append(PlayerButton(pin, seat, self._pin_edge, pin_factory=factory))
        except BaseException:
            self.close()
            raise
        # Held at start-up: stuck until released.
        for dev in self.devices:
            with self._lock:
                if not dev.is_active:
                    continue
                s = self._seats[dev.seat]
                s.pressed = s.stuck = True
                s.since = clock()
                log.warning("button %d (%s) is held at start-up: ignored until released",
                            dev.seat + 1, s.pin)
        self._thread = threading.Thread(target=self._watch, name="gpio-watcher", daemon=True)
        self._thread.start()

    # -- inputs --------------------------------------------------------------------------
    def _pin_edge(self, seat: int, t_ns: int, pressed: bool) -> None:
        """The pin handler (lgpio's callback thread): decide, hand a press to `submit`."""
        self._edge(seat, t_ns, pressed, "button", self.clock())

    def press(self, seat: int, t_ns: int | None = None, by: str = "key") -> int:
        """A simulated press (keyboard key, phone): the same path as a wired button's.

        Stamped `t_ns` (default: now, on the monotonic clock). Any seat may press, including
        seats without a wired button (phones); the engine refuses players it does not know.
        Returns the tick used.
        """
        if seat < 0:
            raise ValueError("seat must be 0 or more")
        now = self.clock()
        t = now if t_ns is None else t_ns
        self._edge(seat, t, True, by, now)
        self._edge(seat, t, False, by, now)
        return t

    def add_status_listener(self, fn: Callable[[dict[str, Any]], None]) -> None:
        """`fn(status)` after a button becomes stuck or is released (watcher thread)."""
        self._listeners.append(fn)

    def _edge(self, seat: int, t_ns: int, pressed: bool, by: str, at_ns: int) -> None:
        # Simulated presses keep their own per-source state: a phone's release must not free
        # a wired button that is stuck, nor a key press bounce-mask the wired one.
        key: Any = seat if by == "button" else (seat, by)
        with self._lock:
            s = self._seats.get(key)
            if s is None:
                s = self._seats[key] = _Seat(seat, None)
            prev = s.last_edge
            quiet = prev is None or t_ns - prev >= self.pin_map.bounce_ns
            s.last_edge = t_ns if prev is None else max(prev, t_ns)
            s.burst = 0 if quiet else s.burst + 1
            s.pressed = pressed
            freed = False
            if not pressed:
                s.since = None
                freed, s.stuck = s.stuck, False
                verdict = "release"
            elif s.stuck:
                verdict = "stuck"
            elif quiet:
                s.since = t_ns
                s.presses += 1
                verdict = "press"
            else:
                if s.since is None:
                    s.since = t_ns
                s.bounces += 1
                verdict = "bounce"
            edge = Edge(seat, s.pin, t_ns, pressed, by, verdict, s.burst)
        if verdict == "press":
            self._submit(protocol.press(seat, t_ns, by=by, at_ns=at_ns))
        if self.on_edge is not None or freed or pressed:
            self._reports.put((edge, freed))  # the watcher reports, and re-arms its timer

    # -- the watcher thread --------------------------------------------------------------
    def _watch(self) -> None:
        if any(s.stuck for s in self._seats.values()):
            self._notify()
        while True:
            deadline = self._next_stuck_deadline()
            timeout = None if deadline is None else max(0.0, (deadline - self.clock()) / 1e9)
            try:
                item = self._reports.get(timeout=timeout)
            except queue.Empty:
                item = None
            if item is _STOP:
                return
            try:
                if isinstance(item, threading.Event):
                    item.set()
                elif item is not None:
                    edge, freed = item
                    if self.on_edge is not None:
                        self.on_edge(edge)
                    if freed:
                        log.warning("button %d (%s) released: counted again", edge.seat + 1,
                                    edge.pin)
                        self._notify()
                self._check_stuck()
            except Exception:  # a bug here must not stop the reports for the rest of the game
                log.exception("gpio watcher failed on %r", item)

    def _submit(self, cmd: protocol.Command) -> None:
        self.submitted += 1
        try:
            self.submit(cmd)
        except Exception:
            log.exception("could not submit %r", cmd)

    def _next_stuck_deadline(self) -> int | None:
        with self._lock:
            due = [s.since + self.pin_map.stuck_ns for s in self._seats.values()
                   if s.pressed and not s.stuck and s.since is not None]
        return min(due) if due else None

    def _check_stuck(self) -> None:
        now = self.clock()
        newly = []
        with self._lock:
            for s in self._seats.values():
                if (s.pressed and not s.stuck and s.since is not None
                        and now - s.since >= self.pin_map.stuck_ns):
                    s.stuck = True
                    newly.append(s)
        for s in newly:
            log.warning("button %d (%s) held for over %g s: ignored until released",
                        s.seat + 1, s.pin, self.pin_map.stuck_ns / 1e9)
            if self.on_edge is not None:
                self.on_edge(Edge(s.seat, s.pin, now, True, "button", "held"))
        if newly:
            self._notify()

    def _notify(self) -> None:
        status = self.status()
        for fn in list(self._listeners):
            try:
                fn(status)
            except Exception:
                log.exception("status listener failed")

    # -- queries and life cycle ----------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Per-seat state of the wired buttons for the host's screen: pin, pressed, stuck,
        counters."""
        with self._lock:
            seats = [{"seat": s.seat, "pin": s.pin, "pressed": s.pressed, "stuck": s.stuck,
                      "presses": s.presses, "bounces": s.bounces}
                     for k, s in sorted(self._seats.items(), key=lambda kv: kv[1].seat)
                     if isinstance(k, int)]
        return {"seats": seats, "stuck": [s["seat"] for s in seats if s["stuck"]]}

    def drain(self, timeout: float = 2.0) -> None:
        """Wait until the watcher has reported every edge so far (tests, bench, self-test);
        presses themselves are submitted before the edge handler returns."""
        done = threading.Event()
        self._reports.put(done)
        if not done.wait(timeout):
            raise TimeoutError("gpio watcher did not drain")

    def close(self) -> None:
        if getattr(self, "_thread", None) is not None and self._thread.is_alive():
            self._reports.put(_STOP)
            self._thread.join(timeout=2)
        for dev in self.devices:
            dev.close()
        self.devices = []
