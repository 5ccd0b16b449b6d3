"""The battle's result: places, scores, every question's outcome, per-player figures."""

from __future__ import annotations

from typing import Any

from appliance.rules import kit
from appliance.rules.battle.state import (
    FINISHED,
    NAME,
    Battle,
    Judgement,
    ranking,
)


def summary(state: Battle) -> dict[str, Any]:
    """The battle's result: places, scores, every question's outcome, per-player figures."""
    scores = state.scores()
    places = ranking(state)
    by_question: dict[int, list[tuple[int, Judgement]]] = {}
    for ref, j in enumerate(state.judgements):
        by_question.setdefault(j.question, []).append((ref, j))
    questions = []
    for i, q in enumerate(state.played):
        t = state.themes[q.theme]
        js = by_question.get(i, [])
        questions.append({
            "theme": t.name, "theme_index": q.theme, "red": t.red, "extra": t.extra,
            "number": q.number + 1, "value": q.value, "players": sorted(q.race.playing),
            "answered": [j.player for _, j in js],
            "judgements": [{"ref": ref, "player": j.player, "verdict": j.verdict,
                            "points": j.points, "voided": j.voided} for ref, j in js],
            "short_word": q.short_word, "closed": q.closed, "race": q.race_report(),
        })
    stats = []
    for p, name in enumerate(state.players):
        # A removed or replaced question's verdicts count for nothing here too.
        mine = [j for j in state.judgements if j.player == p and not j.voided]
        presses, mean, best = kit.reaction_ms(
            ns for q in state.played for pl, ns in q.reactions if pl == p)
        verdicts = kit.verdict_counts(j.verdict for j in mine)
        stats.append({
            "seat": p, "name": name,
            "right": verdicts[kit.RIGHT],
            "wrong": verdicts[kit.WRONG],
            "no_answer": verdicts[kit.NO_ANSWER],
            "points": sum(j.points for j in mine),
            "corrections": sum(d for pl, d in state.corrections if pl == p),
            "score": scores[p],
            "presses": presses,
            "reaction_ms": {"mean": mean, "best": best},
        })
    return {
        "rules": NAME,
        "phase": state.phase,
        "finished": state.phase == FINISHED,
        "winner": state.winner,
        "players": list(state.players),
        "scores": scores,
        "places": places,
        "standings": sorted(({"seat": p, "name": n, "score": scores[p], "place": places[p]}
                             for p, n in enumerate(state.players)),
                            key=lambda s: (s["place"], s["seat"])),
        "questions": questions,
        # The tie-break: who played each extra theme, and who plays the current theme.
        "extra_themes": [{"theme": t.name, "players": list(group)} for t, group in
                         zip([t for t in state.themes if t.extra], state.tiebreaks,
                             strict=False)],
        "contenders": list(state.contenders),
        "statistics": stats,
        "corrections": [{"player": p, "points": d} for p, d in state.corrections],
        "settings": state.settings.to_json(),
    }
