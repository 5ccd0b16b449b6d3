"""A Wi-Fi full of strangers: each test is an attack that worked on the box before (issue
13), over the real app, a real game loop and a real SQLite file."""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from webui_kit import Kit, make_kit, views

from webui import app as webapp
from webui import auth, inbound

PLAYERS = ["Анна", "Борис", "Вера"]
INJECTION = "</script><script>window.pwned=1</script><!--"


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    k = make_kit(tmp_path)
    yield k
    k.close()


@pytest.fixture
def game(kit: Kit) -> int:
    return kit.games.start("battle", PLAYERS, "demo:battle", {"stage": "qualification"})


def client_at(kit: Kit, address: str) -> Any:
    c = kit.app.test_client()
    c.environ_base["REMOTE_ADDR"] = address
    return c


def login(c: Any, pin: str) -> Any:
    return c.post("/login", data={"pin": pin})


def wrong(kit: Kit) -> str:
    return "000000" if kit.services.settings.pin != "000000" else "111111"


# --- script injection ------------------------------------------------------------------------

def test_box_name_is_inert_on_every_page(kit: Kit) -> None:
    kit.services.settings.update({"box_name": INJECTION})
    c = client_at(kit, "127.0.0.1")
    assert login(c, kit.services.settings.pin).status_code == 302
    for path in ("/", "/board", "/play", "/host", "/login", "/admin/"):
        html = c.get(path).get_data(as_text=True)
        assert "<script>window.pwned" not in html, path
        # The name reaches the page's scripts as data, whole.
        block = re.search(r'<script id="svoyak-page" type="application/json">(.*?)</script>',
                          html, re.S)
        assert block is not None, path
        assert json.loads(block.group(1))["box"]["name"] == INJECTION
        # No inline script at all: the policy would refuse it anyway.
        assert not re.search(r"<script>", html), path


def test_pages_carry_security_headers(kit: Kit) -> None:
    r = kit.app.test_client().get("/board")
    csp = r.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp.split("script-src", 1)[1].split(";", 1)[0]
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["X-Frame-Options"] == "DENY"


# --- host authority -------------------------------------------------------------------------

def test_right_pin_works_while_another_address_fails(kit: Kit) -> None:
    stranger = client_at(kit, "10.42.0.66")
    for _ in range(auth.FREE_TRIES + 3):
        login(stranger, wrong(kit))
    assert login(stranger, kit.services.settings.pin).status_code == 429  # locked
    host = client_at(kit, "10.42.0.5")
    assert login(host, kit.services.settings.pin).status_code == 302


def test_known_tablet_logs_in_while_many_strangers_fail(kit: Kit) -> None:
    tablet = client_at(kit, "10.42.0.5")
    assert login(tablet, kit.services.settings.pin).status_code == 302
    tablet.post("/logout")
    # Strangers from many addresses use up the global budget of wrong PINs...
    for i in range(auth.GLOBAL_FAILURES + 5):
        login(client_at(kit, f"10.42.1.{i}"), wrong(kit))
    newcomer = client_at(kit, "10.42.2.1")
    assert login(newcomer, kit.services.settings.pin).status_code == 429
    # ...but the tablet that logged in before is not held back by it.
    r = login(tablet, kit.services.settings.pin)
    assert r.status_code == 302 and tablet.get("/host").status_code == 200


def test_pins_are_six_ascii_digits(kit: Kit) -> None:
    assert len(kit.services.settings.pin) == 6
    c = client_at(kit, "127.0.0.1")
    login(c, kit.services.settings.pin)
    for bad in ("١٢٣٤٥٦", "１２３４５６", "12345", "12a456", "1" * 13, " "):
        assert c.post("/admin/pin", data={"pin": bad}).status_code == 400, bad
    assert kit.services.settings.pin.isascii()
    assert not auth.pin_matches("١٢٣٤٥٦", "123456")


def test_brute_force_takes_more_than_a_week_at_the_permitted_rate() -> None:
    """The arithmetic of docs/webui.md: strangers together get GLOBAL_FAILURES a window."""
    from webui import settings

    per_minute = auth.GLOBAL_FAILURES * 60 / auth.GLOBAL_WINDOW_S
    expected_minutes = 10 ** settings.PIN_DIGITS / 2 / per_minute
    assert expected_minutes >= 7 * 24 * 60


def test_old_cookie_refused_after_logout(kit: Kit) -> None:
    a, b = client_at(kit, "10.42.0.5"), client_at(kit, "10.42.0.6")
    login(a, kit.services.settings.pin)
    login(b, kit.services.settings.pin)
    stolen = a.get_cookie("session").value
    assert b.post("/logout").status_code == 302
    assert a.get("/host").status_code == 302  # every session ended, not only b's
    thief = client_at(kit, "10.42.0.7")
    thief.set_cookie("session", stolen)
    assert thief.get("/admin/").status_code == 302
    assert thief.post("/admin/pin", data={"pin": "123456"}).status_code == 403
    host_socket = kit.socketio.test_client(kit.app, flask_test_client=thief,
                                           auth={"role": "host"})
    assert not host_socket.is_connected()


