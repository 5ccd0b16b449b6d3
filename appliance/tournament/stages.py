"""The stages of a tournament as data: the arithmetic of regulation 3.2–3.4.

The main bracket («основная сетка») is a power of 3: 3, 9, 27, 81, 243, 729 players, every
battle of three, the winner going on (olympic system, 3.1). By default it is the largest
power of 3 the entries fill (81 for 81–242 entries, as 3.2 has it).

When there are more entries than bracket places, **one qualification round** reduces them to
exactly the bracket size. With ``n`` entries and a bracket of ``B`` the round must remove
``E = n - B`` players; a battle of 3 removes 2 and a battle of 2 removes 1 (2.1 allows
battles of two in the preliminary stage), so ``3s + 2s`` battles with ``2·threes + twos = E``.
The box plays as many battles of 3 as it can — ``threes = E // 2``, ``twos = E % 2`` — and
everyone else goes straight into the bracket (a bye). 100 entries, bracket 81: E = 19, nine
battles of 3 and one of 2 (29 players, 10 winners), 71 byes, 10 + 71 = 81. The draw may turn
a battle of 3 into two of 2 when the team rule needs it (see `appliance.tournament.draw`);
``winners + byes = B`` holds for any split.

A director may choose a smaller bracket only if one qualification round can still reach it:
``B ≤ n ≤ 3·B`` (with ``n = 3·B`` everybody plays qualification, nobody has a bye).

Stages are named by how many battles they hold (1/81 final = 81 battles, ... 1/3 final, the
final); themes per battle follow 3.4: four in qualification, 1/81, 1/27 and 1/9; six in the
1/3 finals; twelve in the final, blue and red. Two entries play a single final of two — the
one field too small for a bracket.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from appliance.rules.protocol import Refused

MIN_ENTRIES = 2
QUALIFICATION = "qualification"
FINAL = "final"
THEMES_DEFAULT = 4
THEMES_SEMIFINAL = 6  # «третьфинальные бои», 1/3 final
THEMES_FINAL = 12
RED_THEMES_FINAL = 6  # of the final's 12, the red ones (values 20–100)
BRACKETS = (3, 9, 27, 81, 243, 729)


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage: its key (``qualification``, ``1/27``, ``final``...), its themes per battle and
    the number of players in each of its battles."""

    key: str
    themes: int
    sizes: tuple[int, ...]

    @property
    def battles(self) -> int:
        return len(self.sizes)

    @property
    def label_ru(self) -> str:
        return stage_label(self.key)[0]

    @property
    def label_en(self) -> str:
        return stage_label(self.key)[1]

    @property
    def prefix(self) -> str:
        """Battle ids of this stage: Q1…, 27.1…, F."""
        if self.key == QUALIFICATION:
            return "Q"
        if self.key == FINAL:
            return "F"
        return self.key.split("/")[1] + "."

    def battle_id(self, index: int) -> str:
        return "F" if self.key == FINAL else f"{self.prefix}{index + 1}"

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "themes": self.themes, "sizes": list(self.sizes),
                "ru": self.label_ru, "en": self.label_en}


@dataclass(frozen=True, slots=True)
class Plan:
    """The stages in playing order for `entries` entries and a bracket of `bracket`."""

    entries: int
    bracket: int
    stages: tuple[Stage, ...]

    @property
    def qualification(self) -> Stage | None:
        return self.stages[0] if self.stages[0].key == QUALIFICATION else None

    @property
    def byes(self) -> int:
        q = self.qualification
        return self.entries - sum(q.sizes) if q else 0

    def to_json(self) -> dict[str, Any]:
        return {"entries": self.entries, "bracket": self.bracket, "byes": self.byes,
                "stages": [s.to_json() for s in self.stages]}


def stage_label(key: str) -> tuple[str, str]:
    if key == QUALIFICATION:
        return "Квалификация", "Qualification"
    if key == FINAL:
        return "Финал", "Final"
    return f"{key} финала", f"{key} final"


def themes_for(key: str) -> int:
    """Themes per battle of a stage (regulation 3.4)."""
    if key == FINAL:
        return THEMES_FINAL
    if key == "1/3":
        return THEMES_SEMIFINAL
    return THEMES_DEFAULT


def _bad(ru: str, en: str, code: str = "bad_field") -> Refused:
    return Refused(ru, en, code)


def default_bracket(n: int) -> int:
    """The largest power of 3 that `n` entries fill (2 entries: a final of two)."""
    if n < MIN_ENTRIES:
        raise _bad(f"Для турнира нужно хотя бы {MIN_ENTRIES} участника, а заявок {n}.",
                   f"A tournament needs at least {MIN_ENTRIES} entries; there are {n}.")
    if n < 3:
        return n
    b = 3
    while b * 3 <= n:
        b *= 3
    return b


def check_bracket(n: int, bracket: int | None) -> int:
    """The bracket size to use: `bracket` if one qualification round can reach it."""
    best = default_bracket(n)
    if bracket is None or bracket == best:
        return best
    if bracket not in BRACKETS:
        raise _bad(f"Сетка должна быть степенью тройки (3, 9, 27, 81, 243, 729), а не {bracket}.",
                   f"The bracket must be a power of 3 (3, 9, 27, 81, 243, 729), not {bracket}.",
                   "bad_bracket")
    if bracket > n:
        raise _bad(f"Сетку на {bracket} не заполнить: заявок {n}.",
                   f"A bracket of {bracket} cannot be filled by {n} entries.", "bad_bracket")
    if n > 3 * bracket:
        raise _bad(f"За один квалификационный раунд из {n} участников не получить {bracket}"
                   f" (не больше {3 * bracket}); возьмите сетку на {best}.",
                   f"One qualification round cannot reduce {n} entries to {bracket}"
                   f" (at most {3 * bracket}); use a bracket of {best}.", "bad_bracket")
    return bracket


def plan(n: int, bracket: int | None = None, threes: int | None = None) -> Plan:
    """The stages for `n` entries. `threes` (battles of 3 in qualification) defaults to as
    many as possible; fewer means more battles of 2 (the draw's choice for the team rule)."""
    b = check_bracket(n, bracket)
    if b < 3:  # two entries: the final alone
        return Plan(n, b, (Stage(FINAL, THEMES_FINAL, (n,)),))
    stages: list[Stage] = []
    excess = n - b
    if excess:
        lo, hi = threes_range(n, b)
        a = hi if threes is None else threes
        if not lo <= a <= hi:
            raise ValueError(f"threes={a} outside {lo}..{hi}")
        stages.append(Stage(QUALIFICATION, THEMES_DEFAULT, (3,) * a + (2,) * (excess - 2 * a)))
    size = b
    while size >= 3:
        battles = size // 3
        key = FINAL if battles == 1 else f"1/{battles}"
        stages.append(Stage(key, themes_for(key), (3,) * battles))
        size = battles
    return Plan(n, b, tuple(stages))


def threes_range(n: int, b: int) -> tuple[int, int]:
    """How many qualification battles of 3 are possible (fewest, most) for `n` → `b`: each
    of 3 removes two, each of 2 one, and the players in them cannot exceed the entries."""
    excess = n - b
    return max(0, 2 * excess - n), excess // 2
