"""`svoyak serve`: the composition root. It wires the event store, the game loop, the
buttons (real or simulated) and the web UI together, prints where to point the screens and
the host PIN, and serves until stopped."""

from __future__ import annotations

import argparse
import atexit
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_PORT = 8080


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("serve", help="run the box: game loop, buttons and web UI",
                              description=__doc__)
    p.add_argument("--simulate", action="store_true",
                   help="no GPIO: simulated buttons (keys 1-4 on the board page, phones)")
    p.add_argument("--data", default=None, help="data directory (default $SVOYAK_DATA or ./data)")
    p.add_argument("--host", default="0.0.0.0", help="address to listen on (default all)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--pins", default=None, help="pin map TOML file (default DATA/pins.toml)")
    p.add_argument("--demo", action="store_true",
                   help="start the demo sport battle when no game is running (by default the "
                        "board shows its idle screen and the host chooses the format)")
    p.add_argument("--no-demo", action="store_true", help="the default; kept for old scripts")
    p.set_defaults(func=serve)


@dataclass
class Box:
    """Everything `svoyak serve` wires together (tests use it too)."""

    app: Any
    socketio: Any
    hub: Any
    loop: Any
    store: Any
    services: Any
    games: Any
    hardware: Any
    close: Callable[[], None]


def build(data: Path, *, simulate: bool, pins: str | None, demo: bool,
          listen: str | None = None) -> Box:
    """Store, loop, buttons and web UI over one data directory. Runs in the server's worker
    process (after the fork), so every thread lives beside the game loop. `listen` is the
    address the server listens on (the host page's QR code names only a reachable one)."""
    from appliance.runtime import space
    from appliance.runtime.loop import GameLoop
    from appliance.runtime.store import Store, db_path
    from appliance.runtime.systemd import Watchdog
    from appliance.runtime.tournament import TournamentShell
    from webui.app import Buttons, Services, create_app
    from webui.games import Games
    from webui.settings import Settings

    data.mkdir(parents=True, exist_ok=True)
    space.at_start(data)  # a full card gives back its reserve before the log opens
    store = Store(db_path(data))
    loop = GameLoop(store)
    tournament = TournamentShell(loop)  # the one shell: web UI and rooms link alike
    library = _library(data)
    games = Games(loop, library)
    hardware = None
    loop.start()
    try:  # results of battles that ended while the box was off advance their winners now
        tournament.reconcile()
    except Exception:  # the box must serve even if the tournament cannot catch up
        logging.getLogger("svoyak").exception("the tournament could not catch up")
    # The watchdog's first ping right after the loop is up (the buttons, the rooms link and
    # the web UI still to come), not at the end: systemd counts from the master's READY=1.
    watchdog = Watchdog(healthy=lambda: _loop_answers(loop)).start()
    import gpio

    buttons: Buttons | None = None
    press: Callable[[int, str], int] | None = None
    try:
        hardware = gpio.start(loop.submit, loop.subscribe, pins_path=pins, simulate=simulate,
                              data_dir=data)
        buttons = hw = hardware

        def wired_press(seat: int, by: str) -> int:  # simulated presses take the wired path
            return hw.press(seat, None, by)

        press = wired_press
    except Exception as e:  # GpioUnavailable, PinMapError, or a pin that cannot be claimed
        # Screens only, and the host's banner says why (never silently simulated buttons).
        logging.getLogger("svoyak").error("wired buttons off: %s", e)
        buttons = gpio.Fault(e)
    rooms = _rooms(data, store, loop, tournament)
    # Everything the web UI is handed, once: it sets nothing on the box and the box sets
    # nothing on it afterwards.
    services = Services(loop=loop, settings=Settings(data), data_dir=data, simulate=simulate,
                        start_game=games.start, list_packages=games.list_packages,
                        library=library, store=store, tournament=tournament,
                        export_game=lambda g: _export(store, g), listen=listen,
                        hardware=buttons, press=press, rooms=rooms)
    app, socketio, hub = create_app(services)
    if rooms is not None:
        rooms.screens(socketio)
    if hardware is not None:  # a stuck or released button: the host's screen shows it
        hardware.add_status_listener(lambda _status: hub.broadcast())
    space_watch = space.Watch(data, hub.broadcast).start()
    if demo and loop.current is None:
        try:
            games.start("battle", ["Анна", "Борис", "Вера"], "demo:battle")
        except Exception:
            logging.getLogger("svoyak").exception("could not start the demo game")

    def close() -> None:
        watchdog.stop()
        space_watch.stop()
        if rooms is not None:
            rooms.close()
        if hardware is not None:
            hardware.close()
        tournament.close()
        loop.stop()
        store.close()

    return Box(app, socketio, hub, loop, store, services, games, hardware, close)


