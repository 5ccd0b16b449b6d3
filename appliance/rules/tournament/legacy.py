"""The stages and the draw of the earlier rules, kept to replay and audit logs drawn by them.

Before issue 23 the main bracket was the largest power of 3 the entries filled (243 entries
made a «1/81 финала», 1,000 a «1/243» and a «1/81»), one qualification round of battles of 3
and 2 cut the rest, on 4 themes even when its winners went to the final, and rated entries
were seeds by default. A log whose ``drawn`` event has no ``stages`` was drawn so: its fold
rebuilds the stages with `plan` here, and `svoyak tournament audit` re-runs it with `draw`
here. New draws never come here (`appliance.rules.tournament.draw`). The code is the earlier
``stages.plan`` and ``draw.draw``, unchanged but for its names.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from appliance.rules.protocol import Refused
from appliance.rules.tournament.draw import (
    SWAPS_PER_PLAYER,
    Draw,
    DrawnBattle,
    Infeasible,
    Lot,
    Source,
    spread,
)
from appliance.rules.tournament.entries import Entry, key
from appliance.rules.tournament.stages import (
    FINAL,
    MIN_ENTRIES,
    QUALIFICATION,
    THEMES_DEFAULT,
    THEMES_FINAL,
    THEMES_SEMIFINAL,
    Plan,
    Stage,
)

BRACKETS = (3, 9, 27, 81, 243, 729)


def _bad(ru: str, en: str, code: str = "bad_field") -> Refused:
    return Refused(ru, en, code)


def themes_for(key: str) -> int:
    """Themes per battle of a stage (regulation 3.4)."""
    if key == FINAL:
        return THEMES_FINAL
    if key == "1/3":
        return THEMES_SEMIFINAL
    return THEMES_DEFAULT


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
    byes = n - sum(stages[0].sizes) if excess else 0
    return Plan(n, b, tuple(stages), byes)


def threes_range(n: int, b: int) -> tuple[int, int]:
    """How many qualification battles of 3 are possible (fewest, most) for `n` → `b`: each
    of 3 removes two, each of 2 one, and the players in them cannot exceed the entries."""
    excess = n - b
    return max(0, 2 * excess - n), excess // 2


def draw(entries: Sequence[Entry], seed: int, bracket: int | None = None) -> Draw:
    """Draw the whole bracket for `entries` (in their order) with the lot `seed`."""
    n = len(entries)
    base = _plan(n, bracket)
    lot = Lot(seed)
    teams = [key(e.team) for e in entries]
    seeds = _seeds(entries, base, lot)
    if base.qualification is None:
        return _assemble(seed, base, lot, seeds, list(range(n)), [], seeds_with_bye=seeds)
    plan, byes, qual_players = _choose_byes(entries, teams, base, seeds, lot)
    qual = _deal(qual_players, teams, plan.qualification.sizes, lot)  # type: ignore[union-attr]
    bye_seeds = [s for s in seeds if s in byes]
    return _assemble(seed, plan, lot, seeds, byes, qual, seeds_with_bye=bye_seeds)


def _seeds(entries: Sequence[Entry], plan: Plan, lot: Lot) -> list[int]:
    first = plan.stages[1] if plan.qualification else plan.stages[0]
    rated = [i for i, e in enumerate(entries) if e.rating is not None]
    if plan.bracket < 3 or not rated:
        return []
    lot.shuffle(rated)  # equal ratings: by lot
    rated.sort(key=lambda i: -(entries[i].rating or 0.0))
    return rated[:first.battles]


def _need(counts: Counter[str], q: int) -> int:
    return sum(max(c - q, 0) for c in counts.values())


def _choose_byes(entries: Sequence[Entry], teams: list[str], base: Plan, seeds: list[int],
                 lot: Lot) -> tuple[Plan, list[int], list[int]]:
    n, b = len(entries), base.bracket
    counts = Counter(teams)
    lo, hi = threes_range(n, b)
    excess = n - b
    chosen = None
    for a in range(hi, lo - 1, -1):
        q, byes = excess - a, n - (2 * excess - a)
        if _need(counts, q) <= byes:
            chosen = a
            break
    if chosen is None:
        raise _infeasible(entries, teams, counts, n, b, lo, hi)
    plan = _plan(n, b, chosen)
    q, byes_total = excess - chosen, plan.byes
    required = {t: max(c - q, 0) for t, c in counts.items()}
    slack = byes_total - sum(required.values())
    given: Counter[str] = Counter()
    bye: set[int] = set()
    for s in seeds:  # seeds first, as far as the team rule allows
        t = teams[s]
        if given[t] < required[t]:
            given[t] += 1
        elif slack > 0:
            slack -= 1
            given[t] += 1
        else:
            continue
        bye.add(s)
    by_team: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(teams):
        if i not in bye:
            by_team[t].append(i)
    for t in sorted(by_team):  # the byes each big team still needs, by lot within the team
        short = required[t] - given[t]
        if short > 0:
            pool = by_team[t]
            lot.shuffle(pool)
            bye.update(pool[:short])
    rest = [i for i in range(n) if i not in bye]
    lot.shuffle(rest)
    bye.update(rest[:byes_total - len(bye)])
    qual_players = [i for i in range(n) if i not in bye]
    return plan, sorted(bye), qual_players


def _infeasible(entries: Sequence[Entry], teams: list[str], counts: Counter[str], n: int,
                b: int, lo: int, hi: int) -> Infeasible:
    excess = n - b
    best = min(range(lo, hi + 1),
               key=lambda a: _need(counts, excess - a) - (n - 2 * excess + a))
    q, byes = excess - best, n - 2 * excess + best
    shown = {key(e.team): e.team for e in entries}
    over = sorted((t for t, c in counts.items() if c > q), key=lambda t: (-counts[t], t))
    top = over[0]
    name, c = shown[top], counts[top]
    if c > b:
        return Infeasible(
            name,
            f"Команда «{name}»: {c} игроков, а мест в сетке {b}. Игроки одной команды не могут"
            f" встретиться в квалификации, поэтому каждый квалификационный бой и каждый"
            f" пропуск квалификации дают команде не больше одного места ({q} + {byes} = {b}).",
            f"Team '{name}' has {c} players but the bracket has {b} places. Players of one"
            f" team may not meet in qualification, so each qualification battle and each bye"
            f" gives a team at most one place ({q} + {byes} = {b}).")
    listed_ru = ", ".join(f"«{shown[t]}» ({counts[t]})" for t in over)
    listed_en = ", ".join(f"'{shown[t]}' ({counts[t]})" for t in over)
    need = _need(counts, q)
    return Infeasible(
        name,
        f"Команда «{name}» и другие большие команды ({listed_ru}): в {q} квалификационных"
        f" боях может быть не больше {q} игроков одной команды, остальным {need} нужен пропуск"
        f" квалификации, а пропусков всего {byes}.",
        f"Team '{name}' and the other large teams ({listed_en}): {q} qualification battles"
        f" can take at most {q} players of one team, the other {need} need byes, and there"
        f" are only {byes} byes.")


def _deal(players: list[int], teams: list[str], sizes: tuple[int, ...],
          lot: Lot) -> list[list[int]]:
    """Qualification battles keeping the team rule (the round-robin deal of the module
    docstring), then mixed by random rule-keeping swaps and shuffled."""
    q = len(sizes)
    by_team: dict[str, list[int]] = defaultdict(list)
    for p in players:
        by_team[teams[p]].append(p)
    groups = list(by_team.values())
    for g in groups:
        lot.shuffle(g)
    lot.shuffle(groups)
    groups.sort(key=len, reverse=True)
    order = [p for g in groups for p in g]
    # battles of 3 first (sizes is threes then twos), so the third pass fills exactly them
    battles: list[list[int]] = [[] for _ in range(q)]
    for pos, p in enumerate(order):
        battles[pos % q].append(p)
    assert [len(x) for x in battles] == list(sizes), "deal does not match the stage sizes"
    seats = [(bi, si) for bi, bt in enumerate(battles) for si in range(len(bt))]
    for _ in range(SWAPS_PER_PLAYER * len(seats)):
        b1, s1 = seats[lot.below(len(seats))]
        b2, s2 = seats[lot.below(len(seats))]
        if b1 == b2:
            continue
        p1, p2 = battles[b1][s1], battles[b2][s2]
        others1 = [teams[x] for x in battles[b1] if x != p1]
        others2 = [teams[x] for x in battles[b2] if x != p2]
        if teams[p2] not in others1 and teams[p1] not in others2:
            battles[b1][s1], battles[b2][s2] = p2, p1
    lot.shuffle(battles)
    for bt in battles:
        lot.shuffle(bt)
    return battles


def _assemble(seed: int, plan: Plan, lot: Lot, seeds: list[int], byes: list[int],
              qual: list[list[int]], seeds_with_bye: list[int]) -> Draw:
    qual_stage = plan.qualification
    first = plan.stages[1] if qual_stage else plan.stages[0]
    slots: list[Any] = [None] * (3 * first.battles if plan.bracket >= 3 else plan.bracket)
    if plan.bracket < 3:  # two entries: the final of two
        slots = list(byes)
    rank = {s: r for r, s in enumerate(seeds)}
    fixed: list[tuple[int, Any]] = []
    for s in seeds:  # a seed's place, or its qualification battle's winner's place
        pos = 3 * spread(rank[s], first.battles)
        if s in seeds_with_bye:
            fixed.append((pos, ("e", s)))
        else:
            qi = next((i for i, bt in enumerate(qual) if s in bt), None)
            if qi is not None and all(v != ("q", qi) for _, v in fixed):
                fixed.append((pos, ("q", qi)))
    placed = {v for _, v in fixed}
    rest: list[Any] = [("e", e) for e in byes if ("e", e) not in placed]
    rest += [("q", i) for i in range(len(qual)) if ("q", i) not in placed]
    lot.shuffle(rest)
    if plan.bracket >= 3:
        for pos, v in fixed:
            slots[pos] = v
        it = iter(rest)
        slots = [v if v is not None else next(it) for v in slots]
    else:
        slots = [("e", e) for e in byes]
    # qualification battles numbered in the order of the places they feed
    q_order = [v[1] for v in slots if v[0] == "q"]
    q_ids = {qi: f"Q{k + 1}" for k, qi in enumerate(q_order)}
    battles: list[DrawnBattle] = []
    number = 0
    if qual_stage:
        for k, qi in enumerate(q_order):
            pos = slots.index(("q", qi))
            number += 1
            battles.append(DrawnBattle(q_ids[qi], QUALIFICATION, k, number,
                                       tuple(Source(entry=p) for p in qual[qi]),
                                       first.battle_id(pos // 3), pos % 3))
    bracket_stages = plan.stages[1:] if qual_stage else plan.stages
    for si, stage in enumerate(bracket_stages):
        nxt = bracket_stages[si + 1] if si + 1 < len(bracket_stages) else None
        for i in range(stage.battles):
            if si == 0:
                seats = tuple(Source(entry=v[1]) if v[0] == "e" else Source(winner_of=q_ids[v[1]])
                              for v in slots[3 * i:3 * i + len(slots[3 * i:3 * i + 3])])
            else:
                prev = bracket_stages[si - 1]
                seats = tuple(Source(winner_of=prev.battle_id(3 * i + k)) for k in range(3))
            number += 1
            battles.append(DrawnBattle(stage.battle_id(i), stage.key, i, number, seats,
                                       nxt.battle_id(i // 3) if nxt else None,
                                       i % 3 if nxt else None))
    return Draw(seed, plan, tuple(battles), tuple(seeds))


_plan = plan
