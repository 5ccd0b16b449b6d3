"""The pin map: which header pin is which button, lamp, LED or beeper.

A map is a small TOML file (default ``DATA/pins.toml``; `svoyak serve --pins FILE` overrides).
Pins are named as gpiozero names them: ``"GPIO17"`` (the Broadcom number, also accepted as a
bare integer ``17``) or ``"BOARD11"`` (the physical pin of the 40-pin header). The loader
checks the whole map before any pin is touched: a pin used twice, a pin that is not a GPIO of
the header (a power or ground pin, a number that does not exist), the two ID-EEPROM pins,
or an unknown key are refused with a message that names the place in the file.

`DEFAULT_TOML` is the built-in map (used when the data directory has no ``pins.toml``) and the
template `svoyak buttons map` prints.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_BUTTONS = 8

# The Raspberry Pi 40-pin header (Pi 2/3/4/5, Zero): physical pin -> Broadcom GPIO number.
# Pins not listed are power (3V3, 5V) or ground.
HEADER: dict[int, int] = {
    3: 2, 5: 3, 7: 4, 8: 14, 10: 15, 11: 17, 12: 18, 13: 27, 15: 22, 16: 23, 18: 24, 19: 10,
    21: 9, 22: 25, 23: 11, 24: 8, 26: 7, 27: 0, 28: 1, 29: 5, 31: 6, 32: 12, 33: 13, 35: 19,
    36: 16, 37: 26, 38: 20, 40: 21,
}
BOARD_OF: dict[int, int] = {gpio: board for board, gpio in HEADER.items()}
POWER = {1: "3V3", 17: "3V3", 2: "5V", 4: "5V"}
GROUND = {6, 9, 14, 20, 25, 30, 34, 39}
# GPIO0/GPIO1 (ID_SD/ID_SC) carry the HAT identification EEPROM: never use them.
RESERVED = {0: "ID_SD (HAT EEPROM)", 1: "ID_SC (HAT EEPROM)"}

DEFAULT_TOML = """\
# Svoyak pin map. Pins: "GPIO17" (Broadcom number) or "BOARD11" (physical header pin).
# Each button is wired between its pin and a ground pin (the internal pull-up is used).
# Seat 1 is the first button, seat 2 the second, and so on.
buttons = ["GPIO17", "GPIO27", "GPIO22", "GPIO23"]  # header pins 11, 13, 15, 16
lamp = "GPIO24"                                    # header pin 18, drives the lamp module
leds = ["GPIO5", "GPIO6", "GPIO13", "GPIO19"]      # header pins 29, 31, 33, 35; [] for none
reset = "GPIO26"                                   # header pin 37; host reset button (optional)
beeper = "GPIO12"                                  # header pin 32; active piezo (optional)

[options]
lamp_active_high = true      # false for relay modules that switch on a low input
beeper_active_high = true
beep_on_false_start = true
bounce_ms = 30               # repeat edges of one button inside this window are dropped
stuck_after_s = 10           # a button held longer is reported and ignored until released
reset_command = "reset_signal"  # the command the host reset button sends
"""

_KEYS = {"buttons", "lamp", "leds", "reset", "beeper", "options"}
_OPTIONS: dict[str, type | tuple[type, ...]] = {
    "lamp_active_high": bool, "beeper_active_high": bool, "beep_on_false_start": bool,
    "bounce_ms": (int, float), "stuck_after_s": (int, float), "reset_command": str,
}


class PinMapError(ValueError):
    """The map cannot be used; the message names the file and the place."""


@dataclass(frozen=True, slots=True)
class PinMap:
    """A checked map. Pins are gpiozero names ("GPIO17"); seat N is ``buttons[N]``."""

    buttons: tuple[str, ...]
    lamp: str | None = None
    leds: tuple[str, ...] = ()
    reset: str | None = None
    beeper: str | None = None
    lamp_active_high: bool = True
    beeper_active_high: bool = True
    beep_on_false_start: bool = True
    bounce_ns: int = 30_000_000
    stuck_ns: int = 10_000_000_000
    reset_command: str = "reset_signal"
    source: str = "built-in"

    def seat_of(self, pin: str) -> int | None:
        return self.buttons.index(pin) if pin in self.buttons else None

    def rows(self) -> list[tuple[str, str, int]]:
        """(role, pin, header pin) for every pin in use, for tables and the self-test."""
        out = [(f"button {i + 1}", p, board(p)) for i, p in enumerate(self.buttons)]
        if self.lamp:
            out.append(("lamp", self.lamp, board(self.lamp)))
        out += [(f"LED {i + 1}", p, board(p)) for i, p in enumerate(self.leds)]
        if self.reset:
            out.append(("reset", self.reset, board(self.reset)))
        if self.beeper:
            out.append(("beeper", self.beeper, board(self.beeper)))
        return out


def board(pin: str) -> int:
    """The physical header pin of a checked "GPIOn" name."""
    return BOARD_OF[int(pin.removeprefix("GPIO"))]


def pin_name(value: Any, where: str) -> str:
    """Normalise one pin to "GPIOn", refusing anything that is not a usable header GPIO."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise PinMapError(f"{where}: a pin is a name like \"GPIO17\" or \"BOARD11\", "
                          f"not {value!r}")
    text = str(value).strip().upper()
    if text.startswith("BOARD") and text[5:].isdigit():
        phys = int(text[5:])
        if phys in POWER:
            raise PinMapError(f"{where}: {text} is a power pin ({POWER[phys]}), not a GPIO")
        if phys in GROUND:
            raise PinMapError(f"{where}: {text} is a ground pin, not a GPIO")
        if phys not in HEADER:
            raise PinMapError(f"{where}: {text} does not exist; the header has BOARD1..BOARD40")
        gpio = HEADER[phys]
    else:
        digits = text.removeprefix("GPIO").removeprefix("BCM")
        if not digits.isdigit():
            raise PinMapError(f"{where}: {value!r} is not a pin name; "
                              "write \"GPIO17\" or \"BOARD11\"")
        gpio = int(digits)
        if gpio not in BOARD_OF:
            raise PinMapError(f"{where}: GPIO{gpio} does not exist on the 40-pin header; "
                              "use GPIO2..GPIO27")
    if gpio in RESERVED:
        raise PinMapError(f"{where}: GPIO{gpio} is reserved for {RESERVED[gpio]}")
    return f"GPIO{gpio}"


