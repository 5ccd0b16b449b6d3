"""The TV game never decides a late winner in silence either: a press with an earlier tick
that reached the box after the settle window is shown to the host and on the board's race,
and the host may hand the answer over (a step, undoable)."""

from __future__ import annotations

from tvkit import MS, Driver, package, simple_round

from appliance.rules.tv import game

BORIS, VERA = 1, 2


def late() -> Driver:
    d = Driver({"players": ["Аня", "Борис", "Вера"], "package": package([simple_round()]),
                "first_chooser": 0})
    d.choose(0, 2)
    d.do("lamp")
    d.press(BORIS, 100)
    d.settle()
    assert d.state.play.answerer == BORIS
    t_boris = d.state.play.race.winner_ns
    # Вера's edge, 0.4 ms earlier, reaches the box only now.
    d.press(VERA, (t_boris - 400_000 - d.t) / MS)
    return d


def test_host_and_board_see_it_and_the_host_hands_over():
    d = late()
    host = game.view(d.state, "host")
    assert host["late_press"]["ru"] == "Вера: нажатие раньше на 0,4 мс"
    board = game.view(d.state, "board")
    assert board["late_press"]["player"] == VERA
    statuses = {p["player"]: p["status"] for p in board["question"]["race"]["presses"]}
    assert statuses == {BORIS: "winner", VERA: "late_earlier"}
    assert "late_press" not in game.view(d.state, "player:0")
    hand = d.actions()["hand_over"]
    assert [c["value"] for c in hand.args["player"]] == [VERA]
    d.do("hand_over", player=VERA)
    assert d.state.play.answerer == VERA and d.state.phase == "answering"
    assert "hand_over" not in d.actions()
    d.do("judge", verdict="right")
    assert d.scores == [0, 0, 300]
    assert d.replayed() == d.state
    d.do("undo")  # the verdict
    d.do("undo")  # the hand-over
    assert d.state.play.answerer == BORIS and "hand_over" in d.actions()


def test_hand_over_is_refused_for_anyone_else():
    d = late()
    assert d.refused("hand_over", player=0).code == "no_earlier_press"
    assert d.refused("hand_over", player=BORIS).code == "no_earlier_press"
