"""No silent late winner: a press with an earlier tick that reached the box after the settle
window closed is shown to the host («Вера: нажатие раньше на 0,4 мс») with one button to
hand the answer over (an event, undoable), and the board's race view shows it."""

from __future__ import annotations

import pytest
from test_sport_battle import MS, Game, S, new

from appliance.rules.arbiter import ms_text
from appliance.rules.battle import game as b

VERA, BORIS = 2, 1


def late_race(ahead_ns: int = 400_000) -> tuple[Game, int]:
    """Борис presses first as far as the box knows; Вера's earlier press arrives after
    the settle window closed."""
    g = Game(new())
    g.do("announce", 1 * S)
    t = 2 * S
    g.press(BORIS, t + ahead_ns)
    assert g.press(VERA, t, at_ns=t + ahead_ns + 6 * MS) == ["answerer", "press"]
    assert g.hw["answering"] == BORIS
    return g, t


def test_the_host_sees_the_earlier_press_and_one_button_to_hand_over():
    g, t = late_race()
    notice = g.host["late_press"]
    assert notice["player"] == VERA and notice["winner"] == BORIS
    assert notice["ru"] == "Вера: нажатие раньше на 0,4 мс"
    assert notice["en"] == "Вера pressed 0.4 ms earlier"
    assert notice["earlier_by_ms"] == pytest.approx(0.4)
    hand = [a for a in b.legal_actions(g.s) if a.type == "hand_over"]
    assert len(hand) == 1 and hand[0].label_ru.startswith("Вера: нажатие раньше на 0,4 мс")
    assert [c["value"] for c in hand[0].args["player"]] == [VERA]
    board = b.view(g.s, "board")
    assert board["late_press"]["player"] == VERA
    statuses = {r["player"]: r["status"] for r in board["race"]}
    assert statuses == {VERA: "late_earlier", BORIS: "winner"}
    assert "late_press" not in b.view(g.s, "player:0")  # phones are not told


def test_handing_over_gives_the_answer_and_is_undoable():
    g, t = late_race()
    assert g.do("hand_over", t + S, player=VERA) == ["handed_over"]
    assert g.hw["answering"] == VERA and g.s.phase == b.ANSWERING
    assert g.host["late_press"] is None
    assert {r["player"]: r["status"] for r in g.host["race"]} == {VERA: "winner",
                                                                 BORIS: "beaten"}
    assert "hand_over" not in [a.type for a in b.legal_actions(g.s)]
    g.do("judge", t + 2 * S, verdict="right")
    assert g.s.scores()[VERA] == 10
    g.do("undo", t + 3 * S)  # the judgement
    g.do("undo", t + 4 * S)  # the hand-over
    assert g.hw["answering"] == BORIS and g.host["late_press"]["player"] == VERA


def test_hand_over_is_refused_without_an_earlier_press():
    g, t = late_race()
    g.refused("hand_over", t + S, "no_earlier_press", player=BORIS)
    g.refused("hand_over", t + S, "unknown_player", player=7)
    g = Game(new())
    g.do("announce", 1 * S)
    g.win(BORIS, 2 * S)
    g.press(VERA, 2 * S + MS, at_ns=2 * S + 7 * MS)  # later tick: plainly late
    assert g.host["late_press"] is None
    g.refused("hand_over", 3 * S, "no_earlier_press", player=VERA)


def test_the_notice_ends_with_the_answer():
    g, t = late_race()
    g.do("judge", t + S, verdict="wrong")  # Вера is re-armed with the others
    assert g.host["late_press"] is None
    assert "hand_over" not in [a.type for a in b.legal_actions(g.s)]


def test_milliseconds_in_both_languages():
    assert ms_text(400_000) == ("0,4", "0.4")
    assert ms_text(1_500_000) == ("1,5", "1.5")
    assert ms_text(2_000) == ("0,002", "0.002")
