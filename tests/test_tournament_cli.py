"""`svoyak tournament …` through the real entry point, on a real data directory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SVOYAK = [sys.executable, "-m", "svoyak.cli"]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SVOYAK, "tournament", *args], capture_output=True, text=True,
                          timeout=60, cwd=cwd)


def csv_file(tmp_path: Path, rows: list[tuple[str, str]], encoding: str = "utf-8") -> Path:
    p = tmp_path / "entries.csv"
    p.write_bytes(("name,team,city,rating\n" + "".join(f"{n},{t},,\n" for n, t in rows))
                  .encode(encoding))
    return p


def test_draw_prints_the_bracket_json_last(tmp_path: Path) -> None:
    path = csv_file(tmp_path, [(f"Игрок {i}", f"Команда {i % 12}") for i in range(100)],
                    "cp1251")
    out = run("draw", str(path), "--seed", "5", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(doc) == {"seed", "bracket", "stages"}
    assert doc["seed"] == 5 and doc["bracket"] == 81
    assert [s["name"] for s in doc["stages"]] == ["qualification", "1/27", "1/9", "1/3",
                                                 "final"]
    q = doc["stages"][0]
    assert len(q["battles"]) == 10 and q["themes"] == 4
    for b in q["battles"]:
        assert set(b) == {"id", "players", "feeds"} and None not in b["players"]
    assert doc["stages"][-1]["battles"] == [{"id": "F", "players": [None, None, None],
                                             "feeds": None}]
    names = [p for s in doc["stages"] for b in s["battles"] for p in b["players"] if p]
    assert sorted(names) == sorted(f"Игрок {i}" for i in range(100))
    again = run("draw", str(path), "--seed", "5", "--json")
    assert again.stdout == out.stdout


def test_an_impossible_field_exits_2_naming_the_team(tmp_path: Path) -> None:
    path = csv_file(tmp_path, [(f"Игрок {i}", "Физтех" if i < 90 else f"К{i}")
                               for i in range(100)])
    out = run("draw", str(path), "--json")
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Физтех" in lines[0] and "90" in lines[0]


def test_bad_csv_exits_2_with_the_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.csv"
    p.write_text("name,team\nАнна,\n", encoding="utf-8")
    out = run("draw", str(p))
    assert out.returncode == 2 and "line 2" in out.stderr and "строка 2" in out.stderr


def test_create_draw_show_report_over_a_data_directory(tmp_path: Path) -> None:
    path = csv_file(tmp_path, [(f"И{i}", f"К{i % 4}") for i in range(9)])
    data = str(tmp_path / "data")
    made = run("create", "--title", "Кубок", "--entries", str(path), "--data", data)
    assert made.returncode == 0, made.stderr
    t = made.stdout.strip()
    drawn = run("draw-stored", t, "--seed", "3", "--data", data)
    assert drawn.returncode == 0, drawn.stderr
    doc = json.loads(drawn.stdout.splitlines()[-1])
    assert doc["bracket"] == 9 and doc["seed"] == 3
    start = run("command", t, json.dumps({"type": "start_battle", "battle": "3.1",
                                          "themes": ["Реки"]}), "--data", data)
    assert start.returncode == 2 and "6" in start.stderr  # a 1/3 final plays 6 themes
    six = ["Реки", "Горы", "Моря", "Озёра", "Пустыни", "Леса"]
    start = run("command", t, json.dumps({"type": "start_battle", "battle": "3.1",
                                          "themes": six}), "--data", data)
    assert start.returncode == 0, start.stderr
    res = run("command", t, json.dumps({"type": "battle_result", "battle": "3.1", "winner": 2,
                                        "lines": [{"score": 10}, {"score": 20},
                                                  {"score": 90}]}), "--data", data)
    assert res.returncode == 0, res.stderr
    bad = run("command", t, json.dumps({"type": "battle_result", "battle": "3.1",
                                        "winner": 0, "lines": []}), "--data", data)
    assert bad.returncode == 2 and "not in play" in bad.stderr
    shown = run("show", "--data", data)
    assert "Кубок" in shown.stdout and "3.1 [done]" in shown.stdout
    audit = run("audit", t, "--data", data)
    assert audit.returncode == 0, audit.stderr
    assert json.loads(audit.stdout.splitlines()[-1])["ok"] is True
    report = run("report", t, "--csv", "-", "--data", data)
    assert report.returncode == 0 and report.stdout.startswith("place,place_to,name")


def test_draw_of_a_two_round_qualification_and_a_seeded_draw(tmp_path: Path) -> None:
    """300 entries: two qualification rounds, a round-2 battle shows null for the seat its
    round-1 battle fills and the names of its byes; `--seeded` is recorded in the draw."""
    path = csv_file(tmp_path, [(f"Игрок {i}", f"Команда {i % 40}") for i in range(300)])
    out = run("draw", str(path), "--seed", "9", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert [s["name"] for s in doc["stages"]] == ["qualification 1", "qualification 2",
                                                 "1/27", "1/9", "1/3", "final"]
    q1, q2 = doc["stages"][0]["battles"], doc["stages"][1]["battles"]
    assert len(q1) == 29 and len(q2) == 81 and doc["bracket"] == 81
    ids2 = {b["id"] for b in q2}
    for b in q1:
        assert None not in b["players"] and b["feeds"] in ids2
    fed = {b["feeds"] for b in q1}
    for b in q2:
        assert b["players"].count(None) == (1 if b["id"] in fed else 0)
        assert b["feeds"].startswith("27.")
    data = str(tmp_path / "data")
    t = run("create", "--entries", str(path), "--data", data).stdout.strip()
    drawn = run("draw-stored", t, "--seed", "9", "--seeded", "--data", data)
    assert drawn.returncode == 0, drawn.stderr
    shown = json.loads(run("show", t, "--json", "--data", data).stdout.splitlines()[-1])
    assert shown["seeded"] is True
    audit = run("audit", t, "--data", data)
    assert json.loads(audit.stdout.splitlines()[-1])["ok"] is True
