"""Rules engines by name, so the log can say which rules a game was played by.

Engines are imported only when first asked for: a missing or broken engine module makes only
its own games unavailable, never the others (and the box still starts).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from appliance.rules.describe import SetupSpec
from appliance.rules.protocol import Refused, Rules

# name in the log -> module path (or, for tests and plug-ins, an engine object)
REGISTRY: dict[str, str | Any] = {
    "battle": "appliance.rules.battle.game",  # sport battle («бой»)
    "tv": "appliance.rules.tv.game",  # the TV game
    "tournament": "appliance.rules.tournament.game",  # a sport tournament («турнир»)
}

# Every engine of the box lives under appliance/rules/ (tests/test_layers.py holds them to the
# rules' layer: no runtime, no I/O), and each is checked below against `Rules` over its state.

if TYPE_CHECKING:  # mypy checks each engine module against the protocol, over its own state
    from appliance.rules.battle import game as _battle
    from appliance.rules.battle.state import Battle
    from appliance.rules.tournament import game as _tournament
    from appliance.rules.tournament.state import Tournament
    from appliance.rules.tv import game as _tv
    from appliance.rules.tv.state import State as TVState

    _battle_rules: Rules[Battle] = _battle
    _tv_rules: Rules[TVState] = _tv
    _tournament_rules: Rules[Tournament] = _tournament

_REQUIRED = ("initial", "decide", "evolve", "legal_actions", "next_deadline", "view", "summary")


def names() -> list[str]:
    return sorted(REGISTRY)


def register(name: str, engine: str | Any) -> None:
    """Add an engine: a module path (imported on first use) or an object with the functions
    of `appliance.rules.protocol.Rules`."""
    REGISTRY[name] = engine


def get(name: str) -> Rules[Any]:
    """The engine registered as `name`; `Refused` if there is none or it cannot be loaded."""
    target = REGISTRY.get(name)
    if target is None:
        raise Refused(f"Неизвестные правила: «{name}». Есть: {', '.join(names())}.",
                      f"Unknown rules '{name}'. Known: {', '.join(names())}.", "unknown_rules")
    engine: Any = target
    if isinstance(target, str):
        try:
            engine = importlib.import_module(target)
        except ModuleNotFoundError as e:
            if e.name is None or not target.startswith(e.name):
                raise  # the engine exists but imports something missing: a real bug
            raise Refused(f"Правила «{name}» не установлены.",
                          f"The rules '{name}' are not installed ({target}).",
                          "rules_unavailable") from e
    missing = [f for f in _REQUIRED if not callable(getattr(engine, f, None))]
    if missing:
        raise Refused(f"Правила «{name}» неполны.",
                      f"The rules '{name}' lack {', '.join(missing)}.", "rules_unavailable")
    return engine  # type: ignore[no-any-return]



def setups() -> dict[str, SetupSpec]:
    """The engines a host starts from the new-game dialog, by name, each with the description
    of its setup (`SETUP_SPEC`). Engines without one (the tournament runs from its own page)
    and engines that cannot be loaded are left out."""
    out: dict[str, SetupSpec] = {}
    for name in names():
        try:
            spec = getattr(get(name), "SETUP_SPEC", None)
        except Refused:
            continue
        if isinstance(spec, SetupSpec):
            out[name] = spec
    return dict(sorted(out.items(), key=lambda item: (item[1].rank, item[0])))
