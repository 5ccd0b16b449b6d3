"""Pin factories, and the one place where gpiozero's ticks become our nanoseconds.

On a Raspberry Pi gpiozero uses lgpio. lgpio reads each edge from the kernel's GPIO character
device, whose ``timestamp_ns`` is taken in the interrupt handler on CLOCK_MONOTONIC (lgpio
only switches to the real-time clock when asked with ``LG_SET_REALTIME_CLOCK``, and gpiozero
never asks). gpiozero hands it to ``pin.when_changed(ticks, state)`` as *seconds*
(``timestamp_ns / 1e9``, a float). `ticks_to_ns` turns that back into integer nanoseconds on
the same clock as `time.monotonic_ns`, which is the clock of every command's ``t_ns``.

A float of seconds carries 53 bits, so the round trip is exact for ticks below 1e15 ns (11 days
of uptime) and within 1 ns up to 1e16 ns (116 days) (measured: 200,000 random ticks per
decade), far below the microsecond accuracy of the interrupt timestamp itself.

With ``--simulate`` (a laptop, CI) pins come from gpiozero's `MockFactory` with `TickPin`,
a mock pin that can deliver an edge stamped with an exact tick, exactly as lgpio would:
``pin.edge(level, t_ns)``. Without it, a GPIO chip that cannot be opened is an error
(`GpioUnavailable`), never a quiet switch to mock pins.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from gpiozero import Factory
from gpiozero.pins.mock import MockFactory, MockPin
from gpiozero.pins.pi import PiPin

log = logging.getLogger(__name__)

# A Raspberry Pi 4 Model B: the mock factory then offers the same 40-pin header.
MOCK_REVISION = "c03112"


def ticks_to_ns(ticks: float) -> int:
    """gpiozero ticks (seconds on CLOCK_MONOTONIC, lgpio and mock alike) -> integer ns."""
    return round(ticks * 1_000_000_000)


STATE_HISTORY = 256  # output changes a mock pin remembers (TickPin._change_state)


class TickPin(MockPin):
    """A mock pin whose edges carry exact ticks, and which can be wired as held.

    ``edge(level, t_ns)`` sets the level and calls the pin's handler with
    ``(t_ns / 1e9, level)``, the very form lgpio's callback takes in gpiozero; nothing reads a
    clock. ``hold(level)`` before a device claims the pin models a button stuck pressed at
    start-up: the internal pull resistor cannot pull the line away from it.
    """

    def __init__(self, factory: MockFactory, info: object) -> None:
        self._held: bool | None = None
        super().__init__(factory, info)

    def _change_state(self, value: bool) -> bool:
        # MockPin records every change of an output in `states` (for its own assertions)
        # and never forgets one: a simulated evening's lamp and LEDs grew it by about
        # 0.4 kB a question. Keep the last STATE_HISTORY changes, trimmed in halves so a
        # change stays O(1) amortized; tests look back a few dozen at most.
        changed: bool = super()._change_state(value)
        if len(self.states) > 2 * STATE_HISTORY:
            del self.states[:-STATE_HISTORY]
        return changed

    def hold(self, level: bool | None) -> None:
        self._held = level
        if level is not None:
            self._state = bool(level)

    def _set_pull(self, value: str) -> None:
        if self._held is None:
            super()._set_pull(value)
        else:
            self._pull = value  # the wire wins over the pull resistor

    def edge(self, level: bool, t_ns: int) -> None:
        """Deliver one edge stamped `t_ns` (monotonic ns), as the kernel would."""
        assert self._function == "input", f"{self!r} is not an input"
        self._state = bool(level)
        self._last_change = t_ns / 1_000_000_000
        wanted = "rising" if level else "falling"
        if self._when_changed is not None and self._edges in ("both", wanted):
            PiPin._call_when_changed(self, t_ns / 1_000_000_000, int(bool(level)))

    def press(self, t_ns: int | None = None, *, bounces: int = 0, gap_ns: int = 400_000,
              active_low: bool = True) -> int:
        """A press with `bounces` extra edge pairs `gap_ns` apart; returns the first tick."""
        t = time.monotonic_ns() if t_ns is None else t_ns
        down = not active_low
        self.edge(down, t)
        for i in range(bounces):
            self.edge(not down, t + (2 * i + 1) * gap_ns)
            self.edge(down, t + (2 * i + 2) * gap_ns)
        return t

    def release(self, t_ns: int | None = None, *, active_low: bool = True) -> None:
        self.edge(active_low, time.monotonic_ns() if t_ns is None else t_ns)


# Where a club finds what to check; the host's banner and `svoyak buttons test` name it.
WIRING_SECTION = "docs/wiring.md, «When the buttons do not start»"


class GpioUnavailable(RuntimeError):
    """The GPIO chip cannot be opened (no lgpio, no /dev/gpiochip*, no permission, lgpio's
    notification files not writable) and the simulator was not asked for.

    Never swallowed into simulated buttons: a box whose wired buttons silently do nothing
    loses the evening. ``reason`` is the underlying error, ``check`` what to look at.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        self.check = WIRING_SECTION
        super().__init__(f"the GPIO pins cannot be used: {reason}; wired buttons are off "
                         f"(check {WIRING_SECTION})")


@dataclass(frozen=True, slots=True)
class Choice:
    """The factory in use, its name for the host's screen, and why a mock was chosen."""

    factory: Factory
    name: str  # "lgpio" or "mock"
    warning: str | None = None

    @property
    def simulated(self) -> bool:
        return self.name == "mock"


def mock_factory() -> MockFactory:
    return MockFactory(revision=MOCK_REVISION, pin_class=TickPin)


def choose(simulate: bool = False) -> Choice:
    """The mock factory with `--simulate`; otherwise lgpio, or `GpioUnavailable`.

    lgpio is opened here, not later: its chip handle and its notification pipe (a file
    ``.lgd-nfy*`` made in ``LG_WD`` or the working directory, then opened by a path relative
    to the working directory) fail now or never. The unit gives the service a writable
    working directory for exactly this (provisioning/roles/app).
    """
    if simulate:
        return Choice(mock_factory(), "mock")
    try:
        from gpiozero.pins.lgpio import LGPIOFactory

        return Choice(LGPIOFactory(), "lgpio")
    except Exception as e:  # ImportError off a Pi; lgpio.error without /dev/gpiochip access
        why = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        log.error("GPIO unavailable: %s (check %s)", why, WIRING_SECTION)
        raise GpioUnavailable(why) from e
