"""A club evening, second pass (issue 25), in Debian's Chromium against a real `svoyak serve
--simulate` on loopback: every figure on the end screens adds up after corrections and a
removed question, in both engines."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_host_console import fix_dialog, open_board, open_host, start_tv, tv_question
from test_webui_browser import fix, sim_press, start_battle, view, wait
from webui_kit import Server

playwright_api = pytest.importorskip("playwright.sync_api")
NAMES = ["Анна", "Борис", "Вера"]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path / "data", None, "--no-demo").start()
    yield s
    s.stop()


# The end screens' figures, read from the page: the podium's score per name, and the
# statistics table's points (by round or in one cell), corrections and total per name.
READ_END = """() => {
  const podium = {};
  for (const s of document.querySelectorAll('#winner-list .step'))
    podium[s.querySelector('.pname').textContent] = s.querySelector('.pscore').textContent;
  const rows = {};
  for (const tr of document.querySelectorAll('#board-stats .stats-table tbody tr')) {
    const byRound = [...tr.querySelectorAll('.by-round b')].map((b) => b.textContent);
    const cells = [...tr.querySelectorAll('td')];
    const head = [...tr.closest('table').querySelectorAll('thead th')].map((h) => h.textContent);
    const at = (word) => {
      const i = head.indexOf(word);
      return i < 1 ? null : cells[i - 1].textContent;
    };
    rows[tr.querySelector('th').textContent] = {byRound, points: at('очки'),
      corrections: at('поправки'), total: at('итого'), right: at('верно')};
  }
  return {podium, rows};
}"""


def number(text: str | None) -> int:
    if text in (None, "—"):
        return 0
    return int(text.replace("\u2212", "-").replace("\u00a0", "").replace(" ", "").replace("+", ""))


def end_game(host: Any) -> None:
    fix_dialog(host, "end_game")
    host.click("#fix-ok")
    wait(host, "v.finished === true")


def test_tv_end_screens_add_up_after_a_score_correction(browser: Any, server: Server) -> None:
    board = open_board(browser, server)
    host = open_host(browser, server)
    start_tv(host, NAMES)
    tv_question(host)
    host.keyboard.press("Space")
    wait(host, "v.view.phase === 'buttons'")
    assert sim_press(server, 0)["ok"]
    wait(host, "v.view.phase === 'answering'")
    host.keyboard.press("+")
    wait(host, "v.view.phase === 'choose'")
    fix(host, "set_score", ["Борис"], "700")
    wait(host, "v.view.players[1].score === 700")
    end_game(host)
    scores = [p["score"] for p in view(host)["view"]["players"]]
    board.wait_for_selector("#winner-list .step")
    shown = board.evaluate(READ_END)
    for name, score in zip(NAMES, scores, strict=True):
        row = shown["rows"][name]
        assert number(shown["podium"][name]) == score
        assert number(row["total"]) == score
        assert sum(number(x) for x in row["byRound"]) + number(row["corrections"]) == score, row
    assert number(shown["rows"]["Борис"]["corrections"]) == 700
    # The printed protocol: its verdicts and corrections add up to the same scores.
    ctx = browser.new_context()
    ctx.add_cookies(host.context.cookies())
    page = ctx.new_page()
    page.goto(f"{server.base}/protocol/{view(host)['game']}")
    page.wait_for_selector("#verdicts tr td")
    rows = page.evaluate("""() => [...document.querySelectorAll('#verdicts tr')].slice(1)
      .map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))""")
    for name, score in zip(NAMES, scores, strict=True):
        assert sum(number(r[4]) for r in rows if r[2] == name) == score, rows
    assert any("поправка счёта" in r[1] for r in rows)
    ctx.close()


def test_battle_end_screens_add_up_after_a_removed_question_and_a_correction(
        browser: Any, server: Server) -> None:
    board = open_board(browser, server)
    host = open_host(browser, server)
    start_battle(host, NAMES)
    host.keyboard.press("a")
    wait(host, "v.view.lamp === true")
    assert sim_press(server, 1)["ok"]
    wait(host, "v.view.answering === 1")
    host.keyboard.press("+")
    wait(host, "v.view.players[1].score === 10 && v.view.phase === 'closed'")
    fix_dialog(host, "remove_question")
    host.click("#fix-ok")
    wait(host, "v.view.players[1].score === 0")
    fix(host, "set_score", ["Вера"], "30")
    wait(host, "v.view.players[2].score === 30")
    end_game(host)
    board.wait_for_selector("#winner-list .step")
    shown = board.evaluate(READ_END)
    scores = dict(zip(NAMES, [0, 0, 30], strict=True))
    for name, score in scores.items():
        row = shown["rows"][name]
        assert number(shown["podium"][name]) == score
        assert number(row["total"]) == score
        assert number(row["points"]) + number(row["corrections"]) == score, row
    # The removed question's right answer counts nowhere.
    assert shown["rows"]["Борис"]["right"] == "0"
