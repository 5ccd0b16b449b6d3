"""What screens and reports see of a tournament: the bracket, the next battle, places,
per-player statistics. Pure functions of the state.

**Places.** 1–3 come from the final (its winner, then the others by their final score;
a tie for 2nd/3rd is shared unless the setting plays a playoff, whose order then decides).
Everybody else is placed by the stage they reached: the players out in a stage share the
places after everybody who went further (the 1/3 finals' six: 4–9, the 1/9's eighteen:
10–27, the 1/27's: 28–81, then the qualification rounds from the last), and they have
them as soon as their stage is over, before the final. Within that range they are ordered by
their points in their battle (extra themes included), equal points share the place, and a
player who did not come (walkover) comes after those who played. A shared place is given as
``place``–``place_to`` (e.g. 4–5), the stage's range as ``range_from``–``range_to``.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from typing import Any

from appliance import sheets
from appliance.rules.tournament import stages as st
from appliance.rules.tournament.draw import Draw
from appliance.rules.tournament.state import (
    DONE,
    PLAYING,
    PLAYOFF,
    READY,
    STOPPED,
    BattleState,
    Line,
    Tournament,
)


def _line_of(b: BattleState, entry: int) -> Line | None:
    if b.result is None:
        return None
    return next((x for x in b.result.lines if x.entry == entry), None)


def player_json(state: Tournament, entry: int | None) -> dict[str, Any] | None:
    if entry is None:
        return None
    p = state.player(entry)
    return {"entry": p.id, "name": p.entry.name, "team": p.entry.team, "city": p.entry.city,
            "rating": p.entry.rating}


def battle_json(state: Tournament, b: BattleState) -> dict[str, Any]:
    seats = []
    for i, e in enumerate(b.seats):
        src = b.drawn.seats[i] if i < len(b.drawn.seats) else None
        seat: dict[str, Any] = {"player": player_json(state, e),
                                "from": src.winner_of if src else None,
                                "absent": e is not None and e in b.absent}
        line = _line_of(b, e) if e is not None else None
        if line is not None:
            seat.update(score=line.score, extra=line.extra)
        seat["winner"] = b.result is not None and e == b.result.winner
        seats.append(seat)
    out = {"id": b.id, "number": b.drawn.number, "stage": b.drawn.stage,
           "status": b.status, "seats": seats, "feeds": b.drawn.feeds, "game": b.game,
           "themes": list(b.themes), "walkover": bool(b.result and b.result.walkover),
           "awarded": b.result.awarded if b.result is not None else "", "room": b.room,
           "source": (b.result.source.to_json() if b.result is not None
                      and b.result.source is not None else None)}
    if b.stopped is not None and b.result is None:
        # ended early on the host: no winner by the rules; the director decides
        scores = list(b.stopped)
        top = max(scores) if scores else 0
        out["stopped"] = {"scores": scores,
                          "leader": (b.present[scores.index(top)]
                                     if scores and scores.count(top) == 1 else None)}
        for seat in seats:
            e = seat["player"]["entry"] if seat["player"] is not None else None
            if e in b.present and len(scores) == len(b.present):
                seat["score"], seat["extra"] = scores[b.present.index(e)], 0
    return out


def stages_json(state: Tournament) -> list[dict[str, Any]]:
    """The bracket by stage; a seat of a player who is out (his stage over) carries his
    places, ``out``: «10–27»."""
    if state.plan is None:
        return []
    ranges = place_ranges(state)
    out = []
    for stage in state.plan.stages:
        battles = [battle_json(state, b) for b in state.battles if b.drawn.stage == stage.key]
        for bj in battles:
            for seat in bj["seats"]:
                e = seat["player"]["entry"] if seat["player"] else None
                if e in ranges and not seat["winner"]:
                    seat["out"] = ranges[e]
        out.append({**stage.to_json(), "battles": battles})
    return out


def caption(state: Tournament | None, game: int | None) -> dict[str, Any] | None:
    """The place of `game` in the tournament, for the host's screen beside the phase
    («1/27 финала · Бой 12»): its battle, number and stage with the stage's label, or None
    when the game is not one of its battles (the host's end then offers a new game, not the
    tournament's next battle)."""
    if state is None or game is None:
        return None
    b = next((x for x in state.battles if x.game == game), None)
    if b is None:
        return None
    ru, en = st.stage_label(b.drawn.stage)
    return {"battle": b.id, "number": b.drawn.number, "stage": b.drawn.stage,
            "stage_label": {"ru": ru, "en": en}}


def next_battles(state: Tournament, limit: int | None = None) -> list[BattleState]:
    """Battles ready to start, in playing order (the call screen shows the first)."""
    ready = [b for b in state.battles if b.status == READY]
    return ready if limit is None else ready[:limit]


def places(state: Tournament) -> list[dict[str, Any]]:
    """Every placed player, best first (see the module docstring). A player who is out has
    a place as soon as his stage is over: the stage's range (``range_from``–``range_to``,
    e.g. 10–27 for the 1/9 final) — the places after everybody who went on — and within
    it his place by his points in that battle (``place``–``place_to`` when shared). The
    final's three get theirs when it is played."""
    if state.plan is None:
        return []
    out: list[dict[str, Any]] = []
    for stage, lo, hi, battles in _stage_ranges(state):
        if stage.key == st.FINAL:
            ranked = _final_order(state, battles[0]) if battles else []
        elif battles and all(b.result is not None for b in battles):
            ranked = _losers(battles)
        else:
            ranked = []
        above = lo - 1
        for group in ranked:
            for e in group:
                out.append({"entry": e, "place": above + 1, "place_to": above + len(group),
                            "stage": stage.key, "range_from": lo, "range_to": hi})
            above += len(group)
    return sorted(out, key=lambda r: (r["place"], r["entry"]))


def _stage_ranges(state: Tournament) -> list[tuple[st.Stage, int, int, list[BattleState]]]:
    """Each stage, last first, with the places its players who are out there share: after
    everybody who went further (a battle of k players sends k − 1 out)."""
    assert state.plan is not None
    out = []
    reach = 0  # players who went beyond this stage
    for stage in reversed(state.plan.stages):
        battles = [b for b in state.battles if b.drawn.stage == stage.key and b.id != PLAYOFF]
        out_here = sum(len(b.drawn.seats) - (0 if stage.key == st.FINAL else 1)
                       for b in battles)
        out.append((stage, reach + 1, reach + out_here, battles))
        reach += out_here
    return out


def span(lo: int, hi: int) -> str:
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def place_ranges(state: Tournament) -> dict[int, str]:
    """Each player who is out, with his stage's places as the TV writes them («10–27»);
    the final's three with their own place."""
    return {r["entry"]: (span(r["place"], r["place_to"]) if r["stage"] == st.FINAL
                         else span(r["range_from"], r["range_to"])) for r in places(state)}


def _final_order(state: Tournament, f: BattleState) -> list[list[int]]:
    if f.result is None:
        return []
    res = f.result
    playoff = state.battle(PLAYOFF)
    if playoff is not None and playoff.result is not None:
        rest = [e for e in res.order[1:] if e not in playoff.result.order]
        return [[res.winner], *([e] for e in playoff.result.order), *([e] for e in rest)]
    total = {x.entry: x.score + x.extra for x in res.lines}
    key = {e: (e in f.absent, -total.get(e, 0)) for e in f.seats if e is not None}
    others = sorted((e for e in key if e != res.winner), key=lambda e: key[e])
    return [[res.winner], *_group(others, key.__getitem__)]


def _losers(battles: Iterable[BattleState]) -> list[list[int]]:
    rows: list[tuple[bool, int, int]] = []
    for b in battles:
        if b.result is None:
            continue
        total = {x.entry: x.score + x.extra for x in b.result.lines}
        for e in b.seats:
            if e is not None and e != b.result.winner:
                rows.append((e in b.absent, -total.get(e, 0), e))
    rows.sort()
    return _group([r[2] for r in rows],
                  lambda e: next((a, s) for a, s, x in rows if x == e))


def _group(items: list[int], keyf: Any) -> list[list[int]]:
    groups: list[list[int]] = []
    last = object()
    for e in items:
        k = keyf(e)
        if groups and k == last:
            groups[-1].append(e)
        else:
            groups.append([e])
        last = k
    return groups


def statistics(state: Tournament) -> dict[int, dict[str, Any]]:
    """Per player across the tournament: battles, right, wrong, no answer, points, mean and
    best reaction time (ms)."""
    stats: dict[int, dict[str, Any]] = {}
    weighted: dict[int, float] = {}
    for b in state.battles:
        if b.result is None or b.result.walkover:
            continue
        for x in b.result.lines:
            s = stats.setdefault(x.entry, {"battles": 0, "right": 0, "wrong": 0, "silent": 0,
                                           "points": 0, "extra": 0, "presses": 0,
                                           "reaction_mean_ms": None, "reaction_best_ms": None})
            s["battles"] += 1
            for k in ("right", "wrong", "silent", "extra", "presses"):
                s[k] += getattr(x, k)
            s["points"] += x.score + x.extra
            if x.reaction_mean_ms is not None and x.presses:
                weighted[x.entry] = weighted.get(x.entry, 0.0) + x.reaction_mean_ms * x.presses
            if x.reaction_best_ms is not None:
                best = s["reaction_best_ms"]
                s["reaction_best_ms"] = (x.reaction_best_ms if best is None
                                         else min(best, x.reaction_best_ms))
    for e, s in stats.items():
        if s["presses"] and e in weighted:
            s["reaction_mean_ms"] = round(weighted[e] / s["presses"], 1)
    return stats


def reached(state: Tournament) -> dict[int, str]:
    """The latest stage each player sat in."""
    out: dict[int, str] = {}
    for b in state.battles:
        for e in b.seats:
            if e is not None and b.id != PLAYOFF:
                out[e] = b.drawn.stage
    return out


def standings(state: Tournament) -> list[dict[str, Any]]:
    """Places with names and statistics, the rows of the results CSV and table."""
    stats = statistics(state)
    out = []
    for row in places(state):
        p = player_json(state, row["entry"]) or {}
        out.append({**row, **p, **stats.get(row["entry"], {"battles": 0})})
    return out


def view(state: Tournament, role: str) -> dict[str, Any]:
    """``board``, ``host`` (the bracket: what the game screens get while the tournament is
    the loop's current game), ``director`` (admin: with entries and standings). The
    ``hardware`` view has the fixed shape the button adapter expects: a tournament lights
    no lamp."""
    if role == "hardware":
        return {"lamp": False, "answering": None, "queue": [], "false_starts": 0}
    base: dict[str, Any] = {
        "rules": "tournament", "title": state.settings.title, "drawn": state.drawn,
        "bracket": state.plan.bracket if state.plan else None,
        "byes": state.plan.byes if state.plan else None,
        "stages": stages_json(state),
        "playing": [b.id for b in state.battles if b.status == PLAYING],
        "stopped": [b.id for b in state.battles if b.status == STOPPED],
        "next": [b.id for b in next_battles(state, 3)],
        "finished": state.finished,
    }
    if state.finished:
        base["podium"] = [{**r, **(player_json(state, r["entry"]) or {})}
                          for r in places(state) if r["place"] <= 3]
    if role == "director":
        base["entries"] = [{**(player_json(state, p.id) or {}), "withdrawn": p.withdrawn}
                           for p in state.players]
        base["settings"] = state.settings.to_json()
        base["seed"] = state.seed
        base["seeded"] = state.seeded
        base["standings"] = standings(state)
    return base


def summary(state: Tournament) -> dict[str, Any]:
    return {"rules": "tournament", "title": state.settings.title, "seed": state.seed,
            "seeded": state.seeded,
            "bracket": state.plan.bracket if state.plan else None,
            "finished": state.finished, "standings": standings(state),
            "stages": stages_json(state)}


def status_counts(state: Tournament) -> dict[str, int]:
    out = {"waiting": 0, READY: 0, PLAYING: 0, STOPPED: 0, DONE: 0}
    for b in state.battles:
        out[b.status] += 1
    return out


# -- reports: the results CSV and the bracket as text (the web UI and `svoyak tournament`) -----
CSV_COLUMNS = ("place", "place_to", "name", "team", "city", "stage", "battles", "right",
               "wrong", "silent", "points", "extra", "reaction_mean_ms", "reaction_best_ms")


def results_csv(state: Tournament) -> str:
    """The results table as CSV text, one row a place (`standings`), made safe to open in a
    spreadsheet (`appliance.sheets`): names, teams, cities inert; numbers stay numbers."""
    out = io.StringIO()
    w = sheets.writer(out)
    w.writerow(CSV_COLUMNS)
    for row in standings(state):
        w.writerow(["" if row.get(c) is None else row.get(c, "") for c in CSV_COLUMNS])
    return out.getvalue()


def draw_json(state: Tournament) -> dict[str, Any]:
    """A stored tournament's draw in the shape `Draw.public` gives a fresh one (the JSON of
    `svoyak tournament draw`), so a stored and a fresh draw compare as they are."""
    out = []
    for stage in stages_json(state):
        out.append({"name": stage["key"], "themes": stage["themes"], "battles": [
            {"id": b["id"], "players": [s["player"]["name"] if s["player"] else None
                                        for s in b["seats"]], "feeds": b["feeds"]}
            for b in stage["battles"]]})
    return {"seed": state.seed, "bracket": state.plan.bracket if state.plan else None,
            "stages": out}


def draw_lines(result: Draw, names: Sequence[str]) -> list[str]:
    """A fresh draw as lines to read: the seed and plan, then each stage's battles."""
    lines = [f"seed {result.seed}, bracket {result.plan.bracket}, byes {result.plan.byes}"
             + (", seeded by rating (not in the regulation)" if result.seeded else "")]
    for stage in result.public(names)["stages"]:
        lines += ["", f"{stage['name']} ({stage['themes']} themes)"]
        for b in stage["battles"]:
            players = ", ".join(p or "—" for p in b["players"])
            lines.append(f"  {b['id']:>6}: {players}" + (f"  → {b['feeds']}" if b["feeds"]
                                                          else ""))
    return lines


def bracket_lines(state: Tournament, game: int) -> list[str]:
    """A stored tournament's bracket as lines to read: a heading, then each stage's battles
    with their seats (winners starred, scores, absences)."""
    lines = [f"tournament {game}: {state.settings.title or '—'}, "
             f"{len(state.active())} entries, bracket {state.plan.bracket if state.plan else '—'}"
             f", seed {state.seed if state.seed is not None else '—'}"]
    for stage in stages_json(state):
        lines += ["", f"{stage['ru']} / {stage['en']} ({stage['themes']})"]
        for b in stage["battles"]:
            names = ", ".join(seat_text(x) for x in b["seats"])
            lines.append(f"  Бой {b['number']:>3} {b['id']:>6} [{b['status']}]: {names}")
    return lines


def seat_text(seat: dict[str, Any]) -> str:
    """One seat of `battle_json` in a few words."""
    p = seat["player"]
    if p is None:
        return f"(winner of {seat['from']})" if seat["from"] else "—"
    mark = "*" if seat["winner"] else ""
    score = f" {seat['score']}" if "score" in seat else ""
    return f"{mark}{p['name']}{score}" + (" (absent)" if seat["absent"] else "")
