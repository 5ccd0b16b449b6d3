"""Memory that stays flat over an evening (issue 13): a new game ends and archives the
previous one unless the host keeps it; ended games leave memory; a box with many
unfinished games in its log resumes only what it needs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from webui_kit import Kit, make_kit

from appliance.runtime.loop import GameLoop
from appliance.runtime.store import Store, db_path
from webui.games import Games

PLAYERS = ["Анна", "Борис", "Вера"]
NEW = {"rules": "battle", "players": PLAYERS, "package": "demo:battle",
       "options": {"stage": "qualification"}}


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    k = make_kit(tmp_path)
    yield k
    k.close()


def settle(kit: Kit) -> None:
    kit.loop.submit({"type": "__settle__"}).result(5)  # queued after the end: done when it is


def test_a_new_game_ends_and_archives_the_previous_one(kit: Kit) -> None:
    host = kit.host()
    first = host.emit("new_game", NEW, callback=True)["game"]
    second = host.emit("new_game", NEW, callback=True)["game"]
    settle(kit)
    assert kit.loop.current == second
    assert kit.store.game(first).status != "running"
    assert kit.loop.games() == [second]  # the ended one is in the log, not in memory
    assert [g.id for g in kit.store.unfinished()] == [second]


def test_the_host_may_keep_the_previous_game(kit: Kit) -> None:
    host = kit.host()
    first = host.emit("new_game", NEW, callback=True)["game"]
    second = host.emit("new_game", {**NEW, "keep": True}, callback=True)["game"]
    settle(kit)
    assert sorted(g.id for g in kit.store.unfinished()) == [first, second]
    assert host.emit("new_game", {**NEW, "keep": "yes"}, callback=True)["ok"] is False


def test_ending_a_game_that_is_not_current_frees_it(kit: Kit) -> None:
    a = kit.games.start("battle", PLAYERS, "demo:battle")
    b = kit.games.start("battle", PLAYERS, "demo:battle")
    assert kit.loop.games() == [a, b]
    kit.loop.end_game(a).result(5)
    assert kit.loop.games() == [b]


def test_only_the_newest_unfinished_game_of_each_rules_is_resumed(tmp_path: Path) -> None:
    store = Store(db_path(tmp_path))
    loop = GameLoop(store).start()
    games = Games(loop)
    old = [games.start("battle", PLAYERS, "demo:battle") for _ in range(5)]
    tv = games.start("tv", PLAYERS, "demo:tv")
    loop.stop()
    store.close()

    store = Store(db_path(tmp_path))
    loop = GameLoop(store).start()
    try:
        assert loop.games() == [old[-1], tv] and loop.current == tv
        # A dormant game is folded when a command names it, and plays on.
        outcome = loop.submit({"type": "announce"}, old[0]).result(5)
        assert outcome.refused is None, outcome.refused
        assert old[0] in loop.games()
    finally:
        loop.stop()
        store.close()
