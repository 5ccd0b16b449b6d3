"""Rule-sets, the board and who chooses; a normal question with lamp, false starts, re-arm."""

from __future__ import annotations

import pytest
from tvkit import MS, Driver, package, q, simple_round

from appliance.rules.protocol import Command, Refused
from appliance.rules.tv import game, presets


def setup(n=3, rounds=None, **kw):
    pkg = package(rounds or [simple_round(), simple_round((200, 400, 600, 800, 1000))],
                  final_themes=kw.pop("final_themes", 0))
    return {"players": [f"P{i}" for i in range(n)], "package": pkg, **kw}


# -- rule-sets --------------------------------------------------------------------------
def test_tv_preset_is_the_show():
    s = presets.TV
    assert (s.players_min, s.players_max, s.rounds, s.final) == (3, 3, 3, True)
    assert s.round_values == ((100, 200, 300, 400, 500), (200, 400, 600, 800, 1000),
                              (300, 600, 900, 1200, 1500))
    assert s.false_start_s == 2.0 and s.press_window_s is None


def test_club_preset_allows_two_to_four_and_overrides():
    s = presets.resolve("club", {"press_window_s": 7, "rounds": 1, "final": False})
    assert (s.players_min, s.players_max) == (2, 4)
    assert s.press_window_s == 7.0 and s.rounds == 1 and not s.final
    with pytest.raises(Refused):
        presets.resolve("club", {"no_such": 1})
    with pytest.raises(Refused):
        presets.resolve("galaxy")
    with pytest.raises(Refused):
        game.initial(setup(n=5, preset="club"))
    with pytest.raises(Refused):
        game.initial(setup(n=2))  # the TV preset is three players


def test_package_prices_win_and_plain_packages_take_preset_values():
    odd = package([[[q(10), q(20)]], [[q(0), q(0), q(0)]]])
    s = game.initial({"players": ["a", "b", "c"], "package": odd})
    assert [c.value for c in s.board.rounds[0].cells[0]] == [10, 20]
    assert [c.value for c in s.board.rounds[1].cells[0]] == [200, 400, 600]  # round 2 preset


def test_round_count_follows_the_preset_and_the_package():
    pkg = package([simple_round()] * 4)
    assert len(game.initial({"players": ["a", "b", "c"], "package": pkg}).board.rounds) == 3
    club = game.initial({"players": ["a", "b"], "package": pkg, "preset": "club"})
    assert len(club.board.rounds) == 4


# -- choosing ---------------------------------------------------------------------------
def test_host_picks_first_chooser_and_right_answer_passes_the_choice():
    d = Driver(setup())
    assert d.state.phase == "pick_chooser"
    d.refused("choose", theme=0, question=0)
    d.do("pick_chooser", player=1)
    assert d.state.chooser == 1
    d.normal(0, 0, (2, "right"))
    assert d.state.chooser == 2 and d.scores == [0, 0, 100]
    d.normal(0, 1)  # nobody answers: the same player chooses again
    assert d.state.chooser == 2
    d.normal(0, 2, (0, "wrong"), (1, "wrong"))
    assert d.state.chooser == 2 and d.scores == [-300, -300, 100]


def test_played_cells_are_gone_and_can_be_reopened():
    d = Driver(setup(first_chooser=0))
    d.normal(0, 0)
    e = d.refused("choose", theme=0, question=0)
    assert "уже сыгран" in e.message_ru and "already" in e.message_en
    d.refused("choose", theme=9, question=0)
    assert "0:0" not in [c["value"] for c in d.actions()["choose"].args["cell"]]
    d.do("reopen", cell="0:0")
    d.do("choose", cell="0:0")
    assert d.state.phase == "reading"


def test_host_ends_a_round_early_and_the_last_placed_chooses_next():
    d = Driver(setup(first_chooser=0))
    d.normal(0, 4, (0, "right"))
    d.normal(1, 4, (1, "right"))
    d.normal(0, 0, (2, "wrong"))
    d.do("end_round")
    assert d.state.round == 1 and d.state.phase == "choose"
    assert d.state.chooser == 2  # -100: last place


def test_a_tie_for_last_place_lets_the_host_pick_among_the_tied():
    d = Driver(setup(first_chooser=0))
    d.normal(0, 4, (0, "right"))
    d.do("end_round")
    assert d.state.phase == "pick_chooser" and d.state.candidates == (1, 2)
    d.refused("pick_chooser", player=0)
    d.do("pick_chooser", player=2)
    assert d.state.chooser == 2


def test_round_ends_by_itself_when_the_board_is_empty():
    d = Driver(setup(rounds=[[[q(100), q(200)]], [[q(200)]]], first_chooser=0))
    d.normal(0, 0, (1, "right"))
    assert d.state.round == 0
    d.normal(0, 1, (2, "wrong"))
    assert d.state.round == 1 and d.state.phase == "choose"
    assert d.state.chooser == 2  # the only one in last place (-200)
    types = [e.type for e in d.events]
    assert types[-2:] == ["round_ended", "round_started"]


def test_skip_closes_the_question_without_score():
    d = Driver(setup(first_chooser=0))
    d.choose(0, 3)
    d.do("lamp")
    d.do("skip")
    assert d.state.phase == "choose" and d.scores == [0, 0, 0]
    assert (0, 0, 3) in d.state.played and d.state.last.outcome == "skipped"


