"""The tournament on a running box: one shell over the tournament game in the game loop.

Every part of the box that drives a tournament goes through it — the director's pages
(`webui.tournament`), the rooms link (`rooms.director`), `svoyak rooms`, the tests — and
`svoyak serve` builds it once and hands it to each. The pure tournament
(`appliance.rules.tournament`) decides; the shell only finds the running tournament, sends
it commands through the loop (the one writer) and turns what happens to battles into its
commands:

- `game` / `state`: the newest tournament game in the loop (None before one is created).
- `start_battle(battle, setup, room=None)`: with no room, the battle engine's game and the
  tournament's ``start_battle`` naming it, in one transaction (`GameLoop.new_game` with a
  parent), so a power cut leaves both or neither; with a room (the rooms link), the
  tournament's ``start_battle`` naming the room: the battle is played on the room's box.
- `record(battle, summary, source)`: a finished battle's result, idempotent (a battle no
  longer in play changes nothing, so a link that stopped between the tournament's commit
  and its own bookkeeping simply records it again). It is ``battle_result``, or
  ``battle_stopped`` when the battle's game ended before the rules gave a winner (the
  director then awards it to the leader or replays it); either carries its source (box,
  game, room) into the tournament's own event.
- A battle played on this box is recorded by the shell itself when the host ends its game
  (a loop subscriber); `reconcile()` records those that ended while nobody listened (a
  power cut between the end of a battle and its result), so after a restart the tournament
  catches up from the log alone.
- `watch(on_change)`: told after a change to the tournament the rooms link did not make
  itself (a correction by hand, a draw, a walkover, a battle played here); with
  ``link_too=True`` after every change (the screens: the tournament's TV pages redraw when a
  room's result moves the bracket too); returns the unsubscribe.
- `replayed()`: the tournament folded again from the log alone.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from appliance.packages.model import Package
from appliance.rules.protocol import Event, Refused, fold
from appliance.rules.tournament import game as engine
from appliance.rules.tournament.battles import battle_setup, outcome_args
from appliance.rules.tournament.state import PLAYING, Tournament
from appliance.runtime.loop import GameLoop, Outcome, Update

log = logging.getLogger(__name__)

TIMEOUT_S = 30.0
NO_TOURNAMENT = Refused("Турнир не создан.", "There is no tournament.", "no_tournament")

Watcher = Callable[[], None]


class TournamentShell:
    """See the module docstring. One per box, over its `GameLoop`."""

    def __init__(self, loop: GameLoop):
        self.loop = loop
        self._lock = threading.Lock()
        self._watchers: list[tuple[Watcher, bool]] = []
        self._off = loop.subscribe(self._on_update)

    def close(self) -> None:
        self._off()
        with self._lock:
            self._watchers.clear()

    # -- the running tournament ------------------------------------------------------------
    @property
    def game(self) -> int | None:
        """The tournament's game number: the newest tournament in the loop."""
        ids = [g for g in self.loop.games() if self.loop.snapshot(g)[0] is engine]
        return ids[-1] if ids else None

    @property
    def state(self) -> Tournament | None:
        t = self.game
        return None if t is None else self.loop.snapshot(t)[1]

    def _running(self) -> tuple[int, Tournament]:
        t = self.game
        if t is None:
            raise NO_TOURNAMENT
        return t, self.loop.snapshot(t)[1]

    def create(self, setup: Mapping[str, Any]) -> int:
        """A new tournament, which becomes the running one; raises `Refused`."""
        return int(self.loop.new_game(engine.NAME, setup).result(TIMEOUT_S))

    def submit(self, command: Mapping[str, Any]) -> list[Event]:
        """One tournament command; returns its events, raises `Refused`."""
        t, _ = self._running()
        out = self.loop.submit(dict(command), game=t).result(TIMEOUT_S)
        if out.refused is not None:
            raise out.refused
        return out.events

    # -- battles ---------------------------------------------------------------------------
    def setup_for(self, battle_id: str, package: Package,
                  settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The battle engine's setup for a ready battle, its themes from `package` (none
        played before in the tournament); raises `Refused`."""
        _, state = self._running()
        return battle_setup(state, battle_id, package, settings)

    def start_battle(self, battle_id: str, setup: Mapping[str, Any], *,
                     room: str | None = None) -> int | None:
        """Start a battle with `setup` (`setup_for`): here, returning its game number, or
        in `room` (None returned: the room's box plays it). Raises `Refused`."""
        t, _ = self._running()
        command: dict[str, Any] = {
            "type": "start_battle", "battle": battle_id,
            "themes": [th["name"] for th in setup["themes"]],
            "red": [th["name"] for th in setup["themes"] if th.get("red")]}
        if room is not None:
            self.submit({**command, "room": room})
            return None
        # one transaction: the battle's game and the tournament's battle_started naming it
        return int(self.loop.new_game("battle", setup, parent=t, command=command)
                   .result(TIMEOUT_S))

    def record(self, battle_id: str, summary: Mapping[str, Any],
               source: Mapping[str, Any]) -> str | None:
        """Record a battle's result from its game's summary (see the module docstring):
        the tournament event's type (``battle_finished`` or ``battle_stopped``), or None
        when the battle is no longer in play (already recorded). Raises `Refused` for a
        result that does not fit the battle."""
        t, state = self._running()
        b = state.battle(battle_id)
        if b is not None and b.status != PLAYING:
            return None
        out = self.loop.submit(outcome_args(summary, battle_id, source),
                               game=t).result(TIMEOUT_S)
        if out.refused is not None:
            if out.refused.code == "not_playing":  # recorded meanwhile
                return None
            raise out.refused
        return out.events[0].type if out.events else None

    def replay(self, battle_id: str) -> list[Event]:
        """Reset a battle for a replay; a battle still in play here has its game ended
        first (what was played there is dropped with it)."""
        _, state = self._running()
        b = state.battle(battle_id)
        game_no = b.game if b is not None and b.status == PLAYING else None
        events = self.submit({"type": "replay_battle", "battle": battle_id})
        record = self.loop.store.game(game_no) if game_no is not None else None
        if game_no is not None and record is not None and record.status == "running":
            self.loop.end_game(game_no).result(TIMEOUT_S)
        return events

    def reconcile(self) -> int:
        """Record the results of battles played here whose games ended but whose result is
        not in the tournament yet; returns how many."""
        t = self.game
        if t is None:
            return 0
        n = 0
        for b in self.loop.snapshot(t)[1].battles:
            if b.status != PLAYING or b.game is None:
                continue
            record = self.loop.store.game(b.game)
            if record is not None and record.status != "running" and record.summary:
                n += self.record(b.id, record.summary, {"game": b.game}) is not None
        return n

    def replayed(self) -> Tournament:
        """The running tournament folded again from the log alone (its replay check)."""
        t, _ = self._running()
        record = self.loop.store.game(t)
        if record is None:
            raise NO_TOURNAMENT
        return fold(engine, engine.initial(record.setup), self.loop.store.events(t))

    # -- watching --------------------------------------------------------------------------
    def watch(self, on_change: Watcher, *, link_too: bool = False) -> Callable[[], None]:
        """Call `on_change()` (on the loop's notifier thread: keep it short) after each
        change to the tournament that the rooms link did not make itself, or after every
        change with `link_too` (the link itself must not: it would hear its own echo);
        returns the unsubscribe."""
        entry = (on_change, link_too)
        with self._lock:
            self._watchers.append(entry)

        def off() -> None:
            with self._lock:
                if entry in self._watchers:
                    self._watchers.remove(entry)

        return off

    def watchers(self) -> int:
        with self._lock:
            return len(self._watchers)

    def _on_update(self, update: Update) -> None:
        """The one loop subscriber (notifier thread): a battle game played here ended, or
        the tournament changed."""
        if update.rules is engine:
            if not update.events:
                return
            own = any(not _by_link(e) for e in update.events)
            with self._lock:
                watchers = [fn for fn, link_too in self._watchers if own or link_too]
            for fn in watchers:
                try:
                    fn()
                except Exception:
                    log.exception("tournament watcher %r failed", fn)
            return
        if not update.finished:
            return
        t = self.game
        if t is None:
            return
        b = next((b for b in self.loop.snapshot(t)[1].battles
                  if b.game == update.game and b.status == PLAYING), None)
        if b is None:
            return
        try:
            args = outcome_args(update.rules.summary(update.state), b.id,
                                {"game": update.game})
        except Refused as r:
            log.warning("battle %s: its result cannot be read: %s", b.id, r.message_en)
            return
        # Never waited for here (the notifier thread would wait on itself): logged if refused.
        self.loop.submit(args, game=t).add_done_callback(_log_refusal(b.id))


def _by_link(e: Event) -> bool:
    """An event of a command the rooms link sent: a battle given to a room, a room's
    result (they name the room)."""
    source = e.data.get("source")
    return "room" in e.data or (isinstance(source, Mapping) and "room" in source)


def _log_refusal(battle_id: str) -> Callable[[Future[Outcome]], None]:
    def done(fut: Future[Outcome]) -> None:
        try:
            out = fut.result()
        except Exception:
            log.exception("battle %s: recording its result failed", battle_id)
            return
        if out.refused is not None and out.refused.code != "not_playing":
            log.warning("battle %s: its result was refused: %s", battle_id,
                        out.refused.message_en)
    return done
