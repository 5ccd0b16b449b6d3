"""Folding the battle's events into its state: one pure function per event type. Never
refuses: an event is a fact already decided. Undo is the kit's (`appliance.rules.undo`):
`game.evolve` remembers the state before each of `game.UNDO_POINTS` and restores it on
``undone``; `_ev_undone` only gives a restored question whose window had run out a fresh one.
"""

from __future__ import annotations

from typing import Any

from appliance.rules import arbiter
from appliance.rules.battle.setup import theme_spec
from appliance.rules.battle.state import (
    ANSWERING,
    CLOSED,
    FINISHED,
    OPEN,
    READY,
    TIE,
    Battle,
    Judgement,
    Played,
    QuestionSpec,
)
from appliance.rules.protocol import Event
from appliance.rules.records import copier, maker, replace
from appliance.rules.seq import Seq

_copy_battle = copier(Battle)
_copy_played = copier(Played)
_make_played = maker(Played)


def _with_current(state: Battle, **changes: Any) -> Battle:
    played = state.played
    return _copy_battle(state, {"played": played.set_last(_copy_played(played[-1], changes))})


def _set_current(state: Battle, q: Played, **changes: Any) -> Battle:
    """`state` with `q` as the question being played, and `changes`: one copy of the battle
    (the hot folds build `q` themselves, so an event copies each record once)."""
    changes["played"] = state.played.set_last(q)
    return _copy_battle(state, changes)


def _ev_announced(state: Battle, e: Event) -> Battle:
    race = arbiter.new_race(state.seats, state.settings.arbiter, frozenset(e.data["players"]),
                            rotation=len(state.played) % state.seats, lamp_ns=e.t_ns)
    data = e.data
    played = _make_played({"theme": data["theme"], "number": data["number"],
                           "value": data["value"], "race": race, "announced_ns": e.t_ns,
                           "lamps": (e.t_ns,)})
    return _copy_battle(state, {"played": state.played.append(played), "phase": OPEN})


def _ev_reading_done(state: Battle, e: Event) -> Battle:
    return _with_current(state, reading_done_ns=e.t_ns,
                         window_from_ns=e.t_ns if state.phase == OPEN else None)


def _ev_press(state: Battle, e: Event) -> Battle:
    q = state.played[-1]
    data = e.data
    race = arbiter.press(q.race, data["player"], e.t_ns, data.get("by", "button"))
    return _copy_battle(state, {"played": state.played.set_last(_copy_played(q, {"race": race}))})


def _ev_short_word(state: Battle, e: Event) -> Battle:
    return _with_current(state, short_word=True)


def _ev_answerer(state: Battle, e: Event) -> Battle:
    q = state.played[-1]
    race = q.race
    reactions = tuple([(p.player, arbiter.reaction_ns(race, p.t_ns))
                       for p in race.candidates()])
    return _set_current(state, _copy_played(q, {
        "race": arbiter.settle(race, e.t_ns), "mandatory": False,
        "reactions": q.reactions + reactions}), phase=ANSWERING)


def _ev_signal_reset(state: Battle, e: Event) -> Battle:
    return _with_current(state, race=arbiter.open_queue(state.played[-1].race, e.t_ns))


def _ev_judged(state: Battle, e: Event) -> Battle:
    j = Judgement(len(state.played) - 1, e.data["player"], e.data["verdict"], e.data["value"],
                  e.t_ns)
    return replace(state, judgements=state.judgements.append(j))


def _ev_queue_next(state: Battle, e: Event) -> Battle:
    race, _ = arbiter.next_in_queue(state.played[-1].race)
    return _with_current(state, race=race, mandatory=True)


def _ev_rearmed(state: Battle, e: Event) -> Battle:
    q = state.played[-1]
    return _set_current(state, replace(
        q, race=arbiter.rearm(q.race, e.t_ns), mandatory=False, lamps=q.lamps + (e.t_ns,),
        window_from_ns=e.t_ns if q.reading_done_ns is not None else None), phase=OPEN)


