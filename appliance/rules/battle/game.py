"""The sport battle («бой»): 2–3 players, themes of five questions read in order, buttons.

A pure engine (see `appliance.rules.protocol`). The course of one question:

1. ``announce`` — the host announces the value; the buttons are armed at once (sport has no
   false start: a press stamped before the announcement is recorded as early and ignored).
2. Presses go to the arbiter; the earliest tick wins after the settle window (``timeout``).
   A press before ``reading_done`` flags "read only the short question word" («только
   ключевое слово: "Кто?", "Когда?"») for the host.
3. ``reading_done`` starts the 7 s window; when it passes with no press the question closes.
4. ``reset_signal`` — the host resets the first signal; the others fix their order by pressing
   (the queue, «очередь»). ``judge`` right closes the question; wrong sends the next queued
   player in (a queued player *must* answer: no answer is judged wrong). When the queue is
   empty after a wrong answer, the players who have not answered may press again: the buttons
   are re-armed and, if the reading was finished, a fresh window starts from the judgement.
   (The regulation does not say this; it is the box's decision, like the TV re-arm.)
5. ``next`` — the next question; after the last theme the leader wins, or the players tied
   for first alone play extra themes, one at a time, until after some theme one leads. Each
   extra theme is played by the players tied for first when it starts (the box's decision).

Scores are derived, never stored: the sum of the judged values plus the host's corrections
(``set_score`` records the difference), so "a score is the sum of its judged values" holds by
construction. ``undo`` restores the state before the last decision (a judgement, a question
closed by the window, a rejudgement or a score correction; `UNDO_POINTS`): the kit's
one mechanism (`appliance.rules.undo`) keeps the state before each in `Battle.earlier`.

A deadline that has passed when any command arrives is handled first (as if the loop's
``timeout`` had come in time), so a script without ``timeout`` lines plays the same game.
"""

from __future__ import annotations

from appliance.rules import kit, undo
from appliance.rules.battle.actions import legal_actions
from appliance.rules.battle.commands import HANDLERS
from appliance.rules.battle.deadlines import next_deadline, on_deadline
from appliance.rules.battle.folds import EVOLVERS
from appliance.rules.battle.setup import (
    SETUP_SPEC,
    initial,
    load_package,
    package_themes,
    theme_spec,
)
from appliance.rules.battle.state import (
    ANSWERING,
    CLOSED,
    FINISHED,
    NAME,
    OPEN,
    QUESTIONS_PER_THEME,
    READY,
    STAGE_THEMES,
    TIE,
    VALUES,
    Battle,
    BattleSettings,
    QuestionSpec,
    ThemeSpec,
)
from appliance.rules.battle.summary import summary
from appliance.rules.battle.views import view
from appliance.rules.protocol import Command, Event

UNDO_POINTS = undo.Points(
    events=frozenset({"judged", "handed_over", "rejudged", "score_set", "question_removed",
                      "question_replaced"}),
    reasons={"question_closed": frozenset({"no_press"})})
"""What a sport host may take back (the regulation says nothing of undo: the box's decision,
kept to the decisions that change a score or end a question): a judgement (with whatever it
started), an answer handed over, a rejudgement, a score correction, a question removed or
replaced, and a question closed by its window running out. An ``announce`` or a ``next`` is
undone with the decision before it."""


def _catch_up(state: Battle, now: int) -> tuple[Battle, list[Event]]:
    """Events of every deadline that has passed by `now`, in order."""
    events: list[Event] = []
    while (d := next_deadline(state)) is not None and d <= now:
        for e in on_deadline(state, d):
            state = evolve(state, e)
            events.append(e)
    return state, events


def decide(state: Battle, cmd: Command) -> list[Event]:
    handler = HANDLERS.get(cmd.type)
    if handler is None:
        raise kit.unknown_command(cmd.type)
    state, due = _catch_up(state, cmd.arrival_ns)
    return due + handler(state, cmd)


def evolve(state: Battle, event: Event) -> Battle:
    return undo.evolve(state, event, UNDO_POINTS, EVOLVERS)


__all__ = ["ANSWERING", "CLOSED", "FINISHED", "NAME", "OPEN", "QUESTIONS_PER_THEME", "READY",
           "SETUP_SPEC", "STAGE_THEMES", "TIE", "UNDO_POINTS", "VALUES", "Battle",
           "BattleSettings", "QuestionSpec", "ThemeSpec", "decide", "evolve", "initial",
           "legal_actions", "load_package", "next_deadline", "package_themes", "summary",
           "theme_spec", "view"]