# -- a normal question --------------------------------------------------------------------
def test_false_start_blocks_for_two_seconds_from_the_press():
    d = Driver(setup(first_chooser=0))
    d.choose(0, 0)
    d.press(1, 0)  # before the lamp: a false start
    assert d.state.false_starts == (0, 1, 0)
    assert game.view(d.state, "hardware")["false_starts"] == 1
    d.t += 500 * MS  # the lamp lights 0.5 s after the false start
    d.do("lamp")
    lamp = d.t
    assert game.view(d.state, "hardware")["lamp"] is True
    d.press(1, 1400 - 1)  # 1.4 s after the lamp: still blocked (until 1.5 s)
    d.press(2, 1450)  # a clean press, later
    d.settle()
    assert d.state.play.answerer == 2
    race = game.view(d.state, "board")["question"]["race"]
    statuses = [(p["player"], p["status"]) for p in race["presses"]]
    assert (1, "false_start") in statuses and (1, "blocked") in statuses
    winner = [p for p in race["presses"] if p["status"] == "winner"][0]
    assert winner["ms_after_lamp"] == 1450.0 and race["lamp_ns"] == lamp


def test_the_earliest_stamp_wins_whatever_the_arrival_order():
    d = Driver(setup(first_chooser=0))
    d.choose(0, 0)
    d.do("lamp")
    d.press(2, 30)  # arrives first, stamped later
    d.press(0, 28)  # arrives second, stamped 2 ms earlier, inside the settle window
    d.settle()
    assert d.state.play.answerer == 0
    hw = game.view(d.state, "hardware")
    assert hw == {"lamp": False, "answering": 0, "queue": [], "false_starts": 0}


def test_a_press_delivered_after_the_settle_window_cannot_take_the_answer():
    d = Driver(setup(first_chooser=0))
    d.choose(0, 0)
    d.do("lamp")
    lamp = d.t
    d.press(2, 30)
    # stamped earlier than player 2's press, but delivered 20 ms later, after the window:
    # the engine settles the pending window first, as the loop would have
    cmd = Command("press", lamp + 20 * MS, {"player": 0}, "button", at_ns=lamp + 50 * MS)
    for e in game.decide(d.state, cmd):
        d.state = game.evolve(d.state, e)
    assert d.state.phase == "answering" and d.state.play.answerer == 2
    # a lone press delivered late settles by itself
    d2 = Driver(setup(first_chooser=0))
    d2.choose(0, 0)
    d2.do("lamp")
    cmd = Command("press", d2.t + 10 * MS, {"player": 1}, "button", at_ns=d2.t + 40 * MS)
    for e in game.decide(d2.state, cmd):
        d2.state = game.evolve(d2.state, e)
    assert d2.state.phase == "answering" and d2.state.play.answerer == 1


def test_wrong_answer_rearm_and_each_player_answers_once():
    d = Driver(setup(first_chooser=0))
    d.choose(0, 2)
    d.buzz(1, "wrong")
    assert d.state.phase == "after_wrong" and d.scores == [0, -300, 0]
    assert game.view(d.state, "hardware")["lamp"] is False
    d.do("lamp")  # the host re-arms for those who have not answered
    d.press(1, 10)  # already answered: ignored
    d.settle()
    assert d.state.phase == "buttons"
    assert [a["value"] for a in d.actions()["press"].args["player"]] == [0, 2]
    d.buzz(2, "wrong")
    race = game.view(d.state, "host")["question"]["race"]
    assert len(race["lamps"]) == 2
    wins = [(p["player"], p["ms_after_lamp"], p["lamp"]) for p in race["presses"]
            if p["status"] == "winner"]
    # each from its own lamp (the settle after the ignored press moved the clock 60 ms)
    assert wins == [(1, 100.0, 1), (2, 160.0, 2)]
    d.buzz(0, "wrong")  # nobody is left: the question closes by itself
    assert d.state.phase == "choose" and d.scores == [-300, -300, -300]
    assert d.state.last.outcome == "wrong"


def test_press_window_closes_an_unanswered_question_when_timers_are_on():
    d = Driver(setup(preset="club_timed", first_chooser=0))
    d.choose(0, 0)
    d.do("lamp")
    deadline = game.next_deadline(d.state)
    assert deadline == d.t + 7 * 10**9
    d.t = deadline
    d.settle()
    assert d.state.phase == "choose" and d.state.last.outcome == "timeout"


def test_statistics_count_answers_points_by_round_false_starts_and_reaction():
    d = Driver(setup(first_chooser=0))
    d.choose(0, 0)
    d.press(0, 0)
    d.do("lamp")
    d.press(1, 200)
    d.settle()
    d.do("judge", verdict="right")
    d.choose(0, 1)
    d.do("lamp")
    d.press(1, 100)
    d.settle()
    d.do("judge", verdict="wrong")
    d.do("close")
    d.do("end_round")
    d.normal(0, 0, (1, "right"))
    st = game.view(d.state, "host")["stats"]
    assert st[1]["right"] == 2 and st[1]["wrong"] == 1
    assert st[1]["points_by_round"] == {"Раунд 1": -100, "Раунд 2": 200}
    assert st[1]["reaction_best_ms"] == 100.0 and st[1]["reaction_mean_ms"] == 133.3
    assert st[0]["false_starts"] == 1 and st[0]["reaction_mean_ms"] is None


def test_refusals_are_bilingual_and_change_nothing():
    d = Driver(setup(first_chooser=0))
    for cmd, args in [("judge", {"verdict": "right"}), ("lamp", {}), ("give", {"player": 1}),
                      ("bid", {"player": 1, "amount": 100}), ("bet", {"player": 0, "amount": 1}),
                      ("choose", {"theme": "x", "question": 0}), ("nonsense", {}),
                      ("pick_remover", {"player": 0}), ("undo", {})]:
        d.refused(cmd, **args)
    d.choose(0, 0)
    d.refused("judge", verdict="maybe")
    d.refused("choose", theme=0, question=1)
