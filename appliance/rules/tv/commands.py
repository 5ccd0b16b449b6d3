"""The TV game's commands: each handler validates one command against the state and returns
its events, or raises `Refused` with a reason in Russian and English. No state changes here:
folding the events is `folds`' job, automatic follow-ups are `game.decide`'s.
"""

from __future__ import annotations

from typing import Any

from appliance.packages.model import Kind
from appliance.rules import arbiter, kit, undo
from appliance.rules.protocol import Command, Event, Refused
from appliance.rules.tv import auction as auc
from appliance.rules.tv import checks as ck
from appliance.rules.tv import final as fin
from appliance.rules.tv.board import (
    cat_price_allowed,
    playable,
)
from appliance.rules.tv.corrections import (
    finish,
    hand_over,
    rejudge,
    remove_question,
    reopen,
    replace_question,
    set_chooser,
    set_score,
)
from appliance.rules.tv.deadlines import answer_deadline, press_deadline
from appliance.rules.tv.state import (
    QUESTION_PHASES,
    Phase,
    Stage,
    State,
)


# host: choosing ---------------------------------------------------------------------
def _pick_chooser(state: State, cmd: Command) -> list[Event]:
    ck.in_phase(state, Phase.PICK_CHOOSER, ru="выбирающий уже назначен",
              en="the chooser is already set")
    p = ck.candidate(state, cmd, "Этот игрок не может выбирать первым",
                     "This player cannot choose first")
    return [ck.event("chooser", cmd, player=p)]


def _choose(state: State, cmd: Command) -> list[Event]:
    ck.in_phase(state, Phase.CHOOSE, ru="вопрос уже выбран или раунд не идёт",
              en="a question is in play or no round is on")
    if "player" in cmd.args and ck.seat(state, cmd) != state.chooser:
        who = state.players[state.chooser] if state.chooser is not None else "—"
        raise Refused(f"Сейчас выбирает {who}.", f"{who} chooses now.", "not_chooser")
    t, q = ck.cell(cmd)
    cid = (state.round, t, q)
    if not state.board.has(cid) or not playable(state.board.cell(cid)):
        raise Refused("На табло нет такого вопроса.", "There is no such question on the board.")
    if cid in state.played:
        raise Refused("Этот вопрос уже сыгран.", "This question has already been played.")
    cell = state.board.cell(cid)
    data: dict[str, Any] = {"round": state.round, "theme": t, "question": q,
                            "kind": str(cell.kind), "value": cell.value,
                            "opener": state.chooser}
    if cell.kind == Kind.AUCTION:
        # A poor opener's bid follows as its own `bid` event (game.decide's automatic
        # events); logs written before this flag made that bid inside the `chosen` fold.
        data["bids_logged"] = True
    return [Event("chosen", cmd.t_ns, data)]


def _end_round(state: State, cmd: Command) -> list[Event]:
    if state.stage != Stage.ROUND:
        raise ck.not_now("раунд не идёт", "no round is on")
    ck.in_phase(state, Phase.CHOOSE, Phase.PICK_CHOOSER, ru="сначала закройте вопрос",
              en="close the question first")
    return [ck.event("round_ended", cmd, round=state.round, early=bool(state.open_cells()))]


# host: a question with buttons -------------------------------------------------------
def _lamp(state: State, cmd: Command) -> list[Event]:
    ck.in_phase(state, Phase.READING, Phase.AFTER_WRONG, ru="лампа горит или вопрос не читается",
              en="the lamp is on or no question is being read")
    return [ck.event("lamp", cmd)]


def _press(state: State, cmd: Command) -> list[Event]:
    p = ck.seat(state, cmd)
    play = state.play
    if play is None or play.race is None or state.phase not in QUESTION_PHASES:
        return []  # a stray press between questions: nothing to decide
    out = []
    race = play.race
    due = race.settle_deadline()
    if due is not None and cmd.arrival_ns >= due:
        # a deadline the loop has not fed yet comes first (the loop's own ordering rule)
        out.append(Event("settled", due, {}))
        race = arbiter.settle(race, due)
    race = arbiter.press(race, p, cmd.t_ns, cmd.by)
    out.append(ck.event("pressed", cmd, player=p, by=cmd.by))
    due = race.settle_deadline()
    if due is not None and cmd.arrival_ns >= due:
        out.append(Event("settled", cmd.arrival_ns, {}))
    return out


def _timeout(state: State, cmd: Command) -> list[Event]:
    play = state.play
    if play is None or play.race is None:
        return []
    due = play.race.settle_deadline()
    if due is not None and cmd.t_ns >= due:
        return [ck.event("settled", cmd)]
    window = press_deadline(state)
    if window is not None and cmd.t_ns >= window:
        return [ck.event("question_closed", cmd, outcome="timeout")]
    answer = answer_deadline(state)
    if answer is not None and cmd.t_ns >= answer:
        return [ck.event("answer_time_up", cmd, player=play.answerer)]
    return []


