"""Old logs fold to the state they folded to when they were written.

`tests/fixtures/logs/*.json` hold event logs recorded with the engines as they were before
the rules were reorganised (see `tests/fixtures/logs/record.py`), each with its summary,
its views per role, the legal action types and the next deadline at the end. Folding the
same events with today's engines must give the same: the log is the truth, so a refactor
(or a new rule) may add to what a state shows, never change what an old game was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from appliance.rules import registry
from appliance.rules.protocol import Event, fold

FIXTURES = sorted(Path(__file__).parent.joinpath("fixtures", "logs").glob("*.json"))


def contains(actual: Any, expected: Any, where: str = "") -> list[str]:
    """Where `actual` differs from `expected`, allowing only added keys in objects."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object, got {actual!r}"]
        out = []
        for k, v in expected.items():
            if k not in actual:
                out.append(f"{where}.{k}: missing")
            else:
                out += contains(actual[k], v, f"{where}.{k}")
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: expected {expected!r}, got {actual!r}"]
        return [d for i, (a, e) in enumerate(zip(actual, expected, strict=True))
                for d in contains(a, e, f"{where}[{i}]")]
    return [] if actual == expected else [f"{where}: expected {expected!r}, got {actual!r}"]


def test_there_are_fixtures_of_both_formats():
    rules = {json.loads(p.read_text("utf-8"))["rules"] for p in FIXTURES}
    assert rules == {"tv", "battle"}
    assert len(FIXTURES) >= 6


def test_contains_finds_changes():
    assert contains({"a": [1, {"b": 2}], "c": 3}, {"a": [1, {"b": 2}]}) == []
    assert contains({"a": [1, {"b": 3}]}, {"a": [1, {"b": 2}]}) == [".a[1].b: expected 2, got 3"]
    assert contains({"a": [1]}, {"a": [1, 2]})
    assert contains({}, {"a": None}) == [".a: missing"]


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_old_log_folds_to_the_same_state(path: Path):
    data = json.loads(path.read_text("utf-8"))
    rules = registry.get(data["rules"])
    events = [Event(e["type"], e["t_ns"], e["payload"]) for e in data["events"]]
    state = fold(rules, rules.initial(data["setup"]), events)
    # Through JSON, as the log and the screens see them.
    got = json.loads(json.dumps({
        "summary": rules.summary(state),
        "views": {role: {k: v for k, v in rules.view(state, role).items() if k != "actions"}
                  for role in data["folds_to"]["views"]},
        "next_deadline": rules.next_deadline(state),
    }, ensure_ascii=False))
    want = data["folds_to"]
    diffs = contains(got, {k: want[k] for k in ("summary", "views", "next_deadline")})
    assert not diffs, "\n".join(diffs[:20])
    legal = {a.type for a in rules.legal_actions(state)}
    assert set(want["legal"]) <= legal
