"""The draw: the stages of section 3 for every field, the team rule in every qualification
round, the lot, seeds, feeding, reproducibility, and logs drawn by the earlier rules."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from appliance.rules.protocol import Command, Refused, fold
from appliance.rules.tournament import game
from appliance.rules.tournament import stages as st
from appliance.rules.tournament.draw import Draw, Infeasible, audit, draw, spread
from appliance.rules.tournament.entries import Entry


def field(teams: list[int], ratings: list[float | None] | None = None) -> list[Entry]:
    ratings = ratings or [None] * len(teams)
    return [Entry(f"P{i}", f"T{t}", "", ratings[i]) for i, t in enumerate(teams)]


def trees(d: Draw) -> dict[int, tuple[str, int]]:
    """Each entry's first-stage seat: the root of the tree of battles it plays before the
    bracket (followed through `feeds`, independently of the draw's own bookkeeping)."""
    by = {b.id: b for b in d.battles}
    first = d.plan.first.key
    out: dict[int, tuple[str, int]] = {}
    for b in d.battles:
        for seat, s in enumerate(b.seats):
            if s.entry is None:
                continue
            assert s.entry not in out, f"entry {s.entry} drawn twice"
            if b.stage == first:
                out[s.entry] = (b.id, seat)
                continue
            x = b
            while by[x.feeds].stage != first:  # type: ignore[index]
                x = by[x.feeds]  # type: ignore[index]
            out[s.entry] = (x.feeds, x.feeds_seat)  # type: ignore[assignment]
    return out


def expected_rounds(n: int) -> int:
    if n <= 81:
        return 0 if n in (2, 3, 9, 27, 81) else 1
    return math.ceil(math.log(n / 81, 3) - 1e-12)


def check(d: Draw, entries: list[Entry]) -> None:
    n = len(entries)
    plan = d.plan
    seat_of = trees(d)
    assert sorted(seat_of) == list(range(n))  # every entry placed exactly once
    keys = [s.key for s in plan.stages]
    early = [s for s in plan.stages if st.before_bracket(s.key)]
    rounds = expected_rounds(n)
    assert len(early) == rounds
    if n > 81:
        assert plan.bracket == 81 and keys[len(early)] == "1/27"
        assert keys[:rounds] == (["qualification"] if rounds == 1 else
                                 [f"qualification {r}" for r in range(1, rounds + 1)])
        assert all(s.themes == 4 for s in early)
    else:
        assert plan.bracket == st.default_bracket(n) and "1/81" not in keys
        assert all(s.key == "preliminary" for s in early)
    first = plan.first
    seats_first = [s for b in d.battles if b.stage == first.key for s in b.seats]
    assert len(seats_first) == plan.bracket
    if n > 81:
        assert len(seats_first) == 81
    # the rounds reduce the field to exactly the bracket: each battle of k removes k - 1
    before = [b for b in d.battles if st.before_bracket(b.stage)]
    assert all(len(b.seats) in (2, 3) for b in before)
    assert n - sum(len(b.seats) - 1 for b in before) == plan.bracket
    # at most one battle of 2 per tree, and only where its size is even
    per_tree = Counter(seat_of.values())
    twos = sum(len(b.seats) == 2 for b in before)
    assert twos == sum(1 for k in per_tree.values() if k > 1 and k % 2 == 0)
    # no two team-mates can meet before the 1/27: they are in different trees
    if n > 81:
        pairs = Counter((seat_of[i], entries[i].team) for i in range(n))
        assert max(pairs.values()) == 1
    # feeding: every early battle feeds one seat of a later round or of the first stage
    by = {b.id: b for b in d.battles}
    order = {s.key: i for i, s in enumerate(plan.stages)}
    for b in d.battles:
        if b.feeds is None:
            assert b.id == "F"
            continue
        target = by[b.feeds]
        assert target.seats[b.feeds_seat].winner_of == b.id  # type: ignore[index]
        assert order[target.stage] > order[b.stage]
    assert [b.number for b in d.battles] == list(range(1, len(d.battles) + 1))
    # themes: 12 in the final, 6 in a battle whose winner goes to the final, else 4
    for s in plan.stages:
        for b in (x for x in d.battles if x.stage == s.key):
            assert s.themes == (12 if b.id == "F" else 6 if b.feeds == "F" else 4)


def random_teams(n: int, biggest: int, rng: random.Random) -> list[int]:
    teams: list[int] = []
    t = 0
    while len(teams) < n:
        teams += [t] * min(rng.randint(1, biggest), n - len(teams))
        t += 1
    rng.shuffle(teams)
    return teams


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=hs.integers(2, 2000), biggest=hs.sampled_from([1, 3, 10, 40, 81, 82, 120]),
       shape_seed=hs.integers(0, 2**32), seed=hs.integers(0, 2**63 - 1))
