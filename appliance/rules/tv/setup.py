"""Setting a TV game up: players, the package (built-in by name, or inline in our JSON
form) and the rule-set with the host's overrides; the first chooser, or the host's pick."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from appliance.rules import kit
from appliance.rules.describe import CHOICE, Option, SetupSpec
from appliance.rules.tv.board import build
from appliance.rules.tv.presets import PRESETS, resolve
from appliance.rules.tv.state import Phase, State


def initial(setup: Mapping[str, Any]) -> State:
    """A new game from ``{"players", "package", "preset", "settings", "first_chooser"}``;
    a setup the rules cannot play is refused with code ``bad_setup``."""
    if not isinstance(setup, Mapping):
        raise kit.bad_setup("ожидался словарь", "expected an object")
    settings = resolve(str(setup.get("preset", "tv")), setup.get("settings") or {})
    names = setup.get("players")
    if not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names):
        raise kit.bad_setup("нужен список имён игроков", "a list of player names is needed")
    if not settings.players_min <= len(names) <= settings.players_max:
        raise kit.bad_setup(
            f"игроков должно быть от {settings.players_min} до {settings.players_max}",
            f"the game needs {settings.players_min} to {settings.players_max} players")
    package = kit.load_package(setup.get("package", "demo-tv"))
    board = build(package, settings)
    if not board.rounds:
        raise kit.bad_setup("в пакете нет раундов с вопросами", "the package has no board rounds")
    n = len(names)
    state = State(players=tuple(names), settings=settings, board=board, package=package,
                  scores=(0,) * n, false_starts=(0,) * n, reactions=((),) * n)
    first = setup.get("first_chooser")
    if first is None:
        return replace(state, phase=Phase.PICK_CHOOSER, candidates=tuple(range(n)))
    if isinstance(first, bool) or not isinstance(first, int) or not 0 <= first < n:
        raise kit.bad_setup("нет такого игрока для первого выбора", "no such first chooser")
    return replace(state, phase=Phase.CHOOSE, chooser=first)


SETUP_SPEC = SetupSpec(
    rules="tv", label_ru="Телевизионная игра", label_en="TV game",
    players_min=min(p.players_min for p in PRESETS.values()),
    players_max=max(p.players_max for p in PRESETS.values()), demo="demo-tv",
    options=(
        Option("preset", ("preset",), "Набор правил", "Rule-set", kind=CHOICE, default="tv",
               choices=(("tv", "Как на ТВ: 3 игрока, 3 раунда, финал",
                         "As on TV: 3 players, 3 rounds, final"),
                        ("club", "Клуб: 2–4 игрока, все раунды пакета",
                         "Club: 2–4 players, every round of the package"),
                        ("club_timed", "Клуб с таймерами: 7 с на нажатие, 5 с на ответ",
                         "Club with timers: 7 s to press, 5 s to answer")),
               key="host.preset", choice_keys=("preset.tv", "preset.club", "preset.club_timed")),
        Option("press_window_s", ("settings", "press_window_s"),
               "Секунд на нажатие после сигнала", "Seconds to press after the lamp",
               min=1, max=60, step=1, key="timer.press_window_s"),
        Option("answer_s", ("settings", "answer_s"),
               "Секунд на ответ", "Seconds to answer", min=1, max=60, step=1,
               key="timer.answer_s"),
    ))
"""The TV game's setup as the new-game dialog and `svoyak new-game` show it."""
