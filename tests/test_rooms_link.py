"""The rooms link against a real Mosquitto on loopback, configured by the provisioning
role `broker` (tests/broker_kit.py): assignments, exactly-once events and results,
republishing after a lost link, file carry, and the broker's refusals."""

from __future__ import annotations

import json
import pwd
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from appliance.packages import jsonform
from appliance.runtime.loop import GameLoop
from appliance.runtime.store import Store, db_path
from appliance.runtime.tournament import TournamentShell
from rooms import config, messages, topics
from rooms.director import Director
from rooms.link import Broker
from rooms.room import RoomBox
from svoyak.cli import main as svoyak

sys.path.insert(0, str(Path(__file__).resolve().parent))
import broker_kit  # noqa: E402
from tournament_kit import package  # noqa: E402

PASSWORDS = {"director": "director-secret", "room1": "AAAA-BBBB", "room2": "CCCC-DDDD"}
# Nine entries of nine teams: a bracket of 9, the three 1/3 finals and the final.
ENTRIES = [{"name": f"Игрок {i}", "team": f"Команда {i}"} for i in range(1, 10)]


@pytest.fixture(scope="module")
def broker() -> Any:
    tmp = broker_kit.broker_dir()
    port = broker_kit.free_port()
    conf = broker_kit.render(tmp, port)
    for user, pw in PASSWORDS.items():
        broker_kit.add_user(broker_kit.passwd_file(tmp), user, pw)
    b = broker_kit.Broker(conf, port).start()
    yield b
    b.stop()
    shutil.rmtree(tmp, ignore_errors=True)


def creds(b: Any, user: str, password: str | None = None) -> Broker:
    return Broker("127.0.0.1", b.port, user, password or PASSWORDS[user])


def wait(cond: Any, timeout_s: float = 15.0, what: str = "") -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what or cond}")


class Room:
    def __init__(self, tmp: Path, name: str, b: Any, box: str):
        self.store = Store(db_path(tmp / name))
        self.loop = GameLoop(self.store).start()
        self.box = RoomBox(room=name, box=box, broker=creds(b, name), store=self.store,
                           loop=self.loop).start()

    def close(self) -> None:
        self.box.close()
        self.loop.stop()
        self.store.close()


class DirectorBox:
    """The director's box in this process: its log, game loop and tournament shell (as
    `svoyak serve` builds them), a real tournament of `entries` drawn with `seed`, and the
    rooms link over them. Opened again over the same directory, it resumes the same
    tournament."""

    def __init__(self, tmp: Path, b: Any, seed: int = 7, entries: list[Any] = ENTRIES,
                 connect: bool = True):
        self.data = tmp / "director"
        self.store = Store(db_path(self.data))
        self.loop = GameLoop(self.store).start()
        self.shell = TournamentShell(self.loop)
        if self.shell.game is None:
            self.shell.create({"title": "Кубок залов"})
            self.shell.submit({"type": "import_entries", "entries": entries})
            self.shell.submit({"type": "draw", "seed": seed})
        self.link = Director(broker=creds(b, "director") if connect else None,
                             tournament=self.shell, package=package(40, 5))

    @property
    def state(self) -> Any:
        return self.shell.state

    def winner(self, battle: str) -> str | None:
        """The name of a battle's winner, once its result is in the tournament."""
        b = self.state.battle(battle)
        return None if b is None or b.result is None else self.state.name(b.result.winner)

    def seat(self, battle: str, k: int) -> str:
        return self.state.name(self.state.battle(battle).present[k])

    def with_room(self, tmp: Path, b: Any, box: str, room: str = "room1") -> Room:
        """The link started with one room, and that room's box."""
        self.link.add_room(room)
        self.link.start()
        return Room(tmp, room, b, box)

    def close(self) -> None:
        self.link.close()
        self.shell.close()
        self.loop.stop()
        self.store.close()

    def as_configured(self, b: Any, tmp: Path) -> None:
        """DATA/rooms.json as `svoyak rooms director` writes it, naming this box's package
        (a file), for the `svoyak rooms` commands."""
        pkg = tmp / "package.json"
        pkg.write_text(json.dumps(jsonform.to_dict(package(40, 5)), ensure_ascii=False))
        config.make_director(self.data, "127.0.0.1", b.port, tmp / "passwd-cli", str(pkg))


