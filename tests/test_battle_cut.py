"""A power cut at every step of a bracket battle's start and end (issue 27).

The child (`battle_cut_child.py`) kills itself with SIGKILL before the n-th SQL statement of
the phase, for every n the phase runs. After each cut the log must hold the battle's game
and the tournament's record of it together or neither (no battle game the tournament does
not count, no battle in play without its game), keep what was acknowledged, and a restarted
box — resume, director, reconcile, as `svoyak serve` does — must make current only a game
the tournament has in play, finish the bookkeeping of a battle that ended, and go on.

A second test writes what an older box could leave behind (a battle's game without the
tournament's ``battle_started``) and checks that start-up closes it instead of making it the
host's current game."""

from __future__ import annotations

import multiprocessing
import shutil
import signal
from pathlib import Path
from typing import Any

import battle_cut_child
import pytest

from appliance.rules.tournament import game, views
from appliance.rules.tournament.battles import battle_setup
from appliance.rules.tournament.state import DONE, PLAYING, Tournament
from appliance.runtime.loop import GameLoop
from appliance.runtime.running import RunningGame
from appliance.runtime.store import FINISHED, RUNNING, Store
from appliance.runtime.tournament import TournamentShell


@pytest.fixture(scope="module")
def forks() -> Any:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["battle_cut_child"])
    return ctx


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("baseline") / "svoyak.db"
    battle_cut_child.prepare(str(db))
    return db


def copy(baseline: Path, to: Path) -> Path:
    to.mkdir()
    for f in baseline.parent.glob(baseline.name + "*"):
        shutil.copy(f, to / f.name)
    return to / baseline.name


def child(forks: Any, db: Path, phase: str, cut: int) -> tuple[list[str], int | None]:
    acks = db.parent / "acks.txt"
    p = forks.Process(target=battle_cut_child.run, args=(str(db), phase, cut, str(acks)))
    p.start()
    p.join(120)
    assert p.exitcode is not None, "the child hung"
    return (acks.read_text().splitlines() if acks.exists() else []), p.exitcode


def tournament_of(store: Store) -> tuple[int, Tournament]:
    t = [g for g in store.games() if g.rules == "tournament"]
    assert len(t) == 1
    return t[0].id, RunningGame.resume(store, t[0].id, game).state


def check_log(db: Path, acks: list[str]) -> None:
    """The log as the cut left it, before any start-up repairs it."""
    with Store(db) as store:
        assert store.integrity() == ["ok"]
        _, s = tournament_of(store)
        battles = [g for g in store.games() if g.rules == "battle"]
        # both or neither: every battle game is one the tournament counts ...
        assert {g.id for g in battles} <= game.parts(s), "a battle game without its record"
        for b in s.battles:  # ... and every battle it counts has its game
            if b.game is not None:
                assert store.game(b.game) is not None, b.id
        started = [int(a.split()[-1]) for a in acks if a.startswith("ack started")]
        if started:
            assert [b.game for b in s.battles if b.game is not None] == started
        if "ack ended" in acks:
            assert store.game(started[0]).status == FINISHED
        if "ack done" in acks:
            assert [b.status for b in s.battles if b.game == started[0]] == [DONE]


def check_restart(db: Path) -> str:
    """Start the box on the cut log; returns what became of the battle."""
    loop = GameLoop(Store(db)).start()
    d = TournamentShell(loop)
    try:
        assert d.game is not None
        d.reconcile()
        s = d.state
        playing = {b.game for b in s.battles if b.status == PLAYING}
        assert loop.current is None or loop.current in playing, "an orphan became current"
        for g in loop.store.unfinished():
            if g.rules == "battle":
                assert g.id in playing, f"battle game {g.id} is running, the battle is not"
        for b in s.battles:
            if b.status == PLAYING:
                record = loop.store.game(b.game)  # type: ignore[arg-type]
                assert record is not None and record.status == RUNNING, b.id
                assert loop.current == b.game
                return "playing"
            if b.game is not None:
                assert b.status == DONE, b.id  # its game ended: reconcile fed the result
                return "done"
        # neither: the battle can be started again, once
        ready = views.next_battles(s)[0].id
        g = d.start_battle(ready, d.setup_for(ready, battle_cut_child.PACKAGE))
        assert loop.current == g
        assert [x.id for x in loop.store.games() if x.rules == "battle"] == [g]
        return "neither"
    finally:
        if d is not None:
            d.close()
        loop.stop()
        loop.store.close()


