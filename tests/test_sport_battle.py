"""The sport battle engine: one test per rule of the digest's sport section and per decision
documented in appliance/rules/battle/game.py, and property tests over random legal play."""

from __future__ import annotations

import copy
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from appliance.packages import Package, Question, Round, Theme, jsonform
from appliance.rules import arbiter
from appliance.rules.battle import game as b
from appliance.rules.protocol import Command, Refused, fold

MS = 1_000_000
S = 1000 * MS


def themes(count: int = 1, red: tuple[int, ...] = (), prefix: str = "T") -> list[dict]:
    return [{"name": f"{prefix}{i}", "red": i in red,
             "questions": [{"text": f"Вопрос {prefix}{i}.{n}", "answer": f"ОТВЕТ-{prefix}{i}-{n}",
                            "comment": f"коммент {prefix}{i}.{n}"} for n in range(5)]}
            for i in range(count)]


def new(players: int = 3, count: int = 1, red: tuple[int, ...] = (), extra: int = 0,
        **settings_: float) -> b.Battle:
    return b.initial({"players": ["Аня", "Борис", "Вера"][:players],
                      "themes": themes(count, red),
                      "extra_themes": themes(extra, prefix="X"),
                      "settings": settings_})


class Game:
    """A tiny driver: apply commands, keep every event, fail loudly on a refusal."""

    def __init__(self, state: b.Battle):
        self.s = state
        self.events: list = []

    def do(self, type_: str, t: int, by: str = "host", at_ns: int | None = None, **args):
        ev = b.decide(self.s, Command(type_, t, args, by, at_ns))
        self.s = fold(b, self.s, ev)
        self.events += ev
        return [e.type for e in ev]

    def press(self, player: int, t: int, at_ns: int | None = None):
        return self.do("press", t, by="button", at_ns=at_ns, player=player)

    def refused(self, type_: str, t: int, code: str | None = None, by: str = "host", **args):
        before = self.s
        with pytest.raises(Refused) as e:
            b.decide(self.s, Command(type_, t, args, by))
        assert e.value.message_ru and e.value.message_en
        if code:
            assert e.value.code == code
        assert self.s is before
        return e.value

    def win(self, player: int, t: int):
        """Announce-free helper: `player` presses at `t` and the settle window passes."""
        self.press(player, t)
        self.do("timeout", t + 5 * MS, by="loop")
        assert self.s.phase == b.ANSWERING and self.hw["answering"] == player

    @property
    def hw(self):
        return b.view(self.s, "hardware")

    @property
    def host(self):
        return b.view(self.s, "host")


def play_question(g: Game, t: int, winner: int | None, verdict: str = "right") -> int:
    """Announce, read, one press, judge; returns the time after it."""
    g.do("announce", t)
    g.do("reading_done", t + S)
    if winner is None:
        g.do("timeout", t + 8 * S, by="loop")
    else:
        g.win(winner, t + 2 * S)
        g.do("judge", t + 3 * S, verdict=verdict)
        if verdict == "wrong" and g.s.phase != b.CLOSED:
            g.do("timeout", t + 20 * S, by="loop")  # the others let the window pass
    assert g.s.phase == b.CLOSED
    return t + 30 * S


# -- setup -----------------------------------------------------------------------------------
@pytest.mark.parametrize("count", [0, 1, 4])
def test_a_battle_has_two_or_three_players(count):
    with pytest.raises(Refused) as e:
        b.initial({"players": ["x"] * count, "themes": themes()})
    assert e.value.code == "bad_setup"
    assert new(2).seats == 2 and new(3).seats == 3


def test_everyone_starts_at_zero():
    assert new(3).scores() == [0, 0, 0]


@pytest.mark.parametrize("setup", [
    {"players": ["a", "b"], "themes": []},
    {"players": ["a", "b"], "themes": [{"name": "T", "questions": [{"text": "q"}] * 4}]},
    {"players": ["a", "b"], "themes": [{"questions": []}]},
    {"players": ["a", "b"], "themes": themes(), "settings": {"window_s": "seven"}},
    {"players": ["a", "b"], "themes": themes(), "settings": {"settle_ms": -1}},
    {"players": ["a", ""], "themes": themes()},
    {"players": ["a", "b"], "package": "../etc/passwd"},
    {"players": ["a", "b"], "package": "no-such-package"},
    "not a dict",
])
def test_bad_setup_is_refused_with_both_languages(setup):
    with pytest.raises(Refused) as e:
        b.initial(setup)
    assert e.value.code == "bad_setup" and e.value.message_ru and e.value.message_en


def test_themes_without_questions_are_read_from_paper():
    s = b.initial({"players": ["a", "b"], "themes": [{"name": "Бумага"}]})
    assert s.themes[0].question(3) == b.QuestionSpec()


def test_settings_window_settle_bounce_are_taken_from_setup():
    s = new(window_s=3, settle_ms=2, bounce_ms=10, stage="1/9")
    assert s.settings == b.BattleSettings(3 * S, 2 * MS, 10 * MS, "1/9")
    assert s.settings.arbiter.false_start_ns is None  # sport: no false starts


def _write_package(tmp_path, monkeypatch) -> None:
    def theme(name, comment="", price=10):
        return Theme(name, [Question(price * (n + 1), right=[f"R-{name}-{n}"], comment="c")
                            for n in range(5)], comment=comment)
    pkg = Package("test-sport", [
        Round("Бой", [theme("A"), theme("B", "Красная тема"), theme("C", price=20),
                      theme("D"), theme("E"), theme("F")]),
        Round("Дополнительные темы", [theme("X1"), theme("X2")]),
        Round("Финал", [theme("Z")], final=True),  # not a battle's theme
    ])
    pkg.rounds[0].themes.append(Theme("Short", pkg.rounds[0].themes[0].questions[:4]))
    (tmp_path / "test-sport.json").write_text(jsonform.dumps(pkg), encoding="utf-8")
    monkeypatch.setattr(jsonform, "DATA_DIR", tmp_path)


