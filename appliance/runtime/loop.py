"""The game loop: the one thread that owns every game's state («один писатель»).

GPIO callbacks, Socket.IO handlers and scripts never touch a state: they `submit` commands
(thread-safe) and get a `Future` that resolves once the command's events are committed to
the log. The inbox is bounded per source (`appliance.runtime.inbox`): wired buttons, the
host and the screens each have their own room, and a command whose source's room is full is
refused at once (`BUSY`), so no storm of phone commands keeps a wired press or the host out.
The loop thread takes commands in arrival order, sleeps until the earliest deadline any
engine asked for (settle window, false-start block, 7 s window) and then feeds that engine a
timeout command stamped with the deadline itself. A command that arrived at or after a
deadline is decided after that deadline's timeout (see `RunningGame.run`), so a press that
came in after the settle window cannot beat the winner the window already fixed.

After every committed command the subscribers get an `Update`: inline ones on the loop
thread (for the lamp and LEDs: they must be fast and never block), the others on a notifier
thread, so a slow screen never delays a press. The screens (``ahead`` subscribers) hear of a
deadline's decision as soon as the loop makes it, before its commit: see `subscribe`.

Life cycle (owned here, not by the engines): `new_game` creates a game and makes it current;
the host's ``{"type": "end_game"}`` command closes it and stores the engine's final summary.
An engine that sets ``BACKGROUND = True`` (the tournament, which spans many games) runs
beside them instead: it never becomes current, the loop offers no "end the game" for it and
refuses ``end_game`` sent to it, so no host console can close it by mistake.
A game whose summary already names a winner stays running until the host ends it, so the
host can still undo or rejudge the last answer. The newest unfinished game of each rules is
resumed when the loop starts (older ones when a command names them): their events are
folded again, so after a power cut the box is where it was.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from appliance import storage
from appliance.rules import registry
from appliance.rules.protocol import Action, Command, Event, Refused, Rules
from appliance.runtime.inbox import BUTTONS, HOST_LANE, Inbox, lane_of
from appliance.runtime.lampwatch import LampWatch
from appliance.runtime.running import RunningGame, Step
from appliance.runtime.store import Also, GameRecord, Store

log = logging.getLogger(__name__)

END_GAME = "end_game"
END_GAME_ACTION = Action(END_GAME, "Завершить игру", "End the game", confirm=True)
BACKGROUND_END = Refused(
    "Турнир не завершают с пульта ведущего: он идёт в фоне, им управляет страница директора.",
    "A tournament is not ended from the host console: it runs in the background and is "
    "driven from the director's page.", "background")
# Why a game waits: a deadline's decision could not be written (the host's banner).
DISK_FULL = {"code": "disk_full",
             "ru": "Карта памяти заполнена: решение по времени не записано, игра ждёт. "
                   "Освободите место (удалите старые пакеты) — игра продолжится сама.",
             "en": "The memory card is full: a timer's decision could not be recorded and "
                   "the game waits. Free some space (delete old packages): it resumes by "
                   "itself."}
LOG_WRITE = {"code": "log_write",
             "ru": "Журнал игры не записывается: решение по времени ждёт, коробка повторяет "
                   "попытку.",
             "en": "The game log cannot be written: a timer's decision waits and the box "
                   "keeps trying."}
# A source's room in the inbox is full (see `appliance.runtime.inbox`): said at once, nothing
# queued; the screen shows it and the player presses again.
BUSY = Refused("Коробка занята: слишком много команд сразу. Повторите через секунду.",
               "The box is busy: too many commands at once. Try again in a second.", "busy")


def runs_in_background(rules: Rules[Any]) -> bool:
    """Whether games of these rules run beside the current game («в фоне»): never current,
    never ended by ``end_game`` (see the module docstring)."""
    return bool(getattr(rules, "BACKGROUND", False))


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of a submitted command: its committed events, or why it was refused."""

    events: list[Event]
    refused: Refused | None = None


