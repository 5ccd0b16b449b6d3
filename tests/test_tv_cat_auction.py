"""Cat in the bag, auction, and the other SIQ kinds (no_risk, for_all, stake_all)."""

from __future__ import annotations

from tvkit import Driver, cat, package, q

from appliance.rules.tv import game


def setup(n=3, row=None, preset=None, **kw):
    row = row or [q(100), q(200), q(300)]
    pkg = package([[row, [q(100), q(200), q(300)]]])
    s = {"players": [f"P{i}" for i in range(n)], "package": pkg, "first_chooser": 0, **kw}
    if preset or n != 3:
        s["preset"] = preset or "club"
    return s


# -- cat in the bag -----------------------------------------------------------------------
def test_cat_must_go_to_an_opponent_then_theme_and_value_are_revealed():
    d = Driver(setup(row=[cat(300, theme="Коты-воители", values=[400])]))
    d.choose(0, 0)
    assert d.state.phase == "cat_give"
    board = game.view(d.state, "board")["question"]
    assert board["kind"] == "cat" and board["theme"] == "" and board["value"] is None
    assert "text" not in board or board["text"] == ""
    e = d.refused("give", player=0)
    assert "сопернику" in e.message_ru and "opponent" in e.message_en
    assert [c["value"] for c in d.actions()["give"].args["player"]] == [1, 2]
    d.do("give", player=2)
    board = game.view(d.state, "board")["question"]
    assert board["theme"] == "Коты-воители" and board["value"] == 400
    assert board["text"].startswith("CAT-TEXT")  # the room reads it as it is answered
    assert "CAT-TEXT" in str(game.view(d.state, "player:1"))
    assert "CAT-ANSWER" not in str(game.view(d.state, "board"))
    assert "CAT-TEXT" in str(game.view(d.state, "host"))
    assert "close" not in d.actions()  # the receiver must answer: no answer is wrong
    d.do("judge", verdict="wrong")
    assert d.scores == [0, 0, -400] and d.state.chooser == 0  # the choice stays with the opener
    assert "CAT-ANSWER" in str(game.view(d.state, "board"))  # revealed once closed


def test_cat_right_answer_still_leaves_the_choice_with_the_opener():
    d = Driver(setup(row=[cat(300, values=[300])]))
    d.choose(0, 0)
    d.do("give", player=1)
    d.do("judge", verdict="right")
    assert d.scores == [0, 300, 0] and d.state.chooser == 0


def test_cat_to_oneself_where_the_package_allows():
    d = Driver(setup(row=[cat(300, values=[300], may_keep=True)]))
    d.choose(0, 0)
    assert [c["value"] for c in d.actions()["give"].args["player"]] == [0, 1, 2]
    d.do("give", player=0)
    d.do("judge", verdict="right")
    assert d.scores == [300, 0, 0]


def test_cat_with_a_price_choice_is_priced_by_the_receiver():
    d = Driver(setup(row=[cat(300, low=100, high=500, step=100)]))
    d.choose(0, 0)
    d.do("give", player=1)
    assert d.state.phase == "cat_price"
    choices = [c["value"] for c in d.actions()["cat_price"].args["value"]]
    assert choices == [100, 200, 300, 400, 500]
    assert game.view(d.state, "board")["question"]["value"] is None
    d.refused("cat_price", value=250)
    d.refused("cat_price", value=600)
    d.do("cat_price", value=500)
    d.do("judge", verdict="right")
    assert d.scores == [0, 500, 0]


def test_cat_min_or_max_of_the_round():
    d = Driver(setup(row=[cat(300, values=[100, 500])]))
    d.choose(0, 0)
    d.do("give", player=2)
    assert [c["value"] for c in d.actions()["cat_price"].args["value"]] == [100, 500]
    d.do("cat_price", value=100)
    d.do("judge", verdict="wrong")
    assert d.scores == [0, 0, -100]


def test_cat_with_a_public_price_shows_its_value_before_it_is_given():
    row = [cat(300, values=[400])]
    row[0].cat.public_price = True
    d = Driver(setup(row=row))
    d.choose(0, 0)
    board = game.view(d.state, "board")["question"]
    assert board["value"] == 400 and board["theme"] == ""


def test_cat_with_no_question_just_gives_the_value():
    d = Driver(setup(row=[cat(300, values=[300], no_question=True)]))
    d.choose(0, 0)
    d.do("give", player=1)
    assert d.scores == [0, 300, 0] and d.state.phase == "choose"


