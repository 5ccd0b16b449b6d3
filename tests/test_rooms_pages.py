"""The rooms pages over a real app, loop and SQLite file (no broker: the link stays down,
which is exactly what these pages must cope with): the room/director choice, join codes
and their QR code, the rooms page and the TV page, the file carry and its refusals."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from webui import rooms_pages

sys.path.insert(0, str(Path(__file__).resolve().parent))
from broker_kit import free_port  # noqa: E402
from webui_kit import make_kit  # noqa: E402


@pytest.fixture
def box(tmp_path: Path) -> Any:
    from rooms.wiring import Rooms

    kit = make_kit(tmp_path / "box")
    rooms = Rooms(tmp_path / "box", kit.store, kit.loop, kit.services.tournament)
    kit.services.rooms = rooms
    kit.app.register_blueprint(rooms_pages.bp)
    rooms.screens(kit.socketio)
    yield kit
    rooms.close()
    kit.close()


def host(kit: Any) -> Any:
    c = kit.app.test_client()
    assert c.post("/login", data={"pin": kit.services.settings.pin}).status_code == 302
    return c


def no_inline_script(html: str) -> None:
    for tag in re.findall(r"<script[^>]*>", html):
        assert "src=" in tag or 'type="application/json"' in tag, tag
    assert not re.search(r"\son[a-z]+=", html)  # no inline handlers either


def test_director_choice_join_codes_and_qr(box: Any, tmp_path: Path) -> None:
    anon = box.app.test_client()
    assert anon.get("/admin/rooms").status_code == 302
    assert anon.post("/admin/rooms/setup", json={"action": "add_room"}).status_code == 403
    c = host(box)
    page = c.get("/admin/rooms")
    assert page.status_code == 200
    no_inline_script(page.get_data(as_text=True))
    assert c.get("/rooms/status.json").get_json() == {"role": None}
    port = free_port()
    r = c.post("/admin/rooms/setup", json={"action": "director", "host": "127.0.0.1",
                                           "port": port,
                                           "passwd": str(tmp_path / "passwd")}).get_json()
    assert r == {"ok": True, "role": "director"}
    st = c.get("/rooms/status.json").get_json()
    assert st["role"] == "director" and st["connected"] is False  # no broker: link down
    assert st["broker"] == {"host": "127.0.0.1", "port": port}
    added = c.post("/admin/rooms/setup", json={"action": "add_room"}).get_json()
    assert added["ok"] and added["room"] == "room1"
    assert re.fullmatch(r"[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}", added["code"])
    assert added["qr"] == f"svoyak-join:1:127.0.0.1:{port}:room1:{added['code']}"
    assert "room1:" in (tmp_path / "passwd").read_text()  # hashed by mosquitto_passwd
    assert added["code"] not in (tmp_path / "passwd").read_text()
    qr = c.get("/admin/rooms/join/room1.svg")
    assert qr.status_code == 200 and qr.mimetype == "image/svg+xml"
    assert anon.get("/admin/rooms/join/room1.svg").status_code == 403
    assert c.get("/rooms/director.svg").status_code == 200
    assert [r["room"] for r in c.get("/rooms/status.json").get_json()["rooms"]] == ["room1"]
    a = c.get("/admin/rooms/assignment/room1.json")
    assert a.status_code == 200 and json.loads(a.data)["battle"] is None
    board = anon.get("/rooms/board")
    assert board.status_code == 200
    no_inline_script(board.get_data(as_text=True))
    # A result file that is not one, and one whose checksum does not match: refused.
    bad = c.post("/admin/rooms/import", data=b"not json", content_type="application/json")
    assert bad.status_code == 400 and bad.get_json()["refused"]["ru"]
    forged = {"v": 1, "box": "x", "game": 1, "battle": "s1b1", "room": "room1",
              "last_seq": 0, "summary": {}, "sha256": "0" * 64}
    r2 = c.post("/admin/rooms/import", json=forged)
    assert r2.status_code == 400
    assert "checksum" in r2.get_json()["refused"]["en"]
    assert "контрольная" in r2.get_json()["refused"]["ru"]


def test_room_choice_and_start_without_assignment(box: Any) -> None:
    c = host(box)
    port = free_port()
    bad = c.post("/admin/rooms/setup", json={"action": "join", "host": "127.0.0.1",
                                             "port": port, "room": "room2", "code": "0O1I"})
    assert bad.status_code == 400
    assert "восемь" in bad.get_json()["refused"]["ru"]
    r = c.post("/admin/rooms/setup", json={
        "action": "join", "qr": f"svoyak-join:1:127.0.0.1:{port}:room2:ABCD-EFGH"})
    assert r.get_json() == {"ok": True, "role": "room", "room": "room2"}
    st = c.get("/rooms/status.json").get_json()
    assert st["role"] == "room" and st["room"] == "room2" and st["connected"] is False
    assert st["assignment"] is None
    started = c.post("/rooms/start")
    assert started.status_code == 409
    assert started.get_json()["refused"]["code"] == "no_assignment"
    host_page = c.get("/host").get_data(as_text=True)
    assert 'id="rooms-link"' in host_page and "rooms-live.js" in host_page
    assert box.app.test_client().post("/rooms/start").status_code == 403


def test_restarting_the_director_link_leaves_no_loop_subscriber_behind(
        box: Any, tmp_path: Path) -> None:
    """An admin who changes the box's role restarts the link; with a tournament running,
    the link watches the tournament's corrections through the game loop. Each restart used
    to leave one more subscriber (0 → 1 → 2 → 3): the watch's unsubscribe was dropped."""
    box.loop.new_game("tournament", {"title": "Кубок"}).result(5)
    shell = box.services.tournament
    screens = shell.watchers()  # the web UI's, for the tournament's TV pages
    c = host(box)
    r = c.post("/admin/rooms/setup", json={"action": "director", "host": "127.0.0.1",
                                           "port": free_port(),
                                           "passwd": str(tmp_path / "passwd")}).get_json()
    assert r == {"ok": True, "role": "director"}
    rooms = box.services.rooms
    after_first = (box.loop.subscribers(), shell.watchers())
    assert after_first[1] == screens + 1  # the director link watches the corrections
    for _ in range(10):
        rooms.restart()
    assert (box.loop.subscribers(), shell.watchers()) == after_first
    rooms.close()
    assert shell.watchers() == screens  # the link's own watch, gone with it


