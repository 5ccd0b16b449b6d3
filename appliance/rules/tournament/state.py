"""The tournament's state: entries, the drawn bracket and each battle's course.

Immutable and rebuilt by folding the log (`appliance.rules.tournament.folds`). Entries are known by
an id given when they are added (1, 2, ...), so a renamed player stays the same player; the
bracket holds ids, screens turn them into names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from appliance.rules.tournament import stages as st
from appliance.rules.tournament.draw import DrawnBattle
from appliance.rules.tournament.entries import Entry

# A battle's status, derived from what is known about it.
WAITING = "waiting"  # some seat waits for a winner
READY = "ready"  # every player known, not started
PLAYING = "playing"
STOPPED = "stopped"  # its game ended early without a winner: the director decides
DONE = "done"

SHARED = "shared"  # ties for 2nd/3rd in the final share the place (default)
EXTRA_THEME = "extra_theme"  # ... or the tied players play an extra theme (a playoff)
FINAL_TIES = (SHARED, EXTRA_THEME)
PLAYOFF = "F+"  # the playoff battle's id: the final's tied players, one theme at a time


@dataclass(frozen=True, slots=True)
class Settings:
    title: str = ""
    bracket: int | None = None  # None: the largest the entries fill
    final_ties: str = SHARED
    final_red: int = st.RED_THEMES_FINAL  # red themes of the final's 12 (3.4: six)

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "bracket": self.bracket, "final_ties": self.final_ties,
                "final_red": self.final_red}


@dataclass(frozen=True, slots=True)
class Player:
    id: int
    entry: Entry
    withdrawn: bool = False


@dataclass(frozen=True, slots=True)
class Line:
    """One player's line in a battle's result."""

    entry: int
    score: int
    extra: int = 0  # points scored in extra themes
    right: int = 0
    wrong: int = 0
    silent: int = 0  # questions played without answering («нет ответа»)
    presses: int = 0
    reaction_mean_ms: float | None = None
    reaction_best_ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.entry, "score": self.score, "extra": self.extra,
                "right": self.right, "wrong": self.wrong, "silent": self.silent,
                "presses": self.presses, "reaction_mean_ms": self.reaction_mean_ms,
                "reaction_best_ms": self.reaction_best_ms}


@dataclass(frozen=True, slots=True)
class ResultSource:
    """Where a battle's result came from, as its ``battle_result`` says: the battle game
    (`game`) on this box, or on the room box `box` of room `room` (the rooms link). Results
    logged before the event carried it have none."""

    box: str | None = None
    game: int | None = None
    room: str | None = None

    @classmethod
    def from_json(cls, d: Mapping[str, Any] | None) -> ResultSource | None:
        if not d:
            return None
        return cls(d.get("box"), d.get("game"), d.get("room"))

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in (("box", self.box), ("game", self.game),
                                  ("room", self.room)) if v is not None}


@dataclass(frozen=True, slots=True)
class Result:
    winner: int  # entry id
    lines: tuple[Line, ...]  # in seat order of the players present
    walkover: bool = False
    order: tuple[int, ...] = ()  # entry ids best first, when the battle says more than the winner
    awarded: str = ""  # the director's reason when a battle ended early went to its leader
    source: ResultSource | None = None  # the game (and room box) that played it


@dataclass(frozen=True, slots=True)
class BattleState:
    """A battle of the bracket as the day goes: who sits where, who did not come, what was
    played, what came out."""

    drawn: DrawnBattle
    seats: tuple[int | None, ...]  # entry ids (None: a winner not known yet)
    absent: tuple[int, ...] = ()
    started: bool = False
    game: int | None = None  # the battle engine's game in the log, when the box plays it
    themes: tuple[str, ...] = ()
    result: Result | None = None
    stopped: tuple[int, ...] | None = None  # scores per seat when its game ended early
    room: str | None = None  # the room it is played in (the rooms link), if not this box

    @property
    def id(self) -> str:
        return self.drawn.id

    @property
    def present(self) -> tuple[int, ...]:
        return tuple(s for s in self.seats if s is not None and s not in self.absent)

    @property
    def status(self) -> str:
        if self.result is not None:
            return DONE
        if self.started:
            return STOPPED if self.stopped is not None else PLAYING
        return WAITING if any(s is None for s in self.seats) else READY


@dataclass(frozen=True, slots=True)
class Tournament:
    settings: Settings = field(default_factory=Settings)
    players: tuple[Player, ...] = ()
    plan: st.Plan | None = None  # set by the draw
    seed: int | None = None
    seeds: tuple[int, ...] = ()
    seeded: bool = False  # drawn by rating (not in the regulation) rather than by lot alone
    battles: tuple[BattleState, ...] = ()  # in playing order; the playoff last, if any
    used_themes: tuple[str, ...] = ()

    # -- entries ---------------------------------------------------------------------------
    def player(self, entry_id: int) -> Player:
        for p in self.players:
            if p.id == entry_id:
                return p
        raise KeyError(entry_id)

    def active(self) -> list[Player]:
        return [p for p in self.players if not p.withdrawn]

    @property
    def next_id(self) -> int:
        return max((p.id for p in self.players), default=0) + 1

    def name(self, entry_id: int | None) -> str | None:
        return None if entry_id is None else self.player(entry_id).entry.name

    # -- the bracket -----------------------------------------------------------------------
    @property
    def drawn(self) -> bool:
        return self.plan is not None

    def battle(self, battle_id: str) -> BattleState | None:
        for b in self.battles:
            if b.id == battle_id:
                return b
        return None

    def index(self, battle_id: str) -> int:
        for i, b in enumerate(self.battles):
            if b.id == battle_id:
                return i
        raise KeyError(battle_id)

    def any_started(self) -> bool:
        return any(b.started or b.result is not None for b in self.battles)

    def in_bracket(self, entry_id: int) -> BattleState | None:
        """The first-round battle the draw put this entry in (None: not in the bracket)."""
        for b in self.battles:
            if b.drawn.id != PLAYOFF and any(s.entry == entry_id for s in b.drawn.seats):
                return b
        return None

    @property
    def final(self) -> BattleState | None:
        return self.battle("F")

    @property
    def finished(self) -> bool:
        f = self.final
        if f is None or f.result is None:
            return False
        p = self.battle(PLAYOFF)
        return p is None or p.result is not None


def by_id(state: Tournament) -> Mapping[int, Player]:
    return {p.id: p for p in state.players}