# -- auction ------------------------------------------------------------------------------
def auction_game(scores, n=None, value=300, opener=0):
    n = n or len(scores)
    d = Driver(setup(n=n, row=[q(value, "auction", text="AUCTION-TEXT")], first_chooser=opener))
    for p, s in enumerate(scores):
        d.do("set_score", player=p, score=s)
    d.choose(0, 0)
    return d


def auction(d):
    return d.state.play.auction


def test_opener_below_the_value_bids_the_value_automatically():
    d = auction_game([100, 500, 800])
    a = auction(d)
    assert a.bid == 300 and a.leader == 0 and a.history[0] == (0, "auto_bid", 300)
    assert a.turn == 1  # the smaller score speaks next
    d.do("pass", player=1)
    d.do("pass", player=2)
    assert d.state.phase == "answering" and d.state.play.answerer == 0
    assert d.state.play.value == 300
    d.do("judge", verdict="wrong")
    assert d.scores == [-200, 500, 800] and d.state.chooser == 0


def test_opener_bids_first_and_cannot_pass():
    d = auction_game([1000, 500, 800])
    assert auction(d).turn == 0
    e = d.refused("pass", player=0)
    assert "пас" in e.message_ru and "cannot pass" in e.message_en
    assert "pass" not in d.actions()
    d.refused("bid", player=0, amount=200)  # below the value
    d.refused("bid", player=1, amount=400)  # not their word
    d.do("bid", player=0, amount=400)
    assert auction(d).turn == 1


def test_auction_won_by_another_player_leaves_the_choice_with_the_opener():
    d = auction_game([1000, 900, 800])
    d.do("bid", player=0, amount=300)
    d.do("bid", player=2, amount=400)
    d.do("pass", player=1)
    d.do("pass", player=0)
    assert d.state.play.answerer == 2
    d.do("judge", verdict="right")
    assert d.scores == [1000, 900, 1200] and d.state.chooser == 0


def test_opener_corrected_below_the_value_mid_auction_bids_it_automatically():
    d = auction_game([1000, 900, 800])
    d.do("set_score", player=0, score=100)
    a = auction(d)
    assert a.leader == 0 and a.bid == 300 and a.history[-1] == (0, "auto_bid", 300)


def test_bids_are_multiples_of_100_and_exceed_the_last():
    d = auction_game([1000, 900, 800])
    d.do("bid", player=0, amount=300)
    assert auction(d).turn == 2  # 800 < 900
    e = d.refused("bid", player=2, amount=350)
    assert "кратна 100" in e.message_ru and "multiple of 100" in e.message_en
    d.refused("bid", player=2, amount=300)
    d.refused("bid", player=2, amount=900)  # above the score
    spec = d.actions()["bid"].args["amount"]
    assert spec == {"type": "int", "min": 400, "max": 700, "step": 100}
    d.do("bid", player=2, amount=500)
    assert auction(d).turn == 1
    d.do("pass", player=1)
    assert auction(d).turn == 0
    d.do("bid", player=0, amount=600)
    d.do("pass", player=2)
    assert d.state.play.answerer == 0 and d.state.play.value == 600
    d.do("judge", verdict="right")
    assert d.scores == [1600, 900, 800] and d.state.chooser == 0


def test_all_in_is_beaten_only_by_a_larger_all_in():
    d = auction_game([1000, 1200, 700])
    d.do("bid", player=0, amount=300)
    assert auction(d).turn == 2
    d.do("all_in", player=2)  # 700
    assert auction(d).all_in and auction(d).bid == 700
    assert auction(d).turn == 0  # 1000 < 1200
    assert "bid" not in d.actions()  # only all-in or pass now
    d.refused("bid", player=0, amount=800)
    d.do("bid", player=0, amount=1000)  # bidding the whole score is all-in
    assert auction(d).all_in and auction(d).leader == 0
    # player 2 (700, the smaller score) cannot beat an all-in of 1000: passed automatically
    assert 2 in auction(d).passed and auction(d).turn == 1
    d.do("all_in", player=1)
    assert auction(d).leader == 1 and auction(d).bid == 1200
    # the opener (1000) cannot beat 1200 either: the auction is won
    assert d.state.phase == "answering" and d.state.play.answerer == 1
    d.do("judge", verdict="wrong")
    assert d.scores == [1000, 0, 700] and d.state.chooser == 0


