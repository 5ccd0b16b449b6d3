"""The tournament runs in the background of the game loop: creating it leaves the current
game alone, the host console is never offered "end the game" for it, and an ``end_game``
sent for it (by the loop's API or by a host socket) is refused in both languages and changes
nothing. Battles started from the bracket become current as before."""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import Any

import pytest
import tiny_engine
from webui_kit import Kit, make_kit, views

from appliance.rules import registry
from appliance.runtime.loop import END_GAME, GameLoop
from appliance.runtime.store import RUNNING, Store

registry.register("tiny", tiny_engine)
CSV = "name,team\n" + "".join(f"Игрок {i},Команда {i % 3}\n" for i in range(6))


def test_a_tournament_never_becomes_current_and_refuses_end_game(tmp_path: Path) -> None:
    store = Store(tmp_path / "svoyak.db")
    loop = GameLoop(store).start()
    try:
        t = loop.new_game("tournament", {"title": "Кубок"}).result(5)
        assert loop.current is None
        casual = loop.new_game("tiny", {"players": ["А", "Б"]}).result(5)
        second = loop.new_game("tournament", {"title": "Второй"}).result(5)
        assert loop.current == casual
        assert all(a.type != END_GAME for a in loop.legal_actions(t))
        assert any(a.type == END_GAME for a in loop.legal_actions(casual))
        before = store.count(t)
        for game in (t, second):
            out = loop.end_game(game).result(5)
            assert out.refused is not None and out.refused.code == "background"
            assert "директора" in out.refused.message_ru
            assert "director" in out.refused.message_en
            assert store.game(game).status == RUNNING
        assert store.count(t) == before
        ok = loop.submit({"type": "import_entries", "csv": CSV}, game=t).result(5)
        assert ok.refused is None  # still takes commands
    finally:
        loop.stop()
    # resumed after a restart: the casual game is current again, not the newer tournament
    again = GameLoop(Store(tmp_path / "svoyak.db")).start()
    try:
        assert set(again.games()) == {casual, second} and again.current == casual
    finally:
        again.stop()


@pytest.fixture
def kit(tmp_path: Path) -> Any:
    k = make_kit(tmp_path)
    yield k
    k.close()


def test_the_host_console_cannot_end_the_tournament(kit: Kit) -> None:
    c = kit.app.test_client()
    assert c.post("/login", data={"pin": kit.services.settings.pin}).status_code == 302
    assert c.post("/admin/tournament/create", data={"title": "Кубок"}).status_code == 302
    d = kit.services.tournament
    assert kit.loop.current is None
    host = kit.host()
    seen = views(host)
    assert seen and all(v.get("game") is None for v in seen)
    assert all(a["type"] != END_GAME for v in seen for a in v.get("actions", []))
    res = host.emit("command", {"type": "end_game"}, callback=True)
    assert res["ok"] is False and res["refused"]["ru"] and res["refused"]["en"]
    assert kit.store.game(d.game).status == RUNNING
    r = c.post("/admin/tournament/import", data={"file": (io.BytesIO(CSV.encode()), "e.csv")},
               content_type="multipart/form-data")
    assert r.status_code == 302
    assert c.post("/admin/tournament/draw", data={"seed": "5"}).status_code == 302
    battle = d.state.battles[0].id
    r = c.post("/admin/tournament/start", data={"battle": battle, "package": "demo:battle"})
    assert r.status_code == 302, r.get_data(as_text=True)
    game = d.state.battle(battle).game
    assert kit.loop.current == game  # a bracket battle is the host's game as before
    view: list[dict[str, Any]] = []
    for _ in range(500):  # screens hear of the new game on the notifier thread
        view += [v for v in views(host) if v.get("game") == game]
        if view:
            break
        time.sleep(0.01)
    assert view and any(a["type"] == END_GAME for a in view[-1]["actions"])
    assert kit.store.game(d.game).status == RUNNING
