"""The stages of a tournament as data: the arithmetic of regulation 3.2–3.4.

**The main part** starts at the 1/27 final: 81 players, 27 battles of three, then 9, 3 and
the final, the winner going on (olympic system, 3.1). With more than 81 entries a
**qualification stage** decides the 81 (3.2): every one of the 81 seats of the 1/27 is the
root of a little tree of qualification battles holding ``k`` entries (``k = 1``: a bye into
the 1/27), so the qualification has as many rounds as the largest tree is deep — one for up
to 243 entries, two up to 729, three up to 2,187 (``81·3^R``). A tree of ``k`` entries plays
``(k − 1) / 2`` battles of 3 when ``k`` is odd, and one battle of 2 more when it is even;
its last battle is in the last round, the ones below it in the rounds before, so a player of
a small tree has a bye into a later round. Stages are named ``qualification`` (one round) or
``qualification 1``, ``qualification 2``… in playing order.

How many entries each tree holds (the *shape*) is the draw's business: as even as the field
allows, with the even trees paired into odd ones (``(e, e) → (e + 1, e − 1)``, one battle of 2
fewer each) as far as the team rule lets it (`appliance.rules.tournament.draw`). 100 entries: 19
trees of 2 become 9 of 3, 9 byes and one of 2: 9 + 1 battles, 71 byes.

**Smaller fields** (81 entries or fewer; not in the regulation, decided in the rules
digest): no qualification. The bracket is the largest power of 3 the entries fill (27 for
27–80, 9 for 9–26, 3 for 3–8) and one round of **preliminary** battles of 2 or 3 cuts the
rest. Two entries play one final of two.

**Themes (3.4)**: 4 per battle, except a battle whose winner goes to the final (the 1/3
finals, or the preliminary battles of a field of 4–8): 6, and the final: 12, six blue and six
red (red values doubled) unless the director says otherwise.

Logs drawn by the earlier rules (a «1/81» or «1/243» stage, qualification on 4 themes before
the final) keep their own stages: `appliance.rules.tournament.legacy`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from appliance.rules.protocol import Refused

MIN_ENTRIES = 2
MAIN = 81  # players of the 1/27 final, where the main part starts (3.2)
QUALIFICATION = "qualification"
PRELIMINARY = "preliminary"
FINAL = "final"
THEMES_DEFAULT = 4
THEMES_SEMIFINAL = 6  # «третьфинальные бои»: a battle whose winner goes to the final
THEMES_FINAL = 12
RED_THEMES_FINAL = 6  # of the final's 12, the red ones (values 20–100), by default
BRACKETS = (3, 9, 27, 81)


def is_qualification(key: str) -> bool:
    """A qualification round (3.2–3.3: the team rule binds it)."""
    return key == QUALIFICATION or key.startswith(QUALIFICATION + " ")


def before_bracket(key: str) -> bool:
    """A stage played before the main bracket: qualification rounds or preliminary battles."""
    return is_qualification(key) or key == PRELIMINARY


def qualification_key(round_: int, rounds: int) -> str:
    return QUALIFICATION if rounds == 1 else f"{QUALIFICATION} {round_}"


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage: its key (``qualification 1``, ``preliminary``, ``1/27``, ``final``…), its
    themes per battle and the number of seats in each of its battles."""

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
        """Battle ids of this stage: Q1… (one qualification round), Q2.1… (round 2 of
        several), P1… (preliminary), 27.1…, F."""
        if self.key == QUALIFICATION:
            return "Q"
        if is_qualification(self.key):
            return f"Q{self.key.split()[1]}."
        if self.key == PRELIMINARY:
            return "P"
        if self.key == FINAL:
            return "F"
        return self.key.split("/")[1] + "."

    def battle_id(self, index: int) -> str:
        return "F" if self.key == FINAL else f"{self.prefix}{index + 1}"

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "themes": self.themes, "sizes": list(self.sizes),
                "ru": self.label_ru, "en": self.label_en}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Stage:
        return cls(d["key"], d["themes"], tuple(d["sizes"]))


