"""When the battle must be woken: the settle window of a pending press, else the end of
the 7 s window; and the events of a deadline that has passed."""

from __future__ import annotations

from appliance.rules import arbiter
from appliance.rules.battle.state import MS, OPEN, Battle
from appliance.rules.protocol import Event


def next_deadline(state: Battle) -> int | None:
    """The settle window of a pending press, else the end of the 7 s window."""
    q = state.current
    if state.phase != OPEN or q is None:
        return None
    settle = q.race.settle_deadline()
    if settle is not None:
        return settle
    if q.window_from_ns is not None:
        return q.window_from_ns + state.settings.window_ns
    return None


def on_deadline(state: Battle, tick: int) -> list[Event]:
    q = state.current
    assert q is not None
    if q.race.settle_deadline() is not None:
        settled = arbiter.settle(q.race, tick)
        lamp = q.race.lamp_ns or 0
        return [Event("answerer", tick, {
            "player": settled.winner, "press_ns": settled.winner_ns,
            "reaction_ms": ((settled.winner_ns or lamp) - lamp) / MS})]
    return [Event("question_closed", tick, {"reason": "no_press"})]