def test_every_field_draws_the_stages_of_section_3(n: int, biggest: int, shape_seed: int,
                                                  seed: int) -> None:
    teams = random_teams(n, biggest, random.Random(shape_seed))
    entries = field(teams)
    top, count = Counter(teams).most_common(1)[0]
    if n > 81 and count > 81:  # infeasible exactly when a team exceeds the 81 trees
        with pytest.raises(Infeasible) as err:
            draw(entries, seed)
        assert err.value.team == f"T{top}" or Counter(teams)[int(err.value.team[1:])] == count
        assert err.value.team in err.value.message_en and err.value.team in err.value.message_ru
        assert str(count) in err.value.message_en and err.value.code == "infeasible"
        return
    d = draw(entries, seed)
    check(d, entries)
    assert draw(entries, seed) == d  # the same seed, the same bracket


@settings(max_examples=25, deadline=None)
@given(n=hs.integers(82, 1200), extra=hs.integers(0, 5), seed=hs.integers(0, 10**9))
def test_a_team_of_81_always_draws_and_of_82_never(n: int, extra: int, seed: int) -> None:
    big = min(81 + (extra > 2), n)
    teams = [0] * big + [1 + i % 100 for i in range(n - big)]
    entries = field(teams)
    if big > 81:
        with pytest.raises(Infeasible) as err:
            draw(entries, seed)
        assert err.value.team == "T0" and "82" in err.value.message_en
        assert "«T0»" in err.value.message_ru
    else:
        check(draw(entries, seed), entries)


def test_two_clubs_of_forty_draw_a_small_field() -> None:
    """80 entries from two clubs: no qualification below 82, so the draw never refuses;
    the preliminary battles keep the clubs apart where they can (a battle of 3 from two
    clubs must hold two of one)."""
    entries = field([0] * 40 + [1] * 40)
    d = draw(entries, 3)
    check(d, entries)
    prelim = [b for b in d.battles if b.stage == "preliminary"]
    assert len(prelim) == 27
    two = next(b for b in prelim if len(b.seats) == 2)
    assert {entries[s.entry].team for s in two.seats} == {"T0", "T1"}  # type: ignore[index]
    for b in prelim:
        assert len({entries[s.entry].team for s in b.seats}) == 2  # type: ignore[index]


def test_byes_are_uniform_by_lot() -> None:
    """Without a seeded draw a bye into the 1/27 is a matter of lot alone: over 400 draws of
    100 entries (71 byes each) in teams of one to four, every entry's count of byes is
    binomial(400, 0.71); a chi-square over the entries stays well inside its 99.9 %
    bound (fixed seeds: the test is exact, not flaky), and neither the list order nor a
    team's size shifts the rate."""
    rng = random.Random(23)
    teams = random_teams(100, 4, rng)
    ratings: list[float | None] = [2000.0 - i if i < 27 else None for i in range(100)]
    entries = field(teams, ratings)
    draws = 400
    byes: Counter[int] = Counter()
    for seed in range(draws):
        d = draw(entries, seed)
        for b in d.battles:
            if b.stage == "1/27":
                byes.update(s.entry for s in b.seats if s.entry is not None)
    p = 71 / 100
    mean, var = draws * p, draws * p * (1 - p)
    chi2 = sum((byes[i] - mean) ** 2 / var for i in range(100))
    assert chi2 < 148.2, chi2  # 99.9 % of chi-square with 99 degrees of freedom
    rated = sum(byes[i] for i in range(27)) / (27 * draws)
    assert abs(rated - p) < 0.04  # ratings give no bye unless asked
    size = Counter(teams)
    big = [i for i in range(100) if size[teams[i]] >= 3]
    assert abs(sum(byes[i] for i in big) / (len(big) * draws) - p) < 0.04


