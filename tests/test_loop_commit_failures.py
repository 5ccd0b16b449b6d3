"""Commits that fail: a deadline whose commit keeps failing (a full memory card: a real, small
tmpfs filled to the last byte) is tried again with a growing pause, never in a tight loop;
the host is shown why the game waits, and the game goes on by itself once there is room. A
command whose commit fails after the timeouts due before it were committed still has those
timeouts told to the screens."""

from __future__ import annotations

import threading
import time

import pytest
import tiny_engine
from drive import FakeClock
from test_disk_full import fill
from webui_kit import make_kit, views

from appliance.rules import registry
from appliance.rules.protocol import Command
from appliance.runtime.loop import RETRY_FIRST_NS, GameLoop
from appliance.runtime.store import Store, StoreError, db_path

MS = 1_000_000
SETUP = {"players": ["Аня", "Борис"]}
THEMES = [{"name": "Тема", "questions": [{"text": f"В{k}", "answer": "О"} for k in range(5)]}]

registry.register("tiny", tiny_engine)


def wait_until(cond, limit_s: float = 10) -> None:
    limit = time.monotonic() + limit_s
    while not cond():
        assert time.monotonic() < limit, "never happened"
        time.sleep(0.002)


class CountingStore(Store):
    """A real store that counts the commits the loop tries (each one really goes to SQLite)."""

    tries = 0

    def append(self, game, events, **kw):
        self.tries += 1
        return super().append(game, events, **kw)


def test_a_deadline_on_a_full_card_backs_off_tells_the_host_and_resumes(small_disk):
    clock = FakeClock()
    store = CountingStore(db_path(small_disk))
    loop = GameLoop(store, clock)
    told: list[tuple[list[str], dict | None]] = []
    loop.subscribe(lambda u: told.append(([e.type for e in u.events], loop.fault)))
    loop.start()
    filler = None
    try:
        game = loop.new_game("tiny", SETUP).result(5)
        t0 = clock()
        loop.submit(Command("arm", t0, {"ms": 10})).result(5)
        filler = fill(small_disk)
        tries = store.tries
        clock.set(t0 + 10 * MS)
        loop.wake()
        wait_until(lambda: loop.fault is not None)
        assert store.tries == tries + 1
        fault = loop.fault
        assert fault["code"] == "disk_full" and fault["game"] == game
        assert "заполнена" in fault["ru"] and "full" in fault["en"]
        wait_until(lambda: any(f is not None for _, f in told))  # screens were told
        # The game is as it was: the decision is not in the log nor in the state.
        assert [e.type for e in store.events(game)] == ["armed"]
        assert loop.snapshot()[1].armed_until == t0 + 10 * MS
        # No retry before the pause is over, however long the loop is left alone: the old
        # loop tried again at once, thousands of times a second.
        time.sleep(0.3)
        assert store.tries == tries + 1
        # The pause doubles with each failure.
        clock.set(t0 + 10 * MS + RETRY_FIRST_NS)
        loop.wake()
        wait_until(lambda: store.tries == tries + 2)
        clock.set(t0 + 10 * MS + 2 * RETRY_FIRST_NS)
        loop.wake()
        time.sleep(0.3)
        assert store.tries == tries + 2
        clock.set(t0 + 10 * MS + 3 * RETRY_FIRST_NS)
        loop.wake()
        wait_until(lambda: store.tries == tries + 3)
        assert loop.fault == fault

        filler.unlink()  # the host deletes an old package: room again
        filler = None
        clock.set(t0 + 10 * MS + 3 * RETRY_FIRST_NS + 2_000 * MS)
        loop.wake()
        wait_until(lambda: loop.fault is None)
        assert [e.type for e in store.events(game)] == ["armed", "expired"]
        assert loop.snapshot()[1].armed_until is None
        wait_until(lambda: (["expired"], None) in told)  # screens told, the banner gone
    finally:
        if filler is not None:
            filler.unlink()
        loop.stop()
        store.close()


class FailingStore(Store):
    """A real store whose commit of the chosen event types raises (a disk error)."""

    def __init__(self, path, fail_types):
        super().__init__(path)
        self.fail_types = set(fail_types)

    def append(self, game, events, **kw):
        if {e.type for e in events} & self.fail_types:
            raise StoreError("disk error (test)")
        return super().append(game, events, **kw)


def test_timeouts_committed_before_a_failed_command_are_told(tmp_path):
    clock = FakeClock()
    store = FailingStore(tmp_path / "svoyak.db", fail_types={"added"})
    loop = GameLoop(store, clock)
    screens: list[list[str]] = []
    lamp: list[tuple[bool, list[str]]] = []
    got = threading.Event()

    def screen(update):
        screens.append([e.type for e in update.events])
        got.set()

    loop.subscribe(screen)
    loop.subscribe(lambda u: lamp.append((u.committed, [e.type for e in u.events])),
                   inline=True, early=True)
    loop.start()
    try:
        game = loop.new_game("tiny", SETUP).result(5)
        t0 = clock()
        loop.submit(Command("arm", t0, {"ms": 10})).result(5)
        wait_until(lambda: len(screens) == 2)
        screens.clear()
        lamp.clear()
        # The loop's own clock is still before the deadline; the command arrived after it,
        # so its catch-up commits the timeout first, then its own commit fails.
        late = t0 + 20 * MS
        fut = loop.submit(Command("add", late, {"player": 0, "points": 5}, at_ns=late))
        with pytest.raises(StoreError):
            fut.result(5)
        assert [e.type for e in store.events(game)] == ["armed", "expired"]
        wait_until(lambda: ["expired"] in screens)
        assert screens == [["expired"]]
        assert (True, ["expired"]) in lamp
        assert loop.snapshot()[1].armed_until is None  # the state holds what the log holds
        assert loop.snapshot()[1].scores[0] == 0
    finally:
        loop.stop()
        store.close()


def test_the_host_sees_why_the_game_waits(small_disk):
    """Through the web UI: the host's frame carries the loop's fault while a deadline cannot
    be written (the banner), and drops it once the card has room again."""
    kit = make_kit(small_disk)
    filler = None
    try:
        kit.loop.new_game("battle", {"players": ["А", "Б", "В"], "themes": THEMES,
                                     "settings": {"window_s": 0.2}}).result(5)
        host = kit.host()
        assert host.emit("command", {"type": "announce"}, callback=True)["ok"]
        host.get_received()
        filler = fill(small_disk)
        res = host.emit("command", {"type": "reading_done"}, callback=True)
        if not res["ok"]:  # the command found no room either: that is said, then retried
            assert res["refused"]["code"] == "disk_full", res
            filler.unlink()
            assert host.emit("command", {"type": "reading_done"}, callback=True)["ok"]
            filler = fill(small_disk)
        faults: list[dict] = []

        def fault_seen() -> bool:
            faults.extend(v["loop_fault"] for v in views(host) if "loop_fault" in v)
            return bool(faults)

        wait_until(fault_seen)  # the 0.2 s window ran out and its close cannot be written
        assert faults[-1]["code"] == "disk_full" and "заполнена" in faults[-1]["ru"]
        filler.unlink()
        filler = None
        seen: list[dict] = []

        def closed() -> bool:
            seen.extend(views(host))
            return any("loop_fault" not in v and v["view"]["phase"] == "closed" for v in seen)

        wait_until(closed)
    finally:
        if filler is not None:
            filler.unlink()
        kit.close()
