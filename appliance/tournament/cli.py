"""`svoyak tournament …`: the tournament library from the command line.

- ``svoyak tournament draw ENTRIES.csv [--seed N] [--bracket SIZE] [--seeded] [--json]``
  draws a bracket from a CSV of entries without storing anything; with ``--json`` the last
  line of stdout is
  ``{"seed", "bracket", "stages": [{"name", "themes", "battles": [{"id", "players",
  "feeds"}]}]}`` (docs/tournament.md). A field the team rule makes impossible, or bad
  entries, exit with status 2 and a one-line reason (Russian / English) on stderr.
- ``svoyak tournament create [--title T] [--entries CSV] [--bracket N] [--final-ties
  shared|extra_theme]`` stores a new tournament in the data directory's log and prints its
  number; ``import T CSV``, ``draw T [--seed N]`` and ``command T JSON`` send it commands;
  ``show [T] [--json]`` prints its bracket; ``report T [--csv FILE] [--json]`` its places and
  statistics; ``audit [T]`` re-runs every logged draw from its seed over the entries as they
  stood and compares it with the logged bracket (exit 1 on any difference). T is a
  tournament number, or ``last``.

Commands on a data directory write to its log: use them on a box that is not serving that
directory (the running box has one writer, its game loop; use the director page there).
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from pathlib import Path
from typing import Any

from appliance.rules.protocol import Command, Refused
from appliance.rules.tournament import draw as dr
from appliance.rules.tournament import entries as en
from appliance.rules.tournament import game, views
from appliance.rules.tournament.state import Tournament
from appliance.runtime.running import RunningGame
from appliance.runtime.store import Store, StoreError, db_path

INFEASIBLE = 2


def register(sub: argparse._SubParsersAction[Any]) -> None:
    t = sub.add_parser("tournament", help="sport tournaments: draw, create, show, report",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ts = t.add_subparsers(dest="tournament_command", metavar="ACTION", required=True)

    d = ts.add_parser("draw", help="draw a bracket from a CSV of entries (stores nothing)")
    d.add_argument("entries", help="CSV file: name,team,city,rating with a header row")
    d.add_argument("--seed", type=int, help="the lot's seed (default: a random one, printed)")
    d.add_argument("--bracket", type=int,
                   help="main bracket: 81 above 81 entries, else the largest power of 3 the"
                   " entries fill (a smaller one for a small field)")
    d.add_argument("--seeded", action="store_true",
                   help="seed rated entries into byes and spread places (NOT in the regulation,"
                   " whose draw is by lot alone; recorded in the draw)")
    d.add_argument("--json", action="store_true", help="print the bracket as JSON")
    d.set_defaults(func=_draw)

    c = ts.add_parser("create", help="store a new tournament; prints its number")
    c.add_argument("--title", default="")
    c.add_argument("--entries", help="CSV of entries to import at once")
    c.add_argument("--bracket", type=int)
    c.add_argument("--final-ties", choices=("shared", "extra_theme"))
    _data(c)
    c.set_defaults(func=_create)

    i = _stored(ts, "import", "add entries from a CSV file", _import, which=None)
    i.add_argument("entries")

    dd = _stored(ts, "draw-stored", "draw a stored tournament's bracket (an event)",
                 _draw_stored, which=None)
    dd.add_argument("--seed", type=int)
    dd.add_argument("--bracket", type=int)
    dd.add_argument("--seeded", action="store_true",
                    help="a seeded draw by rating (not in the regulation)")

    _stored(ts, "audit", "re-run every logged draw from its seed and compare", _audit)

    cm = _stored(ts, "command", "send one command as JSON, e.g. '{\"type\": ...}'", _command,
                 which=None)
    cm.add_argument("json")

    s = _stored(ts, "show", "print a tournament's bracket", _show)
    s.add_argument("--json", action="store_true")

    r = _stored(ts, "report", "places and statistics", _report)
    r.add_argument("--csv", metavar="FILE", help="write the results CSV here ('-': stdout)")
    r.add_argument("--json", action="store_true")


def _stored(ts: argparse._SubParsersAction[Any], name: str, help_: str, func: Any, *,
            which: str | None = "last") -> argparse.ArgumentParser:
    """An action on a stored tournament: its number (or ``last``, the default when `which`
    is given) and the data directory."""
    p = ts.add_parser(name, help=help_)
    if which is None:
        p.add_argument("tournament")
    else:
        p.add_argument("tournament", nargs="?", default=which)
    _data(p)
    p.set_defaults(func=func)
    return p


def _data(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", metavar="DIR", help="data directory (default $SVOYAK_DATA or ./data)")


def _fail(r: Refused, status: int = INFEASIBLE) -> int:
    print(f"svoyak tournament: {r.message_ru} / {r.message_en}".replace("\n", " "),
          file=sys.stderr)
    return status


def _read(path: str) -> bytes:
    return sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()


def _draw(args: argparse.Namespace) -> int:
    seed = args.seed if args.seed is not None else secrets.randbits(63)
    try:
        entries = en.parse_csv(_read(args.entries))
        result = dr.draw(entries, seed, args.bracket, args.seeded)
    except OSError as e:
        print(f"svoyak tournament: cannot read {args.entries}: {e}", file=sys.stderr)
        return INFEASIBLE
    except Refused as r:
        return _fail(r)
    names = [e.name for e in entries]
    if args.json:
        print(json.dumps(result.public(names), ensure_ascii=False))
    else:
        print("\n".join(views.draw_lines(result, names)))
    return 0


# -- stored tournaments --------------------------------------------------------------------------
def _store(args: argparse.Namespace) -> Store:
    return Store(db_path(args.data))


def _session(store: Store, which: str) -> RunningGame:
    games = [g for g in store.games() if g.rules == game.NAME]
    if not games:
        raise Refused("В журнале нет турниров.", "There is no tournament in the log.", "none")
    if which == "last":
        record = games[-1]
    else:
        record = next((g for g in games if str(g.id) == which), None)  # type: ignore[assignment]
        if record is None:
            raise Refused(f"Нет турнира {which}.", f"There is no tournament {which}.", "none")
    return RunningGame.resume(store, record.id, game)


def _run(session: RunningGame, command: Command) -> None:
    session.handle(command)


def _create(args: argparse.Namespace) -> int:
    setup: dict[str, Any] = {"title": args.title}
    if args.bracket is not None:
        setup["bracket"] = args.bracket
    if args.final_ties:
        setup["final_ties"] = args.final_ties
    try:
        with _store(args) as store:
            session = RunningGame.new(store, game.NAME, game, setup)
            if args.entries:
                text = en.decode(_read(args.entries))
                _run(session, Command("import_entries", 0, {"csv": text}))
            print(session.game)
    except Refused as r:
        return _fail(r)
    except (OSError, StoreError) as e:
        print(f"svoyak tournament: {e}", file=sys.stderr)
        return 1
    return 0


def _with_session(args: argparse.Namespace, fn: Any) -> int:
    try:
        with _store(args) as store:
            return int(fn(_session(store, args.tournament)) or 0)
    except Refused as r:
        return _fail(r)
    except (OSError, StoreError) as e:
        print(f"svoyak tournament: {e}", file=sys.stderr)
        return 1


def _import(args: argparse.Namespace) -> int:
    def go(s: RunningGame) -> None:
        _run(s, Command("import_entries", 0, {"csv": en.decode(_read(args.entries))}))
        print(len(s.state.active()))
    return _with_session(args, go)


def _draw_stored(args: argparse.Namespace) -> int:
    def go(s: RunningGame) -> None:
        cmd: dict[str, Any] = {"seed": args.seed if args.seed is not None
                               else secrets.randbits(63)}
        if args.bracket is not None:
            cmd["bracket"] = args.bracket
        if args.seeded:
            cmd["seeded"] = True
        _run(s, Command("draw", 0, cmd))
        print(json.dumps(views.draw_json(s.state), ensure_ascii=False))
    return _with_session(args, go)


def _audit(args: argparse.Namespace) -> int:
    """Fold the log event by event; at each ``drawn`` event, draw again from its seed over
    the entries as they stood then, and compare."""
    def go(s: RunningGame) -> int:
        record = s.store.game(s.game)
        assert record is not None
        state = game.initial(record.setup)
        draws, problems = 0, []
        for e in s.store.events(s.game):
            if e.type == "drawn":
                draws += 1
                active = state.active()
                problems += dr.audit([p.entry for p in active], [p.id for p in active],
                                     dict(e.data))
            state = game.evolve(state, e)
        print(json.dumps({"tournament": s.game, "draws": draws, "ok": not problems,
                          "problems": problems[:20]}, ensure_ascii=False))
        return 0 if not problems else 1
    return _with_session(args, go)


def _command(args: argparse.Namespace) -> int:
    def go(s: RunningGame) -> None:
        try:
            obj = json.loads(args.json)
        except json.JSONDecodeError as e:
            raise Refused(f"Команда — не JSON: {e}", f"The command is not JSON: {e}",
                          "bad_json") from e
        events = s.handle(Command.from_json(obj))
        print(json.dumps([e.to_json() for e in events], ensure_ascii=False))
    return _with_session(args, go)


def _show(args: argparse.Namespace) -> int:
    def go(s: RunningGame) -> None:
        if args.json:
            print(json.dumps(views.view(s.state, "director"), ensure_ascii=False))
        else:
            print("\n".join(views.bracket_lines(s.state, s.game)))
    return _with_session(args, go)


def _report(args: argparse.Namespace) -> int:
    def go(s: RunningGame) -> None:
        state: Tournament = s.state
        if args.csv:
            text = views.results_csv(state)
            if args.csv == "-":
                sys.stdout.write(text)
            else:
                Path(args.csv).write_text(text, encoding="utf-8")
        if args.json or not args.csv:
            print(json.dumps(views.summary(state), ensure_ascii=False))
    return _with_session(args, go)
