"""The draw («жеребьёвка»): the whole bracket by lot, before the first battle (3.3).

**The team rule.** No two players of one team may meet in a qualification battle. Whether a
draw exists depends only on how many players each team sends into qualification: with ``q``
qualification battles, a team can have at most ``q`` players there (one per battle), and that
is also enough. Proof: deal the qualification players into the battles round-robin, team
after team (largest first), battles of 3 first so that the third pass fills exactly them;
a team's players are consecutive in the dealing order, and ``c ≤ q`` consecutive positions
fall in ``c`` different battles. (Equivalently, the Gale–Ryser condition for a 0-1 team ×
battle matrix with battles of 2 and 3 reduces to "no team above ``q``".)

So the draw chooses the byes: a team with ``c > q`` players needs ``c - q`` of them to have
byes, and a draw exists exactly when those needs fit in the byes there are. As every battle
and every bye gives one bracket place, ``q + byes = B`` whatever the split, and one team is
impossible only when it has more players than the bracket has places. Turning a battle of 3
into two battles of 2 adds a battle and removes a bye, which helps when two or more teams
are over ``q``; the draw tries every split from the most battles of 3 down and takes the
first that works, so it finds a draw whenever one exists with battles of 2 and 3, and
otherwise names the team (or teams) that make it impossible, with the numbers.

**Seeds.** Entries with a rating are seeds, best first, at most one per battle of the first
bracket stage. They get byes first (as long as the team rule still fits) and are spread by
reversing the base-3 digits of their rank: seeds 1–3 land in different thirds of the
bracket (they can meet only in the final), seeds 1–9 in different ninths, and so on.

**Lot.** Everything random comes from one `random.Random(seed)` and only through its
``random()`` method, whose sequence Python guarantees across versions for the same seed, so
anyone can reproduce and audit a draw from the seed and the entry list in its order. After
the constructive deal the qualification battles are mixed by random swaps that keep the team
rule, so the draw is not visibly "sorted by team".

Winners move on by a fixed rule: battle *i* of a stage feeds battle ⌊i/3⌋ of the next, seat
*i* mod 3; each qualification battle feeds one named seat of the first bracket stage.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from appliance.rules.protocol import Refused
from appliance.tournament import stages as st
from appliance.tournament.entries import Entry, key

SWAPS_PER_PLAYER = 4


class Infeasible(Refused):
    """No draw keeps the team rule; `team` is the team that makes it impossible."""

    def __init__(self, team: str, ru: str, en: str):
        super().__init__(ru, en, "infeasible")
        self.team = team


@dataclass(frozen=True, slots=True)
class Source:
    """Where a seat's player comes from: an entry (index), or the winner of a battle."""

    entry: int | None = None
    winner_of: str | None = None


@dataclass(frozen=True, slots=True)
class DrawnBattle:
    id: str
    stage: str  # the stage key
    index: int  # within its stage
    number: int  # «Бой N»: 1, 2, ... in playing order across the tournament
    seats: tuple[Source, ...]
    feeds: str | None  # the battle its winner goes to (None: the final)
    feeds_seat: int | None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "stage": self.stage, "index": self.index, "number": self.number,
                "seats": [{"entry": s.entry, "winner_of": s.winner_of} for s in self.seats],
                "feeds": self.feeds, "feeds_seat": self.feeds_seat}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> DrawnBattle:
        return cls(d["id"], d["stage"], d["index"], d["number"],
                   tuple(Source(s["entry"], s["winner_of"]) for s in d["seats"]),
                   d["feeds"], d["feeds_seat"])


@dataclass(frozen=True, slots=True)
class Draw:
    seed: int
    plan: st.Plan
    battles: tuple[DrawnBattle, ...]  # in playing order
    seeds: tuple[int, ...] = ()  # seeded entries, best first

    def battle(self, battle_id: str) -> DrawnBattle:
        for b in self.battles:
            if b.id == battle_id:
                return b
        raise KeyError(battle_id)

    def public(self, names: Sequence[str]) -> dict[str, Any]:
        """The shape `svoyak tournament draw --json` prints (docs/tournament.md)."""
        out = []
        for stage in self.plan.stages:
            battles = [b for b in self.battles if b.stage == stage.key]
            out.append({"name": stage.key, "themes": stage.themes, "battles": [
                {"id": b.id,
                 "players": [None if s.entry is None else names[s.entry] for s in b.seats],
                 "feeds": b.feeds} for b in battles]})
        return {"seed": self.seed, "bracket": self.plan.bracket, "stages": out}


