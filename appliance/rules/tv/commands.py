"""The TV game's commands: each handler validates one command against the state and returns
its events, or raises `Refused` with a reason in Russian and English. No state changes here:
folding the events is `folds`' job, automatic follow-ups are `game.decide`'s.
"""

from __future__ import annotations

from typing import Any

from appliance.packages.model import Kind
from appliance.rules import arbiter, kit
from appliance.rules.protocol import Command, Event, Refused
from appliance.rules.tv import auction as auc
from appliance.rules.tv import final as fin
from appliance.rules.tv.board import (
    cat_price_allowed,
    playable,
)
from appliance.rules.tv.deadlines import answer_deadline, press_deadline
from appliance.rules.tv.state import (
    QUESTION_PHASES,
    Phase,
    Play,
    Stage,
    State,
    late_press,
)


def _ev(type_: str, cmd: Command, **data: Any) -> Event:
    return Event(type_, cmd.t_ns, data)


LIMIT = 10**9  # the largest number a TV command carries (scores, bids, bets, values)


def _refuse_phase(what_ru: str, what_en: str) -> Refused:
    return kit.out_of_phase(what_ru, what_en)


def _seat(state: State, cmd: Command, key: str = "player") -> int:
    return kit.seat(cmd.args.get(key), state.seats)


def _int(cmd: Command, key: str, limit: int = LIMIT) -> int:
    ru, en = kit.NUMBER_NAMES.get(key, (key, key))
    return kit.whole(cmd.args.get(key), ru, en, -limit, limit)


def _cell(cmd: Command) -> tuple[int, int]:
    """A board cell as ``theme`` and ``question`` indices, or as one ``cell: "t:q"``."""
    if "cell" in cmd.args:
        try:
            t, q = (int(x) for x in str(cmd.args["cell"]).split(":"))
        except ValueError as e:
            raise Refused("Клетка — «тема:вопрос».", "A cell is 'theme:question'.") from e
        return t, q
    return _int(cmd, "theme"), _int(cmd, "question")


def _verdict(cmd: Command) -> str:
    return kit.verdict(cmd.args.get("verdict"))


def _in_phase(state: State, *phases: str, ru: str, en: str) -> None:
    if state.phase not in phases:
        raise _refuse_phase(ru, en)


# host: choosing ---------------------------------------------------------------------
def _pick_chooser(state: State, cmd: Command) -> list[Event]:
    _in_phase(state, Phase.PICK_CHOOSER, ru="выбирающий уже назначен",
              en="the chooser is already set")
    p = _seat(state, cmd)
    if p not in state.candidates:
        raise Refused("Этот игрок не может выбирать первым: выберите из предложенных.",
                      "This player cannot choose first: pick one of those offered.")
    return [_ev("chooser", cmd, player=p)]


def _set_chooser(state: State, cmd: Command) -> list[Event]:
    if state.stage != Stage.ROUND:
        raise _refuse_phase("выбирающий есть только в раундах", "there is a chooser in rounds only")
    if state.phase == Phase.PICK_CHOOSER:
        raise _refuse_phase("ведущий выбирает первого из предложенных (pick_chooser)",
                            "the host picks the first chooser among those offered "
                            "(pick_chooser)")
    p = _seat(state, cmd)
    if p == state.chooser:
        raise Refused("Этот игрок уже выбирает.", "This player already chooses.")
    return [_ev("chooser", cmd, player=p, correction=True)]


def _choose(state: State, cmd: Command) -> list[Event]:
    _in_phase(state, Phase.CHOOSE, ru="вопрос уже выбран или раунд не идёт",
              en="a question is in play or no round is on")
    if "player" in cmd.args and _seat(state, cmd) != state.chooser:
        who = state.players[state.chooser] if state.chooser is not None else "—"
        raise Refused(f"Сейчас выбирает {who}.", f"{who} chooses now.", "not_chooser")
    t, q = _cell(cmd)
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
        raise _refuse_phase("раунд не идёт", "no round is on")
    _in_phase(state, Phase.CHOOSE, Phase.PICK_CHOOSER, ru="сначала закройте вопрос",
              en="close the question first")
    return [_ev("round_ended", cmd, round=state.round, early=bool(state.open_cells()))]