def test_package_setup_takes_themes_extra_themes_and_red_flags(tmp_path, monkeypatch):
    _write_package(tmp_path, monkeypatch)
    s = b.initial({"players": ["a", "b", "c"], "package": "test-sport"})
    assert [t.name for t in s.themes] == ["A", "B", "C", "D", "E", "F"]
    assert [t.red for t in s.themes] == [False, True, True, False, False, False]
    assert [t.name for t in s.extra_pool] == ["X1", "X2"]
    assert all(t.extra for t in s.extra_pool)
    assert s.themes[0].questions[2].answer == "R-A-2"
    # values come from the position and the red flag, not from the package's prices
    assert [s.themes[1].value(n) for n in range(5)] == [20, 40, 60, 80, 100]


def test_a_package_object_in_the_setup_plays_like_a_named_one(tmp_path, monkeypatch):
    _write_package(tmp_path, monkeypatch)
    named = b.initial({"players": ["a", "b"], "package": "test-sport"})
    as_object = jsonform.to_dict(jsonform.demo("test-sport"))
    inline = b.initial({"players": ["a", "b"], "package": json.loads(json.dumps(as_object))})
    assert inline == named
    with pytest.raises(Refused) as e:
        b.initial({"players": ["a", "b"], "package": {"format": "nonsense"}})
    assert e.value.code == "bad_setup"


def test_package_themes_are_cut_to_the_stage(tmp_path, monkeypatch):
    _write_package(tmp_path, monkeypatch)
    s = b.initial({"players": ["a", "b"], "package": "test-sport",
                   "settings": {"stage": "qualification"}})
    assert len(s.themes) == 4
    s = b.initial({"players": ["a", "b"], "package": "test-sport",
                   "settings": {"stage": "1/3"}})
    assert len(s.themes) == 6


def test_a_stage_battle_with_the_wrong_number_of_themes_is_refused(tmp_path, monkeypatch):
    """3.4: a final of 4 themes (or any stage short of its count) is not played short."""
    _write_package(tmp_path, monkeypatch)
    with pytest.raises(Refused) as e:  # the package has 6 themes, the final needs 12
        b.initial({"players": ["a", "b"], "package": "test-sport",
                   "settings": {"stage": "final"}})
    assert e.value.code == "bad_setup" and "12" in e.value.message_en
    assert "12" in e.value.message_ru and "3.4" in e.value.message_ru
    with pytest.raises(Refused) as e:  # a count asked for: exactly that
        b.initial({"players": ["a", "b"], "themes": themes(3),
                   "settings": {"stage": "qualification 2", "themes": 4}})
    assert "4" in e.value.message_en
    assert len(b.initial({"players": ["a", "b"], "themes": themes(4),
                          "settings": {"stage": "qualification 2", "themes": 4}}).themes) == 4
    twelve = themes(12, red=tuple(range(6, 12)))
    with pytest.raises(Refused) as e:  # the final's red themes must be marked
        b.initial({"players": ["a", "b"], "themes": themes(12),
                   "settings": {"stage": "final", "themes": 12}})
    assert "red" in e.value.message_en and "красн" in e.value.message_ru
    final = b.initial({"players": ["a", "b"], "themes": twelve,
                       "settings": {"stage": "final", "themes": 12}})
    assert [t.red for t in final.themes] == [False] * 6 + [True] * 6
    assert final.themes[6].value(4) == 100
    with pytest.raises(Refused):
        b.initial({"players": ["a", "b"], "themes": twelve,
                   "settings": {"stage": "final", "themes": 12, "red_themes": 4}})


@pytest.mark.skipif(not (jsonform.DATA_DIR / "demo-sport.json").exists(),
                    reason="demo-sport.json not written yet")
def test_the_demo_sport_package_gives_a_playable_battle():
    s = b.initial({"players": ["a", "b", "c"], "package": "demo-sport",
                   "settings": {"stage": "qualification"}})
    assert len(s.themes) == 4 and len(s.extra_pool) >= 1
    assert all(len(t.questions) == 5 and t.questions[0].text for t in s.themes)


# -- the course of a question ----------------------------------------------------------------
def test_themes_in_order_values_10_to_50_in_order_and_red_themes_doubled():
    g = Game(new(2, count=3, red=(1,)))
    t = 0
    values = []
    for _ in range(15):
        g.do("announce", t)
        values.append((g.s.played[-1].theme, g.s.played[-1].value))
        g.do("reading_done", t + S)
        g.do("timeout", t + 8 * S, by="loop")
        g.do("next", t + 9 * S)
        t += 10 * S
    assert values == ([(0, v) for v in (10, 20, 30, 40, 50)]
                      + [(1, v) for v in (20, 40, 60, 80, 100)]
                      + [(2, v) for v in (10, 20, 30, 40, 50)])
    assert g.s.phase == b.TIE  # nobody scored, no extra themes


def test_press_before_the_value_is_announced_is_ignored():
    g = Game(new())
    g.refused("press", 1 * S, "buttons_off", by="button", player=0)
    assert not g.hw["lamp"]


def test_buttons_are_armed_when_the_value_is_announced():
    g = Game(new())
    g.do("announce", 10 * S)
    assert g.hw == {"lamp": True, "answering": None, "queue": [], "false_starts": 0}
    g.win(2, 10 * S + 300 * MS)


