"""`svoyak replay` and `svoyak log export`, run as the real command on a real file; the
script runner's time rules on the tiny engine; and the property that the stored log of any
legal battle folds back into the state the loop had."""

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import tiny_engine
from drive import FakeClock, arg_strategy, settle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from appliance.rules import registry
from appliance.rules.protocol import Command, Event, fold
from appliance.runtime import replay
from appliance.runtime.loop import END_GAME, GameLoop
from appliance.runtime.store import FINISHED, Store

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "battle.jsonl"
MS = 1_000_000

registry.register("tiny", tiny_engine)


def svoyak(*args, check=True):
    out = subprocess.run([sys.executable, "-m", "svoyak.cli", *map(str, args)], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    if check:
        assert out.returncode == 0, out.stderr
    return out


def last_json(stdout):
    return json.loads(stdout.strip().splitlines()[-1])


# -- the example battle, through the real command ------------------------------------------------
def test_example_battle_final_summary():
    out = svoyak("replay", EXAMPLE)
    result = last_json(out.stdout)
    ANYA, BORIS, VERA = 0, 1, 2
    # by hand, question by question (values 10..50 of one blue theme):
    anya = +10 + 20 + 50  # Q1 right; Q2 right last in the queue; Q5 right after the re-arm
    boris = -20 - 50  # Q2 wrong first; Q5 wrong
    vera = -20 + 40  # Q2 wrong in the queue; Q4 right (a wrong verdict was undone)
    assert result["scores"] == [anya, boris, vera] == [80, -70, 20]
    assert result["places"] == [1, 3, 2]
    assert result["winner"] == ANYA and result["finished"] is True
    assert result["players"] == ["Аня", "Борис", "Вера"]

    q = result["questions"]
    assert [x["value"] for x in q] == [10, 20, 30, 40, 50]
    outcomes = [[(j["player"], j["verdict"]) for j in x["judgements"]] for x in q]
    assert outcomes == [
        [(ANYA, "right")],
        [(BORIS, "wrong"), (VERA, "wrong"), (ANYA, "right")],
        [],
        [(VERA, "right")],
        [(BORIS, "wrong"), (ANYA, "right")],
    ]
    # Q1: Boris's press arrived first, Anya's was stamped 0.5 ms earlier and wins
    race1 = {r["player"]: r for r in q[0]["race"]}
    assert race1[ANYA]["status"] == "winner" and race1[BORIS]["status"] == "beaten"
    assert race1[BORIS]["ms_after_lamp"] - race1[ANYA]["ms_after_lamp"] == pytest.approx(0.5)
    # Q2: Boris pressed before the reading ended: "read only the short word"
    assert [x["short_word"] for x in q] == [False, True, False, False, False]
    assert [r["status"] for r in q[1]["race"]] == ["winner", "queued", "queued"]
    # Q3: nobody pressed within the 7 s window
    assert q[2]["closed"] == "no_press" and q[2]["answered"] == []

    stats = {s["seat"]: s for s in result["statistics"]}
    assert [(stats[p]["right"], stats[p]["wrong"], stats[p]["points"]) for p in range(3)] == [
        (3, 0, anya), (0, 2, boris), (1, 1, vera)]
    # the refused lines are reported with their numbers; the run went on
    assert "line 23: refused (unknown_player)" in out.stderr
    assert "line 27: refused (nobody_answers)" in out.stderr


def test_strict_stops_at_the_first_refusal(tmp_path):
    db = tmp_path / "svoyak.db"
    out = svoyak("replay", EXAMPLE, "--strict", "--db", db, check=False)
    assert out.returncode == 1
    assert "line 23" in out.stderr and "line 27" not in out.stderr
    partial = last_json(out.stdout)
    assert partial["finished"] is False and partial["scores"] == [30, -20, -20]
    with Store(db) as s:
        assert s.game(1).status == "running"


def test_log_export_is_the_protocol_and_folds_back_to_the_summary(tmp_path):
    data = tmp_path / "box"
    summary = last_json(svoyak("replay", EXAMPLE, "--data", data).stdout)
    exported = json.loads(svoyak("log", "export", "1", "--format", "json", "--data", data).stdout)
    assert exported["status"] == FINISHED and exported["rules"] == "battle"
    assert exported["summary"] == summary  # end_game stored the final summary
    events = exported["events"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    # a press keeps its own stamp: Anya's earlier press was logged after Boris's
    presses = [(e["payload"]["player"], e["t_ns"]) for e in events if e["type"] == "press"]
    assert presses[:2] == [(1, 6_000_500_000), (0, 6_000_000_000)]
    assert all(e["wall"].endswith("+00:00") for e in events)
    types = [e["type"] for e in events]
    assert types[0] == "announced" and types[-1] == "battle_finished"
    assert {"press", "answerer", "judged", "short_word", "undone", "question_closed"} <= set(types)

    rules = registry.get("battle")
    state = fold(rules, rules.initial(exported["setup"]),
                 [Event(e["type"], e["t_ns"], e["payload"]) for e in events])
    assert rules.summary(state) == summary

    text = svoyak("log", "export", "last", "--format", "csv", "--db", data / "svoyak.db").stdout
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == ["seq", "t_ns", "wall", "type", "payload"]
    assert [(int(r["seq"]), r["type"], json.loads(r["payload"])) for r in rows] == [
        (e["seq"], e["type"], e["payload"]) for e in events]

    (listed,) = svoyak("log", "games", "--data", data).stdout.splitlines()
    assert json.loads(listed) | {"created": None} == {
        "game": 1, "rules": "battle", "created": None, "status": FINISHED,
        "finished": exported["finished"], "events": len(events)}


def test_export_errors_name_the_problem(tmp_path):
    out = svoyak("log", "export", "1", "--db", tmp_path / "none.db", check=False)
    assert out.returncode != 0 and "none.db" in out.stderr
    assert not (tmp_path / "none.db").exists()
    svoyak("replay", EXAMPLE, "--db", tmp_path / "x.db")
    out = svoyak("log", "export", "7", "--db", tmp_path / "x.db", check=False)
    assert out.returncode == 1 and "no game 7" in out.stderr
    garbage = tmp_path / "junk.db"
    garbage.write_bytes(b"\x00garbage" * 100)
    out = svoyak("log", "export", "1", "--db", garbage, check=False)
    assert out.returncode == 2 and str(garbage) in out.stderr


@pytest.mark.parametrize("script, message", [
    ("", "empty"),
    ('{"type": "announce", "t_ns": 1}\n', "first line must be"),
    ('{"type": "new_game", "rules": "chess", "setup": {}}\n', "Unknown rules 'chess'"),
    ('{"type": "new_game", "rules": "battle", "setup": {"players": ["solo"]}}\n',
     "2 or 3 named players"),
    ("{oops\n", "not JSON"),
])
def test_scripts_that_cannot_run(tmp_path, script, message):
    path = tmp_path / "s.jsonl"
    path.write_text(script)
    out = svoyak("replay", path, check=False)
    assert out.returncode == 2 and message in out.stderr and str(path) in out.stderr


# -- the runner's time rules (tiny engine, in process) ----------------------------------------
def run_lines(tmp_path, *lines, **kw):
    head = {"type": "new_game", "rules": "tiny", "setup": {"players": ["A", "B"]}}
    with Store(tmp_path / "svoyak.db") as store:
        result = replay.run([json.dumps(head), *map(json.dumps, lines)], store, **kw)
        return result, store.events(result.session.game)


def test_timeouts_come_before_a_command_that_arrives_after_them(tmp_path):
    result, events = run_lines(
        tmp_path,
        {"type": "arm", "t_ns": 10 * MS, "ms": 5},  # deadline 15 ms
        {"type": "press", "t_ns": 12 * MS, "at_ns": 14 * MS, "player": 0},  # before: counts
        {"type": "press", "t_ns": 13 * MS, "at_ns": 15 * MS, "player": 1},  # at it: too late
    )
    assert [(e.type, e.t_ns) for e in events] == [
        ("armed", 10 * MS), ("pressed", 12 * MS), ("expired", 15 * MS)]
    assert [r.line for r in result.rejections] == [4]


def test_drain_runs_the_clock_on_unless_told_not_to(tmp_path):
    arm = {"type": "arm", "t_ns": MS, "ms": 7000}
    result, events = run_lines(tmp_path, arm)
    assert [e.type for e in events] == ["armed", "expired"]
    assert result.summary["expired"] == 1
    result, events = run_lines(tmp_path, arm, drain=False)
    assert [e.type for e in events] == ["armed"]


def test_lines_out_of_arrival_order_and_bad_lines_are_refused_not_fatal(tmp_path):
    seen = []
    result, events = run_lines(
        tmp_path,
        {"type": "add", "t_ns": 50, "player": 0, "points": 10},
        {"type": "add", "t_ns": 40, "player": 0, "points": 10},  # back in time
        {"type": "add", "player": 0, "points": 10},  # no t_ns
        [1, 2],  # not an object
        {"type": "new_game", "rules": "tiny", "t_ns": 60},
        {"type": "add", "t_ns": 70, "player": 1, "points": 5},
        {"type": "end_game", "t_ns": 80},
        {"type": "add", "t_ns": 90, "player": 1, "points": 5},  # after the end
        on_rejection=seen.append,
    )
    assert [r.line for r in seen] == [3, 4, 5, 6, 9]
    assert seen[-1].refused.code == "finished"
    assert result.summary["scores"] == [10, 5] and result.session.finished


# -- the stored log of any legal battle is the loop's state --------------------------------------
BATTLE = {"players": ["Аня", "Борис", "Вера"],
          "themes": [{"name": "Столицы"}, {"name": "Реки", "red": True}],
          "extra_themes": [{"name": "Горы"}]}


def battle_arg(name, spec):
    if isinstance(spec, dict) and spec.get("type") == "text":  # a theme needs a real name
        return st.text("абвгдежзик ", min_size=1, max_size=12).filter(str.strip)
    if name == "score":  # keep corrections near real scores
        return st.integers(-300, 300)
    return arg_strategy(spec)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_replaying_a_battle_log_gives_the_state_the_loop_had(tmp_path_factory, data):
    pytest.importorskip("appliance.rules.battle.game")
    path = tmp_path_factory.mktemp("battle") / "svoyak.db"
    clock = FakeClock(10**12)
    lp = GameLoop(Store(path), clock).start()
    try:
        g = lp.new_game("battle", BATTLE).result(5)
        for _ in range(data.draw(st.integers(1, 60), label="steps")):
            clock.set(clock() + data.draw(st.sampled_from([0, 1, 3, 20, 900, 4000, 8000]),
                                          label="ms") * MS)
            lp.wake()
            settle(lp, clock)
            action = data.draw(st.sampled_from(lp.legal_actions()), label="action")
            args = {n: data.draw(battle_arg(n, s), label=n) for n, s in action.args.items()}
            out = lp.submit(Command(action.type, clock(), args, action.by, clock())).result(5)
            assert out.refused is None, (action.type, args, out.refused.message_en)
            if action.type == END_GAME:
                break
        live = lp.snapshot(g)[1]
        live_summary = lp.snapshot(g)[0].summary(live)
    finally:
        lp.stop()
    with Store(path) as again:
        rules = registry.get("battle")
        replayed = fold(rules, rules.initial(again.game(g).setup), again.events(g))
        assert replayed == live
        assert rules.summary(replayed) == live_summary
        resumed = GameLoop(again, FakeClock(5))
        resumed.resume()
        if not lp.is_finished(g):
            assert resumed.snapshot(g)[1] == live


def test_a_replayed_game_left_open_is_resumed_by_the_loop(tmp_path):
    """Script and box share the log: without its end_game line the example stays running,
    and a game loop opening the file resumes it in the state the script left."""
    lines = [x for x in EXAMPLE.read_text().splitlines() if '"end_game"' not in x]
    out = subprocess.run([sys.executable, "-m", "svoyak.cli", "replay", "-", "--db",
                          tmp_path / "svoyak.db"], input="\n".join(lines), cwd=ROOT,
                         capture_output=True, text=True, timeout=60, check=True)
    summary = last_json(out.stdout)
    lp = GameLoop(Store(tmp_path / "svoyak.db"), FakeClock(5)).start()
    try:
        assert lp.current == 1
        rules, state = lp.snapshot()
        assert rules.summary(state) == summary
        assert lp.end_game().result(5).refused is None
    finally:
        lp.stop()