def _reopen(state: State, cmd: Command) -> list[Event]:
    if state.stage != Stage.ROUND:
        raise _refuse_phase("раунд не идёт", "no round is on")
    _in_phase(state, Phase.CHOOSE, Phase.PICK_CHOOSER, ru="сначала закройте вопрос",
              en="close the question first")
    t, q = _cell(cmd)
    cid = (state.round, t, q)
    if not state.board.has(cid) or not playable(state.board.cell(cid)):
        raise Refused("На табло нет такого вопроса.", "There is no such question on the board.")
    if cid not in state.played:
        raise Refused("Этот вопрос ещё не сыгран.", "This question has not been played.")
    return [_ev("reopened", cmd, round=state.round, theme=t, question=q)]


# host: a question with buttons -------------------------------------------------------
def _lamp(state: State, cmd: Command) -> list[Event]:
    _in_phase(state, Phase.READING, Phase.AFTER_WRONG, ru="лампа горит или вопрос не читается",
              en="the lamp is on or no question is being read")
    return [_ev("lamp", cmd)]


def _press(state: State, cmd: Command) -> list[Event]:
    p = _seat(state, cmd)
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
    out.append(_ev("pressed", cmd, player=p, by=cmd.by))
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
        return [_ev("settled", cmd)]
    window = press_deadline(state)
    if window is not None and cmd.t_ns >= window:
        return [_ev("question_closed", cmd, outcome="timeout")]
    answer = answer_deadline(state)
    if answer is not None and cmd.t_ns >= answer:
        return [_ev("answer_time_up", cmd, player=play.answerer)]
    return []


def _judge(state: State, cmd: Command) -> list[Event]:
    verdict = _verdict(cmd)
    play = state.play
    if state.phase == Phase.WRITING and play and play.written:
        p = _seat(state, cmd)
        w = play.written
        if p not in w.players:
            raise Refused("Этот игрок не отвечает на этот вопрос.",
                          "This player does not answer this question.")
        if p not in w.unjudged():
            raise Refused("Ответ этого игрока уже оценён; исправление — rejudge.",
                          "This player's answer is already judged; use rejudge to correct.")
        stake = play.value if not w.needs_bets else int(w.bet(p) or 0)
        return [_ev("judged", cmd, player=p, verdict=verdict, plus=stake, minus=stake)]
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
    return [_ev("judged", cmd, player=p, verdict=verdict, plus=plus, minus=minus)]


def _close(state: State, cmd: Command) -> list[Event]:
    _in_phase(state, Phase.READING, Phase.BUTTONS, Phase.AFTER_WRONG,
              ru="закрыть можно вопрос без отвечающего",
              en="only a question nobody is answering can be closed")
    return [_ev("question_closed", cmd, outcome="nobody")]


def _skip(state: State, cmd: Command) -> list[Event]:
    if state.stage == Stage.FINAL or state.phase not in QUESTION_PHASES:
        raise _refuse_phase("нет вопроса, который можно пропустить",
                            "there is no question to skip")
    return [_ev("question_closed", cmd, outcome="skipped")]


def flawed(state: State) -> tuple[bool, Play] | None:
    """The question a host may remove or replace as flawed: the one in play, or the one just
    closed while the chooser has not chosen again; (in play?, question). Rounds only (the
    final and the shootout have their own ways: skip, the host's own questions)."""
    if state.stage != Stage.ROUND:
        return None
    if state.phase in QUESTION_PHASES and state.play is not None:
        return True, state.play
    if state.phase == Phase.CHOOSE and state.last is not None and state.last.outcome != "removed":
        return False, state.last
    return None


def _removal(state: State, cmd: Command) -> list[Event]:
    target = flawed(state)
    if target is None:
        raise _refuse_phase("нет вопроса, который можно снять", "there is no question to remove")
    in_play, play = target
    refs = [j.ref for j in state.judgements[play.first_ref:] if not j.voided]
    return [_ev("question_removed", cmd, refs=refs, in_play=in_play,
                cell=list(play.cell) if play.cell else None)]


def _remove_question(state: State, cmd: Command) -> list[Event]:
    return _removal(state, cmd)


