"""Test helpers for the TV engine: a small package builder and a driver that keeps the
event log, so every scenario also checks that replaying the log gives the same state."""

from __future__ import annotations

from typing import Any

import pytest

from appliance.packages.model import Cat, CatPrice, Item, ItemType, Kind, Package, Question
from appliance.packages.model import Round as PRound
from appliance.packages.model import Theme as PTheme
from appliance.rules.protocol import Command, Event, Refused
from appliance.rules.tv import game

MS = 1_000_000


def q(price: int, kind: str = "normal", text: str = "", answer: str = "", **extra: Any) -> Question:
    text = text or f"Q{price}-{kind}"
    return Question(price=price, kind=Kind(kind), content=[Item(ItemType.TEXT, text)],
                    right=[answer or f"A{price}"], **extra)


def cat(price: int, theme: str = "Котики", values: list[int] | None = None, low: int = 0,
        high: int = 0, step: int = 0, may_keep: bool = False, no_question: bool = False):
    return q(price, "cat", text=f"CAT-TEXT-{price}", answer=f"CAT-ANSWER-{price}",
             cat=Cat(theme, CatPrice(values or [], low, high, step), may_keep=may_keep,
                     no_question=no_question))


def package(rounds: list[list[list[Question]]], final_themes: int = 0,
            name: str = "Тест") -> Package:
    """rounds[r][t] = the questions of theme t in round r."""
    rs = [PRound(f"Раунд {ri + 1}", [PTheme(f"Тема {ri + 1}.{ti + 1}", qs)
                                     for ti, qs in enumerate(themes)])
          for ri, themes in enumerate(rounds)]
    if final_themes:
        rs.append(PRound("Финал", [PTheme(f"Финал {i + 1}", [q(0, text=f"FINAL-Q{i + 1}",
                                                                answer=f"FINAL-A{i + 1}")])
                                   for i in range(final_themes)], final=True))
    return Package(name=name, rounds=rs)


def simple_round(values: tuple[int, ...] = (100, 200, 300, 400, 500), themes: int = 2):
    return [[q(v) for v in values] for _ in range(themes)]


class Driver:
    """Drives the engine by commands, on a hand-moved clock."""

    def __init__(self, setup: dict[str, Any]):
        self.setup = setup
        self.state = game.initial(setup)
        self.t = 1_000 * MS
        self.events: list[Event] = []
        self.last_press = 0

    # -- plumbing --
    def do(self, type_: str, by: str = "host", **args: Any) -> list[Event]:
        self.t += MS
        cmd = Command(type_, self.t, args, by)
        events = game.decide(self.state, cmd)
        for e in events:
            self.state = game.evolve(self.state, e)
        self.events += events
        return events

    def refused(self, type_: str, **args: Any) -> Refused:
        before = self.state
        with pytest.raises(Refused) as info:
            game.decide(self.state, Command(type_, self.t + MS, args))
        assert self.state is before
        assert info.value.message_ru and info.value.message_en
        assert info.value.message_ru != info.value.message_en
        return info.value

    def replayed(self):
        s = game.initial(self.setup)
        for e in self.events:
            s = game.evolve(s, e)
        return s

    def press(self, player: int, at_ms: float) -> list[Event]:
        """A press stamped `at_ms` after the current clock (negative: before it)."""
        t = self.t + int(at_ms * MS)
        self.last_press = max(self.last_press, t)
        cmd = Command("press", t, {"player": player}, "button")
        events = game.decide(self.state, cmd)
        for e in events:
            self.state = game.evolve(self.state, e)
        self.events += events
        return events

    def settle(self) -> None:
        """The loop's timeout after the settle window of the latest press."""
        self.t = max(self.t, self.last_press) + 50 * MS
        cmd = Command("timeout", self.t, {}, "loop")
        events = game.decide(self.state, cmd)
        for e in events:
            self.state = game.evolve(self.state, e)
        self.events += events

    # -- game words --
    @property
    def scores(self) -> list[int]:
        return list(self.state.scores)

    def choose(self, theme: int, question: int) -> None:
        self.do("choose", theme=theme, question=question)

    def buzz(self, player: int, verdict: str | None = None) -> None:
        """Lamp on (if needed), `player` presses first, the host judges."""
        if self.state.phase in ("reading", "after_wrong"):
            self.do("lamp")
        self.press(player, 100)
        self.settle()
        assert self.state.phase == "answering", self.state.phase
        assert self.state.play.answerer == player
        if verdict:
            self.do("judge", verdict=verdict)

    def normal(self, theme: int, question: int, *answers: tuple[int, str]) -> None:
        """Play a normal question: each (player, verdict) in turn; close if nobody right."""
        self.choose(theme, question)
        for p, v in answers:
            self.buzz(p, v)
        if self.state.phase in ("reading", "after_wrong", "buttons"):
            self.do("close")

    def actions(self) -> dict[str, Any]:
        return {a.type: a for a in game.legal_actions(self.state)}
