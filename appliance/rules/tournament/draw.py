"""The draw («жеребьёвка»): the whole bracket by lot, before the first battle (3.3).

**Shape and trees.** Each seat of the bracket's first stage (the 81 of the 1/27 above 81
entries) is the root of a tree of battles before the bracket; `appliance.rules.tournament.stages`
says how many entries each tree holds and how a tree splits into rounds. The draw deals the
entries into the trees and places the trees on the seats.

**The team rule** (3.3): no two players of one team in a qualification battle, in any round.
As the whole bracket is fixed in advance and anyone may win, team-mates must be in different
trees: then they cannot meet before the 1/27. A deal exists exactly when no team has more
players than there are trees (81) — by the Gale–Ryser condition for a 0-1 team × tree matrix
(row sums the team sizes, column sums the tree sizes): for every ``j`` the ``j`` largest
teams must fit in ``Σ min(k, j)``, which for the even split is ``min(81·j, n)``. The deal is
Ryser's greedy: teams largest first, each into the trees with the most room left (ties by
lot), which always succeeds when the condition holds; players of one-player teams fill
the rest. In preliminary battles of a small field (81 entries or fewer) the same deal keeps
the rule where it can and never refuses: the regulation's rule binds only a qualification.

**Lot.** Everything random comes from one `random.Random(seed)` and only through its
``random()`` method, whose sequence Python guarantees across versions for the same seed, so
anyone can reproduce and audit a draw from the seed and the entry list in its order. After
the deal, random swaps of two entries that keep the rule mix the trees — a symmetric chain,
so who gets a bye (a tree of one) or a small tree is by lot, not by team or list order — then
every tree's players are shuffled into its battles and the trees onto the seats.

**Seeded draw** (``seeded``: not in the regulation, off by default, recorded in the draw
event): entries with a rating, best first, at most one per battle of the first bracket stage,
are swapped into byes where the team rule allows and spread by reversing the base-3 digits of
their rank: seeds 1–3 in different thirds of the bracket, 1–9 in different ninths.

Winners move on by a fixed rule: battle *i* of a bracket stage feeds battle ⌊i/3⌋ of the next,
seat *i* mod 3; a battle before the bracket feeds one named seat of the next battle of its tree
(a later round, or the bracket's first stage).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from appliance.rules.protocol import Refused
from appliance.rules.tournament import stages as st
from appliance.rules.tournament.entries import Entry, key

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
    seeded: bool = False  # a seeded draw by rating (not in the regulation)

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


def draw(entries: Sequence[Entry], seed: int, bracket: int | None = None,
         seeded: bool = False) -> Draw:
    """Draw the whole bracket for `entries` (in their order) with the lot `seed`."""
    n = len(entries)
    b = st.check_bracket(n, bracket)
    lot = Lot(seed)
    teams = [key(e.team) for e in entries]
    strict = n > st.MAIN  # a qualification: the team rule may refuse the draw
    counts = Counter(teams)
    if strict:
        _refuse_big_team(entries, teams, counts)
    rounds = st.rounds_needed(n, b)
    trees = st.shape(n, b, list(counts.values())) if rounds else [1] * n
    columns = _deal(teams, trees, lot)
    _mix(columns, teams, lot)
    seeds = _seeds(entries, b, lot) if seeded else []
    if seeds:
        _seeds_to_byes(columns, seeds, teams, strict)
    for col in columns:
        lot.shuffle(col)
    return _assemble(seed, n, b, rounds, lot, columns, seeds, seeded)


def _refuse_big_team(entries: Sequence[Entry], teams: list[str], counts: Counter[str]) -> None:
    top = max(counts, key=lambda t: (counts[t], t))
    c = counts[top]
    if c <= st.MAIN:
        return
    name = next(e.team for e, t in zip(entries, teams, strict=True) if t == top)
    raise Infeasible(
        name,
        f"Команда «{name}»: {c} игроков, а мест в 1/27 финала {st.MAIN}. Игроки одной команды"
        f" не могут встретиться в квалификации, поэтому за каждое из {st.MAIN} мест 1/27"
        f" финала играет не больше одного игрока команды.",
        f"Team '{name}' has {c} players but the 1/27 final has {st.MAIN} places. Players of"
        f" one team may not meet in qualification, so at most one player of a team plays for"
        f" each of the {st.MAIN} places of the 1/27 final.")


def _deal(teams: list[str], trees: list[int], lot: Lot) -> list[list[int]]:
    """Entries into trees of the given sizes, team-mates in different trees (Ryser's greedy:
    teams largest first, each into the trees with the most room left, ties by lot); a team
    larger than the trees with room (a small field only) takes a tree twice where it must."""
    room = list(trees)
    columns: list[list[int]] = [[] for _ in trees]
    by_team: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(teams):
        by_team[t].append(i)
    groups = [g for g in by_team.values() if len(g) > 1]
    singles = [g[0] for g in by_team.values() if len(g) == 1]
    lot.shuffle(groups)
    groups.sort(key=len, reverse=True)
    order = list(range(len(trees)))
    for g in groups:
        lot.shuffle(order)
        order.sort(key=lambda c: -room[c])
        open_ = [c for c in order if room[c] > 0]
        for k, p in enumerate(g):
            c = open_[k] if k < len(open_) else max(order, key=lambda c: room[c])
            columns[c].append(p)
            room[c] -= 1
    lot.shuffle(singles)
    it = iter(singles)
    for c, r in enumerate(room):
        columns[c].extend(next(it) for _ in range(r))
    return columns


def _mix(columns: list[list[int]], teams: list[str], lot: Lot) -> None:
    """Random swaps of two entries of different trees that bring no team into a tree it is
    already in: a symmetric chain over the rule-keeping deals of this shape."""
    where = {p: c for c, col in enumerate(columns) for p in col}
    held = [Counter(teams[p] for p in col) for col in columns]
    players = list(where)
    n = len(players)
    if len(columns) < 2:
        return
    for _ in range(SWAPS_PER_PLAYER * n):
        p1 = players[lot.below(n)]
        p2 = players[lot.below(n)]
        c1, c2 = where[p1], where[p2]
        if c1 == c2:
            continue
        t1, t2 = teams[p1], teams[p2]
        if t1 != t2 and (held[c1][t2] or held[c2][t1]):
            continue
        i1, i2 = columns[c1].index(p1), columns[c2].index(p2)
        columns[c1][i1], columns[c2][i2] = p2, p1
        where[p1], where[p2] = c2, c1
        held[c1][t1] -= 1
        held[c1][t2] += 1
        held[c2][t2] -= 1
        held[c2][t1] += 1


def _seeds(entries: Sequence[Entry], bracket: int, lot: Lot) -> list[int]:
    rated = [i for i, e in enumerate(entries) if e.rating is not None]
    if bracket < 3 or not rated:
        return []
    lot.shuffle(rated)  # equal ratings: by lot
    rated.sort(key=lambda i: -(entries[i].rating or 0.0))
    return rated[:bracket // 3]


def _seeds_to_byes(columns: list[list[int]], seeds: list[int], teams: list[str],
                   strict: bool) -> None:
    """Each seed, best first, swapped into a bye (a tree of one) whose player may take the
    seed's place in its tree under the team rule."""
    seeded = set(seeds)
    where = {p: c for c, col in enumerate(columns) for p in col}
    byes = [c for c, col in enumerate(columns) if len(col) == 1]
    for s in seeds:
        cs = where[s]
        if len(columns[cs]) == 1:
            continue
        others = {teams[p] for p in columns[cs] if p != s}
        for cb in byes:
            x = columns[cb][0]
            if x in seeded or (strict and teams[x] in others):
                continue
            columns[cs][columns[cs].index(s)] = x
            columns[cb][0] = s
            where[s], where[x] = cb, cs
            break


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


