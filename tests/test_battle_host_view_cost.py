"""The battle host view's list of judgements is kept from one update to the next (only a new
judgement is labelled), and is always what labelling every judgement afresh gives; the
same for where an undo returns, and the scores: checked
along a random walk of legal commands (judgements, rejudgements, undo, corrections,
removed questions) through the code the loop runs, on a real SQLite file."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from appliance.rules import registry
from appliance.rules.battle import actions, views
from appliance.rules.protocol import Command
from appliance.runtime.running import RunningGame
from appliance.runtime.store import Store

MS = 1_000_000
SETUP = {"players": ["Аня", "Борис", "Вера"],
         "themes": [{"name": f"Тема {i + 1}"} for i in range(6)],
         "extra_themes": [{"name": f"Доп. тема {i + 1}"} for i in range(4)]}


def fresh(state: Any) -> list[dict[str, Any]]:
    return [{"ref": i, "label_ru": actions.judgement_label(state, i)[0], "player": j.player,
             "verdict": j.verdict, "points": j.points} for i, j in enumerate(state.judgements)]


def undo_to(state: Any) -> dict[str, Any] | None:
    if not state.earlier:
        return None
    prev = state.earlier[-1]
    return {"phase": prev.phase, "scores": prev.scores(), "judgements": len(prev.judgements),
            "question": {"theme": prev.themes[prev.theme].name,
                         "value": prev.themes[prev.theme].value(prev.number)}}


def args(action: Any, rng: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, spec in action.args.items():
        if isinstance(spec, list):
            out[name] = rng.choice(spec)["value"]
        elif isinstance(spec, dict) and spec.get("type") == "int":
            lo, hi = max(spec.get("min", -100), -500), min(spec.get("max", 100), 500)
            out[name] = rng.randint(lo, hi)
        else:
            out[name] = "Москва"
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_kept_judgements_equal_a_fresh_labelling(tmp_path: Path, seed: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    rules = registry.get("battle")
    with Store(tmp_path / "svoyak.db") as store:
        session = RunningGame.new(store, "battle", rules, SETUP)
        labelled: list[int] = []
        label = actions.judgement_label

        def counted(state: Any, ref: int) -> tuple[str, str]:
            labelled.append(ref)
            return label(state, ref)

        monkeypatch.setattr(views, "judgement_label", counted)
        t, appended, unchanged = 10**12, 0, 0
        previous = session.state.judgements
        for _ in range(400):
            t += rng.randint(50, 3000) * MS
            legal = rules.legal_actions(session.state)
            if not legal:
                break
            action = rng.choices(legal, [1 if a.confirm else 12 for a in legal])[0]
            session.run(Command(action.type, t, args(action, rng), action.by))
            js = session.state.judgements
            labelled.clear()
            assert rules.view(session.state, "host")["judgements"] == fresh(session.state)
            if js is previous:
                assert labelled == []
                unchanged += 1
            elif len(js) == len(previous) + 1 and all(
                    a is b for a, b in zip(previous, js, strict=False)):
                assert labelled == [len(js) - 1]  # only the new judgement is labelled
                appended += 1
            labelled.clear()
            host = rules.view(session.state, "host")
            assert host["judgements"] == fresh(session.state)
            assert labelled == []
            assert host["undo_to"] == undo_to(session.state)  # kept while its target is
            assert host["players"] == [  # and the scores, summed from this very state
                {**p, "score": sum(j.points for j in session.state.judgements
                                   if j.player == p["seat"]) + sum(
                    d for who, d in session.state.corrections if who == p["seat"])}
                for p in host["players"]]
            previous = js
        assert appended >= 5 and unchanged >= 5