class Lot:
    """Random choices from `random()` alone (see the module docstring)."""

    def __init__(self, seed: int):
        self._r = random.Random(seed)

    def below(self, n: int) -> int:
        return min(int(self._r.random() * n), n - 1)

    def shuffle(self, items: list[Any]) -> None:
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def draw(entries: Sequence[Entry], seed: int, bracket: int | None = None) -> Draw:
    """Draw the whole bracket for `entries` (in their order) with the lot `seed`."""
    n = len(entries)
    base = st.plan(n, bracket)
    lot = Lot(seed)
    teams = [key(e.team) for e in entries]
    seeds = _seeds(entries, base, lot)
    if base.qualification is None:
        return _assemble(seed, base, lot, seeds, list(range(n)), [], seeds_with_bye=seeds)
    plan, byes, qual_players = _choose_byes(entries, teams, base, seeds, lot)
    qual = _deal(qual_players, teams, plan.qualification.sizes, lot)  # type: ignore[union-attr]
    bye_seeds = [s for s in seeds if s in byes]
    return _assemble(seed, plan, lot, seeds, byes, qual, seeds_with_bye=bye_seeds)


def _seeds(entries: Sequence[Entry], plan: st.Plan, lot: Lot) -> list[int]:
    first = plan.stages[1] if plan.qualification else plan.stages[0]
    rated = [i for i, e in enumerate(entries) if e.rating is not None]
    if plan.bracket < 3 or not rated:
        return []
    lot.shuffle(rated)  # equal ratings: by lot
    rated.sort(key=lambda i: -(entries[i].rating or 0.0))
    return rated[:first.battles]


def _need(counts: Counter[str], q: int) -> int:
    return sum(max(c - q, 0) for c in counts.values())


def _choose_byes(entries: Sequence[Entry], teams: list[str], base: st.Plan, seeds: list[int],
                 lot: Lot) -> tuple[st.Plan, list[int], list[int]]:
    n, b = len(entries), base.bracket
    counts = Counter(teams)
    lo, hi = st.threes_range(n, b)
    excess = n - b
    chosen = None
    for a in range(hi, lo - 1, -1):
        q, byes = excess - a, n - (2 * excess - a)
        if _need(counts, q) <= byes:
            chosen = a
            break
    if chosen is None:
        raise _infeasible(entries, teams, counts, n, b, lo, hi)
    plan = st.plan(n, b, chosen)
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


def spread(rank: int, battles: int) -> int:
    """The first-stage battle of seed `rank` (0-based): its base-3 digits reversed."""
    digits, m = 0, battles
    while m > 1:
        digits += 1
        m //= 3
    out = 0
    for _ in range(digits):
        out = out * 3 + rank % 3
        rank //= 3
    return out


def _assemble(seed: int, plan: st.Plan, lot: Lot, seeds: list[int], byes: list[int],
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
            battles.append(DrawnBattle(q_ids[qi], st.QUALIFICATION, k, number,
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


def audit(entries: Sequence[Entry], ids: Sequence[int], drawn: dict[str, Any]) -> list[str]:
    """Re-run a logged draw (the ``drawn`` event's data) from its seed over the entries as
    they were (in entry order, with their ids) and list every difference; empty: the
    logged bracket is exactly what the lot gives."""
    try:
        again = draw(entries, drawn["seed"], drawn["bracket"])
    except Refused as r:
        return [f"the draw cannot be repeated: {r.message_en}"]
    problems = []
    logged = {b["id"]: b for b in drawn["battles"]}
    for b in again.battles:
        j = b.to_json()
        for s in j["seats"]:
            if s["entry"] is not None:
                s["entry"] = ids[s["entry"]]
        if logged.get(b.id) != j:
            problems.append(f"battle {b.id}: logged {logged.get(b.id)}, the lot gives {j}")
    if len(logged) != len(again.battles):
        problems.append(f"{len(logged)} battles logged, the lot gives {len(again.battles)}")
    return problems
