"""A hostile room during a three-room tournament: one director and three room boxes as four
`svoyak serve` processes on a Mosquitto configured by the `broker` role (as in
tests/test_rooms_tournament.py). While room 1 plays its second battle and rooms 2 and 3 are
at the end of their first, a client with room 1's own code sends what a broken or hostile
box could: a known event type with an empty payload (the message that used to stall every
room), an event without a type, JSON nested past any parser's recursion, t_ns that is not a
whole number or out of range, messages under a forged box id, and a game of room 1's
finished battle (events and a result). Each is refused alone and shown (the director's rooms
page lists it; room 1's host tablet shows what the director refused of its own box), rooms
2 and 3's battles reach the bracket within 5 s, and room 1 plays on: afterwards every game's
events are on the director exactly once, equal to the room's own log."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from appliance.runtime.store import Store, db_path
from rooms import messages, topics
from rooms.db import Tables

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_rooms_tournament import Box, Host, open_venue, venue  # noqa: E402, F401

DEADLINE_S = 300


class GatedHost(Host):
    """A host who plays when `go` is set, and ends a battle (its result) only when `end`
    is."""

    def __init__(self, box: Box, stop: threading.Event):
        super().__init__(box, stop)
        self.go = threading.Event()
        self.go.set()
        self.end = threading.Event()
        self.end.set()
        self.idle = threading.Event()  # paused, between two commands

    def step(self) -> None:
        if not self.go.is_set():
            self.idle.set()
            time.sleep(0.05)
            return
        self.idle.clear()
        view = self.last.get("view") or {}
        if (self.in_battle and self.last.get("game") == getattr(self, "game", None)
                and view.get("phase") == "finished" and not self.last.get("finished")
                and not self.end.is_set()):
            time.sleep(0.05)
            return
        super().step()


class Hostile:
    """A client with a room's own credentials (so, with the broker's client id rule, the
    room's connection: the room's box, put off, comes back a second later and puts this
    one off in turn) publishing raw payloads under the room's `up` topics."""

    def __init__(self, port: int, room: str, code: str):
        self.acks: dict[int, Any] = {}
        self.connected = threading.Event()
        c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=room, protocol=mqtt.MQTTv5,
                        reconnect_on_failure=False)
        c.username_pw_set(room, code)
        c.on_connect = lambda *a: self.connected.set()
        c.on_disconnect = lambda *a: self.connected.clear()
        c.on_publish = lambda _c, _u, mid, rc, _p: self.acks.__setitem__(mid, rc)
        c.connect("127.0.0.1", port, keepalive=10)
        c.loop_start()
        assert self.connected.wait(10)
        self.client, self.room = c, room

    def send(self, kind: str, payload: bytes) -> None:
        for _ in range(3):
            if not self.connected.is_set():
                self.client.loop_stop()
                self.client.reconnect()
                self.client.loop_start()
                assert self.connected.wait(10)
            info = self.client.publish(topics.up(self.room, kind), payload, qos=1)
            with contextlib.suppress(RuntimeError, ValueError):
                info.wait_for_publish(5)
            if info.mid in self.acks:
                assert not self.acks[info.mid].is_failure  # the broker took it: own topic
                return
        raise AssertionError(f"could not publish {kind}")

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def outbox(data: Path) -> list[tuple[int, str, int, str]]:
    """A room box's outbox rows: (game, battle, acked, assignment), oldest first."""
    with sqlite3.connect(f"file:{db_path(data)}?mode=ro", uri=True, timeout=10) as c:
        return [(int(g), str(b), int(a), str(s)) for g, b, a, s in c.execute(
            "SELECT game, battle, acked, assignment FROM rooms_outbox ORDER BY game")]