def test_a_seeded_draw_gives_byes_and_spreads_the_seeds() -> None:
    n = 100
    ratings: list[float | None] = [float(1000 - i) if i < 27 else None for i in range(n)]
    entries = field([i % 30 for i in range(n)], ratings)
    d = draw(entries, 11, seeded=True)
    check(d, entries)
    assert d.seeded and d.seeds == tuple(range(27))
    first = [b for b in d.battles if b.stage == "1/27"]
    for rank, e in enumerate(d.seeds):
        b = first[spread(rank, 27)]
        assert b.seats[0].entry == e  # a bye, in its spread place
    assert len({spread(r, 27) // 9 for r in range(3)}) == 3
    assert len({spread(r, 27) // 3 for r in range(9)}) == 9
    plain = draw(entries, 11)
    assert not plain.seeded and plain.seeds == ()


@pytest.mark.parametrize(("n", "stages", "byes"), [
    (2, [("final", 1, 12)], 0),
    (3, [("final", 1, 12)], 0),
    (5, [("preliminary", 1, 6), ("final", 1, 12)], 2),
    (8, [("preliminary", 3, 6), ("final", 1, 12)], 0),
    (28, [("preliminary", 1, 4), ("1/9", 9, 4), ("1/3", 3, 6), ("final", 1, 12)], 26),
    (80, [("preliminary", 27, 4), ("1/9", 9, 4), ("1/3", 3, 6), ("final", 1, 12)], 0),
    (81, [("1/27", 27, 4), ("1/9", 9, 4), ("1/3", 3, 6), ("final", 1, 12)], 0),
    (100, [("qualification", 10, 4), ("1/27", 27, 4), ("1/9", 9, 4), ("1/3", 3, 6),
           ("final", 1, 12)], 71),
    (243, [("qualification", 81, 4), ("1/27", 27, 4), ("1/9", 9, 4), ("1/3", 3, 6),
           ("final", 1, 12)], 0),
    (244, [("qualification 1", 1, 4), ("qualification 2", 81, 4), ("1/27", 27, 4),
           ("1/9", 9, 4), ("1/3", 3, 6), ("final", 1, 12)], 0),
    (729, [("qualification 1", 243, 4), ("qualification 2", 81, 4), ("1/27", 27, 4),
           ("1/9", 9, 4), ("1/3", 3, 6), ("final", 1, 12)], 0),
    (1000, [("qualification 1", 136, 4), ("qualification 2", 243, 4),
            ("qualification 3", 81, 4), ("1/27", 27, 4), ("1/9", 9, 4), ("1/3", 3, 6),
            ("final", 1, 12)], 0),
])
def test_the_worked_examples_of_the_docs(n: int, stages: list[tuple[str, int, int]],
                                         byes: int) -> None:
    entries = field(list(range(n)))
    d = draw(entries, 1)
    check(d, entries)
    assert [(s.key, s.battles, s.themes) for s in d.plan.stages] == stages
    assert d.plan.byes == byes
    planned = st.plan(n)
    assert [(s.key, sorted(s.sizes)) for s in planned.stages] == [
        (s.key, sorted(s.sizes)) for s in d.plan.stages]
    assert planned.byes == byes


def test_battles_of_two_only_where_the_count_needs_them() -> None:
    assert Counter(st.plan(100).stages[0].sizes) == {3: 9, 2: 1}
    assert Counter(st.plan(244).stages[0].sizes) == {2: 1}
    # a team of 81 and one of 19 need 19 trees of two: 19 battles of 2, 62 byes
    p = st.plan(100, team_sizes=[81, 19])
    assert Counter(p.stages[0].sizes) == {2: 19} and p.byes == 62
    entries = field([0] * 81 + [1] * 19)
    d = draw(entries, 5)
    check(d, entries)
    assert Counter(d.plan.stages[0].sizes) == {2: 19}


def test_the_bracket_is_81_above_81_and_smaller_only_for_a_small_field() -> None:
    with pytest.raises(Refused) as err:
        st.plan(300, 243)
    assert err.value.code == "bad_bracket" and "1/27" in err.value.message_en
    p = st.plan(81, 27)
    assert p.stages[0].key == "preliminary" and p.stages[0].battles == 27 and p.byes == 0
    with pytest.raises(Refused):
        st.plan(80, 9)  # one round of battles of 3 reaches at most 27 from 80
    with pytest.raises(Refused):
        st.plan(50, 10)


def test_a_field_of_one_is_refused() -> None:
    with pytest.raises(Refused) as err:
        draw(field([0]), 1)
    assert "2" in err.value.message_ru and "entries" in err.value.message_en


def test_the_draw_reproduces_across_runs_from_the_seed() -> None:
    entries = field([i % 40 for i in range(500)])
    d = draw(entries, 2026)
    again = draw(list(entries), 2026)
    assert d.public([e.name for e in entries]) == again.public([e.name for e in entries])
    assert draw(entries, 2027).public([e.name for e in entries]) != d.public(
        [e.name for e in entries])


def test_the_public_json_of_a_later_round() -> None:
    """A battle of round 2 lists null for a seat fed by round 1 and the entry's name for a
    bye into round 2; a round-1 battle feeds the round-2 battle."""
    entries = field(list(range(244)))
    doc = draw(entries, 8).public([e.name for e in entries])
    assert [s["name"] for s in doc["stages"]][:3] == ["qualification 1", "qualification 2",
                                                      "1/27"]
    (q1,) = doc["stages"][0]["battles"]
    assert q1["id"] == "Q1.1" and len(q1["players"]) == 2 and None not in q1["players"]
    fed = next(b for b in doc["stages"][1]["battles"] if b["id"] == q1["feeds"])
    assert fed["players"].count(None) == 1 and len(fed["players"]) == 3
    assert all(b["feeds"].startswith("27.") for b in doc["stages"][1]["battles"])


def _logged(d: Draw, ids: list[int]) -> dict:  # type: ignore[type-arg]
    out = {"seed": d.seed, "bracket": d.plan.bracket, "seeded": d.seeded,
           "stages": [{"key": s.key, "themes": s.themes, "sizes": list(s.sizes)}
                      for s in d.plan.stages], "battles": []}
    for b in d.battles:
        j = b.to_json()
        for s in j["seats"]:
            if s["entry"] is not None:
                s["entry"] = ids[s["entry"]]
        out["battles"].append(j)
    return out


def test_an_audit_finds_a_tampered_bracket() -> None:
    entries = field([i % 5 for i in range(300)])
    ids = list(range(101, 401))
    logged = _logged(draw(entries, 99), ids)
    assert audit(entries, ids, logged) == []
    a, b = logged["battles"][0]["seats"][0], logged["battles"][1]["seats"][0]
    a["entry"], b["entry"] = b["entry"], a["entry"]
    assert len(audit(entries, ids, logged)) == 2


def test_a_log_drawn_by_the_earlier_rules_replays_with_its_stage_names() -> None:
    """A ``drawn`` event of the earlier rules (243 entries: a «1/81»; no ``stages``) folds
    into its own stages and audits against the earlier draw."""
    from appliance.rules.tournament import legacy

    entries = field([i % 9 for i in range(243)])
    old = legacy.draw(entries, 5)
    ids = list(range(1, 244))
    data = {"seed": 5, "entries": 243, "bracket": old.plan.bracket, "threes": 0,
            "seeds": [], "battles": _logged(old, ids)["battles"]}
    s = game.initial({})
    s = fold(game, s, game.decide(s, Command("import_entries", 0, {
        "entries": [{"name": e.name, "team": e.team} for e in entries]})))
    from appliance.rules.protocol import Event
    s = game.evolve(s, Event("drawn", 0, data))
    assert s.plan is not None and [x.key for x in s.plan.stages] == [
        "1/81", "1/27", "1/9", "1/3", "final"]
    assert s.plan.stages[0].label_ru == "1/81 финала" and s.plan.byes == 0
    assert audit(entries, ids, data) == []
