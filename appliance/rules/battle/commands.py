"""The battle's commands: each handler validates one command against the state and returns
its events, or raises `Refused` with a reason in Russian and English. Folding the events is
`folds`' job; the catch-up on passed deadlines is `game.decide`'s."""

from __future__ import annotations

from typing import Any

from appliance.rules import arbiter, kit, undo
from appliance.rules.battle import checks as ck
from appliance.rules.battle import corrections
from appliance.rules.battle.setup import theme_spec
from appliance.rules.battle.state import (
    ANSWERING,
    CLOSED,
    FINISHED,
    OPEN,
    QUESTIONS_PER_THEME,
    READY,
    RIGHT,
    TIE,
    Battle,
    Played,
    others_may_queue,
)
from appliance.rules.protocol import Command, Event, Refused


def _timeout(state: Battle, cmd: Command) -> list[Event]:
    # Everything due was handled by the catch-up; a stale or early wake-up does nothing.
    return []


def _announce(state: Battle, cmd: Command) -> list[Event]:
    if state.phase != READY:
        raise ck.out_of_phase(cmd, state)
    theme = state.themes[state.theme]
    return [Event("announced", cmd.t_ns, {
        "theme": state.theme, "number": state.number, "value": theme.value(state.number),
        "players": list(state.contenders)})]


def _reading_done(state: Battle, cmd: Command) -> list[Event]:
    q = state.current
    if state.phase not in (OPEN, ANSWERING) or q is None or q.reading_done_ns is not None:
        raise ck.out_of_phase(cmd, state)
    return [Event("reading_done", cmd.t_ns)]


def _press(state: Battle, cmd: Command) -> list[Event]:
    player = ck.seat(state, cmd.args.get("player"))
    q = state.current
    if state.phase not in (OPEN, ANSWERING) or q is None:
        raise ck.refuse("Кнопки сейчас выключены.", "The buttons are off now.", "buttons_off")
    if player not in q.race.playing:
        raise ck.refuse(f"{state.players[player]} не играет эту тему.",
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
        raise ck.refuse("Сигнал уже сброшен: очередь открыта.",
                     "The signal was already reset: the queue is open.", "queue_open")
    if not others_may_queue(q):
        raise ck.refuse("Некому вставать в очередь.", "Nobody is left to queue.", "queue_empty")
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
        raise ck.refuse("Ничья: добавьте дополнительную тему.",
                     "A tie: add an extra theme.", "tie_needs_theme")
    raise ck.out_of_phase(cmd, state)


def _add_theme(state: Battle, cmd: Command) -> list[Event]:
    if state.phase != TIE or len(state.leaders()) < 2:
        raise ck.out_of_phase(cmd, state)
    name = cmd.args.get("name", "")
    if not isinstance(name, str):
        raise ck.refuse("Название темы должно быть текстом.", "A theme name must be text.",
                     "bad_theme")
    # A blank name gets a default one, so every text the form allows is accepted.
    name = name.strip() or f"Дополнительная тема {len(state.tiebreaks) + 1}"
    red = cmd.args.get("red", False)
    if not isinstance(red, bool):
        raise ck.refuse("«red» должно быть true или false.", "'red' must be true or false.",
                     "bad_theme")
    try:
        theme = theme_spec({"name": name, "red": red,
                            "questions": cmd.args.get("questions") or []}, extra=True)
    except Refused as e:
        raise ck.refuse(e.message_ru, e.message_en, "bad_theme") from e
    return [Event("extra_theme", cmd.t_ns, {"theme": theme.to_json(), "players": state.leaders(),
                                            "from_pool": False})]


HANDLERS = {
    "timeout": _timeout,
    "announce": _announce,
    "reading_done": _reading_done,
    "press": _press,
    "reset_signal": _reset_signal,
    "judge": _judge,
    "next": _next,
    "add_theme": _add_theme,
    "undo": undo.decide,
    "rejudge": corrections.rejudge,
    "set_score": corrections.set_score,
    "remove_question": corrections.remove_question,
    "replace_question": corrections.replace_question,
    "hand_over": corrections.hand_over,
}
