"""What each screen may see of a battle. The board and the players never get the text or
answer of a question while it is played; `revealed` holds the last closed one."""

from __future__ import annotations

from typing import Any

from appliance.rules import kit
from appliance.rules.battle.actions import judgement_label
from appliance.rules.battle.deadlines import next_deadline
from appliance.rules.battle.state import (
    ANSWERING,
    NAME,
    OPEN,
    PHASE_RU,
    QUESTIONS_PER_THEME,
    TIE,
    Battle,
    Judgement,
    late_press,
    others_may_queue,
    ranking,
)
from appliance.rules.seq import Seq
from appliance.rules.undo import can_undo


def _theme_json(state: Battle, index: int) -> dict[str, Any]:
    t = state.themes[index]
    return {"index": index, "name": t.name, "red": t.red, "extra": t.extra,
            "values": [t.value(n) for n in range(QUESTIONS_PER_THEME)]}


def _common(state: Battle) -> dict[str, Any]:
    q = state.current
    scores = state.scores()
    places = ranking(state)
    out: dict[str, Any] = {
        "rules": NAME,
        "phase": state.phase,
        "phase_ru": PHASE_RU[state.phase],
        "players": [{"seat": p, "name": n, "score": scores[p], "place": places[p],
                     "playing": p in state.contenders} for p, n in enumerate(state.players)],
        "theme": _theme_json(state, state.theme),
        "number": state.number,
        "value": state.themes[state.theme].value(state.number),
        "themes": [{"name": t.name, "red": t.red, "extra": t.extra} for t in state.themes],
        "question_index": len(state.played) - 1 if q is not None else None,
        "answering": None, "queue": [], "mandatory": False, "lamp": False,
        "reading_done": None, "short_word": False, "window_ends_ns": None,
        "deadline_ns": next_deadline(state),
        "winner": state.winner,
        "tied": state.leaders() if state.phase == TIE else [],
    }
    if q is not None:
        r = q.race
        out.update({
            "answering": r.winner if state.phase == ANSWERING else None,
            "queue": [p.player for p in r.queue] if state.phase == ANSWERING else [],
            "queue_open": state.phase == ANSWERING and r.queue_from_ns is not None,
            "mandatory": q.mandatory,
            "lamp": _lamp(state),
            "reading_done": q.reading_done_ns is not None,
            "short_word": q.short_word,
            "window_ends_ns": (None if q.window_from_ns is None or state.phase != OPEN
                               else q.window_from_ns + state.settings.window_ns),
            "answered": sorted(r.answered | ({r.winner} if state.phase == ANSWERING
                                             and r.winner is not None else set())),
            "closed": q.closed,
        })
    return out


def _lamp(state: Battle) -> bool:
    """Pressing does something now: the buttons are armed, or the queue is open."""
    q = state.current
    if q is None or state.phase not in (OPEN, ANSWERING):
        return False
    if state.phase == OPEN:
        return q.race.armed
    return q.race.queue_from_ns is not None and others_may_queue(q)


def _revealed(state: Battle) -> dict[str, Any] | None:
    """The last closed question, text and answer: safe for every screen."""
    if not state.played or state.played[-1].closed is None:
        return None
    q = state.played[-1]
    spec = state.spec(q.theme, q.number)
    return {"theme": state.themes[q.theme].name, "value": q.value, **spec.to_json()}


# (judgements, themes, players, the host's rows for them) of the last host view: an update
# that adds no judgement labels none, and one that appends a judgement labels only that one,
# so the host's view does not cost more per update as the game grows. A row depends on its
# judgement, its question's theme and value (fixed once announced), and the names.
_LAST_JUDGEMENTS: tuple[Seq[Judgement], tuple[Any, ...], tuple[str, ...],
                        list[dict[str, Any]]] | None = None


def _judgements(state: Battle) -> list[dict[str, Any]]:
    global _LAST_JUDGEMENTS
    memo, js = _LAST_JUDGEMENTS, state.judgements
    rows: list[dict[str, Any]] = []
    if memo is not None and memo[1] is state.themes and memo[2] is state.players:
        if memo[0] is js:
            return list(memo[3])
        grown = len(js) == len(memo[0]) + 1  # then `js` has one item more than the memo's
        if grown and all(a is b for a, b in zip(memo[0], js, strict=False)):
            rows = list(memo[3])
    for i in range(len(rows), len(js)):
        j = js[i]
        rows.append({"ref": i, "label_ru": judgement_label(state, i)[0], "player": j.player,
                     "verdict": j.verdict, "points": j.points})
    _LAST_JUDGEMENTS = (js, state.themes, state.players, rows)
    return list(rows)


# The last `_undo_to` and the state it describes: the undo target changes only at an
# undoable decision, and summing its scores on every update would also evict the current
# state's scores from `Battle.scores`' memo, so every view of the update summed them again.
_LAST_UNDO_TO: tuple[Battle, dict[str, Any]] | None = None


def _undo_to(prev: Battle) -> dict[str, Any]:
    """Where an undo returns: the host's dialog shows what it takes back (the verdicts and
    score changes since, the phase it goes back to)."""
    global _LAST_UNDO_TO
    memo = _LAST_UNDO_TO
    if memo is not None and memo[0] is prev:
        return dict(memo[1])
    out = {"phase": prev.phase, "scores": prev.scores(), "judgements": len(prev.judgements),
           "question": {"theme": prev.themes[prev.theme].name,
                        "value": prev.themes[prev.theme].value(prev.number)}}
    _LAST_UNDO_TO = (prev, out)
    return dict(out)


def view(state: Battle, role: str) -> dict[str, Any]:
    seat = kit.view_seat(role, state.seats)  # refuses a role or seat there is not
    if role == "hardware":
        q = state.current
        live = state.phase == ANSWERING and q is not None
        return {"lamp": _lamp(state),
                "answering": q.race.winner if live and q is not None else None,
                "queue": [p.player for p in q.race.queue] if live and q is not None else [],
                "false_starts": 0}
    out = _common(state)
    q = state.current
    race = q.race_report() if q is not None else []
    if role == "host":
        spec = state.spec(state.theme, state.number)
        out.update({
            "question": spec.to_json(),  # the host reads it, answer included
            "race": race,
            "late_press": late_press(state),
            "judgements": _judgements(state),
            "corrections": [{"player": p, "points": d} for p, d in state.corrections],
            "can_undo": can_undo(state),
            "undo_to": _undo_to(state.earlier[-1]) if state.earlier else None,
            "settings": state.settings.to_json(),
        })
        return out
    if role == "board":
        out.update({"race": race, "revealed": _revealed(state),
                    "late_press": late_press(state)})
        return out
    if seat is not None:
        out.update({
            "seat": seat, "name": state.players[seat], "score": state.score(seat),
            "may_press": out["lamp"] and q is not None and seat in q.race.playing
            and seat not in q.race.answered and seat != (
                q.race.winner if state.phase == ANSWERING else None),
            "revealed": _revealed(state),
        })
    return out
