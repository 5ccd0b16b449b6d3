"""The lamp while another commit is being written (appliance/runtime/lampwatch.py): a losing
press still being committed when the settle window closes does not hold the lamp; the
winner's own press being committed does; nor does the watch fire while a command waits in
the inbox. A real loop, a real SQLite file whose press commits wait on a gate (a slow
fsync), a fake clock: no timing in the assertions but "nothing happened yet"."""

import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from drive import FakeClock, GatedStore, answerers, settle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from appliance.rules.protocol import Command, press
from appliance.runtime import lampwatch
from appliance.runtime.loop import GameLoop

MS = 1_000_000
THEMES = [{"name": "Тема", "questions": [{"text": f"В{k}", "answer": "О"} for k in range(5)]}]
SETUP = {"players": ["А", "Б", "В"], "themes": THEMES, "settings": {"settle_ms": 10}}


class Lamp:
    def __init__(self) -> None:
        self.seen: list[tuple[bool, int]] = []
        self.views: list[tuple[bool, object]] = []  # (lamp, answering) as the outputs follow
        self.lit = threading.Event()

    def __call__(self, update) -> None:
        view = update.rules.view(update.state, "hardware")
        if not self.views or self.views[-1] != (view["lamp"], view["answering"]):
            self.views.append((view["lamp"], view["answering"]))
        for e in update.events:
            if e.type == "answerer":
                self.seen.append((update.committed, e.data["player"]))
                self.lit.set()


class CountingRules:
    """The battle engine, counting the timeouts it is asked to decide, by deadline."""

    def __init__(self, rules) -> None:
        self._rules = rules
        self.timeouts: list[int] = []

    def __getattr__(self, name):
        return getattr(self._rules, name)

    def decide(self, state, command):
        if command.type == "timeout":
            self.timeouts.append(command.t_ns)
        return self._rules.decide(state, command)


@contextmanager
def started(tmp_path, rules=None):
    """A running loop with the lamp subscribed early and a battle announced; stopped after."""
    clock = FakeClock()
    store = GatedStore(tmp_path / "svoyak.db")
    loop = (GameLoop(store, clock) if rules is None
            else GameLoop(store, clock, resolve=lambda name: rules))
    lamp = Lamp()
    loop.subscribe(lamp, inline=True, early=True)
    loop.start()
    try:
        game = loop.new_game("battle", SETUP).result(5)
        assert loop.submit(Command("announce")).result(5).refused is None
        yield clock, store, loop, lamp, game
    finally:
        store.gate.set()
        loop.stop()
        store.close()


def written_behind(clock, store, loop, first=(0, 1, 2), writing=(1, 3, 4)):
    """Commit the press `first` (seat, tick and arrival in ms from now), then submit the press
    `writing` and wait until its commit is under way, held at the store's gate (a slow
    fsync). Returns the clock when it began and the held press's future."""
    t0 = clock()
    seat, tick, at = first
    assert loop.submit(press(seat, t0 + tick * MS, at_ns=t0 + at * MS)).result(5).refused is None
    store.closed = True
    seat, tick, at = writing
    held = loop.submit(press(seat, t0 + tick * MS, at_ns=t0 + round(at * MS)))
    assert store.waiting.wait(5)
    return t0, held


def wait_until(cond, limit_s=10):
    limit = time.monotonic() + limit_s
    while not cond():
        assert time.monotonic() < limit, "never happened"
        time.sleep(0.002)


def test_a_losing_press_being_written_does_not_hold_the_lamp(tmp_path):
    with started(tmp_path) as (clock, store, loop, lamp, game):
        t0, loser = written_behind(clock, store, loop)  # the loser's slow commit under way
        clock.set(t0 + 11 * MS)  # the settle window of seat 0 closes meanwhile
        loop.wake()
        assert lamp.lit.wait(5)
        # Lit before that commit returned, for the press already in the log ...
        assert lamp.seen == [(False, 0)]
        assert not loser.done()
        assert answerers(store, game) == []
        assert loop._watch.shown == 1
        # ... and the loop then decides the same, and commits it.
        store.gate.set()
        assert loser.result(5).refused is None
        settle(loop, clock)
        assert answerers(store, game) == [0]
        assert lamp.seen[-1] == (True, 0)
        assert {seat for _, seat in lamp.seen} == {0}
        # the loser's commit, returning, does not take the lamp back until the deadline
        assert lamp.views[lamp.views.index((False, 0)):] == [(False, 0)]