def cli(capsys: Any, *args: str) -> tuple[int, Any]:
    """`svoyak rooms ...`: its exit status and the JSON of its last line (or stderr)."""
    capsys.readouterr()
    rc = svoyak(["rooms", *args])
    out = capsys.readouterr()
    lines = out.out.strip().splitlines()
    return rc, json.loads(lines[-1]) if rc == 0 and lines else out.err


def play(loop: GameLoop, game: int, winner_seat: int) -> None:
    """A whole battle through the loop: `winner_seat` takes every question."""
    def ok(cmd: dict[str, Any]) -> bool:
        return loop.submit(cmd, game).result(5).refused is None

    for _ in range(200):
        _, state = loop.snapshot(game)
        if state.phase == "finished":
            break
        if state.phase == "ready":
            assert ok({"type": "announce"})
        elif state.phase == "open":
            assert ok({"type": "press", "player": winner_seat})
            wait(lambda: loop.snapshot(game)[1].phase == "answering", what="the answerer")
            assert ok({"type": "judge", "verdict": "right"})
        elif state.phase == "closed":
            assert ok({"type": "next"})
    assert ok({"type": "next"}) or loop.snapshot(game)[1].phase == "finished"
    loop.end_game(game).result(5)


def test_battles_flow_through_the_broker_exactly_once(broker: Any, tmp_path: Path,
                                                     capsys: Any) -> None:
    box = DirectorBox(tmp_path, broker)
    director = box.link
    director.add_room("room1")
    director.add_room("room2")
    director.start()
    rooms = [Room(tmp_path, "room1", broker, "boxA"), Room(tmp_path, "room2", broker, "boxB")]
    closed = False
    try:
        played: list[str] = []
        for _ in range(4):  # 3 battles of the 1/3 final, then the final
            busy = [r for r in rooms if r.box.assignment() and r.box.assignment()["battle"]
                    not in played]
            if not busy:
                busy = wait(lambda: [r for r in rooms if r.box.assignment()
                                     and r.box.assignment()["battle"] not in played],
                            what="an assignment")
            r = busy[0]
            a = r.box.assignment()
            game = r.box.start_battle()
            assert r.box.start_battle() == game  # starting twice: the same game
            play(r.loop, game, winner_seat=len(played) % 3)
            played.append(a["battle"])
            wait(lambda b=a["battle"]: box.winner(b), what="the result")
            b = box.state.battle(a["battle"])
            assert b.room == r.box.room  # the tournament's own events name where
            assert b.result.source.to_json() == {"box": r.box.box, "game": game,
                                                 "room": r.box.room}
        final = box.state.final
        assert final is not None and final.result is not None and box.state.finished
        # Every battle's events exactly once, equal to the room's own log.
        for r in rooms:
            for g in r.box.games():
                wait(lambda r=r, g=g: r.box.games()[[x["game"] for x in r.box.games()]
                                                    .index(g["game"])]["result_acked"],
                     what="the result's acknowledgement")
                got = director.db.query("SELECT seq, type FROM rooms_applied WHERE box = ? "
                                        "AND game = ? ORDER BY seq", (r.box.box, g["game"]))
                assert got == [(e.seq, e.event.type) for e in r.store.log(g["game"])]
        assert len(director.db.query("SELECT * FROM rooms_results")) == 4
        assert len(director._battles) <= len(rooms)  # no battle state kept once played
        # A republish of everything (the room forgets its acknowledgements) changes nothing.
        before = director.status()["bracket"]
        r = rooms[0]
        with r.box.db.write() as c:
            c.execute("UPDATE rooms_outbox SET acked = 0, result_acked = 0")
        r.box._sent.clear()
        r.box._kick.set()
        wait(lambda: all(g["result_acked"] for g in r.box.games()), what="re-acknowledgement")
        assert director.duplicates > 0
        assert director.status()["bracket"] == before
        assert len(director.db.query("SELECT * FROM rooms_results")) == 4
        # The director's log replays to the same bracket.
        assert director.replay() == director.t.view()
        assert director.replay()["podium"] == before["podium"]
        assert len(before["podium"]) == 3
        # `svoyak rooms` on the finished tournament, the box no longer serving: its
        # status is the real bracket, and a genuine result file is taken (once only).
        carried = json.loads(json.dumps(rooms[0].box.export_result(
            rooms[0].box.games()[0]["game"])))
        for r in rooms:  # first: nothing of theirs waits in the director's broker session
            r.close()
        rooms = []
        box.close()
        closed = True
        box.as_configured(broker, tmp_path)
        rc, st = cli(capsys, "status", "--data", str(box.data))
        assert rc == 0, st
        assert st["bracket"] == before and len(st["bracket"]["battles"]) == 4
        assert all(b["status"] == "done" for b in st["bracket"]["battles"])
        assert [r["room"] for r in st["rooms"]] == ["room1", "room2"]
        rc, out = cli(capsys, "import-result", "--data", str(box.data),
                      str(_file(tmp_path, carried)))
        assert (rc, out) == (0, {"applied": False}), out  # applied over the link already
    finally:
        for r in rooms:
            r.close()
        if not closed:
            box.close()