@dataclass(frozen=True, slots=True)
class Update:
    """Told to subscribers after each commit (and when a game starts or ends). Early and
    ahead subscribers also get a deadline's decision before its commit, with `committed`
    False. Hardware and screens follow only updates with `current` True."""

    game: int
    rules: Rules[Any]
    state: Any
    events: list[Event] = field(default_factory=list)
    finished: bool = False
    command: Command | None = None
    committed: bool = True
    # Whether `game` was the current game (the one the screens and the lamp show) when the
    # loop told this, decided on the loop's own thread: a background game's commit (the
    # tournament beside its battle) and an archived game's end are not the current game's,
    # so the lamp and the screens both leave them alone (`GameLoop.current`).
    current: bool = False


Subscriber = Callable[[Update], None]


@dataclass(frozen=True, slots=True)
class _Told:
    """A deadline's decision told to the ahead subscribers before its commit: the state it
    was decided from (committed), the timeout, and the state it leads to."""

    before: Any
    command: Command
    state: Any

# A deadline whose commit failed is tried again after this, doubling up to the most: a full
# memory card must not spin the loop (a tight loop of failing writes would starve the
# presses), yet the game goes on by itself as soon as the card has room again.
RETRY_FIRST_NS = 10_000_000
# While a deadline is pending (a 7 s window, an answer's countdown), the loop notes the game
# clock this often (`Store.mark_clock`): after a power cut the window resumes with the time
# it had left, give or take this much, instead of starting again from the last event.
MARK_NS = 500_000_000
RETRY_MOST_NS = 2_000_000_000
_STOP = object()
_WAKE = object()


