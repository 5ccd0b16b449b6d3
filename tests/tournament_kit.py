"""Helpers for tournament tests: a package with many themes, and a host who plays a battle
through the real battle engine on a running game loop."""

from __future__ import annotations

import random
from typing import Any

from drive import FakeClock

from appliance.packages.model import Item, ItemType, Package, Question, Round, Theme
from appliance.rules.battle import game as engine
from appliance.runtime.loop import GameLoop

MS = 1_000_000


def package(themes: int = 300, extra: int = 40) -> Package:
    def theme(name: str) -> Theme:
        return Theme(name, [Question(v, content=[Item(ItemType.TEXT, f"{name}: {v}?")],
                                     right=[f"ответ {v}"]) for v in engine.VALUES])
    return Package("Турнирный пакет", [
        Round("Основные", [theme(f"Тема {i + 1}") for i in range(themes)]),
        Round("Дополнительные темы", [theme(f"Доп. тема {i + 1}") for i in range(extra)]),
    ])


class Host:
    """Plays battles on `loop` with commands stamped on a fake clock it moves forward."""

    def __init__(self, loop: GameLoop, clock: FakeClock, rng: random.Random):
        self.loop, self.clock, self.rng = loop, clock, rng
        self.t = clock()

    def send(self, game: int, type_: str, **args: Any) -> None:
        self.t += 20 * MS
        self.clock.set(self.t)
        out = self.loop.submit({"type": type_, "t_ns": self.t, "at_ns": self.t, **args},
                               game=game).result(timeout=30)
        assert out.refused is None, (type_, args, out.refused and out.refused.message_en)

    def state(self, game: int) -> engine.Battle:
        return self.loop.snapshot(game)[1]  # type: ignore[no-any-return]

    def play(self, game: int, pick: Any = None) -> None:
        """Play to the end; `pick(state) -> seat | None` chooses who answers right (None:
        nobody presses); default: a random contender, one question in five with a wrong
        answer first. Ends the game (the host's `end_game`)."""
        for _ in range(2000):
            s = self.state(game)
            if s.phase == engine.FINISHED:
                break
            if s.phase == engine.READY:
                self.send(game, "announce")
                seat = pick(s) if pick else self.rng.choice(s.contenders)
                if seat is None:
                    self.send(game, "reading_done")
                    self.t += 7_100 * MS  # the 7 s window passes
                    continue
                wrong = [p for p in s.contenders if p != seat]
                if not pick and wrong and self.rng.random() < 0.2:
                    self.send(game, "press", player=self.rng.choice(wrong))
                    self.send(game, "judge", verdict="wrong")
                self.send(game, "press", player=seat)
                self.send(game, "judge", verdict="right")
            elif s.phase == engine.ANSWERING:  # resumed mid-question (after a power cut)
                self.send(game, "judge", verdict="right")
            elif s.phase == engine.OPEN and s.current is not None:
                left = sorted(s.current.race.playing - s.current.race.answered)
                self.send(game, "press", player=left[0])
                self.send(game, "judge", verdict="right")
            elif s.phase == engine.TIE:
                self.send(game, "add_theme", name=f"Тай-брейк {game}")
            else:
                self.send(game, "next")
        else:
            raise AssertionError("the battle did not finish")
        out = self.loop.end_game(game).result(timeout=30)
        assert out.refused is None


def tie_then_seat(first: int, second: int, winner: int) -> Any:
    """Main themes shared equally by two seats (a tie for first), then `winner` takes the
    extra theme."""
    def pick(s: engine.Battle) -> int | None:
        if s.themes[s.theme].extra:
            return winner
        return first if s.theme % 2 == 0 else second
    return pick


def leader_and_tied(winner: int, a: int, b: int) -> Any:
    """`winner` takes themes 0-3...; the other two get equal points (a tie for 2nd)."""
    def pick(s: engine.Battle) -> int | None:
        k = s.theme % 4
        return {0: winner, 1: winner, 2: a, 3: b}[k]
    return pick


def theme_args(state: Any, battle_id: str) -> dict[str, list[str]]:
    """``themes`` (and the final's ``red``) for a ``start_battle`` of `battle_id`: as many
    made-up names as its stage plays, none played before in the tournament."""
    from appliance.rules.tournament.commands import themes_of

    b = state.battle(battle_id)
    n = themes_of(state, b)
    tag = len(state.used_themes)
    names = [f"тема {tag}.{i} {battle_id}" for i in range(n)]
    red = names[n - state.settings.final_red:] if battle_id == "F" else []
    return {"themes": names, "red": red}