def test_there_is_no_false_start_in_sport():
    """A press stamped before the announcement (delivered after it) is only recorded as
    early; the player is not blocked and wins with the next press."""
    g = Game(new())
    g.do("announce", 10 * S)
    g.press(0, 9 * S, at_ns=10 * S + MS)
    assert g.s.played[-1].race.presses[-1].status == arbiter.Status.EARLY
    assert b.next_deadline(g.s) is None
    g.win(0, 10 * S + 100 * MS)
    assert g.hw["false_starts"] == 0


def test_press_before_reading_finished_flags_the_short_question_word():
    g = Game(new())
    g.do("announce", 0)
    assert not g.host["short_word"]
    assert g.press(1, 2 * S) == ["press", "short_word"]
    assert g.host["short_word"] is True and g.host["reading_done"] is False
    g.do("timeout", 2 * S + 5 * MS, by="loop")
    assert g.host["short_word"] is True and g.host["answering"] == 1
    assert b.summary(g.s)["questions"][0]["short_word"] is True


def test_press_after_reading_finished_does_not_flag_the_short_word():
    g = Game(new())
    g.do("announce", 0)
    g.do("reading_done", 3 * S)
    assert g.press(1, 4 * S) == ["press"]
    assert g.host["short_word"] is False


def test_the_window_starts_when_reading_is_finished_not_before():
    g = Game(new())
    g.do("announce", 0)
    assert b.next_deadline(g.s) is None
    assert g.do("timeout", 60 * S, by="loop") == []  # no window yet: nothing closes
    g.do("reading_done", 61 * S)
    assert b.next_deadline(g.s) == 68 * S
    assert g.host["window_ends_ns"] == 68 * S


def test_nobody_presses_within_seven_seconds_after_reading_and_the_question_is_over():
    g = Game(new())
    g.do("announce", 0)
    g.do("reading_done", 5 * S)
    assert g.do("timeout", 12 * S - 1, by="loop") == []  # an early wake-up does nothing
    assert g.s.phase == b.OPEN
    assert g.do("timeout", 12 * S, by="loop") == ["question_closed"]
    assert g.s.phase == b.CLOSED and g.s.played[-1].closed == "no_press"
    assert g.s.scores() == [0, 0, 0]
    g.refused("press", 12 * S + 1, "buttons_off", by="button", player=0)


def test_the_window_length_is_a_setting():
    g = Game(new(window_s=3))
    g.do("announce", 0)
    g.do("reading_done", S)
    assert b.next_deadline(g.s) == 4 * S


def test_a_press_inside_the_window_beats_it():
    g = Game(new())
    g.do("announce", 0)
    g.do("reading_done", S)
    g.press(2, 8 * S - MS)  # 1 ms before the window ends
    assert b.next_deadline(g.s) == 8 * S + 4 * MS  # the settle deadline now
    g.do("timeout", 8 * S + 4 * MS, by="loop")
    assert g.hw["answering"] == 2


def test_winner_is_committed_only_after_the_settle_window():
    g = Game(new())
    g.do("announce", 0)
    g.press(1, S + 3 * MS)
    assert b.next_deadline(g.s) == S + 8 * MS
    g.refused("judge", S + 4 * MS, "nobody_answers", verdict="right")
    # an earlier-stamped press still in flight arrives inside the window and wins
    g.press(0, S + 1 * MS, at_ns=S + 6 * MS)
    assert b.next_deadline(g.s) == S + 6 * MS
    assert g.do("timeout", S + 6 * MS, by="loop") == ["answerer"]
    assert g.hw["answering"] == 0
    race = g.host["race"]
    assert [(r["player"], r["status"]) for r in race] == [(0, "winner"), (1, "beaten")]
    assert race[0]["ms_after_lamp"] == pytest.approx(1001.0)


def test_the_settle_window_is_a_setting():
    g = Game(new(settle_ms=20))
    g.do("announce", 0)
    g.press(1, S)
    assert b.next_deadline(g.s) == S + 20 * MS


def test_a_passed_deadline_is_handled_before_a_late_command():
    """The loop may not have fed the timeout yet: the command still meets the state the
    timeout would have made (and a script needs no timeout lines)."""
    g = Game(new())
    g.do("announce", 0)
    g.press(1, S)
    assert g.do("judge", 2 * S, verdict="right") == ["answerer", "judged", "question_closed"]
    assert g.s.scores() == [0, 10, 0]


def test_right_answer_adds_the_value_and_closes_the_question():
    g = Game(new(count=1))
    g.do("announce", 0)
    g.win(0, S)
    assert g.do("judge", 2 * S, verdict="right") == ["judged", "question_closed"]
    assert g.s.scores() == [10, 0, 0] and g.s.phase == b.CLOSED
    g.refused("press", 2 * S + 1, "buttons_off", by="button", player=1)


def test_wrong_answer_subtracts_the_value_and_scores_may_go_negative():
    g = Game(new())
    t = play_question(g, 0, 0, "wrong")
    g.do("next", t)
    play_question(g, t + S, 0, "wrong")
    assert g.s.scores() == [-30, 0, 0]


def test_red_values_are_scored_doubled():
    g = Game(new(count=1, red=(0,)))
    play_question(g, 0, 1, "right")
    assert g.s.scores() == [0, 20, 0]


# -- the queue -------------------------------------------------------------------------------
def test_presses_before_the_signal_reset_do_not_queue():
    g = Game(new())
    g.do("announce", 0)
    g.win(0, S)
    g.press(1, 2 * S)
    assert g.s.played[-1].race.presses[-1].status == arbiter.Status.LATE
    assert g.hw["queue"] == [] and g.hw["lamp"] is False