def test_old_cookie_refused_after_pin_change(kit: Kit) -> None:
    a, b = client_at(kit, "10.42.0.5"), client_at(kit, "10.42.0.6")
    login(a, kit.services.settings.pin)
    login(b, kit.services.settings.pin)
    host_socket = kit.socketio.test_client(kit.app, flask_test_client=a, auth={"role": "host"})
    assert host_socket.is_connected()
    assert b.post("/admin/pin", data={"pin": "246810"}).status_code == 200
    assert a.get("/host").status_code == 302
    assert not host_socket.is_connected()  # its socket was closed too
    assert b.get("/host").status_code == 200  # the tablet that changed it stays in


def test_host_cookie_has_a_relative_lifetime(kit: Kit) -> None:
    r = login(client_at(kit, "10.42.0.5"), kit.services.settings.pin)
    cookies = r.headers.getlist("Set-Cookie")
    assert cookies
    for cookie in cookies:
        assert "Max-Age=" in cookie and "Expires=" not in cookie, cookie


@pytest.mark.parametrize("jump_s", [-10 * 365 * 86400, 10 * 365 * 86400])
def test_host_session_survives_the_box_clock_far_from_the_tablets(
        kit: Kit, monkeypatch: pytest.MonkeyPatch, jump_s: int) -> None:
    """Log in with the box's clock years behind (or ahead of) the tablet's, then move it
    the other way: the session still holds, and no cookie names a date."""
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + jump_s)
    c = client_at(kit, "10.42.0.5")
    r = login(c, kit.services.settings.pin)
    assert all("Expires=" not in h for h in r.headers.getlist("Set-Cookie"))
    monkeypatch.setattr(time, "time", lambda: real() - jump_s)
    assert c.get("/host").status_code == 200
    assert all("Expires=" not in h for h in c.get("/host").headers.getlist("Set-Cookie"))


# --- CSRF and redirects ---------------------------------------------------------------------

def test_cross_origin_post_refused(kit: Kit) -> None:
    c = client_at(kit, "10.42.0.5")
    login(c, kit.services.settings.pin)
    before = kit.services.settings.get()
    for headers in ({"Origin": "http://evil.example.invalid"},
                    {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}):
        for path, data in (("/admin/settings", {"box_name": "pwned"}),
                           ("/admin/pin", {"pin": "999999"}), ("/logout", {})):
            r = c.post(path, data=data, headers=headers)
            assert r.status_code == 403, (path, headers)
    assert kit.services.settings.get() == before
    assert c.get("/host").status_code == 200  # the cross-site logout did nothing
    # The box's own page posting to itself still works.
    r = c.post("/admin/settings", data={"box_name": "Клуб"},
               headers={"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"})
    assert r.status_code == 200 and kit.services.settings.get()["box_name"] == "Клуб"


@pytest.mark.parametrize("target", ["/%09/evil.example.invalid", "/\\evil.example.invalid",
                                    "//evil.example.invalid", "http://evil.example.invalid/",
                                    "/%0a/evil.example.invalid", "/\t/evil.example.invalid"])
def test_redirects_stay_on_the_box(kit: Kit, target: str) -> None:
    c = client_at(kit, "10.42.0.5")
    r = c.get("/lang/en", query_string={"next": target} if "%" not in target else None) \
        if "%" not in target else c.get(f"/lang/en?next={target}")
    assert r.headers["Location"] == "/"
    r = c.post("/login", data={"pin": kit.services.settings.pin, "next": target.replace(
        "%09", "\t").replace("%0a", "\n")})
    assert r.headers["Location"] == "/host"
    assert c.get("/lang/en?next=/play").headers["Location"] == "/play"


# --- every handler validates ------------------------------------------------------------------

MALFORMED: list[Any] = [None, "x", 5, 1.5, [], [1, 2], {"type": 5}, {"seat": "0"},
                        {"player": "1"}, {"player": 10 ** 30}, {"seat": 10 ** 6},
                        {"seat": 99}, {"seat": -1}, {"player": True}, {"type": "x" * 500},
                        {"a": [[[[[[1]]]]]]}, {"name": ["list"]}, {"rules": "chess"},
                        {"players": "abc"}, {"options": {"timers": {"window_s": "nan"}}},
                        {"race_shown": "yes"}, {"k" * 100: 1}]


def state_of(kit: Kit) -> Any:
    return kit.store.log(kit.loop.current) if kit.loop.current is not None else None


