"""`svoyak buttons ...`: the wiring self-test and the pin map."""

from __future__ import annotations

import argparse
import errno
import sys

from . import factory, pinmap, selftest


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("buttons", help="wired buttons, lamp and LEDs",
                              description="Wired buttons, lamp and LEDs.")
    sub = p.add_subparsers(dest="buttons_command", metavar="ACTION", required=True)

    t = sub.add_parser("test", help="wiring self-test: light every output, print every press",
                       description="Light the lamp and each LED in turn, then print every "
                       "press live (player, pin, time since the previous press) and warn "
                       "about bouncing or stuck buttons.")
    _map_args(t)
    t.add_argument("--simulate", action="store_true",
                   help="mock pins; presses from the keyboard (seat number + Enter)")
    t.add_argument("--step", type=float, default=0.5, metavar="SECONDS",
                   help="how long each output stays lit (default 0.5)")
    t.add_argument("--seconds", type=float, default=None,
                   help="stop watching after this long (default: until Ctrl-C)")
    t.set_defaults(func=_test)

    m = sub.add_parser("map", help="show the pin map in use (or the default as TOML)")
    _map_args(m)
    m.add_argument("--toml", action="store_true",
                   help="print the built-in map as a TOML file to copy into DATA/pins.toml")
    m.set_defaults(func=_map)


def _map_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pins", metavar="FILE", default=None,
                   help="pin map (TOML); default DATA/pins.toml, else the built-in map")
    p.add_argument("--data", metavar="DIR", default=None,
                   help="data directory (default $SVOYAK_DATA or ./data)")


def _load(args: argparse.Namespace) -> pinmap.PinMap | None:
    try:
        return pinmap.resolve(args.pins, args.data)
    except pinmap.PinMapError as e:
        print(f"svoyak: {e}", file=sys.stderr)
        return None


def _test(args: argparse.Namespace) -> int:
    pin_map = _load(args)
    if pin_map is None:
        return 2
    try:
        choice = factory.choose(args.simulate)
    except factory.GpioUnavailable as e:
        print(f"svoyak: {e}\nsvoyak: GPIO недоступен: {e.reason}; проводные кнопки "
              f"отключены (см. {e.check}). Without GPIO: --simulate", file=sys.stderr)
        return 3
    try:
        selftest.run(pin_map, choice, step_s=args.step, seconds=args.seconds)
    except Exception as e:
        if choice.simulated or not pins_busy(e):
            raise
        print(BUSY, file=sys.stderr)
        return 4
    return 0


# lgpio refuses a line another process has claimed ("GPIO busy"): on a running box, the
# game service holds every button and the lamp.
BUSY = ("svoyak: GPIO занят: контакты кнопок и лампы держит служба игры (svoyak.service). "
        "Остановите её — sudo systemctl stop svoyak — и повторите проверку; потом запустите "
        "снова: sudo systemctl start svoyak (или перезагрузите коробку).\n"
        "svoyak: GPIO busy: the game service (svoyak.service) holds the buttons' and the "
        "lamp's pins. Stop it with `sudo systemctl stop svoyak`, run the test again, then "
        "start it again with `sudo systemctl start svoyak` (or restart the box).")


def pins_busy(error: BaseException) -> bool:
    """The pins are claimed by another process (lgpio's "GPIO busy", EBUSY)."""
    seen: BaseException | None = error
    while seen is not None:
        if "busy" in str(seen).lower() or getattr(seen, "errno", None) == errno.EBUSY:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _map(args: argparse.Namespace) -> int:
    if args.toml:
        print(pinmap.DEFAULT_TOML, end="")
        return 0
    pin_map = _load(args)
    if pin_map is None:
        return 2
    print(f"Pin map: {pin_map.source}")
    print(selftest.pin_table(pin_map))
    return 0
