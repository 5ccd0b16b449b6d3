"""Frames per committed update: shared parts computed once, nothing computed for a role no
screen has, and a host frame that does not grow with the game (history on request).

Real game loop, real sport engine, real SQLite file, Flask-SocketIO's test clients."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from webui_kit import Kit, make_kit, views

from appliance.rules import arbiter
from appliance.rules.battle import game as battle
from webui import hub as hub_module

PLAYERS = ["Анна", "Борис", "Вера"]


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    k = make_kit(tmp_path)
    k.games.start("battle", PLAYERS, "demo:battle", {"stage": "qualification"})
    yield k
    k.close()


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts the engine's view (per role) and legal_actions calls, wherever they come from."""
    seen: Counter[str] = Counter()
    view, legal = battle.view, battle.legal_actions

    def counted_view(state: Any, role: str) -> dict[str, Any]:
        seen[f"view:{role}"] += 1
        return view(state, role)

    def counted_legal(state: Any) -> list[Any]:
        seen["legal_actions"] += 1
        return legal(state)

    monkeypatch.setattr(battle, "view", counted_view)
    monkeypatch.setattr(battle, "legal_actions", counted_legal)
    return seen


def settle(kit: Kit, *clients: Any) -> None:
    """Wait until the notifier has fanned out everything committed so far."""
    done = kit.loop.submit({"type": "__probe__"})
    done.result(5)
    time.sleep(0.15)
    for c in clients:
        c.get_received()


def test_one_update_computes_each_view_once_and_the_actions_once(kit: Kit,
                                                                 calls: Counter[str]) -> None:
    host, board = kit.host(), kit.client("board")
    lobby = kit.client("player")
    seated = [kit.client("player", seat=s) for s in (0, 1, 2, 0, 1)]
    settle(kit, host, board, lobby, *seated)
    calls.clear()
    assert host.emit("command", {"type": "announce"}, callback=True)["ok"]
    settle(kit)
    frames = {name: views(c) for name, c in [("host", host), ("board", board),
                                               ("lobby", lobby), ("seat0", seated[0])]}
    assert all(len(f) == 1 for f in frames.values()), {k: len(v) for k, v in frames.items()}
    # One view per role: host, board (shared by the lobby phone), three seats; the
    # hardware view for the sound cues. The legal actions: once, for the frame.
    views_per_role = {k: v for k, v in calls.items() if k.startswith("view:")}
    assert views_per_role == {"view:host": 1, "view:board": 1, "view:player:0": 1,
                              "view:player:1": 1, "view:player:2": 1, "view:hardware": 1}
    assert calls["legal_actions"] == 1
    assert frames["host"][0]["actions"][0]["type"] == "reading_done"
    assert "actions" not in frames["host"][0]["view"]  # carried once, by the frame


def test_no_legal_actions_for_boards_only(kit: Kit, calls: Counter[str]) -> None:
    board, other = kit.client("board"), kit.client("board")
    settle(kit, board, other)
    calls.clear()
    kit.loop.submit({"type": "announce"}).result(5)
    settle(kit)
    assert views(board) and views(other)
    assert calls["legal_actions"] == 0
    assert calls["view:host"] == 0 and calls["view:board"] == 1


def test_the_host_frame_does_not_grow_with_the_game(kit: Kit) -> None:
    host = kit.host()
    sizes = []
    for i in range(60):
        out = kit.loop.submit({"type": "set_score", "player": i % 3, "score": i}).result(5)
        assert out.refused is None, out.refused
        if i in (25, 59):
            settle(kit)
            frame = views(kit.host())[0]
            sizes.append(len(json.dumps(frame, ensure_ascii=False)))
            assert len(frame["view"]["corrections"]) == hub_module.HISTORY_PAGE
            assert frame["view"]["corrections_total"] == i + 1
    assert sizes[1] <= sizes[0] + 64, sizes  # 34 more corrections, (almost) no more bytes
    # The whole history, a page at a time, oldest first.
    got: list[Any] = []
    while True:
        page = host.emit("history", {"key": "corrections", "offset": len(got), "limit": 25},
                         callback=True)
        assert page["ok"] and page["total"] == 60
        if not page["items"]:
            break
        got += page["items"]
    assert len(got) == 60
    assert got[0]["player"] == 0 and got[-1]["player"] == 59 % 3


def test_history_is_for_the_host_only_and_checks_its_arguments(kit: Kit) -> None:
    board, host = kit.client("board"), kit.host()
    refused = board.emit("history", {"key": "corrections"}, callback=True)
    assert refused["refused"]["code"] == "forbidden"
    for bad in ({"key": "secrets"}, {"key": "corrections", "offset": "x"},
                {"key": "corrections", "limit": True}):
        assert host.emit("history", bad, callback=True)["ok"] is False


def test_long_choice_lists_keep_their_last_page() -> None:
    refs = [{"value": i, "ru": str(i), "en": str(i)} for i in range(100)]
    actions = [{"type": "rejudge", "args": {"ref": refs, "verdict": refs[:2]}},
               {"type": "choose", "args": {"cell": refs[:36]}}]
    out = hub_module.bounded_actions(actions)
    assert [c["value"] for c in out[0]["args"]["ref"]] == list(range(80, 100))
    assert out[0]["args_total"] == {"ref": 100}
    assert out[0]["args"]["verdict"] == refs[:2]
    assert out[1] == actions[1]  # a TV board's 36 cells are all shown
    # A 10 x 10 SIQ round: every one of its 100 cells stays pickable on the host's board.
    board = [{"type": "choose", "args": {"cell": refs}}, {"type": "reopen", "args": {"cell": refs}}]
    assert hub_module.bounded_actions(board) == board


@pytest.mark.parametrize("rules", ["battle", "tv"])
def test_a_game_the_box_starts_has_the_measured_settle_window_in_its_log(kit: Kit,
                                                                         rules: str) -> None:
    game = kit.games.start(rules, PLAYERS, f"demo:{rules}", {})
    record = kit.store.game(game)
    assert record is not None
    assert record.setup["settings"]["settle_ms"] == arbiter.BOX_SETTLE_MS
    _, state = kit.loop.snapshot(game)
    assert json.dumps(kit.loop.snapshot(game)[0].view(state, "host"), ensure_ascii=False)
    if rules == "battle":
        assert state.settings.settle_ns == arbiter.BOX_SETTLE_MS * arbiter.MS
    else:
        assert state.settings.settle_ms == arbiter.BOX_SETTLE_MS



def test_frames_go_out_as_json_text_without_a_walk_for_binary(
        kit: Kit, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's packets skip the library's search of every frame for bytes (the box's
    frames are JSON views, and the walk cost more than the JSON encoding): a whole update
    reaches the screens with the walk made to fail, and bytes that did reach a frame would
    fail loudly in the JSON encoder instead of going out as a binary attachment."""
    assert kit.socketio.server.packet_class is hub_module.JsonPacket

    def walk(cls: Any, data: Any) -> bool:
        raise AssertionError("a frame was searched for bytes")

    monkeypatch.setattr(hub_module.JsonPacket, "data_is_binary", classmethod(walk))
    board = kit.client("board")
    settle(kit, board)
    assert kit.loop.submit({"type": "announce"}).result(5).refused is None
    settle(kit)
    assert views(board)
    with pytest.raises(TypeError):
        hub_module.JsonPacket(2, data=["view", {"blob": b"\x00"}]).encode()
