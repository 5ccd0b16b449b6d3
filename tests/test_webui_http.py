"""HTTP side of the web UI: PIN login and its rate limit, pages, admin settings and PIN,
QR codes, the simulator's press hook, the package library and protocol export."""

from __future__ import annotations

import io
import json
import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from webui_kit import Kit, make_kit, views

from appliance.packages.library import Library
from webui import auth, i18n, qr

DEMO = Path(__file__).resolve().parent.parent / "appliance" / "data" / "demo-sport.json"


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    k = make_kit(tmp_path, library=Library(tmp_path))
    yield k
    k.close()


def login(kit: Kit, client=None, pin: str | None = None):  # type: ignore[no-untyped-def]
    client = client or kit.app.test_client()
    r = client.post("/login", data={"pin": kit.services.settings.pin if pin is None else pin})
    return client, r


# --- PIN --------------------------------------------------------------------------------------

def test_pin_is_created_on_first_start_and_kept(tmp_path: Path) -> None:
    from webui.settings import Settings

    first = Settings(tmp_path).pin
    assert first.isdigit() and len(first) == 6
    assert Settings(tmp_path).pin == first
    assert (tmp_path / "settings.json").stat().st_mode & 0o777 == 0o600


def test_host_page_needs_login(kit: Kit) -> None:
    c = kit.app.test_client()
    r = c.get("/host")
    assert r.status_code == 302 and "/login" in r.headers["Location"]
    assert c.get("/admin/").status_code == 302
    assert c.post("/admin/pin", data={"pin": "1234"}).status_code == 403
    c, r = login(kit, c)
    assert r.status_code == 302 and r.headers["Location"] == "/host"
    assert c.get("/host").status_code == 200


def test_login_redirect_stays_on_the_box(kit: Kit) -> None:
    c = kit.app.test_client()
    r = c.post("/login", data={"pin": kit.services.settings.pin, "next": "//evil/x"})
    assert r.headers["Location"] == "/host"


def test_wrong_pins_are_rate_limited(kit: Kit) -> None:
    c = kit.app.test_client()
    wrong = "0000" if kit.services.settings.pin != "0000" else "1111"
    codes = [login(kit, c, wrong)[1].status_code for _ in range(auth.FREE_TRIES)]
    assert codes == [403] * (auth.FREE_TRIES - 1) + [429]
    # Locked: even the right PIN is refused until the lock-out passes.
    r = login(kit, c)[1]
    assert r.status_code == 429
    assert "Подождите" in r.get_data(as_text=True)


def test_guard_lock_grows_and_expires() -> None:
    now = [0.0]
    g = auth.PinGuard(clock=lambda: now[0])
    for _ in range(auth.FREE_TRIES):
        ok, wait = g.check("a", "1", "2")
    assert not ok and wait == auth.FIRST_LOCK_S
    now[0] += wait + 0.1
    ok, wait = g.check("a", "1", "2")
    assert not ok and wait == 2 * auth.FIRST_LOCK_S
    assert g.check("b", "2", "2") == (True, 0.0)  # another client is not locked
    now[0] += wait + 0.1
    assert g.check("a", "2", "2") == (True, 0.0)


def test_global_budget_stops_guessing_from_many_addresses() -> None:
    g = auth.PinGuard(clock=lambda: 0.0)
    for i in range(auth.GLOBAL_FAILURES):
        g.check(f"10.0.0.{i}", "1", "2")
    ok, wait = g.check("10.0.1.1", "2", "2")
    assert not ok and wait > 0


# --- pages ------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/", "/board", "/play", "/login"])
def test_public_pages_render(kit: Kit, path: str) -> None:
    r = kit.app.test_client().get(path)
    assert r.status_code == 200
    assert 'lang="ru"' in r.get_data(as_text=True)


def test_language_switch(kit: Kit) -> None:
    c = kit.app.test_client()
    r = c.get("/lang/en?next=/board")
    assert r.headers["Location"] == "/board"
    body = c.get("/board").get_data(as_text=True)
    assert 'lang="en"' in body and "Wait" in body


def test_catalogues_have_the_same_keys() -> None:
    assert set(i18n.catalogue("ru")) == set(json.loads(
        (Path(i18n.__file__).parent / "translations" / "en.json").read_text()))