def _replace_question(state: State, cmd: Command) -> list[Event]:
    """Remove the flawed question and play, for the same opener, an unplayed question of this
    round the host picks (the package's unplayed material)."""
    events = _removal(state, cmd)
    t, q = _cell(cmd)
    cid = (state.round, t, q)
    if (not state.board.has(cid) or not playable(state.board.cell(cid))
            or cid in state.played):
        raise Refused("Замена — несыгранный вопрос этого раунда.",
                      "The replacement is an unplayed question of this round.", "bad_cell")
    target = flawed(state)
    assert target is not None
    cell = state.board.cell(cid)
    data: dict[str, Any] = {"round": state.round, "theme": t, "question": q,
                            "kind": str(cell.kind), "value": cell.value,
                            "opener": target[1].opener, "replaces": list(target[1].cell or ())}
    if cell.kind == Kind.AUCTION:
        data["bids_logged"] = True
    return events + [Event("chosen", cmd.t_ns, data)]


# host: cat in the bag ----------------------------------------------------------------
def _give(state: State, cmd: Command) -> list[Event]:
    _in_phase(state, Phase.CAT_GIVE, ru="кота сейчас не отдают", en="no cat is being given")
    p = _seat(state, cmd)
    play = state.play
    assert play is not None
    if p == play.opener and not _may_keep(state):
        raise Refused("Кота в мешке нужно отдать сопернику.",
                      "A cat in the bag must be given to an opponent.")
    return [_ev("cat_given", cmd, player=p)]


def _may_keep(state: State) -> bool:
    play = state.play
    cat = play.question.cat if play and play.question else None
    return state.settings.cat_to_self or bool(cat and cat.may_keep)


def _cat_price(state: State, cmd: Command) -> list[Event]:
    _in_phase(state, Phase.CAT_PRICE, ru="стоимость кота не выбирают",
              en="no cat value is being chosen")
    v = _int(cmd, "value")
    play = state.play
    assert play is not None and play.cell is not None
    if not cat_price_allowed(state.board.cell(play.cell), v):
        raise Refused(f"Такой стоимости нет среди предложенных: {v}.",
                      f"That value is not among those offered: {v}.")
    return [_ev("cat_priced", cmd, value=v)]


# host: auction -----------------------------------------------------------------------
def _auction(state: State) -> auc.Auction:
    if state.phase != Phase.AUCTION or state.play is None or state.play.auction is None:
        raise _refuse_phase("торгов нет", "there is no bidding")
    return state.play.auction


def _bid(state: State, cmd: Command) -> list[Event]:
    a = _auction(state)
    p = _seat(state, cmd)
    amount = _int(cmd, "amount")
    all_in = auc.check_bid(a, p, amount, state.settings.auction_step, state.scores)
    return [_ev("bid", cmd, player=p, amount=amount, all_in=all_in)]


def _all_in(state: State, cmd: Command) -> list[Event]:
    a = _auction(state)
    p = _seat(state, cmd)
    amount = auc.check_all_in(a, p, state.scores)
    return [_ev("bid", cmd, player=p, amount=amount, all_in=True)]


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
    return [_ev("bid_order", cmd, order=list(order))]


def _pass(state: State, cmd: Command) -> list[Event]:
    a = _auction(state)
    p = _seat(state, cmd)
    auc.check_pass(a, p)
    return [_ev("passed", cmd, player=p)]


# host or phones: written answers and bets ----------------------------------------------
def _bet(state: State, cmd: Command) -> list[Event]:
    _in_phase(state, Phase.BETS, ru="ставки не принимаются", en="no bets are being taken")
    p = _seat(state, cmd)
    w = state.play.written if state.play else None
    assert w is not None
    if p not in w.players:
        raise Refused("Этот игрок не играет этот вопрос.", "This player is not in this question.")
    amount = _int(cmd, "amount")
    fin.check_bet(state.scores, p, amount)
    return [_ev("bet", cmd, player=p, amount=amount)]


def _write(state: State, cmd: Command) -> list[Event]:
    _in_phase(state, Phase.WRITING, ru="письменные ответы не принимаются",
              en="no written answers are being taken")
    p = _seat(state, cmd)
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
    return [_ev("written", cmd, player=p, text=text[:500])]


# host: final round and shootout ------------------------------------------------------
def _pick_remover(state: State, cmd: Command) -> list[Event]:
    _in_phase(state, Phase.FINAL_ORDER, ru="порядок уже определён", en="the order is set")
    p = _seat(state, cmd)
    if p not in state.candidates:
        raise Refused("Сейчас убирает тему игрок с наименьшей суммой: выберите из предложенных.",
                      "The lowest score removes next: pick one of those offered.")
    return [_ev("remover_ordered", cmd, player=p)]


