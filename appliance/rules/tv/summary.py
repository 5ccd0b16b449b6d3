"""The TV game's statistics and final result as plain JSON."""

from __future__ import annotations

from typing import Any

from appliance.rules import kit
from appliance.rules.tv.state import Stage, State


def stats(state: State) -> list[dict[str, Any]]:
    """Per player: right, wrong, points by round, the host's corrections and the score
    (the points by round plus the corrections, always: a figure on one screen never
    disagrees with another), false starts, reaction lamp → press. A removed question's
    verdicts count in neither the points nor the verdicts."""
    out = []
    for p in range(state.seats):
        js = [j for j in state.judgements if j.player == p]
        by_round: dict[str, int] = {}
        for j in js:
            if not j.voided:
                by_round[j.round] = by_round.get(j.round, 0) + j.delta
        corrections = sum(d for pl, d, _ in state.corrections if pl == p)
        won, mean, best = kit.reaction_ms(state.reactions[p])
        verdicts = kit.verdict_counts(j.verdict for j in js if not j.voided)
        out.append({
            "player": p,
            "right": verdicts[kit.RIGHT],
            "wrong": verdicts[kit.WRONG],
            "no_answer": verdicts[kit.NO_ANSWER],
            "points_by_round": by_round,
            "corrections": corrections,
            "score": state.scores[p],
            "false_starts": state.false_starts[p],
            "presses_won": won,
            "reaction_mean_ms": None if mean is None else round(mean, 1),
            "reaction_best_ms": None if best is None else round(best, 1),
        })
    return out


def summary(state: State) -> dict[str, Any]:
    """The result as plain JSON, in the shape the battle's summary uses where they overlap."""
    over = state.stage == Stage.OVER
    return {
        "engine": "tv",
        "players": list(state.players),
        "scores": list(state.scores),
        "places": [1 + sum(1 for o in state.scores if o > v) for v in state.scores],
        "winner": state.winners[0] if over and len(state.winners) == 1 else None,
        "winners": list(state.winners),
        "finished": over,
        "over": over,
        "stage": state.stage,
        "ended_by_host": state.ended_by_host,
        "shootout_themes": state.shootout.themes if state.shootout else 0,
        "chooser": state.chooser,
        "final": _final(state),
        "shootout": ({"players": list(state.shootout.players), "themes": state.shootout.themes}
                     if state.shootout else None),
        "questions": [j.to_json() for j in state.judgements],
        "corrections": [{"player": p, "points": d, "round": r} for p, d, r in state.corrections],
        "stats": stats(state),
    }


def _final(state: State) -> dict[str, Any] | None:
    """What the rules decided of the final: who played it, which themes were removed by whom
    and which remained, and the bets once revealed (a judged written answer reveals its bet;
    all of them once the final question closes)."""
    f, final = state.final, state.board.final
    if f is None or final is None:
        return None
    if f.bets:
        bets = dict(f.bets)
    elif state.play is not None and state.play.kind == "final" and state.play.written:
        w = state.play.written
        judged = dict(w.verdicts)
        bets = {p: b for p, b in w.bets if p in judged}
    else:
        bets = {}
    return {
        "players": list(f.players),
        "removed": [{"theme": t, "name": final.themes[t], "by": p} for t, p in f.removed],
        "remaining": [final.themes[t] for t in f.remaining(len(final.themes))],
        "bets": {str(p): b for p, b in sorted(bets.items())},
    }