def test_pages_reference_no_outside_address(kit: Kit) -> None:
    c, _ = login(kit)
    for path in ("/", "/board", "/play", "/host", "/admin/"):
        body = c.get(path).get_data(as_text=True)
        for attr in ('src="http', "href=\"http", "src=\"//", "href=\"//", "url(http"):
            assert attr not in body, (path, attr)


# --- admin ------------------------------------------------------------------------------------

def test_admin_settings_and_pin_change(kit: Kit) -> None:
    c, _ = login(kit)
    board = kit.client("board")
    r = c.post("/admin/settings", data={"box_name": "Клуб", "ssid": "Svoyak-AB12",
                                        "password": "secret123", "language": "ru",
                                        "host_url": ""})
    assert r.status_code == 200
    s = kit.services.settings.get()
    assert s["box_name"] == "Клуб" and s["wifi"]["ssid"] == "Svoyak-AB12"
    r = c.post("/admin/settings", data={"volume": "0.3", "mute": "on"})
    assert kit.services.settings.get()["sound"] == {"volume": 0.3, "mute": True}
    assert c.post("/admin/pin", data={"pin": "12"}).status_code == 400
    assert c.post("/admin/pin", data={"pin": "654321"}).status_code == 200
    assert kit.services.settings.pin == "654321"
    assert login(kit, kit.app.test_client(), "654321")[1].status_code == 302
    # The board never receives the PIN.
    assert "654321" not in json.dumps(views(board))
    assert "654321" not in kit.app.test_client().get("/board").get_data(as_text=True)


def test_casual_buzzer_setting(kit: Kit) -> None:
    c, _ = login(kit)
    c.post("/admin/settings", data={"buzzer_form": "1", "casual_buzzer": "on"})
    assert kit.services.settings.get()["casual_buzzer"] is True
    c.post("/admin/settings", data={"buzzer_form": "1"})
    assert kit.services.settings.get()["casual_buzzer"] is False


# --- QR codes ---------------------------------------------------------------------------------

def test_wifi_payload_escapes_special_characters() -> None:
    assert qr.wifi_payload("Club;1", 'p"a:ss') == 'WIFI:T:WPA;S:Club\\;1;P:p\\"a\\:ss;;'
    assert qr.wifi_payload("Open", "") == "WIFI:T:nopass;S:Open;;"


def test_qr_codes(kit: Kit) -> None:
    c = kit.app.test_client()
    assert c.get("/qr/wifi.svg").status_code == 404  # no Wi-Fi configured yet
    kit.services.settings.update({"wifi": {"ssid": "Svoyak-AB12", "password": "pw"}})
    for path in ("/qr/wifi.svg", "/qr/host.svg"):
        r = c.get(path)
        assert r.status_code == 200 and r.mimetype == "image/svg+xml"
        ET.fromstring(r.data)  # well-formed SVG
    board = c.get("/board").get_data(as_text=True)
    assert "Svoyak-AB12" in board and "/qr/wifi.svg" in board
    kit.services.settings.update({"host_url": "http://svoyak.local/host"})
    assert "http://svoyak.local/host" in c.get("/board").get_data(as_text=True)


# --- simulator hook ---------------------------------------------------------------------------

def test_sim_press_hook(kit: Kit) -> None:
    kit.games.start("battle", ["A", "B", "C"], "demo:battle", {})
    host = kit.host()
    host.emit("command", {"type": "announce"}, callback=True)
    c = kit.app.test_client()
    assert c.post("/api/sim/press", json={"player": "x"}).status_code == 400
    r = c.post("/api/sim/press", json={"player": 2})
    assert r.status_code == 200 and r.get_json()["ok"]


def test_sim_press_hook_is_absent_without_simulator(tmp_path: Path) -> None:
    k = make_kit(tmp_path, simulate=False)
    try:
        assert k.app.test_client().post("/api/sim/press", json={"player": 0}).status_code == 404
    finally:
        k.close()


# --- package library and export ---------------------------------------------------------------

