"""`svoyak replay` and `svoyak log …`: scripts in, protocols out.

- ``svoyak replay SCRIPT.jsonl [--db PATH | --data DIR] [--strict] [--no-drain]`` runs a
  script (see `appliance.runtime.replay`) and prints the engine's final summary as JSON on its last
  line. Refused lines go to stderr with their line numbers; ``--strict`` stops at the first
  one with exit status 1. Without a database the run uses a temporary one.
- ``svoyak log games`` lists the games in the log; ``svoyak log export GAME --format
  csv|json`` prints a game's protocol: every event in order with its sequence number, game
  clock (``t_ns``), wall time, type and payload. GAME is a number or ``last``.

The data directory holds the log at DIR/svoyak.db (default ``./data`` or ``$SVOYAK_DATA``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from appliance import sheets
from appliance.rules import registry
from appliance.rules.protocol import Refused
from appliance.runtime import replay
from appliance.runtime.store import Store, StoreError, db_path


def register(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser("replay", help="run a JSONL script of commands; print the final summary",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("script", help="JSONL script ('-' for standard input)")
    _where(p, default_temp=True)
    p.add_argument("--strict", action="store_true",
                   help="stop at the first refused line, exit status 1")
    p.add_argument("--no-drain", dest="drain", action="store_false",
                   help="stop at the last line: do not run the clock on to pending deadlines")
    p.set_defaults(func=_replay)

    start = sub.add_parser(
        "new-game", help="print the first line of a script: a game of RULES with its setup",
        description="Print the new_game line that starts a `svoyak replay` script. The rules "
                    "and their options come from each engine's own description of its setup.")
    rules_sub = start.add_subparsers(dest="rules", metavar="RULES", required=True)
    for name, spec in registry.setups().items():
        r = rules_sub.add_parser(name, help=spec.label_en)
        r.add_argument("players", nargs="+", metavar="PLAYER",
                       help=f"{spec.players_min} to {spec.players_max} names")
        r.add_argument("--package", default=None,
                       help=f"a built-in package (default {spec.demo})")
        for o in spec.options:
            extra: dict[str, Any] = {}
            if o.choices:
                extra["choices"] = [c[0] for c in o.choices if c[0]]
            bounds = "" if o.min is None else f" ({o.min:g}..{o.max:g})"
            r.add_argument(f"--{o.name.replace('_', '-')}", dest=f"opt_{o.name}", default=None,
                           help=f"{o.label_en}{bounds}", **extra)
        r.set_defaults(func=_new_game, spec=spec)

    log = sub.add_parser("log", help="read the event log").add_subparsers(
        dest="log_command", metavar="ACTION", required=True)
    games = log.add_parser("games", help="list the games in the log")
    _where(games)
    games.set_defaults(func=_games)
    export = log.add_parser("export", help="print a game's protocol")
    export.add_argument("game", help="game number, or 'last'")
    export.add_argument("--format", choices=("json", "csv"), default="json")
    _where(export)
    export.set_defaults(func=_export)


def _new_game(args: argparse.Namespace) -> int:
    spec = args.spec
    values = {o.name: getattr(args, f"opt_{o.name}") for o in spec.options}
    try:
        setup = spec.build(args.players, args.package, values)
        registry.get(spec.rules).initial(setup)  # the engine's own checks, before printing
    except Refused as r:
        return _fail(f"{r.message_en} / {r.message_ru}")
    print(json.dumps({"type": "new_game", "rules": spec.rules, "setup": setup},
                     ensure_ascii=False))
    return 0


def _where(p: argparse.ArgumentParser, default_temp: bool = False) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--db", metavar="PATH", help="the event log file")
    g.add_argument("--data", metavar="DIR",
                   help="data directory, log at DIR/svoyak.db "
                        + ("(default: a temporary log)" if default_temp
                           else "(default $SVOYAK_DATA or ./data)"))


def _path(args: argparse.Namespace) -> Path:
    return Path(args.db) if args.db else db_path(args.data)


def _fail(message: str, status: int = 2) -> int:
    print(f"svoyak: {message}", file=sys.stderr)
    return status


def _replay(args: argparse.Namespace) -> int:
    try:
        if args.script == "-":
            lines = sys.stdin.read().splitlines()
        else:
            lines = Path(args.script).read_text(encoding="utf-8").splitlines()
    except OSError as e:
        return _fail(f"cannot read the script: {e}")
    with tempfile.TemporaryDirectory(prefix="svoyak-replay-") as tmp:
        path = Path(tmp, "svoyak.db") if not (args.db or args.data) else _path(args)
        try:
            with Store(path) as store:
                result = replay.run(lines, store, strict=args.strict, drain=args.drain,
                                     on_rejection=lambda r: print(r.describe(), file=sys.stderr))
                summary = result.summary
        except StoreError as e:
            return _fail(str(e))
        except replay.ScriptError as e:
            return _fail(f"{args.script}: {e}")
    print(f"game {result.session.game} ({result.session.rules_name}): {result.commands} "
          f"commands, {len(result.rejections)} refused, {result.events} events"
          + (f", log {path}" if args.db or args.data else ""), file=sys.stderr)
    print(json.dumps(summary, ensure_ascii=False))
    return 1 if args.strict and result.rejections else 0


def _open(args: argparse.Namespace) -> Store:
    return Store(_path(args), create=False)


def _games(args: argparse.Namespace) -> int:
    try:
        with _open(args) as store:
            rows = [{**g.to_json(), "events": store.count(g.id)} for g in store.games()]
    except StoreError as e:
        return _fail(str(e))
    for r in rows:
        del r["setup"], r["summary"]
        print(json.dumps(r, ensure_ascii=False))
    return 0


def _export(args: argparse.Namespace) -> int:
    try:
        with _open(args) as store:
            games = store.games()
            if args.game == "last":
                record = games[-1] if games else None
            else:
                try:
                    record = store.game(int(args.game))
                except ValueError:
                    return _fail(f"GAME must be a number or 'last', not {args.game!r}")
            if record is None:
                return _fail(f"no game {args.game} in {store.path}", 1)
            log = store.log(record.id)
    except StoreError as e:
        return _fail(str(e))
    if args.format == "json":
        print(json.dumps({**record.to_json(), "events": [x.to_json() for x in log]},
                         ensure_ascii=False, indent=1))
        return 0
    out = sheets.writer(sys.stdout)
    out.writerow(["seq", "t_ns", "wall", "type", "payload"])
    for x in log:
        row = x.to_json()
        out.writerow([row["seq"], row["t_ns"], row["wall"], row["type"],
                      json.dumps(row["payload"], ensure_ascii=False, sort_keys=True)])
    return 0