def test_the_admin_rooms_page_is_pushed_the_directors_status(box: Any, tmp_path: Path) -> None:
    """The admin rooms page listens on a socket of its own role ("admin": a PIN login, no
    game frames) and is told the link's status as it changes, instead of asking every
    second; host tablets are not sent a director's status."""
    import time

    assert not box.client("admin").is_connected()  # no login, no socket
    c = host(box)
    r = c.post("/admin/rooms/setup", json={"action": "director", "host": "127.0.0.1",
                                           "port": free_port(),
                                           "passwd": str(tmp_path / "passwd")}).get_json()
    assert r["ok"]
    admin = box.host(role="admin")
    tablet = box.host()
    assert admin.is_connected() and admin.get_received() == []  # the page reads it itself
    tablet.get_received()
    assert c.post("/admin/rooms/setup", json={"action": "add_room"}).get_json()["ok"]

    def pushed() -> list[dict[str, Any]]:
        got = admin.get_received()
        assert all(m["name"] == "rooms_link" for m in got), got
        return [m["args"][0] for m in got]

    deadline, seen = time.monotonic() + 10, []
    while not any(st["rooms"] for st in seen):
        assert time.monotonic() < deadline, seen
        seen += pushed()
        time.sleep(0.05)
    st = seen[-1]
    assert st["role"] == "director" and [x["room"] for x in st["rooms"]] == ["room1"]
    assert "bracket" not in st  # the page shows rooms and refusals; the TV has the bracket
    assert not [m for m in tablet.get_received() if m["name"] == "rooms_link"]
    # A page that only listens may not act.
    out = admin.emit("command", {"type": "announce"}, callback=True)
    assert not out["ok"] and out["refused"]["code"] == "forbidden"
