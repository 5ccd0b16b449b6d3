"""The tournament on a running box: battles started from the bracket, results fed back.

The imperative shell around the pure tournament: `Director` holds a `GameLoop` and the
tournament's game number. `start(battle, package)` creates the battle engine's game and
logs the tournament's ``battle_started`` with that game's number in one transaction
(`GameLoop.new_game` with a parent), so a power cut leaves both or neither. A subscriber
watches the loop: when the host ends a battle game that the tournament has in play, it
sends the battle's summary back as ``battle_result``, which advances the winner.
`reconcile()` does the same for battles that ended while nobody listened (a power cut
between the end of a battle and its result), so after a restart the tournament catches up
from the log alone.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from appliance.packages.model import Package
from appliance.rules.protocol import Refused
from appliance.rules.tournament import game
from appliance.rules.tournament.battles import battle_setup, result_args
from appliance.rules.tournament.state import PLAYING, Tournament
from appliance.runtime.loop import GameLoop, Update

log = logging.getLogger(__name__)


class Director:
    def __init__(self, loop: GameLoop, tournament: int):
        self.loop = loop
        self.tournament = tournament
        self._off = loop.subscribe(self._on_update, inline=False)

    @classmethod
    def running(cls, loop: GameLoop) -> Director | None:
        """The director of the newest running tournament in the loop, if there is one."""
        ids = [g for g in loop.games() if loop.snapshot(g)[0] is game]
        return cls(loop, ids[-1]) if ids else None

    def close(self) -> None:
        self._off()

    @property
    def state(self) -> Tournament:
        return self.loop.snapshot(self.tournament)[1]

    def submit(self, command: Mapping[str, Any]) -> list[Any]:
        """One tournament command; returns its events, raises `Refused`."""
        out = self.loop.submit(dict(command), game=self.tournament).result()
        if out.refused is not None:
            raise out.refused
        return out.events

    def start(self, battle_id: str, package: Package,
              settings: Mapping[str, Any] | None = None) -> int:
        """Start a bracket battle with themes from `package`; returns its game number."""
        setup = battle_setup(self.state, battle_id, package, settings)
        themes = [t["name"] for t in setup["themes"]]
        red = [t["name"] for t in setup["themes"] if t["red"]]
        # one transaction: the battle's game and the tournament's battle_started naming it
        return self.loop.new_game("battle", setup, parent=self.tournament, command={
            "type": "start_battle", "battle": battle_id, "themes": themes,
            "red": red}).result()

    def _on_update(self, update: Update) -> None:
        if not update.finished or update.game == self.tournament:
            return
        self._report(update.game, update.rules.summary(update.state))

    def _report(self, battle_game: int, summary: Mapping[str, Any]) -> None:
        b = next((b for b in self.state.battles if b.game == battle_game
                  and b.status == PLAYING), None)
        if b is None:
            return
        self.loop.submit(self._outcome(b.id, summary), game=self.tournament)

    @staticmethod
    def _outcome(battle_id: str, summary: Mapping[str, Any]) -> dict[str, Any]:
        """The command a finished battle game sends the tournament: its result, or — when
        the host ended it before the rules gave a winner — ``battle_stopped`` with the
        scores, for the director to decide (the leader as winner, or a replay)."""
        try:
            return result_args(summary, battle_id)
        except Refused as r:
            log.info("battle %s ended without a winner: %s", battle_id, r.message_en)
            return {"type": "battle_stopped", "battle": battle_id,
                    "scores": [int(x) for x in summary.get("scores") or []]}

    def replay(self, battle_id: str) -> list[Any]:
        """Reset a battle for a replay; a battle still in play has its game ended first
        (what was played there is dropped with it)."""
        b = self.state.battle(battle_id)
        game_no = b.game if b is not None and b.status == PLAYING else None
        events = self.submit({"type": "replay_battle", "battle": battle_id})
        record = self.loop.store.game(game_no) if game_no is not None else None
        if game_no is not None and record is not None and record.status == "running":
            self.loop.end_game(game_no).result()
        return events

    def reconcile(self) -> int:
        """Feed the results of battles whose games ended but whose result is not in the
        tournament yet; returns how many."""
        n = 0
        for b in self.state.battles:
            if b.status != PLAYING or b.game is None:
                continue
            record = self.loop.store.game(b.game)
            if record is not None and record.status != "running" and record.summary:
                args = self._outcome(b.id, record.summary)
                out = self.loop.submit(args, game=self.tournament).result()
                n += out.refused is None
        return n
