"""`svoyak rooms …`: make a box the director or a room of a tournament, and carry results
by file when there is no network. JSON on stdout is the last line. `status` and
`import-result` work on the director's data directory while it is not being served (its
game loop is the log's one writer): the running director shows its status on its rooms
page and takes a result file there."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("rooms", help="several rooms, one tournament (docs/rooms.md)")
    sub = p.add_subparsers(dest="rooms_command", metavar="ROOMS_COMMAND", required=True)

    d = sub.add_parser("director", help="make this box the tournament's director")
    d.add_argument("--data", default=None)
    d.add_argument("--broker", required=True, help="HOST:PORT the broker listens on")
    d.add_argument("--passwd", required=True, help="the broker's password file")
    d.add_argument("--package", default=None,
                   help="themes for the battles: a package JSON file or a library number "
                        "(default: the built-in sport demo)")
    d.set_defaults(func=_director)

    a = sub.add_parser("add-room", help="credentials for a room box (a join code)")
    a.add_argument("--data", default=None)
    a.add_argument("--room", default=None, help="room name (default: the next roomN)")
    a.set_defaults(func=_add_room)

    j = sub.add_parser("join", help="make this box a room of a director's tournament")
    j.add_argument("--data", default=None)
    j.add_argument("--director", required=True, help="HOST:PORT of the director's broker")
    j.add_argument("--room", required=True)
    j.add_argument("--code", required=True)
    j.set_defaults(func=_join)

    s = sub.add_parser("status", help="the bracket and the rooms as JSON (director)")
    s.add_argument("--data", default=None)
    s.set_defaults(func=_status)

    i = sub.add_parser("import-result", help="apply a result file from a room (director)")
    i.add_argument("--data", default=None)
    i.add_argument("file")
    i.set_defaults(func=_import_result)


def _data(args: argparse.Namespace) -> Path:
    from appliance.runtime.store import data_dir

    return data_dir(args.data)


def _hostport(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host.strip("[]"), int(port)


def _print(obj: Any) -> int:
    print(json.dumps(obj, ensure_ascii=False), flush=True)
    return 0


def _fail(ru: str, en: str, code: int = 2) -> int:
    print(f"{ru}\n{en}", file=sys.stderr)
    return code


def _director(args: argparse.Namespace) -> int:
    from rooms import config

    host, port = _hostport(args.broker)
    obj = config.make_director(_data(args), host, port, Path(args.passwd), args.package)
    return _print({"role": "director", "broker": obj["broker"]})


def _add_room(args: argparse.Namespace) -> int:
    from rooms import config

    try:
        return _print(config.add_room(_data(args), args.room))
    except config.ConfigError as e:
        return _fail(e.ru, e.en)


def _join(args: argparse.Namespace) -> int:
    from rooms import config

    host, port = _hostport(args.director)
    try:
        obj = config.join(_data(args), host, port, args.room, args.code)
    except config.ConfigError as e:
        return _fail(e.ru, e.en)
    return _print({"role": "room", "room": obj["room"], "box": obj["box"]})


class _Offline:
    """The director's link without a broker, over the data directory's own log: its game
    loop and tournament shell, as `svoyak serve` builds them. For a box that is not
    serving that directory (the loop is the log's one writer; the running director takes
    a result file on its rooms page)."""

    def __init__(self, args: argparse.Namespace):
        from appliance.runtime.loop import GameLoop
        from appliance.runtime.store import Store, db_path
        from appliance.runtime.tournament import TournamentShell
        from rooms import config
        from rooms.director import Director
        from rooms.wiring import load_package

        data = _data(args)
        obj = config.load(data)
        self.store = Store(db_path(data))
        self.loop = GameLoop(self.store).start()
        self.shell = TournamentShell(self.loop)
        try:
            self.director = Director(broker=None, tournament=self.shell, package=load_package(
                data, (obj or {}).get("package")))
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if hasattr(self, "director"):
            self.director.close()
        self.shell.close()
        self.loop.stop()
        self.store.close()


def _offline(args: argparse.Namespace) -> _Offline | int:
    from rooms import config

    try:
        return _Offline(args)
    except config.ConfigError as e:
        return _fail(e.ru, e.en)


def _status(args: argparse.Namespace) -> int:
    d = _offline(args)
    if isinstance(d, int):
        return d
    try:
        return _print(d.director.status())
    finally:
        d.close()


def _import_result(args: argparse.Namespace) -> int:
    from appliance.rules.protocol import Refused
    from rooms import messages

    try:
        obj = json.loads(Path(args.file).read_text("utf-8"))
    except (OSError, ValueError) as e:
        return _fail(f"Файл не читается: {e}", f"The file cannot be read: {e}")
    d = _offline(args)
    if isinstance(d, int):
        return d
    try:
        applied = d.director.import_result(obj)
    except messages.BadMessage as e:
        return _fail(e.ru, e.en)
    except Refused as r:
        return _fail(r.message_ru, r.message_en)
    finally:
        d.close()
    return _print({"applied": applied})
