"""A director box with its broker, and a room joining it with its code: a box provisioned as
a tournament director's (`svoyak_director`: Mosquitto), booted from a fresh card of its own;
admin → Rooms makes it the director (its Mosquitto must then read the rooms'
passwords from the box's own data directory, with the box's real permissions: the third
failure issue 22 found), and a room box inside the same VM — a second `svoyak serve` with a
data directory of its own, made a room by `svoyak rooms join` with the code the admin page
gave — joins over the box's own address and is online on the director's rooms page. A wrong
code is refused by the broker."""

from __future__ import annotations

import json
import time
from typing import Any

import requests
from report import record
from vm import Box, BoxError

BOOT_TIMEOUT = 900
SVOYAK = "/opt/svoyak/venv/bin/svoyak"
PYTHON = "/opt/svoyak/venv/bin/python"
ADDRESS = "10.42.0.1"  # the box's own address (its access point), where the broker listens
ROOM_DATA = "/run/svoyak-test-room"
ROOM_PORT = 8081
JOIN_S = 300  # the room's second server starting under TCG, then its link


def admin(box: Box) -> requests.Session:
    s = requests.Session()
    r = s.post(box.base_url() + "/login", data={"pin": box.pin()}, allow_redirects=False,
               timeout=60)
    assert r.status_code == 302, (r.status_code, r.text[:300])
    s.headers["Origin"] = box.base_url()
    return s


def setup(s: requests.Session, box: Box, **form: Any) -> dict[str, Any]:
    r = s.post(box.base_url() + "/admin/rooms/setup", json=form, timeout=120)
    out = dict(r.json())
    assert r.status_code == 200 and out.get("ok"), (r.status_code, out)
    return out


def wrong_code_refused(box: Box, room: str) -> str:
    """What the broker answers a client with the room's name and a made-up code (paho, in
    the box's own Python)."""
    script = f"""
import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
import threading
done, got = threading.Event(), []
c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id={room!r}, protocol=mqtt.MQTTv5)
c.username_pw_set({room!r}, "ZZZZ-ZZZZ")
c.on_connect = lambda _c, _u, _f, rc, _p: (got.append(str(rc)), done.set())
c.connect({ADDRESS!r}, 1883, keepalive=10)
c.loop_start()
done.wait(60)
c.loop_stop()
print(got[0] if got else "no answer")
"""
    return box.sh(f"{PYTHON} -", input=script, timeout=120).strip()


def test_a_director_box_runs_its_broker_and_a_room_joins_with_its_code(
        director_box: Box) -> None:
    box = director_box
    box.start()
    seconds, _ = box.wait_board(BOOT_TIMEOUT)
    record("box_rooms.director_board_http_s", round(seconds, 1))
    box.wait_for(f"ip -4 addr show | grep -q 'inet {ADDRESS}/'", 300, "the box's address")
    s = admin(box)
    t0 = time.monotonic()
    assert setup(s, box, action="director", host=ADDRESS, port=1883)["role"] == "director"
    added = setup(s, box, action="add_room")
    room, code = added["room"], added["code"]
    assert room == "room1"
    # The broker runs as its own user and has the room's password (its reload unit copies
    # the box's file when it changes): nothing in its log says it could not read it.
    box.wait_for("systemctl is-active mosquitto", 120, "the broker")
    # (started before the access point gave the box its address, it is started again until
    # it can listen there: how many times, for the record)
    record("box_rooms.broker_restarts", int(box.sh(
        "systemctl show -p NRestarts --value mosquitto").strip() or 0))
    box.wait_for(f"grep -q '^{room}:' /run/mosquitto/svoyak.passwd", 120,
                 "the room's password reaching the broker")
    log = box.sh("journalctl -b --no-pager -u mosquitto -u svoyak-broker-reload", check=False)
    assert "Permission denied" not in log, log

    # The room: a second server in the VM, joined with the code, on the box's address.
    box.sh(f"rm -rf {ROOM_DATA}; mkdir -p {ROOM_DATA} && {SVOYAK} rooms join --data "
           f"{ROOM_DATA} --director {ADDRESS}:1883 --room {room} --code {code}")
    box.sh(f"systemd-run --unit=svoyak-test-room --collect -E PYTHONUNBUFFERED=1 {SVOYAK} "
           f"serve --simulate --data {ROOM_DATA} --host 127.0.0.1 --port {ROOM_PORT}")
    room_box = json.loads(box.sh(f"cat {ROOM_DATA}/rooms.json"))["box"]

    def online() -> dict[str, Any] | None:
        st = s.get(box.base_url() + "/rooms/status.json", timeout=60).json()
        return next((r for r in st.get("rooms", []) if r.get("room") == room
                     and r.get("online") and r.get("box") == room_box), None)

    deadline = time.monotonic() + JOIN_S
    while (seen := online()) is None:
        if time.monotonic() > deadline:
            raise BoxError(f"{room} never came online on the director: " + box.sh(
                "systemctl status --no-pager svoyak-test-room; journalctl -b --no-pager -n 60 "
                "-u svoyak-test-room -u mosquitto", check=False))
        time.sleep(3)
    record("box_rooms.room_online_s", round(time.monotonic() - t0, 1))
    assert seen["box"] == room_box
    # The room box says it is linked, from its own status.
    st = json.loads(box.wait_for(
        f"{PYTHON} -c 'import urllib.request as u; print(u.urlopen("
        f"\"http://127.0.0.1:{ROOM_PORT}/rooms/status.json\").read().decode())'",
        120, "the room's own status"))
    assert st["role"] == "room" and st["connected"], st
    # Anyone else with the room's name but not its code is refused by the broker.
    answer = wrong_code_refused(box, room)
    record("box_rooms.wrong_code", answer)
    assert answer not in ("Success", "no answer"), answer
    box.sh("systemctl stop svoyak-test-room", check=False)