def _closed(q: Played, reason: str) -> Played:
    """The question over, for `reason`: buttons off for good, no window running."""
    return replace(q, race=arbiter.close(q.race), closed=reason, window_from_ns=None,
                   mandatory=False)


def _ev_question_closed(state: Battle, e: Event) -> Battle:
    return _set_current(state, _closed(state.played[-1], e.data["reason"]), phase=CLOSED)


def _ev_advanced(state: Battle, e: Event) -> Battle:
    return replace(state, theme=e.data["theme"], number=e.data["number"], phase=READY)


def _ev_extra_theme(state: Battle, e: Event) -> Battle:
    theme = theme_spec(e.data["theme"], extra=True)
    pool = state.extra_pool[1:] if e.data.get("from_pool") else state.extra_pool
    players = tuple(e.data["players"])
    return replace(state, themes=state.themes + (theme,), extra_pool=pool,
                   theme=len(state.themes), number=0, phase=READY, contenders=players,
                   tiebreaks=state.tiebreaks + (players,), winner=None)


def _ev_tie(state: Battle, e: Event) -> Battle:
    return replace(state, phase=TIE, contenders=tuple(e.data["players"]), winner=None)


def _ev_battle_finished(state: Battle, e: Event) -> Battle:
    return replace(state, phase=FINISHED, winner=e.data["winner"])


def _ev_undone(state: Battle, e: Event) -> Battle:
    restored = state  # already restored by `undo.evolve`
    q = restored.current
    if (restored.phase == OPEN and q is not None and q.window_from_ns is not None
            and q.window_from_ns + restored.settings.window_ns <= e.t_ns):
        # The window had run out (that is what closed the question): give a fresh one.
        restored = _with_current(restored, window_from_ns=e.t_ns)
    return restored


def _ev_handed_over(state: Battle, e: Event) -> Battle:
    return _with_current(state, race=arbiter.hand_over(state.played[-1].race, e.data["player"]))


def _ev_rejudged(state: Battle, e: Event) -> Battle:
    ref = e.data["ref"]
    j = replace(state.judgements[ref], verdict=e.data["verdict"])
    return replace(state, judgements=state.judgements.set(ref, j))


def _voided(js: Seq[Judgement], refs: list[int]) -> Seq[Judgement]:
    for ref in refs:
        js = js.set(ref, replace(js[ref], voided=True))
    return js


def _ev_question_removed(state: Battle, e: Event) -> Battle:
    return _set_current(state, _closed(state.played[-1], "removed"), phase=CLOSED,
                        judgements=_voided(state.judgements, e.data["refs"]))


def _ev_question_replaced(state: Battle, e: Event) -> Battle:
    q = state.played[-1]
    r = e.data["replacement"]
    spec = QuestionSpec(str(r.get("text", "")), str(r.get("answer", "")),
                        str(r.get("comment", "")))
    pool = e.data.get("from_pool")
    return _set_current(state, _closed(q, "replaced"), phase=READY, theme=q.theme,
                        number=q.number, judgements=_voided(state.judgements, e.data["refs"]),
                        replacements=state.replacements + (((q.theme, q.number), spec),),
                        used_pool=state.used_pool + ((tuple(pool),) if pool else ()))


def _ev_score_set(state: Battle, e: Event) -> Battle:
    return replace(state, corrections=state.corrections.append(
        (e.data["player"], e.data["delta"])))


EVOLVERS = {
    "announced": _ev_announced,
    "reading_done": _ev_reading_done,
    "press": _ev_press,
    "short_word": _ev_short_word,
    "answerer": _ev_answerer,
    "signal_reset": _ev_signal_reset,
    "judged": _ev_judged,
    "queue_next": _ev_queue_next,
    "rearmed": _ev_rearmed,
    "question_closed": _ev_question_closed,
    "advanced": _ev_advanced,
    "extra_theme": _ev_extra_theme,
    "tie": _ev_tie,
    "battle_finished": _ev_battle_finished,
    "undone": _ev_undone,
    "rejudged": _ev_rejudged,
    "score_set": _ev_score_set,
    "handed_over": _ev_handed_over,
    "question_removed": _ev_question_removed,
    "question_replaced": _ev_question_replaced,
}