def parse(doc: Mapping[str, Any], source: str = "built-in") -> PinMap:
    """Check a parsed TOML document and build the map. Raises `PinMapError`."""

    def fail(msg: str) -> PinMapError:
        return PinMapError(f"{source}: {msg}")

    unknown = set(doc) - _KEYS
    if unknown:
        raise fail(f"unknown key(s) {', '.join(sorted(unknown))}; "
                   f"known: {', '.join(sorted(_KEYS))}")
    raw_buttons = doc.get("buttons")
    if not isinstance(raw_buttons, list) or not raw_buttons:
        raise fail("'buttons' must be a list of 1 to "
                   f"{MAX_BUTTONS} pins, one per seat")
    if len(raw_buttons) > MAX_BUTTONS:
        raise fail(f"'buttons' lists {len(raw_buttons)} pins; at most {MAX_BUTTONS}")
    used: dict[str, str] = {}

    def take(value: Any, where: str) -> str:
        try:
            name = pin_name(value, where)
        except PinMapError as e:
            raise fail(str(e)) from None
        if name in used:
            raise fail(f"{name} is used twice: {used[name]} and {where}")
        used[name] = where
        return name

    buttons = tuple(take(v, f"buttons[{i}]") for i, v in enumerate(raw_buttons))
    lamp = None if doc.get("lamp") in (None, "") else take(doc["lamp"], "lamp")
    raw_leds = doc.get("leds", [])
    if not isinstance(raw_leds, list):
        raise fail("'leds' must be a list of pins (or [] for none)")
    if raw_leds and len(raw_leds) != len(buttons):
        raise fail(f"'leds' lists {len(raw_leds)} pins but there are {len(buttons)} "
                   "buttons: give one LED per button, or none")
    leds = tuple(take(v, f"leds[{i}]") for i, v in enumerate(raw_leds))
    reset = None if doc.get("reset") in (None, "") else take(doc["reset"], "reset")
    beeper = None if doc.get("beeper") in (None, "") else take(doc["beeper"], "beeper")

    options = doc.get("options", {})
    if not isinstance(options, Mapping):
        raise fail("[options] must be a table")
    for key, value in options.items():
        if key not in _OPTIONS:
            raise fail(f"unknown option '{key}'; known: {', '.join(sorted(_OPTIONS))}")
        kind = _OPTIONS[key]
        if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
            raise fail(f"option '{key}' has the wrong type: {value!r}")
    bounce_ms = options.get("bounce_ms", 30)
    stuck_s = options.get("stuck_after_s", 10)
    if not 0 <= bounce_ms <= 500:
        raise fail(f"option 'bounce_ms' must be between 0 and 500, not {bounce_ms}")
    if not 0 < stuck_s <= 3600:
        raise fail(f"option 'stuck_after_s' must be above 0 and at most 3600, not {stuck_s}")
    return PinMap(
        buttons=buttons, lamp=lamp, leds=leds, reset=reset, beeper=beeper,
        lamp_active_high=options.get("lamp_active_high", True),
        beeper_active_high=options.get("beeper_active_high", True),
        beep_on_false_start=options.get("beep_on_false_start", True),
        bounce_ns=round(bounce_ms * 1_000_000), stuck_ns=round(stuck_s * 1_000_000_000),
        reset_command=options.get("reset_command", "reset_signal"), source=source,
    )


def loads(text: str, source: str = "<string>") -> PinMap:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise PinMapError(f"{source}: not valid TOML: {e}") from None
    return parse(doc, source)


def load(path: str | os.PathLike[str]) -> PinMap:
    """Load and check a map file. A missing or unreadable file is an error, never a default."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise PinMapError(f"{p}: cannot read the pin map: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise PinMapError(f"{p}: the pin map is not UTF-8 text") from None
    return loads(text, str(p))


def default() -> PinMap:
    return loads(DEFAULT_TOML, "built-in")


def data_dir() -> Path:
    """The data directory: $SVOYAK_DATA, else ./data."""
    return Path(os.environ.get("SVOYAK_DATA") or "data")


def resolve(pins_path: str | os.PathLike[str] | None = None,
            data: str | os.PathLike[str] | None = None) -> PinMap:
    """The map to use: an explicit file, else DATA/pins.toml if present, else the built-in."""
    if pins_path is not None:
        return load(pins_path)
    candidate = Path(data) if data is not None else data_dir()
    candidate = candidate / "pins.toml"
    return load(candidate) if candidate.exists() else default()
