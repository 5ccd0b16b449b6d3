"""A flawed question can be removed or replaced by the host, in both formats: logged, its
scores undone, the replacement taken from the package's unplayed material."""

from __future__ import annotations

from tvkit import Driver, package, q

from appliance.rules.battle import game as battle
from appliance.rules.protocol import Command, fold
from appliance.rules.tv import game as tv

MS = 1_000_000


def tv_game() -> Driver:
    pkg = package([[[q(100), q(200), q(300)], [q(100), q(200), q(300)]]])
    return Driver({"players": ["A", "B", "C"], "package": pkg, "first_chooser": 0})


def test_tv_remove_undoes_the_questions_scores_and_gives_the_choice_back():
    d = tv_game()
    d.choose(0, 1)
    d.buzz(1, "wrong")
    d.buzz(2, "right")  # C takes it and would choose next
    assert d.scores == [0, -200, 200] and d.state.chooser == 2
    assert "remove_question" in d.actions()
    events = d.do("remove_question")
    assert events[0].type == "question_removed" and events[0].data["refs"] == [0, 1]
    assert d.scores == [0, 0, 0] and d.state.chooser == 0  # back to the opener
    assert d.state.last.outcome == "removed"
    st = tv.summary(d.state)["stats"]
    assert st[1]["wrong"] == 0 and st[2]["right"] == 0
    assert "remove_question" not in d.actions()  # once
    assert d.refused("rejudge", ref=0, verdict="right").code == "voided"
    d.do("undo")
    assert d.scores == [0, -200, 200]
    assert d.replayed() == d.state


def test_tv_replace_plays_an_unplayed_question_for_the_same_opener():
    d = tv_game()
    d.choose(0, 0)
    d.do("lamp")
    d.press(1, 100)
    d.settle()
    act = d.actions()["replace_question"]
    assert "0:0" not in [c["value"] for c in act.args["cell"]]  # played material is not spare
    events = d.do("replace_question", cell="1:2")
    assert [e.type for e in events][:2] == ["question_removed", "chosen"]
    assert events[1].data["replaces"] == [0, 0, 0]
    assert d.state.play.cell == (0, 1, 2) and d.state.play.opener == 0
    assert (0, 0, 0) in d.state.played  # the flawed one stays off the board
    assert d.replayed() == d.state


def battle_game():
    setup = {"players": ["A", "B"], "themes": [{"name": "T"}],
             "extra_themes": [{"name": "X", "questions": [
                 {"text": f"Запасной {i}", "answer": f"З{i}"} for i in range(5)]}]}
    s = battle.initial(setup)
    t = 1000 * MS

    def do(type_, **args):
        nonlocal s, t
        t += 1000 * MS
        s = fold(battle, s, battle.decide(s, Command(type_, t, args,
                                                     "button" if type_ == "press" else "host")))
    return lambda: s, do


def test_battle_remove_undoes_the_scores_and_next_goes_on():
    state, do = battle_game()
    do("announce")
    do("press", player=0)
    do("judge", verdict="wrong")
    do("press", player=1)
    do("judge", verdict="right")
    assert state().scores() == [-10, 10]
    do("remove_question")
    assert state().scores() == [0, 0] and state().phase == "closed"
    summary = battle.summary(state())
    assert summary["questions"][0]["closed"] == "removed"
    assert [a.type for a in battle.legal_actions(state())].count("remove_question") == 0
    do("next")
    assert state().number == 1
    do("undo")  # the removal, and the `next` that followed it
    assert state().scores() == [-10, 10] and state().phase == "closed"


def test_battle_replace_reads_a_spare_question_in_the_same_slot():
    state, do = battle_game()
    do("announce")
    do("press", player=0)
    do("judge", verdict="right")
    acts = {a.type: a for a in battle.legal_actions(state())}
    sources = [c["value"] for c in acts["replace_question"].args["source"]]
    assert sources[0] == "0:0" and sources[-1] == "host"
    do("replace_question", source="0:0")
    s = state()
    assert s.scores() == [0, 0] and s.phase == "ready" and (s.theme, s.number) == (0, 0)
    host = battle.view(s, "host")
    assert host["question"]["text"] == "Запасной 0" and host["value"] == 10
    assert (0, 0) not in s.spare_questions()
    do("announce")
    do("press", player=1)
    do("judge", verdict="right")
    assert state().scores() == [0, 10]
    assert battle.view(state(), "board")["revealed"]["text"] == "Запасной 0"