def _remove_theme(state: State, cmd: Command) -> list[Event]:
    _in_phase(state, Phase.FINAL_REMOVE, ru="темы финала не убирают",
              en="final themes are not being removed")
    f, final = state.final, state.board.final
    assert f is not None and final is not None
    t = _int(cmd, "theme")
    if t not in f.remaining(len(final.themes)):
        raise Refused("Такой темы нет среди оставшихся.", "No such theme is left.")
    by = fin.remover(f.order, len(f.removed))
    if "player" in cmd.args and cmd.args["player"] != by:
        raise Refused(f"Сейчас убирает тему игрок {by + 1}.",
                      f"Player {by + 1} removes a theme now.")
    return [_ev("theme_removed", cmd, theme=t, player=by)]


def _shootout_theme(state: State, cmd: Command) -> list[Event]:
    _in_phase(state, Phase.SHOOTOUT_THEME, ru="тему перестрелки не выбирают",
              en="no shootout theme is being chosen")
    src = cmd.args.get("theme")
    if src == "host":
        return [_ev("shootout_theme", cmd, source="host")]
    try:
        r, t = (int(x) for x in str(src).split(":"))
    except ValueError as e:
        raise Refused("Тема — «раунд:тема» или «host» (вопросы ведущего).",
                      "The theme is 'round:theme' or 'host' (the host's own questions).") from e
    if (r, t) not in state.shootout_sources():
        raise Refused("В этой теме нет несыгранных вопросов.",
                      "This theme has no unplayed questions.")
    return [_ev("shootout_theme", cmd, source="board", round=r, theme=t)]


# host: corrections -------------------------------------------------------------------
def _undo(state: State, cmd: Command) -> list[Event]:
    if state.prev is None:
        raise kit.nothing_to_undo()
    return [_ev("undone", cmd)]


def _set_score(state: State, cmd: Command) -> list[Event]:
    p = _seat(state, cmd)
    return [_ev("score_set", cmd, player=p, score=_int(cmd, "score", kit.SCORE_LIMIT))]


def _rejudge(state: State, cmd: Command) -> list[Event]:
    ref = kit.judgement_ref(cmd.args.get("ref"), len(state.judgements))
    verdict = _verdict(cmd)
    if state.judgements[ref].voided:
        raise Refused("Этот вопрос снят: оценка не считается.",
                      "That question was removed: the judgement does not count.", "voided")
    if state.judgements[ref].verdict == verdict:
        return []  # already so: rejudge sets a verdict, it does not toggle
    return [_ev("rejudged", cmd, ref=ref, verdict=verdict)]


def _finish(state: State, cmd: Command) -> list[Event]:
    """The host stops play early (the show's time is up): the leaders win as things stand.
    (Closing the game in the log is the loop's `end_game`.)"""
    return [_ev("game_over", cmd, winners=list(fin.leaders(state.scores)), by_host=True)]

def _hand_over(state: State, cmd: Command) -> list[Event]:
    """The answer goes to the player whose earlier press reached the box after the settle
    window (`state.late_press`); undoable like any host step."""
    late = late_press(state)
    p = _seat(state, cmd)
    if late is None or late["player"] != p:
        raise Refused(f"У игрока {state.players[p]} нет более раннего нажатия.",
                      f"{state.players[p]} has no earlier press.", "no_earlier_press")
    return [_ev("handed_over", cmd, player=p, **{"from": late["winner"]},
                earlier_by_ns=round(late["earlier_by_ms"] * arbiter.MS))]


HANDLERS = {
    "pick_chooser": _pick_chooser, "set_chooser": _set_chooser, "choose": _choose,
    "end_round": _end_round, "reopen": _reopen, "lamp": _lamp, "press": _press,
    "timeout": _timeout, "judge": _judge, "close": _close, "skip": _skip, "give": _give,
    "cat_price": _cat_price, "bid": _bid, "all_in": _all_in, "pass": _pass,
    "bid_order": _bid_order, "remove_question": _remove_question,
    "replace_question": _replace_question, "bet": _bet,
    "write": _write, "pick_remover": _pick_remover, "remove_theme": _remove_theme,
    "shootout_theme": _shootout_theme, "undo": _undo, "set_score": _set_score,
    "rejudge": _rejudge, "finish": _finish, "hand_over": _hand_over,
}