def test_the_winners_own_press_being_written_holds_the_lamp(tmp_path):
    """If the press being written is the earliest, the lamp must wait: lit for it before
    its commit, a power cut could leave a log in which another seat answers."""
    with started(tmp_path) as (clock, store, loop, lamp, game):
        t0, winner = written_behind(clock, store, loop, first=(1, 3, 4), writing=(0, 1, 5))
        clock.set(t0 + 14 * MS)  # past both settle deadlines
        loop.wake()
        time.sleep(0.3)  # give the watch every chance to (wrongly) light the lamp
        assert lamp.seen == []
        store.gate.set()
        assert winner.result(5).refused is None
        settle(loop, clock)
        assert answerers(store, game) == [0]
        assert lamp.seen[0] == (False, 0) and lamp.seen[-1] == (True, 0)


def test_a_command_waiting_in_the_inbox_holds_the_lamp(tmp_path):
    """A press that reached the box before the window closed but waits behind the commit
    may be the earliest: the watch leaves the deadline to the loop."""
    with started(tmp_path) as (clock, store, loop, lamp, game):
        t0, _ = written_behind(clock, store, loop, first=(0, 2, 3), writing=(1, 4, 5))
        queued = loop.submit(press(2, t0 + 1 * MS, at_ns=t0 + 6 * MS))  # earliest of all
        clock.set(t0 + 20 * MS)
        loop.wake()
        wait_until(lambda: loop._watch.held >= 1)
        assert lamp.seen == []
        store.gate.set()
        assert queued.result(5).refused is None
        settle(loop, clock)
        assert answerers(store, game) == [2]
        assert {seat for _, seat in lamp.seen} == {2}


def test_a_command_that_arrived_after_the_deadline_does_not_hold_the_lamp(tmp_path):
    """A press that reached the box after the window closed is decided after the window's
    timeout whatever it says: waiting for it would only delay the lamp."""
    with started(tmp_path) as (clock, store, loop, lamp, game):
        t0, _ = written_behind(clock, store, loop)
        clock.set(t0 + 12 * MS)
        late = loop.submit(press(2, t0 + 12 * MS, at_ns=t0 + 12 * MS))  # after t0 + 11 ms
        loop.wake()
        assert lamp.lit.wait(5)
        assert lamp.seen == [(False, 0)] and not late.done()
        store.gate.set()
        late.result(5)
        settle(loop, clock)
        assert answerers(store, game) == [0]


