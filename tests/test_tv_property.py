"""Property: whatever legal commands are sent, the game never gets stuck — every state
before the end offers a way forward (not just corrections), legal actions are never refused,
commands that are not listed are refused (both directions, as the battle's test), and the
event log replays to the same state."""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from tvkit import MS, cat, package, q

from appliance.rules.protocol import Command, Refused
from appliance.rules.tv import game

CORRECTIONS = {"undo", "set_score", "rejudge", "set_chooser", "finish"}

# Every host command of the engine with plausible arguments: when its type is not among the
# legal actions, `decide` must refuse it (presses and the loop's timeouts are not actions).
def _samples(state) -> dict[str, dict]:
    n = state.seats
    return {
        "pick_chooser": {"player": 0}, "set_chooser": {"player": 1}, "choose": {"cell": "0:0"},
        "end_round": {}, "reopen": {"cell": "0:0"}, "lamp": {}, "judge": {"verdict": "right"},
        "close": {}, "skip": {}, "give": {"player": 1}, "cat_price": {"value": 300},
        "bid": {"player": 0, "amount": 300}, "all_in": {"player": 0}, "pass": {"player": 1},
        "bid_order": {"order": list(range(n))}, "bet": {"player": 0, "amount": 1},
        "write": {"player": 0, "text": "x"}, "pick_remover": {"player": 0},
        "remove_theme": {"theme": 0}, "shootout_theme": {"theme": "host"}, "undo": {},
        "rejudge": {"ref": 0, "verdict": "wrong"}, "finish": {}, "hand_over": {"player": 0},
        "remove_question": {}, "replace_question": {"cell": "1:2"},
    }


def _unlisted_are_refused(state, t):
    listed = {a.type for a in game.legal_actions(state)}
    for type_, args in _samples(state).items():
        if type_ in listed:
            continue
        try:
            events = game.decide(state, Command(type_, t, args))
        except Refused:
            continue
        assert not events, f"unlisted {type_} {args} accepted in {state.phase}: {events}"


def _figures_add_up(state):
    """Every screen's figures come from one summary: per player, the points by round plus
    the host's corrections equal the score, and the verdicts counted are those that still
    count (a removed question's do not)."""
    out = game.summary(state)
    view_stats = game.view(state, "host")["stats"]
    assert view_stats == out["stats"]
    for p, row in enumerate(out["stats"]):
        corrected = sum(c["points"] for c in out["corrections"] if c["player"] == p)
        assert row["corrections"] == corrected
        assert sum(row["points_by_round"].values()) + corrected == out["scores"][p] == row["score"]
        live = [j for j in out["questions"] if j["player"] == p and not j["voided"]]
        assert row["right"] == sum(j["verdict"] == "right" for j in live)
        assert row["wrong"] == sum(j["verdict"] == "wrong" for j in live)


def _package():
    r1 = [[q(100), q(200), cat(300, low=100, high=500, step=100)],
          [q(100, "auction"), q(200, "no_risk"), q(300)]]
    r2 = [[q(200, "for_all"), q(400, "stake_all"), cat(600, values=[600], may_keep=True)],
          [q(200), q(400, "auction"), cat(600, values=[200, 1000], no_question=True)]]
    return package([r1, r2], final_themes=3)


def _arg(data, name, spec):
    if isinstance(spec, list):
        return data.draw(st.sampled_from([c["value"] for c in spec]), label=name)
    if spec.get("type") == "int":
        low, high, step = spec["min"], spec["max"], spec.get("step", 1)
        if name == "score":
            low, high, step = -1000, 3000, 100
        k = data.draw(st.integers(0, (high - low) // step), label=name)
        return low + k * step
    return data.draw(st.text(max_size=5), label=name)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(st.data())
def test_no_legal_sequence_gets_stuck(data):
    n = data.draw(st.integers(2, 4), label="players")
    setup = {"players": [f"P{i}" for i in range(n)], "package": _package(), "preset": "club",
             "settings": {"final_positive_only": data.draw(st.booleans(), label="positive")}}
    state = game.initial(setup)
    log = []
    t = 1_000 * MS
    for _ in range(250):
        acts = game.legal_actions(state)
        if state.stage == "over":
            assert {a.type for a in acts} <= {"undo"}
            if not acts or data.draw(st.integers(0, 3), label="undo_after_end"):
                break
        else:
            forward = [a for a in acts if a.type not in CORRECTIONS]
            assert forward, f"stuck in {state.phase}"
        # sometimes a stray press at a random moment, sometimes the loop's timeout
        t += data.draw(st.integers(1, 3000), label="dt_ms") * MS
        _unlisted_are_refused(state, t)
        roll = data.draw(st.integers(0, 9), label="roll")
        if roll == 0:
            cmd = Command("press", t, {"player": data.draw(st.integers(0, n - 1))}, "button")
        elif roll == 1:
            cmd = Command("timeout", t, {}, "loop")
        else:
            weights = [a for a in acts if a.type != "finish"] or acts
            if roll == 2:
                weights = acts
            a = data.draw(st.sampled_from(weights), label="action")
            args = {k: _arg(data, k, spec) for k, spec in a.args.items()}
            cmd = Command(a.type, t, args, "button" if a.type == "press" else "host")
        try:
            events = game.decide(state, cmd)
        except Refused as e:
            assert cmd.type in ("press", "timeout"), f"legal {cmd} refused: {e.message_en}"
            continue
        for e in events:
            state = game.evolve(state, e)
        log += events
        assert len(state.scores) == n
        _figures_add_up(state)
        game.view(state, "board")
        game.view(state, "hardware")
    replay = game.initial(setup)
    for e in log:
        replay = game.evolve(replay, e)
    assert replay == state
    assert game.view(replay, "host") == game.view(state, "host")
