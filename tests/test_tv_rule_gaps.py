"""Rule gaps found while playing the TV game, each closed with a test: the chooser's choice
is the chooser's, a poor opener's auction bid is logged, the host sets the bidding order, and
an answer countdown that runs out prompts the host without judging."""

from __future__ import annotations

from tvkit import MS, Driver, package, q

from appliance.rules.protocol import Command
from appliance.rules.tv import game


def setup(n=3, row=None, preset=None, **kw):
    row = row or [q(100), q(200), q(300)]
    pkg = package([[row, [q(100), q(200), q(300)]]])
    s = {"players": [f"P{i}" for i in range(n)], "package": pkg, "first_chooser": 0, **kw}
    if preset:
        s["preset"] = preset
    return s


def test_a_choice_named_for_someone_else_than_the_chooser_is_refused():
    d = Driver(setup())
    r = d.refused("choose", theme=0, question=0, player=1)
    assert r.code == "not_chooser" and "P0" in r.message_en
    assert d.refused("choose", theme=0, question=0, player=9).code == "unknown_player"
    d.do("choose", theme=0, question=0, player=0)  # the chooser's own, or unnamed: accepted
    assert d.state.play is not None and d.state.play.opener == 0


def test_a_poor_openers_auction_bid_is_a_logged_bid_event():
    d = Driver(setup(row=[q(500, "auction"), q(200), q(300)]))
    events = d.do("choose", theme=0, question=0)  # P0 has 0 < 500
    bids = [e for e in events if e.type == "bid"]
    assert len(bids) == 1 and bids[0].data["player"] == 0 and bids[0].data["auto"] is True
    assert bids[0].data["amount"] == 500
    a = d.state.play.auction
    assert a.leader == 0 and a.bid == 500 and a.history[0] == (0, "auto_bid", 500)
    assert d.replayed() == d.state


def test_an_old_log_without_the_bid_event_folds_to_the_same_auction():
    d = Driver(setup(row=[q(500, "auction"), q(200), q(300)]))
    events = d.do("choose", theme=0, question=0)
    old = [e for e in events if e.type != "bid"]
    chosen = old[0]
    old[0] = type(chosen)(chosen.type, chosen.t_ns,
                          {k: v for k, v in chosen.data.items() if k != "bids_logged"})
    s = game.initial(d.setup)
    for e in old:
        s = game.evolve(s, e)
    assert s.play.auction == d.state.play.auction


def test_the_host_sets_the_bidding_order():
    d = Driver(setup(n=4, preset="club", row=[q(100), q(200), q(300, "auction")]))
    for p in (0, 1, 2, 3):
        d.do("set_score", player=p, score=1000)
    d.do("choose", theme=0, question=2)
    a = d.state.play.auction
    assert a.turn == 0
    act = {x.type: x for x in game.legal_actions(d.state)}["bid_order"]
    assert [0, 3, 2, 1] in [c["value"] for c in act.args["order"]]
    d.do("bid_order", order=[0, 3, 2, 1])
    d.do("bid", player=0, amount=300)
    assert d.state.play.auction.turn == 3  # the host's order, not the rule's seat 1
    d.do("pass", player=3)
    assert d.state.play.auction.turn == 2
    r = d.refused("bid_order", order=[0, 1, 1, 2])
    assert r.code == "bad_order"
    # docs/protocol-tv.md: every seat once, the opener first
    r = d.refused("bid_order", order=[2, 0, 3, 1])
    assert r.code == "bad_order" and "открывший" in r.message_ru and "opened" in r.message_en
    assert not act.confirm  # the order is shown, not asked twice
    assert d.replayed() == d.state


def test_default_bidding_order_is_unchanged():
    d = Driver(setup(n=4, preset="club", row=[q(100), q(200), q(300, "auction")]))
    for p in (0, 1, 2, 3):
        d.do("set_score", player=p, score=1000)
    d.do("choose", theme=0, question=2)
    d.do("bid", player=0, amount=300)
    assert d.state.play.auction.turn == 1  # equal scores: the nearest seat to the right


def test_an_answer_countdown_that_runs_out_prompts_the_host_and_judges_nothing():
    d = Driver(setup(preset="club", settings={"answer_s": 5}))
    d.choose(0, 0)
    d.do("lamp")
    d.press(1, 100)
    d.settle()
    play = d.state.play
    due = game.next_deadline(d.state)
    assert due == play.race.winner_ns + 5000 * MS
    assert game.view(d.state, "board")["question"]["time_up"] is False
    events = game.decide(d.state, Command("timeout", due, {}, "loop"))
    assert [e.type for e in events] == ["answer_time_up"]
    for e in events:
        d.state = game.evolve(d.state, e)
    d.events += events
    assert d.state.phase == "answering" and d.state.scores == (0, 0, 0)
    for role in ("board", "host"):
        assert game.view(d.state, role)["question"]["time_up"] is True
    assert game.next_deadline(d.state) is None  # prompted once, not again
    d.do("judge", verdict="wrong")
    d.do("lamp")
    d.press(2, 100)
    d.settle()
    assert game.view(d.state, "host")["question"]["time_up"] is False  # a fresh countdown
    assert d.replayed() == d.state
