"""Final round (theme removal, secret bets, written answers), tie and shootout."""

from __future__ import annotations

from tvkit import Driver, package, q, simple_round

from appliance.rules.tv import game


def final_game(scores, final_themes=7, rows=None, **settings):
    pkg = package([rows or simple_round()], final_themes=final_themes)
    d = Driver({"players": [f"P{i}" for i in range(len(scores))], "package": pkg,
                "first_chooser": 0, "preset": "club", "settings": settings})
    for p, s in enumerate(scores):
        d.do("set_score", player=p, score=s)
    d.do("end_round")
    return d


def remove_all(d):
    while d.state.phase == "final_remove":
        theme = d.actions()["remove_theme"].args["theme"][0]["value"]
        d.do("remove_theme", theme=theme)


def test_themes_are_removed_from_the_lowest_score_ties_ordered_by_the_host():
    d = final_game([300, 100, 100])
    assert d.state.stage == "final" and d.state.phase == "final_order"
    assert d.state.candidates == (1, 2)
    d.refused("pick_remover", player=0)
    d.do("pick_remover", player=2)
    assert d.state.final.order == (2, 1, 0) and d.state.phase == "final_remove"
    assert game.view(d.state, "board")["final"]["turn"] == 2
    e = d.refused("remove_theme", theme=0, player=1)
    assert "игрок 3" in e.message_ru and "Player 3" in e.message_en
    removers = []
    for t in range(6):
        removers.append(game.view(d.state, "host")["final"]["turn"])
        d.do("remove_theme", theme=t)
    assert removers == [2, 1, 0, 2, 1, 0]
    d.refused("remove_theme", theme=0)  # already gone (and the phase is over)
    assert d.state.phase == "bets" and d.state.play.theme == "Финал 7"


def test_zero_and_negative_scores_do_not_play_the_final():
    d = final_game([500, 0, -200])
    assert d.state.final.players == (0,)
    remove_all(d)
    assert d.state.phase == "bets"
    assert [a.args["player"][0]["value"] for a in game.legal_actions(d.state)
            if a.type == "bet"] == [0]
    d.refused("bet", player=1, amount=1)


def test_a_setting_lets_everyone_play_the_final():
    d = final_game([500, 0, -200], final_positive_only=False)
    assert d.state.final.players == (0, 1, 2)
    assert d.state.final.order == (2, 1, 0)
    remove_all(d)
    bets = {a.args["player"][0]["value"]: a.args["amount"] for a in game.legal_actions(d.state)
            if a.type == "bet"}
    assert bets[2] == bets[1] == {"type": "int", "min": 0, "max": 0, "step": 1}
    d.refused("bet", player=2, amount=1)
    d.do("bet", player=2, amount=0)


def test_secret_bets_written_answers_and_reveal_in_the_hosts_order():
    d = final_game([1000, 600, 300], final_themes=3)
    remove_all(d)
    specs = {a.args["player"][0]["value"]: a.args["amount"] for a in game.legal_actions(d.state)
             if a.type == "bet"}
    assert specs[0] == {"type": "int", "min": 1, "max": 1000, "step": 1}
    assert specs[2]["max"] == 300
    d.refused("bet", player=2, amount=301)
    d.refused("bet", player=2, amount=0)
    d.do("bet", player=0, amount=777)
    d.do("bet", player=1, amount=555)
    board = str(game.view(d.state, "board"))
    assert "777" not in board and "555" not in board
    assert "FINAL-Q" not in str(game.view(d.state, "board")["question"])  # before the bets
    assert "777" in str(game.view(d.state, "player:0")) and "777" not in str(
        game.view(d.state, "player:1"))
    d.do("bet", player=2, amount=300)
    assert d.state.phase == "writing"
    assert "FINAL-Q" in game.view(d.state, "board")["question"]["text"]
    for p, text in [(0, "ответ-ноль"), (1, "ответ-один"), (2, "ответ-два")]:
        d.do("write", player=p, text=text)
    board = str(game.view(d.state, "board"))
    assert "ответ" not in board and "FINAL-A" not in board
    d.do("judge", player=2, verdict="right")  # the host reveals in any order
    board = game.view(d.state, "board")
    assert "ответ-два" in str(board) and "ответ-ноль" not in str(board)
    assert "777" not in str(board)
    assert d.scores == [1000, 600, 600]
    d.do("judge", player=0, verdict="wrong")
    d.do("judge", player=1, verdict="right")
    assert d.scores == [223, 1155, 600]
    assert d.state.stage == "over" and d.state.winners == (1,)
    s = game.summary(d.state)
    assert s["over"] and s["winners"] == [1] and s["places"] == [3, 1, 2]
    assert "FINAL-A" in str(game.view(d.state, "board")["last"])


def test_an_answer_never_written_cannot_be_judged():
    """A verdict reveals the written answer: before it is written (on the phone, or
    recorded by the host, empty if the player wrote nothing) there is nothing to judge,
    and the host is not offered it."""
    d = final_game([1000, 600, 300], final_themes=3)
    remove_all(d)
    for p, amount in ((0, 100), (1, 100), (2, 100)):
        d.do("bet", player=p, amount=amount)
    assert d.state.phase == "writing"
    assert "judge" not in d.actions()
    refused = d.refused("judge", player=1, verdict="right")
    assert "не записан" in refused.message_ru and "not been written" in refused.message_en
    d.do("write", player=0, text="ответ")
    assert [c["value"] for c in d.actions()["judge"].args["player"]] == [0]
    d.refused("judge", player=1, verdict="wrong")
    d.do("write", player=1, text="")  # nothing written: the host records an empty answer
    assert [c["value"] for c in d.actions()["judge"].args["player"]] == [0, 1]
    d.do("judge", player=1, verdict="wrong")
    assert d.scores == [1000, 500, 300]


