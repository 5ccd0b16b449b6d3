"""The tournament as an engine («турнир»): the same shape as the battle and TV engines, so
the box's game loop, session and SQLite log run it, replay it at start and export it.

A tournament is one "game" in the log whose rules are ``tournament``; its battles are games
of their own (rules ``battle``), linked by the ``game`` number in ``battle_started``. The
tournament never reads a clock and has no deadlines: the lot's seed comes in the ``draw``
command, the results in ``battle_result``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from appliance.rules.protocol import Action, Command, Event, Refused
from appliance.rules.tournament.commands import HANDLERS, configure, no
from appliance.rules.tournament.folds import EVOLVERS
from appliance.rules.tournament.state import Settings, Tournament
from appliance.rules.tournament.views import summary, view

NAME = "tournament"
BACKGROUND = True
"""The loop runs a tournament beside its battles: never the current game, never ended by
the host console's "end the game" (see `appliance.runtime.loop`). The battles started from
the bracket become current as any game does."""

__all__ = ["NAME", "initial", "decide", "evolve", "legal_actions", "next_deadline", "view",
           "summary", "parts"]


def initial(setup: Mapping[str, Any]) -> Tournament:
    """A tournament from ``{"title", "bracket", "final_ties", "final_red"}`` (all optional)."""
    if not isinstance(setup, Mapping):
        raise no("Настройки турнира — словарь.", "The tournament setup must be an object.",
                 "bad_setup")
    state = Tournament()
    args = {k: setup[k] for k in ("title", "bracket", "final_ties", "final_red") if k in setup}
    if args:
        for e in configure(state, Command("configure", 0, args)):
            state = evolve(state, e)
    return state


def decide(state: Tournament, command: Command) -> list[Event]:
    handler = HANDLERS.get(command.type)
    if handler is None:
        raise Refused(f"Неизвестная команда турнира «{command.type}».",
                      f"Unknown tournament command '{command.type}'.", "unknown")
    if state.finished and command.type not in ("configure", "edit_entry"):
        raise no("Турнир окончен.", "The tournament is over.", "finished")
    return handler(state, command)


def evolve(state: Tournament, event: Event) -> Tournament:
    fold = EVOLVERS.get(event.type)
    return fold(state, event) if fold else state


def next_deadline(state: Tournament) -> int | None:
    return None


def legal_actions(state: Tournament) -> list[Action]:
    """None on the host page: tournament commands need forms (entries, files, packages), so
    the director drives them from the admin page (`webui/tournament.py`), and a button that
    sends an incomplete command would only be refused."""
    return []


def parts(state: Tournament) -> set[int]:
    """The battle games this tournament counts: the loop closes, at start-up, a game set up
    for a bracket battle (its setup's ``tournament`` block) that no running tournament
    counts, so it never becomes the current game (see `GameLoop.resume`)."""
    return {b.game for b in state.battles if b.game is not None}


def settings_of(state: Tournament) -> Settings:
    return state.settings
