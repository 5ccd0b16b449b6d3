"""One game: its engine, its state and its log, stepped one command at a time.

`RunningGame` is the synchronous heart shared by the threaded game loop
(`appliance.runtime.loop`) and the script runner (`appliance.runtime.replay`), so a script
exercises exactly what the box does:

    decide → normalize the events as the log will return them → fold → commit → swap state

A refused command changes nothing; a failed commit leaves the state as it was. Time is data:
`run(command)` first feeds the engine a timeout at every deadline due by the command's
arrival, then the command itself, so the same timestamps always give the same log.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from appliance.rules.protocol import Command, Event, Refused, Rules, fold, is_timeout, timeout
from appliance.runtime.store import Also, Store, normalize

log = logging.getLogger(__name__)

# A timeout that changes nothing yet leaves the same deadline would wake the loop forever.
MAX_TIMEOUTS_PER_STEP = 1000

# Told (command, events, state) once a deadline's events are decided and folded, before they
# are committed: see `RunningGame.due`.
Decided = Callable[[Command, list[Event], Any], None]
# Entered around a commit with (the game, the state the commit leads to): see
# `appliance.runtime.lampwatch`.
Committing = Callable[["RunningGame", Any], AbstractContextManager[None]]


def fold_log(rules: Rules, state: Any, events: Sequence[Event]) -> Any:
    """Fold a whole log (the start-up path after a power cut), with Python's cyclic garbage
    collector paused meanwhile. The engines' states are immutable trees: folding leaves no
    cycles to find, yet the collector kept walking the ever larger heap of decoded events and
    kept states, so a long log cost more per event (bench/replay.py: 18 µs an event at 50,000
    events against 12 µs at 1,000; 11 µs with the collector paused). Reference counting
    still frees what each step drops."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return fold(rules, state, events)
    finally:
        if paused:
            gc.enable()


def decide_deadline(rules: Rules, state: Any, deadline: int) -> tuple[list[Event], Any]:
    """A deadline's timeout decided as the loop decides it: its events as the log will
    return them and the state they lead to (the same state if none). Raises `Refused`."""
    events = normalize(rules.decide(state, timeout(deadline)))
    return events, fold(rules, state, events) if events else state


# (state, deadline, the timeout's events and the state they lead to, or the engine's
# refusal): a deadline decided ahead of its time (`RunningGame.ahead`).
Ahead = tuple[Any, int, tuple[list[Event], Any] | Refused]


@dataclass(slots=True)
class Step:
    """What one command did: the events committed (empty if none or refused)."""

    command: Command
    events: list[Event]
    refused: Refused | None = None
    state: Any = None  # the state right after this step


