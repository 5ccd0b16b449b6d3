"""The game loop on a real SQLite file: one writer thread, futures resolved after commit,
deadlines fed as timeouts, subscribers told after each commit, games resumed after a cut."""

import queue
import sqlite3
import threading
import time
from types import SimpleNamespace

import pytest
import tiny_engine
from drive import FakeClock, command_from, settle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from appliance.rules import registry
from appliance.rules.protocol import Command, Event, Refused, fold, press
from appliance.runtime.loop import END_GAME, RETRY_FIRST_NS, GameLoop, Outcome
from appliance.runtime.store import FINISHED, Store, StoreError

MS = 1_000_000
SETUP = {"players": ["Аня", "Борис", "Вера"]}

registry.register("tiny", tiny_engine)


def wait_until(cond, limit_s=5):
    limit = time.monotonic() + limit_s
    while not cond():
        assert time.monotonic() < limit, "never happened"
        time.sleep(0.002)


def add(player, points, t=0):
    return Command("add", t, {"player": player, "points": points})


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "svoyak.db") as s:
        yield s


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def loop(store, clock):
    lp = GameLoop(store, clock).start()
    yield lp
    lp.stop()


def test_commands_change_the_state_and_the_log(loop, store):
    g = loop.new_game("tiny", SETUP).result(2)
    assert loop.current == g
    out = loop.submit(add(1, 30)).result(2)
    assert isinstance(out, Outcome) and out.refused is None
    assert [(e.type, dict(e.data)) for e in out.events] == [("added", {"player": 1, "points": 30})]
    rules, state = loop.snapshot()
    assert rules is tiny_engine and state.scores == (0, 30, 0)
    assert [e.type for e in store.events(g)] == ["added"]


def test_future_resolves_only_after_commit(loop, store):
    """A done-callback reads the file through its own connection: the events are there."""
    g = loop.new_game("tiny", SETUP).result(2)
    seen = queue.Queue()

    def check(_fut):
        conn = sqlite3.connect(store.path)
        seen.put(conn.execute("SELECT count(*) FROM events WHERE game = ?", (g,)).fetchone()[0])
        conn.close()

    for k in range(1, 4):
        fut = loop.submit(Command("burst", 0, {"k": k}))
        fut.add_done_callback(check)
        fut.result(2)
    assert [seen.get(timeout=2) for _ in range(3)] == [1, 3, 6]


def test_refused_command_changes_nothing_and_tells_no_one(loop, store):
    g = loop.new_game("tiny", SETUP).result(2)
    told = []
    loop.subscribe(told.append, inline=True)
    before = loop.snapshot()[1]
    for bad in (add(7, 10), add(0, "десять"), Command("judge", 0, {"verdict": "right"})):
        out = loop.submit(bad).result(2)
        assert out.events == [] and isinstance(out.refused, Refused)
        assert out.refused.message_ru and out.refused.message_en
    assert loop.snapshot()[1] is before
    assert store.count(g) == 0 and told == []


def test_json_commands_are_accepted_and_malformed_ones_refused(loop):
    loop.new_game("tiny", SETUP).result(2)
    assert loop.submit({"type": "add", "player": 2, "points": 20}).result(2).refused is None
    assert loop.submit({"player": 2}).result(2).refused is not None
    assert loop.submit({"type": "add", "t_ns": "soon"}).result(2).refused is not None
    assert loop.snapshot()[1].scores == (0, 0, 20)


def test_no_game_yet_is_refused(loop):
    out = loop.submit(add(0, 10)).result(2)
    assert out.refused is not None and out.refused.code == "no_game"


def test_unknown_rules_and_bad_setup_store_nothing(loop, store):
    with pytest.raises(Refused) as e:
        loop.new_game("chess", SETUP).result(2)
    assert "chess" in e.value.message_en
    with pytest.raises(Refused):
        loop.new_game("tiny", {"players": []}).result(2)
    assert store.games() == [] and loop.current is None