def _judge(state: State, cmd: Command) -> list[Event]:
    verdict = ck.verdict(cmd)
    play = state.play
    if state.phase == Phase.WRITING and play and play.written:
        p = ck.seat(state, cmd)
        w = play.written
        if p not in w.players:
            raise Refused("Этот игрок не отвечает на этот вопрос.",
                          "This player does not answer this question.")
        if p not in w.unjudged():
            raise Refused("Ответ этого игрока уже оценён; исправление — rejudge.",
                          "This player's answer is already judged; use rejudge to correct.")
        if p not in dict(w.answers):
            # A verdict is also the reveal of the answer: nothing written, nothing to judge.
            # A player who wrote nothing gets an empty answer recorded by the host first.
            raise Refused("Ответ этого игрока ещё не записан: сначала «Записать ответ»"
                          " (пустой, если он ничего не написал).",
                          "This player's answer has not been written yet: record it first"
                          " (an empty one if nothing was written).")
        stake = play.value if not w.needs_bets else int(w.bet(p) or 0)
        return [ck.event("judged", cmd, player=p, verdict=verdict, plus=stake, minus=stake)]
    if state.phase != Phase.ANSWERING:
        raise kit.nobody_answers()
    assert play is not None and play.answerer is not None
    p = play.answerer
    if "player" in cmd.args and cmd.args["player"] != p:
        raise Refused(f"Сейчас отвечает игрок {p + 1}.", f"Player {p + 1} is answering now.")
    if play.kind == Kind.NO_RISK:
        plus, minus = play.value * play.factor, 0
    else:
        plus = minus = play.value
    return [ck.event("judged", cmd, player=p, verdict=verdict, plus=plus, minus=minus)]


def _close(state: State, cmd: Command) -> list[Event]:
    ck.in_phase(state, Phase.READING, Phase.BUTTONS, Phase.AFTER_WRONG,
              ru="закрыть можно вопрос без отвечающего",
              en="only a question nobody is answering can be closed")
    return [ck.event("question_closed", cmd, outcome="nobody")]


def _skip(state: State, cmd: Command) -> list[Event]:
    if state.stage == Stage.FINAL or state.phase not in QUESTION_PHASES:
        raise ck.not_now("нет вопроса, который можно пропустить",
                            "there is no question to skip")
    return [ck.event("question_closed", cmd, outcome="skipped")]


# host: cat in the bag ----------------------------------------------------------------
def _give(state: State, cmd: Command) -> list[Event]:
    ck.in_phase(state, Phase.CAT_GIVE, ru="кота сейчас не отдают", en="no cat is being given")
    p = ck.seat(state, cmd)
    play = state.play
    assert play is not None
    if p == play.opener and not _may_keep(state):
        raise Refused("Кота в мешке нужно отдать сопернику.",
                      "A cat in the bag must be given to an opponent.")
    return [ck.event("cat_given", cmd, player=p)]


def _may_keep(state: State) -> bool:
    play = state.play
    cat = play.question.cat if play and play.question else None
    return state.settings.cat_to_self or bool(cat and cat.may_keep)


def _cat_price(state: State, cmd: Command) -> list[Event]:
    ck.in_phase(state, Phase.CAT_PRICE, ru="стоимость кота не выбирают",
              en="no cat value is being chosen")
    v = ck.number(cmd, "value")
    play = state.play
    assert play is not None and play.cell is not None
    if not cat_price_allowed(state.board.cell(play.cell), v):
        raise Refused(f"Такой стоимости нет среди предложенных: {v}.",
                      f"That value is not among those offered: {v}.")
    return [ck.event("cat_priced", cmd, value=v)]


# host: auction -----------------------------------------------------------------------
def _auction(state: State) -> auc.Auction:
    if state.phase != Phase.AUCTION or state.play is None or state.play.auction is None:
        raise ck.not_now("торгов нет", "there is no bidding")
    return state.play.auction


def _bid(state: State, cmd: Command) -> list[Event]:
    a = _auction(state)
    p = ck.seat(state, cmd)
    amount = ck.number(cmd, "amount")
    all_in = auc.check_bid(a, p, amount, state.settings.auction_step, state.scores)
    return [ck.event("bid", cmd, player=p, amount=amount, all_in=all_in)]


def _all_in(state: State, cmd: Command) -> list[Event]:
    a = _auction(state)
    p = ck.seat(state, cmd)
    amount = auc.check_all_in(a, p, state.scores)
    return [ck.event("bid", cmd, player=p, amount=amount, all_in=True)]


