"""The loop's inbox is bounded per source: a storm of phone commands fills only the phones'
room; the wired buttons and the host still get in, and the presses are decided by tick.
Real loop, real SQLite file, a fake clock; the loop is held by an inline subscriber so the
inbox really fills (no timing)."""

import threading

import pytest
from drive import FakeClock, settle

from appliance.rules.protocol import Command, press
from appliance.runtime import inbox
from appliance.runtime.loop import BUSY, GameLoop
from appliance.runtime.store import Store

MS = 1_000_000
THEMES = [{"name": "Тема", "questions": [{"text": f"В{k}", "answer": "О"} for k in range(5)]}]
SETUP = {"players": ["А", "Б", "В"], "themes": THEMES}


@pytest.mark.parametrize("by, lane", [("button", inbox.BUTTONS), ("host", inbox.HOST_LANE),
                                      ("loop", inbox.HOST_LANE), ("phone", inbox.SCREENS),
                                      ("key", inbox.SCREENS), ("sim", inbox.SCREENS),
                                      ("player:2", inbox.SCREENS)])
def test_each_sender_has_its_source(by, lane):
    assert inbox.lane_of(by) == lane


class Hold:
    """An inline subscriber that holds the loop thread on the next commit until released."""

    def __init__(self) -> None:
        self.armed = False
        self.held = threading.Event()
        self.release = threading.Event()

    def __call__(self, _update) -> None:
        if self.armed:
            self.armed = False
            self.held.set()
            assert self.release.wait(10)


def phone_press(clock, seat=2):
    return Command("press", clock(), {"player": seat}, "phone")


