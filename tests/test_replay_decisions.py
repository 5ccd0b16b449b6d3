"""`svoyak replay`'s final JSON carries what the rules decided, for both formats: scores, the
chooser, the final's players, removed and remaining themes, bets once revealed, the shootout
and extra-theme players, the winner."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from appliance.rules import registry
from appliance.rules.protocol import Event, fold

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "logs"


def replay(script: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "svoyak.cli", "replay", script], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def folded(name: str) -> tuple[object, object]:
    data = json.loads((FIXTURES / f"{name}.json").read_text("utf-8"))
    rules = registry.get(data["rules"])
    events = [Event(e["type"], e["t_ns"], e["payload"]) for e in data["events"]]
    return rules, fold(rules, rules.initial(data["setup"]), events)


def test_tv_final_json_has_the_final_as_decided():
    s = replay("docs/examples/tv-demo.jsonl")
    assert s["scores"] == [17200, 2700, 11400] and s["winner"] == 0
    f = s["final"]
    assert f["players"] == [0, 1, 2] and f["remaining"] == ["Мировая литература"]
    assert [r["by"] for r in f["removed"]] == [0, 2, 1, 0, 2, 1]  # Аня (lowest) first
    assert f["bets"] == {"0": 8600, "1": 8000, "2": 2000}
    assert s["shootout"] is None and "chooser" in s


def test_tv_bets_are_shown_only_once_revealed():
    rules, state = folded("tv-demo")
    # fold the same log up to the first judged final answer: only that bet is revealed
    data = json.loads((FIXTURES / "tv-demo.json").read_text("utf-8"))
    events = [Event(e["type"], e["t_ns"], e["payload"]) for e in data["events"]]
    first_final_judgement = max(i for i, e in enumerate(events) if e.type == "judged") - 2
    s = fold(rules, rules.initial(data["setup"]), events[:first_final_judgement + 1])
    bets = rules.summary(s)["final"]["bets"]
    assert list(bets) == ["2"] and bets["2"] == 2000  # Вера's, judged first


def test_tv_shootout_players_and_chooser():
    rules, state = folded("tv-club")
    s = rules.summary(state)
    assert s["shootout"] == {"players": [0, 2], "themes": 1} and s["winner"] == 2


def test_battle_final_json_has_the_extra_theme_players():
    s = replay("docs/examples/battle-tie.jsonl")
    assert s["scores"] == [20, 40] and s["winner"] == 1
    assert s["extra_themes"] == [{"theme": "Реки", "players": [0, 1]}]
    rules, state = folded("battle-corners")
    b = rules.summary(state)
    assert b["extra_themes"][0]["players"] == [0, 1, 2] and b["contenders"] == [0, 1, 2]
