"""What the host's undo dialog and the printed protocol read from the engines: where an
undo returns (`undo_to` in the host's view: the phase, the scores and the number of
verdicts before the last decision, and its question), and each TV verdict's theme and
value."""

from __future__ import annotations

from test_sport_battle import MS, Game, S, new
from tvkit import Driver, simple_round
from tvkit import package as tv_package

from appliance.rules.tv import game as tv


def tv_setup():
    return {"players": ["Аня", "Борис", "Вера"], "first_chooser": 0,
            "package": tv_package([simple_round()])}


def test_a_tv_undo_returns_to_the_verdict_before_it():
    d = Driver(tv_setup())
    assert tv.view(d.state, "host")["undo_to"] is None
    d.choose(0, 2)
    d.buzz(1, "right")
    host = tv.view(d.state, "host")
    assert host["players"][1]["score"] == 300 and len(host["judgements"]) == 1
    assert host["undo_to"] == {"phase": "answering", "scores": [0, 0, 0], "judgements": 0,
                               "question": {"theme": "Тема 1.1", "value": 300}}
    d.do("undo")
    assert tv.view(d.state, "host")["undo_to"]["phase"] == "reading"  # then the lamp
    assert "undo_to" not in tv.view(d.state, "board")  # only the host is told


def test_a_tv_verdict_names_its_theme_and_value():
    d = Driver(tv_setup())
    d.choose(0, 1)
    d.buzz(2, "wrong")
    j = tv.view(d.state, "host")["judgements"][0]
    assert (j["theme"], j["value"], j["delta"]) == ("Тема 1.1", 200, -200)
    assert d.replayed() == d.state


def test_a_battle_undo_returns_to_the_verdict_before_it():
    from appliance.rules.battle import game as b

    g = Game(new())
    assert g.host["undo_to"] is None
    g.do("announce", 1 * S)
    g.win(1, 2 * S)
    g.do("judge", 3 * S, verdict="right")
    host = g.host
    to = host["undo_to"]
    assert to["phase"] == b.ANSWERING and to["scores"] == [0, 0, 0] and to["judgements"] == 0
    assert to["question"] == {"theme": host["themes"][0]["name"], "value": 10}
    assert host["players"][1]["score"] == 10
    assert "undo_to" not in b.view(g.s, "board")
    g.do("undo", 4 * S + MS)
    assert g.host["players"][1]["score"] == 0
