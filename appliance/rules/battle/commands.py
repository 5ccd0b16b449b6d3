"""The battle's commands: each handler validates one command against the state and returns
its events, or raises `Refused` with a reason in Russian and English. Folding the events is
`folds`' job; the catch-up on passed deadlines is `game.decide`'s."""

from __future__ import annotations

from typing import Any

from appliance.rules import arbiter, kit
from appliance.rules.battle.setup import theme_spec
from appliance.rules.battle.state import (
    ANSWERING,
    CLOSED,
    FINISHED,
    OPEN,
    PHASE_RU,
    QUESTIONS_PER_THEME,
    READY,
    RIGHT,
    SCORE_LIMIT,
    TIE,
    Battle,
    Played,
    QuestionSpec,
    late_press,
    others_may_queue,
)
from appliance.rules.protocol import Command, Event, Refused


def refuse(ru: str, en: str, code: str = "refused") -> Refused:
    return Refused(ru, en, code)


def _out_of_phase(cmd: Command, state: Battle) -> Refused:
    return kit.out_of_phase(f"«{cmd.type}» в фазе «{PHASE_RU[state.phase]}»",
                            f"{cmd.type!r} in phase {state.phase!r}")


def _seat(state: Battle, v: Any) -> int:
    return kit.seat(v, state.seats)


def _timeout(state: Battle, cmd: Command) -> list[Event]:
    # Everything due was handled by the catch-up; a stale or early wake-up does nothing.
    return []


def _announce(state: Battle, cmd: Command) -> list[Event]:
    if state.phase != READY:
        raise _out_of_phase(cmd, state)
    theme = state.themes[state.theme]
    return [Event("announced", cmd.t_ns, {
        "theme": state.theme, "number": state.number, "value": theme.value(state.number),
        "players": list(state.contenders)})]


def _reading_done(state: Battle, cmd: Command) -> list[Event]:
    q = state.current
    if state.phase not in (OPEN, ANSWERING) or q is None or q.reading_done_ns is not None:
        raise _out_of_phase(cmd, state)
    return [Event("reading_done", cmd.t_ns)]


def _press(state: Battle, cmd: Command) -> list[Event]:
    player = _seat(state, cmd.args.get("player"))
    q = state.current
    if state.phase not in (OPEN, ANSWERING) or q is None:
        raise refuse("Кнопки сейчас выключены.", "The buttons are off now.", "buttons_off")
    if player not in q.race.playing:
        raise refuse(f"{state.players[player]} не играет эту тему.",
                     f"{state.players[player]} does not play this theme.", "not_playing")
    data: dict[str, Any] = {"player": player, "by": cmd.by}
    if cmd.at_ns is not None:
        data["at_ns"] = cmd.at_ns
    events = [Event("press", cmd.t_ns, data)]
    after = arbiter.press(q.race, player, cmd.t_ns, cmd.by)
    if q.reading_done_ns is None and not q.short_word and after.candidates():
        events.append(Event("short_word", cmd.t_ns, {"player": player}))
    return events

def _answering(state: Battle, cmd: Command) -> Played:
    q = state.current
    if state.phase != ANSWERING or q is None or q.race.winner is None:
        raise kit.nobody_answers()
    return q

def _reset_signal(state: Battle, cmd: Command) -> list[Event]:
    q = _answering(state, cmd)
    if q.race.queue_from_ns is not None:
        raise refuse("Сигнал уже сброшен: очередь открыта.",
                     "The signal was already reset: the queue is open.", "queue_open")
    if not others_may_queue(q):
        raise refuse("Некому вставать в очередь.", "Nobody is left to queue.", "queue_empty")
    return [Event("signal_reset", cmd.t_ns)]


def _judge(state: Battle, cmd: Command) -> list[Event]:
    q = _answering(state, cmd)
    verdict = kit.verdict(cmd.args.get("verdict"))
    player = q.race.winner
    events = [Event("judged", cmd.t_ns, {
        "ref": len(state.judgements), "player": player, "verdict": verdict, "value": q.value,
        "points": q.value if verdict == RIGHT else -q.value})]
    if verdict == RIGHT:
        return events + [Event("question_closed", cmd.t_ns, {"reason": RIGHT})]
    race, head = arbiter.next_in_queue(q.race)
    if head is not None:
        return events + [Event("queue_next", cmd.t_ns, {"player": head})]
    left = sorted(race.playing - race.answered)
    if left:
        return events + [Event("rearmed", cmd.t_ns, {"players": left})]
    return events + [Event("question_closed", cmd.t_ns, {"reason": "all_wrong"})]


def _at_last_question(state: Battle) -> bool:
    return (state.number == QUESTIONS_PER_THEME - 1
            and state.theme == len(state.themes) - 1)


def _end_of_battle(state: Battle, t_ns: int) -> list[Event]:
    leaders = state.leaders()
    if len(leaders) == 1:
        return [Event("battle_finished", t_ns, {"winner": leaders[0],
                                                "scores": state.scores()})]
    if state.extra_pool:
        return [Event("extra_theme", t_ns, {"theme": state.extra_pool[0].to_json(),
                                            "players": leaders, "from_pool": True})]
    return [Event("tie", t_ns, {"players": leaders, "scores": state.scores()})]


