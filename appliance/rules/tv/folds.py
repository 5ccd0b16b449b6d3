"""Folding the TV game's events into its state: one pure function per event type. Never
refuses — an event is a fact already decided."""

from __future__ import annotations

from typing import cast

from appliance.packages.model import Kind
from appliance.rules import arbiter
from appliance.rules.protocol import Event
from appliance.rules.records import replace
from appliance.rules.tv import auction as auc
from appliance.rules.tv import final as fin
from appliance.rules.tv.board import (
    cat_price_choices,
    cat_theme,
    playable,
    theme_name,
)
from appliance.rules.tv.presets import Settings
from appliance.rules.tv.state import (
    DONE,
    RIGHT,
    ROUND_OVER,
    STAGE_OVER,
    FinalRound,
    Judgement,
    Mode,
    Phase,
    Play,
    Shootout,
    ShootoutItem,
    Stage,
    State,
    Written,
    put,
)


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
                theme=theme_name(s.board, cell), cell=cid, question=q, opener=opener,
                first_ref=len(s.judgements))
    s = replace(s, played=s.played | {cid}, last=None)
    kind = cell.kind
    if kind == Kind.CAT:
        return replace(s, play=base, phase=Phase.CAT_GIVE)
    if kind == Kind.AUCTION:
        # An auction is chosen in a round, where there is always a chooser (the opener).
        auction = auc.start(cast(int, opener), cell.value, s.scores,
                            auto_bid=not e.data.get("bids_logged"))
        return replace(s, play=replace(base, auction=auction),
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
    return replace(s, play=replace(s.play, race=race, lamps=s.play.lamps + (e.t_ns,)),
                   phase=Phase.BUTTONS)


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
        reactions[race.winner] += (arbiter.reaction_ns(race, race.winner_ns),)
    return replace(s, play=replace(play, race=race, answerer=race.winner, time_up=False),
                   phase=Phase.ANSWERING,
                   reactions=tuple(reactions))


def _e_judged(s: State, e: Event) -> State:
    d = e.data
    p, verdict = d["player"], d["verdict"]
    j = Judgement(len(s.judgements), p, verdict, int(d["plus"]), int(d["minus"]),
                  s.round_name, s.play.kind if s.play else "",
                  theme=s.play.theme if s.play else "", value=s.play.value if s.play else None)
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
        if s.final is not None and play is not None and play.written is not None:
            s = replace(s, final=replace(s.final, bets=play.written.bets, closed=True))
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


def _e_bid_order(s: State, e: Event) -> State:
    assert s.play is not None and s.play.auction is not None
    a = auc.set_order(s.play.auction, tuple(e.data["order"]), s.scores)
    return replace(s, play=replace(s.play, auction=a))


def _e_answer_time_up(s: State, e: Event) -> State:
    assert s.play is not None
    return replace(s, play=replace(s.play, time_up=True))


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
    shootout = s.shootout
    assert shootout is not None
    n = s.settings.shootout_questions
    items: tuple[ShootoutItem, ...]
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
    so = replace(shootout, themes=shootout.themes + 1, items=items, position=0, theme=name)
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
    delta = int(e.data["score"]) - s.scores[p]
    return replace(s, scores=_score(s, p, delta),
                   corrections=s.corrections + ((p, delta, s.round_name),))


def _e_rejudged(s: State, e: Event) -> State:
    ref = int(e.data["ref"])
    old = s.judgements[ref]
    new = replace(old, verdict=e.data["verdict"])
    js = s.judgements[:ref] + (new,) + s.judgements[ref + 1:]
    return replace(s, judgements=js, scores=_score(s, old.player, new.delta - old.delta))


def _e_question_removed(s: State, e: Event) -> State:
    """A flawed question is withdrawn: its judgements count for nothing, the choice goes back
    to its opener, and a question in play is closed as removed."""
    js = list(s.judgements)
    scores = list(s.scores)
    for ref in e.data["refs"]:
        j = js[ref]
        scores[j.player] -= j.delta
        js[ref] = replace(j, voided=True)
    s = replace(s, judgements=tuple(js), scores=tuple(scores))
    play = s.play if e.data.get("in_play") else s.last
    if play is None:
        return s
    chooser = play.opener if play.opener is not None else s.chooser
    race = arbiter.close(play.race) if play.race is not None else None
    return replace(s, play=None, last=replace(play, race=race, outcome="removed"),
                   chooser=chooser, phase=Phase.CHOOSE)


def _e_reopened(s: State, e: Event) -> State:
    cid = (e.data["round"], e.data["theme"], e.data["question"])
    return replace(s, played=s.played - {cid})


def _e_handed_over(s: State, e: Event) -> State:
    play = s.play
    assert play is not None and play.race is not None
    race = arbiter.hand_over(play.race, e.data["player"])
    return replace(s, play=replace(play, race=race, answerer=race.winner))


EVOLVERS = {
    "chooser": _e_chooser, "chosen": _e_chosen, "lamp": _e_lamp, "pressed": _e_pressed,
    "settled": _e_settled, "handed_over": _e_handed_over, "judged": _e_judged,
    "question_closed": _e_question_closed,
    "cat_given": _e_cat_given, "cat_priced": _e_cat_priced, "bid": _e_bid,
    "passed": _e_passed, "bid_order": _e_bid_order, "auction_won": _e_auction_won,
    "bet": _e_bet, "written": _e_written, "answer_time_up": _e_answer_time_up,
    "round_ended": _e_round_ended, "round_started": _e_round_started,
    "final_started": _e_final_started, "remover_ordered": _e_remover_ordered,
    "theme_removed": _e_theme_removed, "shootout_started": _e_shootout_started,
    "shootout_theme": _e_shootout_theme, "game_over": _e_game_over,
    "score_set": _e_score_set, "rejudged": _e_rejudged, "reopened": _e_reopened,
    "question_removed": _e_question_removed,
}
