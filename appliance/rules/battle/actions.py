"""The battle's legal actions: exactly the commands `decide` accepts now, each with
complete arguments, so a generic UI never offers what the rules forbid."""

from __future__ import annotations

from typing import Any

from appliance.rules import kit, undo
from appliance.rules.battle.state import (
    ANSWERING,
    CLOSED,
    FINISHED,
    OPEN,
    READY,
    SCORE_LIMIT,
    TIE,
    Battle,
    late_press,
    others_may_queue,
)
from appliance.rules.protocol import Action


def _choice(value: Any, ru: str, en: str) -> dict[str, Any]:
    return {"value": value, "ru": ru, "en": en}


def _player_choices(state: Battle, seats: Any) -> list[dict[str, Any]]:
    return [_choice(p, state.players[p], state.players[p]) for p in sorted(seats)]


REJUDGE_CHOICES = 20


def _verdict_choices() -> list[dict[str, Any]]:
    return kit.verdict_choices()


def judgement_label(state: Battle, ref: int) -> tuple[str, str]:
    j = state.judgements[ref]
    q = state.played[j.question]
    theme = state.themes[q.theme].name
    who = state.players[j.player]
    ru = f"{ref + 1}. {theme}, {q.value}: {who} — {kit.VERDICT_LABELS[j.verdict][0].lower()}"
    en = f"{ref + 1}. {theme}, {q.value}: {who} — {j.verdict}"
    return ru, en


def legal_actions(state: Battle) -> list[Action]:
    """Exactly the commands `decide` accepts now (the loop's `timeout` is not listed: it is
    always accepted and does nothing unless a deadline has passed)."""
    acts: list[Action] = []
    q = state.current
    tied = len(state.leaders()) > 1
    if state.phase == READY:
        theme = state.themes[state.theme]
        v = theme.value(state.number)
        acts.append(Action("announce", f"Объявить: «{theme.name}», {v}",
                           f"Announce: {theme.name!r}, {v}", key="a"))
    if state.phase in (OPEN, ANSWERING) and q is not None:
        if q.reading_done_ns is None:
            acts.append(Action("reading_done", "Вопрос дочитан", "Reading finished", key="r"))
        acts.append(Action("press", "Кнопка", "Button", by="button",
                           args={"player": _player_choices(state, q.race.playing)}))
    if state.phase == ANSWERING and q is not None:
        acts.append(Action("judge", "Оценить ответ", "Judge the answer", key="j",
                           args={"verdict": _verdict_choices()}))
        if q.race.queue_from_ns is None and others_may_queue(q):
            acts.append(Action("reset_signal", "Сбросить сигнал (очередь)",
                               "Reset the signal (queue)", key="s"))
    if (state.phase == CLOSED or (state.phase == FINISHED and tied)
            or (state.phase == TIE and not tied)):
        acts.append(Action("next", "Дальше", "Next", key="n"))
    if state.phase == TIE and tied:
        acts.append(Action("add_theme", "Добавить дополнительную тему", "Add an extra theme",
                           args={"name": {"type": "text"},
                                 "red": [_choice(False, "Синяя", "Blue"),
                                         _choice(True, "Красная", "Red")]}))
    late = late_press(state)
    if late is not None:
        acts.append(Action("hand_over", f"{late['ru']} — передать ответ",
                           f"{late['en']} — hand the answer over", key="h",
                           args={"player": _player_choices(state, [late["player"]])}))
    acts += undo.actions(state)
    if q is not None and q.closed not in ("removed", "replaced"):
        acts.append(Action("remove_question", "Снять вопрос (ошибка в вопросе)",
                           "Remove the question (it is flawed)", confirm=True))
        spare = [_choice(f"{t}:{n}", f"{state.extra_pool[t].name}, №{n + 1}",
                         f"{state.extra_pool[t].name}, #{n + 1}")
                 for t, n in state.spare_questions()]
        acts.append(Action("replace_question", "Заменить вопрос запасным",
                           "Replace the question with a spare one", confirm=True,
                           args={"source": [*spare, _choice("host", "Вопрос ведущего",
                                                            "The host's own question")]}))
    # The latest judgements only: the list must not grow with the game (an older one
    # is still accepted by `decide`; the host finds it through the view's history).
    first = max(0, len(state.judgements) - REJUDGE_CHOICES)
    refs = [_choice(i, *judgement_label(state, i))
            for i in range(first, len(state.judgements)) if not state.judgements[i].voided]
    if refs:
        acts.append(Action("rejudge", "Изменить решение", "Change a judgement", confirm=True,
                           args={"ref": refs, "verdict": _verdict_choices()}))
    acts.append(Action("set_score", "Исправить счёт", "Correct a score", confirm=True,
                       args={"player": _player_choices(state, range(state.seats)),
                             "score": {"type": "int", "min": -SCORE_LIMIT,
                                       "max": SCORE_LIMIT, "step": 1}}))
    return acts