def test_package_upload_preview_play_delete(kit: Kit) -> None:
    c, _ = login(kit)
    r = c.post("/admin/packages", data={"file": (io.BytesIO(b"not a package"), "x.siq")},
               content_type="multipart/form-data")
    assert r.status_code == 400 and r.get_json()["ok"] is False
    assert kit.services.library.list() == []  # a failed import writes nothing
    r = c.post("/admin/packages", data={"file": (io.BytesIO(DEMO.read_bytes()), "sport.json")},
               content_type="multipart/form-data")
    assert r.status_code == 200, r.get_json()
    pid = r.get_json()["package"]["id"]
    assert any(p["id"] == str(pid) for p in kit.games.list_packages())
    preview = c.get(f"/admin/packages/{pid}").get_json()
    assert preview["rounds"][0]["themes"][0]["questions"][0]["price"] == 10
    assert str(pid) in c.get("/admin/").get_data(as_text=True)
    game = kit.games.start("battle", ["A", "B"], str(pid), {"stage": "qualification"})
    rules, state = kit.loop.snapshot(game)
    assert len(state.themes) == 4
    assert c.post(f"/admin/packages/{pid}/delete").get_json()["ok"]
    assert c.get(f"/admin/packages/{pid}").status_code == 404
    assert c.post(f"/admin/packages/{pid}/delete").status_code == 404


def test_media_route_404_for_unknown(kit: Kit) -> None:
    assert kit.app.test_client().get("/media/" + "0" * 64).status_code == 404


def test_protocol_export(kit: Kit) -> None:
    game = kit.games.start("battle", ["A", "B"], "demo:battle", {})
    kit.host().emit("command", {"type": "announce"}, callback=True)
    c, _ = login(kit)
    page = c.get("/admin/").get_data(as_text=True)
    assert f"/admin/export/{game}.json" in page
    # the printable protocol is offered beside the JSON, and the date reads as a date
    assert f'<a href="/protocol/{game}">Протокол для печати</a>' in page
    assert c.get(f"/protocol/{game}").status_code == 200
    stamp = re.search(r'<time datetime="([^"]+)">(\d\d\.\d\d\.\d{4} \d\d:\d\d)</time>', page)
    assert stamp is not None, page[page.index("Протоколы игр"):][:600]
    from datetime import datetime
    assert stamp.group(2) == datetime.fromisoformat(stamp.group(1)).astimezone().strftime(
        "%d.%m.%Y %H:%M")
    r = c.get(f"/admin/export/{game}.json")
    assert r.status_code == 200
    assert [e["type"] for e in r.get_json()["events"]][-1] == "announced"
    assert kit.app.test_client().get(f"/admin/export/{game}.json").status_code == 302


# --- the composition root ----------------------------------------------------------------------

def test_serve_wires_loop_buttons_and_web_ui(tmp_path: Path) -> None:
    """`svoyak serve`'s build: the demo battle starts, simulated presses take the GPIO
    adapter's path, the admin page lists the seats' buttons, the game survives a restart."""
    from svoyak.serve import build

    box = build(tmp_path, simulate=True, pins=None, demo=True)
    try:
        assert box.hardware is not None and box.hardware.simulated
        game = box.loop.current
        assert game is not None and box.loop.snapshot()[0].NAME == "battle"
        fc = box.app.test_client()
        fc.post("/login", data={"pin": box.services.settings.pin})
        host = box.socketio.test_client(box.app, flask_test_client=fc, auth={"role": "host"})
        assert host.emit("command", {"type": "announce"}, callback=True)["ok"]
        board = box.socketio.test_client(box.app, auth={"role": "board"})
        res = board.emit("press", {"player": 2}, callback=True)
        assert res["ok"] and "t_ns" in res  # went through gpio's Buttons.press
        deadline = time.monotonic() + 3
        while box.loop.snapshot()[1].phase != "answering" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert box.loop.snapshot()[1].phase == "answering"
        rules, state = box.loop.snapshot()
        assert [(r["player"], r["by"]) for r in rules.view(state, "host")["race"]] == [
            (2, "key")]
        page = fc.get("/admin/").get_data(as_text=True)
        assert 'id="seat-pins"' in page
    finally:
        box.close()
    again = build(tmp_path, simulate=True, pins=None, demo=True)
    try:
        assert again.loop.current == game  # resumed from the log, no second demo game
        assert again.loop.snapshot()[1].phase == "answering"
    finally:
        again.close()