def test_a_battle_its_room_ends_early_reaches_the_director_stopped(
        broker: Any, tmp_path: Path) -> None:
    """The room's host ends the battle before the rules give a winner: the result goes over
    the link as always and the tournament records the battle as stopped (with the scores
    and the room's source), acknowledged to the room; the director then awards it to the
    leader, and the winner goes on."""
    box = DirectorBox(tmp_path, broker, seed=2)
    director = box.link
    room = box.with_room(tmp_path, broker, "boxS")
    try:
        a = wait(room.box.assignment, what="the assignment")
        battle = a["battle"]
        game = room.box.start_battle()
        loop = room.loop
        for cmd in ({"type": "announce"}, {"type": "press", "player": 1}):
            assert loop.submit(cmd, game).result(5).refused is None
        wait(lambda: loop.snapshot(game)[1].phase == "answering", what="the answerer")
        assert loop.submit({"type": "judge", "verdict": "right"}, game).result(5).refused is None
        loop.end_game(game).result(5)  # ended early: no winner by the rules
        b = wait(lambda: (x := box.state.battle(battle)) and x.status == "stopped" and x,
                 what="the stopped battle on the director")
        assert b.stopped is not None and b.stopped[1] > 0 and max(b.stopped) == b.stopped[1]
        stopped = [e for e in box.store.events(box.shell.game) if e.type == "battle_stopped"]
        assert [e.data["source"] for e in stopped] == [
            {"box": "boxS", "game": game, "room": "room1"}]
        wait(lambda: room.box.games()[0]["result_acked"], what="the acknowledgement")
        assert not [r for r in director.refusals if r["room"] == "room1"], director.refusals
        shown = next(x for x in director.status()["bracket"]["battles"] if x["id"] == battle)
        assert shown["status"] == "stopped" and shown["room"] == "room1"
        # The director decides: the leader wins, and goes on in the bracket.
        box.shell.submit({"type": "award_leader", "battle": battle, "reason": "свет"})
        assert box.winner(battle) == box.seat(battle, 1)
        wait(lambda: (x := room.box.assignment()) and x["battle"] != battle,
             what="the room's next battle")
    finally:
        room.close()
        box.close()


def _file(tmp: Path, obj: Any) -> Path:
    path = tmp / "result.json"
    path.write_text(json.dumps(obj, ensure_ascii=False), "utf-8")
    return path


def test_room_catches_up_after_the_link_was_down(broker: Any, tmp_path: Path) -> None:
    box = DirectorBox(tmp_path, broker, seed=3)
    director = box.link
    room = box.with_room(tmp_path, broker, "boxC")
    try:
        wait(room.box.assignment, what="the assignment")
        game = room.box.start_battle()
        room.loop.submit({"type": "announce"}, game).result(5)
        wait(lambda: director.live.get("room1", {}).get("phase") == "open", what="live view")
        broker.kill()
        wait(lambda: not room.box.link.connected, what="the link to drop")
        assert room.box.status()["connected"] is False
        play(room.loop, game, winner_seat=1)  # the battle goes on without the link
        assert room.box.status()["unacknowledged"] > 0
        broker.start()
        battle = room.box.assignment()["battle"]
        wait(lambda: box.winner(battle) is not None, timeout_s=30, what="the catch-up")
        got = director.db.query("SELECT seq FROM rooms_applied WHERE box = 'boxC' ORDER BY seq")
        assert [s for (s,) in got] == [e.seq for e in room.store.log(game)]
        assert box.winner(battle) == box.seat(battle, 1)
    finally:
        room.close()
        box.close()