def _bid_order(state: State, cmd: Command) -> list[Event]:
    a = _auction(state)
    if a.turn is None:
        raise kit.out_of_phase("торги окончены", "the bidding is over")
    order = cmd.args.get("order")
    if (not isinstance(order, list) or any(isinstance(p, bool) or not isinstance(p, int)
                                           for p in order)
            or sorted(order) != list(range(state.seats))):
        raise Refused("Порядок торгов — все игроки по одному разу.",
                      "The bidding order names every player once.", "bad_order")
    if order[0] != a.opener:  # docs/protocol-tv.md: the opener first
        who = state.players[a.opener]
        raise Refused(f"Торги начинает открывший аукцион: {who}.",
                      f"The bidding starts with the player who opened the auction: {who}.",
                      "bad_order")
    return [ck.event("bid_order", cmd, order=list(order))]


def _pass(state: State, cmd: Command) -> list[Event]:
    a = _auction(state)
    p = ck.seat(state, cmd)
    auc.check_pass(a, p)
    return [ck.event("passed", cmd, player=p)]


# host or phones: written answers and bets ----------------------------------------------
def _bet(state: State, cmd: Command) -> list[Event]:
    ck.in_phase(state, Phase.BETS, ru="ставки не принимаются", en="no bets are being taken")
    p = ck.seat(state, cmd)
    w = state.play.written if state.play else None
    assert w is not None
    if p not in w.players:
        raise Refused("Этот игрок не играет этот вопрос.", "This player is not in this question.")
    amount = ck.number(cmd, "amount")
    fin.check_bet(state.scores, p, amount)
    return [ck.event("bet", cmd, player=p, amount=amount)]


def _write(state: State, cmd: Command) -> list[Event]:
    ck.in_phase(state, Phase.WRITING, ru="письменные ответы не принимаются",
              en="no written answers are being taken")
    p = ck.seat(state, cmd)
    w = state.play.written if state.play else None
    assert w is not None
    if p not in w.players:
        raise Refused("Этот игрок не отвечает на этот вопрос.",
                      "This player does not answer this question.")
    if p not in w.unjudged():
        raise Refused("Ответ уже оценён.", "The answer is already judged.")
    text = cmd.args.get("text")
    if not isinstance(text, str):
        raise Refused("Нужен текст ответа.", "The answer text is needed.")
    return [ck.event("written", cmd, player=p, text=text[:500])]


# host: final round and shootout ------------------------------------------------------
def _pick_remover(state: State, cmd: Command) -> list[Event]:
    ck.in_phase(state, Phase.FINAL_ORDER, ru="порядок уже определён", en="the order is set")
    p = ck.candidate(state, cmd, "Сейчас убирает тему игрок с наименьшей суммой",
                     "The lowest score removes next")
    return [ck.event("remover_ordered", cmd, player=p)]


def _remove_theme(state: State, cmd: Command) -> list[Event]:
    ck.in_phase(state, Phase.FINAL_REMOVE, ru="темы финала не убирают",
              en="final themes are not being removed")
    f, final = state.final, state.board.final
    assert f is not None and final is not None
    t = ck.number(cmd, "theme")
    if t not in f.remaining(len(final.themes)):
        raise Refused("Такой темы нет среди оставшихся.", "No such theme is left.")
    by = fin.remover(f.order, len(f.removed))
    if "player" in cmd.args and cmd.args["player"] != by:
        raise Refused(f"Сейчас убирает тему игрок {by + 1}.",
                      f"Player {by + 1} removes a theme now.")
    return [ck.event("theme_removed", cmd, theme=t, player=by)]


def _shootout_theme(state: State, cmd: Command) -> list[Event]:
    ck.in_phase(state, Phase.SHOOTOUT_THEME, ru="тему перестрелки не выбирают",
              en="no shootout theme is being chosen")
    src = cmd.args.get("theme")
    if src == "host":
        return [ck.event("shootout_theme", cmd, source="host")]
    try:
        r, t = (int(x) for x in str(src).split(":"))
    except ValueError as e:
        raise Refused("Тема — «раунд:тема» или «host» (вопросы ведущего).",
                      "The theme is 'round:theme' or 'host' (the host's own questions).") from e
    if (r, t) not in state.shootout_sources():
        raise Refused("В этой теме нет несыгранных вопросов.",
                      "This theme has no unplayed questions.")
    return [ck.event("shootout_theme", cmd, source="board", round=r, theme=t)]


HANDLERS = {
    "pick_chooser": _pick_chooser, "set_chooser": set_chooser, "choose": _choose,
    "end_round": _end_round, "reopen": reopen, "lamp": _lamp, "press": _press,
    "timeout": _timeout, "judge": _judge, "close": _close, "skip": _skip, "give": _give,
    "cat_price": _cat_price, "bid": _bid, "all_in": _all_in, "pass": _pass,
    "bid_order": _bid_order, "remove_question": remove_question,
    "replace_question": replace_question, "bet": _bet,
    "write": _write, "pick_remover": _pick_remover, "remove_theme": _remove_theme,
    "shootout_theme": _shootout_theme, "undo": undo.decide, "set_score": set_score,
    "rejudge": rejudge, "finish": finish, "hand_over": hand_over,
}
