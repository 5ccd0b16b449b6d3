"""The tournament engine: commands in, events out, refusals that change nothing, a whole
tournament folded back from its SQLite log."""

from __future__ import annotations

import random
from typing import Any

import pytest
from tournament_kit import theme_args

from appliance.rules import registry
from appliance.rules.protocol import Command, Refused, fold
from appliance.rules.tournament import game, views
from appliance.rules.tournament.state import DONE, PLAYOFF, READY, Tournament
from appliance.runtime.running import RunningGame
from appliance.runtime.store import Store


def cmd(type_: str, **args: Any) -> Command:
    return Command(type_, 0, args)


def step(state: Tournament, type_: str, **args: Any) -> Tournament:
    return fold(game, state, game.decide(state, cmd(type_, **args)))


def refused(state: Tournament, type_: str, **args: Any) -> Refused:
    with pytest.raises(Refused) as err:
        game.decide(state, cmd(type_, **args))
    assert err.value.message_ru and err.value.message_en
    return err.value


def entered(n: int, teams: int = 10, **setup: Any) -> Tournament:
    s = game.initial(setup)
    rows = [{"name": f"Игрок {i}", "team": f"Команда {i % teams}", "city": "Город"}
            for i in range(n)]
    return step(s, "import_entries", entries=rows)


def play(state: Tournament, rng: random.Random, *, tie_second: bool = False) -> Tournament:
    """Play the ready battle with the lowest number with made-up scores."""
    b = views.next_battles(state)[0]
    state = step(state, "start_battle", battle=b.id, **theme_args(state, b.id))
    k = len(b.present)
    scores = rng.sample(range(-50, 300, 10), k)
    if tie_second and k == 3:
        scores = [200, 50, 50]
    w = scores.index(max(scores))
    lines = [{"score": s, "right": 3, "wrong": 1, "silent": 2, "presses": 4,
              "reaction_mean_ms": 300.0 + i, "reaction_best_ms": 120.0 + i}
             for i, s in enumerate(scores)]
    return step(state, "battle_result", battle=b.id, winner=w, lines=lines)


def test_entries_draw_and_a_whole_tournament_of_100() -> None:
    rng = random.Random(1)
    s = entered(100, teams=15)
    s = step(s, "draw", seed=42)
    assert s.plan is not None and s.plan.bracket == 81 and s.plan.byes == 71
    assert len(s.battles) == 10 + 27 + 9 + 3 + 1
    played = 0
    while views.next_battles(s):
        s = play(s, rng)
        played += 1
    assert played == 50 and s.finished
    table = views.places(s)
    assert len(table) == 100
    assert [r["place"] for r in table[:3]] == [1, 2, 3] or table[1]["place"] == 2
    assert {r["entry"] for r in table} == {p.id for p in s.players}
    final = s.final
    assert final is not None and final.result is not None
    assert table[0]["entry"] == final.result.winner
    # qualification losers come last (9·2 + 1 = 19 of them)
    assert {r["stage"] for r in table[-19:]} == {"qualification"}
    assert table[-20]["stage"] == "1/27"
    stats = views.statistics(s)
    winner = stats[final.result.winner]
    assert winner["battles"] in (4, 5) and winner["right"] == 3 * winner["battles"]
    assert views.view(s, "board")["podium"][0]["entry"] == final.result.winner