def test_malformed_payloads_to_every_handler_are_refused(
        kit: Kit, game: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from webui.ratelimit import Meter

    monkeypatch.setattr(Meter, "allow", lambda self, kind: True)  # shapes, not rates, here
    host = kit.host()
    phone = kit.client("player")
    assert phone.emit("seat", {"seat": 0}, callback=True)["ok"]
    board = kit.client("board")
    before = [e.to_json() for e in kit.store.log(game)]
    names = ("command", "player_command", "press", "seat", "new_game", "ui", "history")
    for name in names:
        for sender in (host, phone, board):
            for payload in MALFORMED:
                if name == "press" and sender is phone:
                    continue  # a phone presses for its own seat whatever it sends
                answer = sender.emit(name, payload, callback=True)
                assert isinstance(answer, dict) and answer.get("ok") is False, \
                    (name, payload, answer)
                assert answer["refused"]["ru"] and answer["refused"]["en"]
    # Garbage payloads changed nothing: the log and the game are as they were.
    assert [e.to_json() for e in kit.store.log(game)] == before
    assert kit.loop.current == game
    assert host.is_connected() and phone.is_connected() and board.is_connected()


def test_missing_payload_and_extra_arguments_answered(kit: Kit, game: int) -> None:
    host = kit.host()
    assert host.emit("ui", callback=True)["ok"] is False
    assert host.emit("command", {"type": "announce"}, 1, callback=True)["ok"] is False
    assert host.emit("no_such_message", {}, callback=True)["refused"]["code"] == "unknown"


def test_seats_and_players_out_of_range_refused(kit: Kit, game: int) -> None:
    phone = kit.client("player")
    for seat in (3, 99, 10 ** 6, 10 ** 30):
        answer = phone.emit("seat", {"seat": seat}, callback=True)
        assert answer["ok"] is False, seat
    board = kit.client("board")
    for player in (3, 10 ** 30, -1):
        assert board.emit("press", {"player": player}, callback=True)["ok"] is False
    r = kit.app.test_client().post("/api/sim/press", json={"player": 10 ** 30})
    assert r.get_json()["ok"] is False
    host = kit.host()
    answer = host.emit("command", {"type": "judge", "player": 10 ** 6}, callback=True)
    assert answer["ok"] is False


def test_too_deep_json_becomes_a_refusal() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert webapp.Utf8Json.loads(deep) == [inbound.MALFORMED_EVENT]
    assert webapp.Utf8Json.loads('["press", {"player": 1}]') == ["press", {"player": 1}]


def test_engine_error_still_answers(kit: Kit, game: int, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any, **__: Any) -> Any:
        raise TypeError("a bug")

    monkeypatch.setattr(kit.loop, "submit", broken)
    answer = kit.host().emit("command", {"type": "announce"}, callback=True)
    assert answer["ok"] is False and answer["refused"]["code"] == "error"


# --- rate limits ------------------------------------------------------------------------------

def stop_the_meters(kit: Kit) -> None:
    """The buckets see no time pass, so a slow machine cannot refill them mid-test."""
    kit.hub.meter_clock = lambda: 1000.0


def test_a_press_storm_is_cut_at_the_socket(kit: Kit, game: int) -> None:
    stop_the_meters(kit)
    host = kit.host()
    assert host.emit("command", {"type": "announce"}, callback=True)["ok"]
    phone = kit.client("player")
    assert phone.emit("seat", {"seat": 1}, callback=True)["ok"]
    submitted = []
    real_submit = kit.loop.submit

    def counting(command: Any, *a: Any) -> Any:
        submitted.append(command)
        return real_submit(command, *a)

    kit.loop.submit = counting  # type: ignore[method-assign]
    answers = []
    for _ in range(200):
        if not phone.is_connected():
            break
        answers.append(phone.emit("press", {}, callback=True))
    limited = [a for a in answers if isinstance(a, dict) and a["ok"] is False
               and a["refused"]["code"] == "rate_limited"]
    assert len(limited) >= 40
    assert len(submitted) <= 20  # the storm never reached the game loop's queue
    assert kit.hub.dropped["press"] == len(limited)
    # A storm is not a person tapping fast: its socket is closed.
    assert kit.hub.dropped["storms_cut"] == 1 and not phone.is_connected()
    # Another phone and the host are not limited by it.
    other = kit.client("player")
    assert other.emit("seat", {"seat": 2}, callback=True)["ok"]
    assert host.emit("ui", {"paused": True}, callback=True)["ok"]


def test_lobby_changes_are_limited(kit: Kit) -> None:
    stop_the_meters(kit)
    phone = kit.client("player")
    answers = [phone.emit("seat", {"seat": None, "name": f"n{i}"}, callback=True)
               for i in range(30)]
    assert sum(a["ok"] for a in answers) <= 6
    assert len(kit.hub.ui.lobby) == 1


# --- settings and secrets ---------------------------------------------------------------------

def test_nan_volume_refused_and_settings_stay_json(kit: Kit) -> None:
    c = client_at(kit, "127.0.0.1")
    login(c, kit.services.settings.pin)
    for bad in ("nan", "inf", "-inf", "NaN", "x"):
        assert c.post("/admin/settings", data={"volume": bad}).status_code == 400
    text = (kit.services.data_dir / "settings.json").read_text()
    data = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in settings.json"))
    assert math.isfinite(data["sound"]["volume"])
    kit.services.settings.update({"sound": {"volume": float("nan")}})
    assert kit.services.settings.get()["sound"]["volume"] == 0.7


def test_empty_secret_key_is_replaced_and_reported(tmp_path: Path) -> None:
    (tmp_path / "secret_key").write_bytes(b"")  # a power cut during the first boot
    k = make_kit(tmp_path)
    try:
        c = client_at(k, "10.42.0.5")
        assert login(c, k.services.settings.pin).status_code == 302
        assert len((tmp_path / "secret_key").read_bytes()) == webapp.SECRET_BYTES
        assert (tmp_path / "secret_key.damaged-1").exists()
        page = c.get("/host").get_data(as_text=True)
        assert "Файл ключа сессий был повреждён" in page
        assert "Файл ключа" not in k.app.test_client().get("/board").get_data(as_text=True)
    finally:
        k.close()


def test_unreadable_settings_do_not_stop_the_box(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text('{"pin": "123456", "box_na')  # cut mid-write
    from webui.settings import Settings

    Settings(tmp_path)  # `svoyak serve` reads it on the console before the server starts
    k = make_kit(tmp_path)  # the server's worker reads the replaced file
    try:
        assert (tmp_path / "settings.json.damaged-1").exists()
        assert json.loads((tmp_path / "settings.json").read_text())["pin"]
        c = client_at(k, "10.42.0.5")
        assert login(c, k.services.settings.pin).status_code == 302
        assert "Файл настроек был повреждён" in c.get("/host").get_data(as_text=True)
        assert "повреждён" not in k.app.test_client().get("/board").get_data(as_text=True)
        c.post("/admin/settings", data={"box_name": "Клуб"})  # seen: the report goes
        assert "Файл настроек был повреждён" not in c.get("/host").get_data(as_text=True)
    finally:
        k.close()


def test_settings_of_the_wrong_type_fall_back(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text(json.dumps(
        {"pin": "١٢٣٤٥٦", "box_name": ["x"], "sound": {"volume": "loud", "mute": 1}}))
    from webui.settings import Settings

    s = Settings(tmp_path).get()
    assert s["box_name"] == "Svoyak" and s["sound"] == {"volume": 0.7, "mute": False}
    assert s["pin"].isascii() and len(s["pin"]) == 6


def test_views_never_carry_the_injection_as_markup(kit: Kit, game: int) -> None:
    """Names from phones reach other screens as text in JSON (the scripts use textContent)."""
    phone = kit.client("player")
    phone.emit("seat", {"seat": None, "name": INJECTION}, callback=True)
    board = kit.client("board")
    assert INJECTION[:40] in views(board)[0]["ui"]["lobby"]


def test_sockets_of_one_stranger_share_one_budget(kit: Kit, game: int) -> None:
    """More sockets from one phone's address buy no more presses."""
    stop_the_meters(kit)
    fc = kit.app.test_client()
    fc.environ_base["REMOTE_ADDR"] = "10.42.0.66"
    sockets = []
    for seat in range(3):
        s = kit.socketio.test_client(kit.app, flask_test_client=fc, auth={"role": "player"})
        assert s.emit("seat", {"seat": seat}, callback=True)["ok"]
        sockets.append(s)
    answers = [s.emit("press", {}, callback=True) for _ in range(12) for s in sockets]
    limited = sum(1 for a in answers if a.get("refused", {}).get("code") == "rate_limited")
    assert limited >= len(answers) - 20


def test_screens_are_refused_when_the_loops_queue_is_full(
        kit: Kit, game: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond the high-water mark a screen's command is refused, not queued; the wired
    buttons' path (straight to the loop) is not."""
    from appliance.rules.protocol import Command

    host = kit.host()
    monkeypatch.setattr(kit.loop, "pending", lambda: inbound.INBOX_HIGH_WATER)
    answer = host.emit("command", {"type": "announce"}, callback=True)
    assert answer["ok"] is False and answer["refused"]["code"] == "busy"
    assert kit.hub.dropped["inbox_full"] == 1
    outcome = kit.loop.submit(Command("announce", 0, {}, "host")).result(5)
    assert outcome.refused is None
    monkeypatch.setattr(kit.loop, "pending", lambda: 0)
    press = kit.loop.submit(Command("press", 0, {"player": 0}, "button")).result(5)
    assert press.refused is None or press.refused.code != "busy"
