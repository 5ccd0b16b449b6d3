"""The tournament behind the rooms link, in the few words the link needs (`Bracket`).

Two of them:

- `EngineBracket`: the tournament engine of `appliance/rules/tournament/`, running as a game of
  the director box's own game loop. Giving a battle to a room is the tournament's
  ``start_battle`` (with the themes picked for it from the director's package, so no theme
  is played twice even when rooms start at the same time); a room's result is its
  ``battle_result``. The room each battle went to, with the battle engine's setup it got,
  is kept in ``rooms_assignments``.
- `StandInBracket`: the small bracket of `rooms.standin` with its events in
  ``rooms_tournament`` (used when no tournament runs on the director box, and by the
  benchmark).

Both are idempotent where the link needs it: recording the result of a battle that is
already done changes nothing, so a director that stopped between the tournament's commit
and its own bookkeeping simply records it again."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from appliance.rules.protocol import Refused
from rooms import standin
from rooms.db import Tables

SCHEMA = """
CREATE TABLE IF NOT EXISTS rooms_tournament (
    seq INTEGER PRIMARY KEY, wall REAL NOT NULL, type TEXT NOT NULL, payload TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rooms_assignments (
    battle TEXT PRIMARY KEY, room TEXT NOT NULL, setup TEXT NOT NULL, assigned REAL NOT NULL,
    n INTEGER NOT NULL DEFAULT 1)
"""


class Bracket(Protocol):
    def ready(self) -> list[str]: ...
    def in_play(self) -> dict[str, str]: ...  # battle -> room
    def room_of(self, battle: str) -> str | None: ...  # the room it went to, ever
    def assignment_id(self, battle: str) -> str | None: ...  # its current assignment
    # corrections by hand; returns the unsubscribe
    def watch(self, on_change: Callable[[], None]) -> Callable[[], None]: ...
    def assign(self, battle: str, room: str) -> None: ...
    def setup(self, battle: str) -> dict[str, Any]: ...
    def players(self, battle: str) -> tuple[str, list[str | None]]: ...  # stage, names
    def record(self, battle: str, summary: Mapping[str, Any],
               source: Mapping[str, Any]) -> None: ...
    def view(self) -> dict[str, Any]: ...
    def replay_view(self) -> dict[str, Any]: ...


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class StandInBracket:
    def __init__(self, db: Tables, wall: Callable[[], float] = time.time):
        self.db = db
        self.wall = wall
        self._lock = threading.RLock()
        with db.write() as c:
            for s in SCHEMA.split(";"):
                if s.strip():
                    c.execute(s)
        self.state = self._fold()

    def _fold(self) -> standin.Bracket:
        rows = self.db.query("SELECT payload FROM rooms_tournament ORDER BY seq")
        return standin.fold(json.loads(str(p)) for (p,) in rows)

    def _append(self, events: Sequence[Mapping[str, Any]]) -> None:
        with self._lock:
            with self.db.write() as c:
                for e in events:
                    c.execute("INSERT INTO rooms_tournament (wall, type, payload) "
                              "VALUES (?,?,?)", (self.wall(), e["type"], _dumps(e)))
            state = self.state
            for e in events:
                state = standin.evolve(state, e)
            self.state = state

    def draw(self, entries: Sequence[str], seed: int) -> None:
        if self.db.query("SELECT 1 FROM rooms_tournament LIMIT 1"):
            raise Refused("Жеребьёвка уже проведена.", "The draw was already made.", "drawn")
        self._append(standin.decide_draw(entries, seed))

    def ready(self) -> list[str]:
        return standin.ready(self.state)

    def in_play(self) -> dict[str, str]:
        return {b: str(s.room) for b in self.state.order
                if (s := self.state.battles[b]).room is not None and s.winner is None}

    def room_of(self, battle: str) -> str | None:
        s = self.state.battles.get(battle)
        return None if s is None else s.room

    def assignment_id(self, battle: str) -> str | None:
        return f"{battle}#1" if self.room_of(battle) is not None else None

    def watch(self, on_change: Callable[[], None]) -> Callable[[], None]:
        """The stand-in changes only through the link: nothing to watch."""
        return lambda: None

    def assign(self, battle: str, room: str) -> None:
        self._append(standin.decide_assign(self.state, battle, room))

    def setup(self, battle: str) -> dict[str, Any]:
        return standin.setup(self.state, battle)

    def players(self, battle: str) -> tuple[str, list[str | None]]:
        s = self.state.battles[battle]
        return s.stage, list(s.players)

    def record(self, battle: str, summary: Mapping[str, Any],
               source: Mapping[str, Any]) -> None:
        s = self.state.battles.get(battle)
        if s is not None and s.winner is not None:
            return  # already recorded
        self._append(standin.decide_result(self.state, battle, summary, source))

    def view(self) -> dict[str, Any]:
        return standin.view(self.state)

    def replay_view(self) -> dict[str, Any]:
        return standin.view(self._fold())


class EngineBracket:
    """The tournament engine's game `tournament` in the director's `loop`."""

    def __init__(self, db: Tables, loop: Any, tournament: int, package: Any,
                 wall: Callable[[], float] = time.time):
        self.db, self.loop, self.tournament, self.package, self.wall = (
            db, loop, tournament, package, wall)
        with db.write() as c:
            for s in SCHEMA.split(";"):
                if s.strip():
                    c.execute(s)

    @property
    def state(self) -> Any:
        return self.loop.snapshot(self.tournament)[1]

    def _submit(self, command: Mapping[str, Any]) -> None:
        out = self.loop.submit(dict(command), game=self.tournament).result(10)
        if out.refused is not None:
            raise out.refused

    def ready(self) -> list[str]:
        from appliance.rules.tournament.views import next_battles

        return [b.id for b in next_battles(self.state)]

    def in_play(self) -> dict[str, str]:
        from appliance.rules.tournament.state import PLAYING

        state = self.state
        out = {}
        for battle, room in self.db.query("SELECT battle, room FROM rooms_assignments"):
            b = state.battle(str(battle))
            if b is not None and b.status == PLAYING:
                out[str(battle)] = str(room)
        return out

    def room_of(self, battle: str) -> str | None:
        rows = self.db.query("SELECT room FROM rooms_assignments WHERE battle = ?", (battle,))
        return str(rows[0][0]) if rows else None

    def assignment_id(self, battle: str) -> str | None:
        """``battle#n``: n counts the times the battle went to a room, so a battle replayed
        after a correction is a new assignment, and the old game's messages are stale."""
        rows = self.db.query("SELECT n FROM rooms_assignments WHERE battle = ?", (battle,))
        return f"{battle}#{rows[0][0]}" if rows else None

    def watch(self, on_change: Callable[[], None]) -> Callable[[], None]:
        """Call `on_change` after the director changed the tournament by hand (a battle
        replayed, a walkover, a swap): battles may have left or joined the rooms. Returns
        the unsubscribe: the link calls it when it closes (an admin changing the box's role
        restarts the link, which must not leave a subscriber behind each time)."""
        def on_update(update: Any) -> None:
            if update.game == self.tournament and any(
                    e.type in ("battle_reset", "absent", "players_swapped")
                    for e in update.events):
                on_change()

        return self.loop.subscribe(on_update)

    def assign(self, battle: str, room: str) -> None:
        from appliance.rules.tournament.battles import battle_setup

        setup = battle_setup(self.state, battle, self.package)
        with self.db.write() as c:
            row = c.execute("SELECT n FROM rooms_assignments WHERE battle = ?",
                            (battle,)).fetchone()
            c.execute("INSERT OR REPLACE INTO rooms_assignments (battle, room, setup, assigned, "
                      "n) VALUES (?,?,?,?,?)", (battle, room, _dumps(setup), self.wall(),
                                                (row[0] + 1) if row else 1))
        try:
            self._submit({"type": "start_battle", "battle": battle,
                          "themes": [t["name"] for t in setup["themes"]],
                          "red": [t["name"] for t in setup["themes"] if t["red"]]})
        except Refused:
            with self.db.write() as c:
                c.execute("DELETE FROM rooms_assignments WHERE battle = ?", (battle,))
            raise

    def setup(self, battle: str) -> dict[str, Any]:
        rows = self.db.query("SELECT setup FROM rooms_assignments WHERE battle = ?", (battle,))
        if not rows:
            raise KeyError(battle)
        return dict(json.loads(str(rows[0][0])))

    def players(self, battle: str) -> tuple[str, list[str | None]]:
        state = self.state
        b = state.battle(battle)
        if b is None:
            raise KeyError(battle)
        return b.drawn.stage, [state.name(e) for e in b.present]

    def record(self, battle: str, summary: Mapping[str, Any],
               source: Mapping[str, Any]) -> None:
        from appliance.rules.tournament.battles import result_args
        from appliance.rules.tournament.state import DONE

        b = self.state.battle(battle)
        if b is not None and b.status == DONE:
            return  # already recorded
        self._submit(result_args(summary, battle))

    def view(self) -> dict[str, Any]:
        return engine_view(self.state, self.in_play_rooms())

    def in_play_rooms(self) -> dict[str, str]:
        return {str(b): str(r) for b, r in self.db.query(
            "SELECT battle, room FROM rooms_assignments")}

    def replay_view(self) -> dict[str, Any]:
        return replay_engine(self.loop.store, self.db, self.tournament)


def replay_engine(store: Any, db: Tables, tournament: int | None = None) -> dict[str, Any]:
    """The tournament folded again from the director's log alone (its newest tournament
    game when `tournament` is None), in the link's shape."""
    from appliance.rules.protocol import fold
    from appliance.rules.tournament import game

    if tournament is None:
        ids = [g.id for g in store.games() if g.rules == game.NAME]
        if not ids:
            raise KeyError("no tournament in the log")
        tournament = ids[-1]
    record = store.game(tournament)
    state = fold(game, game.initial(record.setup), store.events(tournament))
    rooms = {str(b): str(r) for b, r in db.query("SELECT battle, room FROM rooms_assignments")}
    return engine_view(state, rooms)


def engine_view(state: Any, rooms: Mapping[str, str]) -> dict[str, Any]:
    """The engine's bracket in the link's shape (the same as the stand-in's)."""
    from appliance.rules.tournament.views import places

    battles = []
    for b in state.battles:
        lines = {x.entry: x.score + x.extra for x in b.result.lines} if b.result else {}
        battles.append({
            "id": b.id, "stage": b.drawn.stage, "number": b.drawn.number,
            "players": [state.name(e) for e in b.seats], "feeds": b.drawn.feeds,
            "room": rooms.get(b.id), "status": b.status,
            "winner": state.name(b.result.winner) if b.result else None,
            "scores": [lines.get(e) for e in b.seats] if b.result else []})
    podium = [state.name(p["entry"]) for p in places(state) if p["place"] <= 3] \
        if state.finished else []
    return {"seed": state.seed, "podium": podium, "battles": battles}


def running_tournament(loop: Any) -> int | None:
    """The newest running tournament game in the director's loop."""
    from appliance.rules.tournament import game

    ids = [g for g in loop.games() if loop.snapshot(g)[0] is game]
    return ids[-1] if ids else None