class RunningGame:
    """A game owned by one thread. `state` is immutable and swapped whole, so other threads
    may read it (and `rules`) at any moment without a lock."""

    def __init__(self, store: Store, game: int, rules_name: str, rules: Rules[Any], state: Any,
                 *, offset_ns: int = 0, finished: bool = False):
        self.store = store
        self.game = game
        self.rules_name = rules_name
        self.rules = rules
        self.state = state
        self.offset_ns = offset_ns  # game clock = box clock + offset (see `resume`)
        self.finished = finished
        self._stuck: tuple[int, Any] | None = None  # (deadline, state) a timeout ignored
        # the next deadline decided ahead (`prepare`, or the lamp watch's `offer`)
        self._ahead: Ahead | None = None

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def new(cls, store: Store, rules_name: str, rules: Rules[Any],
            setup: Mapping[str, Any], also: Also | None = None) -> RunningGame:
        """Start a game; the engine's `initial` may refuse the setup before anything is
        stored. `also`: see `Store.create_game`."""
        setup = normalize([Event("setup", 0, setup)])[0].data  # as the log will return it
        state = rules.initial(setup)
        game = store.create_game(rules_name, setup, also=also)
        return cls(store, game, rules_name, rules, state)

    @classmethod
    def new_linked(cls, store: Store, rules_name: str, rules: Rules[Any],
                   setup: Mapping[str, Any], parent: RunningGame,
                   command: Callable[[int], Command]) -> tuple[RunningGame, Step]:
        """Start a game and, in the same transaction, decide and commit `parent`'s
        `command(new game's number)` (a tournament's ``start_battle`` naming the battle's
        game): a power cut leaves both or neither. Raises `Refused` (the setup's or the
        parent's) with nothing written. Returns the new game and the parent's step."""
        if parent.finished:
            raise Refused("Игра окончена.", "The game is over.", "finished")
        setup = normalize([Event("setup", 0, setup)])[0].data
        decided: list[tuple[Step, Any]] = []

        def link(game: int) -> tuple[int, list[Event]]:
            # inside the transaction; the parent's refusal first, as it says more
            cmd = command(game)
            events = normalize(parent.rules.decide(parent.state, cmd))
            if not events:
                raise Refused("Команда ничего не изменила.", "The command changed nothing.",
                              "no_events")
            after = fold(parent.rules, parent.state, events)
            decided.append((Step(cmd, events, None, after), rules.initial(setup)))
            return parent.game, events

        game = store.create_game(rules_name, setup, linked=link)
        step, state = decided[0]
        parent.state = step.state
        return cls(store, game, rules_name, rules, state), step

    @classmethod
    def resume(cls, store: Store, game: int, rules: Rules[Any],
               now_ns: int | None = None) -> RunningGame:
        """Fold a stored game's events into its state. After a power cut the box's monotonic
        clock restarts near zero, so the game's clock is re-based to continue from the last
        moment the box is known to have been on: its last event, or the later clock mark the
        loop notes while a deadline is pending (`Store.mark_clock`). `now_ns` is the box
        clock now. Time stops while the box is off, and a 7 s window that was running
        resumes with the time it had left (less at most one mark's interval)."""
        record = store.game(game)
        if record is None:
            raise KeyError(game)
        events = store.events(game)
        state = fold_log(rules, rules.initial(record.setup), events)
        offset = 0
        if now_ns is not None and events:
            last = max(e.t_ns for e in events)
            mark = store.clock_mark(game)
            offset = max(last, mark if mark is not None else last) - now_ns
        return cls(store, game, record.rules, rules, state, offset_ns=offset,
                   finished=record.status != "running")

    # -- time ------------------------------------------------------------------------------
    def to_game_time(self, command: Command) -> Command:
        """A command stamped on the box clock, re-stamped on this game's clock."""
        if not self.offset_ns:
            return command
        at = None if command.at_ns is None else command.at_ns + self.offset_ns
        return Command(command.type, command.t_ns + self.offset_ns, command.args, command.by, at)

    def deadline(self) -> int | None:
        """The engine's next deadline on the game clock, unless a timeout there was already
        tried and changed nothing."""
        d = self.rules.next_deadline(self.state)
        if d is None or (self._stuck is not None and self._stuck[0] == d
                          and self._stuck[1] is self.state):
            return None
        return d

    # -- steps -----------------------------------------------------------------------------
    def prepare(self) -> None:
        """Decide the next deadline's timeout now, ahead of it, so that when the deadline
        comes only the commit is left: the lamp is lit a fold sooner after a settle window
        closes. Safe because a timeout's decision is a function of the state and the
        deadline alone; it is used only if neither has changed by then (any command that
        arrives first changes the state, and the decision is made again)."""
        d = self.deadline()
        if d is None or self.finished:
            return
        if self.decided_ahead(self.state, d) is None:
            self._ahead = self.ahead(self.state, d)

    def ahead(self, state: Any, deadline: int) -> Ahead | None:
        """`state`'s timeout at `deadline` decided, without touching this game: any thread
        may call it (the states are immutable). None if the engine failed: the deadline
        is then decided again in its time, where a failure is handled."""
        try:
            events, after = decide_deadline(self.rules, state, deadline)
        except Refused as r:
            return (state, deadline, r.with_traceback(None))
        except Exception:
            log.exception("game %s: deciding the deadline ahead failed", self.game)
            return None
        return (state, deadline, (events, after))

    def decided_ahead(self, state: Any, deadline: int) -> Ahead | None:
        """The decision `prepare` or `offer` keeps, if it is for `state` and `deadline`. A
        decision is a function of the state and the deadline alone, so one kept for the very
        same state object holds whenever that state is current."""
        ahead = self._ahead
        if ahead is not None and ahead[0] is state and ahead[1] == deadline:
            return ahead
        return None

    def offer(self, ahead: Ahead) -> None:
        """The lamp watch's decision for the state a commit under way leads to, made while
        the loop thread waits on that commit's fsync: once the commit returns, the coming
        deadline is already decided (`handle` uses it only if its state is the one then
        current). Called only during a commit, when the loop thread does not touch it."""
        self._ahead = ahead

    def handle(self, command: Command, decided: Decided | None = None,
               committing: Committing | None = None) -> list[Event]:
        """Decide and commit one command (game clock). Raises `Refused`; then nothing
        changed. Returns the committed events once they are on disk. `decided`, if given,
        is told the events and the state they lead to before the commit; `committing` is
        entered around the commit."""
        if self.finished:
            raise Refused("Игра окончена.", "The game is over.", "finished")
        ahead = self._ahead
        if (ahead is not None and ahead[0] is self.state
                and command == timeout(ahead[1])):  # decided by `prepare`, nothing changed
            self._ahead = None
            if isinstance(ahead[2], Refused):
                raise ahead[2]
            events, state = ahead[2]
            if not events:
                return []
        else:
            events = normalize(self.rules.decide(self.state, command))
            if not events:
                return []
            state = fold(self.rules, self.state, events)
        if decided is not None:
            decided(command, events, state)
        # A deadline's decision follows from the log before it, so its commit waits for no
        # fsync (`Store.append`): the screens hear of the answerer without a disk's delay,
        # and the loop writes it out (`Store.sync`) once they are told.
        durable = not is_timeout(command)
        if committing is None:
            self.store.append(self.game, events, durable=durable)
        else:
            with committing(self, state):
                self.store.append(self.game, events, durable=durable)
        self.state = state
        return events

    def due(self, until_ns: int, decided: Decided | None = None,
            steps: list[Step] | None = None,
            committing: Committing | None = None) -> list[Step]:
        """Feed a timeout at each deadline up to `until_ns` (game clock), in order.

        `decided` hears each timeout's events before their commit. That is safe for a
        timeout and for nothing else: its events are a function of the log already on disk
        and of the deadline, so if the box loses them to a power cut, the resumed game
        reaches the same deadline with the same log and decides the same events again (the
        lamp lit for a press winner is re-derived identically). A command from outside is
        not in the log until its own commit, so it is told only after that.

        The steps are appended to `steps` (a new list if None) as they are committed, so a
        caller whose later commit raised still knows which ones to tell. `committing`: see
        `handle`."""
        steps = [] if steps is None else steps
        for _ in range(MAX_TIMEOUTS_PER_STEP):
            d = self.deadline()
            if d is None or d > until_ns or self.finished:
                break
            cmd = timeout(d)
            try:
                events = self.handle(cmd, decided, committing)
            except Refused as r:
                self._stuck = (d, self.state)
                steps.append(Step(cmd, [], r, self.state))
                continue
            if not events or self.rules.next_deadline(self.state) == d:
                self._stuck = (d, self.state)
            steps.append(Step(cmd, events, None, self.state))
        return steps

    def run(self, command: Command, decided: Decided | None = None,
            steps: list[Step] | None = None,
            committing: Committing | None = None) -> list[Step]:
        """The deadlines that fell due by the command's arrival (a deadline equal to the
        arrival comes first, as in the engines' own catch-up), then the command: the last
        step is the command's own (refused or not). `decided` and `steps`: see `due` (if a
        commit raises, `steps` holds the timeouts committed before it). `committing` is
        entered around the command's own commit only, not its catch-up's."""
        steps = self.due(command.arrival_ns, decided, steps)
        try:
            steps.append(Step(command, self.handle(command, None, committing), None,
                              self.state))
        except Refused as r:
            steps.append(Step(command, [], r, self.state))
        return steps

    def finish(self) -> dict[str, Any]:
        """Close the game with its final summary."""
        summary = normalize([Event("summary", 0, self.rules.summary(self.state))])[0].data
        self.store.finish(self.game, summary)
        self.finished = True
        return dict(summary)
