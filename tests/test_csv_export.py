"""Every CSV the box writes is safe to open in a spreadsheet (issue 27): a text cell that
begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is prefixed with an
apostrophe; numbers (a negative score) stay numbers. Checked on the public results CSV
over HTTP, on ``svoyak tournament report --csv`` and ``svoyak log export --format csv``, and
on the entries list, each file read back with Python's `csv`."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest
from tournament_kit import theme_args
from webui_kit import make_kit

from appliance import sheets
from appliance.rules.tournament import entries as en
from appliance.rules.tournament import views
from appliance.rules.tournament.views import CSV_COLUMNS

HOSTILE = ['=HYPERLINK("file:///etc/passwd","открыть")', "+cmd|' /C calc'!A0", "-1+1",
           "@SUM(1+1)*cmd|' /C calc'!A0", "\t=1+1", "-10"]
NUMERIC = {"place", "place_to", "battles", "right", "wrong", "silent", "points", "extra",
           "reaction_mean_ms", "reaction_best_ms"}
SVOYAK = [sys.executable, "-m", "svoyak.cli"]


def assert_inert(text: str, numeric: set[str] = frozenset()) -> list[list[str]]:  # type: ignore[assignment]
    """Each cell of the CSV: a number in a numeric column, else text a spreadsheet shows."""
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    header = rows[0]
    for row in rows[1:]:
        for col, cell in zip(header, row, strict=True):
            if col in numeric and cell:
                float(cell)  # a number cell: cannot hold a formula
            else:
                assert not cell.startswith(sheets.FORMULA_START), (col, cell)
    return rows


def test_inert_prefixes_text_and_leaves_numbers() -> None:
    for s in HOSTILE + ["\rx", "@"]:
        assert sheets.inert(s) == "'" + s and sheets.restore(sheets.inert(s)) == s
    for s in ("Иван", "'quoted", "", "1e+06", "a=b"):
        assert sheets.inert(s) == s and sheets.restore(s) == s
    assert sheets.inert(-10) == -10 and sheets.inert(-0.5) == -0.5 and sheets.inert(None) is None


def test_entries_csv_is_inert_and_reads_back() -> None:
    rows = [en.Entry(name, "=team", "-город", 5.0) for name in HOSTILE[:4]]
    text = en.to_csv(rows)
    assert_inert(text, {"rating"})
    assert en.parse_csv(text.encode()) == rows  # the box reads its own file back whole


@pytest.fixture
def finished(tmp_path: Path):  # noqa: ANN201
    """A tournament of hostile names (web kit) played to the podium, with negative scores."""
    k = make_kit(tmp_path)
    c = k.app.test_client()
    assert c.post("/login", data={"pin": k.services.settings.pin}).status_code == 302
    assert c.post("/admin/tournament/create", data={"title": "=Кубок"}).status_code == 302
    d = k.services.tournament
    people = [{"name": n, "team": f"@Команда {i}", "city": f"+Город {i}"}
              for i, n in enumerate(HOSTILE)]
    people += [{"name": f"Игрок {i}", "team": f"Команда {i}"} for i in range(3)]
    d.submit({"type": "import_entries", "entries": people})
    d.submit({"type": "draw", "seed": 3})
    while ready := views.next_battles(d.state):  # made-up results, to the podium
        b = ready[0]
        d.submit({"type": "start_battle", "battle": b.id, **theme_args(d.state, b.id)})
        d.submit({"type": "battle_result", "battle": b.id, "winner": 0,
                  "lines": [{"score": 30}] + [{"score": -10 * (i + 1)}
                                              for i in range(len(b.present) - 1)]})
    assert d.state.finished
    yield k, c, d
    k.close()


def test_the_public_results_csv_is_inert(finished) -> None:  # noqa: ANN001
    k, _, d = finished
    r = k.app.test_client().get("/tournament/results.csv")  # anyone on the Wi-Fi
    assert r.status_code == 200
    rows = assert_inert(r.get_data(as_text=True), NUMERIC)
    assert tuple(rows[0]) == CSV_COLUMNS
    names = [row[CSV_COLUMNS.index("name")] for row in rows[1:]]
    assert {"'" + n.strip() for n in HOSTILE} <= set(names)  # names are stripped
    points = [row[CSV_COLUMNS.index("points")] for row in rows[1:]]
    assert "-10" in points  # a negative score is still a number


def test_the_cli_csvs_are_inert(finished, tmp_path: Path) -> None:  # noqa: ANN001
    k, _, d = finished
    out = tmp_path / "results.csv"
    db = str(k.store.path)
    report = subprocess.run([*SVOYAK, "tournament", "report", str(d.game), "--csv",
                             str(out), "--data", str(k.store.path.parent)],
                            capture_output=True, text=True, timeout=60)
    assert report.returncode == 0, report.stderr
    rows = assert_inert(out.read_text("utf-8"), NUMERIC)
    assert "'-1+1" in {row[CSV_COLUMNS.index("name")] for row in rows}
    log = subprocess.run([*SVOYAK, "log", "export", str(d.game), "--format", "csv",
                          "--db", db], capture_output=True, text=True, timeout=60)
    assert log.returncode == 0, log.stderr
    rows = assert_inert(log.stdout, {"seq", "t_ns"})
    assert len(rows) > 3