def test_result_carried_by_file(broker: Any, tmp_path: Path, capsys: Any) -> None:
    """No network: the room's result goes by USB stick to the director, which is not
    serving, and `svoyak rooms import-result` applies it to the real tournament."""
    online = DirectorBox(tmp_path, broker, seed=5)
    online.link.add_room("room2")
    online.link.start()
    room = Room(tmp_path, "room2", broker, "boxD")
    try:
        wait(room.box.assignment, what="the assignment")
        room.box.link.stop()  # from now on: no network at all
        game = room.box.start_battle()
        play(room.loop, game, winner_seat=2)
        online.close()
        online.as_configured(broker, tmp_path)
        carried = json.loads(json.dumps(room.box.export_result(game)))
        battle = carried["battle"]
        tampered = json.loads(json.dumps(carried))
        tampered["summary"]["scores"][0] += 10
        rc, err = cli(capsys, "import-result", "--data", str(online.data),
                      str(_file(tmp_path, tampered)))
        assert rc == 2 and "checksum" in err and "контрольная" in err
        rc, out = cli(capsys, "import-result", "--data", str(online.data),
                      str(_file(tmp_path, carried)))
        assert (rc, out) == (0, {"applied": True}), out
        rc, out = cli(capsys, "import-result", "--data", str(online.data),
                      str(_file(tmp_path, carried)))
        assert (rc, out) == (0, {"applied": False})  # once only
        rc, st = cli(capsys, "status", "--data", str(online.data))
        shown = next(b for b in st["bracket"]["battles"] if b["id"] == battle)
        assert shown["status"] == "done" and shown["winner"] == shown["players"][2]
        assert shown["source"] == {"box": "boxD", "game": game, "room": "room2"}
        offline = DirectorBox(tmp_path, broker, connect=False)
        try:
            assert offline.winner(battle) == offline.seat(battle, 2)
            assert [s for (s,) in offline.link.db.query(
                "SELECT seq FROM rooms_applied ORDER BY seq")] == [
                e.seq for e in room.store.log(game)]
        finally:
            offline.close()
    finally:
        room.loop.stop()
        room.box.db.close()
        room.store.close()


def _client(b: Any, user: str, password: str) -> tuple[mqtt.Client, dict[str, Any]]:
    seen: dict[str, Any] = {"connect": None, "puback": {}, "suback": None, "messages": []}
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=user, protocol=mqtt.MQTTv5)
    c.username_pw_set(user, password)
    c.on_connect = lambda *a: seen.__setitem__("connect", a[3])
    c.on_publish = lambda _c, _u, mid, rc, _p: seen["puback"].__setitem__(mid, rc)
    c.on_subscribe = lambda _c, _u, _mid, rcs, _p: seen.__setitem__("suback", rcs)
    c.on_message = lambda _c, _u, m: seen["messages"].append(m.topic)
    c.connect("127.0.0.1", b.port, keepalive=5)
    c.loop_start()
    wait(lambda: seen["connect"] is not None, what="CONNACK")
    return c, seen


def test_broker_refuses_wrong_credentials_and_foreign_topics(broker: Any) -> None:
    bad, seen = _client(broker, "room1", "WRONG-CODE")
    try:
        assert seen["connect"].is_failure
        assert "not authorized" in str(seen["connect"]).lower() or "bad user" in str(
            seen["connect"]).lower()
    finally:
        bad.loop_stop()
    anon = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    got: list[Any] = []
    anon.on_connect = lambda *a: got.append(a[3])
    anon.connect("127.0.0.1", broker.port)
    anon.loop_start()
    try:
        wait(lambda: got, what="CONNACK")
        assert got[0].is_failure
    finally:
        anon.loop_stop()
    spy, spied = _client(broker, "director", PASSWORDS["director"])
    spy.subscribe(topics.UP_ALL, qos=1)
    room1, seen1 = _client(broker, "room1", PASSWORDS["room1"])
    try:
        assert not seen1["connect"].is_failure
        time.sleep(0.3)
        own = room1.publish(topics.up("room1", topics.STATUS), b'{"v":1}', qos=1)
        foreign = room1.publish(topics.up("room2", topics.EVENTS), b'{"v":1}', qos=1)
        down = room1.publish(topics.down("room1", topics.ASSIGNMENT), b'{"v":1}', qos=1)
        wait(lambda: len(seen1["puback"]) == 3, what="PUBACKs")
        assert not seen1["puback"][own.mid].is_failure
        assert seen1["puback"][foreign.mid].is_failure  # «Not authorized»
        assert seen1["puback"][down.mid].is_failure  # only the director writes "down"
        # Mosquitto 2.0 grants the subscription but never delivers what the ACL denies:
        # room1 does not get room2's (retained) assignment, but gets its own.
        for room in ("room1", "room2"):
            spy.publish(topics.down(room, "probe"), room.encode(), qos=1,
                        retain=True).wait_for_publish(5)
        room1.subscribe(topics.down("room2", "probe"), qos=1)
        room1.subscribe(topics.down("room1", "probe"), qos=1)
        wait(lambda: topics.down("room1", "probe") in seen1["messages"], what="own retained")
        time.sleep(0.3)
        assert topics.down("room2", "probe") not in seen1["messages"]
        for room in ("room1", "room2"):
            spy.publish(topics.down(room, "probe"), b"", qos=1, retain=True).wait_for_publish(5)
        assert topics.up("room2", topics.EVENTS) not in spied["messages"]
        assert topics.up("room1", topics.STATUS) in spied["messages"]
    finally:
        for c in (room1, spy):
            c.disconnect()
            c.loop_stop()