@dataclass(frozen=True, slots=True)
class Plan:
    """The stages in playing order for `entries` entries and a main bracket of `bracket`;
    `byes` entries sit straight in the bracket's first stage."""

    entries: int
    bracket: int
    stages: tuple[Stage, ...]
    byes: int = 0

    @property
    def first(self) -> Stage:
        """The main bracket's first stage (1/27, 1/9, 1/3 or the final)."""
        return next(s for s in self.stages if not before_bracket(s.key))

    @property
    def qualification(self) -> Stage | None:
        """The first stage played before the bracket, if any (a qualification round or the
        preliminary battles)."""
        return self.stages[0] if before_bracket(self.stages[0].key) else None

    @property
    def early(self) -> tuple[Stage, ...]:
        """Every stage before the bracket, in playing order."""
        return tuple(s for s in self.stages if before_bracket(s.key))

    def stage(self, key: str) -> Stage | None:
        return next((s for s in self.stages if s.key == key), None)

    def to_json(self) -> dict[str, Any]:
        return {"entries": self.entries, "bracket": self.bracket, "byes": self.byes,
                "stages": [s.to_json() for s in self.stages]}


def stage_label(key: str) -> tuple[str, str]:
    if key == QUALIFICATION:
        return "Квалификация", "Qualification"
    if is_qualification(key):
        r = key.split()[1]
        return f"Квалификация, {r}-й раунд", f"Qualification, round {r}"
    if key == PRELIMINARY:
        return "Предварительные бои", "Preliminary battles"
    if key == FINAL:
        return "Финал", "Final"
    return f"{key} финала", f"{key} final"


def _bad(ru: str, en: str, code: str = "bad_field") -> Refused:
    return Refused(ru, en, code)


def default_bracket(n: int) -> int:
    """The main bracket for `n` entries: 81 above 81 (3.2), else the largest power of 3 the
    entries fill (2 entries: a final of two)."""
    if n < MIN_ENTRIES:
        raise _bad(f"Для турнира нужно хотя бы {MIN_ENTRIES} участника, а заявок {n}.",
                   f"A tournament needs at least {MIN_ENTRIES} entries; there are {n}.")
    if n < 3:
        return n
    b = 3
    while b * 3 <= min(n, MAIN):
        b *= 3
    return b


def check_bracket(n: int, bracket: int | None) -> int:
    """The bracket to use: the rule's, or a smaller one a small field asks for as long as one
    round of preliminary battles can reach it (``B ≤ n ≤ 3·B``)."""
    best = default_bracket(n)
    if bracket is None or bracket == best:
        return best
    if n > MAIN:
        raise _bad(f"Основная часть начинается с 1/27 финала: при {n} заявках сетка — {MAIN},"
                   f" а не {bracket}; лишних отсеивает квалификация.",
                   f"The main part starts at the 1/27 final: with {n} entries the bracket is"
                   f" {MAIN}, not {bracket}; the qualification cuts the rest.", "bad_bracket")
    if bracket not in BRACKETS:
        raise _bad(f"Сетка должна быть степенью тройки (3, 9, 27, 81), а не {bracket}.",
                   f"The bracket must be a power of 3 (3, 9, 27, 81), not {bracket}.",
                   "bad_bracket")
    if bracket > n:
        raise _bad(f"Сетку на {bracket} не заполнить: заявок {n}.",
                   f"A bracket of {bracket} cannot be filled by {n} entries.", "bad_bracket")
    if n > 3 * bracket:
        raise _bad(f"За один круг предварительных боёв из {n} участников не получить {bracket}"
                   f" (не больше {3 * bracket}); возьмите сетку на {best}.",
                   f"One round of preliminary battles cannot reduce {n} entries to {bracket}"
                   f" (at most {3 * bracket}); use a bracket of {best}.", "bad_bracket")
    return bracket


def rounds_needed(n: int, bracket: int) -> int:
    """Rounds before the bracket: 0 when the entries fill it exactly, else the depth of the
    deepest tree (``n ≤ bracket·3^R``)."""
    r, cap = 0, bracket
    while cap < n:
        r, cap = r + 1, cap * 3
    return r


# -- shapes: how many entries sit under each seat of the bracket's first stage --------------
def uniform(n: int, seats: int) -> list[int]:
    """`n` entries over `seats` trees as evenly as possible, larger first."""
    a, extra = divmod(n, seats)
    return [a + 1] * extra + [a] * (seats - extra)


def capacity(shape: Iterable[int], j: int) -> int:
    """``Σ min(k, j)``: how many players of the `j` largest teams the trees can take at most
    (one per team and tree); the Gale–Ryser condition compares it with those teams' sum."""
    return sum(min(k, j) for k in shape)


