"""A bracket battle as the battle engine sees it, and its result as the tournament sees it.

`battle_setup` turns a ready battle of the bracket into the battle engine's setup: its
players present (names, seat order), its themes from a question package — as many as the
stage plays (regulation 3.4), none already played in the tournament, the final's twelve
split into six blue and six red (red values doubled by the engine) — and a pool of unplayed
themes for the extra themes a tie for first needs (2.4). `result_args` turns the battle
engine's summary into the tournament's ``battle_result`` command. Both are pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from appliance.packages.model import Package
from appliance.rules import arbiter
from appliance.rules.battle import game as engine
from appliance.tournament import stages as st
from appliance.tournament.commands import no
from appliance.tournament.entries import key
from appliance.tournament.state import PLAYOFF, BattleState, Tournament

EXTRA_POOL = 3  # unplayed themes handed to a battle for tie-breaks


def themes_needed(state: Tournament, b: BattleState) -> int:
    """Themes of a battle (3.4): its stage's, as the draw planned them (4, 6 for a battle
    whose winner goes to the final, 12 in the final); the final's playoff plays one at a
    time."""
    if b.id == PLAYOFF:
        return 1
    return st.themes_for(state.plan.stages if state.plan else (), b.drawn.stage)


def battle_setup(state: Tournament, battle_id: str, package: Package,
                 settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The battle engine's setup for `battle_id`; `Refused` if the package has too few
    unplayed themes. The setup carries ``tournament`` (battle id, number, stage) for the
    screens; the battle engine ignores it."""
    b = state.battle(battle_id)
    if b is None:
        raise no(f"Нет боя «{battle_id}».", f"There is no battle '{battle_id}'.",
                 "unknown_battle")
    used = {key(t) for t in state.used_themes}
    main, extra = engine.package_themes(package)
    fresh = [t for t in main if key(t.name) not in used]
    fresh_extra = [t for t in extra if key(t.name) not in used]
    need = themes_needed(state, b)
    chosen: list[dict[str, Any]]
    if b.drawn.stage == st.FINAL and b.id != PLAYOFF:
        reds = [t for t in fresh if t.red][:st.RED_THEMES_FINAL]
        blues = [t for t in fresh if not t.red and t not in reds]
        blues = blues[:need - st.RED_THEMES_FINAL]
        more = [t for t in fresh if not t.red and t not in blues]
        reds += more[:st.RED_THEMES_FINAL - len(reds)]  # marked red here: values doubled
        if len(blues) + len(reds) < need:
            raise _short(need, len(fresh))
        chosen = ([{**t.to_json(), "red": False} for t in blues]
                  + [{**t.to_json(), "red": True} for t in reds])
        taken = {t.name for t in blues} | {t.name for t in reds}
    else:
        if len(fresh) < need:
            raise _short(need, len(fresh))
        chosen = [{**t.to_json(), "red": False} for t in fresh[:need]]
        taken = {t.name for t in fresh[:need]}
    pool = fresh_extra + [t for t in fresh if t.name not in taken]
    extras = [{**t.to_json(), "red": False} for t in pool[:EXTRA_POOL]]
    for t in chosen + extras:
        t.pop("extra", None)
    names = [state.player(e).entry.name for e in b.present]
    return {"players": names, "themes": chosen, "extra_themes": extras,
            "settings": {"settle_ms": arbiter.BOX_SETTLE_MS, **(settings or {}),
                         "stage": b.drawn.stage},
            "tournament": {"battle": b.id, "number": b.drawn.number, "stage": b.drawn.stage}}


def _short(need: int, have: int) -> Exception:
    return no(f"В пакете осталось {have} несыгранных тем, а нужно {need}.",
              f"The package has {have} unplayed themes left; {need} are needed.",
              "not_enough_themes")


def played_themes(summary: Mapping[str, Any]) -> list[str]:
    """Every theme a battle actually played, extra themes included (none may come back)."""
    seen: list[str] = []
    for q in summary.get("questions", []):
        if q["theme"] not in seen:
            seen.append(q["theme"])
    return seen


def result_args(summary: Mapping[str, Any], battle_id: str) -> dict[str, Any]:
    """The ``battle_result`` command from a finished battle's summary; `Refused` if the
    battle has no single winner yet."""
    if not summary.get("finished") or summary.get("winner") is None:
        raise no("Бой не закончен: победитель не определён.",
                 "The battle is not over: there is no winner yet.", "no_winner")
    scores = summary["scores"]
    extra = [0] * len(scores)
    silent = [0] * len(scores)
    for q in summary["questions"]:
        for j in q["judgements"]:
            if q["extra"]:
                extra[j["player"]] += j["points"]
        for p in q["players"]:
            if p not in q["answered"]:
                silent[p] += 1
    lines = []
    for seat, s in enumerate(summary["statistics"]):
        r = s["reaction_ms"]
        lines.append({"score": scores[seat] - extra[seat], "extra": extra[seat],
                      "right": s["right"], "wrong": s["wrong"], "silent": silent[seat],
                      "presses": s["presses"],
                      "reaction_mean_ms": None if r["mean"] is None else round(r["mean"], 1),
                      "reaction_best_ms": None if r["best"] is None else round(r["best"], 1)})
    return {"type": "battle_result", "battle": battle_id, "winner": summary["winner"],
            "lines": lines, "themes": played_themes(summary)}
