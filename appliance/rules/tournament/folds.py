"""Folding tournament events into the state; never refuses (the log is the truth)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from appliance.rules.protocol import Event
from appliance.rules.tournament import legacy
from appliance.rules.tournament import stages as st
from appliance.rules.tournament.draw import DrawnBattle, Source
from appliance.rules.tournament.entries import Entry
from appliance.rules.tournament.state import (
    PLAYOFF,
    BattleState,
    Line,
    Player,
    Result,
    ResultSource,
    Settings,
    Tournament,
)


def _entry(d: dict[str, Any]) -> Entry:
    return Entry(d["name"], d["team"], d.get("city") or "", d.get("rating"))


def configured(s: Tournament, e: Event) -> Tournament:
    d = e.data
    cur = s.settings
    return replace(s, settings=Settings(d.get("title", cur.title),
                                        d.get("bracket", cur.bracket),
                                        d.get("final_ties", cur.final_ties),
                                        d.get("final_red", cur.final_red)))


def entry_added(s: Tournament, e: Event) -> Tournament:
    return replace(s, players=(*s.players, Player(e.data["entry"], _entry(dict(e.data)))))


def entry_edited(s: Tournament, e: Event) -> Tournament:
    eid = e.data["entry"]
    return replace(s, players=tuple(replace(p, entry=_entry(dict(e.data))) if p.id == eid
                                    else p for p in s.players))


def entry_withdrawn(s: Tournament, e: Event) -> Tournament:
    eid = e.data["entry"]
    return replace(s, players=tuple(replace(p, withdrawn=True) if p.id == eid else p
                                    for p in s.players))


def drawn(s: Tournament, e: Event) -> Tournament:
    d = e.data
    if "stages" in d:
        plan = st.Plan(d["entries"], d["bracket"],
                       tuple(st.Stage.from_json(x) for x in d["stages"]), d.get("byes", 0))
    else:  # drawn by the earlier rules: their stages, their names
        plan = legacy.plan(d["entries"], d["bracket"], d["threes"])
    battles = []
    for j in d["battles"]:
        b = DrawnBattle.from_json(j)
        battles.append(BattleState(b, tuple(x.entry for x in b.seats)))
    return replace(s, plan=plan, seed=d["seed"], seeds=tuple(d["seeds"]),
                   seeded=bool(d.get("seeded", d.get("seeds"))),
                   battles=tuple(battles))


def _with(s: Tournament, b: BattleState) -> Tournament:
    return replace(s, battles=tuple(b if x.id == b.id else x for x in s.battles))


def battle_started(s: Tournament, e: Event) -> Tournament:
    b = s.battle(e.data["battle"])
    assert b is not None
    themes = tuple(e.data["themes"])
    return replace(_with(s, replace(b, started=True, game=e.data.get("game"), themes=themes,
                                    room=e.data.get("room"))),
                   used_themes=s.used_themes + themes)


def absent(s: Tournament, e: Event) -> Tournament:
    b = s.battle(e.data["battle"])
    assert b is not None
    return _with(s, replace(b, absent=tuple(sorted({*b.absent, *e.data["players"]}))))


def battle_finished(s: Tournament, e: Event) -> Tournament:
    d = e.data
    b = s.battle(d["battle"])
    assert b is not None
    lines = tuple(Line(**x) for x in d["lines"])
    res = Result(d["winner"], lines, bool(d.get("walkover")), tuple(d.get("order") or ()),
                 d.get("awarded") or "", ResultSource.from_json(d.get("source")))
    s = _with(s, replace(b, result=res))
    s = replace(s, used_themes=s.used_themes + tuple(d.get("extra_themes") or ()))
    return _seat(s, b.drawn, d["winner"])


def _seat(s: Tournament, b: DrawnBattle, entry: int | None) -> Tournament:
    """Put (or take back, with None) the winner of `b` in the seat it feeds."""
    if b.feeds is None or b.feeds_seat is None:
        return s
    nxt = s.battle(b.feeds)
    if nxt is None:
        return s
    seats = list(nxt.seats)
    seats[b.feeds_seat] = entry
    return _with(s, replace(nxt, seats=tuple(seats)))


def battle_stopped(s: Tournament, e: Event) -> Tournament:
    b = s.battle(e.data["battle"])
    assert b is not None
    return _with(s, replace(b, stopped=tuple(e.data["scores"])))


def battle_reset(s: Tournament, e: Event) -> Tournament:
    b = s.battle(e.data["battle"])
    assert b is not None
    s = _with(s, replace(b, started=False, game=None, result=None, stopped=None, room=None))
    if b.id == "F":
        s = replace(s, battles=tuple(x for x in s.battles if x.id != PLAYOFF))
    return _seat(s, b.drawn, None)


def players_swapped(s: Tournament, e: Event) -> Tournament:
    a, b = e.data["a"], e.data["b"]
    swap = {a: b, b: a}
    out = []
    for bs in s.battles:
        seats = tuple(swap.get(x, x) if x is not None and bs.drawn.seats[i].entry is not None
                      and not bs.started and bs.result is None else x
                      for i, x in enumerate(bs.seats))
        out.append(replace(bs, seats=seats))
    return replace(s, battles=tuple(out))


def playoff_drawn(s: Tournament, e: Event) -> Tournament:
    players = tuple(e.data["players"])
    number = max(b.drawn.number for b in s.battles) + 1
    drawn_ = DrawnBattle(PLAYOFF, st.FINAL, 1, number, tuple(Source(entry=p) for p in players),
                         None, None)
    return replace(s, battles=(*s.battles, BattleState(drawn_, players)))


EVOLVERS: dict[str, Callable[[Tournament, Event], Tournament]] = {
    "configured": configured,
    "entry_added": entry_added,
    "entry_edited": entry_edited,
    "entry_withdrawn": entry_withdrawn,
    "drawn": drawn,
    "battle_started": battle_started,
    "absent": absent,
    "battle_finished": battle_finished,
    "battle_stopped": battle_stopped,
    "battle_reset": battle_reset,
    "players_swapped": players_swapped,
    "playoff_drawn": playoff_drawn,
}
