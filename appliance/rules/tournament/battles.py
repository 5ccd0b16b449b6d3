"""A bracket battle as the battle engine sees it, and its result as the tournament sees it.

`battle_setup` turns a ready battle of the bracket into the battle engine's setup: its
players present (names, seat order), its themes from a question package — as many as the
stage plays (regulation 3.4), none already played in the tournament, the final's twelve
split into six blue and six red (red values doubled by the engine) — and a pool of unplayed
themes for the extra themes a tie for first needs (2.4). `result_args` turns the battle
engine's summary into the tournament's ``battle_result`` command. Both are pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from appliance.packages.model import Package
from appliance.rules import arbiter
from appliance.rules.battle import game as engine
from appliance.rules.protocol import Refused
from appliance.rules.tournament import stages as st
from appliance.rules.tournament.commands import no, themes_of
from appliance.rules.tournament.entries import key
from appliance.rules.tournament.state import PLAYOFF, READY, WAITING, Tournament

EXTRA_POOL = 3  # unplayed themes handed to a battle for tie-breaks


themes_needed = themes_of


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
        red = state.settings.final_red
        reds = [t for t in fresh if t.red][:red]
        blues = [t for t in fresh if not t.red and t not in reds]
        blues = blues[:need - red]
        more = [t for t in fresh if not t.red and t not in blues]
        reds += more[:red - len(reds)]  # marked red here: values doubled
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
                         "stage": b.drawn.stage, "themes": need,
                         "red_themes": sum(t["red"] for t in chosen)},
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


def outcome_args(summary: Mapping[str, Any], battle_id: str,
                 source: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The command a finished battle game sends the tournament: its result
    (`result_args`), or — when the host ended it before the rules gave a winner —
    ``battle_stopped`` with the scores, for the director to decide (the leader as winner,
    or a replay). `source` (box, game, room) goes with either."""
    try:
        args = result_args(summary, battle_id)
    except Refused:
        scores = summary.get("scores")
        args = {"type": "battle_stopped", "battle": battle_id,  # the engine checks them
                "scores": list(scores) if isinstance(scores, list) else []}
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise no(f"Итог боя не читается ({type(e).__name__}).",
                 f"The battle's summary cannot be read ({type(e).__name__}).",
                 "bad_result") from e
    if source:
        args["source"] = dict(source)
    return args


def theme_needs(state: Tournament) -> list[dict[str, Any]]:
    """Themes the tournament needs, stage by stage (3.4): battles, themes per battle, the
    total, and what is still to play (battles not started). Before the draw, for the stages
    the entries would make; none are played twice, so a package must hold them all."""
    if state.plan is not None:
        plan, battles = state.plan, state.battles
    else:
        n = len(state.active())
        if n < st.MIN_ENTRIES:
            return []
        try:
            sizes = list(Counter(key(p.entry.team) for p in state.active()).values())
            plan = st.plan(n, state.settings.bracket, sizes)
        except Refused:
            return []
        battles = ()
    out = []
    for stage in plan.stages:
        mine = [b for b in battles if b.drawn.stage == stage.key and b.id != PLAYOFF]
        left = (sum(1 for b in mine if b.status in (READY, WAITING)) if state.plan is not None
                else stage.battles)
        out.append({"key": stage.key, "battles": stage.battles, "themes": stage.themes,
                    "total": stage.battles * stage.themes, "left": left * stage.themes,
                    "red": state.settings.final_red if stage.key == st.FINAL else 0})
    return out


def can_supply(state: Tournament, package: Package) -> dict[str, Any]:
    """Whether `package` holds enough unplayed themes for the rest of the tournament (red
    ones can be marked red, so only the count matters)."""
    need = sum(x["left"] for x in theme_needs(state))
    used = {key(t) for t in state.used_themes}
    main, _ = engine.package_themes(package)
    fresh = sum(1 for t in main if key(t.name) not in used)
    return {"need": need, "fresh": fresh, "enough": fresh >= need}