def test_equal_scores_give_the_word_to_the_right_of_the_opener_three_players():
    d = auction_game([1000, 500, 600], opener=1)
    d.do("bid", player=1, amount=300)
    assert auction(d).turn == 2  # the smaller score first (600 < 1000)
    d = auction_game([500, 1000, 500], opener=1)
    d.do("bid", player=1, amount=300)
    assert auction(d).turn == 2  # 0 and 2 tie: 2 stands right of the opener
    d = auction_game([500, 500, 1000], opener=2)
    d.do("bid", player=2, amount=300)
    assert auction(d).turn == 0  # 0 and 1 tie: right of 2 wraps round to 0
    d.do("pass", player=0)
    assert auction(d).turn == 1


def test_equal_scores_right_of_the_opener_four_players():
    d = auction_game([400, 400, 900, 400], opener=2)
    d.do("bid", player=2, amount=300)
    assert auction(d).turn == 3  # 0, 1, 3 tie: 3 is next right of 2
    d.do("pass", player=3)
    assert auction(d).turn == 0  # then wrapping round: 0
    d.do("bid", player=0, amount=400)  # all-in: 400 is the whole score
    assert auction(d).all_in
    assert auction(d).turn == 2  # 1 (400) cannot beat an all-in of 400: passed
    assert 1 in auction(d).passed


def test_auction_board_view_shows_the_bidding_then_the_text_once_won():
    d = auction_game([1000, 500, 800])
    board = game.view(d.state, "board")
    assert "AUCTION-TEXT" not in str(board)  # not while it is bid for
    assert board["question"]["auction"]["turn"] == 0
    d.do("bid", player=0, amount=300)
    d.do("pass", player=1)
    assert "AUCTION-TEXT" not in str(game.view(d.state, "board"))
    d.do("pass", player=2)
    # Won: the room reads the question while the winner answers (issue 25).
    assert "AUCTION-TEXT" in str(game.view(d.state, "board"))
    assert "AUCTION-TEXT" in str(game.view(d.state, "host"))


# -- other kinds --------------------------------------------------------------------------
def test_no_risk_is_asked_to_the_opener_right_doubles_wrong_costs_nothing():
    d = Driver(setup(row=[q(300, "no_risk"), q(200, "no_risk")]))
    d.choose(0, 0)
    assert d.state.phase == "answering" and d.state.play.answerer == 0
    d.do("judge", verdict="right")
    assert d.scores == [600, 0, 0]
    d.choose(0, 1)
    d.do("judge", verdict="wrong")
    assert d.scores == [600, 0, 0] and d.state.chooser == 0


def test_for_all_everyone_answers_in_writing():
    d = Driver(setup(row=[q(200, "for_all", answer="SECRET")]))
    d.choose(0, 0)
    assert d.state.phase == "writing"
    d.do("write", player=1, text="мой ответ")
    board = game.view(d.state, "board")
    assert "мой ответ" not in str(board) and "SECRET" not in str(board)
    assert "мой ответ" in str(game.view(d.state, "player:1"))
    assert "мой ответ" not in str(game.view(d.state, "player:2"))
    d.do("judge", player=1, verdict="right")
    assert "мой ответ" in str(game.view(d.state, "board"))  # judged = revealed
    d.refused("judge", player=1, verdict="wrong")
    d.refused("judge", player=0, verdict="wrong")  # not written yet
    for p in (0, 2):
        d.do("write", player=p, text="")
        d.do("judge", player=p, verdict="wrong")
    assert d.scores == [-200, 200, -200] and d.state.phase == "choose" and d.state.chooser == 0


def test_stake_all_bets_secretly_positive_scores_only():
    d = Driver(setup(row=[q(200, "stake_all")]))
    d.do("set_score", player=0, score=500)
    d.do("set_score", player=1, score=300)
    d.do("set_score", player=2, score=-100)
    d.choose(0, 0)
    assert d.state.phase == "bets" and d.state.play.written.players == (0, 1)
    d.refused("bet", player=2, amount=1)
    d.refused("bet", player=0, amount=600)
    d.do("bet", player=0, amount=450)
    assert "450" not in str(game.view(d.state, "board")["question"])
    assert "450" in str(game.view(d.state, "player:0")["question"])
    d.do("bet", player=1, amount=300)
    assert d.state.phase == "writing"
    for p in (0, 1):
        d.do("write", player=p, text="ответ")
    d.do("judge", player=0, verdict="wrong")
    d.do("judge", player=1, verdict="right")
    assert d.scores == [50, 600, -100]
