"""The TV game engine («Своя игра»): commands in, events out, over an immutable `State`.

`decide` validates a command and returns its events, then appends the automatic events
the rules imply (the round ends when the board is empty, a player who cannot outbid passes,
a tie after the final starts a shootout...), so the log always holds every fact. `evolve`
folds one event and never refuses. The protocol is documented in docs/protocol-tv.md.

Undo (`appliance.rules.undo`, the kit's one mechanism): in the TV format the host may take
back any decision of theirs (the rules texts say nothing of undo: the box's decision), so
every host command is an undo point (`UNDO_POINTS`); its first event carries
``"step": true`` and folding it keeps the state before the whole decision in
`State.earlier`.
"""

from __future__ import annotations

from appliance.packages.model import Kind
from appliance.rules import kit, undo
from appliance.rules.protocol import Command, Event
from appliance.rules.tv import auction as auc
from appliance.rules.tv import final as fin
from appliance.rules.tv.actions import legal_actions
from appliance.rules.tv.commands import HANDLERS
from appliance.rules.tv.deadlines import next_deadline
from appliance.rules.tv.folds import EVOLVERS
from appliance.rules.tv.setup import SETUP_SPEC, initial
from appliance.rules.tv.state import DONE, RIGHT, ROUND_OVER, STAGE_OVER, Phase, Stage, State
from appliance.rules.tv.summary import summary
from appliance.rules.tv.views import view

NAME = "tv"

__all__ = ["NAME", "SETUP_SPEC", "decide", "evolve", "initial", "legal_actions", "next_deadline",
           "summary", "view"]

UNDO_POINTS = undo.Points(commands=frozenset(HANDLERS) - {"press", "timeout", undo.UNDO})
"""Every host decision may be taken back, with its automatic follow-ups: all commands but a
player's press, the loop's timeout and undo itself."""


# -------------------------------------------------------------------------- decide ----
def decide(state: State, command: Command) -> list[Event]:
    handler = HANDLERS.get(command.type)
    if handler is None:
        raise kit.unknown_command(command.type)
    if state.stage == Stage.OVER and command.type not in (undo.UNDO, "press", "timeout"):
        raise kit.game_over()
    events = handler(state, command)
    if not events:
        return []
    events = UNDO_POINTS.mark(command, events)
    s = state
    for e in events:
        s = evolve(s, e)
    for _ in range(1000):  # every automatic event moves the phase on; the bound is a guard
        auto = _automatic(s, command.t_ns)
        if auto is None:
            break
        events.append(auto)
        s = evolve(s, auto)
    return events

# ---------------------------------------------------------------------- automatic ----
def _automatic(s: State, t: int) -> Event | None:
    """The next event the rules imply by themselves, or None when the host must act."""
    play = s.play
    if s.phase == DONE:
        return Event("question_closed", t, {"outcome": "answered"})
    if s.phase == Phase.CHOOSE and s.stage == Stage.ROUND and not s.open_cells():
        return Event("round_ended", t, {"round": s.round, "early": False})
    if s.phase == ROUND_OVER:
        return _after_round(s, t)
    if s.phase == STAGE_OVER:
        pool = s.shootout.players if s.stage == Stage.SHOOTOUT and s.shootout else None
        tied = fin.leaders(s.scores, pool)
        if len(tied) > 1:
            return Event("shootout_started", t, {"players": list(tied)})
        return Event("game_over", t, {"winners": list(tied)})
    if s.phase == Phase.AUCTION and play and play.auction:
        a = play.auction
        if a.turn is None:
            return Event("auction_won", t, {"player": a.leader, "amount": a.bid})
        if not auc.can_beat(a, a.turn, s.scores):
            if a.leader is None:  # the opener's score fell below the value (a correction)
                return Event("bid", t, {"player": a.turn, "amount": a.value, "all_in": False,
                                        "auto": True})
            return Event("passed", t, {"player": a.turn, "auto": True})
    if s.phase == Phase.FINAL_ORDER and len(s.candidates) == 1:
        return Event("remover_ordered", t, {"player": s.candidates[0]})
    if s.phase == Phase.BETS and play and play.written and not play.written.players:
        return Event("question_closed", t, {"outcome": "nobody"})
    if (s.phase == Phase.ANSWERING and play and play.kind == Kind.CAT and play.question
            and play.question.cat and play.question.cat.no_question):
        return Event("judged", t, {"player": play.answerer, "verdict": RIGHT,
                                   "plus": play.value, "minus": 0})
    return None


def _after_round(s: State, t: int) -> Event:
    nxt = s.round + 1
    if nxt < len(s.board.rounds):
        low = min(s.scores)
        tied = [p for p, v in enumerate(s.scores) if v == low]
        return Event("round_started", t, {"round": nxt,
                                          "chooser": tied[0] if len(tied) == 1 else None,
                                          "candidates": tied})
    if s.board.final is not None:
        players = fin.participants(s.scores, s.settings.final_positive_only)
        return Event("final_started", t, {"players": list(players)})
    top = fin.leaders(s.scores)
    if len(top) > 1:
        return Event("shootout_started", t, {"players": list(top)})
    return Event("game_over", t, {"winners": list(top)})


# -------------------------------------------------------------------------- evolve ----
def evolve(state: State, event: Event) -> State:
    return undo.evolve(state, event, UNDO_POINTS, EVOLVERS)