def test_deadline_fires_on_the_real_clock(store):
    lp = GameLoop(store).start()
    try:
        updates = queue.Queue()
        lp.subscribe(updates.put)
        lp.new_game("tiny", SETUP).result(2)
        lp.submit(Command("arm", 0, {"ms": 5})).result(2)
        types = [updates.get(timeout=2).events for _ in range(3)]
        assert [[e.type for e in ev] for ev in types] == [[], ["armed"], ["expired"]]
        armed, expired = types[1][0], types[2][0]
        assert expired.t_ns == armed.data["until"]  # stamped with the deadline itself
    finally:
        lp.stop()


def test_deadline_fires_when_the_fake_clock_passes_it(loop, clock, store):
    g = loop.new_game("tiny", SETUP).result(2)
    t0 = clock()
    loop.submit(Command("arm", t0, {"ms": 100})).result(2)
    loop.wake()
    loop.submit(add(0, 10, t0 + 1)).result(2)
    assert loop.snapshot()[1].armed_until == t0 + 100 * MS  # not yet
    clock.set(t0 + 100 * MS)
    loop.wake()
    deadline = time.monotonic() + 2
    while loop.snapshot()[1].armed_until is not None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert loop.snapshot()[1].expired == 1
    assert [e.type for e in store.events(g)] == ["armed", "added", "expired"]


def test_a_press_arriving_after_the_deadline_comes_after_its_timeout(loop, clock):
    """The clock stands still, so only the commands' arrival times order things."""
    loop.new_game("tiny", SETUP).result(2)
    t0 = clock()
    loop.submit(Command("arm", t0, {"ms": 5})).result(2)
    early = loop.submit(press(0, t0 + 1 * MS, at_ns=t0 + 5 * MS - 1)).result(2)  # just in time
    assert early.refused is None
    late = loop.submit(press(1, t0 + 3 * MS, at_ns=t0 + 5 * MS)).result(2)  # stamped in time,
    assert late.refused is not None  # but it arrived after the window closed
    state = loop.snapshot()[1]
    assert state.presses == (0,) and state.expired == 1


def test_inline_subscribers_run_on_the_loop_thread_others_do_not_delay_it(loop):
    inline_threads, slow_seen = [], queue.Queue()
    loop.subscribe(lambda u: inline_threads.append(threading.current_thread().name), inline=True)

    def slow(update):
        time.sleep(0.3)
        slow_seen.put(threading.current_thread().name)

    loop.subscribe(slow)
    loop.new_game("tiny", SETUP).result(2)
    start = time.monotonic()
    for i in range(5):
        loop.submit(add(i % 3, 10)).result(2)
    assert time.monotonic() - start < 0.5  # 6 updates x 0.3 s would be 1.8 s
    assert inline_threads == ["game-loop"] * 6
    assert slow_seen.get(timeout=3) == "game-notifier"


def test_a_failing_subscriber_does_not_stop_the_loop(loop):
    loop.subscribe(lambda u: 1 / 0, inline=True)
    loop.subscribe(lambda u: 1 / 0)
    loop.new_game("tiny", SETUP).result(2)
    assert loop.submit(add(0, 10)).result(2).refused is None
    assert loop.snapshot()[1].scores[0] == 10


def test_unsubscribe(loop):
    told = []
    off = loop.subscribe(told.append, inline=True)
    loop.new_game("tiny", SETUP).result(2)
    off()
    loop.submit(add(0, 10)).result(2)
    assert len(told) == 1