def shape(n: int, seats: int, team_sizes: Sequence[int] = ()) -> list[int]:
    """Entries per tree (larger first): the even split, then even trees paired into odd ones
    — ``(e, e) → (e + 1, e − 1)``, one battle of 2 fewer each — while the team rule still
    fits. Each pairing lowers ``Σ min(k, e)`` by one and leaves every other ``j`` alone, so
    it fits while that sum stays at least the `e` largest teams' total."""
    base = uniform(n, seats)
    evens = [k for k in base if k % 2 == 0]
    if not evens:
        return base
    e = evens[0]
    top = sorted(team_sizes, reverse=True)[:e]
    room = capacity(base, e) - sum(top)
    moves = min(len(evens) // 2, max(room, 0))
    out = [k for k in base if k != e] + [e + 1] * moves + [e - 1] * moves
    out += [e] * (len(evens) - 2 * moves)
    return sorted(out, reverse=True)


def split(k: int, depth: int) -> list[int]:
    """The sizes of the parts under a battle of a tree of `k` entries with `depth` rounds
    (the battle itself in the last): 3 parts (2 when k is 2), each at most ``3^(depth−1)``,
    all odd but one when k is even, as even as possible."""
    if k == 2:
        return [1, 1]
    cap = 3 ** (depth - 1)
    best: tuple[tuple[int, int], list[int]] | None = None
    base = k // 3
    for a in range(max(1, base - 3), min(cap, k) + 1):
        for b in range(max(1, base - 3), min(a, cap) + 1):
            c = k - a - b
            if not 1 <= c <= b:
                continue
            parts = [a, b, c]
            score = (sum(p % 2 == 0 for p in parts), a - c)
            if best is None or score < best[0]:
                best = (score, parts)
    assert best is not None, f"no split of {k} in {depth} rounds"
    return best[1]


def twos_of(k: int) -> int:
    return 1 if k > 1 and k % 2 == 0 else 0


def themes_before_final(stages_after: int) -> int:
    return THEMES_SEMIFINAL if stages_after == 1 else THEMES_DEFAULT


def bracket_stages(bracket: int) -> list[Stage]:
    out: list[Stage] = []
    size = bracket
    while size >= 3:
        battles = size // 3
        key = FINAL if battles == 1 else f"1/{battles}"
        out.append(Stage(key, 0, (3,) * battles))
        size = battles
    if bracket < 3:
        out.append(Stage(FINAL, 0, (bracket,)))
    return _themed(out)


def _themed(stages: list[Stage]) -> list[Stage]:
    """Themes per battle (3.4): 12 in the final, 6 in the stage before it, else 4."""
    out = []
    for i, s in enumerate(stages):
        left = len(stages) - 1 - i
        themes = THEMES_FINAL if left == 0 else themes_before_final(left)
        out.append(Stage(s.key, themes, s.sizes))
    return out


def themes_for(stages: Sequence[Stage], key: str) -> int:
    s = next((x for x in stages if x.key == key), None)
    return s.themes if s else THEMES_DEFAULT


def plan(n: int, bracket: int | None = None, team_sizes: Sequence[int] = ()) -> Plan:
    """The stages for `n` entries (battle counts of the shape the draw would use with teams
    of `team_sizes`): the stage names, themes and battle sizes in playing order."""
    b = check_bracket(n, bracket)
    main = bracket_stages(b)
    if b < 3 or n == b:
        return Plan(n, b, tuple(main))
    seats = b
    rounds = rounds_needed(n, b)
    sizes: list[list[int]] = [[] for _ in range(rounds)]
    trees = shape(n, seats, team_sizes)
    for k in trees:
        _tree_sizes(k, rounds, sizes)
    byes = sum(1 for k in trees if k == 1)
    early = [Stage(PRELIMINARY if b < MAIN else qualification_key(r + 1, rounds), 0,
                   tuple(sizes[r])) for r in range(rounds)]
    early = [s for s in early if s.sizes]
    stages = _themed(early + [Stage(s.key, 0, s.sizes) for s in main])
    return Plan(n, b, tuple(stages), byes)


def _tree_sizes(k: int, depth: int, out: list[list[int]]) -> None:
    if k <= 1:
        return
    parts = split(k, depth)
    out[depth - 1].append(len(parts))
    for p in parts:
        _tree_sizes(p, depth - 1, out)