def test_board_says_why_there_is_no_wifi(kit: Kit) -> None:
    """The box identity tool could not make a Wi-Fi password (so no access point came up):
    the TV's idle screen says so instead of showing an empty QR code."""
    c = kit.app.test_client()
    assert 'id="idle-wifi-off"' not in c.get("/board").get_data(as_text=True)
    kit.services.settings.update({"wifi": {"ssid": ""},
                                  "wifi_error": "the box's Wi-Fi identity could not be made"})
    body = c.get("/board").get_data(as_text=True)
    assert 'id="idle-wifi-off"' in body and "identity could not be made" in body
    assert 'id="idle-wifi"' not in body


def test_serve_without_gpio_shows_the_host_why_the_buttons_are_off(tmp_path: Path) -> None:
    """Without --simulate and without a usable GPIO chip (this machine), the box serves the
    screens, never hands out simulated buttons, and the host's view carries the fault that
    its banner shows (kind, reason, the wiring doc section)."""
    from svoyak.serve import build

    box = build(tmp_path, simulate=False, pins=None, demo=False)
    try:
        assert box.hardware is None and not box.hub.simulate
        fc = box.app.test_client()
        fc.post("/login", data={"pin": box.services.settings.pin})
        host = box.socketio.test_client(box.app, flask_test_client=fc, auth={"role": "host"})
        views = [m["args"][0] for m in host.get_received() if m["name"] == "view"]
        assert views, "no view for the host"
        fault = views[-1]["hardware"]["fault"]
        assert fault["kind"] == "gpio" and fault["reason"] and "wiring.md" in fault["check"]
        board = box.socketio.test_client(box.app, auth={"role": "board"})
        assert "hardware" not in [m["args"][0] for m in board.get_received()
                                  if m["name"] == "view"][-1]
    finally:
        box.close()


FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures" / "siq"


@pytest.mark.skipif(not (FIXTURES / "v4-media.siq").exists(), reason="shared fixtures missing")
def test_package_media_reach_the_screens(kit: Kit) -> None:
    """A SIQ package with pictures, uploaded through the admin page: its media are served by
    the box with their content type, and a screen's payload says which element plays them."""
    c, _ = login(kit)
    r = c.post("/admin/packages", data={"file": (io.BytesIO(
        (FIXTURES / "v4-media.siq").read_bytes()), "v4-media.siq")},
        content_type="multipart/form-data")
    assert r.status_code == 200, r.get_json()
    pid = r.get_json()["package"]["id"]
    package = kit.services.library.get(pid)
    digests = [i.value for rnd in package.rounds for t in rnd.themes for q in t.questions
               for i in q.content if i.is_media]
    assert digests
    for d in set(digests):
        m = c.get(f"/media/{d}")
        assert m.status_code == 200 and m.data
        assert m.mimetype == kit.services.library.media_type(d)
    # A TV game of that package: a question with media names their types in the payload.
    game = kit.games.start("tv", ["A", "B", "C"], str(pid), {})
    assert game == kit.loop.current
    state = kit.loop.snapshot()[1]
    cells = [(t, q) for t, theme in enumerate(state.board.rounds[0].cells) for q, cell in
             enumerate(theme) if any(i.is_media for i in cell.question.content)]
    if not cells:
        pytest.skip("no media question in the first round")
    host = kit.host()
    host.emit("command", {"type": "pick_chooser", "player": 0}, callback=True)
    t, q = cells[0]
    assert host.emit("command", {"type": "choose", "cell": f"{t}:{q}"}, callback=True)["ok"]
    board = kit.client("board")
    v = views(board)[0]
    media = v["view"]["question"]["media"]
    assert media and set(v["media_types"]) == set(media)
    assert all("/" in (v["media_types"][h] or "") for h in media)


def test_the_watchdog_health_check_needs_a_live_loop(tmp_path: Path) -> None:
    from svoyak.serve import _loop_answers, build

    box = build(tmp_path, simulate=True, pins=None, demo=True)
    try:
        assert _loop_answers(box.loop)
        assert box.loop.snapshot()[1].phase == "ready"  # the probe changed nothing
        assert box.store.count(box.loop.current) == 0  # and logged nothing
    finally:
        box.close()
    assert not _loop_answers(box.loop, 0.5)  # a stopped loop is not healthy


