"""The hardware adapter: wired player buttons, the lamp, LEDs and a beeper over gpiozero.

It knows nothing of rules. It needs a ``submit(command)`` callable (the game loop's
`GameLoop.submit`) for presses, and follows the engine's ``view(state, "hardware")`` through a
loop subscriber for the outputs. The composition root (`svoyak serve`) calls `start`::

    hw = gpio.start(loop.submit, loop.subscribe, pins_path=args.pins, simulate=args.simulate)
    hw.press(2, by="key")   # a simulated press (keyboard key, phone): the same path
    hw.status()             # factory, warnings, per-seat pressed/stuck, for the host screen
    hw.close()
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from appliance.rules import protocol

from .buttons import Buttons, Edge, HostButton, PlayerButton
from .factory import (
    WIRING_SECTION,
    Choice,
    GpioUnavailable,
    TickPin,
    choose,
    mock_factory,
    ticks_to_ns,
)
from .outputs import Outputs
from .pinmap import PinMap, PinMapError, resolve

__all__ = [
    "WIRING_SECTION", "Buttons", "Choice", "Edge", "Fault", "GpioUnavailable", "Hardware",
    "HostButton", "Outputs", "PinMap", "PinMapError", "PlayerButton", "TickPin", "choose",
    "mock_factory", "start", "ticks_to_ns",
]


class Hardware:
    """Buttons, host reset button and outputs of one pin map, on one pin factory."""

    def __init__(self, pin_map: PinMap, submit: Callable[[protocol.Command], Any],
                 choice: Choice, *, clock: Callable[[], int] = time.monotonic_ns,
                 on_status: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.pin_map = pin_map
        self.choice = choice
        self.factory = choice.factory
        self.submit = submit
        self.outputs = Outputs(pin_map, self.factory)
        self.host_button: HostButton | None = None
        try:
            self.buttons = Buttons(pin_map, submit, self.factory, clock=clock,
                                   on_status=on_status)
            if pin_map.reset:
                self.host_button = HostButton(pin_map.reset, self._reset, pin_map.bounce_ns,
                                              pin_factory=self.factory)
        except BaseException:
            self.close()
            raise

    @property
    def simulated(self) -> bool:
        return self.choice.simulated

    def _reset(self, t_ns: int) -> None:
        self.submit(protocol.Command(self.pin_map.reset_command, t_ns, {}, protocol.HOST))

    def press(self, seat: int, t_ns: int | None = None, by: str = "key") -> int:
        """A simulated press entering the same path as a wired one; returns its tick."""
        return self.buttons.press(seat, t_ns, by)

    def on_update(self, update: Any) -> None:
        """The game-loop subscriber (inline, early): the outputs follow the hardware view."""
        self.outputs.on_update(update)

    def add_status_listener(self, fn: Callable[[dict[str, Any]], None]) -> None:
        self.buttons.add_status_listener(fn)

    def status(self) -> dict[str, Any]:
        """For the host's screen: which factory, why simulated, stuck buttons, outputs."""
        return {
            "factory": self.choice.name, "simulated": self.simulated,
            "warnings": [self.choice.warning] if self.choice.warning else [],
            "pins": self.pin_map.source,
            **self.buttons.status(), "outputs": self.outputs.state(),
        }

    def close(self) -> None:
        for part in (getattr(self, "buttons", None), self.host_button, self.outputs):
            if part is not None:
                part.close()


class Fault:
    """The buttons that could not start, in `Hardware`'s place for the screens.

    `status()` has the same shape as `Hardware.status()` plus ``fault``: ``kind`` ("gpio":
    the chip cannot be opened; "pins": the pin map is invalid), ``reason`` and ``check``
    (the wiring doc section), which the host's banner shows. No seat, no simulator.
    """

    simulated = False

    def __init__(self, error: BaseException) -> None:
        self.kind = "pins" if isinstance(error, PinMapError) else "gpio"
        if isinstance(error, GpioUnavailable):
            self.reason = error.reason
        else:
            self.reason = str(error) or type(error).__name__

    def status(self) -> dict[str, Any]:
        return {"factory": None, "simulated": False, "warnings": [], "pins": None,
                "seats": [], "stuck": [], "outputs": {},
                "fault": {"kind": self.kind, "reason": self.reason, "check": WIRING_SECTION}}

    def close(self) -> None:
        pass


def start(submit: Callable[[protocol.Command], Any], subscribe: Callable[..., Any],
          pins_path: str | os.PathLike[str] | None = None, simulate: bool = False, *,
          data_dir: str | os.PathLike[str] | None = None,
          on_status: Callable[[dict[str, Any]], None] | None = None,
          choice: Choice | None = None) -> Hardware:
    """Wire the hardware to a game loop: presses go to `submit`, outputs follow `subscribe`.

    The pin map is `pins_path`, else DATA/pins.toml, else the built-in map (raises
    `PinMapError` for a bad map). lgpio, or `GpioUnavailable` when the chip cannot be
    opened; the mock factory only with `simulate`. The caller shows either error through
    `Fault` (never falls back to simulated buttons by itself).
    """
    pin_map = resolve(pins_path, data_dir)
    hw = Hardware(pin_map, submit, choice or choose(simulate), on_status=on_status)
    # Early: the lamp and the winner's LED follow a settle window's decision before its
    # commit's fsync (the decision follows from presses already in the log).
    subscribe(hw.on_update, inline=True, early=True)
    return hw