def test_after_the_signal_reset_presses_queue_in_tick_order_not_arrival_order():
    g = Game(new())
    g.do("announce", 0)
    g.win(0, S)
    assert "reset_signal" in [a.type for a in b.legal_actions(g.s)]
    g.do("reset_signal", 2 * S)
    assert g.hw["lamp"] is True  # pressing fixes a place in the queue now
    g.press(1, 3 * S + 2 * MS, at_ns=3 * S + 3 * MS)
    g.press(2, 3 * S + 1 * MS, at_ns=3 * S + 4 * MS)
    assert g.hw["queue"] == [2, 1]
    assert g.hw["answering"] == 0
    g.refused("reset_signal", 4 * S, "queue_open")


def test_queued_players_must_answer_in_order_and_no_answer_is_judged_wrong():
    g = Game(new())
    g.do("announce", 0)
    g.do("reading_done", S // 2)
    g.win(0, S)
    g.do("reset_signal", 2 * S)
    g.press(2, 3 * S)
    g.press(1, 3 * S + MS)
    assert g.do("judge", 4 * S, verdict="wrong") == ["judged", "queue_next"]
    assert g.hw["answering"] == 2 and g.hw["queue"] == [1]
    assert g.host["mandatory"] is True
    assert b.next_deadline(g.s) is None  # a queued player has no window: they must answer
    g.do("judge", 5 * S, verdict="wrong")  # no answer given: the host judges it wrong
    assert g.hw["answering"] == 1 and g.host["mandatory"] is True
    assert g.do("judge", 6 * S, verdict="wrong") == ["judged", "question_closed"]
    assert g.s.played[-1].closed == "all_wrong"
    assert g.s.scores() == [-10, -10, -10]
    assert b.summary(g.s)["questions"][0]["answered"] == [0, 2, 1]


def test_a_right_answer_from_the_queue_closes_the_question():
    g = Game(new())
    g.do("announce", 0)
    g.win(0, S)
    g.do("reset_signal", 2 * S)
    g.press(1, 3 * S)
    g.do("judge", 4 * S, verdict="wrong")
    assert g.do("judge", 5 * S, verdict="right") == ["judged", "question_closed"]
    assert g.s.scores() == [-10, 10, 0]


def test_a_player_may_still_queue_while_a_queued_player_answers():
    g = Game(new())
    g.do("announce", 0)
    g.win(0, S)
    g.do("reset_signal", 2 * S)
    g.press(1, 3 * S)
    g.do("judge", 4 * S, verdict="wrong")
    g.press(2, 4 * S + 500 * MS)
    assert g.hw["queue"] == [2]


def test_empty_queue_after_wrong_answer_rearms_the_others_with_a_fresh_window():
    """Decision: with nobody queued, the players who have not answered may press again;
    if the reading was finished a new 7 s window runs from the judgement."""
    g = Game(new())
    g.do("announce", 0)
    g.do("reading_done", S)
    g.win(0, 2 * S)
    assert g.do("judge", 3 * S, verdict="wrong") == ["judged", "rearmed"]
    assert g.s.phase == b.OPEN and g.hw["lamp"] is True
    assert b.next_deadline(g.s) == 10 * S
    g.press(0, 4 * S)  # already answered: no effect
    assert g.s.played[-1].race.presses[-1].status == arbiter.Status.ANSWERED
    assert b.next_deadline(g.s) == 10 * S
    g.win(2, 5 * S)
    # the race measures the new press from the re-arm
    assert g.host["race"][-1]["ms_after_lamp"] == pytest.approx(2000.0)


def test_rearm_before_reading_finished_has_no_window_until_it_is():
    g = Game(new())
    g.do("announce", 0)
    g.win(0, S)
    g.do("judge", 2 * S, verdict="wrong")
    assert g.s.phase == b.OPEN and b.next_deadline(g.s) is None
    g.do("reading_done", 3 * S)
    assert b.next_deadline(g.s) == 10 * S


def test_reading_done_while_answering_starts_the_window_only_on_rearm():
    g = Game(new())
    g.do("announce", 0)
    g.win(0, S)
    g.do("reading_done", 2 * S)
    assert b.next_deadline(g.s) is None
    g.do("judge", 9 * S, verdict="wrong")
    assert b.next_deadline(g.s) == 16 * S


def test_after_everyone_answered_wrong_the_question_closes():
    g = Game(new(2))
    g.do("announce", 0)
    g.win(0, S)
    g.do("judge", 2 * S, verdict="wrong")
    g.win(1, 3 * S)
    assert g.do("judge", 4 * S, verdict="wrong") == ["judged", "question_closed"]
    assert g.s.scores() == [-10, -10]


def test_reset_signal_needs_an_answerer_and_someone_left_to_queue():
    g = Game(new(2))
    g.do("announce", 0)
    g.refused("reset_signal", S, "nobody_answers")
    g.win(0, S)
    g.do("judge", 2 * S, verdict="wrong")
    g.win(1, 3 * S)
    g.refused("reset_signal", 4 * S, "queue_empty")


# -- refusals --------------------------------------------------------------------------------
def test_judging_when_nobody_answers_is_refused():
    g = Game(new())
    g.refused("judge", 0, "nobody_answers", verdict="right")
    g.do("announce", 0)
    g.refused("judge", S, "nobody_answers", verdict="right")


@pytest.mark.parametrize("player", [3, -1, "0", None, True, 1.0])
def test_a_press_from_an_unknown_seat_is_refused(player):
    g = Game(new())
    g.do("announce", 0)
    g.refused("press", S, "unknown_player", by="button", player=player)


@pytest.mark.parametrize("score", ["50", None, True, float("nan"), float("inf"), 10.5, 10**9])
def test_a_score_that_is_not_a_number_is_refused(score):
    g = Game(new())
    g.refused("set_score", 0, "not_a_number", player=0, score=score)


@pytest.mark.parametrize("verdict", ["yes", None, True])
def test_a_bad_verdict_is_refused(verdict):
    g = Game(new())
    g.do("announce", 0)
    g.win(0, S)
    g.refused("judge", 2 * S, "bad_verdict", verdict=verdict)


def test_out_of_phase_commands_are_refused():
    g = Game(new())
    g.refused("next", 0, "out_of_phase")
    g.refused("reading_done", 0, "out_of_phase")
    g.refused("add_theme", 0, "out_of_phase", name="x")
    g.do("announce", 0)
    g.refused("announce", S, "out_of_phase")
    g.refused("next", S, "out_of_phase")
    g.do("reading_done", S)
    g.refused("reading_done", 2 * S, "out_of_phase")
    g.refused("frobnicate", 2 * S, "unknown_command")
    g.refused("undo", 2 * S, "nothing_to_undo")
    g.refused("rejudge", 2 * S, "unknown_judgement", ref=0, verdict="right")


# -- end of battle and extra themes ----------------------------------------------------------
def test_the_highest_score_wins():
    g = Game(new(3, count=1))
    t = 0
    for n in range(5):
        t = play_question(g, t, n % 2, "right")
        if n < 4:
            g.do("next", t)
    assert g.do("next", t) == ["battle_finished"]
    assert g.s.phase == b.FINISHED and g.s.winner == 0
    out = b.summary(g.s)
    assert out["scores"] == [90, 60, 0] and out["places"] == [1, 2, 3] and out["finished"]
    assert [a.type for a in b.legal_actions(g.s)] == ["undo", "rejudge", "set_score"]


def _tied_battle(players: int, extra: int, scorers: tuple[int, ...]) -> Game:
    """One theme; the listed players each answer one question right so that they tie."""
    g = Game(new(players, count=1, extra=extra))
    t = 0
    for n in range(5):
        # 10+40 and 20+30: seats 0 and 1 tie at 50; seat 2 answers 50 when it is a scorer
        who = {0: 0, 3: 0, 1: 1, 2: 1, 4: 2}.get(n)
        t = play_question(g, t, who if who in scorers else None, "right")
        g.do("next", t)
        t += S
    return g


def test_a_tie_for_first_sends_only_the_tied_players_into_an_extra_theme():
    g = _tied_battle(3, extra=2, scorers=(0, 1))
    assert g.s.scores() == [50, 50, 0]
    ev = g.events[-1]
    assert ev.type == "extra_theme" and ev.data["players"] == [0, 1]
    assert g.s.phase == b.READY and g.s.themes[-1].name == "X0" and g.s.themes[-1].extra
    assert [t.name for t in g.s.extra_pool] == ["X1"]  # one theme at a time
    g.do("announce", 1000 * S)
    g.refused("press", 1001 * S, "not_playing", by="button", player=2)
    press = next(a for a in b.legal_actions(g.s) if a.type == "press")
    assert [c["value"] for c in press.args["player"]] == [0, 1]
    assert b.view(g.s, "player:2")["may_press"] is False
    assert b.view(g.s, "player:1")["may_press"] is True


def test_extra_themes_go_on_one_at_a_time_until_exactly_one_leads():
    g = _tied_battle(3, extra=2, scorers=(0, 1))
    t = 2000 * S
    for _ in range(5):  # the first extra theme: nobody scores, still tied
        t = play_question(g, t, None)
        g.do("next", t)
    assert g.events[-1].type == "extra_theme" and g.s.themes[-1].name == "X1"
    t = play_question(g, t, 1, "right")  # seat 1 leads after the 10
    for _ in range(4):
        g.do("next", t)
        assert g.s.phase == b.READY  # not decided before the theme ends
        t = play_question(g, t, None)
    assert g.do("next", t) == ["battle_finished"]
    out = b.summary(g.s)
    assert out["winner"] == 1 and out["scores"] == [50, 60, 0]
    assert out["places"] == [2, 1, 3]


def test_a_player_beaten_in_the_tie_break_still_ranks_above_the_others():
    g = _tied_battle(3, extra=1, scorers=(0, 1, 2))  # 50, 50, 50: a three-way tie
    t = 2000 * S
    t = play_question(g, t, 0, "wrong")   # seat 0: 40
    g.do("next", t)
    t = play_question(g, t, 1, "right")   # seat 1: 70
    for _ in range(3):
        g.do("next", t)
        t = play_question(g, t, None)
    g.do("next", t)
    out = b.summary(g.s)
    assert out["scores"] == [40, 70, 50] and out["winner"] == 1
    assert out["places"] == [3, 1, 2]


def test_still_tied_players_narrow_to_those_tied_for_first():
    """Decision: each extra theme is played by the players tied for first when it starts."""
    g = _tied_battle(3, extra=0, scorers=(0, 1, 2))
    assert g.s.phase == b.TIE and g.host["tied"] == [0, 1, 2]
    g.do("add_theme", 2000 * S, name="Реки", red=False)
    assert g.events[-1].data["players"] == [0, 1, 2]
    t = play_question(g, 2001 * S, 2, "wrong")
    for _ in range(4):
        g.do("next", t)
        t = play_question(g, t, None)
    assert g.do("next", t) == ["tie"]
    assert g.host["tied"] == [0, 1]
    g.do("add_theme", t + S, name="  ", red=True)  # a blank name gets a default one
    assert g.s.contenders == (0, 1) and g.s.themes[-1].red
    assert g.s.themes[-1].name.startswith("Дополнительная тема")


def test_a_tie_without_extra_themes_waits_for_the_host_to_add_one():
    g = _tied_battle(2, extra=0, scorers=(0, 1))
    assert g.s.phase == b.TIE
    acts = {a.type: a for a in b.legal_actions(g.s)}
    assert "add_theme" in acts and "next" not in acts
    assert acts["add_theme"].args["name"] == {"type": "text"}
    g.refused("next", 1000 * S, "tie_needs_theme")
    g.refused("add_theme", 1000 * S, "bad_theme", name=5)
    g.refused("add_theme", 1000 * S, "bad_theme", name="Реки", red="yes")
    qs = [{"text": f"q{n}", "answer": f"a{n}"} for n in range(5)]
    g.do("add_theme", 1000 * S, name="Реки", questions=qs)
    assert g.s.phase == b.READY and g.s.themes[-1].questions[4].answer == "a4"


def test_a_correction_that_breaks_a_tie_lets_next_finish_the_battle():
    g = _tied_battle(2, extra=0, scorers=(0, 1))
    g.do("set_score", 1000 * S, player=1, score=60)
    assert g.do("next", 1001 * S) == ["battle_finished"] and g.s.winner == 1


def test_a_correction_after_the_end_that_makes_a_tie_reopens_the_battle():
    g = Game(new(2, count=1, extra=1))
    t = 0
    for n in range(5):
        t = play_question(g, t, 0 if n == 0 else None)
        g.do("next", t)
    assert g.s.phase == b.FINISHED and g.s.winner == 0
    g.do("rejudge", t, ref=0, verdict="wrong")
    g.do("set_score", t, player=1, score=-10)
    assert "next" in [a.type for a in b.legal_actions(g.s)]
    assert g.do("next", t + S) == ["extra_theme"]
    assert g.s.winner is None and g.s.contenders == (0, 1)


# -- host corrections ------------------------------------------------------------------------
def test_undo_restores_the_state_before_the_last_judgement():
    g = Game(new())
    g.do("announce", 0)
    g.win(0, S)
    g.do("reset_signal", 2 * S)
    g.press(1, 3 * S)
    before = g.s
    g.do("judge", 4 * S, verdict="wrong")
    g.do("judge", 5 * S, verdict="right")
    assert g.s.scores() == [-10, 10, 0]
    g.do("undo", 6 * S)
    assert g.s.scores() == [-10, 0, 0] and g.hw["answering"] == 1
    g.do("undo", 7 * S)
    assert g.s == before and g.hw["answering"] == 0 and g.hw["queue"] == [1]
    g.refused("undo", 8 * S, "nothing_to_undo")


def test_undo_also_takes_back_the_next_question():
    g = Game(new())
    t = play_question(g, 0, 2, "right")
    g.do("next", t)
    g.do("announce", t + S)
    g.do("undo", t + 2 * S)
    assert g.s.phase == b.ANSWERING and g.s.scores() == [0, 0, 0] and len(g.s.played) == 1


def test_undo_of_a_window_close_gives_a_fresh_window():
    g = Game(new())
    g.do("announce", 0)
    g.do("reading_done", S)
    g.do("timeout", 8 * S, by="loop")
    assert g.s.phase == b.CLOSED
    g.do("undo", 20 * S)
    assert g.s.phase == b.OPEN and b.next_deadline(g.s) == 27 * S
    g.win(1, 21 * S)


def test_rejudge_replaces_an_earlier_judgement():
    g = Game(new())
    t = play_question(g, 0, 0, "wrong")
    g.do("next", t)
    play_question(g, t, 1, "right")
    assert g.s.scores() == [-10, 20, 0]
    g.do("rejudge", t + 100 * S, ref=0, verdict="right")
    assert g.s.scores() == [10, 20, 0]
    q = b.summary(g.s)["questions"][0]
    assert q["judgements"] == [{"ref": 0, "player": 0, "verdict": "right", "points": 10,
                               "voided": False}]
    g.refused("rejudge", t, "unknown_judgement", ref=2, verdict="right")
    g.refused("rejudge", t, "bad_verdict", ref=1, verdict="maybe")
    g.do("undo", t + 101 * S)
    assert g.s.scores() == [-10, 20, 0]


def test_set_score_is_kept_as_a_correction_on_top_of_judged_values():
    g = Game(new())
    play_question(g, 0, 0, "right")
    g.do("set_score", 40 * S, player=0, score=35)
    assert g.s.scores() == [35, 0, 0]
    g.do("rejudge", 41 * S, ref=0, verdict="wrong")  # the correction stays a difference
    assert g.s.scores() == [15, 0, 0]
    st_ = b.summary(g.s)["statistics"][0]
    assert st_["points"] == -10 and st_["corrections"] == 25
    g.do("undo", 42 * S)
    g.do("undo", 43 * S)
    assert g.s.scores() == [10, 0, 0]


# -- views and summary -----------------------------------------------------------------------
def _dump(x) -> str:
    return json.dumps(x, ensure_ascii=False)


def test_board_and_players_never_see_the_answer_before_the_question_is_closed():
    g = Game(new())
    answer = "ОТВЕТ-T0-0"
    roles = ["board", "player:0", "player:1", "player:2"]

    def check_hidden():
        for role in roles:
            text = _dump(b.view(g.s, role))
            assert answer not in text and "Вопрос T0.0" not in text, role
        assert answer in _dump(b.view(g.s, "host"))

    check_hidden()
    g.do("announce", 0)
    check_hidden()
    g.win(0, S)
    check_hidden()
    g.do("judge", 2 * S, verdict="wrong")
    check_hidden()
    g.do("reading_done", 3 * S)
    g.do("timeout", 10 * S, by="loop")
    for role in roles:
        assert b.view(g.s, role)["revealed"]["answer"] == answer
    g.do("next", 11 * S)
    # the next question's answer stays hidden while its predecessor's may still show
    for role in roles:
        assert "ОТВЕТ-T0-1" not in _dump(b.view(g.s, role))
    assert b.view(g.s, "host")["question"]["answer"] == "ОТВЕТ-T0-1"


def test_host_and_board_views_show_the_race():
    g = Game(new())
    g.do("announce", 0)
    g.press(1, 1200 * MS)
    g.press(2, 1203 * MS)
    g.do("timeout", 1205 * MS, by="loop")
    for role in ("host", "board"):
        race = b.view(g.s, role)["race"]
        assert [(r["player"], r["status"], r["ms_after_lamp"]) for r in race] == [
            (1, "winner", 1200.0), (2, "beaten", 1203.0)]


def test_the_hardware_view_has_exactly_the_agreed_keys():
    g = Game(new())
    assert b.view(g.s, "hardware") == {"lamp": False, "answering": None, "queue": [],
                                       "false_starts": 0}


def test_unknown_roles_are_refused():
    with pytest.raises(Refused):
        b.view(new(2), "player:2")
    with pytest.raises(Refused):
        b.view(new(2), "judge")


def test_the_legal_actions_in_answering():
    g = Game(new())
    g.do("announce", 0)
    g.win(0, S)
    assert "actions" not in g.host  # the web UI sends them once, beside the views
    types = [a.type for a in b.legal_actions(g.s)]
    assert types == ["reading_done", "press", "judge", "reset_signal", "remove_question",
                     "replace_question", "set_score"]


def test_summary_has_places_outcomes_and_reaction_statistics():
    g = Game(new())
    g.do("announce", 0)
    g.press(0, 1500 * MS)
    g.press(1, 1503 * MS)  # beaten: still a reaction
    g.do("timeout", 1505 * MS, by="loop")
    g.do("judge", 2 * S, verdict="wrong")  # re-armed at 2 s
    g.win(1, 2400 * MS)
    g.do("judge", 3 * S, verdict="right")
    g.do("next", 4 * S)
    g.do("announce", 10 * S)
    g.win(0, 10 * S + 900 * MS)
    g.do("judge", 12 * S, verdict="right")
    out = b.summary(g.s)
    assert out["players"] == ["Аня", "Борис", "Вера"]
    assert out["scores"] == [10, 10, 0] and out["places"] == [1, 1, 3]
    q0 = out["questions"][0]
    assert q0["theme"] == "T0" and q0["value"] == 10 and q0["answered"] == [0, 1]
    assert [j["verdict"] for j in q0["judgements"]] == ["wrong", "right"]
    assert q0["closed"] == "right" and len(q0["race"]) == 3
    s0, s1, s2 = out["statistics"]
    assert (s0["right"], s0["wrong"], s0["points"]) == (1, 1, 10)
    assert s0["reaction_ms"] == {"mean": pytest.approx(1200.0), "best": pytest.approx(900.0)}
    assert s1["reaction_ms"]["best"] == pytest.approx(400.0)  # from the re-arm
    assert s1["reaction_ms"]["mean"] == pytest.approx((1503 + 400) / 2)
    assert s2["presses"] == 0 and s2["reaction_ms"] == {"mean": None, "best": None}
    json.dumps(out)  # plain JSON


def test_the_event_log_folds_into_the_same_state():
    g = Game(new(2, count=1, extra=1))
    t = 0
    for n in range(5):
        t = play_question(g, t, n % 2, "right" if n != 2 else "wrong")
        g.do("next", t)
    g.do("undo", t)
    assert fold(b, new(2, count=1, extra=1), g.events) == g.s


# -- legal actions are exact -----------------------------------------------------------------
HOST_COMMANDS = {
    "announce": {}, "reading_done": {}, "reset_signal": {}, "next": {}, "undo": {},
    "judge": {"verdict": "right"}, "add_theme": {"name": "Тема"},
}


def _command(action, data, t: int, scores: list[int]) -> Command:
    args = {}
    for name, spec in action.args.items():
        if isinstance(spec, list):
            args[name] = data.draw(st.sampled_from([c["value"] for c in spec]))
        elif spec["type"] == "int":
            # another player's score now and then, so that ties (and tie-breaks) happen
            args[name] = data.draw(st.one_of(
                st.integers(max(spec["min"], -300), min(spec["max"], 300)),
                st.sampled_from(scores)))
        else:
            args[name] = data.draw(st.text(max_size=8))
    at_ns = None
    if action.type == "press":  # a press may be stamped a little before it arrives
        at_ns = t
        t -= data.draw(st.integers(0, 6 * MS))
    return Command(action.type, t, args, action.by, at_ns)


CORRECTIONS = {"undo", "rejudge", "set_score"}
STEP = st.one_of(st.integers(0, 8 * MS), st.integers(0, 9 * S))  # inside a settle window or not


class ScoreModel:
    """Scores kept independently from the events: judged values, rejudgements, set scores,
    undone by a stack of copies."""

    def __init__(self, seats: int):
        self.scores = [0] * seats
        self.judged: list[list] = []
        self.stack: list = []

    def push(self):
        self.stack.append(copy.deepcopy((self.scores, self.judged)))

    def apply(self, e) -> None:
        d = e.data
        if e.type == "judged":
            self.push()
            self.judged.append([d["player"], d["verdict"], d["value"]])
            self.scores[d["player"]] += d["value"] if d["verdict"] == "right" else -d["value"]
        elif e.type == "rejudged":
            self.push()
            player, old, value = self.judged[d["ref"]]
            sign = {"right": 1, "wrong": -1, "no_answer": -1, "void": 0}  # silence as wrong
            self.scores[player] += (sign[d["verdict"]] - sign[old]) * value
            self.judged[d["ref"]][1] = d["verdict"]
        elif e.type == "score_set":
            self.push()
            self.scores[d["player"]] = d["score"]
        elif e.type in ("question_removed", "question_replaced"):
            self.push()
            sign = {"right": 1, "wrong": -1, "no_answer": -1}
            for ref in d["refs"]:
                player, verdict, value = self.judged[ref]
                self.scores[player] -= sign[verdict] * value
                self.judged[ref] = [player, "void", 0]
        elif e.type == "question_closed" and d["reason"] == "no_press":
            self.push()
        elif e.type == "undone":
            self.scores, self.judged = self.stack.pop()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), players=st.integers(2, 3), count=st.integers(1, 2),
       red=st.booleans(), extra=st.integers(0, 1))
