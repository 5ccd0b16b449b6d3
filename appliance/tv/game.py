"""The TV game engine («Своя игра»): commands in, events out, over an immutable `State`.

`decide` validates a command and returns its events, then appends the automatic events
the rules imply (the round ends when the board is empty, a player who cannot outbid passes,
a tie after the final starts a shootout...), so the log always holds every fact. `evolve`
folds one event and never refuses. The protocol is documented in docs/protocol-tv.md.

Undo: the first event of each host decision carries ``"step": true``; folding it keeps the
state before it in `State.prev`, and an ``undone`` event returns to that state. The chain
is rebuilt by replaying the log, so undo survives a restart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from appliance import arbiter
from appliance.engine import Command, Event, Refused
from appliance.packages import jsonform
from appliance.packages.model import Kind, Package
from appliance.tv import auction as auc
from appliance.tv import final as fin
from appliance.tv.actions import legal_actions
from appliance.tv.board import (
    build,
    cat_price_allowed,
    cat_price_choices,
    cat_theme,
    playable,
    theme_name,
)
from appliance.tv.presets import Settings, resolve
from appliance.tv.state import (
    RIGHT,
    VERDICTS,
    FinalRound,
    Judgement,
    Mode,
    Phase,
    Play,
    Shootout,
    Stage,
    State,
    Written,
    put,
)
from appliance.tv.views import next_deadline, press_deadline, summary, view

NAME = "tv"

__all__ = ["NAME", "initial", "decide", "evolve", "legal_actions", "next_deadline", "view",
           "summary"]

# Transient phases: they exist only between the events of one decision.
DONE = "done"  # the question is over: close it
ROUND_OVER = "round_over"  # start the next round or the final
STAGE_OVER = "stage_over"  # after the final or a shootout theme: tie check

QUESTION_PHASES = frozenset({
    Phase.READING, Phase.BUTTONS, Phase.ANSWERING, Phase.AFTER_WRONG, Phase.CAT_GIVE,
    Phase.CAT_PRICE, Phase.AUCTION, Phase.BETS, Phase.WRITING,
})
NOT_UNDOABLE = frozenset({"press", "timeout", "undo"})


# --------------------------------------------------------------------------- setup ----
def initial(setup: Mapping[str, Any]) -> State:
    """A new game from ``{"players", "package", "preset", "settings", "first_chooser"}``."""
    settings = resolve(str(setup.get("preset", "tv")), setup.get("settings") or {})
    names = setup.get("players")
    if not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names):
        raise Refused("Нужен список имён игроков.", "A list of player names is needed.")
    if not settings.players_min <= len(names) <= settings.players_max:
        raise Refused(
            f"Игроков должно быть от {settings.players_min} до {settings.players_max}.",
            f"The game needs {settings.players_min} to {settings.players_max} players.")
    package = _package(setup.get("package", "demo-tv"))
    board = build(package, settings)
    if not board.rounds:
        raise Refused("В пакете нет раундов с вопросами.", "The package has no board rounds.")
    n = len(names)
    state = State(players=tuple(names), settings=settings, board=board, package=package,
                  scores=(0,) * n, false_starts=(0,) * n, reactions=((),) * n)
    first = setup.get("first_chooser")
    if first is None:
        return replace(state, phase=Phase.PICK_CHOOSER, candidates=tuple(range(n)))
    if not isinstance(first, int) or not 0 <= first < n:
        raise Refused("Нет такого игрока для первого выбора.", "No such first chooser.")
    return replace(state, phase=Phase.CHOOSE, chooser=first)


def _package(spec: Any) -> Package:
    if isinstance(spec, Package):
        return spec
    try:
        if isinstance(spec, Mapping):
            return jsonform.from_dict(dict(spec))
        if isinstance(spec, str) and spec.replace("-", "").replace("_", "").isalnum():
            return jsonform.demo(spec)
    except (OSError, jsonform.PackageFormatError, KeyError) as e:
        raise Refused(f"Пакет не читается: {e}", f"The package cannot be read: {e}") from e
    raise Refused("Пакет не найден.", "Package not found.")


# -------------------------------------------------------------------------- decide ----
def decide(state: State, command: Command) -> list[Event]:
    handler = _HANDLERS.get(command.type)
    if handler is None:
        raise Refused(f"Неизвестная команда «{command.type}».",
                      f"Unknown command '{command.type}'.", "unknown")
    if state.stage == Stage.OVER and command.type not in ("undo", "press", "timeout"):
        raise Refused("Игра окончена.", "The game is over.")
    events = handler(state, command)
    if not events:
        return []
    if command.type not in NOT_UNDOABLE:
        events[0] = Event(events[0].type, events[0].t_ns, {**events[0].data, "step": True})
    s = state
    for e in events:
        s = evolve(s, e)
    for _ in range(1000):  # every automatic event moves the phase on; the bound is a guard
        auto = _automatic(s, command.t_ns)
        if auto is None:
            break
        events.append(auto)
        s = evolve(s, auto)
    return events


def _ev(type_: str, cmd: Command, **data: Any) -> Event:
    return Event(type_, cmd.t_ns, data)


def _refuse_phase(what_ru: str, what_en: str) -> Refused:
    return Refused(f"Сейчас нельзя: {what_ru}.", f"Not now: {what_en}.", "phase")


def _seat(state: State, cmd: Command, key: str = "player") -> int:
    p = cmd.args.get(key)
    if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < state.seats:
        raise Refused("Нет такого игрока.", "No such player.", "bad_player")
    return p


def _int(cmd: Command, key: str) -> int:
    v = cmd.args.get(key)
    if isinstance(v, bool):
        v = None
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        v = int(v)
    if not isinstance(v, int):
        raise Refused(f"Нужно целое число ({key}).", f"A whole number is needed ({key}).",
                      "bad_number")
    return v


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
    v = cmd.args.get("verdict")
    if v not in VERDICTS:
        raise Refused("Вердикт — «right» (зачёт) или «wrong» (незачёт).",
                      "The verdict is 'right' or 'wrong'.", "bad_verdict")
    return str(v)


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
    p = _seat(state, cmd)
    if p == state.chooser and state.phase != Phase.PICK_CHOOSER:
        raise Refused("Этот игрок уже выбирает.", "This player already chooses.")
    return [_ev("chooser", cmd, player=p, correction=True)]


def _choose(state: State, cmd: Command) -> list[Event]:
    _in_phase(state, Phase.CHOOSE, ru="вопрос уже выбран или раунд не идёт",
              en="a question is in play or no round is on")
    t, q = _cell(cmd)
    cid = (state.round, t, q)
    if not state.board.has(cid) or not playable(state.board.cell(cid)):
        raise Refused("На табло нет такого вопроса.", "There is no such question on the board.")
    if cid in state.played:
        raise Refused("Этот вопрос уже сыгран.", "This question has already been played.")
    cell = state.board.cell(cid)
    return [_ev("chosen", cmd, round=state.round, theme=t, question=q, kind=str(cell.kind),
                value=cell.value, opener=state.chooser)]


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
    _in_phase(state, Phase.ANSWERING, ru="никто не отвечает", en="nobody is answering")
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
        raise Refused("Отменять нечего.", "Nothing to undo.")
    return [_ev("undone", cmd)]


def _set_score(state: State, cmd: Command) -> list[Event]:
    p = _seat(state, cmd)
    return [_ev("score_set", cmd, player=p, score=_int(cmd, "score"))]


def _rejudge(state: State, cmd: Command) -> list[Event]:
    ref = _int(cmd, "ref")
    verdict = _verdict(cmd)
    if not 0 <= ref < len(state.judgements):
        raise Refused("Нет такой оценки.", "No such judgement.")
    if state.judgements[ref].verdict == verdict:
        return []  # already so: rejudge sets a verdict, it does not toggle
    return [_ev("rejudged", cmd, ref=ref, verdict=verdict)]


def _finish(state: State, cmd: Command) -> list[Event]:
    """The host stops play early (the show's time is up): the leaders win as things stand.
    (Closing the game in the log is the loop's `end_game`.)"""
    return [_ev("game_over", cmd, winners=list(fin.leaders(state.scores)), by_host=True)]


_HANDLERS = {
    "pick_chooser": _pick_chooser, "set_chooser": _set_chooser, "choose": _choose,
    "end_round": _end_round, "reopen": _reopen, "lamp": _lamp, "press": _press,
    "timeout": _timeout, "judge": _judge, "close": _close, "skip": _skip, "give": _give,
    "cat_price": _cat_price, "bid": _bid, "all_in": _all_in, "pass": _pass, "bet": _bet,
    "write": _write, "pick_remover": _pick_remover, "remove_theme": _remove_theme,
    "shootout_theme": _shootout_theme, "undo": _undo, "set_score": _set_score,
    "rejudge": _rejudge, "finish": _finish,
}


# ---------------------------------------------------------------------- automatic ----
def _automatic(s: State, t: int) -> Event | None:
    """The next event the rules imply by themselves, or None when the host must act."""
    play = s.play
    if s.phase == DONE:
        return Event("question_closed", t, {"outcome": "answered"})
    if s.phase == Phase.CHOOSE and s.stage == Stage.ROUND and not s.open_cells():
        return Event("round_ended", t, {"round": s.round, "early": False})
    if s.phase == ROUND_OVER:
        return _after_round(s, t)
    if s.phase == STAGE_OVER:
        pool = s.shootout.players if s.stage == Stage.SHOOTOUT and s.shootout else None
        tied = fin.leaders(s.scores, pool)
        if len(tied) > 1:
            return Event("shootout_started", t, {"players": list(tied)})
        return Event("game_over", t, {"winners": list(tied)})
    if s.phase == Phase.AUCTION and play and play.auction:
        a = play.auction
        if a.turn is None:
            return Event("auction_won", t, {"player": a.leader, "amount": a.bid})
        if not auc.can_beat(a, a.turn, s.scores):
            if a.leader is None:  # the opener's score fell below the value (a correction)
                return Event("bid", t, {"player": a.turn, "amount": a.value, "all_in": False,
                                        "auto": True})
            return Event("passed", t, {"player": a.turn, "auto": True})
    if s.phase == Phase.FINAL_ORDER and len(s.candidates) == 1:
        return Event("remover_ordered", t, {"player": s.candidates[0]})
    if s.phase == Phase.BETS and play and play.written and not play.written.players:
        return Event("question_closed", t, {"outcome": "nobody"})
    if (s.phase == Phase.ANSWERING and play and play.kind == Kind.CAT and play.question
            and play.question.cat and play.question.cat.no_question):
        return Event("judged", t, {"player": play.answerer, "verdict": RIGHT,
                                   "plus": play.value, "minus": 0})
    return None


def _after_round(s: State, t: int) -> Event:
    nxt = s.round + 1
    if nxt < len(s.board.rounds):
        low = min(s.scores)
        tied = [p for p, v in enumerate(s.scores) if v == low]
        return Event("round_started", t, {"round": nxt,
                                          "chooser": tied[0] if len(tied) == 1 else None,
                                          "candidates": tied})
    if s.board.final is not None:
        players = fin.participants(s.scores, s.settings.final_positive_only)
        return Event("final_started", t, {"players": list(players)})
    tied = fin.leaders(s.scores)
    if len(tied) > 1:
        return Event("shootout_started", t, {"players": list(tied)})
    return Event("game_over", t, {"winners": list(tied)})


# -------------------------------------------------------------------------- evolve ----
def evolve(state: State, event: Event) -> State:
    if event.type == "undone":
        return state.prev if state.prev is not None else state
    fold = _EVOLVERS.get(event.type)
    new = fold(state, event) if fold else state
    if event.data.get("step"):
        new = replace(new, prev=state)
    return new


def _score(state: State, player: int, delta: int) -> tuple[int, ...]:
    scores = list(state.scores)
    scores[player] += delta
    return tuple(scores)


def _e_chooser(s: State, e: Event) -> State:
    phase = Phase.CHOOSE if s.phase == Phase.PICK_CHOOSER else s.phase
    return replace(s, chooser=e.data["player"], phase=phase, candidates=())


def _buttons_race(s: State, playing: tuple[int, ...] | None = None) -> arbiter.Race:
    st: Settings = s.settings
    block = None if st.false_start_s is None else int(st.false_start_s * 1e9)
    race = arbiter.new_race(s.seats, arbiter.Settings(settle_ns=st.settle_ms * arbiter.MS,
                                                      false_start_ns=block),
                            playing=playing, rotation=s.asked % s.seats)
    return arbiter.open_question(race)


def _e_chosen(s: State, e: Event) -> State:
    cid = (e.data["round"], e.data["theme"], e.data["question"])
    cell = s.board.cell(cid)
    q, opener = cell.question, e.data.get("opener")
    base = Play(kind=str(cell.kind), mode=Mode.SINGLE, value=cell.value,
                theme=theme_name(s.board, cell), cell=cid, question=q, opener=opener)
    s = replace(s, played=s.played | {cid}, last=None)
    kind = cell.kind
    if kind == Kind.CAT:
        return replace(s, play=base, phase=Phase.CAT_GIVE)
    if kind == Kind.AUCTION:
        return replace(s, play=replace(base, auction=auc.start(opener, cell.value, s.scores)),
                       phase=Phase.AUCTION)
    if kind == Kind.NO_RISK:
        return replace(s, play=replace(base, answerer=opener, factor=max(q.factor, 1)),
                       phase=Phase.ANSWERING)
    if kind in (Kind.FOR_ALL, Kind.STAKE_ALL):
        stake = kind == Kind.STAKE_ALL
        players = (fin.participants(s.scores, True) if stake else tuple(range(s.seats)))
        return replace(s, play=replace(base, mode=Mode.WRITTEN,
                                       written=Written(players, needs_bets=stake)),
                       phase=Phase.BETS if stake else Phase.WRITING)
    play = replace(base, mode=Mode.BUTTONS, race=_buttons_race(s))
    return replace(s, play=play, phase=Phase.READING, asked=s.asked + 1)


def _e_lamp(s: State, e: Event) -> State:
    assert s.play is not None and s.play.race is not None
    race = arbiter.rearm(s.play.race, e.t_ns)
    return replace(s, play=replace(s.play, race=race), phase=Phase.BUTTONS)


def _e_pressed(s: State, e: Event) -> State:
    play = s.play
    if play is None or play.race is None:
        return s
    p = e.data["player"]
    race = arbiter.press(play.race, p, e.t_ns, e.data.get("by", "button"))
    s = replace(s, play=replace(play, race=race))
    if race.presses and race.presses[-1].status == arbiter.Status.FALSE_START:
        fs = list(s.false_starts)
        fs[p] += 1
        s = replace(s, false_starts=tuple(fs))
    return s


def _e_settled(s: State, e: Event) -> State:
    play = s.play
    if play is None or play.race is None:
        return s
    race = arbiter.settle(play.race, e.t_ns)
    s = replace(s, play=replace(play, race=race))
    if race.winner is None or s.phase != Phase.BUTTONS:
        return s
    reactions = list(s.reactions)
    if race.lamp_ns is not None and race.winner_ns is not None:
        reactions[race.winner] = reactions[race.winner] + (race.winner_ns - race.lamp_ns,)
    return replace(s, play=replace(s.play, answerer=race.winner), phase=Phase.ANSWERING,
                   reactions=tuple(reactions))


def _e_judged(s: State, e: Event) -> State:
    d = e.data
    p, verdict = d["player"], d["verdict"]
    j = Judgement(len(s.judgements), p, verdict, int(d["plus"]), int(d["minus"]),
                  s.round_name, s.play.kind if s.play else "")
    s = replace(s, judgements=s.judgements + (j,), scores=_score(s, p, j.delta))
    play = s.play
    if play is None:
        return s
    if play.mode == Mode.WRITTEN and play.written:
        w = replace(play.written, verdicts=put(play.written.verdicts, p, verdict))
        s = replace(s, play=replace(play, written=w))
        return replace(s, phase=DONE) if not w.unjudged() else s
    if play.mode == Mode.BUTTONS and play.race is not None:
        if verdict == RIGHT:
            chooser = p if s.stage == Stage.ROUND else s.chooser
            return replace(s, play=replace(play, right_by=p), chooser=chooser, phase=DONE)
        race = play.race
        race = arbiter.lamp_off(replace(race, answered=race.answered | {p}, winner=None,
                                        winner_ns=None))
        s = replace(s, play=replace(play, race=race, answerer=None))
        left = race.playing - race.answered
        return replace(s, phase=Phase.AFTER_WRONG if left else DONE)
    return replace(s, play=replace(play, right_by=p if verdict == RIGHT else None), phase=DONE)


def _e_question_closed(s: State, e: Event) -> State:
    play = s.play
    if play is not None:
        race = arbiter.close(play.race) if play.race is not None else None
        outcome = e.data.get("outcome", "")
        if outcome == "answered":
            outcome = "right" if play.right_by is not None else "wrong"
        s = replace(s, last=replace(play, race=race, outcome=outcome))
    s = replace(s, play=None)
    if s.stage == Stage.FINAL:
        return replace(s, phase=STAGE_OVER)
    if s.stage == Stage.SHOOTOUT and s.shootout:
        so = replace(s.shootout, position=s.shootout.position + 1)
        s = replace(s, shootout=so)
        return _shootout_question(s) if so.position < len(so.items) else replace(
            s, phase=STAGE_OVER)
    return replace(s, phase=Phase.CHOOSE)


def _e_cat_given(s: State, e: Event) -> State:
    assert s.play is not None and s.play.cell is not None
    cell = s.board.cell(s.play.cell)
    price = cat_price_choices(cell)
    play = replace(s.play, answerer=e.data["player"], theme=cat_theme(s.board, cell))
    if isinstance(price, int):
        return replace(s, play=replace(play, value=price), phase=Phase.ANSWERING)
    return replace(s, play=play, phase=Phase.CAT_PRICE)


def _e_cat_priced(s: State, e: Event) -> State:
    assert s.play is not None
    return replace(s, play=replace(s.play, value=int(e.data["value"])), phase=Phase.ANSWERING)


def _e_bid(s: State, e: Event) -> State:
    assert s.play is not None and s.play.auction is not None
    a = auc.apply_bid(s.play.auction, e.data["player"], int(e.data["amount"]),
                      all_in=bool(e.data.get("all_in")), scores=s.scores,
                      what="auto_bid" if e.data.get("auto") else "bid")
    return replace(s, play=replace(s.play, auction=a))


def _e_passed(s: State, e: Event) -> State:
    assert s.play is not None and s.play.auction is not None
    a = auc.apply_pass(s.play.auction, e.data["player"], s.scores, bool(e.data.get("auto")))
    return replace(s, play=replace(s.play, auction=a))


def _e_auction_won(s: State, e: Event) -> State:
    assert s.play is not None
    return replace(s, play=replace(s.play, answerer=e.data["player"],
                                   value=int(e.data["amount"])), phase=Phase.ANSWERING)


def _e_bet(s: State, e: Event) -> State:
    assert s.play is not None and s.play.written is not None
    w = s.play.written
    w = replace(w, bets=put(w.bets, e.data["player"], int(e.data["amount"])))
    s = replace(s, play=replace(s.play, written=w))
    return replace(s, phase=Phase.WRITING) if not w.pending_bets() else s


def _e_written(s: State, e: Event) -> State:
    assert s.play is not None and s.play.written is not None
    w = s.play.written
    w = replace(w, answers=put(w.answers, e.data["player"], str(e.data["text"])))
    return replace(s, play=replace(s.play, written=w))


def _e_round_ended(s: State, e: Event) -> State:
    return replace(s, phase=ROUND_OVER, play=None, candidates=())


def _e_round_started(s: State, e: Event) -> State:
    chooser = e.data.get("chooser")
    return replace(s, stage=Stage.ROUND, round=int(e.data["round"]), chooser=chooser,
                   candidates=() if chooser is not None else tuple(e.data["candidates"]),
                   phase=Phase.CHOOSE if chooser is not None else Phase.PICK_CHOOSER,
                   last=None)


def _e_final_started(s: State, e: Event) -> State:
    players = tuple(e.data["players"])
    s = replace(s, stage=Stage.FINAL, final=FinalRound(players), chooser=None, last=None)
    if not players:
        return replace(s, phase=STAGE_OVER)
    return _final_order(s)


def _final_order(s: State) -> State:
    f = s.final
    assert f is not None and s.board.final is not None
    if len(f.remaining(len(s.board.final.themes))) <= 1:
        return _final_question(replace(s, candidates=()))
    if len(f.order) < len(f.players):
        return replace(s, phase=Phase.FINAL_ORDER,
                       candidates=fin.next_removers(s.scores, f.players, f.order))
    return replace(s, phase=Phase.FINAL_REMOVE, candidates=())


def _final_question(s: State) -> State:
    f, final = s.final, s.board.final
    assert f is not None and final is not None
    t = f.remaining(len(final.themes))[0]
    play = Play(kind="final", mode=Mode.WRITTEN, value=0, theme=final.themes[t],
                question=final.questions[t], written=Written(f.players, needs_bets=True))
    return replace(s, play=play, phase=Phase.BETS)


def _e_remover_ordered(s: State, e: Event) -> State:
    assert s.final is not None
    return _final_order(replace(s, final=replace(s.final, order=s.final.order
                                                 + (e.data["player"],))))


def _e_theme_removed(s: State, e: Event) -> State:
    assert s.final is not None
    f = replace(s.final, removed=s.final.removed + ((e.data["theme"], e.data["player"]),))
    return _final_order(replace(s, final=f))


def _e_shootout_started(s: State, e: Event) -> State:
    themes = s.shootout.themes if s.shootout else 0
    return replace(s, stage=Stage.SHOOTOUT, phase=Phase.SHOOTOUT_THEME, chooser=None,
                   shootout=Shootout(tuple(e.data["players"]), themes=themes), play=None)


def _e_shootout_theme(s: State, e: Event) -> State:
    assert s.shootout is not None
    n = s.settings.shootout_questions
    if e.data.get("source") == "board":
        r, t = int(e.data["round"]), int(e.data["theme"])
        row = s.board.rounds[r].cells[t]
        cells = sorted((c for c in row if playable(c) and c.id not in s.played),
                       key=lambda c: (c.value, c.index))[:n]
        items = tuple((c.id, c.value) for c in cells)
        name = s.board.rounds[r].themes[t]
        s = replace(s, played=s.played | {c.id for c in cells})
    else:
        values = s.settings.values_for(0)
        items = tuple((None, values[min(i, len(values) - 1)]) for i in range(n))
        name = ""
    so = replace(s.shootout, themes=s.shootout.themes + 1, items=items, position=0, theme=name)
    return _shootout_question(replace(s, shootout=so))


def _shootout_question(s: State) -> State:
    so = s.shootout
    assert so is not None
    cid, value = so.items[so.position]
    q = s.board.cell(cid).question if cid is not None else None
    kind = str(s.board.cell(cid).kind) if cid is not None else str(Kind.NORMAL)
    play = Play(kind=kind, mode=Mode.BUTTONS, value=value, theme=so.theme, cell=cid, question=q,
                race=_buttons_race(s, so.players))
    return replace(s, play=play, phase=Phase.READING, asked=s.asked + 1)


def _e_game_over(s: State, e: Event) -> State:
    return replace(s, stage=Stage.OVER, phase=Phase.OVER, play=None, candidates=(),
                   winners=tuple(e.data.get("winners", ())),
                   ended_by_host=bool(e.data.get("by_host")))


def _e_score_set(s: State, e: Event) -> State:
    p = e.data["player"]
    return replace(s, scores=_score(s, p, int(e.data["score"]) - s.scores[p]))


def _e_rejudged(s: State, e: Event) -> State:
    ref = int(e.data["ref"])
    old = s.judgements[ref]
    new = replace(old, verdict=e.data["verdict"])
    js = s.judgements[:ref] + (new,) + s.judgements[ref + 1:]
    return replace(s, judgements=js, scores=_score(s, old.player, new.delta - old.delta))


def _e_reopened(s: State, e: Event) -> State:
    cid = (e.data["round"], e.data["theme"], e.data["question"])
    return replace(s, played=s.played - {cid})


_EVOLVERS = {
    "chooser": _e_chooser, "chosen": _e_chosen, "lamp": _e_lamp, "pressed": _e_pressed,
    "settled": _e_settled, "judged": _e_judged, "question_closed": _e_question_closed,
    "cat_given": _e_cat_given, "cat_priced": _e_cat_priced, "bid": _e_bid,
    "passed": _e_passed, "auction_won": _e_auction_won, "bet": _e_bet, "written": _e_written,
    "round_ended": _e_round_ended, "round_started": _e_round_started,
    "final_started": _e_final_started, "remover_ordered": _e_remover_ordered,
    "theme_removed": _e_theme_removed, "shootout_started": _e_shootout_started,
    "shootout_theme": _e_shootout_theme, "game_over": _e_game_over,
    "score_set": _e_score_set, "rejudged": _e_rejudged, "reopened": _e_reopened,
}
