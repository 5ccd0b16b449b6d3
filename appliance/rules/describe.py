"""How an engine describes its own setup, so the screens and the CLI are generated from the
rules instead of knowing them: how many players, which built-in package, and the options a
host may set when starting a game (their defaults and bounds, and where each goes in the
setup). Each engine module has one, `SETUP_SPEC`.

The description only builds a setup; the engine's `initial` still checks it (a value a
description lets through and the rules refuse is refused there, with `bad_setup`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from appliance.rules import kit

NUMBER, CHOICE = "number", "choice"


@dataclass(frozen=True, slots=True)
class Option:
    """One thing a host may set: a number in bounds, or one of some choices. `path` is where
    it goes in the setup (``("settings", "window_s")``); a blank value leaves the engine's
    own default (`default` says what it is, for the form's placeholder)."""

    name: str
    path: tuple[str, ...]
    label_ru: str
    label_en: str
    kind: str = NUMBER
    default: Any = None
    min: float | None = None
    max: float | None = None
    step: float | None = None
    choices: tuple[tuple[str, str, str], ...] = ()  # (value, ru, en)
    key: str = ""  # the screens' catalogue key for the label, when they have one
    choice_keys: tuple[str, ...] = ()  # the same for each choice

    def value(self, raw: Any) -> Any:
        """The option's value from a form or a command line, checked; None when blank."""
        if raw is None or raw == "":
            return None
        if self.kind == CHOICE:
            if raw not in [c[0] for c in self.choices]:
                raise kit.bad_setup(f"{self.label_ru}: нет варианта {raw!r}",
                                    f"{self.label_en}: no choice {raw!r}")
            return str(raw)
        number = raw
        if isinstance(raw, str):
            try:
                number = float(raw)
            except ValueError:
                number = math.nan
        value = kit.finite(number)
        lo = -math.inf if self.min is None else self.min
        hi = math.inf if self.max is None else self.max
        if value is None or not lo <= value <= hi:
            raise kit.bad_setup(f"{self.label_ru}: нужно число от {self.min} до {self.max}",
                                f"{self.label_en}: a number from {self.min} to {self.max}")
        return value

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "path": list(self.path), "ru": self.label_ru,
                "en": self.label_en, "kind": self.kind, "default": self.default,
                "min": self.min, "max": self.max, "step": self.step,
                "key": self.key,
                "choices": [{"value": v, "ru": ru, "en": en,
                             "key": self.choice_keys[i] if i < len(self.choice_keys) else ""}
                            for i, (v, ru, en) in enumerate(self.choices)]}


@dataclass(frozen=True, slots=True)
class SetupSpec:
    """An engine's setup as a form: players, the built-in package, the options."""

    rules: str
    label_ru: str
    label_en: str
    players_min: int
    players_max: int
    demo: str  # the built-in package a game uses when the host picks none
    options: tuple[Option, ...] = ()
    rank: int = 0  # its place among the formats the host is offered (the everyday one first)

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)

    def build(self, players: Sequence[str], package: Any,
              values: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The setup for `initial`: ``{"players", "package", ...options at their paths}``.
        An unknown option or a bad value is refused (`bad_setup`)."""
        setup: dict[str, Any] = {"players": list(players),
                                 "package": self.demo if package is None else package}
        for name, raw in (values or {}).items():
            opt = self.option(name)
            if opt is None:
                raise kit.bad_setup(f"нет настройки {name!r}", f"no option {name!r}")
            value = opt.value(raw)
            if value is None:
                continue
            node = setup
            for key in opt.path[:-1]:
                node = node.setdefault(key, {})
            node[opt.path[-1]] = value
        return setup

    def to_json(self) -> dict[str, Any]:
        return {"rules": self.rules, "ru": self.label_ru, "en": self.label_en,
                "players": {"min": self.players_min, "max": self.players_max},
                "demo": self.demo, "options": [o.to_json() for o in self.options]}