def test_random_legal_play_is_never_refused_and_scores_are_sums_of_judged_values(
        data, players, count, red, extra):
    setup = {"players": ["a", "b", "c"][:players], "themes": themes(count, (1,) if red else ()),
             "extra_themes": themes(extra, prefix="X")}
    state = b.initial(setup)
    start = state
    model = ScoreModel(players)
    log = []
    t = 0
    for _ in range(data.draw(st.integers(10, 120))):
        t += data.draw(STEP)
        deadline = b.next_deadline(state)
        if deadline is not None and deadline <= t:
            # what the loop does: wake at the deadline and feed a timeout
            cmd = Command("timeout", deadline, {}, "loop")
            t = deadline
        else:
            actions = b.legal_actions(state)
            listed = {a.type for a in actions}
            for type_, args in HOST_COMMANDS.items():  # exactness: unlisted means refused
                if type_ not in listed:
                    with pytest.raises(Refused):
                        b.decide(state, Command(type_, t, args))
            # mostly play on; now and then a correction (always listed) for undo to undo
            play = [a for a in actions if a.type not in CORRECTIONS]
            pool = play if play and data.draw(st.integers(0, 9)) else actions
            cmd = _command(data.draw(st.sampled_from(pool)), data, t, state.scores())
        events = b.decide(state, cmd)  # raises if a listed action is refused
        state = fold(b, state, events)
        log += events
        for e in events:
            model.apply(e)
            if e.type == "judged":
                i, number = state.played[-1].theme, state.played[-1].number
                # main themes: the setup's flag; extra themes: as the pool or the host gave it
                is_red = setup["themes"][i]["red"] if i < count else state.themes[i].red
                expected = (number + 1) * 10 * (2 if is_red else 1)
                assert e.data["value"] == expected
        out = b.summary(state)
        assert out["scores"] == model.scores == state.scores()
        for p in range(players):
            judged = sum(j["points"] for q in out["questions"] for j in q["judgements"]
                         if j["player"] == p)
            corrected = sum(c["points"] for c in out["corrections"] if c["player"] == p)
            assert out["scores"][p] == judged + corrected
            # the statistics table and the podium read the same figures
            row = out["statistics"][p]
            assert row["points"] == judged and row["corrections"] == corrected
            assert row["score"] == out["scores"][p] == row["points"] + row["corrections"]
            live = [j for q in out["questions"] for j in q["judgements"]
                    if j["player"] == p and not j["voided"]]
            assert row["right"] == sum(j["verdict"] == "right" for j in live)
            assert row["wrong"] == sum(j["verdict"] == "wrong" for j in live)
        assert b.view(state, "hardware")["false_starts"] == 0
    assert fold(b, start, log) == state
    places = b.summary(state)["places"]
    assert all(1 <= p <= players for p in places) and min(places) == 1
    assert not any(isinstance(v, float) and math.isnan(v) for v in b.summary(state)["scores"])


