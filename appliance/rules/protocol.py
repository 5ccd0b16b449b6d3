"""What every rules engine speaks: commands in, events out, refusals with a reason.

An engine is a module (or object) with pure functions over an immutable state:

- ``initial(setup) -> State``            the state a game starts in
- ``decide(state, command) -> [Event]``  validate a command; raise `Refused` if the rules forbid it
- ``evolve(state, event) -> State``      fold one event into the state (never refuses)
- ``legal_actions(state) -> [Action]``   what the host (or a player) may do now
- ``next_deadline(state) -> int | None`` the next monotonic tick (ns) the engine must be woken at
- ``view(state, role) -> dict``          what a screen of that role may see
- ``summary(state) -> dict``             the game's result as plain JSON

The log holds events, so the same log always folds into the same state, whatever the engine
later learns to decide.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

# Who sends a command. Host commands come from the host tablet or a script; presses from a
# wired button ("button"), a phone or keyboard in simulator mode ("phone", "key"); timeouts
# from the game loop itself.
HOST = "host"
LOOP = "loop"


@dataclass(frozen=True, slots=True)
class Command:
    """One input to an engine. `t_ns` is on the box's monotonic clock: for a press it is the
    press's own (kernel) timestamp; `at_ns` is when the loop received it, if different."""

    type: str
    t_ns: int = 0
    args: Mapping[str, Any] = field(default_factory=dict)
    by: str = HOST
    at_ns: int | None = None

    @property
    def arrival_ns(self) -> int:
        return self.t_ns if self.at_ns is None else self.at_ns

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.type, "t_ns": self.t_ns, **self.args}
        if self.by != HOST:
            d["by"] = self.by
        if self.at_ns is not None:
            d["at_ns"] = self.at_ns
        return d

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Command:
        """Parse the public JSON form: ``{"type": "press", "t_ns": 1, "player": 0, ...}``."""
        if not isinstance(obj, Mapping) or not isinstance(obj.get("type"), str):
            raise Refused("Команда без типа.", "A command needs a 'type'.")
        args = {k: v for k, v in obj.items() if k not in ("type", "t_ns", "by", "at_ns")}
        try:
            t_ns = int(obj.get("t_ns", 0))
            at_ns = None if obj.get("at_ns") is None else int(obj["at_ns"])
        except (TypeError, ValueError) as e:
            raise Refused("Время команды должно быть целым числом наносекунд.",
                          "A command's t_ns must be a whole number of nanoseconds.") from e
        return cls(obj["type"], t_ns, args, str(obj.get("by", HOST)), at_ns)


def press(player: int, t_ns: int, *, by: str = "button", at_ns: int | None = None) -> Command:
    """A button press («нажатие») by seat `player`, stamped `t_ns` at the edge."""
    return Command("press", t_ns, {"player": player}, by, at_ns)


def timeout(t_ns: int) -> Command:
    """The loop's wake-up at a deadline the engine asked for."""
    return Command("timeout", t_ns, {}, LOOP)


def is_timeout(command: Command) -> bool:
    """Whether `command` is the loop's own wake-up at a deadline (never a sender's)."""
    return command.type == "timeout" and command.by == LOOP


@dataclass(frozen=True, slots=True)
class Event:
    """A fact the engine decided. Stored in the log with its game, sequence and wall time."""

    type: str
    t_ns: int
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "t_ns": self.t_ns, **self.data}


class Refused(Exception):  # noqa: N818 - a refusal is not an error of the program
    """The rules forbid this command now. Both messages are for the host's screen."""

    def __init__(self, message_ru: str, message_en: str, code: str = "refused"):
        super().__init__(message_en)
        self.message_ru = message_ru
        self.message_en = message_en
        self.code = code

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "ru": self.message_ru, "en": self.message_en}


@dataclass(frozen=True, slots=True)
class Action:
    """A legal action now: its command type, labels, who may send it, and the choices
    (e.g. which players may be chosen) that make it a complete command."""

    type: str
    label_ru: str
    label_en: str
    by: str = HOST
    args: Mapping[str, Any] = field(default_factory=dict)
    key: str = ""  # keyboard shortcut on the host page
    confirm: bool = False  # rare or destructive: ask before sending
    # The seat the rules give this move (the auction's bidder, the cat's giver, the
    # chooser): that player's phone may send it too, for that seat only; the host always may.
    seat: int | None = None

    def to_json(self) -> dict[str, Any]:
        out = {
            "type": self.type, "ru": self.label_ru, "en": self.label_en, "by": self.by,
            "args": dict(self.args), "key": self.key, "confirm": self.confirm,
        }
        if self.seat is not None:
            out["seat"] = self.seat
        return out


State = TypeVar("State")


class Rules(Protocol[State]):
    """The shape of an engine module (see the module docstring), over its own state type:
    `Rules[tv.state.State]`, `Rules[battle.state.Battle]`. Code that picks an engine by
    name at run time (the loop, scripts) holds a `Rules[Any]`."""

    NAME: str

    def initial(self, setup: Mapping[str, Any], /) -> State: ...
    def decide(self, state: State, command: Command, /) -> list[Event]: ...
    def evolve(self, state: State, event: Event, /) -> State: ...
    def legal_actions(self, state: State, /) -> list[Action]: ...
    def next_deadline(self, state: State, /) -> int | None: ...
    def view(self, state: State, role: str, /) -> dict[str, Any]: ...
    def summary(self, state: State, /) -> dict[str, Any]: ...


def fold(rules: Rules[State], state: State, events: Iterable[Event]) -> State:
    """The state after `events`, folded one by one (a log replayed)."""
    for e in events:
        state = rules.evolve(state, e)
    return state
