"""The TV game's argument checks, shared by its command modules (`commands`,
`corrections`): each returns the value or raises `Refused` with the shared code
(`appliance.rules.kit`)."""

from __future__ import annotations

from typing import Any

from appliance.rules import kit
from appliance.rules.protocol import Command, Event, Refused
from appliance.rules.tv.state import State


def event(type_: str, cmd: Command, **data: Any) -> Event:
    return Event(type_, cmd.t_ns, data)


LIMIT = 10**9  # the largest number a TV command carries (scores, bids, bets, values)


def not_now(what_ru: str, what_en: str) -> Refused:
    return kit.out_of_phase(what_ru, what_en)


def seat(state: State, cmd: Command, key: str = "player") -> int:
    return kit.seat(cmd.args.get(key), state.seats)


def candidate(state: State, cmd: Command, why_ru: str, why_en: str) -> int:
    """The command's ``player``, one of `state.candidates` (`kit.candidate`)."""
    return kit.candidate(cmd.args.get("player"), state.seats, state.candidates, why_ru, why_en)


def number(cmd: Command, key: str, limit: int = LIMIT) -> int:
    ru, en = kit.NUMBER_NAMES.get(key, (key, key))
    return kit.whole(cmd.args.get(key), ru, en, -limit, limit)


def cell(cmd: Command) -> tuple[int, int]:
    """A board cell as ``theme`` and ``question`` indices, or as one ``cell: "t:q"``."""
    if "cell" in cmd.args:
        try:
            t, q = (int(x) for x in str(cmd.args["cell"]).split(":"))
        except ValueError as e:
            raise Refused("Клетка — «тема:вопрос».", "A cell is 'theme:question'.") from e
        return t, q
    return number(cmd, "theme"), number(cmd, "question")


def verdict(cmd: Command) -> str:
    return kit.verdict(cmd.args.get("verdict"))


def in_phase(state: State, *phases: str, ru: str, en: str) -> None:
    if state.phase not in phases:
        raise not_now(ru, en)