def test_broker_role_listens_on_the_given_address_only(broker: Any) -> None:
    text = broker.conf.read_text()
    listeners = [ln for ln in text.splitlines() if ln.startswith("listener")]
    assert listeners == [f"listener {broker.port} 127.0.0.1"]
    assert "allow_anonymous false" in text and "use_username_as_clientid true" in text


def test_small_messages_go_out_at_once(broker: Any) -> None:
    """Nagle's algorithm off on both ends of a link: a room's next events would otherwise
    wait for the acknowledgement of the last ones' bytes (20 ms at the median between a
    verdict and the director's TV in `bench/rooms.py`, on an idle machine)."""
    import socket

    from rooms.link import Link

    assert "set_tcp_nodelay true" in broker.conf.read_text().splitlines()
    link = Link(creds(broker, "room2"), subscriptions=[], on_message=lambda *a: None).start()
    try:
        assert link.wait_connected(10)
        sock = link.client.socket()
        assert sock is not None
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        link.stop()


def test_room_box_with_a_wrong_code_says_so(broker: Any, tmp_path: Path) -> None:
    store = Store(db_path(tmp_path / "r"))
    loop = GameLoop(store).start()
    box = RoomBox(room="room1", box="boxW", broker=creds(broker, "room1", "WRONG-CODE"),
                  store=store, loop=loop).start()
    try:
        st = wait(lambda: box.status()["refused"] and box.status(), what="the refusal")
        assert st["connected"] is False
        assert "not authorized" in st["refused"].lower() or "bad user" in st["refused"].lower()
    finally:
        box.close()
        loop.stop()
        store.close()