def test_serve_feeds_the_systemd_watchdog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    import os
    import socket

    from svoyak.serve import build

    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(5)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    monkeypatch.setenv("WATCHDOG_USEC", "200000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    box = build(tmp_path / "data", simulate=True, pins=None, demo=False)
    try:
        assert sock.recv(100) == b"WATCHDOG=1"
    finally:
        box.close()
        sock.close()


def test_venue_network_mode_is_asked_of_the_box_setup_tool(tmp_path: Path) -> None:
    """The admin page's network switch writes the same request file (the tool applies it,
    tests/test_provisioning.py); a bad venue Wi-Fi is refused and writes nothing."""
    k = make_kit(tmp_path, simulate=False)
    try:
        c, _ = login(k)
        assert 'id="network-form"' in c.get("/admin/").get_data(as_text=True)
        r = c.post("/admin/settings", data={"network": "venue-wifi", "venue_ssid": "",
                                            "venue_password": ""})
        assert r.status_code == 400 and not (tmp_path / "wifi-request.json").exists()
        r = c.post("/admin/settings", data={"network": "mesh"})
        assert r.status_code == 400 and not (tmp_path / "wifi-request.json").exists()
        r = c.post("/admin/settings", data={"network": "venue-wifi", "venue_ssid": "Bar",
                                            "venue_password": "bar password"})
        assert r.status_code == 200
        request = json.loads((tmp_path / "wifi-request.json").read_text())
        assert request == {"network": "venue-wifi", "ssid": "Bar", "password": "bar password"}
        c.post("/admin/settings", data={"network": "venue-ethernet"})
        assert json.loads((tmp_path / "wifi-request.json").read_text()) == {
            "network": "venue-ethernet"}
    finally:
        k.close()


def test_wifi_change_is_asked_of_the_box_setup_tool(tmp_path: Path) -> None:
    """On a real box the access point belongs to the set-up tool (root): the admin page
    writes a request beside the settings and shows the settings the tool wrote back."""
    k = make_kit(tmp_path, simulate=False)
    try:
        c, _ = login(k)
        r = c.post("/admin/settings", data={"box_name": "Svoyak", "ssid": "Club",
                                            "password": "short"})
        assert r.status_code == 400 and not (tmp_path / "wifi-request.json").exists()
        r = c.post("/admin/settings", data={"box_name": "Svoyak", "ssid": "Club",
                                            "password": "a long password"})
        assert r.status_code == 200
        request = json.loads((tmp_path / "wifi-request.json").read_text())
        assert request == {"ssid": "Club", "password": "a long password"}
        assert (tmp_path / "wifi-request.json").stat().st_mode & 0o777 == 0o600
        assert k.services.settings.get()["wifi"]["ssid"] == ""  # not applied yet
        # The tool applies it and rewrites settings.json: the idle screen follows.
        time.sleep(0.01)
        data = json.loads((tmp_path / "settings.json").read_text())
        data["wifi"] = {"ssid": "Club", "password": "a long password"}
        (tmp_path / "settings.json").write_text(json.dumps(data))
        assert "Club" in c.get("/board").get_data(as_text=True)
        # A later save keeps what the tool wrote.
        c.post("/admin/settings", data={"volume": "0.5"})
        assert json.loads((tmp_path / "settings.json").read_text())["wifi"]["ssid"] == "Club"
    finally:
        k.close()


def test_a_refused_wifi_change_reads_as_an_error_and_keeps_what_was_typed(tmp_path: Path) -> None:
    """A Wi-Fi name or password the access point cannot take: the page says so as an error
    (not a green «saved»), in the host's language, and the fields keep what was typed."""
    k = make_kit(tmp_path, simulate=False)
    try:
        c, _ = login(k)
        r = c.post("/admin/settings", data={"box_name": "Svoyak", "ssid": "Клуб Знатоки",
                                            "password": "short"})
        page = r.get_data(as_text=True)
        assert r.status_code == 400
        assert 'class="message failed"' in page and 'role="alert"' in page
        assert "от 8 до 63 символов" in page
        assert 'value="Клуб Знатоки"' in page and 'value="short"' in page
        ok = c.post("/admin/settings", data={"volume": "0.5"}).get_data(as_text=True)
        assert 'class="message"' in ok and 'class="message failed"' not in ok
        # The button test polls the buttons' live state.
        assert c.get("/admin/hardware.json").status_code == 200
    finally:
        k.close()