def test_refusals_change_nothing() -> None:
    s = entered(5, teams=5)
    refused(s, "start_battle", battle="F")  # no draw yet
    s2 = step(s, "draw", seed=1)
    q = next(b for b in s2.battles if b.id == "P1")
    f = s2.final
    assert f is not None
    assert "not all known" in refused(s2, "start_battle", battle="F").message_en
    assert refused(s2, "battle_result", battle=q.id, winner=0, lines=[]).code == "not_playing"
    refused(s2, "withdraw_entry", entry=1)
    # the battle feeds the final: 6 themes (3.4), no fewer, no more, none red
    assert refused(s2, "start_battle", battle="P1", themes=["A", "B"]).code == "theme_count"
    six = ["A", "B", "C", "D", "E", "G"]
    assert refused(s2, "start_battle", battle="P1", themes=[*six, "H"]).code == "theme_count"
    assert refused(s2, "start_battle", battle="P1", themes=six, red=["A"]).code == "theme_count"
    s3 = step(s2, "start_battle", battle="P1", themes=six)
    assert refused(s3, "draw", seed=2).code == "battles_started"
    assert refused(s3, "start_battle", battle="P1", themes=["C"]).code == "not_ready"
    # the winner must alone lead
    assert refused(s3, "battle_result", battle="P1", winner=0,
                   lines=[{"score": 10}, {"score": 10}, {"score": 0}][:len(q.present)]
                   ).code == "bad_result"
    refused(s3, "nonsense")
    s4 = step(s3, "battle_result", battle="P1", winner=1,
              lines=[{"score": 10}, {"score": 40}, {"score": 0}][:len(q.present)])
    twelve = ["A", *(f"Ф{i}" for i in range(11))]
    assert refused(s4, "start_battle", battle="F", themes=twelve, red=twelve[6:]
                   ).code == "theme_used"
    twelve[0] = "Ф11"
    # the final: 12 themes, 6 of them red unless the director says otherwise
    assert refused(s4, "start_battle", battle="F", themes=twelve).code == "theme_count"
    assert refused(s4, "start_battle", battle="F", themes=twelve, red=["Ф1"]
                   ).code == "theme_count"
    s5 = step(s4, "configure", final_red=1)
    assert step(s5, "start_battle", battle="F", themes=twelve, red=["Ф1"]).final.started  # type: ignore[union-attr]
    assert s4.battle("F").status == READY  # type: ignore[union-attr]


def test_a_field_of_one_is_refused_at_the_draw() -> None:
    s = entered(1)
    err = refused(s, "draw", seed=1)
    assert "at least 2" in err.message_en


def test_walkover_advances_the_one_who_came_and_twos_play_on() -> None:
    s = step(entered(9, teams=9), "draw", seed=3)
    b = s.battle("3.1")
    assert b is not None and b.status == READY
    p = list(b.present)
    s = step(s, "walkover", battle="3.1", absent=[p[0]])
    b = s.battle("3.1")
    assert b is not None and b.status == READY and len(b.present) == 2
    s = step(s, "walkover", battle="3.1", absent=[p[1]])
    b = s.battle("3.1")
    assert b is not None and b.status == DONE and b.result and b.result.walkover
    assert s.battle("F").seats[0] == p[2]  # type: ignore[union-attr]
    assert refused(s, "walkover", battle="3.2", absent=list(s.battle("3.2").present)
                   ).code == "bad_walkover"  # type: ignore[union-attr]


def test_replay_takes_the_winner_back_until_the_next_battle_starts() -> None:
    rng = random.Random(2)
    s = step(entered(9, teams=9), "draw", seed=3)
    s = play(s, rng)  # 3.1
    w = s.battle("3.1").result.winner  # type: ignore[union-attr]
    assert w in s.final.seats  # type: ignore[union-attr]
    s = step(s, "replay_battle", battle="3.1")
    assert s.battle("3.1").status == READY and None in s.final.seats  # type: ignore[union-attr]
    s = play(s, rng)  # 3.1 again
    s = play(s, rng)
    s = play(s, rng)
    s = step(s, "start_battle", battle="F", **theme_args(s, "F"))
    assert refused(s, "replay_battle", battle="3.1").code == "too_late"


def test_swap_before_start_and_the_team_rule() -> None:
    s = entered(82, teams=10)  # one qualification battle of 2, 80 byes
    s = step(s, "add_entry", name="Снятый", team="Команда 0")
    s = step(s, "withdraw_entry", entry=83)
    assert refused(s, "withdraw_entry", entry=83).code == "withdrawn"
    s = step(s, "draw", seed=9)
    assert all(83 not in b.seats for b in s.battles)
    q = s.battle("Q1")
    assert q is not None and len(q.present) == 2
    mate_team = s.player(q.present[1]).entry.team
    s = step(s, "add_entry", name="Запасной", team=mate_team)  # entry 84, after the draw
    assert s.in_bracket(84) is None
    # the reserve in the place of the other qualification player: two of one team
    assert refused(s, "swap_players", a=q.present[0], b=84).code == "team_rule"
    # two players of one qualification battle: nothing to swap
    assert refused(s, "swap_players", a=q.present[0], b=q.present[1]).code == "same"
    first = next(b for b in s.battles if b.status == READY and b.id != "Q1")
    bye = first.seats[0]
    assert bye is not None
    s2 = step(s, "swap_players", a=bye, b=84)
    assert 84 in s2.battle(first.id).seats  # type: ignore[union-attr]
    assert bye not in s2.battle(first.id).seats  # type: ignore[union-attr]
    s3 = step(s2, "swap_players", a=84, b=bye)
    assert s3.battle(first.id).seats == first.seats  # type: ignore[union-attr]
    s4 = step(s3, "start_battle", battle=first.id, **theme_args(s3, first.id))
    assert refused(s4, "swap_players", a=bye, b=84).code == "too_late"