def test_broker_template_can_bind_to_an_interface(tmp_path: Path) -> None:
    """On a venue network the box learns its address by DHCP after boot, so the role can
    bind the listener to the interface instead: here `lo`, reachable on 127.0.0.1."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(
        broker_kit.ROLES / "broker" / "templates"), undefined=jinja2.StrictUndefined)
    port = broker_kit.free_port()
    text = env.get_template("mosquitto.conf.j2").render(
        ansible_managed="test", broker_pid_file="", broker_passwd_copy="/nonexistent",
        broker_acl="/nonexistent", broker_port=port, broker_interface="lo",
        broker_address="ignored", broker_persistence_dir="/nonexistent/",
        broker_autosave_s=30, broker_max_queued=10, broker_log_dest="stderr")
    lines = text.splitlines()
    assert f"listener {port}" in lines and "bind_interface lo" in lines
    # The same listener lines with anonymous access, to run it here without the files.
    conf = tmp_path / "bind.conf"
    conf.write_text(f"listener {port}\nbind_interface lo\nallow_anonymous true\n")
    b = broker_kit.Broker(conf, port).start()
    try:
        c = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        got: list[Any] = []
        c.on_connect = lambda *a: got.append(a[3])
        c.connect("127.0.0.1", port)
        c.loop_start()
        wait(lambda: got, what="CONNACK")
        assert not got[0].is_failure
        c.disconnect()
        c.loop_stop()
    finally:
        b.stop()


def test_a_battle_replayed_by_the_director_leaves_its_room(broker: Any, tmp_path: Path) -> None:
    """The tournament engine behind the link: the director replays the final while a room
    plays it; the room gets a new assignment, the old game's later messages are stale
    (acknowledged, never applied), and the new game's result finishes the tournament."""
    entries = [{"name": n, "team": f"T{i}"} for i, n in enumerate(("Анна", "Борис", "Вера"))]
    box = DirectorBox(tmp_path, broker, seed=4, entries=entries)
    director = box.link
    room = box.with_room(tmp_path, broker, "boxR")
    try:
        a = wait(room.box.assignment, what="the assignment")
        assert (a["battle"], a["id"]) == ("F", "F#1") and len(a["setup"]["themes"]) == 12
        old = room.box.start_battle()
        room.loop.submit({"type": "announce"}, old).result(5)
        wait(lambda: director.live.get("room1", {}).get("phase") == "open", what="live")
        # The director replays the final (a broken button, say).
        box.shell.replay("F")
        a2 = wait(lambda: (x := room.box.assignment()) and x["id"] == "F#2" and x,
                  what="the new assignment")
        assert {th["name"] for th in a2["setup"]["themes"]}.isdisjoint(
            th["name"] for th in a["setup"]["themes"])  # the first themes count as played
        applied_old = director.db.query(
            "SELECT count(*) FROM rooms_applied WHERE game = ?", (old,))[0][0]
        play(room.loop, old, winner_seat=2)  # the old game goes on: its messages are stale
        wait(lambda: [g for g in room.box.games() if g["game"] == old][0]["result_acked"],
             what="the old game acknowledged as stale")
        assert director.db.query("SELECT count(*) FROM rooms_applied WHERE game = ?",
                                 (old,))[0][0] == applied_old
        new = room.box.start_battle()
        assert new != old
        play(room.loop, new, winner_seat=1)
        view = wait(lambda: director.t.view()["podium"] and director.t.view(),
                    what="the podium")
        final = view["battles"][-1]
        assert final["winner"] == final["players"][1]
        assert director.replay() == view
    finally:
        room.close()
        box.close()


def test_a_room_joined_while_the_broker_runs_gets_in_after_the_reload(
        broker: Any, tmp_path: Path) -> None:
    """The director's admin adds a room's code to the password file in its locked-down data
    directory; the broker, which cannot read it there, gets it through its reload (the
    role's drop-in copies the file as root first, as svoyak-broker-reload.path asks)."""
    passwd = broker_kit.passwd_file(broker.conf.parent)
    data = passwd.parent.parent
    assert stat.S_IMODE(data.stat().st_mode) == 0o750 and data.stat().st_gid == 0
    broker_kit.add_user(passwd, "room7", "GGGG-HHHH")
    early, seen = _client(broker, "room7", "GGGG-HHHH")
    early.loop_stop()
    assert seen["connect"].is_failure  # not reloaded yet
    broker.reload()
    late, seen = _client(broker, "room7", "GGGG-HHHH")
    try:
        assert not seen["connect"].is_failure
    finally:
        late.disconnect()
        late.loop_stop()
    # The copy is the broker's own; the service user cannot point the root-side copy at a
    # file it may not read (a symlink planted in its directory is refused, the copy kept).
    copy = broker.conf.parent / "run" / "svoyak.passwd"
    st = copy.stat()
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert st.st_uid == pwd.getpwnam("mosquitto").pw_uid
    secret = tmp_path / "secret"
    secret.write_text("root:not-for-the-broker\n")
    saved = passwd.read_bytes()
    passwd.unlink()
    passwd.symlink_to(secret)
    try:
        tool = broker_kit.ROLES / "broker" / "files" / "svoyak-broker-passwd"
        r = subprocess.run([str(tool), str(passwd), str(copy)], capture_output=True, text=True)
        assert r.returncode == 2 and "refused" in r.stderr
        assert b"not-for-the-broker" not in copy.read_bytes()
    finally:
        passwd.unlink()
        passwd.write_bytes(saved)


