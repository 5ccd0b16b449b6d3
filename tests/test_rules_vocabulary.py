"""One vocabulary for both engines: the same situation is refused with the same code and the
same words; numbers are checked the same way; a setup's numbers and package are checked
before anything is played; "no answer" is a verdict of its own in both."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from appliance.rules import kit
from appliance.rules.battle import game as battle
from appliance.rules.protocol import Command, Event, Refused, fold
from appliance.rules.tv import game as tv
from appliance.rules.tv.presets import resolve

MS = 1_000_000
BATTLE_SETUP = {"players": ["Аня", "Борис"], "themes": [{"name": "Т"}]}
TV_SETUP = {"players": ["Аня", "Борис", "Вера"], "first_chooser": 0}


def run(rules: Any, state: Any, *commands: dict[str, Any]) -> Any:
    t = 1000 * MS
    for c in commands:
        t += 1000 * MS
        args = {k: v for k, v in c.items() if k not in ("type", "by")}
        cmd = Command(c["type"], t, args, c.get("by", "host"))
        state = fold(rules, state, rules.decide(state, cmd))
    return state


def refusal(rules: Any, state: Any, type_: str, **args: Any) -> Refused:
    with pytest.raises(Refused) as info:
        rules.decide(state, Command(type_, 10**12, args))
    return info.value


def tv_answering() -> Any:
    s = tv.initial(TV_SETUP)
    s = run(tv, s, {"type": "choose", "cell": "0:0"}, {"type": "lamp"})
    s = fold(tv, s, tv.decide(s, Command("press", s.play.race.lamp_ns + 200 * MS, {"player": 1},
                                         "button")))
    return fold(tv, s, tv.decide(s, Command("timeout", s.play.race.lamp_ns + 300 * MS, {},
                                            "loop")))


def battle_answering() -> Any:
    s = battle.initial(BATTLE_SETUP)
    s = run(battle, s, {"type": "announce"})
    s = fold(battle, s, battle.decide(s, Command("press", 3000 * MS, {"player": 1}, "button")))
    return fold(battle, s, battle.decide(s, Command("timeout", 3100 * MS, {}, "loop")))


@pytest.mark.parametrize("type_, args, code", [
    ("fly", {}, kit.UNKNOWN_COMMAND),
    ("set_score", {"player": 7, "score": 1}, kit.UNKNOWN_PLAYER),
    ("set_score", {"player": True, "score": 1}, kit.UNKNOWN_PLAYER),
    ("set_score", {"player": 0, "score": "12"}, kit.NOT_A_NUMBER),
    ("set_score", {"player": 0, "score": 1.5}, kit.NOT_A_NUMBER),
    ("set_score", {"player": 0, "score": math.nan}, kit.NOT_A_NUMBER),
    ("set_score", {"player": 0, "score": False}, kit.NOT_A_NUMBER),
    ("set_score", {"player": 0, "score": 10**400}, kit.NOT_A_NUMBER),  # no OverflowError
    ("judge", {"verdict": "maybe"}, kit.BAD_VERDICT),
    ("rejudge", {"ref": 5, "verdict": "right"}, kit.UNKNOWN_JUDGEMENT),
    ("undo", {}, kit.NOTHING_TO_UNDO),
])
def test_the_same_situation_is_refused_alike_in_both_engines(type_, args, code):
    got = {}
    for name, rules, state in (("tv", tv, tv_answering()), ("battle", battle, battle_answering())):
        if type_ == "undo":
            state = rules.initial(TV_SETUP if name == "tv" else BATTLE_SETUP)
        r = refusal(rules, state, type_, **args)
        assert r.code == code, (name, r.to_json())
        got[name] = (r.message_ru, r.message_en)
    assert got["tv"] == got["battle"]


def test_nobody_answers_is_one_refusal():
    for rules, setup in ((tv, TV_SETUP), (battle, BATTLE_SETUP)):
        r = refusal(rules, rules.initial(setup), "judge", verdict="right")
        assert r.to_json() == kit.nobody_answers().to_json()


def test_a_whole_float_is_a_number_and_a_numeric_string_is_not():
    for rules, state in ((tv, tv_answering()), (battle, battle_answering())):
        s = run(rules, state, {"type": "set_score", "player": 0, "score": 300.0})
        assert rules.summary(s)["scores"][0] == 300
        assert refusal(rules, state, "set_score", player=0, score="300").code == kit.NOT_A_NUMBER


@pytest.mark.parametrize("key, value", [
    ("press_window_s", math.nan), ("press_window_s", -1), ("press_window_s", 0),
    ("press_window_s", math.inf), ("answer_s", "5"), ("answer_s", 10**9),
    ("players_max", 3.7), ("players_max", "4"), ("settle_ms", -5), ("auction_step", 0),
    ("rounds", 0), ("rounds", 2.5), ("round_values", [[100, "x"]]), ("round_values", 5),
    ("final", 1), ("false_start_s", -0.5), ("unknown_key", 1), ("press_window_s", 10**400),
    ("answer_s", -10**400),
])
def test_presets_refuse_what_their_docstring_refuses(key, value):
    with pytest.raises(Refused) as info:
        resolve("club", {key: value})
    assert info.value.code == kit.BAD_SETUP and info.value.message_ru != info.value.message_en


def test_presets_take_whole_floats_and_zero_false_start_block():
    s = resolve("club", {"players_max": 4.0, "press_window_s": 7, "false_start_s": 0})
    assert s.players_max == 4 and isinstance(s.players_max, int)
    assert s.press_window_s == 7.0 and s.false_start_s == 0.0


@pytest.mark.parametrize("window", [math.nan, math.inf, -1, "7", True, 10**400])
def test_battle_timers_refuse_bad_numbers(window):
    with pytest.raises(Refused) as info:
        battle.initial({**BATTLE_SETUP, "settings": {"window_s": window}})
    assert info.value.code == kit.BAD_SETUP


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["format", "name", "rounds", "themes", "questions", "price", "kind",
                         "content", "cat", "type", "value", "final", "right"]), inner,
        max_size=4), max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(junk=json_values, shape=st.sampled_from(["bare", "package", "round", "theme"]))
def test_a_malformed_package_is_refused_never_a_crash(junk, shape):
    package: Any = junk
    if shape != "bare":
        package = {"format": "svoyak-package", "version": 1, "name": "P", "rounds": junk}
    if shape in ("round", "theme"):
        package["rounds"] = [{"name": "R", "themes": junk if shape == "round" else
                              [{"name": "T", "questions": junk}]}]
    for rules, setup in ((tv, TV_SETUP), (battle, {"players": ["А", "Б"]})):
        try:
            rules.initial({**setup, "package": package})
        except Refused as r:
            assert r.code == kit.BAD_SETUP and r.message_ru and r.message_en


def test_no_answer_scores_like_wrong_and_is_counted_apart():
    s = run(tv, tv_answering(), {"type": "judge", "verdict": "no_answer"})
    assert s.scores[1] == -100
    st_ = tv.summary(s)["stats"][1]
    assert (st_["wrong"], st_["no_answer"]) == (0, 1)
    b = run(battle, battle_answering(), {"type": "judge", "verdict": "no_answer"})
    assert battle.summary(b)["scores"][1] == -10
    bst = battle.summary(b)["statistics"][1]
    assert (bst["wrong"], bst["no_answer"]) == (0, 1)
    # the verdict is offered wherever a verdict is
    for rules, state in ((tv, tv_answering()), (battle, battle_answering())):
        judge = next(a for a in rules.legal_actions(state) if a.type == "judge")
        assert "no_answer" in [c["value"] for c in judge.args["verdict"]]


def test_reaction_figures_are_one_computation():
    assert kit.reaction_ms([4 * MS, 6 * MS]) == (2, 5.0, 4.0)
    assert kit.reaction_ms([]) == (0, None, None)


def test_an_old_log_without_no_answer_folds_as_before():
    s = tv_answering()
    s = tv.evolve(s, Event("judged", 10**12, {"player": 1, "verdict": "wrong", "plus": 100,
                                              "minus": 100, "step": True}))
    assert s.scores[1] == -100 and tv.summary(s)["stats"][1]["no_answer"] == 0


@pytest.mark.parametrize("role", ["player:3", "player:-1", "player:x", "player:", "spectator",
                                  "", "Host", "player:1:2"])
def test_a_view_for_a_role_or_seat_there_is_not_is_refused_alike(role):
    """Both engines build views for the host, the board, the hardware and each seat, and
    refuse anything else the same way (the web layer then shows a phone the board)."""
    refusals = []
    for rules, state in ((tv, tv_answering()), (battle, battle_answering())):
        last = f"player:{state.seats - 1}"
        for known in ("host", "board", "hardware", "player:0", last):
            assert isinstance(rules.view(state, known), dict)
        with pytest.raises(Refused):
            rules.view(state, f"player:{state.seats}")
        with pytest.raises(Refused) as e:
            rules.view(state, role)
        refusals.append(e.value.to_json())
    assert refusals[0] == refusals[1] and refusals[0]["code"] == kit.UNKNOWN_ROLE
    assert refusals[0]["ru"] != refusals[0]["en"]
