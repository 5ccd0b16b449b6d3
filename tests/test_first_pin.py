"""A fresh box's club logs in without a keyboard: the first PIN, made by the box's set-up
tool at first boot, shows on the idle board served to the kiosk on the box itself
(loopback) until a host has logged in once, and never on a /board opened from anywhere
else (a phone on the Wi-Fi). A real server on loopback, the real set-up tool, the
kiosk's page in Debian's Chromium (docs/webui.md, "The first PIN")."""

from __future__ import annotations

import http.client
import importlib.util
import json
import re
import urllib.parse
from pathlib import Path
from typing import Any

from webui_kit import Server, make_kit

ROOT = Path(__file__).resolve().parent.parent
BOX_SETUP = ROOT / "provisioning/roles/hotspot/files/svoyak_box_setup.py"
# A phone on the box's Wi-Fi: any address but the box's own (127.0.0.1, ::1). Other
# loopback addresses reach a server on 127.0.0.1 from a different source address.
PHONE = "127.0.0.42"


def first_boot(tmp_path: Path) -> tuple[Path, str]:
    """The data directory as the box's first boot leaves it (svoyak-box-setup), and the
    first PIN it made."""
    spec = importlib.util.spec_from_file_location("svoyak_box_setup", BOX_SETUP)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    data = tmp_path / "data"
    template = tmp_path / "hotspot.nmconnection.in"
    template.write_text("[connection]\nid=svoyak-hotspot\n[wifi]\nmode=ap\n")
    assert tool.main(["--data", str(data), "--keyfile", str(tmp_path / "hotspot.nmconnection"),
                      "--template", str(template), "--user", "nobody-here",
                      "--nm-state", str(tmp_path / "NetworkManager.state")]) == 0
    pin = json.loads((data / "box.json").read_text())["host_pin"]
    assert re.fullmatch(r"\d{6}", pin)  # docs/webui.md: 6 digits on a new box
    return data, pin


def get(port: int, path: str, source: str = "127.0.0.1", **headers: str) -> tuple[int, str,
                                                                                   dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10,
                                      source_address=(source, 0))
    try:
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        return r.status, r.read().decode(), dict(r.getheaders())
    finally:
        conn.close()


def login(port: int, pin: str, source: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10,
                                      source_address=(source, 0))
    try:
        conn.request("POST", "/login", body=urllib.parse.urlencode({"pin": pin}),
                     headers={"Content-Type": "application/x-www-form-urlencoded"})
        return conn.getresponse().status
    finally:
        conn.close()


def shown_pin(body: str) -> str | None:
    m = re.search(r'id="idle-pin"[^>]*>[^<]*<span class="pin-digits">(\d+)</span>', body)
    return m[1] if m else None


def test_first_pin_on_the_kiosk_only_until_the_host_logs_in(browser: Any,
                                                           tmp_path: Path) -> None:
    data, pin = first_boot(tmp_path)
    server = Server(data).start()
    try:
        status, body, headers = get(server.port, "/board")
        assert status == 200 and shown_pin(body) == pin  # the kiosk: http://localhost/board
        assert headers.get("Cache-Control") == "no-store"
        assert server.pin == pin  # the app took the set-up tool's PIN
        status, phone, _ = get(server.port, "/board", source=PHONE)
        assert status == 200 and 'id="idle-name"' in phone
        assert pin not in phone and 'id="idle-pin"' not in phone  # never to the Wi-Fi
        # Not even when the phone names the box "localhost".
        assert pin not in get(server.port, "/board", source=PHONE, Host="localhost")[1]

        tv = browser.new_page(viewport={"width": 1280, "height": 720})
        tv.goto(f"{server.base}/board")
        shown = tv.locator("#idle-pin")
        shown.wait_for(state="visible")
        assert pin in shown.inner_text()
        # The host logs in from the tablet (on the Wi-Fi): the TV drops the PIN
        # without a reload.
        assert login(server.port, pin, PHONE) == 302
        shown.wait_for(state="detached", timeout=10_000)
        assert tv.locator("#idle-name").is_visible()
        tv.close()
        assert shown_pin(get(server.port, "/board")[1]) is None
        server.stop()
        server.start()  # and after a restart (the flag is in settings.json)
        assert shown_pin(get(server.port, "/board")[1]) is None
    finally:
        server.stop()


def test_a_pin_set_on_the_admin_page_never_shows_on_the_tv(tmp_path: Path) -> None:
    data, pin = first_boot(tmp_path)
    kit = make_kit(data)
    try:
        board = kit.app.test_client()
        assert shown_pin(board.get("/board").get_data(as_text=True)) == pin
        phone = kit.app.test_client()
        body = phone.get("/board", environ_base={"REMOTE_ADDR": "10.42.0.23"}).get_data(
            as_text=True)
        assert pin not in body
        host = kit.app.test_client()
        # A login from the box itself counts too (the TV's own keyboard, a technician).
        host.post("/login", data={"pin": pin})
        assert shown_pin(board.get("/board").get_data(as_text=True)) is None
        kit.services.settings.update({"pin_on_board": True})  # as if still unseen
        assert host.post("/admin/pin", data={"pin": "24681357"}).status_code == 200
        assert 'id="idle-pin"' not in board.get("/board").get_data(as_text=True)
    finally:
        kit.close()
