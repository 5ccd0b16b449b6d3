"""Secrecy of the screens: walk many random games and check every state's board and player
views — never an answer, another's bet or an unrevealed written answer, no text for a cat
while it is given or priced nor for an auction while it is bid for — and the hardware
view's exact shape."""

from __future__ import annotations

import random

from tvkit import MS, cat, package, q

from appliance.rules.protocol import Command, Refused
from appliance.rules.tv import game


def _pkg():
    def mk(price, kind="normal", **kw):
        x = q(price, kind, **kw) if kind != "cat" else cat(price, **kw)
        tag = f"{kind}-{price}-{random.random():.6f}"
        x.content[0].value = f"TXT<{tag}>"
        x.right = [f"ANS<{tag}>"]
        return x
    r1 = [[mk(100), mk(200, "cat", values=[200]), mk(300, "auction")],
          [mk(100, "no_risk"), mk(200, "for_all"), mk(300, "stake_all")]]
    return package([r1], final_themes=3)


def _check(state, n):
    play = state.play
    for role in ["board"] + [f"player:{i}" for i in range(n)]:
        v = game.view(state, role)
        live = {k: x for k, x in v.items() if k != "last"}
        text = str(live)
        assert "ANS<" not in text, (role, state.phase)
        if play and state.phase in ("cat_give", "cat_price", "auction"):
            assert "TXT<" not in text, (role, state.phase)
        if play and play.written:
            seat = int(role.split(":")[1]) if role.startswith("player:") else None
            for row in v["question"]["written"]["rows"]:
                if row["verdict"] is None and row["player"] != seat:
                    assert row["bet"] is None and row["answer"] is None, (role, row)
        if state.final and state.phase == "bets":
            assert "TXT<" not in text  # the final question is read after the bets
    hw = game.view(state, "hardware")
    assert set(hw) == {"lamp", "answering", "queue", "false_starts"}
    assert isinstance(hw["lamp"], bool) and hw["false_starts"] == sum(state.false_starts)


def test_views_keep_secrets_in_random_games():
    rnd = random.Random(7)
    for _ in range(40):
        n = rnd.randint(2, 4)
        setup = {"players": [f"P{i}" for i in range(n)], "package": _pkg(), "preset": "club"}
        state, t = game.initial(setup), 10**9
        for _ in range(150):
            if state.stage == "over":
                break
            acts = [a for a in game.legal_actions(state) if a.type not in ("undo", "finish")]
            a = rnd.choice(acts)
            args = {}
            for k, spec in a.args.items():
                if isinstance(spec, list):
                    args[k] = rnd.choice(spec)["value"]
                elif spec.get("type") == "int":
                    lo, hi = (0, 2000) if k == "score" else (spec["min"], spec["max"])
                    step = spec.get("step", 1)
                    args[k] = lo + step * rnd.randint(0, (hi - lo) // step)
                else:
                    args[k] = "ответ"
            t += rnd.randint(1, 500) * MS
            try:
                events = game.decide(state, Command(a.type, t, args))
            except Refused:
                raise AssertionError(f"legal action refused: {a.type} {args}") from None
            for e in events:
                state = game.evolve(state, e)
            if state.phase == "buttons" and rnd.random() < 0.7:
                t += 50 * MS
                events = game.decide(state, Command("timeout", t + 20 * MS, {}, "loop"))
                for e in events:
                    state = game.evolve(state, e)
            _check(state, n)


def test_host_sees_the_answer_board_sees_it_only_when_closed():
    setup = {"players": ["a", "b", "c"], "package": _pkg(), "first_chooser": 0}
    s = game.initial(setup)
    for e in game.decide(s, Command("choose", 1, {"theme": 0, "question": 0})):
        s = game.evolve(s, e)
    assert "ANS<" in str(game.view(s, "host")["question"]["answer"])
    assert "ANS<" not in str(game.view(s, "board"))
    assert "TXT<" in game.view(s, "board")["question"]["text"]
    for e in game.decide(s, Command("close", 2, {})):
        s = game.evolve(s, e)
    assert "ANS<" in str(game.view(s, "board")["last"]["answer"])
    assert game.view(s, "board")["board"]["themes"][0]["cells"][0]["played"] is True
    assert "kind" not in game.view(s, "board")["board"]["themes"][0]["cells"][1]
    assert game.view(s, "host")["board"]["themes"][0]["cells"][1]["kind"] == "cat"