def test_many_threads_one_writer(loop, store):
    g = loop.new_game("tiny", SETUP).result(2)

    def worker(seat):
        return [loop.submit(add(seat, 10)) for _ in range(40)]

    futures = []
    threads = [threading.Thread(target=lambda s=s: futures.extend(worker(s % 3)))
               for s in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(f.result(10).refused is None for f in futures)
    assert sum(loop.snapshot()[1].scores) == 6 * 40 * 10
    seqs = [r.seq for r in store.log(g)]
    assert seqs == list(range(1, 241))


def test_end_game_closes_it_with_its_summary(loop, store):
    g = loop.new_game("tiny", SETUP).result(2)
    loop.submit(add(2, 50)).result(2)
    assert any(a.type == END_GAME for a in loop.legal_actions())
    finished = []
    loop.subscribe(lambda u: finished.append(u.finished), inline=True)
    assert loop.submit({"type": "end_game"}).result(2).refused is None
    rec = store.game(g)
    assert rec.status == FINISHED and rec.summary["scores"] == [0, 0, 50]
    assert finished == [True] and loop.is_finished()
    assert loop.submit(add(0, 10)).result(2).refused.code == "finished"
    assert loop.end_game().result(2).refused is not None
    assert loop.legal_actions() == []
    h = loop.new_game("tiny", SETUP).result(2)
    assert loop.current == h != g
    assert loop.snapshot(g)[1].scores == (0, 0, 50)  # folded back from the log


def test_resume_after_a_cut_gives_the_same_state(tmp_path, clock):
    path = tmp_path / "svoyak.db"
    s1 = Store(path)
    lp = GameLoop(s1, clock).start()
    g = lp.new_game("tiny", SETUP).result(2)
    other = lp.new_game("tiny", {"players": ["X"]}).result(2)
    lp.end_game(other).result(2)
    for i in range(10):
        lp.submit(add(i % 3, 10 * i)).result(2)
    lp.submit(Command("undo")).result(2)
    state = lp.snapshot(g)[1]
    # no stop(): the process "dies" here; a new store and loop open the same file
    s2 = Store(path)
    lp2 = GameLoop(s2, FakeClock(5)).start()
    try:
        assert lp2.games() == [g] and lp2.current == g
        assert lp2.snapshot()[1] == state
        assert lp2.submit(add(0, 10)).result(2).refused is None
    finally:
        lp2.stop()
        lp.stop()


def test_a_running_window_resumes_with_the_time_it_had_left(tmp_path):
    """After a reboot the monotonic clock starts near zero; the game's clock continues from
    its last event, so the 7 s window neither closes at once nor waits for hours."""
    path = tmp_path / "svoyak.db"
    before = FakeClock(10**13)
    lp = GameLoop(Store(path), before).start()
    g = lp.new_game("tiny", SETUP).result(2)
    lp.submit(Command("arm", 10**13, {"ms": 7000})).result(2)
    lp.stop()
    after = FakeClock(3 * 10**9)  # the box has been up for 3 s
    lp2 = GameLoop(Store(path), after).start()
    try:
        assert lp2.now() == 10**13
        after.set(3 * 10**9 + 6999 * MS)
        lp2.wake()
        assert lp2.submit(press(1, after())).result(2).refused is None
        assert lp2.snapshot()[1].expired == 0
        after.set(3 * 10**9 + 7000 * MS)
        lp2.wake()
        deadline = time.monotonic() + 2
        while lp2.snapshot()[1].expired == 0 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert lp2.snapshot(g)[1].expired == 1
        assert lp2.submit(press(1, after())).result(2).refused is not None
    finally:
        lp2.stop()


def test_a_game_whose_engine_is_gone_is_skipped_not_fatal(tmp_path, clock):
    path = tmp_path / "svoyak.db"
    with Store(path) as s:
        s.create_game("no-such-rules", {})
        g = s.create_game("tiny", SETUP)
    lp = GameLoop(Store(path), clock).start()
    try:
        assert lp.games() == [g]
    finally:
        lp.stop()


def loop_with(store, clock, on_timeout):
    """A started loop over the tiny engine whose timeouts `on_timeout(state, command)`
    decides (one that counts, refuses or fails); every other command is the tiny engine's."""

    def decide(state, cmd):
        return on_timeout(state, cmd) if cmd.type == "timeout" else tiny_engine.decide(state, cmd)

    engine = SimpleNamespace(**{f: getattr(tiny_engine, f) for f in (
        "NAME", "initial", "evolve", "legal_actions", "next_deadline", "view", "summary")},
        decide=decide)
    return GameLoop(store, clock, resolve=lambda name: engine).start()


def test_a_timeout_that_changes_nothing_does_not_spin(store, clock):
    calls = []

    def refuse(state, cmd):
        calls.append(cmd.t_ns)
        raise Refused("нет", "no")

    lp = loop_with(store, clock, refuse)
    try:
        lp.new_game("stubborn", SETUP).result(2)
        lp.submit(Command("arm", clock(), {"ms": 1})).result(2)
        clock.set(clock() + 10 * MS)
        for _ in range(20):
            lp.wake()
        assert lp.submit(add(9, 10)).result(2).refused is not None  # state unchanged
        assert len(calls) == 1
        assert lp.submit(add(0, 10)).result(2).refused is None
        lp.submit(add(9, 10)).result(2)
        assert len(calls) == 2  # a new state: the deadline was tried once more
    finally:
        lp.stop()


def test_a_deadline_is_decided_ahead_and_again_after_a_change(store, clock):
    """While the loop waits for a deadline it decides it (`RunningGame.prepare`), so when the
    deadline comes only the commit is left; a command that arrives first changes the state
    and the deadline is decided again, from that state. The committed decision is the one
    made from the state the deadline found."""
    calls = []

    def count(state, cmd):
        calls.append(len(state.presses))
        return [Event(e.type, e.t_ns, {**e.data, "presses": len(state.presses)})
                for e in tiny_engine.decide(state, cmd)]

    lp = loop_with(store, clock, count)
    try:
        game = lp.new_game("counting", SETUP).result(2)
        lp.submit(Command("arm", clock(), {"ms": 5})).result(2)
        wait_until(lambda: calls == [0])  # decided ahead, while waiting
        lp.submit(press(1, clock())).result(2)
        wait_until(lambda: calls == [0, 1])  # the press changed the state: decided again
        clock.set(clock() + 10 * MS)
        lp.wake()
        wait_until(lambda: lp.snapshot()[1].expired == 1)
        assert calls == [0, 1]  # the deadline itself decided nothing more
        expired = [e for e in store.events(game) if e.type == "expired"]
        assert [e.data["presses"] for e in expired] == [1]
    finally:
        lp.stop()


def test_a_deadline_that_fails_ahead_leaves_the_loop_running(store, clock, caplog):
    """An engine's bug in a timeout's decision, met while the loop decides the deadline
    ahead, is logged; the loop keeps taking commands, and at the deadline the failure is
    handled where it always was (logged, tried again later)."""

    def fail(state, cmd):
        raise RuntimeError("an engine's bug (test)")

    lp = loop_with(store, clock, fail)
    try:
        lp.new_game("broken", SETUP).result(2)
        lp.submit(Command("arm", clock(), {"ms": 5})).result(2)
        wait_until(lambda: "deciding the deadline ahead failed" in caplog.text)
        assert lp.submit(add(0, 10)).result(2).refused is None  # the loop is alive
        clock.set(clock() + 10 * MS)
        lp.wake()
        wait_until(lambda: "a timeout's commit failed" in caplog.text)
        assert lp._thread is not None and lp._thread.is_alive()
        assert lp.snapshot()[1].scores[0] == 10
    finally:
        lp.stop()


def test_stopped_loop_refuses_new_work(store, clock):
    lp = GameLoop(store, clock).start()
    lp.stop()
    with pytest.raises(RuntimeError):
        lp.submit(add(0, 1)).result(1)


def test_engine_registry():
    with pytest.raises(Refused) as e:
        registry.get("chess")
    assert e.value.code == "unknown_rules" and "battle" in e.value.message_en
    registry.register("ghost", "appliance.no_such_engine_module")
    try:
        with pytest.raises(Refused) as e:
            registry.get("ghost")
        assert e.value.code == "rules_unavailable"
        registry.register("ghost", SimpleNamespace(decide=lambda s, c: []))
        with pytest.raises(Refused, match="lack"):
            registry.get("ghost")
    finally:
        del registry.REGISTRY["ghost"]
    assert registry.get("tiny") is tiny_engine
    assert {"battle", "tv"} <= set(registry.names())


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_replaying_the_log_gives_the_state_the_loop_had(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("prop") / "svoyak.db"
    clock = FakeClock()
    store = Store(path)
    lp = GameLoop(store, clock).start()
    try:
        g = lp.new_game("tiny", SETUP).result(2)
        for _ in range(data.draw(st.integers(1, 25), label="steps")):
            clock.set(clock() + data.draw(st.integers(0, 200), label="ms") * MS)
            lp.wake()
            settle(lp, clock)
            actions = lp.legal_actions()
            action = data.draw(st.sampled_from(actions), label="action")
            out = lp.submit(command_from(action, data, clock())).result(2)
            assert out.refused is None, (action, out.refused)
            if action.type == END_GAME:
                break
        live = lp.snapshot(g)[1]
    finally:
        lp.stop()
    with Store(path) as again:
        replayed = fold(tiny_engine, tiny_engine.initial(again.game(g).setup), again.events(g))
    assert replayed == live
    store.close()


class GatedStore(Store):
    """A real store whose commits of chosen event types wait for a gate (a slow fsync), or
    fail (a disk error), so a test can look between the decision and the commit."""

    def __init__(self, path, gate_types=(), fail_types=()):
        super().__init__(path)
        self.gate = threading.Event()
        self.waiting = threading.Event()
        self.gate_types, self.fail_types = set(gate_types), set(fail_types)

    def append(self, game, events, **kw):
        types = {e.type for e in events}
        if types & self.fail_types:
            self.fail_types.clear()  # once: the loop tries the deadline again
            raise StoreError("disk full (test)")
        if types & self.gate_types:
            self.waiting.set()
            assert self.gate.wait(5)
        return super().append(game, events, **kw)


def test_early_subscribers_see_a_deadlines_decision_before_its_commit(tmp_path, clock):
    store = GatedStore(tmp_path / "svoyak.db", gate_types={"expired"})
    loop = GameLoop(store, clock).start()
    seen = []
    loop.subscribe(lambda u: seen.append(("early", u.committed, [e.type for e in u.events])),
                   inline=True, early=True)
    loop.subscribe(lambda u: seen.append(("inline", u.committed, [e.type for e in u.events])),
                   inline=True)
    try:
        g = loop.new_game("tiny", SETUP).result(2)
        t0 = clock()
        loop.submit(Command("arm", t0, {"ms": 10})).result(2)
        seen.clear()
        clock.set(t0 + 10 * MS)
        loop.wake()
        assert store.waiting.wait(2)  # the timeout's commit is under way ...
        assert seen == [("early", False, ["expired"])]  # ... and the lamp already knows
        assert loop.snapshot()[1].expired == 0  # the state is swapped only after the commit
        assert [e.type for e in store.events(g)] == ["armed"]
        store.gate.set()
        settle(loop, clock)
        assert seen == [("early", False, ["expired"]), ("early", True, ["expired"]),
                        ("inline", True, ["expired"])]
    finally:
        store.gate.set()
        loop.stop()
        store.close()


def test_a_command_is_told_early_subscribers_only_after_its_commit(tmp_path, clock):
    """Only a deadline's decision is told early: a command is not in the log before its own
    commit, so a lamp lit for it could not be re-derived after a cut."""
    store = GatedStore(tmp_path / "svoyak.db", gate_types={"added"})
    loop = GameLoop(store, clock).start()
    seen = []
    loop.subscribe(lambda u: seen.append(u.committed), inline=True, early=True)
    try:
        loop.new_game("tiny", SETUP).result(2)
        seen.clear()
        fut = loop.submit(add(0, 5))
        assert store.waiting.wait(2)
        assert seen == []
        store.gate.set()
        fut.result(2)
        assert seen == [True]
    finally:
        store.gate.set()
        loop.stop()
        store.close()


def test_a_failed_commit_shows_early_subscribers_the_committed_state_again(tmp_path, clock):
    store = GatedStore(tmp_path / "svoyak.db", fail_types={"expired"})
    loop = GameLoop(store, clock).start()
    seen = []
    loop.subscribe(lambda u: seen.append((u.committed, u.state.armed_until)), inline=True,
                   early=True)
    try:
        loop.new_game("tiny", SETUP).result(2)
        t0 = clock()
        loop.submit(Command("arm", t0, {"ms": 10})).result(2)
        seen.clear()
        clock.set(t0 + 10 * MS)
        loop.wake()
        wait_until(lambda: len(seen) >= 2)
        # The loop tries the deadline again only after a pause (never in a tight loop).
        clock.set(t0 + 10 * MS + RETRY_FIRST_NS)
        loop.wake()
        settle(loop, clock)
        # Shown the decision (the window closed), then told the log does not hold it;
        # the loop tries the deadline again, and that commit holds.
        assert seen == [(False, None), (True, t0 + 10 * MS), (False, None), (True, None)]
    finally:
        loop.stop()
        store.close()
