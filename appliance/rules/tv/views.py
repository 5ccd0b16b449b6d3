"""What each screen may see of a TV game, its deadlines, statistics and result.

Secrecy (a tested property): the board («табло») and player screens never get an answer,
a final or stake bet or a written answer before the host reveals it (closing a question
reveals its answer; judging a written answer reveals that player's answer and bet), and
no question text before it is read: none for a cat while it is given or priced, nor for an
auction while it is bid for.
"""

from __future__ import annotations

from typing import Any

from appliance.packages.model import Kind, Question
from appliance.rules import arbiter, kit
from appliance.rules.arbiter import MS
from appliance.rules.tv.board import answer_of, cat_price_choices
from appliance.rules.tv.final import remover
from appliance.rules.tv.state import Mode, Phase, Play, Stage, State, late_press
from appliance.rules.tv.summary import stats
from appliance.rules.undo import can_undo

# The board and phones show a question's text while it is read and answered, the cat's and
# the auction's too once given or won (not while it is given, priced or bid for): the room
# reads every question. The rules digest says these two are heard, not shown; the club
# decided otherwise (issue 25, docs/webui.md "Every question on the TV").
TEXT_PHASES = (Phase.READING, Phase.BUTTONS, Phase.ANSWERING, Phase.AFTER_WRONG,
               Phase.WRITING)


# -------------------------------------------------------------------------- views ----
def view(state: State, role: str) -> dict[str, Any]:
    seat = kit.view_seat(role, state.seats)  # refuses a role or seat there is not
    if role == "hardware":
        return _hardware(state)
    host = role == "host"
    out: dict[str, Any] = {
        "engine": "tv",
        "role": role,
        "stage": state.stage,
        "phase": state.phase,
        "round": {"index": state.round, "name": state.round_name,
                  "count": len(state.board.rounds)},
        "players": [{"seat": i, "name": n, "score": state.scores[i]}
                    for i, n in enumerate(state.players)],
        "chooser": state.chooser,
        "candidates": list(state.candidates),
        "board": _board(state, host),
        "question": _question(state, host, seat),
        "last": _last(state.last),
        "final": _final(state, host),
        "shootout": _shootout(state),
        "judgements": [j.to_json() for j in state.judgements],
        "stats": stats(state),
        "winners": list(state.winners),
        "false_starts": sum(state.false_starts),
    }
    if host or role == "board":
        out["late_press"] = late_press(state)
    if host:
        out["settings"] = state.settings.to_json()
        out["can_undo"] = can_undo(state)
        out["undo_to"] = _undo_to(state.earlier[-1] if state.earlier else None)
        out["package"] = state.package.name
    if seat is not None:
        out["seat"] = seat
        race = state.play.race if state.play is not None else None
        until = dict(race.blocked_until).get(seat) if race is not None else None
        if until is not None:  # the hub turns it into milliseconds left (`timers`)
            out["block_ends_ns"] = until
    return out


def _undo_to(prev: State | None) -> dict[str, Any] | None:
    """Where an undo returns: the host's dialog shows what it takes back (the verdicts and
    score changes since, the phase it goes back to)."""
    if prev is None:
        return None
    play = prev.play
    return {"phase": prev.phase, "scores": list(prev.scores),
            "judgements": len(prev.judgements),
            "question": None if play is None else {"theme": play.theme, "value": play.value}}



def _hardware(state: State) -> dict[str, Any]:
    play = state.play
    race = play.race if play else None
    lamp = bool(race is not None and state.phase == Phase.BUTTONS and race.armed)
    answering = play.answerer if play is not None and state.phase == Phase.ANSWERING else None
    return {"lamp": lamp, "answering": answering, "queue": [],
            "false_starts": sum(state.false_starts)}


def _board(state: State, host: bool) -> dict[str, Any] | None:
    if state.stage != Stage.ROUND or state.round >= len(state.board.rounds):
        return None
    rnd = state.board.rounds[state.round]
    themes = []
    for ti, name in enumerate(rnd.themes):
        cells = []
        for c in rnd.cells[ti]:
            cell: dict[str, Any] = {"theme": ti, "question": c.index, "value": c.value,
                                    "played": c.id in state.played or c.kind == Kind.EMPTY}
            if host:
                cell["kind"] = str(c.kind)
            cells.append(cell)
        themes.append({"name": name, "cells": cells})
    return {"name": rnd.name, "themes": themes}


def _content(q: Question | None, host: bool, kind: str) -> dict[str, Any]:
    if q is None:
        return {"text": "", "media": []}
    if host:
        return {"text": q.text, "media": [i.value for i in q.content if i.is_media]}
    text = "\n".join(i.value for i in q.content if i.type == "text" and not i.spoken)
    return {"text": text, "media": [i.value for i in q.content if i.is_media]}


