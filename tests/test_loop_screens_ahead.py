"""The screens follow the decision as the lamp does (appliance/runtime/loop.py, `subscribe`
with ``ahead``): the board and the phones are told a settle window's answerer as soon as the
loop decides it from the presses in the log, while the answerer's own commit is still under
way; a plain subscriber still hears only after the commit, and the screens are not told that
commit again. A commit that fails takes nothing back from the screens: the loop decides the
same again until it is written, `end_game` included. A real loop and a real SQLite file
whose answerer commits wait on a gate or fail; a fake clock."""

from __future__ import annotations

import threading
import time

import pytest
from drive import FakeClock, GatedStore, answerers, settle
from test_lamp_watch import MS, SETUP  # the same battle, settle window 10 ms
from webui_kit import make_kit, views

from appliance.rules.protocol import Command, press
from appliance.runtime.loop import RETRY_FIRST_NS, GameLoop
from appliance.runtime.store import StoreError


class Screen:
    """A subscriber noting (committed, answering) of each update it is told."""

    def __init__(self) -> None:
        self.seen: list[tuple[bool, object]] = []
        self.answerers: list[tuple[bool, int]] = []  # (committed, seat) of answerer events
        self.told = threading.Event()

    def __call__(self, update) -> None:
        view = update.rules.view(update.state, "board")
        self.seen.append((update.committed, view.get("answering")))
        for e in update.events:
            if e.type == "answerer":
                self.answerers.append((update.committed, e.data["player"]))
                self.told.set()


def wait_until(cond, limit_s=10):
    limit = time.monotonic() + limit_s
    while not cond():
        assert time.monotonic() < limit, "never happened"
        time.sleep(0.002)


def answering(loop, which):
    rules, state = getattr(loop, which)()
    return rules.view(state, "board").get("answering")


@pytest.fixture
def box(tmp_path):
    """A running loop with a screen subscribed ahead and a plain subscriber, a battle
    announced and seat 0's press (then seat 1's) in the log."""
    clock = FakeClock()
    store = GatedStore(tmp_path / "svoyak.db", held=("answerer",))
    loop = GameLoop(store, clock)
    screen, plain = Screen(), Screen()
    loop.subscribe(screen, ahead=True)
    loop.subscribe(plain)
    loop.start()
    try:
        game = loop.new_game("battle", SETUP).result(5)
        assert loop.submit(Command("announce")).result(5).refused is None
        t0 = clock()
        for seat, ms in ((0, 1), (1, 3)):
            tick = t0 + ms * MS
            assert loop.submit(press(seat, tick, at_ns=tick + MS)).result(5).refused is None
        yield clock, store, loop, screen, plain, game, t0 + 11 * MS  # seat 0's window closes
    finally:
        store.gate.set()
        loop.stop()
        store.close()


def test_the_screens_are_told_the_answerer_before_its_commit(box):
    clock, store, loop, screen, plain, game, closes = box
    store.closed = True
    clock.set(closes)
    loop.wake()
    assert store.waiting.wait(5)  # the answerer's commit is under way (held)
    assert screen.told.wait(5)
    # Told while its commit is held, from the presses in the log ...
    assert screen.answerers == [(False, 0)]
    assert answerers(store, game) == []
    # ... unlike a plain subscriber, which hears after the commit.
    time.sleep(0.05)
    assert plain.answerers == []
    # What a screen draws on its own (a connect) is what it was told, not the commit behind.
    assert answering(loop, "shown") == 0 and answering(loop, "snapshot") is None
    store.gate.set()
    assert plain.told.wait(5)
    assert plain.answerers == [(True, 0)]
    assert answerers(store, game) == [0]
    time.sleep(0.05)
    assert screen.answerers == [(False, 0)]  # not told its commit again
    assert screen.seen[-1] == (False, 0)
    assert loop.shown()[1] is loop.snapshot()[1]