class GameLoop:
    """One thread, all games. See the module docstring for the contract."""

    def __init__(self, store: Store, clock: Callable[[], int] = time.monotonic_ns, *,
                 resolve: Callable[[str], Rules[Any]] = registry.get, lamp_watch: bool = True):
        """`lamp_watch` False: the lamp always waits for a commit under way (the behaviour
        before `appliance.runtime.lampwatch`, which `bench/arbitration.py` compares)."""
        self.store = store
        self.clock = clock
        self._resolve = resolve
        self._sessions: dict[int, RunningGame] = {}
        self._current: int | None = None
        self._inbox = Inbox()
        self._gate = threading.Lock()  # held while a command is stamped and queued
        self._outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._early: list[Subscriber] = []
        self._inline: list[Subscriber] = []
        self._others: list[Subscriber] = []
        self._ahead_subs: list[Subscriber] = []  # the screens: see `subscribe`
        # game -> the deadline's decision the ahead subscribers were told, commit pending
        self._told: dict[int, _Told] = {}
        self._shown_early: RunningGame | None = None  # told early, commit still pending
        # (game, deadline on its clock): a lamp the watch lit, until that deadline commits
        self._watched: tuple[RunningGame, int] | None = None
        self._watch = LampWatch(clock, self._quiet, self._show_watched,
                                lambda: lamp_watch and bool(self._early))
        self._thread: threading.Thread | None = None
        self._notifier: threading.Thread | None = None
        self._resumed = False
        self._stopped = False
        self._dormant: set[int] = set()  # unfinished games left in the log (see `resume`)
        self._retry: dict[int, tuple[int, int]] = {}  # game -> (retry at, delay)
        self._marked: dict[int, int] = {}  # game -> box clock of its last clock mark
        # None, or why a deadline's decision cannot be written (``code`` "disk_full" or
        # "log_write", ``ru``, ``en``, ``game``), for the host's banner: set when a timeout's
        # commit fails, cleared when it commits; screens get an `Update` each time.
        self.fault: dict[str, Any] | None = None

    # -- life of the loop ------------------------------------------------------------------
    def start(self) -> GameLoop:
        """Resume unfinished games (if `resume` was not called yet) and start the threads."""
        if self._thread is not None:
            return self
        if not self._resumed:
            self.resume()
        self._thread = threading.Thread(target=self._run, name="game-loop", daemon=True)
        self._notifier = threading.Thread(target=self._notify_others, name="game-notifier",
                                          daemon=True)
        self._notifier.start()
        self._watch.start()
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Finish the commands already queued, then stop both threads."""
        self._stopped = True
        if self._thread is None:
            return
        self._inbox.put(_STOP)
        self._thread.join(timeout)
        self._watch.stop(timeout)
        self._outbox.put(_STOP)
        if self._notifier is not None:
            self._notifier.join(timeout)
        self._thread = None

    def resume(self) -> list[int]:
        """Fold the unfinished games of the store back into memory: the newest of each rules
        (a casual game, or a tournament and its battle in play); the newest of all but the
        background ones (the tournament) becomes current. Older unfinished games stay dormant
        in the log and are folded when a command names them, so a box with a long history
        starts with a small memory. Call
        before `start` (start calls it otherwise). A game whose engine cannot be loaded is
        skipped and stays in the log untouched."""
        if self._thread is not None:
            raise RuntimeError("resume() before start(): the loop thread owns the games")
        records, folded = self._close_orphans(list(self.store.unfinished()))
        newest = {r.rules: r.id for r in records}  # the log lists games oldest first
        resumed = []
        for record in records:
            if record.id in self._sessions:
                continue
            if newest[record.rules] != record.id:
                self._dormant.add(record.id)
                continue
            session = folded.get(record.id) or self._fold(record.id, record.rules)
            if session is None:
                continue
            self._sessions[record.id] = session
            resumed.append(record.id)
        shown = [g for g in resumed if not runs_in_background(self._sessions[g].rules)]
        if shown:
            self._current = shown[-1]
        self._resumed = True
        return resumed

    def _close_orphans(self, records: list[GameRecord]
                       ) -> tuple[list[GameRecord], dict[int, RunningGame]]:
        """Close the unfinished games that are part of a background game which does not
        count them, and return the others (with the background games folded on the way).

        A game is part of a background game when its setup carries a block named after
        that game's rules (a bracket battle's ``tournament``); the background engine's
        ``parts(state)`` names the games it counts. A battle's game and the tournament's
        record of it are written in one transaction (`new_game` with a parent), so this
        finds only what an older box left behind (a cut between the two) or a battle the
        director replayed: such a game is closed with its summary, never resumed, never the
        current game. Nothing is closed when a background game cannot be folded."""
        by_rules: dict[str, list[GameRecord]] = {}
        for r in records:
            by_rules.setdefault(r.rules, []).append(r)
        folded: dict[int, RunningGame] = {}
        claimed: dict[str, set[int] | None] = {}

        def counted(owner: str) -> set[int] | None:
            if owner not in claimed:
                games: set[int] | None = set()
                for r in by_rules[owner]:
                    session = self._fold(r.id, r.rules)
                    parts = getattr(session.rules, "parts", None) if session else None
                    if (session is None or parts is None or games is None
                            or not runs_in_background(session.rules)):
                        games = None
                        continue
                    folded[r.id] = session
                    games |= set(parts(session.state))
                claimed[owner] = games
            return claimed[owner]

        kept = []
        for r in records:
            owners = [k for k in r.setup if k != r.rules and k in by_rules] \
                if isinstance(r.setup, Mapping) else []
            orphan = False
            for owner in owners:
                games = counted(owner)
                if games is not None and r.id not in games:
                    orphan = True
            if not orphan:
                kept.append(r)
                continue
            session = self._fold(r.id, r.rules)
            try:
                if session is not None:
                    session.finish()
                else:
                    self.store.finish(r.id)
                log.warning("game %s (%s) is not counted by its %s: closed", r.id, r.rules,
                            " ".join(owners))
            except Exception:
                log.exception("game %s: closing it failed", r.id)
        return kept, folded

    def _fold(self, game: int, rules_name: str) -> RunningGame | None:
        try:
            rules = self._resolve(rules_name)
            return RunningGame.resume(self.store, game, rules, now_ns=self.clock())
        except Exception:
            log.exception("cannot resume game %s (%s): left in the log", game, rules_name)
            return None

    def pending(self, lane: str | None = None) -> int:
        """Commands waiting in the loop's inbox, of one source (`lane`, see
        `appliance.runtime.inbox`) or of all."""
        return self._inbox.pending(lane)

    def lamp_watch(self) -> dict[str, int]:
        """Deadlines the lamp watch lit during another commit (``shown``), those it left to
        wait for that commit (``held``) and those it decided during the commit before them
        (``offered``): see `appliance.runtime.lampwatch`."""
        return {"shown": self._watch.shown, "held": self._watch.held,
                "offered": self._watch.offered}

    def refused_busy(self) -> dict[str, int]:
        """Per source, the commands refused at once because that source's room was full."""
        return self._inbox.refused()

    # -- what other threads call -----------------------------------------------------------
    @property
    def current(self) -> int | None:
        """The game the screens show: the newest one started or resumed (never a background
        game such as a tournament)."""
        return self._current

    def games(self) -> list[int]:
        return sorted(self._sessions)

    def new_game(self, rules_name: str, setup: Mapping[str, Any], *,
                 parent: int | None = None, command: Mapping[str, Any] | None = None,
                 also: Also | None = None) -> Future[int]:
        """Start a game; resolves to its id once it is in the log (or raises `Refused` for
        unknown rules or a setup the engine refuses).

        With `parent` and `command`: the game is part of game `parent` (a bracket battle of
        a tournament), and `command`, with the new game's number added as ``game``, is
        decided for the parent and committed in the same transaction as the new game, so a
        power cut leaves both or neither; a refusal of either raises `Refused`, nothing
        written. `also(conn, game)` writes another area's rows in the same transaction (a
        room box's outbox row), on the loop thread; if it raises, no game is created."""
        if (parent is None) != (command is None):
            raise ValueError("new_game: parent and command go together")
        link: tuple[int, Command] | None = None
        if parent is not None and command is not None:
            with self._gate:
                cmd = Command.from_json(dict(command))
                now = self.clock()
                link = (parent, Command(cmd.type, cmd.t_ns or now, cmd.args, cmd.by,
                                        now if cmd.at_ns is None else cmd.at_ns))
        return self._enqueue(("new", rules_name, dict(setup), link, also), HOST_LANE, 0)

    def submit(self, command: Command | Mapping[str, Any],
               game: int | None = None) -> Future[Outcome]:
        """Queue a command for `game` (default: the current game). A command with ``t_ns``
        0 is stamped now; every command gets its arrival time ``at_ns`` if it has none."""
        if not isinstance(command, Command):
            try:
                command = Command.from_json(command)
            except Refused as r:
                fut: Future[Outcome] = Future()
                fut.set_result(Outcome([], r))
                return fut
        with self._gate:  # stamp and queue as one step: see `_run`
            now = self.clock()
            if command.t_ns == 0 or command.at_ns is None:
                command = Command(command.type, command.t_ns or now, command.args, command.by,
                                  now if command.at_ns is None else command.at_ns)
            return self._enqueue(("cmd", command, game), lane_of(command.by),
                                 command.arrival_ns)

    def end_game(self, game: int | None = None) -> Future[Outcome]:
        return self.submit(Command(END_GAME), game)

    def subscribe(self, fn: Subscriber, inline: bool = False, early: bool = False,
                  ahead: bool = False) -> Callable[[], None]:
        """Call `fn(update)` after each commit; returns a function that unsubscribes.

        `inline`: on the loop thread, before the command's sender hears of it (keep it fast,
        never block). `early` (inline too, and before the other inline subscribers): also
        told of a deadline's decision as soon as it is made, before its commit's fsync
        (``update.committed`` False). That is for the lamp and the winner's LED: the
        decision follows from presses already in the log, so a power cut before the commit
        loses nothing a resumed game will not decide again (see `RunningGame.due`). If the
        commit fails, early subscribers are told the committed state again. Once the lamp
        watch has shown them a deadline's decision, they are not told the commits made before
        that deadline (`_still_watched`).

        `ahead` (on the notifier thread, for the screens): told a deadline's decision as soon
        as the loop decides it, before its commit (``update.committed`` False), and not told
        that commit again. The loop decides a deadline only from a state every command of
        which is committed (it is the loop thread's own, swapped after each commit), so the
        decision is a function of the log and the deadline: if its commit fails, the loop
        decides the same again until it is written (every path that changes the game feeds
        its due deadlines first, `end_game` too), and after a power cut the resumed game
        reaches the same deadline with the same log and decides the same events. The lamp
        watch's decisions, made while a press is still being written, are never told to
        them. `shown` gives what they were told."""
        target = (self._early if early else self._inline if inline
                  else self._ahead_subs if ahead else self._others)
        target.append(fn)
        return lambda: target.remove(fn) if fn in target else None

    def subscribers(self) -> int:
        """How many subscribers the loop tells (early, inline and the others): a part that
        is started again (the rooms link) must leave this as it found it."""
        return len(self._early) + len(self._inline) + len(self._others)

    def snapshot(self, game: int | None = None) -> tuple[Rules[Any], Any]:
        """(rules, state) of a game as last committed. States are immutable, so this is safe
        from any thread. A game no longer in memory is folded from the log."""
        session = self._session(game)
        return session.rules, session.state

    def shown(self, game: int | None = None) -> tuple[Rules[Any], Any]:
        """(rules, state) of a game as the screens (ahead subscribers) were last told: as
        `snapshot`, or a deadline's decision told ahead of its commit while that commit is
        pending (or failed and waits to be tried again). What a screen draws on its own
        (a connect, the host's pause) must not take back what it was told."""
        session = self._session(game)
        return session.rules, self._shown_state(session)

    def now(self, game: int | None = None) -> int:
        """The game's clock now (the box clock, re-based for a game resumed after a cut)."""
        return self.clock() + self._session(game).offset_ns

    def legal_actions(self, game: int | None = None) -> list[Action]:
        """The engine's legal actions, plus ending the game (unless it runs in background)."""
        session = self._session(game)
        if session.finished:
            return []
        legal = session.rules.legal_actions(session.state)
        return legal if runs_in_background(session.rules) else [*legal, END_GAME_ACTION]

    def is_finished(self, game: int | None = None) -> bool:
        return self._session(game).finished

    def wake(self) -> None:
        """Make the loop look at the clock again (tests that move a fake clock use this)."""
        self._inbox.put(_WAKE)
        self._watch.poke()

    # -- internals -------------------------------------------------------------------------
    def _session(self, game: int | None) -> RunningGame:
        game = self._current if game is None else game
        if game is None:
            raise KeyError("no game is running")
        session = self._sessions.get(game)
        if session is not None:
            return session
        record = self.store.game(game)
        if record is None:
            raise KeyError(game)
        return RunningGame.resume(self.store, game, self._resolve(record.rules))

    def _enqueue(self, item: tuple[Any, ...], lane: str, arrival_ns: int) -> Future[Any]:
        fut: Future[Any] = Future()
        if self._stopped:
            fut.set_exception(RuntimeError("the game loop is stopped"))
            return fut
        if not self._inbox.put((*item, fut), lane, arrival_ns):
            n = self._inbox.refused()[lane]
            if n & (n - 1) == 0:  # the 1st, 2nd, 4th, 8th ...: a storm logs a few lines
                log.warning("game loop inbox: %s room full, refused (%d so far)", lane, n)
            if item[0] == "cmd":
                fut.set_result(Outcome([], BUSY))
            else:
                fut.set_exception(BUSY)
        return fut

    def _run(self) -> None:
        while True:
            if self._inbox.empty():  # about to sleep
                self._mark_clocks()
                self._sync()
                for session in self._sessions.values():  # decide the coming deadlines now
                    session.prepare()
            try:
                item = self._inbox.get(timeout=self._wait_s())
            except queue.Empty:
                item = _WAKE
            if item is _STOP:
                break
            if item is not _WAKE:
                try:
                    self._do(item)
                except Exception as e:  # a bug or a disk error: report it, keep running
                    log.exception("game loop: %s failed", item[0])
                    self._unshow_early()
                    fut = item[-1]
                    if not fut.done():
                        fut.set_exception(e)
            # A deadline may fire only once every command that arrived before it has been
            # decided: a press stamped inside the settle window but still queued behind a
            # slow commit must not lose to the window's timeout. Commands are stamped and
            # queued under the same lock, so an empty inbox here means every later command
            # is stamped after `now`.
            with self._gate:
                if not self._inbox.empty():
                    continue
                now = self.clock()
            self._timeouts(now)

    def _sync(self) -> None:
        """Write out the deadlines' decisions committed without an fsync, now that the
        screens were told (`Store.sync`): a power cut can take back only what was decided
        in the last fsync's time. A failure is logged and tried again at the next pause;
        the next durable commit writes them out anyway."""
        if not self.store.unsynced:
            return
        try:
            self.store.sync()
        except OSError:
            log.exception("game loop: writing out the log failed")

    def _pending(self) -> list[tuple[RunningGame, int]]:
        """The unfinished games with a deadline, each with it on the box clock."""
        return [(s, d - s.offset_ns) for s in self._sessions.values()
                if not s.finished and (d := s.deadline()) is not None]

    def _mark_clocks(self) -> None:
        """Note each game's clock while its deadline is pending and at least `MARK_NS`
        away, every `MARK_NS` (see `RunningGame.resume`). Written without an fsync; the
        `_sync` right after writes it out. A failed write is logged and tried at the next
        mark: a mark only narrows what a power cut can stretch."""
        now = self.clock()
        for session, due in self._pending():
            if due - now <= MARK_NS or now - self._marked.get(session.game, -MARK_NS) < MARK_NS:
                continue
            self._marked[session.game] = now
            try:
                self.store.mark_clock(session.game, now + session.offset_ns)
            except (OSError, sqlite3.Error):
                log.exception("game %s: noting the clock failed", session.game)

    def _wait_s(self) -> float | None:
        deadlines = []
        now = self.clock()
        for s, due in self._pending():
            deadlines.append(max(due, self._retry.get(s.game, (0, 0))[0]))
            if due - now > MARK_NS:  # wake for the next clock mark too
                deadlines.append(self._marked.get(s.game, now - MARK_NS) + MARK_NS)
        if not deadlines:
            return None
        return max(0.0, (min(deadlines) - now) / 1e9)

    def _timeouts(self, now: int) -> None:
        for session in list(self._sessions.values()):
            if session.finished or self._retry.get(session.game, (0, 0))[0] > now:
                continue
            steps: list[Step] = []
            try:
                session.due(now + session.offset_ns, self._decided(session), steps,
                            self._watch.committing)
            except Exception as e:
                log.exception("game %s: a timeout's commit failed", session.game)
                self._failed(session, steps)
                self._back_off(session, now, e)
                continue
            self._tell(session, steps)
            self._recovered(session)

    def _shown_state(self, session: RunningGame) -> Any:
        """The state told to the screens: a decision ahead of its commit while the game is
        still at the state it was decided from, else the committed state."""
        told = self._told.get(session.game)
        state = session.state
        return told.state if told is not None and told.before is state else state

    def _failed(self, session: RunningGame, steps: list[Step]) -> None:
        """A commit failed after `steps` were committed: tell those (screens must not miss a
        decision that is in the log), then show early subscribers what is committed."""
        shown = self._shown_early
        self._tell(session, steps)
        self._shown_early = shown
        self._unshow_early()

    def _back_off(self, session: RunningGame, now: int, error: Exception) -> None:
        """Try the deadline again later (doubling), and tell the host why the game waits."""
        delay = self._retry.get(session.game, (0, RETRY_FIRST_NS // 2))[1]
        delay = min(RETRY_MOST_NS, 2 * delay)
        self._retry[session.game] = (now + delay, delay)
        full = storage.disk_full(error)
        fault = {"game": session.game, **(DISK_FULL if full else LOG_WRITE)}
        if fault != self.fault:
            self.fault = fault  # the screens keep what they were told: it will be written
            self._notify(self._update(session, self._shown_state(session)))

    def _recovered(self, session: RunningGame) -> None:
        if self._retry.pop(session.game, None) is None:
            return
        if self.fault is not None and self.fault["game"] == session.game:
            self.fault = None
            log.warning("game %s: the log is written again", session.game)
            self._notify(self._update(session, session.state))

    def _do(self, item: tuple[Any, ...]) -> None:
        kind, *args, fut = item
        if kind == "new":
            rules_name, setup, link, also = args
            self._new(rules_name, setup, link, also, fut)
            return
        command, game = args
        game = self._current if game is None else game
        found = self._live(game) if game is not None else None
        if found is None:
            fut.set_result(Outcome([], Refused(
                "Нет такой игры." if game is not None else "Игра не начата.",
                f"No game {game}." if game is not None else "No game is running.",
                "no_game")))
            return
        session = found
        if command.type == END_GAME:
            self._end(session, command, fut)
            return
        steps: list[Step] = []
        try:
            session.run(session.to_game_time(command), self._decided(session), steps,
                        self._watch.committing)
        except Exception:
            self._failed(session, steps)  # the timeouts committed before the failed commit
            raise
        self._recovered(session)
        *timeouts, own = steps
        self._tell(session, timeouts)
        if own.events:
            self._publish(self._update(session, own.state, own.events, command=own.command),
                          fut, Outcome(own.events))
        else:
            fut.set_result(Outcome([], own.refused))

    def _live(self, game: int) -> RunningGame | None:
        """A game in memory, folding it from the log if it was left dormant at start."""
        found = self._sessions.get(game)
        if found is None and game in self._dormant:
            self._dormant.discard(game)
            record = self.store.game(game)
            found = self._fold(game, record.rules) if record is not None else None
            if found is not None:
                self._sessions[game] = found
        return found

    def _new(self, rules_name: str, setup: dict[str, Any], link: tuple[int, Command] | None,
             also: Also | None, fut: Future[int]) -> None:
        parent: RunningGame | None = None
        try:
            rules = self._resolve(rules_name)
            if link is None:
                session = RunningGame.new(self.store, rules_name, rules, setup, also)
            else:
                if also is not None:
                    raise ValueError("new_game: also with a parent is not supported")
                parent = self._live(link[0])
                if parent is None:
                    raise Refused("Нет такой игры.", f"No game {link[0]}.", "no_game")
                self._tell(parent, parent.due(link[1].arrival_ns + parent.offset_ns))
                cmd = parent.to_game_time(link[1])
                session, step = RunningGame.new_linked(
                    self.store, rules_name, rules, setup, parent,
                    lambda game: Command(cmd.type, cmd.t_ns, {**cmd.args, "game": game},
                                         cmd.by, cmd.at_ns))
        except Refused as r:
            fut.set_exception(r)
            return
        for old in [g for g, s in self._sessions.items() if s.finished]:
            del self._sessions[old]  # ended games stay in the log, not in memory
        self._sessions[session.game] = session
        if not runs_in_background(rules):
            self._current = session.game
        if parent is not None:
            self._publish(self._update(parent, step.state, step.events, command=step.command))
        self._publish(self._update(session, session.state))
        fut.set_result(session.game)

    def _end(self, session: RunningGame, command: Command, fut: Future[Outcome]) -> None:
        if session.finished:
            fut.set_result(Outcome([], Refused("Игра уже окончена.", "The game is over.",
                                               "finished")))
            return
        if runs_in_background(session.rules):
            fut.set_result(Outcome([], BACKGROUND_END))
            return
        # The deadlines due by its arrival first, as for any command: a decision the screens
        # were told ahead of a commit that failed is written before the game closes.
        steps: list[Step] = []
        try:
            session.due(session.to_game_time(command).arrival_ns, self._decided(session),
                        steps)
        except Exception:
            self._failed(session, steps)
            raise
        self._tell(session, steps)
        session.finish()
        if session.game != self._current:  # ended games stay in the log, not in memory
            self._sessions.pop(session.game, None)
        self._publish(self._update(session, session.state, finished=True, command=command),
                      fut, Outcome([]))

    def _update(self, session: RunningGame, state: Any, events: list[Event] | None = None, *,
                finished: bool = False, command: Command | None = None,
                committed: bool = True) -> Update:
        """What subscribers are told of `session`, with whether it is the current game now
        (`Update.current`: the one place that decides what the lamp and screens follow).
        `_current` changes only on the loop thread; the lamp watch calls this while the
        loop thread is inside a commit, so it reads a settled value too."""
        return Update(session.game, session.rules, state, [] if events is None else events,
                      finished, command, committed, session.game == self._current)

    def _tell(self, session: RunningGame, steps: list[Step]) -> None:
        for step in steps:
            if step.events:
                self._publish(self._update(session, step.state, step.events,
                                           command=step.command))

    def _decided(self, session: RunningGame) -> Callable[[Command, list[Event], Any], None]:
        """What `RunningGame` calls with a deadline's decision before its commit."""

        def tell(command: Command, events: list[Event], state: Any) -> None:
            if self._watched is not None and self._watched[0] is session:
                self._watched = None  # the loop decides the deadline itself: told below
            if self._early:
                self._shown_early = session
                self._call(self._early, self._update(session, state, events, command=command,
                                                     committed=False))
            if not self._ahead_subs:
                return
            told = self._told.get(session.game)
            if told is not None and told.before is session.state and told.command == command:
                return  # decided again after its commit failed: the screens have it
            self._told[session.game] = _Told(session.state, command, state)
            self._outbox.put((self._update(session, state, events, command=command,
                                           committed=False), False, True))

        return tell

    def _quiet(self, due_ns: int, session: RunningGame) -> list[Command] | None:
        """For the lamp watch: None unless the box clock has passed `due_ns` and nothing but
        wired presses for `session`'s game that arrived before it waits in the inbox; else
        those presses (game clock), in the order the loop will decide them. With none, the
        loop would fire that deadline as the watch decides it (a command that arrived at or
        after it is decided after the deadline's timeout anyway, see `RunningGame.run`);
        with some, the watch decides it with them folded in. Wakes aside; a new game counts
        as arriving at 0 (it holds)."""
        with self._gate:
            if self.clock() < due_ns:
                return None
            queued = self._inbox.before(due_ns)
        presses = []
        for lane, item in queued:
            if lane != BUTTONS or item[0] != "cmd":
                return None
            _, command, game, _ = item
            # `_current` changes only on the loop thread, which is inside a commit now
            if command.type != "press" or (self._current if game is None else game) \
                    != session.game:
                return None
            presses.append(session.to_game_time(command))
        return presses

    def _show_watched(self, session: RunningGame, command: Command, events: list[Event],
                      state: Any) -> None:
        """The lamp watch's decision (on its thread, while the loop thread waits on a
        commit: never at the same time as the loop's own calls)."""
        self._shown_early = session
        self._watched = (session, command.t_ns)
        self._call(self._early, self._update(session, state, events, command=command,
                                             committed=False))

    def _unshow_early(self) -> None:
        """A commit failed after early subscribers saw its decision: show them the state
        that is committed, so the lamp never shows what the log does not hold."""
        session, self._shown_early = self._shown_early, None
        self._watched = None
        if session is not None:
            self._call(self._early, self._update(session, session.state))

    def _call(self, subscribers: list[Subscriber], update: Update) -> None:
        for fn in list(subscribers):
            try:
                fn(update)
            except Exception:
                log.exception("inline subscriber %r failed", fn)

    def _publish(self, update: Update, fut: Future[Any] | None = None,
                 result: Any = None) -> None:
        """Inline subscribers first (the lamp), then the command's sender, then screens."""
        if self._still_watched(update):
            assert self._watched is not None
            self._shown_early = self._watched[0]  # the lamp still shows a decision ahead
        else:
            self._shown_early = None
            self._call(self._early, update)
        self._call(self._inline, update)
        if fut is not None:
            fut.set_result(result)
        told = self._told.get(update.game)
        if told is not None and update.committed and update.command == told.command:
            del self._told[update.game]  # its commit: the screens were told it ahead
            self._notify(update, ahead=False)
        else:
            self._notify(update)

    def _notify(self, update: Update, ahead: bool = True) -> None:
        """Hand `update` to the notifier thread: for the other subscribers, and for the
        ahead ones unless `ahead` is False (they were told it before its commit)."""
        if self._others or (ahead and self._ahead_subs):
            self._outbox.put((update, True, ahead))

    def _still_watched(self, update: Update) -> bool:
        """Whether `update` is a commit of a game whose lamp the watch lit, made before the
        deadline it lit it for: the commit that was under way, or a press the watch folded
        in. Its state still has that deadline to come, so its hardware view would take the
        lamp back for a commit's time; early subscribers are told nothing until the
        deadline itself is decided (or a commit fails: `_unshow_early`)."""
        watched = self._watched
        if watched is None or update.game != watched[0].game:
            return False
        if (update.committed and not update.finished and update.events
                and update.rules.next_deadline(update.state) == watched[1]):
            return True
        self._watched = None
        return False

    def _notify_others(self) -> None:
        """The notifier thread: (update, for the others, for the ahead subscribers), in the
        order the loop handed them over."""
        while (item := self._outbox.get()) is not _STOP:
            update, others, ahead = item
            for fn in [*(self._others if others else ()), *(self._ahead_subs if ahead else ())]:
                try:
                    fn(update)
                except Exception:
                    log.exception("subscriber %r failed", fn)
