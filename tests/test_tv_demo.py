"""The full scripted demo game (3 rounds and the final of the demo package) through the real
`svoyak replay` command, to final scores worked out by hand from the script's story."""

from __future__ import annotations

import json
import subprocess
import sys

from tv_demo_script import EXAMPLE, ROOT, build, render

ANYA, BORIS, VERA = 0, 1, 2


def svoyak(*args):
    out = subprocess.run([sys.executable, "-m", "svoyak.cli", *map(str, args)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out


def test_the_example_file_is_what_the_script_builds():
    assert EXAMPLE.read_text(encoding="utf-8") == render(build())


def test_demo_game_replays_to_the_scores_worked_out_by_hand(tmp_path):
    db = tmp_path / "svoyak.db"
    out = svoyak("replay", "--strict", "--db", db, EXAMPLE)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert "0 refused" in out.stderr

    # Round 1 (100..500)
    r1_anya = 1500 + 400 + (100 + 200 + 300) - 400 - 500  # Столицы, Животные 400, Музыка, Физика
    r1_boris = 100 + 200 + 1500 - 1800 - 400 + 500  # ..., auction all-in lost, Физика
    r1_vera = -500 - 400 + 1500 + 500 - 400  # cat at 500, 400, Литература, Музыка 500, Физика
    # Round 2 (200..1000)
    r2_anya = 200 + 400 + 1000 + 600 + 1000 + 200 - 600 + 800 + 1000  # auction won at 1000
    r2_boris = 3000 + 1000 - 600 + 1000 + 1000 + 200 + 400  # Спорт, cat priced 1000
    r2_vera = 600 + 400 + 400 + 600 + 800 + 2 * 1000 + 600  # no-risk 1000 doubled
    # Round 3 (300..1500)
    r3_anya = 900 - 900 + 300 + 600 + 1500  # Живопись 1500 rejudged right
    r3_boris = 1500 + 600 - 900 + 2500 + 300 + 600  # auction won at 2500
    r3_vera = 300 + 600 - 1500 - 900 + 900 + 1200 + 1200 + 1500  # cat 1500 lost
    # Final: bets 8600 (all-in) right, 8000 wrong, 2000 right
    anya = r1_anya + r2_anya + r3_anya + 8600
    boris = r1_boris + r2_boris + r3_boris - 8000
    vera = r1_vera + r2_vera + r3_vera + 2000
    assert (r1_anya + r2_anya + r3_anya, r1_boris + r2_boris + r3_boris) == (8600, 10700)

    assert result["scores"] == [anya, boris, vera] == [17200, 2700, 11400]
    assert result["places"] == [1, 3, 2] and result["winner"] == ANYA
    assert result["finished"] is True and result["players"] == ["Аня", "Борис", "Вера"]
    stats = result["stats"]
    assert stats[ANYA]["points_by_round"] == {"Первый раунд": r1_anya, "Второй раунд": r2_anya,
                                              "Третий раунд": r3_anya, "Финал": 8600}
    assert stats[BORIS]["points_by_round"]["Первый раунд"] == r1_boris
    assert stats[VERA]["points_by_round"]["Второй раунд"] == r2_vera
    assert [s["false_starts"] for s in stats] == [0, 1, 0]
    # the script presses at 180 (Аня), 210 (Борис), 240 ms (Вера) after the lamp, except
    # in the undone scene of round 1 (Аня 150, Борис 200)
    assert [s["reaction_best_ms"] for s in stats] == [150.0, 200.0, 240.0]
    assert stats[VERA]["reaction_mean_ms"] == 240.0
    assert 150.0 < stats[ANYA]["reaction_mean_ms"] < 180.0

    log = json.loads(svoyak("log", "export", "last", "--db", db).stdout)
    types = [e["type"] for e in log["events"]]
    for kind in ("undone", "rejudged", "cat_given", "cat_priced", "auction_won", "theme_removed",
                 "round_started", "final_started", "game_over"):
        assert kind in types, kind
    assert types.count("round_ended") == 3 and types.count("theme_removed") == 6
    assert log["status"] == "finished"