def test_a_second_box_with_the_same_code_does_not_fight_for_the_link(broker: Any) -> None:
    """Mosquitto gives a client id to the newest connection (`use_username_as_clientid`: a
    room's code is its client id), closes the older one without saying why, and cannot be
    told to refuse the newcomer instead. So the link gives way: when its connections keep
    ending right after they were made, it stays off and says so, and the other client keeps
    the connection, instead of the two putting each other off for ever."""
    from rooms.link import FLAPS, Link

    first = Link(creds(broker, "room1"), subscriptions=[], on_message=lambda *a: None).start()
    assert first.wait_connected(10)
    second = Link(creds(broker, "room1"), subscriptions=[], on_message=lambda *a: None)
    try:
        second.start()
        wait(lambda: first.taken_over or second.taken_over, timeout_s=60,
             what="one link giving way")
        loser, winner = (first, second) if first.taken_over else (second, first)
        wait(lambda: winner.connected, what="the other keeping the connection")
        changes = winner.last_change
        time.sleep(6)  # several reconnect delays: nobody comes back to fight
        assert loser.taken_over and not loser.connected and not winner.taken_over
        assert winner.connected and winner.last_change == changes  # not put off again
        assert first.takeovers + second.takeovers <= 2 * FLAPS
        # The host asks to connect again (the other box is gone): it does.
        winner.stop()
        loser.reconnect()
        assert loser.wait_connected(10) and not loser.taken_over
    finally:
        first.stop()
        second.stop()


def test_director_refuses_a_second_box_under_a_rooms_code(broker: Any, tmp_path: Path) -> None:
    """The director takes a room's messages only from the box that first wrote with its
    code: another box id (a forged one, or a second box given the same code) is refused
    and shown, and its status marks the room's card."""
    box = DirectorBox(tmp_path, broker, seed=9, connect=False)
    director = box.link
    director.add_room("room1")
    battle = director.in_play("room1")
    assert battle is not None
    aid = director.t.assignment_id(battle)
    ev = {"seq": 1, "t_ns": 1, "type": "announced", "payload": {}}

    def run(box: str, game: int = 1) -> dict[str, Any]:
        return {"v": 1, "box": box, "game": game, "battle": battle, "assignment": aid,
                "events": [ev]}

    try:
        # The first box's broken event binds nothing: refused, nothing kept.
        assert director.apply_runs([("room1", run("boxA"))]) == 0
        assert [r["code"] for r in director.refusals] == ["unfoldable"]
        assert director.db.query("SELECT count(*) FROM rooms_applied") == [(0,)]
        assert director.db.query("SELECT box FROM rooms_rooms") == [(None,)]
        ok = {"seq": 1, "t_ns": 5, "type": "advanced", "payload": {"theme": 0, "number": 0}}
        assert director.apply_runs([("room1", {**run("boxA"), "events": [ok]})]) == 1
        assert director.db.query("SELECT box FROM rooms_rooms") == [("boxA",)]
        # Another box id now: refused (and the one after it in the same batch applies).
        ok2 = {**ok, "seq": 2, "t_ns": 6}
        assert director.apply_runs([("room1", {**run("boxB"), "events": [ok2]}),
                                    ("room1", {**run("boxA"), "events": [ok2]})]) == 1
        assert director.refusals[-1]["code"] == "forged_box"
        assert director.ack("room1")["acks"] == {"boxA": {"1": 2}}
        # A second game of the same assignment from the right box: refused too.
        assert director.apply_runs([("room1", {**run("boxA", 2), "events": [ok]})]) == 0
        assert director.refusals[-1]["code"] == "other_game"
        director._ingest([(topics.up("room1", topics.STATUS), messages.encode(
            {"v": 1, "room": "room1", "box": "boxB", "online": True}))])
        assert director.live["room1"]["intruder"] == "boxB"
        assert director.refusals[-1]["code"] == "forged_box"
        # A new code for the room (added again): the next box to write is the room's.
        director.rejoin("room1")
        assert director.db.query("SELECT box FROM rooms_rooms") == [(None,)]
        # The spare box given that code plays the room's battle as its own game 1; the
        # old box is now the stranger.
        assert director.apply_runs([("room1", {**run("boxC"), "events": [ok]})]) == 1
        assert director.db.query("SELECT box FROM rooms_rooms") == [("boxC",)]
        assert director.ack("room1")["acks"].get("boxC") == {"1": 1}
        assert director.apply_runs([("room1", {**run("boxA"), "events": [ok2]})]) == 0
        assert director.refusals[-1]["code"] == "forged_box"
    finally:
        box.close()