def _rooms(data: Path, store: Any, loop: Any, tournament: Any) -> Any:
    """The rooms link of a tournament (rooms/, docs/rooms.md): a director or a room box
    when DATA/rooms.json says so. Without it the box is an ordinary box."""
    try:
        from rooms.wiring import Rooms

        return Rooms(data, store, loop, tournament)
    except Exception:
        logging.getLogger("svoyak").exception("rooms link unavailable")
        return None


def _loop_answers(loop: Any, timeout_s: float = 2.0) -> bool:
    """The game loop is alive: it took a no-op command off its queue and answered (with a
    refusal) in time. The systemd watchdog is fed only then, so a hung loop is restarted."""
    from appliance.rules.protocol import Command

    try:
        out = loop.submit(Command("__health__")).result(timeout_s)
    except Exception:
        return False
    # Refused at once because the host's room in the inbox is full: not taken off the queue.
    return getattr(out.refused, "code", None) != "busy"


def _library(data: Path) -> Any:
    """The package library of the data directory (its tables live in the same SQLite file)."""
    try:
        from appliance.packages.library import Library

        library = Library(data)
    except Exception:
        logging.getLogger("svoyak").exception("package library unavailable")
        return None
    try:
        library.sweep()  # what an import killed by a power cut left: staging, orphan media
    except Exception:
        logging.getLogger("svoyak").exception("could not clean the package library")
    return library


def _export(store: Any, game: int) -> dict[str, Any]:
    record = store.game(game)
    if record is None:
        raise KeyError(game)
    return {**record.to_json(), "events": [e.to_json() for e in store.log(game)]}


def urls(host: str, port: int) -> list[str]:
    from webui.pages import _lan_address

    names = ["127.0.0.1"] if host in ("0.0.0.0", "::", "") else [host]
    if host in ("0.0.0.0", "::", ""):
        lan = _lan_address()
        if lan:
            names.append(lan)
    return [f"http://{n}:{port}" for n in names]


def serve(args: argparse.Namespace) -> int:
    from appliance.runtime import space
    from appliance.runtime.store import data_dir
    from webui.server import Server
    from webui.settings import Settings

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    data = data_dir(args.data).resolve()
    data.mkdir(parents=True, exist_ok=True)
    if space.at_start(data):  # before anything writes: a full card gives its reserve back
        print(f"The data partition is full ({space.free_bytes(data)} bytes free): delete "
              "packages on the admin page", flush=True)
    settings = Settings(data)  # creates the PIN on first start
    mode = "simulator" if args.simulate else "GPIO buttons"
    print(f"Svoyak is starting ({mode}), data in {data}", flush=True)
    for base in urls(args.host, args.port):
        print(f"  board (TV):  {base}/board", flush=True)
        print(f"  host:        {base}/host", flush=True)
        print(f"  players:     {base}/play", flush=True)
        print(f"  admin:       {base}/admin/", flush=True)
    print(f"  host PIN:    {settings.pin}", flush=True)
    closers: list[Any] = []

    def factory() -> Any:
        box = build(data, simulate=args.simulate, pins=args.pins,
                    demo=args.demo and not args.no_demo, listen=args.host)
        closers.append(box.close)
        atexit.register(box.close)
        return box.app

    def on_exit() -> None:
        while closers:
            closers.pop()()

    Server(factory, args.host, args.port, on_exit).run()
    return 0


if __name__ == "__main__":
    from svoyak.cli import main

    sys.exit(main(["serve", *sys.argv[1:]]))