def _question(state: State, host: bool, seat: int | None) -> dict[str, Any] | None:
    play = state.play
    if play is None:
        return None
    hidden_cat = play.kind == Kind.CAT and state.phase in (Phase.CAT_GIVE,)
    priced = not (play.kind == Kind.CAT and state.phase in (Phase.CAT_GIVE, Phase.CAT_PRICE))
    out: dict[str, Any] = {
        "kind": play.kind, "mode": play.mode,
        "theme": play.theme if (host or not hidden_cat) else "",
        "value": play.value if (host or priced) else None,
        "opener": play.opener, "answerer": play.answerer,
        "cell": list(play.cell) if play.cell else None,
    }
    show = state.phase in TEXT_PHASES and (play.mode != Mode.WRITTEN
                                           or state.phase == Phase.WRITING)
    if host or show:
        out.update(_content(play.question, host, play.kind))
    cat = play.question.cat if play.question is not None else None
    if cat and cat.public_price and state.phase == Phase.CAT_GIVE and play.cell is not None:
        price = cat_price_choices(state.board.cell(play.cell))  # announced before it is given
        out["value"] = price if isinstance(price, int) else None
    if host:
        out["answer"] = answer_of(play.question)
        if play.kind == Kind.CAT:
            assert play.cell is not None
            out["cat_price"] = cat_price_choices(state.board.cell(play.cell))
    if play.race is not None:
        out["race"] = _race(play)
        if (state.settings.answer_s and state.phase == Phase.ANSWERING
                and play.race.winner_ns is not None):
            out["answer_deadline_ns"] = play.race.winner_ns + int(state.settings.answer_s * 1e9)
            # The countdown ran out: board and host show it; the host still judges.
            out["time_up"] = play.time_up
    if play.auction is not None:
        out["auction"] = {**play.auction.to_json(), "step": state.settings.auction_step}
    if play.written is not None:
        out["written"] = _written(play, host, seat)
    return out


def _race(play: Play) -> dict[str, Any]:
    race = play.race
    assert race is not None
    presses = race.report()
    late = arbiter.earlier_late(race)
    for p in presses:  # measured from the lamp in force at the press (re-arms included)
        if late is not None and (p["player"], p["t_ns"], p["status"]) == (
                late.player, late.t_ns, late.status):
            p["status"] = "late_earlier"  # earlier than the winner, reached the box late
        lit = [t for t in play.lamps if t <= p["t_ns"]]
        base = lit[-1] if lit else (play.lamps[0] if play.lamps else None)
        p["ms_after_lamp"] = None if base is None else (p["t_ns"] - base) / MS
        p["lamp"] = len(lit)  # 0: before the first lamp; 2: after the first re-arm
    return {"lamp": race.armed, "lamp_ns": race.lamp_ns, "lamps": list(play.lamps),
            "presses": presses, "answered": sorted(race.answered),
            "playing": sorted(race.playing), "winner": race.winner}


def _written(play: Play, host: bool, seat: int | None) -> dict[str, Any]:
    w = play.written
    assert w is not None
    bets, answers, verdicts = dict(w.bets), dict(w.answers), dict(w.verdicts)
    rows = []
    for p in w.players:
        revealed = p in verdicts
        mine = host or revealed or p == seat
        rows.append({
            "player": p,
            "has_bet": p in bets, "has_answer": p in answers,
            "bet": bets.get(p) if mine else None,
            "answer": answers.get(p) if mine else None,
            "verdict": verdicts.get(p),
        })
    return {"players": list(w.players), "needs_bets": w.needs_bets, "rows": rows}


def _last(play: Play | None) -> dict[str, Any] | None:
    """The question closed last, its answer revealed for everyone."""
    if play is None:
        return None
    out: dict[str, Any] = {"kind": play.kind, "theme": play.theme, "value": play.value,
                           "outcome": play.outcome, "right_by": play.right_by,
                           "answerer": play.answerer, "opener": play.opener,
                           "answer": answer_of(play.question)}
    if play.race is not None:
        out["race"] = _race(play)
    if play.auction is not None:
        out["auction"] = play.auction.to_json()
    if play.written is not None:
        out["written"] = _written(play, True, None)
    return out


def _final(state: State, host: bool) -> dict[str, Any] | None:
    f, final = state.final, state.board.final
    if f is None or final is None:
        return None
    removed = dict(f.removed)
    turn = remover(f.order, len(f.removed)) if state.phase == Phase.FINAL_REMOVE else None
    # The final's answer once its question closed: a shootout after it must not lose it.
    left = f.remaining(len(final.themes))
    answer = answer_of(final.questions[left[0]]) if f.closed and left else None
    return {"name": final.name, "players": list(f.players), "order": list(f.order),
            "turn": turn,
            "themes": [{"index": i, "name": n, "removed_by": removed.get(i)}
                       for i, n in enumerate(final.themes)],
            "answer": answer}


def _shootout(state: State) -> dict[str, Any] | None:
    so = state.shootout
    if so is None:
        return None
    return {"players": list(so.players), "themes": so.themes, "theme": so.theme,
            "question": so.position + 1 if so.items else 0, "questions": len(so.items),
            "values": [v for _, v in so.items]}