@pytest.mark.parametrize("phase", ["start", "end"])
def test_a_cut_at_every_step_of_a_battle_start_and_end(tmp_path: Path, forks: Any,
                                                        baseline: Path, phase: str) -> None:
    acks, code = child(forks, copy(baseline, tmp_path / "whole"), phase, 0)
    assert code == 0 and acks[-1].startswith("steps"), acks
    steps = int(acks[-1].split()[1])
    assert steps >= 4, acks  # a transaction is BEGIN ... COMMIT: the phase writes something
    seen: dict[str, int] = {}
    for n in range(1, steps + 2):
        db = copy(baseline, tmp_path / f"cut-{n}")
        acks, code = child(forks, db, phase, n)
        assert code == -signal.SIGKILL, (n, acks)
        check_log(db, acks)
        what = check_restart(db)
        seen[what] = seen.get(what, 0) + 1
    # the cuts fell on both sides of each commit
    if phase == "start":
        assert seen.get("neither") and seen.get("playing"), seen
    else:
        assert seen.get("playing") and seen.get("done"), seen


def test_start_up_closes_a_battle_game_the_tournament_does_not_count(baseline: Path,
                                                                       tmp_path: Path) -> None:
    db = copy(baseline, tmp_path / "orphan")
    with Store(db) as store:  # what a cut between the two writes left on an older box
        _, s = tournament_of(store)
        ready = views.next_battles(s)[0].id
        orphan = store.create_game("battle", battle_setup(s, ready, battle_cut_child.PACKAGE))
        casual = store.create_game("battle", {"players": ["А", "Б"], "package": "demo-sport"})
    loop = GameLoop(Store(db)).start()
    try:
        assert loop.store.game(orphan).status == FINISHED
        assert orphan not in loop.games()
        # a casual game (no tournament in its setup) is untouched and current
        assert loop.store.game(casual).status == RUNNING and loop.current == casual
        d = TournamentShell(loop)
        assert d.game is not None
        g = d.start_battle(ready, d.setup_for(ready, battle_cut_child.PACKAGE))
        assert loop.current == g and d.state.battle(ready).game == g  # type: ignore[union-attr]
        d.close()
    finally:
        loop.stop()
        loop.store.close()
    again = GameLoop(Store(db)).start()  # the counted battle is resumed, not closed
    try:
        assert again.current == g and again.store.game(g).status == RUNNING
    finally:
        again.stop()
        again.store.close()


def test_a_room_box_writes_its_battle_game_and_outbox_row_together(tmp_path: Path,
                                                                  monkeypatch: Any) -> None:
    """A room box (rooms/room.py) starts the battle the director assigned: its game and the
    outbox row that sends the game to the director are one transaction. A failing outbox
    write (a trigger standing in for the cut) leaves no game behind, so no battle game the
    director would never hear of can become the room's current game."""
    from rooms.link import Broker
    from rooms.room import RoomBox

    store = Store(tmp_path / "svoyak.db")
    loop = GameLoop(store).start()
    box = RoomBox(room="room1", box="boxA", broker=Broker("127.0.0.1", 1, "u", "p"),
                  store=store, loop=loop)  # never started: no broker needed
    setup = {"players": ["А", "Б", "В"], "package": "demo-sport",
             "tournament": {"battle": "3.1", "number": 1, "stage": "1/3"}}
    monkeypatch.setattr(box, "assignment", lambda: {"battle": "3.1", "id": "a1",
                                                     "setup": setup})
    try:
        box.db.conn.execute("CREATE TRIGGER cut BEFORE INSERT ON rooms_outbox "
                            "BEGIN SELECT RAISE(ABORT, 'cut'); END")
        with pytest.raises(Exception, match="cut"):
            box.start_battle()
        assert store.games() == [] and loop.current is None and box.games() == []
        box.db.conn.execute("DROP TRIGGER cut")
        game = box.start_battle()
        assert [g.id for g in store.games()] == [game] and loop.current == game
        assert [g["game"] for g in box.games()] == [game]
        assert box.start_battle() == game  # once started, the same game
    finally:
        box.db.close()
        loop.stop()
        store.close()