def test_a_hostile_room_is_refused_alone(venue: Any, browser: Any,  # noqa: F811
                                         capsys: Any) -> None:
    tmp, broker, _passwd, boxes = venue
    ddata = tmp / "director"
    director, rooms, codes = open_venue(venue, capsys, seed=5)
    stop = threading.Event()
    hosts = [GatedHost(r, stop) for r in rooms]
    for h in hosts[1:]:
        h.end.clear()  # rooms 2 and 3 play their first battle to its end, then wait
    threads = [threading.Thread(target=h.run, daemon=True) for h in hosts]
    for th in threads:
        th.start()
    deadline = time.monotonic() + DEADLINE_S

    def wait_for(cond: Any, what: str) -> Any:
        while not (got := cond()):
            assert time.monotonic() < deadline, f"timed out: {what}; " + str(
                [h.errors[-3:] for h in hosts])
            time.sleep(0.1)
        return got

    def bracket() -> dict[str, Any]:
        return {b["id"]: b for b in director.status()["bracket"]["battles"]}

    try:
        # Room 1 finishes its first battle and is a few questions into its second; rooms
        # 2 and 3 have played theirs to the end and hold the result.
        wait_for(lambda: hosts[0].played and hosts[0].in_battle and hosts[0].questions >= 2,
                 "room 1 in its second battle")
        hosts[0].go.clear()
        wait_for(lambda: all(h.in_battle and (h.last.get("view") or {}).get("phase")
                             == "finished" for h in hosts[1:]), "rooms 2, 3 at the end")
        wait_for(hosts[0].idle.is_set, "room 1's host paused")
        wait_for(lambda: rooms[0].status()["unacknowledged"] == 0, "room 1 acknowledged")
        (old_game, old_battle, _, old_aid), (game, battle, acked, aid) = outbox(rooms[0].data)
        box = json.loads((rooms[0].data / "rooms.json").read_text())["box"]
        others = [h.in_battle for h in hosts[1:]]
        applied_before = director.status()["rooms"][0].get("game")
        assert applied_before == game

        def run(*events: Any, **over: Any) -> bytes:
            return messages.encode({"v": 1, "box": box, "game": game, "battle": battle,
                                    "assignment": aid, "events": list(events), **over})

        nxt = acked + 1
        ok_event = {"seq": nxt, "t_ns": 10**12, "wall": "2026-12-02T00:00:00+00:00",
                    "type": "question_closed", "payload": {"reason": "timeout"}}
        deep = 100_000
        hostile = Hostile(broker.port, "room1", codes[0]["code"])
        try:
            sends = [
                # the message that used to stall every room: a known type, an empty payload
                (topics.EVENTS, run({"seq": nxt, "t_ns": 1, "type": "judged", "payload": {}})),
                (topics.EVENTS, run({"seq": nxt, "t_ns": 1, "payload": {}})),  # no type
                (topics.EVENTS, run({"seq": nxt, "t_ns": "1", "type": "press",
                                     "payload": {"player": 0}})),
                (topics.EVENTS, run({"seq": nxt, "t_ns": 1 << 64, "type": "press",
                                     "payload": {"player": 0}})),
                (topics.EVENTS, run({"seq": nxt, "t_ns": 1.5, "type": "press",
                                     "payload": {"player": 0}})),
                # past the JSON parser's recursion limit, and past ours but not the parser's
                (topics.EVENTS, run()[:-2] + b'{"seq":1,"t_ns":1,"type":"press","payload":'
                 + b"[" * deep + b"]" * deep + b"}]}"),
                (topics.EVENTS, run({"seq": nxt, "t_ns": 1, "type": "press",
                                     "payload": json.loads("[" * 200 + "]" * 200)})),
                # a forged box id, in an event and in a status
                (topics.EVENTS, run(ok_event, box="box-forged")),
                (topics.STATUS, messages.encode({"v": 1, "room": "room1", "box": "box-forged",
                                                 "online": True})),
                # a game of room 1's finished battle: events, and a result of its own
                (topics.EVENTS, run({**ok_event, "seq": 1}, game=game + 100,
                                    battle=old_battle, assignment=old_aid)),
                (topics.RESULT, messages.encode(messages.result_message(
                    box, game + 100, old_battle, 1, {"winner": 0}, "room1", old_aid))),
            ]
            for kind, payload in sends:
                hostile.send(kind, payload)
        finally:
            hostile.close()
        # Rooms 2 and 3 end their battles now: their results reach the bracket within 5 s.
        t0 = time.monotonic()
        for h in hosts[1:]:
            h.end.set()
        while not all(bracket()[b]["winner"] for b in others):
            assert time.monotonic() - t0 < 5, (others, director.status()["refusals"])
            time.sleep(0.05)

        # Each hostile message refused alone, with the room and why.
        refusals = director.status()["refusals"]
        assert all(r["room"] == "room1" for r in refusals), refusals
        text = " | ".join(r["en"] for r in refusals)
        for why in ("cannot be folded", "'type'", "'t_ns'", "not JSON", "nested deeper",
                    "Box box-forged writes with room1's code", "already played as game"):
            assert why in text, (why, text)
        codes_seen = {r["code"] for r in refusals}
        assert {"unfoldable", "forged_box", "other_game"} <= codes_seen, codes_seen
        t_ns_refusals = [r for r in refusals if "'t_ns'" in r["en"]]
        assert sum(r["count"] for r in t_ns_refusals) == 3, t_ns_refusals
        assert director.status()["rooms"][0].get("intruder") == "box-forged"
        # Nothing of it applied: room 1's game on the director is still what the room sent.
        dtab = Tables(db_path(ddata), "")
        try:
            assert dtab.query("SELECT max(seq) FROM rooms_applied WHERE box = ? AND game = ?",
                              (box, game)) == [(acked,)]
            assert dtab.query("SELECT count(*) FROM rooms_applied WHERE game = ?",
                              (game + 100,)) == [(0,)]
        finally:
            dtab.close()

        try:
            # The director's rooms page lists the refusals...
            page = browser.new_page()
            page.goto(director.base + "/login?next=/admin/rooms")
            page.fill("#pin", json.loads((ddata / "settings.json").read_text())["pin"])
            page.click("button[type=submit]")
            page.wait_for_selector("#refusals-list li[data-code=unfoldable]", timeout=20_000)
            listed = page.inner_text("#refusals-list")
            assert "room1" in listed and "box-forged" in listed, listed
            # ... and room 1's host tablet what the director refused of its own game.
            tablet = browser.new_page()
            tablet.goto(rooms[0].base + "/login?next=/host")
            tablet.fill("#pin", json.loads((rooms[0].data / "settings.json").read_text())["pin"])
            tablet.click("button[type=submit]")
            tablet.wait_for_function(
                "() => Number(document.getElementById('rooms-link').dataset.refused) > 0",
                timeout=20_000)
            assert tablet.is_visible("#rooms-link")
            shown = tablet.inner_text("#rooms-link")
            assert f"Директор не принял игру {game}" in shown and "t_ns" in shown, shown
        finally:
            for ctx in browser.contexts:  # the rooms page's and the tablet's
                ctx.close()

        # Room 1 plays on (its link comes back after the hostile client took it) and its
        # battle reaches the bracket; what it sends now is applied, the refusal is gone.
        hosts[0].go.set()
        wait_for(lambda: bracket()[battle]["winner"], "room 1's second battle")
        assert not rooms[0].status()["director_refused"]
    finally:
        stop.set()
        for th in threads:
            th.join(15)
    # A host may have begun its room's next battle as the test stopped: its links send on
    # until the director holds every event, then the boxes stop.
    for r in rooms:
        wait_for(lambda r=r: r.status()["unacknowledged"] == 0, f"{r.data.name} drained")
    for b in boxes:
        b.stop()
    # Every game's events on the director exactly once, equal to each room's own log.
    dtab = Tables(db_path(ddata), "")
    try:
        for r in rooms:
            store = Store(db_path(r.data))
            rbox = json.loads((r.data / "rooms.json").read_text())["box"]
            for g, _b, _a, _s in outbox(r.data):
                want = [(e.seq, e.event.type) for e in store.log(g)]
                got = dtab.query("SELECT seq, type FROM rooms_applied WHERE box = ? AND "
                                 "game = ? ORDER BY seq", (rbox, g))
                assert got == want, (r.data.name, g)
            store.close()
    finally:
        dtab.close()
