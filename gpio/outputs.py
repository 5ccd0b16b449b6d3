"""Lamp, LEDs and beeper: outputs that follow the game's hardware view.

The engine's ``view(state, "hardware")`` is a small dict::

    {"lamp": bool, "answering": seat | None, "queue": [seats], "false_starts": int}

`Outputs.show` makes the pins say exactly that: the lamp («сигнал») is on while pressing is
allowed; the answering player's LED is lit; the next player in the queue blinks; the beeper
sounds once for every new false start («фальстарт») when the map's option says so.
Only changes touch the pins, so `show` is cheap enough to run on the game loop's own thread
(``loop.subscribe(outputs.on_update, inline=True)``) right after each commit.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from gpiozero import LED, Buzzer, DigitalOutputDevice, Factory

from .pinmap import PinMap

log = logging.getLogger(__name__)

BLINK_S = 0.15
BEEP_S = 0.25

_START = object()
DARK: dict[str, Any] = {"lamp": False, "answering": None, "queue": [], "false_starts": 0}


class Outputs:
    """The output devices of one pin map."""

    def __init__(self, pin_map: PinMap, factory: Factory) -> None:
        self.pin_map = pin_map
        self.lamp: DigitalOutputDevice | None = None
        self.leds: list[LED] = []
        self.beeper: Buzzer | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._lamp_on: bool | None = None
        self._led_modes: list[str] = []
        self._false_starts: int | None = None
        self._game: Any = _START
        try:
            if pin_map.lamp:
                self.lamp = DigitalOutputDevice(pin_map.lamp, pin_factory=factory,
                                                active_high=pin_map.lamp_active_high)
            self.leds = [LED(p, pin_factory=factory) for p in pin_map.leds]
            self._led_modes = ["off"] * len(self.leds)
            if pin_map.beeper:
                self.beeper = Buzzer(pin_map.beeper, pin_factory=factory,
                                     active_high=pin_map.beeper_active_high)
        except BaseException:
            self.close()
            raise
        self.show(DARK)

    def show(self, view: Mapping[str, Any]) -> None:
        """Make the pins follow a hardware view (only what changed is written)."""
        with self._lock:
            if self._closed:
                return
            lamp = bool(view.get("lamp"))
            if self.lamp is not None and lamp != self._lamp_on:
                self.lamp.value = lamp
            self._lamp_on = lamp
            answering = view.get("answering")
            queue = list(view.get("queue") or [])
            nxt = queue[0] if queue else None
            for seat, led in enumerate(self.leds):
                mode = "on" if seat == answering else "blink" if seat == nxt else "off"
                if mode != self._led_modes[seat]:
                    if mode == "on":
                        led.on()
                    elif mode == "blink":
                        led.blink(on_time=BLINK_S, off_time=BLINK_S)
                    else:
                        led.off()
                    self._led_modes[seat] = mode
            fs = int(view.get("false_starts") or 0)
            if (self.beeper is not None and self.pin_map.beep_on_false_start
                    and self._false_starts is not None and fs > self._false_starts):
                self.beeper.beep(on_time=BEEP_S, off_time=0.1, n=1)
            self._false_starts = fs

    def on_update(self, update: Any) -> None:
        """A game-loop subscriber: ``update`` has ``game``, ``rules``, ``state`` and
        ``current``.

        Only the current game's updates move the pins (`Update.current`, decided by the
        loop, as the screens follow it): a tournament's commit beside a live battle, or the
        end of a game a new one replaced, must not put the battle's lamp out.
        Never raises into the loop. The first update after start-up only sets the false-start
        count (a resumed game must not beep for old false starts); a new game starts from 0.
        """
        try:
            if not update.current:
                return
            game = getattr(update, "game", None)
            rules, state = update.rules, update.state
            view = DARK if rules is None or state is None else rules.view(state, "hardware")
            if game != self._game:
                with self._lock:
                    self._false_starts = None if self._game is _START else 0
                self._game = game
            self.show(view)
        except Exception:
            log.exception("gpio outputs could not follow the update")

    def state(self) -> dict[str, Any]:
        """What the outputs show now (for the host's screen and tests)."""
        with self._lock:
            return {"lamp": bool(self._lamp_on), "leds": list(self._led_modes)}

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for dev in [self.lamp, *self.leds, self.beeper]:
                if dev is not None:
                    try:
                        dev.close()
                    except Exception:
                        log.exception("closing %r", dev)
