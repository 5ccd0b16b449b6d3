"""The screens through a scripted evening, in Debian's Chromium, at the sizes they are used
at (host 1280×800 and 800×1280, board 1920×1080, phone 390×844): the same script as
`make screenshots` (webui/screenshots.py), and at every phase on every page

- the primary action, the answerer's name and the lamp are on screen without scrolling;
- no text is cut by its box or overlaps other text, and nothing scrolls sideways;
- axe-core (from the npm registry, run inside the page) finds no serious or critical
  violation, colour contrast included;
- no raw catalogue key («kind.final») is shown.

Plus the catalogues themselves: every key the pages use exists in Russian and English, and
every phase, kind, press status and verdict an engine can produce has its words."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from webui_kit import AXE

from webui import screenshots
from webui.screenshots import HOST, HOST_PORTRAIT, Show

ROOT = Path(__file__).resolve().parent.parent
CATALOGUES = {lang: json.loads((ROOT / "webui" / "translations" / f"{lang}.json").read_text())
              for lang in ("ru", "en")}
NAMESPACES = sorted({k.split(".", 1)[0] for k in CATALOGUES["ru"]})
CHECK_JS = (Path(__file__).parent / "screens_check.js").read_text()
AXE_RUN = """async () => {
  const r = await axe.run(document, {runOnly: {type: "tag",
    values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}, resultTypes: ["violations"]});
  return r.violations.filter((x) => ["serious", "critical"].includes(x.impact)).map((x) =>
    x.id + ": " + x.nodes.slice(0, 3).map((n) => n.target.join(" ") + " — " +
      (n.failureSummary || "").split("\\n").slice(1, 2).join("")).join(" | "));
}"""


# --- the catalogues --------------------------------------------------------------------------

def used_keys() -> set[str]:
    keys: set[str] = set()
    pattern = re.compile(r"""\bt\(\s*["']([a-z_]+\.[a-z_.0-9]*[a-z0-9])["']""")
    for path in [*(ROOT / "webui" / "static" / "js").glob("*.js"),
                 *(ROOT / "webui" / "templates").glob("*.html")]:
        keys.update(pattern.findall(path.read_text()))
    # Keys the scripts name in tables (corrections, statistics, phone states).
    for path in (ROOT / "webui" / "static" / "js").glob("*.js"):
        keys.update(re.findall(r"""["']((?:fix|stats|play|lamp)\.[a-z_]+)["']""",
                               path.read_text()))
    return keys


def test_every_key_the_pages_use_is_in_both_catalogues() -> None:
    assert set(CATALOGUES["ru"]) == set(CATALOGUES["en"])
    missing = sorted(k for k in used_keys() if k not in CATALOGUES["ru"])
    assert missing == []
    empty = [k for lang, c in CATALOGUES.items() for k, v in c.items() if not v.strip()]
    assert empty == []


def test_every_engine_word_has_its_catalogue_entry() -> None:
    from appliance.packages.model import Kind
    from appliance.rules import arbiter
    from appliance.rules.battle import state as battle
    from appliance.rules.tv.state import Phase

    def words(namespace: type) -> set[str]:
        return {v for k, v in vars(namespace).items() if k.isupper() and isinstance(v, str)}

    phases = words(Phase) | {battle.READY, battle.OPEN, battle.ANSWERING,
                                              battle.CLOSED, battle.TIE, battle.FINISHED}
    need = {f"phase.{p}" for p in phases}
    need |= {f"kind.{k.value}" for k in Kind if k.value != "empty"} | {"kind.final"}
    need |= {f"race.{s}" for s in words(arbiter.Status)}
    need |= {"verdict.right", "verdict.wrong", "rules.tv", "rules.battle"}
    assert sorted(need - set(CATALOGUES["ru"])) == []


# --- the evening in the browser ----------------------------------------------------------------

playwright_api = pytest.importorskip("playwright.sync_api")
if not os.path.exists(screenshots.CHROMIUM):  # `make test` installs it (scripts/webui-deps.sh)
    pytest.skip("Debian's chromium is not installed", allow_module_level=True)
if not (ROOT / "webui" / "static" / "vendor" / "socket.io.min.js").exists() or not AXE.exists():
    pytest.skip("run `make vendor` first (npm ci installs axe-core)", allow_module_level=True)


@pytest.fixture(scope="module")
def browser(screens_browser: Any) -> Any:
    """Chromium with the screenshot script's flags (conftest's `screens_browser`)."""
    return screens_browser


class Inspector:
    """The checkpoint of the scripted evening: checks every page it is given."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.seen: list[str] = []
        self.phone: dict[str, dict[str, Any]] = {}
        self.banner: dict[str, str | None] = {}  # the host's round banner at each phase
        self.host: dict[str, dict[str, Any]] = {}  # the host's top bar and statistics, 1280×800

    PHONE_STATE = """() => ({
      status: document.querySelector("#my-status").hidden ? null
        : document.querySelector("#my-status").dataset.state,
      buzzer: !document.querySelector("#buzzer").hidden,
      armed: document.querySelector("#buzzer").classList.contains("armed"),
      form: document.querySelector("#my-actions").hidden ? null
        : [...document.querySelectorAll("#my-actions [data-action]")].map((e) => e.dataset.action),
      sent: document.querySelector("#sent").hidden ? null
        : document.querySelector("#sent").textContent,
      place: document.querySelector("#my-result").hidden ? null
        : document.querySelector("#my-place").textContent})"""

    HOST_STATE = """() => {
      const card = document.querySelector("#stats-card"), table = card.querySelector("table");
      const c = card.getBoundingClientRect(), r = table && table.getBoundingClientRect();
      return {where: document.querySelector(".host-top .where").innerText,
        stats_rows: card.hidden ? 0 : card.querySelectorAll("tbody tr").length,
        stats_overflow: !!table
          && (card.scrollWidth > card.clientWidth || r.right > c.right + 0.5)};
    }"""

    def check(self, name: str, role: str, page: Any) -> None:
        self.seen.append(f"{name}/{role}")
        if role == "host" and page.viewport_size == HOST:
            self.host[name] = page.evaluate(self.HOST_STATE)
        if role == "phone":
            self.phone[name] = page.evaluate(self.PHONE_STATE)
        if role == "host":
            self.banner[name] = page.evaluate(
                "() => { const b = document.querySelector('#round-banner');"
                " return b.hidden ? null : b.textContent; }")
        for p in page.evaluate(CHECK_JS, NAMESPACES):
            self.problems.append(f"{name} {role} {page.viewport_size}: {p}")
        if not page.evaluate("typeof axe !== 'undefined'"):
            page.add_script_tag(path=str(AXE))
        for p in page.evaluate(AXE_RUN):
            self.problems.append(f"{name} {role} {page.viewport_size}: axe {p}")

    def __call__(self, name: str, pages: dict[str, Any]) -> None:
        for role, page in pages.items():
            if role == "host":
                for size in (HOST, HOST_PORTRAIT):
                    page.set_viewport_size(size)
                    page.wait_for_timeout(100)
                    self.check(name, role, page)
                page.set_viewport_size(HOST)
            else:
                self.check(name, role, page)


@pytest.fixture
def show(browser: Any, tmp_path: Path) -> Iterator[tuple[Show, Inspector]]:
    inspector = Inspector()
    with screenshots.serving(tmp_path) as base:
        # axe is injected as a script tag: the test pages let it past the box's CSP.
        s = Show(browser, base, inspector, {"bypass_csp": True})
        s.open()
        yield s, inspector
        for page in [s.host, s.board, *s.phones]:
            page.context.close()


def test_a_tv_game_through_the_screens(show: tuple[Show, Inspector]) -> None:
    s, inspector = show
    s.at("idle", board=s.board)
    s.tv_game()
    assert len(inspector.seen) > 40
    assert not inspector.problems, "\n".join(inspector.problems)
    assert s.board.locator("#winner-name").inner_text() == "Анна"  # after the shootout
    assert "tv-shootout/board" in inspector.seen
    # The host names the shootout as the rules do, with who plays it (Вера sits out).
    assert inspector.banner["tv-shootout"] == "Перестрелка: Анна, Борис"
    assert inspector.banner["tv-choose"] is None
    # The phones followed the TV game: Вера's false start, Анна's buzzer arming with the
    # lamp, «Ваш ответ!», the final's forms in the buzzer's place, the results.
    ph = inspector.phone
    assert ph["tv-false-start"]["status"] == "false_start"
    assert ph["tv-lamp"]["status"] == "press" and ph["tv-lamp"]["armed"]
    # The chooser's phone offers the question to pick in the buzzer's place (issue 25).
    assert not ph["tv-choose"]["buzzer"] and "choose" in (ph["tv-choose"]["form"] or [])
    assert ph["tv-answering"]["status"] == "answer"
    assert ph["tv-bets"]["form"] == ["bet"] and not ph["tv-bets"]["buzzer"]
    assert "700" in ph["tv-bet-sent"]["sent"]
    assert ph["tv-writing"]["form"] == ["write"] and ph["tv-writing"]["sent"] is None
    assert "Тайна Анны" in ph["tv-written"]["sent"]
    assert ph["tv-over"]["place"] == "Вы победили!" and not ph["tv-over"]["buzzer"]
    # At the end the top bar names no round, and the statistics fit their card.
    over = inspector.host["tv-over"]
    assert "раунд" not in over["where"] and "Игра окончена" in over["where"], over
    assert over["stats_rows"] == 3 and not over["stats_overflow"], over


def test_a_sport_battle_through_the_screens(show: tuple[Show, Inspector]) -> None:
    s, inspector = show
    s.battle()
    s.second_host()
    assert "battle-queue/host" in inspector.seen
    assert not inspector.problems, "\n".join(inspector.problems)
    # A battle over by itself shows its statistics before «Завершить игру», as a TV game does.
    over = inspector.host["battle-over"]
    assert over["stats_rows"] == 3 and not over["stats_overflow"], over
    assert "Игра окончена" in over["where"], over


def test_boards_of_ten_values_and_of_ten_themes_fit(show: tuple[Show, Inspector]) -> None:
    s, inspector = show
    s.boards()
    for themes, questions in ((6, 10), (10, 5)):
        assert f"board-{themes}x{questions}/board" in inspector.seen
    # The last board: 10 rows of 5 values, every value inside its own cell on the TV.
    cells = s.board.evaluate("""() => [...document.querySelectorAll('#grid .cell span')]
      .map((n) => {
        const c = n.parentElement.getBoundingClientRect(), t = n.getBoundingClientRect();
        return [t.left >= c.left && t.right <= c.right && t.top >= c.top && t.bottom <= c.bottom,
                parseFloat(getComputedStyle(n).fontSize)]; })""")
    assert len(cells) == 50 and all(inside for inside, _ in cells)
    assert min(size for _, size in cells) >= 40
    assert s.board.locator("#grid .row").count() == 10
    s.admin()
    assert not inspector.problems, "\n".join(inspector.problems)


def test_the_button_test_follows_each_seat_live(show: tuple[Show, Inspector]) -> None:
    """The admin's button test polls the buttons' state: a seat whose count moves says it
    works, a stuck one says so. The wired buttons cannot be pressed from here (the simulator
    presses are per source), so the poll's answer is the buttons' real status with seat 1's
    count moved on and seat 2 held down."""
    s, inspector = show
    page = s.page(HOST)
    page.context.add_cookies(s.host.context.cookies())
    real = page.request.get(s.base + "/admin/hardware.json").json()
    assert len(real["seats"]) >= 2
    page.goto(s.base + "/admin/")
    assert page.locator("#seat-pins .check-cell").first.inner_text() == "Нажмите кнопку"

    def moved(route: Any) -> None:
        seats = [dict(x) for x in real["seats"]]
        seats[0]["presses"] += 1
        seats[1]["stuck"] = True
        route.fulfill(json={**real, "seats": seats})

    page.route("**/admin/hardware.json", moved)
    page.wait_for_selector("#seat-pins tr.tested[data-seat='0']")
    assert page.locator("#seat-pins tr[data-seat='0'] .check-cell").inner_text() == "✓ работает"
    assert page.locator("#seat-pins tr[data-seat='1'] .check-cell").inner_text() == "зажата!"
    inspector("admin-buttons", {"admin": page})
    assert not inspector.problems, "\n".join(inspector.problems)
    page.context.close()


def test_an_answer_countdown_that_runs_out_tells_host_and_board(
        show: tuple[Show, Inspector]) -> None:
    """With seconds on the answer, the countdown's end is the engine's (time_up): the
    host is told the verdict is theirs, the board says the time is up."""
    s, inspector = show
    h, b = s.host, s.board
    h.wait_for_selector("#new-game-dialog", state="visible")
    h.check("#ng-format-tv")
    h.fill("#ng-answer_s", "1")
    inputs = h.locator("#ng-players input:not([disabled])")
    names = ["Анна", "Борис", "Вера"]
    for i in range(inputs.count()):  # as many as the preset seats
        inputs.nth(i).fill(names[i] if i < len(names) else "")
    h.click("#ng-start")
    s.wait(h, "v.rules === 'tv' && v.view.phase === 'pick_chooser'")
    s.choice("pick_chooser", "Анна")
    s.wait(h, "v.view.phase === 'choose'")
    h.click("#board-pick button[data-cell='0:0']")
    s.wait(h, "v.view.phase === 'reading'")
    h.keyboard.press("Space")
    s.wait(h, "v.view.phase === 'buttons'")
    s.press(1)
    s.wait(h, "v.view.phase === 'answering'")
    assert h.locator("#clock").is_visible()  # the seconds beside the lamp
    s.wait(h, "v.view.question.time_up === true", 8000)
    s.wait(b, "v.view.question.time_up === true")
    h.wait_for_selector("#answerer-time", state="visible")
    b.wait_for_selector("#answerer-time", state="visible")
    assert b.locator("#answerer-name").inner_text() == "Борис"
    inspector("tv-time-up", {"host": h, "board": b})
    assert not inspector.problems, "\n".join(inspector.problems)


def test_a_tournament_day_through_the_screens(show: tuple[Show, Inspector]) -> None:
    """The director's page (entries, battles) and the TV's bracket, call and podium, as
    `make screenshots` shoots them."""
    s, inspector = show
    s.tournament()
    for name in ("tournament-entries/director", "tournament-battles/director",
                 "tournament-bracket/tv", "tournament-call/tv", "tournament-podium/tv"):
        assert name in inspector.seen
    assert not inspector.problems, "\n".join(inspector.problems)
