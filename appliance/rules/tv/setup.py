"""Setting a TV game up: players, the package (built-in by name, or inline in our JSON
form) and the rule-set with the host's overrides; the first chooser, or the host's pick."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from appliance.packages import jsonform
from appliance.packages.model import Package
from appliance.rules.protocol import Refused
from appliance.rules.tv.board import build
from appliance.rules.tv.presets import resolve
from appliance.rules.tv.state import Phase, State


def initial(setup: Mapping[str, Any]) -> State:
    """A new game from ``{"players", "package", "preset", "settings", "first_chooser"}``."""
    settings = resolve(str(setup.get("preset", "tv")), setup.get("settings") or {})
    names = setup.get("players")
    if not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names):
        raise Refused("Нужен список имён игроков.", "A list of player names is needed.")
    if not settings.players_min <= len(names) <= settings.players_max:
        raise Refused(
            f"Игроков должно быть от {settings.players_min} до {settings.players_max}.",
            f"The game needs {settings.players_min} to {settings.players_max} players.")
    package = _package(setup.get("package", "demo-tv"))
    board = build(package, settings)
    if not board.rounds:
        raise Refused("В пакете нет раундов с вопросами.", "The package has no board rounds.")
    n = len(names)
    state = State(players=tuple(names), settings=settings, board=board, package=package,
                  scores=(0,) * n, false_starts=(0,) * n, reactions=((),) * n)
    first = setup.get("first_chooser")
    if first is None:
        return replace(state, phase=Phase.PICK_CHOOSER, candidates=tuple(range(n)))
    if not isinstance(first, int) or not 0 <= first < n:
        raise Refused("Нет такого игрока для первого выбора.", "No such first chooser.")
    return replace(state, phase=Phase.CHOOSE, chooser=first)


def _package(spec: Any) -> Package:
    if isinstance(spec, Package):
        return spec
    try:
        if isinstance(spec, Mapping):
            return jsonform.from_dict(dict(spec))
        if isinstance(spec, str) and spec.replace("-", "").replace("_", "").isalnum():
            return jsonform.demo(spec)
    except (OSError, jsonform.PackageFormatError, KeyError) as e:
        raise Refused(f"Пакет не читается: {e}", f"The package cannot be read: {e}") from e
    raise Refused("Пакет не найден.", "Package not found.")
