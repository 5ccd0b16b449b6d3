"""Random days of a tournament: starts, results, no-shows, replays, swaps and nonsense in
any order. Refusals change nothing, the log folds back into the same state, winners sit
where the feeding rule says, and a finished tournament places everyone once."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as hs
from tournament_kit import theme_args

from appliance.rules.protocol import Command, Refused, fold
from appliance.rules.tournament import game, views
from appliance.rules.tournament.state import DONE, PLAYING, READY, Tournament


def check_invariants(s: Tournament) -> None:
    for b in s.battles:
        if b.result is not None and b.drawn.feeds:
            nxt = s.battle(b.drawn.feeds)
            assert nxt is not None and nxt.seats[b.drawn.feeds_seat] == b.result.winner  # type: ignore[index]
        if b.status == READY or b.status == PLAYING:
            assert None not in b.seats
    # an entry sits in at most one battle that has not been played
    open_seats = [e for b in s.battles if b.result is None for e in b.seats if e is not None]
    assert len(open_seats) == len(set(open_seats))
    assert len(set(s.used_themes)) == len(s.used_themes)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=hs.integers(3, 30), seed=hs.integers(0, 2**31), data=hs.data())
def test_random_days_keep_the_tournament_sound(n: int, seed: int, data: Any) -> None:
    s = game.initial({"final_ties": data.draw(hs.sampled_from(["shared", "extra_theme"]))})
    rows = [{"name": f"P{i}", "team": f"T{i % max(3, n // 2)}"} for i in range(n)]
    log = list(game.decide(s, Command("import_entries", 0, {"entries": rows})))
    s = fold(game, s, log)
    events = game.decide(s, Command("draw", 0, {"seed": seed}))
    log += events
    s = fold(game, s, events)
    theme = 0
    for _ in range(data.draw(hs.integers(0, 200))):
        ready = [b for b in s.battles if b.status == READY]
        playing = [b for b in s.battles if b.status == PLAYING]
        done = [b for b in s.battles if b.status == DONE]
        progress: list[dict[str, Any]] = []
        choices: list[dict[str, Any]] = [{"type": "nonsense"},
                                         {"type": "start_battle", "battle": "F"},
                                         {"type": "draw", "seed": 1}]
        for b in ready:
            theme += 1
            args = {k: [f"{x} {theme}" for x in v] for k, v in theme_args(s, b.id).items()}
            progress.append({"type": "start_battle", "battle": b.id, **args})
            choices.append({"type": "walkover", "battle": b.id, "absent": [b.present[0]]})
        for b in playing:
            k = len(b.present)
            scores = data.draw(hs.lists(hs.integers(-5, 30).map(lambda x: 10 * x),
                                        min_size=k, max_size=k))
            w = scores.index(max(scores))
            progress.append({"type": "battle_result", "battle": b.id, "winner": w,
                             "lines": [{"score": x} for x in scores]})
        for b in done + playing:
            choices.append({"type": "replay_battle", "battle": b.id})
        ids = [p.id for p in s.players]
        choices.append({"type": "swap_players", "a": data.draw(hs.sampled_from(ids)),
                        "b": data.draw(hs.sampled_from(ids))})
        # mostly the day going on, sometimes a correction or nonsense
        go_on = progress and data.draw(hs.integers(0, 4)) > 0
        obj = data.draw(hs.sampled_from(progress if go_on else choices + progress))
        cmd = Command(obj["type"], 0, {k: v for k, v in obj.items() if k != "type"})
        before = s
        try:
            events = game.decide(s, cmd)
        except Refused as r:
            assert r.message_ru and r.message_en
            assert s == before
            continue
        s = fold(game, s, events)
        log += events
        check_invariants(s)
        if s.finished:
            break
    event("finished" if s.finished else "not finished")
    assert fold(game, game.initial({"final_ties": s.settings.final_ties}), log) == s
    if s.finished:
        placed = [r["entry"] for r in views.places(s)]
        assert sorted(placed) == sorted(p.id for p in s.players)
        assert views.places(s)[0]["place"] == 1
