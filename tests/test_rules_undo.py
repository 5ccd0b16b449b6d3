"""Undo is one mechanism for both engines (`appliance.rules.undo`): the same chain in the
state, the same command, event, refusal, host action and key; only the undo points differ,
each engine's `UNDO_POINTS` (the regulation's rule)."""

from __future__ import annotations

import pytest
from tvkit import MS, Driver, package, simple_round

from appliance.rules import undo
from appliance.rules.battle import game as battle
from appliance.rules.protocol import Command, Event, Refused, fold
from appliance.rules.tv import game as tv
from appliance.rules.tv.commands import HANDLERS as TV_COMMANDS

S = 1000 * MS


def _tv() -> Driver:
    d = Driver({"players": ["Аня", "Борис", "Вера"], "package": package([simple_round()])})
    d.do("pick_chooser", player=0)
    return d


def _battle() -> battle.Battle:
    return battle.initial({"players": ["Аня", "Борис"], "package": "demo-sport"})


def _undo_actions(rules, state):
    return [a for a in rules.legal_actions(state) if a.type == "undo"]


def test_points_mark_the_first_event_of_a_command_that_is_a_point():
    points = undo.Points(commands=frozenset({"judge"}))
    evs = [Event("judged", 5, {"player": 0}), Event("question_closed", 5, {})]
    marked = points.mark(Command("judge", 5, {}), evs)
    assert marked[0].data == {"player": 0, "step": True} and marked[1] == evs[1]
    assert points.mark(Command("press", 5, {}), evs) == evs
    assert points.mark(Command("judge", 5, {}), []) == []
    assert marked[0] in points and evs[1] not in points and evs[0] not in points


@pytest.mark.parametrize(("event", "point"), [
    (Event("judged", 1, {}), True),
    (Event("question_closed", 1, {"reason": "no_press"}), True),
    (Event("question_closed", 1, {"reason": "answered"}), False),
    (Event("question_closed", 1, {}), False),
    (Event("announced", 1, {}), False),
    (Event("announced", 1, {"step": True}), True),  # an explicit mark is a point anywhere
    (Event("announced", 1, {"step": "yes"}), False),
])
def test_points_by_event_type_and_by_reason(event, point):
    points = undo.Points(events=frozenset({"judged"}),
                         reasons={"question_closed": frozenset({"no_press"})})
    assert (event in points) is point


def test_the_chain_is_flat_and_restore_returns_the_rest_of_it():
    s0 = _battle()
    s1 = undo.remember(s0)
    s2 = undo.remember(s1)
    assert len(s2.earlier) == 2 and all(not e.earlier for e in s2.earlier)
    back = undo.restore(s2)
    assert back == s1 and back.earlier == s1.earlier
    assert not undo.restore(back).earlier
    assert undo.restore(s0) is s0  # a fold never refuses: nothing earlier, nothing changes


def test_tv_points_are_every_host_command_but_press_timeout_and_undo():
    assert tv.UNDO_POINTS.commands == frozenset(TV_COMMANDS) - {"press", "timeout", "undo"}
    assert not tv.UNDO_POINTS.events


def test_battle_points_are_its_regulations_decisions():
    assert battle.UNDO_POINTS.events == {"judged", "handed_over", "rejudged", "score_set",
                                         "question_removed", "question_replaced"}
    assert dict(battle.UNDO_POINTS.reasons) == {"question_closed": {"no_press"}}
    assert not battle.UNDO_POINTS.commands  # the battle's events need no mark


def test_both_engines_refuse_undo_at_the_start_with_the_same_words():
    refusals = []
    for rules, state in ((tv, tv.initial(_tv().setup)), (battle, _battle())):
        assert not undo.can_undo(state) and not _undo_actions(rules, state)
        assert rules.view(state, "host")["can_undo"] is False
        with pytest.raises(Refused) as e:
            rules.decide(state, Command("undo", 10 * S, {}))
        refusals.append(e.value.to_json())
    assert refusals[0] == refusals[1] and refusals[0]["code"] == "nothing_to_undo"


def test_both_engines_offer_the_same_undo_action_and_event():
    d = _tv()
    b = _battle()
    for cmd in (Command("announce", 1 * S, {}), Command("reading_done", 2 * S, {}),
                Command("timeout", 20 * S, {}, "loop")):  # the window runs out: a point
        b = fold(battle, b, battle.decide(b, cmd))
    actions = [_undo_actions(tv, d.state), _undo_actions(battle, b)]
    assert actions[0] == actions[1] and len(actions[0]) == 1
    assert actions[0][0].key == undo.KEY == "z" and actions[0][0].confirm
    for rules, state in ((tv, d.state), (battle, b)):
        assert rules.view(state, "host")["can_undo"] is True
        events = rules.decide(state, Command("undo", 30 * S, {}))
        assert [e.type for e in events] == ["undone"]
        assert events[0].data == {"phase": state.earlier[-1].phase}


def test_a_tv_step_from_an_old_log_is_still_an_undo_point():
    d = _tv()
    # As main logged it before the kit: the step mark on the first event, no phase on undone.
    state = tv.initial(d.setup)
    events = [Event("chooser", 1, {"player": 0, "step": True}),
              Event("chosen", 2, {"round": 0, "theme": 0, "question": 0, "kind": "normal",
                                  "value": 100, "step": True}),
              Event("undone", 3, {})]
    after = fold(tv, state, events[:1])
    assert fold(tv, state, events) == after and len(after.earlier) == 1
