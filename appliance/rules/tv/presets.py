"""Rule-sets as data: the TV show's numbers and the club variants a host adjusts.

A preset is a plain frozen value; a game's `Settings` is a preset with the host's overrides
applied. A package's own rounds and prices always win over the preset's values, which only
fill in packages without prices (plain-text packages).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from appliance.rules import kit


@dataclass(frozen=True, slots=True)
class Settings:
    """Every number the rules leave to the rule-set («регламент»)."""

    preset: str = "tv"
    players_min: int = 3
    players_max: int = 3
    rounds: int | None = 3  # board rounds to play; None: all the package has
    round_values: tuple[tuple[int, ...], ...] = (
        (100, 200, 300, 400, 500),
        (200, 400, 600, 800, 1000),
        (300, 600, 900, 1200, 1500),
    )
    final: bool = True  # play the package's final round if it has one
    final_positive_only: bool = True  # only players with a score above zero play the final
    false_start_s: float | None = 2.0  # button block after a false start; None: no false starts
    settle_ms: int = 5  # arbiter settle window (GPIO callbacks arrive out of order)
    press_window_s: float | None = None  # None: the host closes an unanswered question
    answer_s: float | None = None  # answer countdown shown on the screens (display only)
    auction_step: int = 100  # bids are multiples of this
    cat_to_self: bool = False  # the opener may keep a cat even if the package does not say so
    shootout_questions: int = 5  # questions per shootout theme

    def values_for(self, round_index: int) -> tuple[int, ...]:
        """Preset values of a round, for packages without prices (last row repeats)."""
        rows = self.round_values or ((100, 200, 300, 400, 500),)
        return rows[min(round_index, len(rows) - 1)]

    def to_json(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}


def _plain(v: Any) -> Any:
    return [list(r) for r in v] if isinstance(v, tuple) else v


TV = Settings()
"""The show: 3 players, 3 rounds of 6×5 (100–500, 200–1000, 300–1500), final, 2 s block."""

CLUB = replace(TV, preset="club", players_min=2, players_max=4, rounds=None)
"""A club evening: 2–4 players, every round the package has, no timers (the host closes)."""

CLUB_TIMED = replace(CLUB, preset="club_timed", press_window_s=7.0, answer_s=5.0)
"""A club evening with timers: 7 s to press after the lamp, a 5 s answer countdown."""

PRESETS: dict[str, Settings] = {s.preset: s for s in (TV, CLUB, CLUB_TIMED)}

_OPTIONAL_FLOAT = {"false_start_s", "press_window_s", "answer_s"}
_INTS = {"players_min", "players_max", "settle_ms", "auction_step", "shootout_questions"}
_BOOLS = {"final", "final_positive_only", "cat_to_self"}


MAX_SECONDS = 3600.0  # no timer of a game runs longer than an hour


def resolve(preset: str = "tv", overrides: Mapping[str, Any] | None = None) -> Settings:
    """The preset with the host's overrides, validated: a bad value is refused (code
    ``bad_setup``), never guessed. Numbers are JSON numbers: a string, a boolean, NaN or
    infinity is refused; timers are positive (``false_start_s`` may be 0) and at most an
    hour; counts are whole numbers (3.0 is 3, 3.7 is refused)."""
    base = PRESETS.get(preset)
    if base is None:
        raise kit.bad_setup(f"нет такого набора правил: {preset!r}",
                            f"no such rule-set: {preset!r}")
    if not isinstance(overrides or {}, Mapping):
        raise kit.bad_setup("settings — не словарь", "settings is not an object")
    changes: dict[str, Any] = {}
    for key, value in (overrides or {}).items():
        try:
            changes[key] = _coerce(key, value)
        except (TypeError, ValueError) as e:
            raise kit.bad_setup(f"неверное значение настройки {key}: {value!r}",
                                f"bad value for setting {key}: {value!r}") from e
    s = replace(base, **changes)
    if not 1 <= s.players_min <= s.players_max:
        raise kit.bad_setup("неверные пределы числа игроков", "bad player count limits")
    if s.auction_step < 1 or s.shootout_questions < 1 or s.settle_ms < 0:
        raise kit.bad_setup("неверные числа в настройках", "bad numbers in the settings")
    return s


def _number(value: Any) -> float:
    number = kit.finite(value)
    if number is None:
        raise TypeError("not a finite number")
    return number


def _whole(value: Any) -> int:
    v = _number(value)
    if not v.is_integer():
        raise ValueError("not a whole number")
    return int(v)


def _coerce(key: str, value: Any) -> Any:
    if key in _OPTIONAL_FLOAT:
        if value is None:
            return None
        v = _number(value)
        if v < 0 or (v == 0 and key != "false_start_s") or v > MAX_SECONDS:
            raise ValueError("out of range")
        return v
    if key in _INTS:
        v = _whole(value)
        if v < 0:
            raise ValueError("negative")
        return v
    if key in _BOOLS:
        if not isinstance(value, bool):
            raise TypeError(key)
        return value
    if key == "rounds":
        if value is None:
            return None
        v = _whole(value)
        if v < 1:
            raise ValueError("no rounds")
        return v
    if key == "round_values":
        if not isinstance(value, list | tuple) or not value:
            raise TypeError(key)
        rows = []
        for row in value:
            if not isinstance(row, list | tuple) or not row:
                raise TypeError(key)
            rows.append(tuple(_whole(v) for v in row))
        return tuple(rows)
    raise ValueError(key)
