"""Host corrections as events: undo, rejudge, set a score, change the chooser, finish."""

from __future__ import annotations

from tvkit import Driver, package, q, simple_round

from appliance.rules.tv import game


def setup(**kw):
    pkg = package([simple_round(), simple_round((200, 400, 600, 800, 1000))], final_themes=2)
    return {"players": ["Аня", "Борис", "Вера"], "package": pkg, "first_chooser": 0, **kw}


def test_undo_reverts_the_last_decision_step_by_step():
    d = Driver(setup())
    d.choose(0, 2)
    before_lamp = d.state
    d.do("lamp")
    d.press(1, 100)
    d.settle()
    d.do("judge", verdict="right")
    assert d.scores == [0, 300, 0] and d.state.chooser == 1
    d.do("undo")  # the verdict
    assert d.scores == [0, 0, 0] and d.state.phase == "answering"
    assert d.state.play.answerer == 1 and d.state.chooser == 0
    d.do("undo")  # the lamp, with the presses that followed it
    assert d.state == before_lamp and d.state.phase == "reading"
    d.do("undo")  # the choice
    assert d.state.phase == "choose" and (0, 0, 2) not in d.state.played
    assert d.replayed() == d.state  # undo is in the log: replay agrees


def test_undo_restores_a_whole_automatic_chain():
    d = Driver(setup())
    for t in range(2):
        for i in range(5):
            if (t, i) != (1, 4):
                d.normal(t, i, (0, "right"))
    d.choose(1, 4)
    d.buzz(2, "right")  # the last cell: the round ends and round 2 starts by itself
    assert d.state.round == 1
    d.do("undo")
    assert d.state.round == 0 and d.state.phase == "answering" and d.scores[2] == 0


def test_rejudge_replaces_a_judgement_and_fixes_the_score():
    d = Driver(setup())
    d.normal(0, 1, (1, "wrong"), (2, "right"))
    assert d.scores == [0, -200, 200]
    refs = [c["value"] for c in d.actions()["rejudge"].args["ref"]]
    assert refs == [0, 1]
    d.do("rejudge", ref=0, verdict="right")
    assert d.scores == [0, 200, 200]
    assert d.state.judgements[0].verdict == "right"
    assert d.do("rejudge", ref=0, verdict="right") == []  # already so: nothing happens
    d.refused("rejudge", ref=5, verdict="wrong")
    st = game.view(d.state, "host")["stats"]
    assert st[1]["right"] == 1 and st[1]["wrong"] == 0


def test_rejudge_of_an_auction_uses_the_bid():
    pkg = package([[[q(300, "auction"), q(100)]]])
    d = Driver({"players": ["a", "b", "c"], "package": pkg, "first_chooser": 0})
    d.do("set_score", player=0, score=1000)
    d.choose(0, 0)
    d.do("bid", player=0, amount=800)  # the others (0 each) cannot outbid: passed for them
    assert d.state.phase == "answering"
    d.do("judge", verdict="wrong")
    assert d.scores[0] == 200
    d.do("rejudge", ref=0, verdict="right")
    assert d.scores[0] == 1800


def test_set_score_and_set_chooser():
    d = Driver(setup())
    d.do("set_score", player=2, score=-700)
    assert d.scores == [0, 0, -700]
    assert [e.type for e in d.events] == ["score_set"]
    d.do("set_chooser", player=2)
    assert d.state.chooser == 2
    d.refused("set_chooser", player=2)
    d.refused("set_score", player=7, score=1)
    d.refused("set_score", player=1, score="много")
    d.do("undo")
    assert d.state.chooser == 0


def test_finish_ends_play_with_the_leaders_as_winners():
    d = Driver(setup())
    d.normal(0, 4, (2, "right"))
    d.do("finish")
    assert d.state.stage == "over" and d.state.winners == (2,)
    assert [a.type for a in game.legal_actions(d.state)] == ["undo"]
    d.refused("choose", theme=0, question=0)
    d.do("undo")
    assert d.state.stage == "round"
