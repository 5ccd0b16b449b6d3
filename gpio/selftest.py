"""The wiring self-test for the club's technician (`svoyak buttons test`).

It lights the lamp and each LED in turn (and beeps), then prints every press live: player,
pin, and time since the previous press. A button whose contact bounces (several edges inside
the bounce window) gets a warning, so a bad button or cable is found before the game, not
during it. A button held at start-up or for too long is reported as stuck.

With a mock factory (``--simulate`` or off a Pi) presses come from the keyboard: type a seat
number and Enter (``2``), add ``b`` for a bouncing press (``2b``), ``r`` for the host reset
button, ``q`` to finish.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import TextIO

from .buttons import Buttons, Edge, HostButton
from .factory import Choice, TickPin
from .outputs import Outputs
from .pinmap import PinMap

WARN_EDGES = 4  # edges of one burst (inside the bounce window) that earn a warning


def pin_table(pin_map: PinMap) -> str:
    lines = [f"{'role':<10} {'pin':<7} header pin"]
    lines += [f"{role:<10} {pin:<7} {phys}" for role, pin, phys in pin_map.rows()]
    return "\n".join(lines)


class Reporter:
    """Turns the buttons' edges into the lines a technician reads."""

    def __init__(self, pin_map: PinMap, out: TextIO) -> None:
        self.pin_map = pin_map
        self.out = out
        self.last_press: int | None = None
        self.warned: set[tuple[int, int]] = set()  # (seat, burst start) already warned
        self.burst_start: dict[int, int] = {}
        self._lock = threading.Lock()

    def say(self, line: str) -> None:
        with self._lock:
            print(line, file=self.out, flush=True)

    def __call__(self, e: Edge) -> None:
        who = f"button {e.seat + 1} ({e.pin or 'no pin'})"
        if e.verdict == "press":
            self.burst_start[e.seat] = e.t_ns
            since = ("first press" if self.last_press is None
                     else f"+{(e.t_ns - self.last_press) / 1e6:.1f} ms since the previous press")
            self.last_press = e.t_ns
            self.say(f"PRESS  player {e.seat + 1}  {e.pin or '-':<7} {since}"
                     + ("" if e.by == "button" else f"  [{e.by}]"))
        elif e.verdict == "held":
            self.say(f"STUCK  {who} held for over {self.pin_map.stuck_ns / 1e9:g} s: "
                     "ignored until released")
        elif e.verdict == "stuck":
            pass
        elif e.burst + 1 >= WARN_EDGES:
            key = (e.seat, self.burst_start.get(e.seat, 0))
            if key not in self.warned:
                self.warned.add(key)
                self.say(f"WARN   {who}: {e.burst + 1}+ edges within "
                         f"{self.pin_map.bounce_ns / 1e6:.0f} ms: the contact bounces "
                         "(only the first edge counts); check the button and its cable")


def light_show(outputs: Outputs, pin_map: PinMap, step_s: float, say: Callable[[str], None]
               ) -> None:
    """Lamp, then each LED, then one beep, each for `step_s`."""
    if outputs.lamp is not None:
        say(f"lamp   {pin_map.lamp} on")
        outputs.lamp.on()
        time.sleep(step_s)
        outputs.lamp.off()
    else:
        say("lamp   (none in the map)")
    for i, led in enumerate(outputs.leds):
        say(f"LED {i + 1}  {pin_map.leds[i]} on")
        led.on()
        time.sleep(step_s)
        led.off()
    if outputs.beeper is not None:
        say(f"beeper {pin_map.beeper} beep")
        outputs.beeper.on()
        time.sleep(min(step_s, 0.3))
        outputs.beeper.off()


def run(pin_map: PinMap, choice: Choice, out: TextIO = sys.stdout, *, step_s: float = 0.5,
        seconds: float | None = None, keys: Iterable[str] | None = None) -> dict:
    """The whole self-test; returns the buttons' final status. `keys` (simulated factory
    only): lines of seat numbers to press; None with a mock factory reads stdin."""
    rep = Reporter(pin_map, out)
    rep.say(f"Pin map: {pin_map.source}; pin factory: {choice.name}"
            + (f" ({choice.warning})" if choice.warning else ""))
    rep.say(pin_table(pin_map))
    outputs = Outputs(pin_map, choice.factory)
    buttons: Buttons | None = None
    host: HostButton | None = None
    try:
        light_show(outputs, pin_map, step_s, rep.say)
        buttons = Buttons(pin_map, lambda cmd: None, choice.factory, on_edge=rep)
        if pin_map.reset:
            host = HostButton(pin_map.reset, lambda t: rep.say(f"RESET  host button "
                                                                f"{pin_map.reset}"),
                              pin_map.bounce_ns, pin_factory=choice.factory)
        for s in buttons.status()["stuck"]:
            rep.say(f"STUCK  button {s + 1} ({pin_map.buttons[s]}) is held at start-up: "
                    "ignored until released")
        if choice.simulated:
            rep.say("Simulated buttons: type a seat number and Enter (add 'b' for a bouncing "
                    "press), 'r' for the host reset button, 'q' to finish.")
            _keyboard(buttons, choice, pin_map, sys.stdin if keys is None else keys, rep)
        else:
            rep.say("Press each button in turn; Ctrl-C to finish.")
            try:
                if seconds is None:
                    threading.Event().wait()
                else:
                    time.sleep(seconds)
            except KeyboardInterrupt:
                pass
        buttons.drain()
        status = buttons.status()
        rep.say("Summary:")
        for s in status["seats"]:
            if s["pin"] is None:
                continue
            state = ("STUCK" if s["stuck"] else "not pressed" if not s["presses"]
                     else f"{s['presses']} press(es), {s['bounces']} bounce edge(s) dropped")
            rep.say(f"  button {s['seat'] + 1} {s['pin']:<7} {state}")
        return status
    finally:
        for part in (buttons, host, outputs):
            if part is not None:
                part.close()


def _keyboard(buttons: Buttons, choice: Choice, pin_map: PinMap, lines: Iterable[str],
              rep: Reporter) -> None:
    for raw in lines:
        line = raw.strip().lower()
        if line in ("q", "quit", "exit"):
            return
        if line == "r" and pin_map.reset:
            reset = choice.factory.pin(pin_map.reset)
            assert isinstance(reset, TickPin)
            reset.press()
            reset.release()
            continue
        bouncy = line.endswith("b")
        digits = line.rstrip("b")
        if not digits.isdigit() or not 1 <= int(digits) <= len(pin_map.buttons):
            rep.say(f"(type 1..{len(pin_map.buttons)}, optionally with 'b', or q)")
            continue
        pin = choice.factory.pin(pin_map.buttons[int(digits) - 1])
        assert isinstance(pin, TickPin)
        bounces = 3 if bouncy else 0
        t = pin.press(bounces=bounces)
        pin.release(t + (2 * bounces + 1) * 400_000 + 1_000_000)
        buttons.drain()
