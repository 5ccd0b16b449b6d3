"""A tiny rules engine for testing the store and the game loop without a real game's rules.

It keeps the engine contract (pure functions over a frozen state) and has just enough rules
to exercise the loop: scores that a command changes, a deadline («arm» a window that a
timeout closes), presses that count only while armed, a command that writes several events
at once (atomic appends), and undo.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from appliance.rules.protocol import Action, Command, Event, Refused

NAME = "tiny"
MS = 1_000_000


@dataclass(frozen=True, slots=True)
class State:
    players: tuple[str, ...]
    scores: tuple[int, ...]
    added: tuple[tuple[int, int], ...] = ()  # (player, points) in order, for undo
    armed_until: int | None = None
    presses: tuple[int, ...] = ()
    expired: int = 0
    ticks: int = 0
    last_burst: int = 0


def initial(setup: Mapping[str, Any]) -> State:
    players = setup.get("players")
    if not isinstance(players, list) or not 1 <= len(players) <= 4:
        raise Refused("Нужно от 1 до 4 игроков.", "1 to 4 players are needed.")
    return State(tuple(str(p) for p in players), (0,) * len(players))


def _player(state: State, cmd: Command) -> int:
    p = cmd.args.get("player")
    if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p < len(state.players):
        raise Refused("Нет такого игрока.", f"No player {p!r}.")
    return p


def decide(state: State, cmd: Command) -> list[Event]:
    t = cmd.t_ns
    if cmd.type == "add":
        p, pts = _player(state, cmd), cmd.args.get("points")
        if not isinstance(pts, int) or isinstance(pts, bool):
            raise Refused("Очки должны быть числом.", "Points must be a number.")
        return [Event("added", t, {"player": p, "points": pts})]
    if cmd.type == "arm":
        ms = cmd.args.get("ms")
        if not isinstance(ms, int) or ms <= 0:
            raise Refused("Нужна длительность.", "A duration is needed.")
        return [Event("armed", t, {"until": t + ms * MS})]
    if cmd.type == "timeout":
        if state.armed_until is None or t < state.armed_until:
            raise Refused("Рано.", "Nothing is due.")
        return [Event("expired", t)]
    if cmd.type == "press":
        p = _player(state, cmd)
        if state.armed_until is None:
            raise Refused("Кнопки выключены.", "The buttons are off.")
        return [Event("pressed", t, {"player": p})]
    if cmd.type == "burst":
        k = cmd.args.get("k")
        if not isinstance(k, int) or not 1 <= k <= 50:
            raise Refused("k от 1 до 50.", "k must be 1 to 50.")
        n = cmd.args.get("n", 0)
        return [Event("tick", t, {"n": n, "i": i, "of": k, "pad": "x" * 200}) for i in range(k)]
    if cmd.type == "undo":
        if not state.added:
            raise Refused("Нечего отменять.", "Nothing to undo.")
        return [Event("undone", t)]
    raise Refused("Неизвестная команда.", f"Unknown command {cmd.type!r}.")


def evolve(state: State, event: Event) -> State:
    d = event.data
    if event.type == "added":
        scores = list(state.scores)
        scores[d["player"]] += d["points"]
        return replace(state, scores=tuple(scores),
                       added=(*state.added, (d["player"], d["points"])))
    if event.type == "undone":
        p, pts = state.added[-1]
        scores = list(state.scores)
        scores[p] -= pts
        return replace(state, scores=tuple(scores), added=state.added[:-1])
    if event.type == "armed":
        return replace(state, armed_until=d["until"])
    if event.type == "expired":
        return replace(state, armed_until=None, expired=state.expired + 1)
    if event.type == "pressed":
        return replace(state, presses=(*state.presses, d["player"]))
    if event.type == "tick":
        return replace(state, ticks=state.ticks + 1, last_burst=d["n"])
    return state


def legal_actions(state: State) -> list[Action]:
    seats = [{"value": i, "ru": n, "en": n} for i, n in enumerate(state.players)]
    actions = [
        Action("add", "Очки", "Points", args={
            "player": seats, "points": {"type": "int", "min": -50, "max": 50, "step": 10}}),
        Action("arm", "Включить", "Arm", args={
            "ms": [{"value": v, "ru": str(v), "en": str(v)} for v in (5, 100, 7000)]}),
        Action("burst", "Пачка", "Burst", args={"k": {"type": "int", "min": 1, "max": 5}}),
    ]
    if state.armed_until is not None:
        actions.append(Action("press", "Нажатие", "Press", by="button", args={"player": seats}))
    if state.added:
        actions.append(Action("undo", "Отменить", "Undo"))
    return actions


def next_deadline(state: State) -> int | None:
    return state.armed_until


def view(state: State, role: str) -> dict[str, Any]:
    return {"players": list(state.players), "scores": list(state.scores)}


def summary(state: State) -> dict[str, Any]:
    return {"players": list(state.players), "scores": list(state.scores),
            "presses": list(state.presses), "expired": state.expired, "ticks": state.ticks}
