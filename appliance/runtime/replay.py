"""Run a script of timestamped commands through an engine and the event log, as the box would.

A script is JSON Lines. The first line starts the game, every other line is one command in
the public vocabulary (see docs/protocol.md), in the order the box received them:

    {"type": "new_game", "rules": "battle", "setup": {"players": ["Аня", "Борис"]}}
    {"type": "announce", "t_ns": 1000000000}
    {"type": "press", "t_ns": 1200000000, "at_ns": 1201000000, "player": 0, "by": "button"}

``t_ns`` is required (time is data: the script has its own clock); ``at_ns`` is when the box
received the command, if later (a press is stamped at the button, delivered a little after).
Before each command the engine gets a timeout at every deadline due by the command's
arrival, exactly as the game loop does (`RunningGame.run`). When the script ends, time
runs on until no deadline is left ("drain"), unless asked not to. ``{"type": "end_game"}``
closes the game. Blank lines and lines starting with ``#`` are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from appliance.rules import registry
from appliance.rules.protocol import Command, Refused
from appliance.runtime.loop import END_GAME
from appliance.runtime.running import RunningGame
from appliance.runtime.store import Store

NEW_GAME = "new_game"
FAR_FUTURE_NS = 2**62
DRAIN_ROUNDS = 10  # an engine whose deadlines never stop (a ticking clock) ends the drain


class ScriptError(Exception):
    """The script cannot be run at all (no valid first line)."""

    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line = line


@dataclass(frozen=True, slots=True)
class Rejection:
    """A line the box refused: the rules forbid it now, or it is not a valid command."""

    line: int
    refused: Refused
    command: dict[str, Any] | None = None

    def describe(self) -> str:
        r = self.refused
        return f"line {self.line}: refused ({r.code}): {r.message_en} / {r.message_ru}"


@dataclass(slots=True)
class Result:
    session: RunningGame
    commands: int = 0  # lines run (accepted or refused)
    events: int = 0  # events committed, timeouts included
    rejections: list[Rejection] = field(default_factory=list)

    @property
    def summary(self) -> dict[str, Any]:
        return dict(self.session.rules.summary(self.session.state))


def _numbered(lines: Iterable[str]) -> Iterable[tuple[int, str]]:
    for number, text in enumerate(lines, 1):
        text = text.strip()
        if text and not text.startswith("#"):
            yield number, text


def _refusal(ru: str, en: str) -> Refused:
    return Refused(ru, en, "bad_line")


def run(lines: Iterable[str], store: Store, *, strict: bool = False, drain: bool = True,
        on_rejection: Callable[[Rejection], None] | None = None) -> Result:
    """Run a script into `store` (a new game). With `strict`, stop at the first refusal
    (the result then holds exactly one rejection, the last)."""
    numbered = iter(_numbered(lines))
    first = next(numbered, None)
    if first is None:
        raise ScriptError(0, "the script is empty")
    number, text = first
    try:
        head = json.loads(text)
    except json.JSONDecodeError as e:
        raise ScriptError(number, f"not JSON: {e}") from e
    if not isinstance(head, dict) or head.get("type") != NEW_GAME:
        raise ScriptError(number, 'the first line must be {"type": "new_game", ...}')
    setup = head.get("setup", {})
    if not isinstance(setup, dict):
        raise ScriptError(number, "setup must be a JSON object")
    try:
        rules = registry.get(str(head.get("rules")))
        session = RunningGame.new(store, str(head["rules"]), rules, setup)
    except Refused as r:
        raise ScriptError(number, f"{r.message_en} / {r.message_ru}") from r
    result = Result(session)
    last_arrival: int | None = None

    def reject(line: int, refused: Refused, obj: Any = None) -> bool:
        rejection = Rejection(line, refused, obj if isinstance(obj, dict) else None)
        result.rejections.append(rejection)
        if on_rejection:
            on_rejection(rejection)
        return strict

    for number, text in numbered:
        result.commands += 1
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            if reject(number, _refusal("Строка — не JSON.", f"Not JSON: {e}")):
                break
            continue
        try:
            command = _command(obj)
        except Refused as r:
            if reject(number, r, obj):
                break
            continue
        if last_arrival is not None and command.arrival_ns < last_arrival:
            if reject(number, _refusal(
                    "Время прибытия идёт назад: строки — в порядке прибытия.",
                    f"Arrival {command.arrival_ns} is before the previous line's "
                    f"{last_arrival}: lines are in the order the box received them."), obj):
                break
            continue
        last_arrival = command.arrival_ns
        if command.type == END_GAME:
            result.events += sum(len(s.events) for s in session.due(command.arrival_ns))
            try:
                if session.finished:
                    raise Refused("Игра уже окончена.", "The game is over.", "finished")
                session.finish()
            except Refused as r:
                if reject(number, r, obj):
                    break
            continue
        *_, own = steps = session.run(command)
        result.events += sum(len(s.events) for s in steps)
        if own.refused is not None and reject(number, own.refused, obj):
            break
    else:
        for _ in range(DRAIN_ROUNDS if drain and not session.finished else 0):
            steps = session.due(FAR_FUTURE_NS)
            if not steps:
                break
            result.events += sum(len(s.events) for s in steps)
    return result


def _command(obj: Any) -> Command:
    if not isinstance(obj, dict):
        raise _refusal("Команда должна быть объектом JSON.", "A command must be a JSON object.")
    if obj.get("type") == NEW_GAME:
        raise _refusal("Вторая игра в одном сценарии не поддерживается.",
                       "Only the first line may start a game.")
    if "t_ns" not in obj:
        raise _refusal("У команды нет времени t_ns.", "A script command needs its t_ns.")
    return Command.from_json(obj)
