"""The TV game's host corrections: the chooser changed, a played cell reopened, a flawed
question removed or replaced, a score set, a judgement replaced, play stopped, an
answer handed over to an earlier press. Like `commands`: validate, return events."""

from __future__ import annotations

from typing import Any

from appliance.packages.model import Kind
from appliance.rules import arbiter, kit
from appliance.rules.protocol import Command, Event, Refused
from appliance.rules.tv import checks as ck
from appliance.rules.tv import final as fin
from appliance.rules.tv.board import playable
from appliance.rules.tv.state import QUESTION_PHASES, Phase, Play, Stage, State, late_press


def set_chooser(state: State, cmd: Command) -> list[Event]:
    if state.stage != Stage.ROUND:
        raise ck.not_now("выбирающий есть только в раундах", "there is a chooser in rounds only")
    if state.phase == Phase.PICK_CHOOSER:
        raise ck.not_now("ведущий выбирает первого из предложенных (pick_chooser)",
                            "the host picks the first chooser among those offered "
                            "(pick_chooser)")
    p = ck.seat(state, cmd)
    if p == state.chooser:
        raise Refused("Этот игрок уже выбирает.", "This player already chooses.")
    return [ck.event("chooser", cmd, player=p, correction=True)]


def reopen(state: State, cmd: Command) -> list[Event]:
    if state.stage != Stage.ROUND:
        raise ck.not_now("раунд не идёт", "no round is on")
    ck.in_phase(state, Phase.CHOOSE, Phase.PICK_CHOOSER, ru="сначала закройте вопрос",
              en="close the question first")
    t, q = ck.cell(cmd)
    cid = (state.round, t, q)
    if not state.board.has(cid) or not playable(state.board.cell(cid)):
        raise Refused("На табло нет такого вопроса.", "There is no such question on the board.")
    if cid not in state.played:
        raise Refused("Этот вопрос ещё не сыгран.", "This question has not been played.")
    return [ck.event("reopened", cmd, round=state.round, theme=t, question=q)]


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
        raise ck.not_now("нет вопроса, который можно снять", "there is no question to remove")
    in_play, play = target
    refs = [j.ref for j in state.judgements[play.first_ref:] if not j.voided]
    return [ck.event("question_removed", cmd, refs=refs, in_play=in_play,
                cell=list(play.cell) if play.cell else None)]


def remove_question(state: State, cmd: Command) -> list[Event]:
    return _removal(state, cmd)


def replace_question(state: State, cmd: Command) -> list[Event]:
    """Remove the flawed question and play, for the same opener, an unplayed question of this
    round the host picks (the package's unplayed material). Not a later round's: the
    package's rounds and prices are played as they are (the rules digest), and a question
    taken from a later round would leave a hole there and score at that round's prices
    (docs/protocol-tv.md, "Why a replacement comes from this round only")."""
    events = _removal(state, cmd)
    t, q = ck.cell(cmd)
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


def set_score(state: State, cmd: Command) -> list[Event]:
    p = ck.seat(state, cmd)
    return [ck.event("score_set", cmd, player=p, score=ck.number(cmd, "score", kit.SCORE_LIMIT))]


def rejudge(state: State, cmd: Command) -> list[Event]:
    ref = kit.judgement_ref(cmd.args.get("ref"), len(state.judgements))
    verdict = ck.verdict(cmd)
    if state.judgements[ref].voided:
        raise Refused("Этот вопрос снят: оценка не считается.",
                      "That question was removed: the judgement does not count.", "voided")
    if state.judgements[ref].verdict == verdict:
        return []  # already so: rejudge sets a verdict, it does not toggle
    return [ck.event("rejudged", cmd, ref=ref, verdict=verdict)]


def finish(state: State, cmd: Command) -> list[Event]:
    """The host stops play early (the show's time is up): the leaders win as things stand.
    (Closing the game in the log is the loop's `end_game`.)"""
    return [ck.event("game_over", cmd, winners=list(fin.leaders(state.scores)), by_host=True)]

def hand_over(state: State, cmd: Command) -> list[Event]:
    """The answer goes to the player whose earlier press reached the box after the settle
    window (`state.late_press`); undoable like any host step."""
    late = late_press(state)
    p = ck.seat(state, cmd)
    if late is None or late["player"] != p:
        raise Refused(f"У игрока {state.players[p]} нет более раннего нажатия.",
                      f"{state.players[p]} has no earlier press.", "no_earlier_press")
    return [ck.event("handed_over", cmd, player=p, **{"from": late["winner"]},
                earlier_by_ns=round(late["earlier_by_ms"] * arbiter.MS))]