# -- the documented example ------------------------------------------------------------------
def test_the_tie_break_example_script_replays_to_the_scores_worked_out_by_hand(tmp_path):
    from pathlib import Path

    from appliance.runtime import replay
    from appliance.runtime.store import Store

    script = Path(__file__).resolve().parents[1] / "docs" / "examples" / "battle-tie.jsonl"
    with Store(tmp_path / "svoyak.db") as store:
        result = replay.run(script.read_text(encoding="utf-8").splitlines(), store,
                            strict=True)
        out = result.summary
    assert result.rejections == []
    anya = +20 - 40 + 50 - 10  # Q2 from the queue; Q4 wrong; Q5 right after an undo; extra 10
    boris = +10 - 20 + 40 + 10  # Q1 short word; Q2 wrong; Q4 after the re-arm; extra 10
    assert out["scores"] == [anya, boris] == [20, 40]
    assert out["winner"] == 1 and out["places"] == [2, 1] and out["finished"]
    q = out["questions"]
    values = (10, 20, 30, 40, 50)
    assert [(x["theme"], x["value"]) for x in q] == (
        [("Столицы", v) for v in values] + [("Реки", v) for v in values])
    assert [x["short_word"] for x in q][:6] == [True, False, False, False, False, True]
    assert [x["closed"] for x in q][:4] == ["right", "right", "no_press", "right"]
    assert [[(j["player"], j["verdict"]) for j in x["judgements"]] for x in q[:6]] == [
        [(1, "right")], [(1, "wrong"), (0, "right")], [], [(0, "wrong"), (1, "right")],
        [(0, "right")], [(0, "wrong"), (1, "right")]]


def test_the_protocol_page_quotes_the_example_script_as_it_is():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "protocol-battle.md").read_text(encoding="utf-8")
    quoted = page.split("```jsonl\n", 1)[1].split("```", 1)[0].splitlines()
    script = (root / "docs" / "examples" / "battle-tie.jsonl").read_text(encoding="utf-8")
    assert len(quoted) > 10 and script.splitlines()[:len(quoted)] == quoted