def test_a_phone_storm_fills_only_the_phones_room(tmp_path):
    clock = FakeClock()
    store = Store(tmp_path / "svoyak.db")
    loop = GameLoop(store, clock).start()
    hold = Hold()
    loop.subscribe(hold, inline=True)
    room = loop._inbox.capacity[inbox.SCREENS]
    try:
        game = loop.new_game("battle", SETUP).result(5)
        t0 = clock()
        hold.armed = True
        # The host announces; the loop is held on that commit, so nothing is taken from the
        # inbox until the test releases it.
        announced = loop.submit(Command("announce"))
        assert hold.held.wait(5)
        clock.set(t0 + 3 * MS)
        phones = [loop.submit(phone_press(clock)) for _ in range(room)]
        assert loop.pending(inbox.SCREENS) == room
        storm = [loop.submit(phone_press(clock)) for _ in range(3 * room)]
        # Beyond its room each phone command is refused at once, with words to show.
        for fut in storm:
            assert fut.done()
            assert fut.result().refused == BUSY
        assert BUSY.code == "busy" and "занята" in BUSY.message_ru and "busy" in BUSY.message_en
        assert loop.refused_busy()[inbox.SCREENS] == 3 * room
        # The wired buttons and the host still get in: their rooms are their own. Both
        # presses were stamped by the kernel before the phone's, delivered after it.
        wired_late = loop.submit(press(1, t0 + 2 * MS, at_ns=t0 + 3 * MS + MS // 2))
        wired_early = loop.submit(press(0, t0 + 1 * MS, at_ns=t0 + 4 * MS))
        host = loop.submit(Command("reading_done"))
        assert not any(f.done() for f in (wired_late, wired_early, host))
        assert loop.refused_busy()[inbox.BUTTONS] == loop.refused_busy()[inbox.HOST_LANE] == 0
        assert loop.pending() == room + 3

        hold.release.set()
        assert announced.result(5).refused is None
        for fut in phones:  # queued phone commands are decided, not dropped
            assert fut.result(30).refused is None
        for fut in (wired_late, wired_early, host):
            assert fut.result(30).refused is None
        clock.set(t0 + 50 * MS)  # past the settle window
        loop.wake()
        settle(loop, clock)
        events = store.events(game)
        # Seat 0 pressed first by its kernel tick, though it reached the loop last of all:
        # it answers. The phone's storm delayed it and decided nothing.
        assert [e.data["player"] for e in events if e.type == "answerer"] == [0]
        presses = [(e.data["player"], e.data["by"]) for e in events if e.type == "press"]
        assert presses == [(2, "phone")] * room + [(1, "button"), (0, "button")]
        # Once drained, the phones are let in again.
        assert loop.pending() == 0
        assert loop.submit(phone_press(clock)).result(5).refused != BUSY
    finally:
        hold.release.set()
        loop.stop()
        store.close()


def test_a_full_host_room_refuses_a_new_game_with_words(tmp_path):
    clock = FakeClock()
    store = Store(tmp_path / "svoyak.db")
    loop = GameLoop(store, clock)
    loop._inbox.capacity[inbox.HOST_LANE] = 2
    hold = Hold()
    loop.subscribe(hold, inline=True)
    loop.start()
    try:
        hold.armed = True
        first = loop.new_game("battle", SETUP)
        assert hold.held.wait(5)
        queued = [loop.new_game("battle", SETUP) for _ in range(2)]
        refused = loop.new_game("battle", SETUP)
        assert refused.done() and refused.exception() == BUSY
        hold.release.set()
        assert [f.result(5) for f in [first, *queued]] == [1, 2, 3]
    finally:
        hold.release.set()
        loop.stop()
        store.close()


def test_the_watchdog_is_not_fed_by_a_busy_refusal(tmp_path):
    """The health check is a host command: if the host's room is full it is refused at once,
    which says nothing about the loop taking commands, so the watchdog is not fed."""
    from svoyak.serve import _loop_answers

    store = Store(tmp_path / "svoyak.db")
    loop = GameLoop(store, FakeClock()).start()
    try:
        assert _loop_answers(loop)
        loop._inbox.capacity[inbox.HOST_LANE] = 0
        assert not _loop_answers(loop)
    finally:
        loop.stop()
        store.close()


def test_a_phone_refused_by_a_full_inbox_is_told_why_and_counted(tmp_path):
    """Through the web UI: a screen's press finding the screens' room full gets the busy
    refusal in both languages; the host's command still goes through; the stats count it."""
    from webui_kit import make_kit

    kit = make_kit(tmp_path)
    try:
        kit.loop.new_game("battle", SETUP).result(5)
        host = kit.host()
        assert host.emit("command", {"type": "announce"}, callback=True)["ok"]
        kit.loop._inbox.capacity[inbox.SCREENS] = 0  # the phones' room is taken
        board = kit.client("board")
        res = board.emit("press", {"player": 1}, callback=True)
        assert res["ok"] is False and res["refused"]["code"] == "busy", res
        assert "занята" in res["refused"]["ru"] and "busy" in res["refused"]["en"]
        assert host.emit("command", {"type": "reading_done"}, callback=True)["ok"]
        fc = kit.app.test_client()
        fc.post("/login", data={"pin": kit.services.settings.pin})
        stats = fc.get("/admin/api/stats").get_json()
        assert stats["hub"]["inbox"]["busy"][inbox.SCREENS] == 1
        assert stats["hub"]["inbox"]["busy"][inbox.HOST_LANE] == 0
    finally:
        kit.close()


def test_the_inbox_lists_what_arrived_before_a_moment_in_the_loops_order():
    """What the lamp watch asks (`Inbox.before`): the items queued that arrived before a
    moment, in the order the loop takes them, control items aside; gone once taken."""
    box = inbox.Inbox()
    box.put("wake")  # a control item: no source
    assert box.put("a", inbox.SCREENS, 5)
    assert box.put("b", inbox.BUTTONS, 7)
    assert box.put("c", inbox.HOST_LANE, 9)
    assert box.before(9) == [(inbox.SCREENS, "a"), (inbox.BUTTONS, "b")]
    assert box.before(5) == []
    assert box.get(0) == "wake"
    assert box.get(0) == "a"
    assert box.before(10) == [(inbox.BUTTONS, "b"), (inbox.HOST_LANE, "c")]
    assert box.get(0) == "b" and box.get(0) == "c"
    assert box.before(10) == [] and box.earliest() is None
