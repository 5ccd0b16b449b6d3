"""The battle's host corrections: an answer handed over to an earlier press, a flawed
question removed or replaced, a judgement replaced, a score set. Like `commands`: validate,
return events."""

from __future__ import annotations

from appliance.rules import arbiter, kit
from appliance.rules.battle import checks as ck
from appliance.rules.battle.state import SCORE_LIMIT, Battle, QuestionSpec, late_press
from appliance.rules.protocol import Command, Event


def hand_over(state: Battle, cmd: Command) -> list[Event]:
    """The answer goes to the player whose earlier press reached the box after the settle
    window (see `state.late_press`); undoable."""
    late = late_press(state)
    player = ck.seat(state, cmd.args.get("player"))
    if late is None or late["player"] != player:
        raise ck.refuse(f"У игрока {state.players[player]} нет более раннего нажатия.",
                     f"{state.players[player]} has no earlier press.", "no_earlier_press")
    q = state.current
    assert q is not None
    return [Event("handed_over", cmd.t_ns, {
        "player": player, "from": late["winner"], "winner_ns": q.race.winner_ns,
        "earlier_by_ns": round(late["earlier_by_ms"] * arbiter.MS)})]


def _flawed(state: Battle, cmd: Command) -> tuple[int, list[int]]:
    q = state.current
    if q is None or q.closed in ("removed", "replaced"):
        raise ck.out_of_phase(cmd, state)
    index = len(state.played) - 1
    refs = [r for r, j in enumerate(state.judgements) if j.question == index and not j.voided]
    return index, refs


def remove_question(state: Battle, cmd: Command) -> list[Event]:
    """The host withdraws a flawed question: its verdicts count for nothing; `next` goes on."""
    index, refs = _flawed(state, cmd)
    return [Event("question_removed", cmd.t_ns, {"question": index, "refs": refs})]


def replace_question(state: Battle, cmd: Command) -> list[Event]:
    """The host replaces a flawed question: its verdicts count for nothing and the same slot
    (theme, value) is announced again with a spare question: one of the extra pool's
    unplayed questions (``source: "t:n"``) or the host's own from paper (``"host"``)."""
    index, refs = _flawed(state, cmd)
    source = cmd.args.get("source", "host")
    spec = QuestionSpec()
    pool: list[int] | None = None
    if source != "host":
        try:
            t, n = (int(x) for x in str(source).split(":"))
        except ValueError:
            t, n = -1, -1
        if (t, n) not in state.spare_questions():
            raise ck.refuse("Такого запасного вопроса нет.", "There is no such spare question.",
                         "bad_source")
        spec, pool = state.extra_pool[t].questions[n], [t, n]
    return [Event("question_replaced", cmd.t_ns, {"question": index, "refs": refs,
                                                  "replacement": spec.to_json(),
                                                  "from_pool": pool})]


def rejudge(state: Battle, cmd: Command) -> list[Event]:
    ref = kit.judgement_ref(cmd.args.get("ref"), len(state.judgements))
    if state.judgements[ref].voided:
        raise ck.refuse("Этот вопрос снят: решение не считается.",
                     "That question was removed: the judgement does not count.", "voided")
    verdict = kit.verdict(cmd.args.get("verdict"))
    j = state.judgements[ref]
    return [Event("rejudged", cmd.t_ns, {"ref": ref, "player": j.player, "verdict": verdict,
                                         "was": j.verdict})]


def set_score(state: Battle, cmd: Command) -> list[Event]:
    player = ck.seat(state, cmd.args.get("player"))
    score = kit.whole(cmd.args.get("score"), "Счёт", "The score", -SCORE_LIMIT, SCORE_LIMIT)
    return [Event("score_set", cmd.t_ns, {"player": player, "score": score,
                                          "delta": score - state.score(player)})]
