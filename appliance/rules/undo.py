"""Undo («отмена»): one mechanism for both engines.

A state keeps `earlier`, a `Seq` of the states before each *undo point*, newest last; each
is kept with an empty `earlier` of its own, so the chain is flat and a state never holds
the whole game twice. Folding an undo point first remembers the state (`remember`), then
folds the event; an ``undone`` event returns to the newest remembered state (`restore`),
whose own `earlier` is the rest of the chain. The chain is rebuilt by folding the log, so
undo survives a restart.

Which events are undo points is each regulation's rule, not the kit's: each engine states
it as data in its `UNDO_POINTS` (a `Points`), so a reader finds it in one place. A point is
named by its command (``decide`` marks the command's first event ``"step": true``, so the
whole decision with its automatic follow-ups is undone at once), by its event type, or by
its event type and the reason it carries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from appliance.rules import kit
from appliance.rules.protocol import Action, Command, Event
from appliance.rules.records import replace
from appliance.rules.seq import EMPTY, Seq

UNDO = "undo"  # the host's command
UNDONE = "undone"  # its event
STEP = "step"  # the mark `decide` puts on the first event of a decision that is an undo point
KEY = "z"  # the host's keyboard shortcut, the same in every format


class Undoable(Protocol):
    """What the mechanism needs of a state: its chain, and a phase to say where undo goes."""

    @property
    def earlier(self) -> Seq[Any]: ...

    @property
    def phase(self) -> str: ...


S = TypeVar("S", bound=Undoable)


@dataclass(frozen=True, slots=True)
class Points:
    """Which decisions a host may take back: the undo points of one regulation."""

    commands: frozenset[str] = frozenset()  # the first event of each of these commands
    events: frozenset[str] = frozenset()  # every event of these types
    reasons: Mapping[str, frozenset[str]] = field(default_factory=dict)  # type -> reasons

    def mark(self, command: Command, events: list[Event]) -> list[Event]:
        """`events` of `command` with the first marked as a step when the command is a point."""
        if not events or command.type not in self.commands:
            return events
        first = events[0]
        return [Event(first.type, first.t_ns, {**first.data, STEP: True}), *events[1:]]

    def __contains__(self, event: Event) -> bool:
        if event.type in self.events or event.data.get(STEP) is True:
            return True
        reasons = self.reasons.get(event.type)
        return reasons is not None and event.data.get("reason") in reasons


def remember(state: S) -> S:
    """`state` with itself (its chain left out) as the newest earlier state."""
    return replace(state, earlier=state.earlier.append(replace(state, earlier=EMPTY)))


def restore(state: S) -> S:
    """The newest earlier state with the rest of the chain; `state` itself when there is
    none (a fold never refuses: an ``undone`` event is a fact already decided)."""
    if not state.earlier:
        return state
    back: S = state.earlier[-1]
    return replace(back, earlier=state.earlier.without_last())


def can_undo(state: Undoable) -> bool:
    return bool(state.earlier)


def evolve(state: S, event: Event, points: Points,
           folds: Mapping[str, Callable[[S, Event], S]]) -> S:
    """Fold `event` with undo: restore on ``undone`` (then the engine's own ``undone`` fold,
    if any, adjusts the restored state), remember before an undo point, then fold."""
    if event.type == UNDONE:
        state = restore(state)
    elif event in points:
        state = remember(state)
    fold = folds.get(event.type)
    return state if fold is None else fold(state, event)


def decide(state: Undoable, cmd: Command) -> list[Event]:
    """The ``undo`` command: ``undone`` saying the phase it returns to, or `nothing_to_undo`."""
    if not state.earlier:
        raise kit.nothing_to_undo()
    return [Event(UNDONE, cmd.t_ns, {"phase": state.earlier[-1].phase})]


def actions(state: Undoable) -> list[Action]:
    """The host's ``undo`` when there is something to undo (asked first: there is no redo)."""
    if not state.earlier:
        return []
    return [Action(UNDO, "Отменить последнее решение", "Undo the last decision", key=KEY,
                   confirm=True)]