def test_a_deadline_is_decided_during_the_commit_just_before_it(tmp_path):
    """A losing press is still being written half a millisecond before the settle window
    closes: the watch decides the window from both states meanwhile (while the fsync keeps
    the loop thread off the interpreter) and hands the loop its decision, which the loop
    commits without deciding it again."""
    from appliance.rules import registry

    rules = CountingRules(registry.get("battle"))
    with started(tmp_path, rules) as (clock, store, loop, lamp, game):
        t0, loser = written_behind(clock, store, loop)
        closes = t0 + 11 * MS
        time.sleep(0.05)
        assert loop._watch.offered == 0  # the window is still far: nothing decided yet
        clock.set(closes - MS // 2)
        loop.wake()
        wait_until(lambda: loop._watch.offered == 1)
        # From the state before the loser's press (decided ahead by the loop as it waited,
        # or by the watch) and from the state after it: twice, no more.
        assert rules.timeouts.count(closes) == 2
        store.gate.set()
        assert loser.result(5).refused is None
        clock.set(closes + MS)
        loop.wake()
        settle(loop, clock)
        assert answerers(store, game) == [0]
        assert rules.timeouts.count(closes) == 2  # the loop committed the watch's decision
        assert lamp.seen[-1] == (True, 0)


def test_the_winners_own_press_being_written_is_not_watched(tmp_path):
    """A commit that moves the deadline (the earliest press) is not watched at all: its
    lamp waits for it, and deciding meanwhile would only delay the loop thread."""
    with started(tmp_path) as (clock, store, loop, lamp, game):
        # seat 0's press, written, closes the window at t0 + 11
        t0, winner = written_behind(clock, store, loop, first=(1, 3, 4), writing=(0, 1, 5))
        clock.set(t0 + 10 * MS + MS // 2)
        loop.wake()
        time.sleep(0.1)
        assert loop._watch.offered == 0 and lamp.seen == []
        store.gate.set()
        assert winner.result(5).refused is None
        clock.set(t0 + 12 * MS)
        loop.wake()
        settle(loop, clock)
        assert answerers(store, game) == [0]


def test_a_losing_wired_press_queued_behind_the_commit_does_not_hold_the_lamp(tmp_path):
    """A wired press that reached the box before the window closed, queued behind the losing
    press being written, is folded in by the watch: it leaves the deadline and the answerer
    as they are, so the lamp is lit at the deadline, and stays lit while the loop writes the
    two presses (their states, the deadline still to come, would take it back)."""
    with started(tmp_path) as (clock, store, loop, lamp, game):
        t0, loser = written_behind(clock, store, loop)
        queued = loop.submit(press(2, t0 + 5 * MS, at_ns=t0 + 6 * MS))  # later than seat 0
        clock.set(t0 + 11 * MS)
        loop.wake()
        assert lamp.lit.wait(5)
        assert lamp.seen == [(False, 0)]
        assert not loser.done() and not queued.done()
        assert answerers(store, game) == [] and loop._watch.shown == 1
        store.gate.set()
        assert loser.result(5).refused is None and queued.result(5).refused is None
        settle(loop, clock)
        assert answerers(store, game) == [0]
        assert {seat for _, seat in lamp.seen} == {0}
        assert loop._watch.shown == 1  # the presses' own commits are not watched again
        # once seat 0 is shown answering, never armed again in between
        assert lamp.views[lamp.views.index((False, 0)):] == [(False, 0)]


def test_a_phone_press_queued_behind_the_commit_holds_the_lamp(tmp_path):
    """Only wired presses are folded in: anything else that arrived before the deadline
    leaves it to the loop."""
    with started(tmp_path) as (clock, store, loop, lamp, game):
        t0, _ = written_behind(clock, store, loop)
        queued = loop.submit(press(2, t0 + 5 * MS, by="phone", at_ns=t0 + 6 * MS))
        clock.set(t0 + 11 * MS)
        loop.wake()
        wait_until(lambda: loop._watch.held >= 1)
        assert lamp.seen == []
        store.gate.set()
        assert queued.result(5).refused is None
        settle(loop, clock)
        assert answerers(store, game) == [0]


def test_too_many_wired_presses_queued_hold_the_lamp(tmp_path, monkeypatch):
    """Past `FOLD_MOST` presses the watch does not fold them in (the commit's end would wait
    for it): the loop decides."""
    monkeypatch.setattr(lampwatch, "FOLD_MOST", 1)
    with started(tmp_path) as (clock, store, loop, lamp, game):
        t0, _ = written_behind(clock, store, loop)
        loop.submit(press(2, t0 + 5 * MS, at_ns=t0 + 6 * MS))
        last = loop.submit(press(2, t0 + 7 * MS, at_ns=t0 + 8 * MS))
        clock.set(t0 + 11 * MS)
        loop.wake()
        wait_until(lambda: loop._watch.held >= 1)
        assert lamp.seen == []
        store.gate.set()
        last.result(5)
        settle(loop, clock)
        assert answerers(store, game) == [0]


def test_a_wired_press_queued_that_wins_a_tie_holds_the_lamp(tmp_path):
    """A queued press with the winner's very tick leaves the deadline where it is but wins
    the tie (seat order, rotation 0 in the first question): the answerer it leads to is not
    the one the log holds, so the lamp waits for the loop."""
    with started(tmp_path) as (clock, store, loop, lamp, game):
        t0, _ = written_behind(clock, store, loop, first=(1, 1, 2), writing=(2, 3, 4))
        queued = loop.submit(press(0, t0 + 1 * MS, at_ns=t0 + 6 * MS))  # seat 1's tick
        clock.set(t0 + 11 * MS)
        loop.wake()
        wait_until(lambda: loop._watch.held >= 1)
        assert lamp.seen == []
        store.gate.set()
        assert queued.result(5).refused is None
        settle(loop, clock)
        assert answerers(store, game) == [0]
        assert {seat for _, seat in lamp.seen} == {0}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loser_ms=st.integers(0, 9),
       queued=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 10)), max_size=4))
def test_whatever_waits_behind_the_commit_the_lamp_shows_the_answerer_the_log_will_hold(
        loser_ms, queued):
    """Seat 0 pressed and is in the log, seat 1's press is being written and wired presses
    (any seat, any tick) wait behind it as every window closes. Whatever the lamp is shown
    before those commits is for the one press in the log (so a cut then, which leaves seat
    0 alone, decides it again), and is the answerer the loop commits after them all."""
    with tempfile.TemporaryDirectory() as tmp, started(Path(tmp)) as (
            clock, store, loop, lamp, game):
        t0, _ = written_behind(clock, store, loop, writing=(1, loser_ms, 10 + 1 / MS))
        futures = [loop.submit(press(seat, t0 + ms * MS, at_ns=t0 + 10 * MS + 2 + k))
                   for k, (seat, ms) in enumerate(queued)]
        clock.set(t0 + 30 * MS)
        loop.wake()
        limit = time.monotonic() + 0.3
        while not lamp.seen and time.monotonic() < limit:
            time.sleep(0.002)
        shown = list(lamp.seen)
        in_log = {e.data["player"] for e in store.events(game) if e.type == "press"}
        assert in_log == {0}
        assert all(not committed and seat in in_log for committed, seat in shown)
        store.gate.set()
        for fut in futures:
            fut.result(5)
        settle(loop, clock)
        final = answerers(store, game)
        assert len(final) == 1
        assert {seat for _, seat in lamp.seen} == {final[0]}