def test_ties_for_second_shared_by_default_or_a_playoff_by_setting() -> None:
    rng = random.Random(5)
    for ties, expect in (("shared", [1, 2, 2]), ("extra_theme", [1, 2, 3])):
        s = step(entered(3, teams=3, final_ties=ties), "draw", seed=1)
        s = play(s, rng, tie_second=True)
        if ties == "extra_theme":
            assert not s.finished and s.battle(PLAYOFF) is not None
            s = play(s, rng)
        assert s.finished
        assert [r["place"] for r in views.places(s)] == expect


def test_the_log_folds_back_into_the_same_tournament(tmp_path) -> None:  # noqa: ANN001
    assert registry.get("tournament") is game
    rng = random.Random(7)
    with Store(tmp_path / "svoyak.db") as store:
        live = RunningGame.new(store, "tournament", game, {"title": "Кубок"})
        rows = [{"name": f"И{i}", "team": f"К{i % 6}"} for i in range(27)]
        live.handle(cmd("import_entries", entries=rows))
        live.handle(cmd("draw", seed=77))
        for _ in range(5):
            b = views.next_battles(live.state)[0]
            live.handle(cmd("start_battle", battle=b.id, **theme_args(live.state, b.id)))
            scores = rng.sample(range(0, 100, 10), 3)
            live.handle(cmd("battle_result", battle=b.id, winner=scores.index(max(scores)),
                            lines=[{"score": x} for x in scores]))
        again = RunningGame.resume(store, live.game, game)
        assert again.state == live.state
        assert views.view(again.state, "director") == views.view(live.state, "director")


def test_a_battle_ended_early_waits_for_the_directors_decision() -> None:
    s = step(entered(9, teams=9), "draw", seed=3)
    s = step(s, "start_battle", battle="3.1", **theme_args(s, "3.1"))
    assert refused(s, "award_leader", battle="3.1", reason="x").code == "not_stopped"
    assert refused(s, "battle_stopped", battle="3.1", scores=[1]).code == "bad_result"
    s = step(s, "battle_stopped", battle="3.1", scores=[30, 50, 10])
    b = s.battle("3.1")
    assert b is not None and b.status == "stopped" and b.result is None
    assert s.battle("F").seats[0] is None  # type: ignore[union-attr]  # nobody went on
    j = views.battle_json(s, b)
    assert j["stopped"] == {"scores": [30, 50, 10], "leader": b.present[1]}
    assert views.view(s, "board")["stopped"] == ["3.1"]
    assert refused(s, "battle_result", battle="3.1", winner=1,
                   lines=[{"score": 1}, {"score": 2}, {"score": 0}]).code == "not_playing"
    assert refused(s, "award_leader", battle="3.1", reason="  ").code == "no_reason"
    done = step(s, "award_leader", battle="3.1", reason="свет отключили, времени нет")
    b = done.battle("3.1")
    assert b is not None and b.result is not None and b.result.winner == b.present[1]
    assert b.result.awarded == "свет отключили, времени нет"
    assert done.battle("F").seats[0] == b.present[1]  # type: ignore[union-attr]
    assert [x.score for x in b.result.lines] == [30, 50, 10]
    # or a replay: the battle is ready again, its themes stay used
    again = step(s, "replay_battle", battle="3.1")
    assert again.battle("3.1").status == READY  # type: ignore[union-attr]
    # a shared lead cannot be awarded
    tied = step(step(s, "replay_battle", battle="3.1"), "start_battle", battle="3.1",
                **theme_args(again, "3.1"))
    tied = step(tied, "battle_stopped", battle="3.1", scores=[40, 40, 10])
    assert refused(tied, "award_leader", battle="3.1", reason="x").code == "no_leader"


