"""The lamp while the log is being written («лампа, пока пишется журнал»).

The loop lights the lamp for a deadline's decision before that decision's commit, because
the decision follows from the log already on disk (`RunningGame.due`). But the loop thread
may itself be inside another commit when a deadline falls due — typically a press that
reached the box just before the settle window closed — and then the lamp waited for that
commit's fsync: the p99 of `bench/arbitration.py` on a real disk.

The watch is a second thread. When the loop thread is still inside such a commit shortly
before the deadline (`DECIDE_BEFORE_NS`), the watch decides the deadline twice, while the
fsync keeps the loop thread off the interpreter: from the state the commit leads to, and from
the state before it (what the log holds if the commit never reaches the disk). Then it sleeps
until the deadline. If the deadline passes while the commit is still under way and both
decisions give the same hardware view (lamp, answering seat, queue), that view is shown at
once: whether or not the commit survives a power cut, the restarted box reaches the same
deadline and decides the same answerer. If they differ, the lamp waits for the commit. The
first decision is also handed to the game (`RunningGame.offer`) while the commit is under
way, so the loop commits it without deciding it again. Nothing is committed or told to
screens from here; the loop commits the deadline as always once its commit returns, and the
lamp is told that again.

A commit that moves the deadline — the earliest press being written, the winner's own — is
not watched: its lamp depends on it, and must wait for its fsync (a lamp lit for a press the
log may not hold could not be re-derived after a cut). Deciding the new deadline during such
a commit was tried and made those lamps later, not sooner: the loop thread, back from the
fsync, waited for the interpreter while the watch decided, and then for the wake-up that
hands it over.

It lights the lamp only when the loop could fire the deadline itself if it were free: the
deadline is the same before and after the commit, the clock has passed it, and no command
that arrived before it waits in the inbox (it might be an earlier press that the deadline
must not beat; one that arrived after it is decided after its timeout anyway; commands are
stamped and queued under the loop's gate, which `quiet` takes). The commit watched is the
last step of what the loop is doing (a command's own commit, or a timeout of the loop's own
deadline round), never a timeout fed as a command's catch-up: that command is not decided
yet.

Wired presses of the same game are the exception: the others press during a losing press's
fsync, so one often waits behind it as the window closes. The watch folds them in (at most
`FOLD_MOST`), deciding them one after another from the state the commit leads to, as the
loop will (they arrived before the deadline, so no timeout comes between), and the deadline
after each; it lights the lamp only if none of them moves the deadline and every one of those
decisions gives the same hardware view as the two above. The loop commits the presses in
that order after the one under way, so a power cut leaves the log with a prefix of them, and
each prefix decides the same answerer: the lamp is re-derived whatever the cut takes. An
earlier press moves the deadline (the lamp waits); a press with the winner's tick that wins
the tie changes the view (it waits too). Anything else that arrived before the deadline — a
phone's press, a host command, another game's press — leaves the deadline to the loop. Once
the watch has lit the lamp, the loop does not tell its early subscribers the commits it makes
before that deadline (the one under way, the presses folded in): their states, with the
deadline still to come, would put the lamp back on for a commit's time (`GameLoop`); and the
presses' own commits are not watched again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from appliance.rules.protocol import Command, Event, Refused, Rules, fold, timeout
from appliance.runtime.store import normalize

log = logging.getLogger(__name__)

# A commit is watched only if its deadline is this close: fsyncs are milliseconds, and a
# far deadline (the 7 s window) is decided by the loop itself long after the commit returns.
HORIZON_NS = 500_000_000
# The watch decides a watched commit's deadline this long before it (at once if nearer): in
# time to show the lamp at the deadline, yet not during the many commits that return long
# before theirs, where deciding would only take the interpreter from the committing thread.
DECIDE_BEFORE_NS = 1_000_000
# Wired presses queued behind the commit that the watch folds in (below); more than this
# (a storm) and the lamp waits for the loop, so the commit's end never waits long for it.
FOLD_MOST = 8


@dataclass(slots=True)
class _Job:
    rules: Rules[Any]
    game: Any  # the RunningGame whose commit is under way
    before: Any  # the state the log holds
    after: Any  # the state the commit leads to
    deadline: int  # after's, game clock
    due_ns: int  # box clock
    decided: bool = False
    # (events, state, hardware view) of the deadline's timeout from each state, if any
    from_after: tuple[list[Event], Any, Any] | None = None
    from_before: tuple[list[Event], Any, Any] | None = None
    tried: bool = False


class LampWatch:
    """See the module docstring. `quiet(due_ns, game)`: None unless the box clock has passed
    `due_ns` and nothing but wired presses for `game` that arrived before it waits in the
    loop's inbox, else those presses (checked under the loop's gate); `show(game, command,
    events, state)`: tell the early subscribers; `wanted()`: whether anyone listens early."""

    def __init__(self, clock: Callable[[], int],
                 quiet: Callable[[int, Any], list[Command] | None],
                 show: Callable[[Any, Command, list[Event], Any], None],
                 wanted: Callable[[], bool]) -> None:
        self._clock = clock
        self._quiet = quiet
        self._show = show
        self._wanted = wanted
        self._cond = threading.Condition()
        self._job: _Job | None = None
        self._stopped = False
        self._thread: threading.Thread | None = None
        self.shown = 0  # lamps lit during another commit
        self.held = 0  # deadlines that had to wait for the commit
        self.offered = 0  # deadlines decided during the commit before them
        self._lit: tuple[Any, int] | None = None  # (game, deadline) of the last lamp shown

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="lamp-watch", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def poke(self) -> None:
        """Look at the clock again (tests that move a fake clock)."""
        with self._cond:
            self._cond.notify()

    @contextmanager
    def committing(self, game: Any, after: Any) -> Iterator[None]:
        """Around a commit of `game` (a `RunningGame`) that leads to `after`."""
        job = self._job_for(game, after)
        if job is None:
            yield
            return
        with self._cond:
            self._job = job
            self._cond.notify()
        try:
            yield
        finally:
            with self._cond:  # waits for a lamp the watch is showing right now
                self._job = None
                self._cond.notify()

    def _job_for(self, game: Any, after: Any) -> _Job | None:
        if not self._wanted():
            return None
        rules = game.rules
        d = rules.next_deadline(after)
        if d is None or rules.next_deadline(game.state) != d:
            return None  # the commit moves the deadline: the lamp depends on it (above)
        if self._lit is not None and self._lit[0] is game and self._lit[1] == d:
            return None  # already shown; the loop is writing the presses folded in
        due = d - game.offset_ns
        if due - self._clock() > HORIZON_NS:
            return None
        return _Job(rules, game, game.state, after, d, due)

    def _run(self) -> None:
        while True:
            with self._cond:
                if self._stopped:
                    return
                job = self._job
                if job is None or job.tried:
                    self._cond.wait()
                    continue
                if job.decided:
                    left = job.due_ns - self._clock()
                    if left > 0:
                        self._cond.wait(left / 1e9)
                        continue
                    job.tried = True  # under the lock: the commit's end waits for this lamp
                    self._safely(self._try, job)
                    continue
                left = job.due_ns - DECIDE_BEFORE_NS - self._clock()
                if left > 0:
                    self._cond.wait(left / 1e9)
                    continue
                job.decided = True
            self._safely(self._decide, job)

    def _safely(self, step: Callable[[_Job], None], job: _Job) -> None:
        try:
            step(job)
        except Exception:  # a bug here must not stop the watch; the loop decides
            job.tried = True
            log.exception("lamp watch failed")

    def _decide(self, job: _Job) -> None:
        """Decide the deadline from both states during the commit (see the module
        docstring), and hand the loop the decision it needs once the commit returns. Done
        outside the lock, so a commit that returns meanwhile never waits for it; a decision
        is handed over only while its commit is still under way."""
        game = job.game
        prior = game.decided_ahead(job.before, job.deadline)  # kept by `prepare`, if any
        ahead = game.ahead(job.after, job.deadline)  # a state the commit just made: new
        if ahead is None:
            return
        with self._cond:
            if self._job is not job:
                return
            game.offer(ahead)
            self.offered += 1
        before = prior or game.ahead(job.before, job.deadline)
        if before is not None:
            job.from_after = _lamp(job.rules, ahead[2])
            job.from_before = _lamp(job.rules, before[2])

    def _try(self, job: _Job) -> None:
        after, before = job.from_after, job.from_before
        queued = self._quiet(job.due_ns, job.game)
        if queued is None or after is None or before is None or (
                after[2] != before[2]) or not self._folds_in(job, queued, after[2]):
            self.held += 1
            return
        events, state, _ = after
        self._show(job.game, timeout(job.deadline), events, state)
        self._lit = (job.game, job.deadline)
        self.shown += 1


    def _folds_in(self, job: _Job, presses: list[Command], view: Any) -> bool:
        """Whether the wired presses queued behind the commit leave the deadline and its
        hardware view as they are: decided one after another from the state the commit leads
        to (as the loop will decide them: they arrived before the deadline, which none of
        them may move), the deadline decided after each gives `view`. A power cut leaves
        the log with a prefix of them (each is committed after the one before), and each
        prefix gives the same answerer, so the lamp may be lit before they are written."""
        if len(presses) > FOLD_MOST:
            return False
        rules, state = job.rules, job.after
        for press in presses:
            try:
                events = normalize(rules.decide(state, press))
            except Refused:
                events = []  # the loop refuses it too: it changes nothing
            if events:
                state = fold(rules, state, events)
            if rules.next_deadline(state) != job.deadline:
                return False  # it moves the deadline (an earlier press): the lamp waits
            ahead = job.game.ahead(state, job.deadline)
            decided = None if ahead is None else _lamp(rules, ahead[2])
            if decided is None or decided[2] != view:
                return False
        return True


def _lamp(rules: Rules[Any], decided: tuple[list[Event], Any] | Exception
          ) -> tuple[list[Event], Any, Any] | None:
    """A decided timeout's events, the state they lead to and its hardware view; None if it
    was refused or decides nothing."""
    if isinstance(decided, Exception):
        return None
    events, new = decided
    if not events:
        return None
    return events, new, rules.view(new, "hardware")
