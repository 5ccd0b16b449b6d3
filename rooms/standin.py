"""A stand-in bracket until the tournament core (`appliance/tournament/`) lands: just
enough of a tournament for the rooms link to carry — entries drawn by seed into a bracket
that is a power of 3 (no qualification, no teams), battle *i* of a stage feeding battle
⌊i/3⌋ of the next, winners taken from each battle's summary.

Pure and event-sourced like the real one: `fold(events)` gives the bracket, and
`decide_*` return the events to append (or raise `Refused`). The link reaches it through
`rooms.tournaments.StandInBracket`; with a tournament game running on the director box it
uses the tournament engine instead (`EngineBracket`)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from appliance.rules.protocol import Refused

STAGE_NAMES = {1: "final", 3: "1/3", 9: "1/9", 27: "1/27", 81: "1/81", 243: "1/243"}


@dataclass(frozen=True, slots=True)
class Slot:
    """One battle of the bracket («бой»)."""

    id: str
    stage: str
    players: tuple[str | None, ...]
    feeds: str | None
    room: str | None = None
    winner: str | None = None
    places: tuple[int, ...] = ()
    scores: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Bracket:
    seed: int = 0
    battles: Mapping[str, Slot] = field(default_factory=dict)
    order: tuple[str, ...] = ()


def _refuse(ru: str, en: str, code: str) -> Refused:
    return Refused(ru, en, code)


def decide_draw(entries: Sequence[str], seed: int) -> list[dict[str, Any]]:
    n = len(entries)
    if n < 3 or n not in STAGE_NAMES or len(set(entries)) != n:
        raise _refuse("Заготовка сетки: нужно 3, 9, 27, 81 или 243 разных участника.",
                      "Stand-in bracket: needs 3, 9, 27, 81 or 243 distinct entries.",
                      "bad_entries")
    drawn = list(entries)
    random.Random(seed).shuffle(drawn)
    return [{"type": "drawn", "seed": seed, "entries": drawn}]


def _drawn(entries: Sequence[str], seed: int) -> Bracket:
    battles: dict[str, Slot] = {}
    order: list[str] = []
    size, stage_no = len(entries) // 3, 1
    while size >= 1:
        name = STAGE_NAMES[size]
        for i in range(size):
            bid = f"s{stage_no}b{i + 1}"
            players: tuple[str | None, ...] = (
                tuple(entries[3 * i:3 * i + 3]) if stage_no == 1 else (None, None, None))
            feeds = f"s{stage_no + 1}b{i // 3 + 1}" if size > 1 else None
            battles[bid] = Slot(bid, name, players, feeds)
            order.append(bid)
        size //= 3
        stage_no += 1
    return Bracket(seed, battles, tuple(order))


def evolve(state: Bracket, event: Mapping[str, Any]) -> Bracket:
    kind = event["type"]
    if kind == "drawn":
        return _drawn(event["entries"], int(event["seed"]))
    battles = dict(state.battles)
    slot = battles[event["battle"]]
    if kind == "assigned":
        battles[slot.id] = replace(slot, room=event["room"])
    elif kind == "result":
        battles[slot.id] = replace(slot, winner=event["winner"],
                                   places=tuple(event["places"]), scores=tuple(event["scores"]))
        if slot.feeds is not None:
            nxt = battles[slot.feeds]
            seat = int(slot.id.rsplit("b", 1)[1]) - 1
            players = list(nxt.players)
            players[seat % 3] = event["winner"]
            battles[nxt.id] = replace(nxt, players=tuple(players))
    return replace(state, battles=battles)


def fold(events: Iterable[Mapping[str, Any]]) -> Bracket:
    state = Bracket()
    for e in events:
        state = evolve(state, e)
    return state


def ready(state: Bracket) -> list[str]:
    """Battles whose players are all known, not yet given to a room, in playing order."""
    return [b for b in state.order if (s := state.battles[b]).room is None
            and s.winner is None and all(p is not None for p in s.players)]


def setup(state: Bracket, battle: str) -> dict[str, Any]:
    """The battle engine's setup for a battle (the stand-in plays the demo package)."""
    s = state.battles[battle]
    return {"players": list(s.players), "package": "demo-sport",
            "settings": {"stage": s.stage if s.stage in ("1/9", "1/3", "final") else ""}}


def decide_assign(state: Bracket, battle: str, room: str) -> list[dict[str, Any]]:
    if battle not in ready(state):
        raise _refuse("Этот бой нельзя отдать в зал.", "This battle cannot go to a room.",
                      "not_ready")
    return [{"type": "assigned", "battle": battle, "room": room}]


def decide_result(state: Bracket, battle: str, summary: Mapping[str, Any],
                  source: Mapping[str, Any]) -> list[dict[str, Any]]:
    s = state.battles.get(battle)
    if s is None or s.room is None or s.winner is not None:
        raise _refuse("Этот бой сейчас не идёт.", "This battle is not in play.", "not_in_play")
    players = list(summary.get("players") or [])
    places = list(summary.get("places") or [])
    if players != list(s.players) or len(places) != len(players) or places.count(1) != 1:
        raise _refuse("Итог боя не подходит к сетке (другие игроки или нет победителя).",
                      "The battle's result does not fit the bracket (other players or no "
                      "single winner).", "bad_result")
    winner = players[places.index(1)]
    return [{"type": "result", "battle": battle, "winner": winner, "places": places,
             "scores": list(summary.get("scores") or []), **dict(source)}]


def podium(state: Bracket) -> list[str]:
    final = state.battles.get(state.order[-1]) if state.order else None
    if final is None or final.winner is None:
        return []
    ranked = sorted(range(len(final.players)), key=lambda i: final.places[i])
    return [str(final.players[i]) for i in ranked]


def view(state: Bracket) -> dict[str, Any]:
    return {"seed": state.seed, "podium": podium(state), "battles": [
        {"id": s.id, "stage": s.stage, "players": list(s.players), "feeds": s.feeds,
         "room": s.room, "winner": s.winner, "scores": list(s.scores)}
        for s in (state.battles[b] for b in state.order)]}