@dataclass
class _Node:
    """A battle before the bracket while the draw builds it: its round and its seats (an
    entry index, or the battle below)."""

    round: int
    parts: list[int | _Node]
    index: int = 0


def _tree(players: list[int], depth: int, rounds: list[list[_Node]]) -> int | _Node:
    if len(players) == 1:
        return players[0]
    sizes = st.split(len(players), depth)
    node = _Node(depth, [])
    node.index = len(rounds[depth - 1])
    rounds[depth - 1].append(node)
    at = 0
    for k in sizes:
        node.parts.append(_tree(players[at:at + k], depth - 1, rounds))
        at += k
    return node


def _assemble(seed: int, n: int, b: int, rounds: int, lot: Lot, columns: list[list[int]],
              seeds: list[int], seeded: bool) -> Draw:
    main = st.bracket_stages(b)
    first = main[0]
    # the trees onto the seats of the first stage: seeds at their spread places, the rest
    # by lot
    where = {p: c for c, col in enumerate(columns) for p in col}
    fixed: dict[int, int] = {}
    for rank, s in enumerate(seeds):
        c = where[s]
        pos = 3 * spread(rank, first.battles)
        if c not in fixed.values() and pos not in fixed:
            fixed[pos] = c
    rest = [c for c in range(len(columns)) if c not in fixed.values()]
    lot.shuffle(rest)
    it = iter(rest)
    at_seat = [fixed[pos] if pos in fixed else next(it) for pos in range(b)]
    early: list[list[_Node]] = [[] for _ in range(rounds)]
    roots = [_tree(columns[c], rounds, early) for c in at_seat]
    if b < st.MAIN:
        keys = [st.PRELIMINARY] * rounds
    else:
        keys = [st.qualification_key(r + 1, rounds) for r in range(rounds)]
    sized = [st.Stage(keys[r], 0, tuple(len(x.parts) for x in early[r]))
             for r in range(rounds) if early[r]]
    stages = tuple(st._themed(sized + [st.Stage(s.key, 0, s.sizes) for s in main]))
    stage_of = {s.key: s for s in stages}

    def node_id(x: _Node) -> str:
        return stage_of[keys[x.round - 1]].battle_id(x.index)

    battles: list[DrawnBattle] = []
    number = 0
    parent: dict[int, tuple[str, int]] = {}  # id(node) -> (battle it feeds, seat)
    for pos, root in enumerate(roots):
        if isinstance(root, _Node):
            parent[id(root)] = (first.battle_id(pos // 3), pos % 3)
    for r in range(rounds):
        for x in early[r]:
            for seat, part in enumerate(x.parts):
                if isinstance(part, _Node):
                    parent[id(part)] = (node_id(x), seat)
    for r in range(rounds):  # playing order: round 1 (the deepest battles) first
        for x in early[r]:
            number += 1
            seats = tuple(Source(winner_of=node_id(p)) if isinstance(p, _Node)
                          else Source(entry=p) for p in x.parts)
            feeds, feeds_seat = parent[id(x)]
            battles.append(DrawnBattle(node_id(x), keys[r], x.index, number, seats, feeds,
                                       feeds_seat))
    for si, stage in enumerate(main):
        nxt = main[si + 1] if si + 1 < len(main) else None
        for i in range(stage.battles):
            if si == 0:
                seats = tuple(Source(winner_of=node_id(x)) if isinstance(x, _Node)
                              else Source(entry=x) for x in roots[3 * i:3 * i + 3])
            else:
                prev = main[si - 1]
                seats = tuple(Source(winner_of=prev.battle_id(3 * i + k)) for k in range(3))
            number += 1
            battles.append(DrawnBattle(stage.battle_id(i), stage.key, i, number, seats,
                                       nxt.battle_id(i // 3) if nxt else None,
                                       i % 3 if nxt else None))
    byes = sum(1 for x in roots if not isinstance(x, _Node)) if rounds else 0
    plan = st.Plan(n, b, stages, byes)
    return Draw(seed, plan, tuple(battles), tuple(seeds), seeded)


def audit(entries: Sequence[Entry], ids: Sequence[int], drawn: dict[str, Any]) -> list[str]:
    """Re-run a logged draw (the ``drawn`` event's data) from its seed over the entries as
    they were (in entry order, with their ids) and list every difference; empty: the
    logged bracket is exactly what the lot gives. A draw logged by the earlier rules (no
    ``stages`` in the event) is re-run by those rules."""
    try:
        if "stages" in drawn:
            again = draw(entries, drawn["seed"], drawn["bracket"], bool(drawn.get("seeded")))
        else:
            from appliance.rules.tournament import legacy
            again = legacy.draw(entries, drawn["seed"], drawn["bracket"])
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
