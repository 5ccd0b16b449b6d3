"""Buzzer arbitration: who pressed first, to the tick, whatever order the presses arrive in.

A pure value type, `Race`, holds one question's presses. The engines drive it:

- `lamp_on` opens the buttons («сигнал»); a press stamped before it is a false start
  («фальстарт») when the rule-set has false starts (TV), or is ignored (sport);
- `press` records a press; eligible presses after the lamp become candidates;
- `settle` commits the winner — the candidate with the lowest tick — once the settle window
  after the earliest candidate has passed, so an earlier-stamped press still in flight
  (GPIO callbacks arrive grouped by pin, not in time order) is not beaten by a later one;
- `open_queue` (sport) lets the others fix their order («очередь») by pressing after the
  host has reset the first signal; the queue is kept in tick order.

Equal ticks (the same nanosecond) are broken by seat, rotated by the question's `rotation`
so no seat is favoured over a game: the winner is the tied player with the smallest
``(seat - rotation) mod seats``.

Every press stays in `presses` with its status and its offset from the lamp, so a host can
show the whole race: who was first and by how many milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from appliance.rules.records import copier, maker, replace

MS = 1_000_000

# The settle window the box writes into the setup of every game it starts. Measured, not
# guessed (bench/gpio_latency.py --settle-ms 5,10,20,30; docs/performance.md, "Buttons"):
# the smallest window with no race decided against the ticks under a 1,000 edges/s storm on
# the loaded development machine. An edge that is later still is shown to the host, who may
# hand the answer over. The `Settings` default (5 ms) stays what logs without the setting
# were played with, so they fold as they always did.
BOX_SETTLE_MS = 10


class Status:
    """Why a press counted or not."""

    CANDIDATE = "candidate"  # eligible, waiting for the settle window
    WINNER = "winner"  # won the right to answer («право ответа»)
    BEATEN = "beaten"  # eligible but later than the winner
    FALSE_START = "false_start"  # before the lamp: blocks the player (TV)
    EARLY = "early"  # before the lamp where false starts do not exist (sport): ignored
    BLOCKED = "blocked"  # during a false-start block: restarts the block
    BOUNCE = "bounce"  # a repeat edge inside the player's bounce window
    ANSWERED = "answered"  # the player already answered this question
    LATE = "late"  # after the winner was committed, with no queue open
    QUEUED = "queued"  # fixed a place in the queue (sport)
    CLOSED = "closed"  # the buttons are off (lamp off after the question)


@dataclass(frozen=True, slots=True)
class Settings:
    settle_ns: int = 5 * MS
    bounce_ns: int = 30 * MS
    false_start_ns: int | None = 2000 * MS  # block length; None: no false starts (sport)


@dataclass(frozen=True, slots=True)
class PressRecord:
    player: int
    t_ns: int
    status: str
    by: str = "button"

    def to_json(self, lamp_ns: int | None) -> dict[str, Any]:
        offset = None if lamp_ns is None else (self.t_ns - lamp_ns) / MS
        return {"player": self.player, "t_ns": self.t_ns, "status": self.status,
                "ms_after_lamp": offset, "by": self.by}


@dataclass(frozen=True)
class Race:
    """One question's buttons. Players are seat numbers 0..seats-1.

    Declared without slots: a press copies the race, and `records.replace` copies a record
    without slots in one C call (its instance dict), whatever its number of fields."""

    seats: int
    settings: Settings = field(default_factory=Settings)
    playing: frozenset[int] = frozenset()  # may press in this question
    answered: frozenset[int] = frozenset()  # already answered: may not press again
    rotation: int = 0
    lamp_ns: int | None = None  # when the lamp lit; None while it is off
    lamps: tuple[int, ...] = ()  # every lighting of this question, for the race report
    opened: bool = False  # the question is open (presses before the lamp are false starts)
    closed: bool = False  # the buttons are off for good
    blocked_until: tuple[tuple[int, int], ...] = ()  # (player, tick) false-start blocks
    last_edge: tuple[tuple[int, int], ...] = ()  # (player, tick) for the bounce window
    presses: tuple[PressRecord, ...] = ()
    winner: int | None = None
    winner_ns: int | None = None
    queue_from_ns: int | None = None  # the host reset the first signal at this tick
    queue: tuple[PressRecord, ...] = ()

    # -- queries -------------------------------------------------------------------------
    @property
    def armed(self) -> bool:
        """The lamp is on and nobody has won yet: pressing is allowed now."""
        return self.lamp_ns is not None and self.winner is None and not self.closed

    def eligible(self, player: int) -> bool:
        return player in self.playing and player not in self.answered

    def blocked(self, player: int, t_ns: int) -> bool:
        until = _get(self.blocked_until, player)
        return until is not None and t_ns < until

    def candidates(self) -> list[PressRecord]:
        return [p for p in self.presses if p.status == Status.CANDIDATE]

    def settle_deadline(self) -> int | None:
        """The tick at which the winner may be committed, or None if nothing is pending."""
        c = self.candidates()
        if self.winner is not None or not c:
            return None
        return min(p.t_ns for p in c) + self.settings.settle_ns

    def order_key(self, p: PressRecord) -> tuple[int, int]:
        return (p.t_ns, (p.player - self.rotation) % max(self.seats, 1))

    def lamp_for(self, t_ns: int) -> int | None:
        """The lighting a press at `t_ns` is measured from: the last one before it, or for a
        press before any lighting (a false start) the first one after it."""
        before = [t for t in self.lamps if t <= t_ns]
        if before:
            return before[-1]
        return self.lamps[0] if self.lamps else None

    def report(self) -> list[dict[str, Any]]:
        """The race as the screens show it, in tick order; offsets survive the lamp going
        off and re-arming."""
        return [p.to_json(self.lamp_for(p.t_ns))
                for p in sorted(self.presses, key=self.order_key)]


_copy_race = copier(Race)
_make_race = maker(Race)


def new_race(
    seats: int,
    settings: Settings | None = None,
    playing: Iterable[int] | None = None,
    rotation: int = 0,
    lamp_ns: int | None = None,
) -> Race:
    """A question's race. Presses before `open_question` or `lamp_on` are not false starts.
    With `lamp_ns`, the race as `lamp_on` at that tick leaves it (sport: the buttons are
    armed by the announcement itself)."""
    if lamp_ns is not None:
        return _make_race({"seats": seats, "settings": settings or Settings(),
                           "playing": frozenset(range(seats) if playing is None else playing),
                           "rotation": rotation, "lamp_ns": lamp_ns, "lamps": (lamp_ns,),
                           "opened": True})
    return Race(
        seats=seats,
        settings=settings or Settings(),
        playing=frozenset(range(seats) if playing is None else playing),
        rotation=rotation,
    )


def open_question(race: Race) -> Race:
    """The host starts reading: from now on a press before the lamp is a false start."""
    return replace(race, opened=True)


def lamp_on(race: Race, t_ns: int, **changes: Any) -> Race:
    """Light the lamp («сигнал»): presses stamped from `t_ns` on may win. `changes` are
    made in the same copy (a re-arm's answered players)."""
    return replace(race, lamp_ns=t_ns, lamps=race.lamps + (t_ns,), opened=True, winner=None,
                   winner_ns=None, queue_from_ns=None, queue=(), **changes)


def lamp_off(race: Race) -> Race:
    return replace(race, lamp_ns=None)


def close(race: Race) -> Race:
    """The question is over: no press counts any more."""
    return replace(race, closed=True, lamp_ns=None)


Pairs = tuple[tuple[int, int], ...]


def _get(pairs: Pairs, player: int) -> int | None:
    for p, tick in pairs:
        if p == player:
            return tick
    return None


def _with(pairs: Pairs, player: int, tick: int) -> Pairs:
    """`pairs` (sorted by player, one pair each) with `player`'s tick set to `tick`."""
    for i, (p, _) in enumerate(pairs):
        if p >= player:
            return pairs[:i] + ((player, tick),) + pairs[i + (p == player):]
    return pairs + ((player, tick),)


def press(race: Race, player: int, t_ns: int, by: str = "button") -> Race:
    """Record a press stamped `t_ns`, arriving in any order relative to other players'.
    One copy of the race whatever the outcome (a press is the most frequent event)."""
    s = race.settings
    last = _get(race.last_edge, player)
    if last is not None and abs(t_ns - last) < s.bounce_ns:
        if t_ns < last:
            # An earlier edge of the same burst arrived late: it is the real press time.
            return _reclock(race, player, last, t_ns)
        return _record(race, PressRecord(player, t_ns, Status.BOUNCE, by))
    edges = _with(race.last_edge, player, t_ns)

    if race.closed or player not in race.playing:
        return _record(race, PressRecord(player, t_ns, Status.CLOSED, by), last_edge=edges)
    if race.lamp_ns is None or t_ns < race.lamp_ns:
        if s.false_start_ns is not None and race.opened and player not in race.answered:
            return _record(race, PressRecord(player, t_ns, Status.FALSE_START, by),
                           last_edge=edges, blocked_until=_with(
                               race.blocked_until, player, t_ns + s.false_start_ns))
        return _record(race, PressRecord(player, t_ns, Status.EARLY, by), last_edge=edges)
    if player in race.answered:
        return _record(race, PressRecord(player, t_ns, Status.ANSWERED, by), last_edge=edges)
    if race.blocked_until and race.blocked(player, t_ns):
        return _record(race, PressRecord(player, t_ns, Status.BLOCKED, by), last_edge=edges,
                       blocked_until=_with(race.blocked_until, player,
                                           t_ns + (s.false_start_ns or 0)))
    if race.winner is not None:
        if player == race.winner:
            return _record(race, PressRecord(player, t_ns, Status.BOUNCE, by), last_edge=edges)
        if race.queue_from_ns is not None and t_ns >= race.queue_from_ns:
            if any(q.player == player for q in race.queue):
                return _record(race, PressRecord(player, t_ns, Status.BOUNCE, by),
                               last_edge=edges)
            rec = PressRecord(player, t_ns, Status.QUEUED, by)
            return _record(race, rec, last_edge=edges,
                           queue=tuple(sorted(race.queue + (rec,), key=race.order_key)))
        return _record(race, PressRecord(player, t_ns, Status.LATE, by), last_edge=edges)
    status = Status.CANDIDATE
    for p in race.presses:  # a loop, not any(): a press's fold is the engines' hottest path
        if p.player == player and p.status == Status.CANDIDATE:
            status = Status.BOUNCE
            break
    return _record(race, PressRecord(player, t_ns, status, by), last_edge=edges)


def _record(race: Race, rec: PressRecord, **changes: Any) -> Race:
    changes["presses"] = race.presses + (rec,)
    return _copy_race(race, changes)


def _reclock(race: Race, player: int, old: int, new: int) -> Race:
    """An earlier edge of the same burst arrived late: it is the real press time, so the
    result does not depend on delivery order within one player's burst. The press is
    decided again at its earlier tick (which may make it a false start). Once the winner is
    committed nothing is re-decided: the late edge is only recorded as a bounce."""
    if race.winner is not None:
        return _record(race, PressRecord(player, new, Status.BOUNCE))
    idx = next((i for i, p in enumerate(race.presses)
                if p.player == player and p.t_ns == old and p.status != Status.BOUNCE), None)
    if idx is None:
        return _record(race, PressRecord(player, new, Status.BOUNCE))
    accepted = race.presses[idx]
    blocks = dict(race.blocked_until)
    if accepted.status in (Status.FALSE_START, Status.BLOCKED):
        blocks.pop(player, None)  # the block is restarted from the earlier tick
    edges = dict(race.last_edge)
    edges.pop(player)
    race = replace(race, presses=race.presses[:idx] + race.presses[idx + 1:],
                   blocked_until=tuple(sorted(blocks.items())),
                   last_edge=tuple(sorted(edges.items())),
                   queue=tuple(q for q in race.queue if q is not accepted))
    race = press(race, player, new, accepted.by)
    return _record(race, PressRecord(player, old, Status.BOUNCE, accepted.by))


def settle(race: Race, now_ns: int) -> Race:
    """Commit the winner if the settle window after the earliest candidate has passed."""
    if race.winner is not None:
        return race
    candidates = race.candidates()
    if not candidates or now_ns < min(p.t_ns for p in candidates) + race.settings.settle_ns:
        return race  # nothing pending, or the window (`settle_deadline`) still open
    first = min(candidates, key=race.order_key)
    presses = tuple([
        PressRecord(p.player, p.t_ns, Status.WINNER if p is first else Status.BEATEN, p.by)
        if p.status == Status.CANDIDATE else p
        for p in race.presses])
    return _copy_race(race, {"presses": presses, "winner": first.player,
                             "winner_ns": first.t_ns})


def earlier_late(race: Race) -> PressRecord | None:
    """The earliest press that reached the box after the winner was committed yet carries an
    earlier tick than the winner's: its edge came to the loop later than the settle window
    (a loaded machine, a late callback), so the box decided without it. Only against a
    winner of the settle window itself (not the queue's), and only presses answering the
    same lighting of the lamp. None if there is no such press."""
    if race.winner is None or race.winner_ns is None:
        return None
    won = any(p.status == Status.WINNER and p.player == race.winner
              and p.t_ns == race.winner_ns for p in race.presses)
    if not won:
        return None
    lamp = race.lamp_for(race.winner_ns)
    late = [p for p in race.presses
            if p.status == Status.LATE and p.t_ns < race.winner_ns
            and p.player != race.winner and p.player not in race.answered
            and race.lamp_for(p.t_ns) == lamp]
    return min(late, key=race.order_key, default=None)


def ms_text(ns: int) -> tuple[str, str]:
    """A small interval in milliseconds, Russian (decimal comma) and English: 0,4 / 0.4;
    below 0.1 ms with the digits it needs (0,002)."""
    ms = ns / MS
    text = f"{ms:.1f}" if ms >= 0.1 else f"{ms:.3f}".rstrip("0")
    return text.replace(".", ","), text


def late_notice(race: Race, names: Sequence[str]) -> dict[str, Any] | None:
    """What the host (and the board's race view) is shown about `earlier_late`: who, how
    much earlier, in both languages (neutral wording: a name says nothing sure about its
    grammatical gender). None if there is nothing to show."""
    p = earlier_late(race)
    if p is None or race.winner_ns is None:
        return None
    ahead = race.winner_ns - p.t_ns
    ru, en = ms_text(ahead)
    name = names[p.player]
    return {"player": p.player, "name": name, "winner": race.winner,
            "earlier_by_ms": ahead / MS,
            "ru": f"{name}: нажатие раньше на {ru} мс", "en": f"{name} pressed {en} ms earlier"}


def hand_over(race: Race, player: int) -> Race:
    """The right to answer goes to `player`, whose press (`earlier_late`) carries the
    earlier tick; the committed winner becomes the one beaten."""
    first = earlier_late(race)
    if first is None or first.player != player:
        raise ValueError(f"player {player} has no earlier press that arrived late")
    presses = tuple(
        replace(p, status=Status.WINNER) if p is first
        else replace(p, status=Status.BEATEN) if p.status == Status.WINNER else p
        for p in race.presses)
    return replace(race, presses=presses, winner=player, winner_ns=first.t_ns)


def open_queue(race: Race, t_ns: int) -> Race:
    """The host reset the first signal: from `t_ns` the others fix their order by pressing.
    Candidates beaten before the reset do not queue by themselves (the rule says the order is
    fixed by pressing after the reset)."""
    return replace(race, queue_from_ns=t_ns)


def next_in_queue(race: Race) -> tuple[Race, int | None]:
    """After a wrong answer: the answerer is done; the first queued player must answer."""
    answered = race.answered | ({race.winner} if race.winner is not None else set())
    queue = tuple(q for q in race.queue if q.player not in answered)
    if not queue:
        return replace(race, answered=answered, queue=()), None
    head, rest = queue[0], queue[1:]
    return replace(race, answered=answered, winner=head.player, winner_ns=head.t_ns,
                   queue=rest), head.player


def rearm(race: Race, t_ns: int) -> Race:
    """After a wrong answer: the answerer is done, the lamp lights again for the others."""
    answered = race.answered | ({race.winner} if race.winner is not None else set())
    return lamp_on(race, t_ns, answered=answered)


def reaction_ns(race: Race, t_ns: int) -> int:
    """A press's reaction time: from the lamp in force (the latest arming) to the press.
    Both engines measure reactions with this, and aggregate them with
    `appliance.rules.kit.reaction_ms`."""
    return t_ns - (race.lamp_ns or 0)