def test_players_out_have_their_places_as_soon_as_their_stage_is_over() -> None:
    rng = random.Random(4)
    s = step(entered(28), "draw", seed=5)  # a preliminary battle of 2, the 1/9, 1/3, final
    assert views.places(s) == []
    s = play(s, rng)  # the preliminary battle: its loser is 28th at once
    (row,) = views.places(s)
    assert (row["place"], row["range_from"], row["range_to"], row["stage"]) == (
        28, 28, 28, "preliminary")
    for _ in range(8):  # eight of the nine 1/9 battles: that stage is not over yet
        s = play(s, rng)
    assert [r["stage"] for r in views.places(s)] == ["preliminary"]
    s = play(s, rng)
    out = [r for r in views.places(s) if r["stage"] == "1/9"]
    assert len(out) == 18 and {(r["range_from"], r["range_to"]) for r in out} == {(10, 27)}
    assert min(r["place"] for r in out) == 10 and max(r["place_to"] for r in out) == 27
    seats = [x for st_ in views.stages_json(s) if st_["key"] == "1/9"
             for b in st_["battles"] for x in b["seats"]]
    assert sorted(x.get("out", "") for x in seats).count("10–27") == 18
    assert all("out" not in x for x in seats if x["winner"])
    assert {r["entry"] for r in views.standings(s)} == {r["entry"] for r in views.places(s)}
    while not s.finished:
        s = play(s, rng)
    table = views.places(s)
    assert len(table) == 28 and [r["place"] for r in table][:1] == [1]
    assert {(r["range_from"], r["range_to"]) for r in table if r["stage"] == "1/3"} == {(4, 9)}


def test_a_result_says_where_it_was_played_and_old_logs_without_it_still_fold() -> None:
    """``battle_result`` and ``battle_stopped`` carry their source (box, game, room) into
    the tournament's own event; a battle given to a room names it in ``battle_started``.
    An event logged before there was a source folds as it did (no source)."""
    s = step(entered(9, teams=9), "draw", seed=3)
    s = step(s, "start_battle", battle="3.1", room="room2", **theme_args(s, "3.1"))
    b = s.battle("3.1")
    assert b is not None and b.room == "room2" and b.game is None
    lines = [{"score": 50}, {"score": 20}, {"score": 10}]
    for bad in ({"box": 7}, {"game": "1"}, {"room": ""}, {"where": "x"}, {}, "room2",
                {"game": True}, {"box": "b" * 65}):
        assert refused(s, "battle_result", battle="3.1", winner=0, lines=lines,
                       source=bad).code == "bad_source", bad
    assert refused(s, "start_battle", battle="3.2", room=3,
                   **theme_args(s, "3.2")).code == "bad_room"
    source = {"box": "boxA", "game": 4, "room": "room2"}
    events = game.decide(s, cmd("battle_result", battle="3.1", winner=0, lines=lines,
                                source=source))
    assert events[0].type == "battle_finished" and events[0].data["source"] == source
    done = fold(game, s, events)
    res = done.battle("3.1").result  # type: ignore[union-attr]
    assert res is not None and res.source is not None and res.source.to_json() == source
    assert views.battle_json(done, done.battle("3.1"))["source"] == source  # type: ignore
    stopped = game.decide(s, cmd("battle_stopped", battle="3.1", scores=[1, 2, 3],
                                 source=source))
    assert stopped[0].data["source"] == source
    # an old log: the same event without a source
    old = dict(events[0].data)
    del old["source"]
    from appliance.rules.protocol import Event
    folded = game.evolve(s, Event("battle_finished", 0, old))
    res = folded.battle("3.1").result  # type: ignore[union-attr]
    assert res is not None and res.source is None and res.winner == b.present[0]
    assert views.battle_json(folded, folded.battle("3.1"))["source"] is None  # type: ignore
    # a replay takes the room back with the result
    again = step(done, "replay_battle", battle="3.1")
    assert again.battle("3.1").room is None  # type: ignore[union-attr]
