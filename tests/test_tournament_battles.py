"""Whole tournaments through the real battle engine on a running game loop: draw, battles
with themes from a package, results advancing winners, ties, a walkover, the podium."""

from __future__ import annotations

import random
import time

import pytest
from drive import FakeClock
from tournament_kit import Host, leader_and_tied, package, tie_then_seat

from appliance.rules.protocol import Refused
from appliance.rules.tournament import views
from appliance.rules.tournament.state import DONE, PLAYOFF
from appliance.runtime.loop import GameLoop
from appliance.runtime.store import Store
from appliance.runtime.tournament import TournamentShell


def make(tmp_path, n: int, teams: int, **setup):  # noqa: ANN001, ANN201
    clock = FakeClock()
    loop = GameLoop(Store(tmp_path / "svoyak.db"), clock=clock).start()
    d = TournamentShell(loop)
    d.create({"title": "Кубок", **setup})
    rows = [{"name": f"Игрок {i}", "team": f"Команда {i % teams}", "city": "Город",
             "rating": (1000 - i) if i < 5 else None} for i in range(n)]
    d.submit({"type": "import_entries", "entries": rows})
    d.submit({"type": "draw", "seed": 20261201})
    return loop, clock, d


def settle(d: TournamentShell, battle_id: str) -> None:
    """The result goes back through the notifier thread: wait until it is in.

    Bounded by time, not by a count of round trips: on a loaded machine the notifier thread
    can stay behind the loop for hundreds of round trips (seen with a load average of 15)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        b = d.state.battle(battle_id)
        if b is not None and b.status == DONE:
            return
        d.loop.submit({"type": "noop"}, game=d.game).result(timeout=30)  # a round trip
        time.sleep(0.005)
    raise AssertionError(f"{battle_id} got no result")


@pytest.mark.parametrize(("n", "teams"), [(100, 15), (27, 9), (9, 9), (5, 5)])
def test_a_whole_tournament_from_the_draw_to_the_podium(tmp_path, n: int, teams: int) -> None:
    loop, clock, d = make(tmp_path, n, teams)
    host = Host(loop, clock, random.Random(n))
    pack = package()
    try:
        tie_done = walkover_done = False
        no_shows = 0
        while (ready := views.next_battles(d.state)):
            b = ready[0]
            if no_shows < 2 and b.drawn.stage != "final" and len(b.present) == 3 and n > 9:
                no_shows += 1  # first one no-show (a battle of two), then two (a walkover)
                absent = list(b.present[3 - no_shows:])
                d.submit({"type": "walkover", "battle": b.id, "absent": absent})
                b = d.state.battle(b.id)
                if b.status == DONE:
                    walkover_done = True
                    assert b.result is not None and b.result.walkover
                    continue
            game = d.start_battle(b.id, d.setup_for(b.id, pack))
            battle = host.state(game)
            assert list(battle.players) == [d.state.player(e).entry.name for e in b.present]
            assert len([t for t in battle.themes if not t.extra]) == (
                12 if b.id == "F" else 6 if b.drawn.feeds == "F" else 4)
            if b.id == "F":
                assert [t.red for t in battle.themes] == [False] * 6 + [True] * 6
                assert battle.themes[6].value(4) == 100
            if not tie_done and len(b.present) >= 2 and b.id != "F":
                host.play(game, tie_then_seat(0, 1, 1))
                tie_done = True
                settle(d, b.id)
                res = d.state.battle(b.id).result
                assert res is not None and res.winner == b.present[1]
                assert res.lines[1].extra > 0 and res.lines[0].score == res.lines[1].score
            elif b.id == "F" and len(b.present) == 3:
                host.play(game, leader_and_tied(0, 1, 2))
                settle(d, b.id)
            else:
                host.play(game)
                settle(d, b.id)
        s = d.state
        assert s.finished and tie_done
        assert walkover_done or n <= 9
        table = views.places(s)
        assert sorted(r["entry"] for r in table) == sorted(p.id for p in s.players)
        final = s.final
        assert final is not None and final.result is not None
        assert table[0]["entry"] == final.result.winner
        if len(final.present) == 3:
            assert [r["place"] for r in table[:3]] == [1, 2, 2]  # the default: shared
        # no theme twice in the tournament
        assert len({t for t in s.used_themes}) == len(s.used_themes)
        stats = views.statistics(s)
        champion = stats[final.result.winner]
        assert champion["battles"] >= 1 and champion["right"] > 0
        assert champion["reaction_best_ms"] is not None
        board = views.view(s, "board")
        assert [p["place"] for p in board["podium"]][:1] == [1]
        assert board["playing"] == [] and board["next"] == []
        # each played battle's result names its game on this box (its source)
        for b in s.battles:
            assert b.result is not None
            want = None if b.result.walkover else {"game": b.game}
            got = b.result.source.to_json() if b.result.source is not None else None
            assert got == want, b.id
    finally:
        d.close()
        loop.stop()


def test_ties_for_second_by_an_extra_theme_when_set(tmp_path) -> None:  # noqa: ANN001
    loop, clock, d = make(tmp_path, 3, 3, final_ties="extra_theme")
    host = Host(loop, clock, random.Random(3))
    pack = package(40, 5)
    try:
        game = d.start_battle("F", d.setup_for("F", pack))
        host.play(game, leader_and_tied(0, 1, 2))
        settle(d, "F")
        assert not d.state.finished
        p = d.state.battle(PLAYOFF)
        assert p is not None and len(p.present) == 2
        game = d.start_battle(PLAYOFF, d.setup_for(PLAYOFF, pack))
        assert len(host.state(game).themes) == 1
        host.play(game, lambda s: 1)
        settle(d, PLAYOFF)
        assert d.state.finished
        assert [r["place"] for r in views.places(d.state)] == [1, 2, 3]
        assert views.places(d.state)[1]["entry"] == p.present[1]
    finally:
        d.close()
        loop.stop()


def test_starting_refuses_before_anything_is_created(tmp_path) -> None:  # noqa: ANN001
    loop, clock, d = make(tmp_path, 9, 9)
    try:
        games = loop.games()
        with pytest.raises(Refused) as err:
            d.start_battle("F", d.setup_for("F", package()))  # players not known yet
        assert err.value.code == "not_ready" and loop.games() == games
        with pytest.raises(Refused) as err:
            d.start_battle("3.1", d.setup_for("3.1", package(3, 0)))  # too few themes
        assert err.value.code == "not_enough_themes" and loop.games() == games
    finally:
        d.close()
        loop.stop()


def test_a_whole_tournament_of_244_through_the_battle_engine(tmp_path) -> None:  # noqa: ANN001
    """244 entries: two qualification rounds, the 1/27, 1/9, 1/3 and the final, every battle
    played on the real battle engine — a walkover, a battle the host ends early (the
    director records its leader as the winner), one ended early and replayed, and a tie
    settled by an extra theme among them — to the podium, everybody placed once."""
    loop, clock, d = make(tmp_path, 244, 40)
    host = Host(loop, clock, random.Random(244))
    pack = package(600, 80)
    s = d.state
    assert [st.key for st in s.plan.stages] == ["qualification 1", "qualification 2", "1/27",
                                                 "1/9", "1/3", "final"]
    try:
        walkover = stopped = replayed = tie = False
        while (ready := views.next_battles(d.state)):
            b = ready[0]
            if not walkover and len(b.present) == 3 and b.drawn.stage == "1/27":
                d.submit({"type": "walkover", "battle": b.id, "absent": list(b.present[1:])})
                walkover = d.state.battle(b.id).status == DONE
                continue
            game = d.start_battle(b.id, d.setup_for(b.id, pack))
            theirs = host.state(game)
            assert len([t for t in theirs.themes if not t.extra]) == (
                12 if b.id == "F" else 6 if b.drawn.feeds == "F" else 4)
            if not stopped and b.drawn.stage == "qualification 2":
                one_question(host, game, seat=1)
                loop.end_game(game).result(timeout=30)  # the host ends it early
                wait_status(d, b.id, "stopped")
                assert d.state.battle(b.id).result is None  # nobody went on by himself
                d.submit({"type": "award_leader", "battle": b.id,
                          "reason": "вопросы кончились у ведущего"})
                assert d.state.battle(b.id).result.winner == b.present[1]
                stopped = True
                continue
            if not replayed and b.drawn.stage == "1/9":
                one_question(host, game, seat=0)
                loop.end_game(game).result(timeout=30)
                wait_status(d, b.id, "stopped")
                d.replay(b.id)
                assert d.state.battle(b.id).status == "ready"
                replayed = True
                continue
            if not tie and b.drawn.stage == "1/3":
                host.play(game, tie_then_seat(0, 1, 1))
                tie = True
            else:
                host.play(game, lambda st: 0)
            settle(d, b.id)
        s = d.state
        assert s.finished and walkover and stopped and replayed and tie
        table = views.places(s)
        assert sorted(r["entry"] for r in table) == sorted(p.id for p in s.players)
        assert len(table) == 244 and table[0]["entry"] == s.final.result.winner
        assert len(s.used_themes) == len(set(s.used_themes))
    finally:
        d.close()
        loop.stop()


def one_question(host: Host, game: int, seat: int) -> None:
    host.send(game, "announce")
    host.send(game, "reading_done")
    host.send(game, "press", player=seat)
    host.t += 50 * 1_000_000
    host.clock.set(host.t)
    for _ in range(200):
        if host.state(game).phase == "answering":
            break
        host.loop.submit({"type": "noop"}, game=game).result(timeout=30)
        time.sleep(0.005)
    host.send(game, "judge", verdict="right")


def wait_status(d: TournamentShell, battle_id: str, status: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if d.state.battle(battle_id).status == status:
            return
        d.loop.submit({"type": "noop"}, game=d.game).result(timeout=30)
        time.sleep(0.005)
    raise AssertionError(f"{battle_id} is not {status}")
