"""What a long evening (issue 27, "flat memory") could grow without bound is bounded: the
catalogue cache by language, the captive portal's remembered addresses, the hub's per-socket
and per-address meters, and the rooms director's live battle states (checked in
`test_rooms_link.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from webui_kit import make_kit

from webui import captive, i18n
from webui import hub as hub_module


def test_the_catalogue_is_cached_per_language_not_per_string() -> None:
    for i in range(500):  # a stranger's cookie or message may say anything
        assert i18n.catalogue(f"xx-{i}")["login.wrong"] == i18n.catalogue("ru")["login.wrong"]
    assert i18n.catalogue("en") != i18n.catalogue("ru")
    assert i18n._catalogue.cache_info().currsize <= len(i18n.LANGUAGES)


def test_the_portal_forgets_addresses_by_age_and_count() -> None:
    now = [0.0]
    clients = captive.Clients(remember_s=100, clock=lambda: now[0])
    for i in range(captive.MAX_CLIENTS + 500):
        clients.admit(f"10.42.{i // 250}.{i % 250}")
    assert len(clients) == captive.MAX_CLIENTS
    assert not clients.admitted("10.42.0.0")  # the longest unseen went first
    last = captive.MAX_CLIENTS + 499
    assert clients.admitted(f"10.42.{last // 250}.{last % 250}")
    now[0] = 1000.0
    clients.admit("10.42.99.1")  # the next day: every expired address forgotten
    assert len(clients) == 1


def test_sockets_that_come_and_go_leave_nothing_behind(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_module, "MAX_ADDRESSES", 50)
    k = make_kit(tmp_path)
    try:
        hub = k.hub
        for i in range(300):  # phones from many addresses, each connecting once
            fc = k.app.test_client()
            fc.environ_base["REMOTE_ADDR"] = f"10.42.{i // 250}.{1 + i % 250}"
            c = k.socketio.test_client(k.app, auth={"role": "player"}, flask_test_client=fc)
            assert c.is_connected()
            c.disconnect()
        assert not hub.clients and not hub._meters and not hub._sid_address
        assert len(hub._address_meters) == 50  # the oldest addresses forgotten
    finally:
        k.close()