def test_nobody_positive_skips_the_final():
    d = final_game([0, -100, -100])
    assert d.state.stage == "over" and d.state.winners == (0,)


def test_tie_after_the_final_starts_a_shootout_between_the_tied_only():
    d = final_game([500, 500, 100], final_themes=1,
                   rows=[[q(100), q(200), q(300), q(400), q(500)], [q(100)]])
    assert d.state.phase == "bets"  # one final theme: nothing to remove
    for p in range(3):
        d.do("bet", player=p, amount=100)
    for p in range(3):
        d.do("write", player=p, text="")
        d.do("judge", player=p, verdict="wrong")
    assert d.scores == [400, 400, 0]
    assert d.state.stage == "shootout" and d.state.shootout.players == (0, 1)
    choices = [c["value"] for c in d.actions()["shootout_theme"].args["theme"]]
    assert choices == ["0:0", "0:1", "host"]
    d.do("shootout_theme", theme="0:0")
    assert d.state.phase == "reading" and d.state.play.value == 100
    d.do("lamp")
    d.press(2, 10)  # not in the shootout
    d.settle()
    assert d.state.phase == "buttons"
    d.buzz(1, "right")
    assert d.scores == [400, 500, 0] and d.state.play.value == 200
    for _ in range(4):
        d.do("close")
    assert d.state.stage == "over" and d.state.winners == (1,)


def test_three_way_tie_goes_into_two_shootout_themes():
    d = final_game([300, 300, 300], final_themes=2,
                   rows=[[q(100), q(200), q(300), q(400), q(500)],
                         [q(100), q(200), q(300), q(400), q(500)]])
    d.do("pick_remover", player=1)
    d.do("pick_remover", player=2)
    assert d.state.final.order == (1, 2, 0)
    d.do("remove_theme", theme=1)
    for p in range(3):
        d.do("bet", player=p, amount=300)
    for p in range(3):
        d.do("write", player=p, text="ответ")
        d.do("judge", player=p, verdict="right")
    assert d.scores == [600, 600, 600] and d.state.shootout.players == (0, 1, 2)
    d.do("shootout_theme", theme="0:1")
    for _ in range(5):  # nobody answers a single question: the tie stands
        d.do("close")
    assert d.state.stage == "shootout" and d.state.phase == "shootout_theme"
    assert d.state.shootout.themes == 1
    assert [c["value"] for c in d.actions()["shootout_theme"].args["theme"]] == ["0:0", "host"]
    d.do("shootout_theme", theme="0:0")
    d.buzz(0, "wrong")  # 0 drops to 500
    d.do("lamp")
    d.press(2, 5)
    d.press(1, 6)
    d.settle()
    d.do("judge", verdict="right")  # 2 leads with 700
    for _ in range(4):
        d.do("close")
    assert d.state.stage == "over" and d.state.winners == (2,)
    assert d.state.shootout.themes == 2 and d.scores == [500, 600, 700]
    assert game.summary(d.state)["shootout_themes"] == 2


def test_the_host_may_run_a_shootout_on_own_questions():
    pkg = package([[[q(100)]]])
    d = Driver({"players": ["a", "b", "c"], "package": pkg, "first_chooser": 0})
    d.normal(0, 0)  # the board is empty, no final: everyone at 0 -> shootout of three
    assert d.state.stage == "shootout"
    assert [c["value"] for c in d.actions()["shootout_theme"].args["theme"]] == ["host"]
    d.do("shootout_theme", theme="host")
    assert [v for _, v in d.state.shootout.items] == [100, 200, 300, 400, 500]
    d.buzz(1, "right")
    for _ in range(4):
        d.do("close")
    assert d.state.winners == (1,)


def test_the_final_answer_outlives_the_shootout_and_stays_secret_until_the_final_closes():
    """The board shows the final's right answer after the final and through the shootout
    that follows (whose questions replace `last`); never before the final closes."""
    d = final_game([500, 500, 100], final_themes=2,
                   rows=[[q(100), q(200), q(300), q(400), q(500)], [q(100)]])
    if d.state.phase == "final_order":
        d.do("pick_remover", player=0)
    remove_all(d)
    left = d.state.final.remaining(2)
    assert len(left) == 1
    answer = f"FINAL-A{left[0] + 1}"
    for role in ("board", "player:0", "host"):
        assert game.view(d.state, role)["final"]["answer"] is None
    for p in range(3):
        d.do("bet", player=p, amount=100)
    for p in range(3):
        assert game.view(d.state, "board")["final"]["answer"] is None
        d.do("write", player=p, text="")
        d.do("judge", player=p, verdict="wrong")
    assert d.state.stage == "shootout"
    for role in ("board", "player:1"):
        assert game.view(d.state, role)["final"]["answer"]["right"] == [answer]
    d.do("shootout_theme", theme="0:0")
    d.do("lamp")
    d.buzz(1, "right")  # a shootout question closes: `last` is no longer the final
    board = game.view(d.state, "board")
    assert board["last"]["kind"] != "final"
    assert board["final"]["answer"]["right"] == [answer]
    for _ in range(4):
        d.do("close")
    assert d.state.stage == "over"
    assert game.view(d.state, "board")["final"]["answer"]["right"] == [answer]
