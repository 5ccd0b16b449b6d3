"""What the rooms link keeps of the tournament: which room each battle went to.

The tournament itself is the director box's running tournament, reached through its one
shell (`appliance.runtime.tournament.TournamentShell`, built once by `svoyak serve`): the
link asks it for the ready battles, starts a battle in a room with it (the tournament's
``start_battle`` naming the room, its themes picked at that moment from the director's
package, so two rooms starting at once never get the same theme) and records a room's
result with it (``battle_result``, or ``battle_stopped`` for a battle its room ended early,
with the room box, game and room as the event's source).

The link's own part is the table ``rooms_assignments``: per battle, the room it went to,
the battle engine's setup the room got, and how many times it went to a room (a battle
replayed after a correction is a new assignment, ``battle#n``, and the old game's messages
are stale). The assignment is written before the tournament's commit, so a stop between the
two leaves a battle that is still ready and is simply given again (as ``battle#n+1``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from appliance.packages.model import Package
from appliance.rules.protocol import Refused
from appliance.rules.tournament.state import PLAYING, Tournament
from appliance.rules.tournament.views import next_battles, places
from appliance.runtime.tournament import NO_TOURNAMENT, TournamentShell
from rooms.db import Tables

SCHEMA = """
CREATE TABLE IF NOT EXISTS rooms_assignments (
    battle TEXT PRIMARY KEY, room TEXT NOT NULL, setup TEXT NOT NULL, assigned REAL NOT NULL,
    n INTEGER NOT NULL DEFAULT 1);
DROP TABLE IF EXISTS rooms_tournament
"""
# ``rooms_tournament`` held the events of the stand-in bracket the link used before it
# played the real tournament; its battles' events and results are in ``rooms_applied`` and
# ``rooms_results`` still.


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class Assignments:
    """The rooms link's view of the running tournament (`TournamentShell`) and its own
    table of assignments."""

    def __init__(self, db: Tables, tournament: TournamentShell, package: Package,
                 wall: Callable[[], float] = time.time):
        self.db, self.tournament, self.package, self.wall = db, tournament, package, wall
        with db.write() as c:
            for s in SCHEMA.split(";"):
                if s.strip():
                    c.execute(s)

    @property
    def state(self) -> Tournament | None:
        return self.tournament.state

    def ready(self) -> list[str]:
        """Battles ready to be given to a room, in playing order."""
        state = self.state
        return [] if state is None else [b.id for b in next_battles(state)]

    def in_play(self) -> dict[str, str]:
        """Battles being played in a room: battle -> room."""
        state = self.state
        if state is None:
            return {}
        out = {}
        for battle, room in self.db.query("SELECT battle, room FROM rooms_assignments"):
            b = state.battle(str(battle))
            # started in that room (a log from before battle_started named the room: one
            # not played on this box), not a battle replayed and played on the director box
            if b is not None and b.status == PLAYING and (
                    b.room == room or (b.room is None and b.game is None)):
                out[str(battle)] = str(room)
        return out

    def room_of(self, battle: str) -> str | None:
        """The room the battle went to last (its messages come from there)."""
        rows = self.db.query("SELECT room FROM rooms_assignments WHERE battle = ?", (battle,))
        return str(rows[0][0]) if rows else None

    def assignment_id(self, battle: str) -> str | None:
        """``battle#n``: n counts the times the battle went to a room, so a battle replayed
        after a correction is a new assignment, and the old game's messages are stale."""
        rows = self.db.query("SELECT n FROM rooms_assignments WHERE battle = ?", (battle,))
        return f"{battle}#{rows[0][0]}" if rows else None

    def watch(self, on_change: Callable[[], None]) -> Callable[[], None]:
        """`on_change` after the director changed the tournament (`TournamentShell.watch`);
        returns the unsubscribe, which the link calls when it closes."""
        return self.tournament.watch(on_change)

    def assign(self, battle: str, room: str) -> None:
        """Give a ready battle to a room: its setup kept here first, then the tournament's
        ``start_battle`` naming the room (a refusal takes the row back)."""
        setup = self.tournament.setup_for(battle, self.package)
        with self.db.write() as c:
            row = c.execute("SELECT n FROM rooms_assignments WHERE battle = ?",
                            (battle,)).fetchone()
            c.execute("INSERT OR REPLACE INTO rooms_assignments (battle, room, setup, assigned, "
                      "n) VALUES (?,?,?,?,?)", (battle, room, _dumps(setup), self.wall(),
                                                (row[0] + 1) if row else 1))
        try:
            self.tournament.start_battle(battle, setup, room=room)
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
        """The battle's stage and the names of its players present."""
        state = self.state
        b = state.battle(battle) if state is not None else None
        if state is None or b is None:
            raise KeyError(battle)
        return b.drawn.stage, [state.name(e) for e in b.present]

    def record(self, battle: str, summary: Mapping[str, Any],
               source: Mapping[str, Any]) -> str | None:
        """A room's result into the tournament (`TournamentShell.record`: idempotent)."""
        if self.state is None:
            raise NO_TOURNAMENT
        return self.tournament.record(battle, summary, source)

    def rooms(self) -> dict[str, str]:
        """Every battle that went to a room: battle -> room."""
        return {str(b): str(r) for b, r in self.db.query(
            "SELECT battle, room FROM rooms_assignments")}

    def view(self) -> dict[str, Any]:
        state = self.state
        return EMPTY if state is None else bracket(state, self.rooms())

    def replay_view(self) -> dict[str, Any]:
        """The bracket folded again from the director's log alone."""
        if self.state is None:
            return EMPTY
        return bracket(self.tournament.replayed(), self.rooms())


EMPTY: dict[str, Any] = {"seed": None, "podium": [], "battles": []}


def bracket(state: Tournament, rooms: Mapping[str, str]) -> dict[str, Any]:
    """The tournament's bracket in the link's shape (`svoyak rooms status`, the rooms
    pages, the ``rooms_live`` push): each battle with its room, status, winner and scores."""
    battles = []
    for b in state.battles:
        lines: dict[int | None, int] = {x.entry: x.score + x.extra
                                        for x in b.result.lines} if b.result else {}
        battles.append({
            "id": b.id, "stage": b.drawn.stage, "number": b.drawn.number,
            "players": [state.name(e) for e in b.seats], "feeds": b.drawn.feeds,
            "room": b.room or rooms.get(b.id), "status": b.status,
            "winner": state.name(b.result.winner) if b.result else None,
            "scores": [lines.get(e) for e in b.seats] if b.result else [],
            "source": (b.result.source.to_json() if b.result and b.result.source
                       else None)})
    podium = [state.name(p["entry"]) for p in places(state) if p["place"] <= 3] \
        if state.finished else []
    return {"seed": state.seed, "podium": podium, "battles": battles}