def test_a_failed_commit_takes_nothing_back_from_the_screens(box):
    """The answerer's commit fails (a disk error): the screens keep the answerer (the host's
    fault banner comes with it), the game cannot be ended past it, and once the log is
    written again it holds the very answerer they were told, which they are not told twice."""
    clock, store, loop, screen, plain, game, closes = box
    store.failing = True
    clock.set(closes)
    loop.wake()
    assert screen.told.wait(5)
    wait_until(lambda: loop.fault is not None)
    wait_until(lambda: len(screen.seen) >= 2 and screen.seen[-1][0])  # the fault's update
    assert screen.answerers == [(False, 0)]
    assert screen.seen[-1] == (True, 0)  # the banner's update still names the answerer
    assert answering(loop, "shown") == 0 and answerers(store, game) == []
    # Tried again after the pause: decided the same, not told again.
    clock.set(closes + RETRY_FIRST_NS)
    loop.wake()
    time.sleep(0.1)
    assert screen.answerers == [(False, 0)]
    # The host ends the game meanwhile: the decision due first cannot be written, so the
    # game is not closed without it.
    with pytest.raises(StoreError):
        loop.end_game(game).result(5)
    assert not loop.is_finished(game)
    store.failing = False
    assert loop.end_game(game).result(5).refused is None
    assert answerers(store, game) == [0]
    assert [e.type for e in store.events(game)][-1] == "answerer"
    assert loop.is_finished(game)
    assert screen.answerers == [(False, 0)]
    assert plain.answerers == [(True, 0)]


def test_the_lamp_watchs_decision_is_not_told_to_the_screens(box):
    """The lamp watch lights the lamp while a losing press is still being written; the
    screens are told only once that press is committed, when the loop decides the deadline
    (before the answerer's commit, as above)."""
    clock, store, loop, screen, plain, game, closes = box
    lamp = threading.Event()
    loop.subscribe(lambda u: lamp.set() if any(e.type == "answerer" for e in u.events)
                   else None, inline=True, early=True)
    store.held = {"press"}
    store.closed = True
    later = closes - 11 * MS + 5 * MS
    loser = loop.submit(press(2, later, at_ns=later + MS))
    assert store.waiting.wait(5)
    clock.set(closes)
    loop.wake()
    assert lamp.wait(5)
    time.sleep(0.05)
    assert screen.answerers == [] and loop._watch.shown == 1
    store.gate.set()
    assert loser.result(5).refused is None
    assert screen.told.wait(5)
    settle(loop, clock)
    wait_until(lambda: answerers(store, game) == [0])
    assert screen.answerers == [(False, 0)]  # told once, from the loop's own decision


def test_the_board_socket_gets_the_answerer_before_its_commit(tmp_path):
    """Through the web UI (the hub subscribes ahead): the board's socket holds a frame
    naming the answerer while the answerer's commit is held."""
    kit = make_kit(tmp_path)
    gate, writing = threading.Event(), threading.Event()
    append = kit.store.append

    def held(g, events, **kw):
        if any(e.type == "answerer" for e in events):
            writing.set()
            assert gate.wait(10)
        return append(g, events, **kw)

    try:
        game = kit.loop.new_game("battle", SETUP).result(5)
        host = kit.host()
        board = kit.client("board")
        assert host.emit("command", {"type": "announce"}, callback=True)["ok"]
        views(board)
        kit.store.append = held
        t = kit.loop.now()
        assert kit.loop.submit(press(1, t)).result(5).refused is None
        assert writing.wait(5)  # the settle window closed: the answerer's commit is held
        seen: list[dict] = []

        def named() -> bool:
            seen.extend(views(board))
            return any(v["view"].get("answering") == 1 for v in seen)

        wait_until(named)
        assert answerers(kit.store, game) == []
        gate.set()
        wait_until(lambda: answerers(kit.store, game) == [1])
    finally:
        gate.set()
        kit.close()
