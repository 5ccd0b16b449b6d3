"""The captive portal blueprint through Flask's test client: what each OS's probe gets
before and after the client passes the portal, and foreign host names."""

from __future__ import annotations

import pytest
from flask import Flask

from webui import captive

PHONE = "10.42.0.57"
OTHER = "10.42.0.58"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def setup():
    clock = FakeClock()
    app = Flask(__name__)
    app.register_blueprint(captive.blueprint("10.42.0.1", clients=captive.Clients(60, clock)))

    @app.route("/")
    def start():
        return "start page"

    @app.route("/host")
    def host():
        return "host page"

    return app.test_client(), clock


def get(client, path, host="probe.example", addr=PHONE, **kw):
    return client.get(path, headers={"Host": host}, environ_base={"REMOTE_ADDR": addr}, **kw)


@pytest.mark.parametrize("path", sorted(captive.ONLINE_ANSWERS))
def test_unknown_client_probe_is_sent_to_the_portal(setup, path):
    client, _ = setup
    r = get(client, path)
    assert r.status_code == 302
    assert r.headers["Location"] == "http://10.42.0.1/captive"
    assert r.headers["Cache-Control"] == "no-store"


def test_portal_page_links_through_continue(setup):
    client, _ = setup
    r = get(client, "/captive", host="10.42.0.1")
    html = r.get_data(as_text=True)
    assert r.status_code == 200
    assert "Своя игра" in html
    for target in ("/host", "/play", "/"):
        assert f'href="http://10.42.0.1/captive/continue?next={target}"' in html


def test_after_continue_each_os_gets_its_online_answer(setup):
    client, _ = setup
    r = get(client, "/captive/continue?next=/host", host="10.42.0.1")
    assert (r.status_code, r.headers["Location"]) == (302, "http://10.42.0.1/host")
    android = get(client, "/generate_204")
    assert (android.status_code, android.data) == (204, b"")
    apple = get(client, "/hotspot-detect.html")
    assert apple.status_code == 200
    assert apple.get_data(as_text=True) == (
        "<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>")
    assert get(client, "/connecttest.txt").get_data(as_text=True) == "Microsoft Connect Test"
    assert get(client, "/ncsi.txt").get_data(as_text=True) == "Microsoft NCSI"
    assert get(client, "/success.txt").get_data(as_text=True) == "success\n"
    # Another phone has not passed the portal yet.
    assert get(client, "/generate_204", addr=OTHER).status_code == 302


def test_admission_expires_without_requests(setup):
    client, clock = setup
    get(client, "/captive/continue", host="10.42.0.1")
    clock.now += 59
    assert get(client, "/generate_204").status_code == 204  # refreshes
    clock.now += 59
    assert get(client, "/generate_204").status_code == 204
    clock.now += 61
    assert get(client, "/generate_204").status_code == 302


def test_windows_redirect_path_always_opens_the_portal(setup):
    client, _ = setup
    get(client, "/captive/continue", host="10.42.0.1")
    r = get(client, "/redirect")
    assert (r.status_code, r.headers["Location"]) == (302, "http://10.42.0.1/captive")


def test_continue_refuses_to_redirect_off_the_box(setup):
    client, _ = setup
    for bad in ("http://evil.example/x", "//evil.example/x", "javascript:alert(1)", "host"):
        r = get(client, f"/captive/continue?next={bad}", host="10.42.0.1")
        assert r.headers["Location"] == "http://10.42.0.1/"


def test_foreign_host_names_lead_to_the_box(setup):
    client, _ = setup
    r = get(client, "/some/page", host="news.example.org")
    assert r.headers["Location"] == "http://10.42.0.1/captive"
    get(client, "/captive/continue", host="10.42.0.1")
    r = get(client, "/some/page", host="news.example.org")
    assert r.headers["Location"] == "http://10.42.0.1/"


@pytest.mark.parametrize("host", ["10.42.0.1", "10.42.0.1:80", "svoyak", "svoyak.local",
                                  "localhost", "localhost:8080", "[::1]:5000", "127.0.0.1"])
def test_the_box_own_names_are_served_normally(setup, host):
    client, _ = setup
    r = get(client, "/host", host=host)
    assert (r.status_code, r.get_data(as_text=True)) == (200, "host page")


def test_foreign_redirect_can_be_switched_off():
    app = Flask(__name__)
    app.register_blueprint(captive.blueprint("10.42.0.1", redirect_foreign=False))
    app.add_url_rule("/", "start", lambda: "start page")
    r = get(app.test_client(), "/", host="laptop.lan")
    assert r.get_data(as_text=True) == "start page"
    # The probes are still answered.
    assert get(app.test_client(), "/generate_204", host="laptop.lan").status_code == 302


def test_post_to_a_foreign_host_is_not_redirected(setup):
    client, _ = setup
    r = client.post("/", headers={"Host": "x.example"}, environ_base={"REMOTE_ADDR": PHONE})
    assert r.status_code == 405