def _next(state: Battle, cmd: Command) -> list[Event]:
    if state.phase == CLOSED and not _at_last_question(state):
        if state.number < QUESTIONS_PER_THEME - 1:
            return [Event("advanced", cmd.t_ns, {"theme": state.theme,
                                                 "number": state.number + 1})]
        return [Event("advanced", cmd.t_ns, {"theme": state.theme + 1, "number": 0})]
    tied = len(state.leaders()) > 1
    if state.phase == CLOSED or (state.phase == FINISHED and tied) or (
            state.phase == TIE and not tied):
        return _end_of_battle(state, cmd.t_ns)
    if state.phase == TIE:
        raise refuse("Ничья: добавьте дополнительную тему.",
                     "A tie: add an extra theme.", "tie_needs_theme")
    raise _out_of_phase(cmd, state)


def _add_theme(state: Battle, cmd: Command) -> list[Event]:
    if state.phase != TIE or len(state.leaders()) < 2:
        raise _out_of_phase(cmd, state)
    name = cmd.args.get("name", "")
    if not isinstance(name, str):
        raise refuse("Название темы должно быть текстом.", "A theme name must be text.",
                     "bad_theme")
    # A blank name gets a default one, so every text the form allows is accepted.
    name = name.strip() or f"Дополнительная тема {len(state.tiebreaks) + 1}"
    red = cmd.args.get("red", False)
    if not isinstance(red, bool):
        raise refuse("«red» должно быть true или false.", "'red' must be true or false.",
                     "bad_theme")
    try:
        theme = theme_spec({"name": name, "red": red,
                            "questions": cmd.args.get("questions") or []}, extra=True)
    except Refused as e:
        raise refuse(e.message_ru, e.message_en, "bad_theme") from e
    return [Event("extra_theme", cmd.t_ns, {"theme": theme.to_json(), "players": state.leaders(),
                                            "from_pool": False})]


def _undo(state: Battle, cmd: Command) -> list[Event]:
    if not state.history:
        raise kit.nothing_to_undo()
    return [Event("undone", cmd.t_ns, {"phase": state.history[-1].phase})]


def _hand_over(state: Battle, cmd: Command) -> list[Event]:
    """The answer goes to the player whose earlier press reached the box after the settle
    window (see `state.late_press`); undoable."""
    late = late_press(state)
    player = _seat(state, cmd.args.get("player"))
    if late is None or late["player"] != player:
        raise refuse(f"У игрока {state.players[player]} нет более раннего нажатия.",
                     f"{state.players[player]} has no earlier press.", "no_earlier_press")
    q = state.current
    assert q is not None
    return [Event("handed_over", cmd.t_ns, {
        "player": player, "from": late["winner"], "winner_ns": q.race.winner_ns,
        "earlier_by_ns": round(late["earlier_by_ms"] * arbiter.MS)})]


def _flawed(state: Battle, cmd: Command) -> tuple[int, list[int]]:
    q = state.current
    if q is None or q.closed in ("removed", "replaced"):
        raise _out_of_phase(cmd, state)
    index = len(state.played) - 1
    refs = [r for r, j in enumerate(state.judgements) if j.question == index and not j.voided]
    return index, refs


def _remove_question(state: Battle, cmd: Command) -> list[Event]:
    """The host withdraws a flawed question: its verdicts count for nothing; `next` goes on."""
    index, refs = _flawed(state, cmd)
    return [Event("question_removed", cmd.t_ns, {"question": index, "refs": refs})]


def _replace_question(state: Battle, cmd: Command) -> list[Event]:
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
            raise refuse("Такого запасного вопроса нет.", "There is no such spare question.",
                         "bad_source")
        spec, pool = state.extra_pool[t].questions[n], [t, n]
    return [Event("question_replaced", cmd.t_ns, {"question": index, "refs": refs,
                                                  "replacement": spec.to_json(),
                                                  "from_pool": pool})]


def _rejudge(state: Battle, cmd: Command) -> list[Event]:
    ref = kit.judgement_ref(cmd.args.get("ref"), len(state.judgements))
    if state.judgements[ref].voided:
        raise refuse("Этот вопрос снят: решение не считается.",
                     "That question was removed: the judgement does not count.", "voided")
    verdict = kit.verdict(cmd.args.get("verdict"))
    j = state.judgements[ref]
    return [Event("rejudged", cmd.t_ns, {"ref": ref, "player": j.player, "verdict": verdict,
                                         "was": j.verdict})]


def _set_score(state: Battle, cmd: Command) -> list[Event]:
    player = _seat(state, cmd.args.get("player"))
    score = kit.whole(cmd.args.get("score"), "Счёт", "The score", -SCORE_LIMIT, SCORE_LIMIT)
    return [Event("score_set", cmd.t_ns, {"player": player, "score": score,
                                          "delta": score - state.score(player)})]


HANDLERS = {
    "timeout": _timeout,
    "announce": _announce,
    "reading_done": _reading_done,
    "press": _press,
    "reset_signal": _reset_signal,
    "judge": _judge,
    "next": _next,
    "add_theme": _add_theme,
    "undo": _undo,
    "rejudge": _rejudge,
    "set_score": _set_score,
    "remove_question": _remove_question,
    "replace_question": _replace_question,
    "hand_over": _hand_over,
}
