"""The built-in demo packages have the shape the engines and `make run` rely on.

Counts are checked independently here, one by one, not through any importer.
"""

from collections import Counter

import pytest

from appliance.packages import bounds
from appliance.packages.jsonform import demo
from appliance.packages.model import Kind


@pytest.fixture(scope="module")
def tv():
    return demo("demo-tv")


@pytest.fixture(scope="module")
def sport():
    return demo("demo-sport")


def _kinds(rnd):
    return Counter(q.kind for t in rnd.themes for q in t.questions)


def test_tv_board_rounds(tv):
    assert tv.name == "Демо: Своя игра"
    assert len(tv.rounds) == 4
    assert [r.final for r in tv.rounds] == [False, False, False, True]
    for rnd, step in zip(tv.board_rounds, (100, 200, 300), strict=True):
        assert len(rnd.themes) == 6
        for theme in rnd.themes:
            assert [q.price for q in theme.questions] == [step * k for k in range(1, 6)]
    assert len({t.name for r in tv.board_rounds for t in r.themes}) == 18


def test_tv_final_round(tv):
    (final,) = tv.final_rounds
    assert len(final.themes) == 7
    assert len({t.name for t in final.themes}) == 7
    for theme in final.themes:
        assert len(theme.questions) == 1
        assert theme.questions[0].price == 0
        assert theme.questions[0].kind == Kind.NORMAL


def test_tv_special_questions_per_round(tv):
    r1, r2, r3 = tv.board_rounds
    assert _kinds(r1) == {Kind.NORMAL: 28, Kind.CAT: 1, Kind.AUCTION: 1}
    assert _kinds(r2) == {Kind.NORMAL: 27, Kind.CAT: 1, Kind.AUCTION: 1, Kind.NO_RISK: 1}
    assert _kinds(r3) == {Kind.NORMAL: 28, Kind.CAT: 1, Kind.AUCTION: 1}


def _cat(rnd):
    (cat,) = [q for t in rnd.themes for q in t.questions if q.kind == Kind.CAT]
    return cat


def test_tv_cats(tv):
    r1, r2, r3 = tv.board_rounds
    cats = [_cat(r) for r in (r1, r2, r3)]
    for q, rnd in zip(cats, (r1, r2, r3), strict=True):
        assert q.cat is not None and q.cat.theme
        assert q.cat.theme not in {t.name for t in rnd.themes}
        assert q.cat.may_keep is False
    # Round 1: any value of the round, by the round's step.
    p1 = cats[0].cat.price
    assert p1.fixed is None
    assert [v for v in range(0, 2000, 50) if p1.allows(v)] == [100, 200, 300, 400, 500]
    # Round 2: the receiver chooses the round's minimum or maximum.
    p2 = cats[1].cat.price
    assert p2.values == [200, 1000]
    assert p2.fixed is None
    # Round 3: one fixed value.
    p3 = cats[2].cat.price
    assert p3.fixed is not None and p3.allows(p3.fixed)
    assert p3.fixed in r3.prices


def test_tv_no_risk_doubles(tv):
    (q,) = [q for t in tv.rounds[1].themes for q in t.questions if q.kind == Kind.NO_RISK]
    assert q.factor == 2


def test_sport_shape(sport):
    assert sport.name == "Демо: спортивная своя игра"
    assert not sport.final_rounds
    names = [r.name for r in sport.rounds]
    assert names == ["Спорт", "Дополнительные темы", "Бои турнира, часть 1",
                     "Бои турнира, часть 2", "Финал: синие и красные"]
    assert len(sport.rounds[0].themes) == 4
    assert len(sport.rounds[1].themes) == 6
    # 60 themes for the tournament's battles, in two rounds: a round holds at most
    # bounds.MAX_THEMES, and the demo must import through admin like any package
    assert len(sport.rounds[2].themes) == len(sport.rounds[3].themes) == 30
    # the last round: 2 blue, then 6 red for a 12-theme final battle
    final = sport.rounds[4].themes
    assert len(final) == 8
    colours = ["красная" if "красная" in t.comment.lower() else
               "синяя" if "синяя" in t.comment.lower() else "?" for t in final]
    assert colours == ["синяя"] * 2 + ["красная"] * 6
    assert not any("красн" in t.comment.lower() for r in sport.rounds[:3] for t in r.themes)


def test_the_sport_demo_holds_a_27_player_tournament(sport):
    """9 battles of the 1/9 on 4 themes, 3 of the 1/3 on 6, the final on 12 (6 red): 66
    main themes, none twice, the red ones left for the final."""
    from appliance.rules.battle import game as engine

    main, extra = engine.package_themes(sport)
    assert len(main) >= 9 * 4 + 3 * 6 + 12 and len(extra) >= 6
    blue = [t for t in main if not t.red]
    assert len(blue) >= 9 * 4 + 3 * 6 + 6 and sum(t.red for t in main) == 6
    assert main.index(next(t for t in main if t.red)) >= 9 * 4 + 3 * 6  # reds come last
    for rnd in sport.rounds:
        for theme in rnd.themes:
            assert [q.price for q in theme.questions] == [10, 20, 30, 40, 50]
            assert {q.kind for q in theme.questions} == {Kind.NORMAL}
    all_names = [t.name for t in sport.all_themes()]
    assert len(all_names) == len(set(all_names))


def test_sport_questions_end_with_a_short_question_word(sport):
    # The host may read only the last sentence when someone presses early.
    for q in (q for t in sport.all_themes() for q in t.questions):
        last = q.text.rstrip().rsplit(". ", 1)[-1]
        assert last.endswith("?") and len(last.split()) <= 6, q.text


@pytest.mark.parametrize("name", ["demo-tv", "demo-sport"])
def test_every_question_is_complete_and_unique(name):
    package = demo(name)
    texts = []
    for theme in package.all_themes():
        assert theme.name.strip()
        for q in theme.questions:
            assert q.text.strip(), f"{theme.name} {q.price}: no text"
            assert q.right and all(a.strip() for a in q.right), f"{theme.name} {q.price}"
            assert len(set(q.right)) == len(q.right)
            texts.append(" ".join(q.text.lower().split()))
    duplicates = [t for t, n in Counter(texts).items() if n > 1]
    assert not duplicates


def test_the_demos_are_within_the_bounds_of_any_package(tv, sport):
    """A club may export a demo and upload it again through admin, where every package is
    checked against the bounds: the built-in ones must pass the same check."""
    bounds.check(tv, "demo-tv.json")
    bounds.check(sport, "demo-sport.json")
