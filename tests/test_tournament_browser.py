"""The tournament's TV pages in Debian's Chromium at 1920×1080 against a real `svoyak
serve`: the bracket with 81 and with 243 players, every page of every stage, no overflow
and no text under 24 px; the results, bracket and protocols printed to PDF."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest
from tournament_kit import theme_args
from webui_kit import CHROMIUM, Server

from appliance.rules.protocol import Command
from appliance.rules.tournament import game, views
from appliance.runtime.running import RunningGame
from appliance.runtime.store import Store, db_path
from webui import demo_names
from webui.tournament import board_pages

playwright_api = pytest.importorskip("playwright.sync_api")
if not os.path.exists(CHROMIUM):  # `make test` installs it (scripts/webui-deps.sh)
    pytest.skip("Debian's chromium is not installed", allow_module_level=True)

TEAMS = ["Физтех", "МГУ", "СПбГУ", "ВШЭ", "МИФИ", "Бауманка", "УрФУ", "НГУ", "КФУ", "ТГУ",
         "ЮФУ", "ДВФУ", "РУДН", "МГИМО", "ИТМО"]
CITIES = ["Москва", "Долгопрудный", "Санкт-Петербург", "Екатеринбург", "Новосибирск",
          "Казань", "Томск", "Владивосток"]

# Every visible element with its own text: font size, box inside the viewport, not clipped.
CHECK = """() => {
  const bad = [], vw = innerWidth, vh = innerHeight, root = document.documentElement;
  if (root.scrollWidth > vw || root.scrollHeight > vh)
    bad.push(`page ${root.scrollWidth}x${root.scrollHeight}`);
  let texts = 0;
  for (const el of document.querySelectorAll("body *")) {
    const cs = getComputedStyle(el);
    if (cs.display === "none" || cs.visibility === "hidden" || !el.getClientRects().length)
      continue;
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    texts++;
    const what = `${el.tagName}.${el.className} "${el.textContent.trim().slice(0, 30)}"`;
    if (parseFloat(cs.fontSize) < 24) bad.push(`${cs.fontSize} ${what}`);
    const r = el.getBoundingClientRect();
    if (r.left < -0.5 || r.top < -0.5 || r.right > vw + 0.5 || r.bottom > vh + 0.5)
      bad.push(`outside ${Math.round(r.right)},${Math.round(r.bottom)} ${what}`);
    if (el.clientWidth && el.scrollWidth > el.clientWidth + 1) bad.push(`clipped ${what}`);
  }
  return {bad, texts};
}"""


def seeded(data: Path, n: int, played: int = 4) -> Any:
    """A tournament of `n` entries in the data directory, drawn, `played` battles played and
    the next in play (if any), before the server starts (the server resumes it)."""
    rng = random.Random(n)
    data.mkdir(parents=True, exist_ok=True)
    with Store(db_path(data)) as store:
        s = RunningGame.new(store, "tournament", game, {"title": "Кубок Европы"})
        rows = []
        for i in range(n):
            name = demo_names.name(rng.choice(demo_names.MALE + demo_names.FEMALE),
                                   rng.choice(demo_names.SURNAMES))
            rows.append({"name": f"{name} {i}" if i >= 0 else name, "team": TEAMS[i % 15],
                         "city": rng.choice(CITIES)})
        s.handle(Command("import_entries", 0, {"entries": rows}))
        s.handle(Command("draw", 0, {"seed": 2026}))
        for _ in range(played):
            b = views.next_battles(s.state)[0]
            s.handle(Command("start_battle", 0, {"battle": b.id,
                                                 **theme_args(s.state, b.id)}))
            scores = rng.sample(range(-30, 200, 10), len(b.present))
            s.handle(Command("battle_result", 0, {
                "battle": b.id, "winner": scores.index(max(scores)),
                "lines": [{"score": x} for x in scores]}))
        if views.next_battles(s.state):
            b = views.next_battles(s.state)[0]
            s.handle(Command("start_battle", 0, {"battle": b.id, **theme_args(s.state, b.id)}))
        return s.state


@pytest.mark.parametrize("n", [81, 243, 729])
def test_the_bracket_fits_1920x1080_on_every_page(browser: Any, tmp_path: Path,
                                                   n: int) -> None:
    state = seeded(tmp_path / "data", n)
    server = Server(tmp_path / "data").start()
    try:
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        pages = board_pages(state)
        # 12 battles a page: the 1/27 in 3 pages, a qualification round of 81 in 7, of 243
        # in 21; the 1/9, 1/3 and final one each
        assert len(pages) == {81: 6, 243: 13, 729: 34}[n]
        for p in pages:
            url = f"{server.base}/tournament/board?stage={p['stage']}&page={p['page']}"
            page.goto(url)
            result = page.evaluate(CHECK)
            assert result["texts"] > 5, url
            assert result["bad"] == [], (url, result["bad"][:10])
            shown = page.locator(".battle").count()
            assert shown == len(p["battles"]), url
            if os.environ.get("SVOYAK_SHOTS"):
                page.screenshot(path=f"{os.environ['SVOYAK_SHOTS']}/bracket-{n}-"
                                f"{p['stage'].replace('/', '_')}-{p['page']}.png")
        page.goto(f"{server.base}/tournament/board")  # default: the stage in play
        assert page.locator(".battle.playing").count() == 1
        assert page.locator(".battle.next").count() >= 1
        for url in ("/tournament/call", "/tournament/podium"):
            page.goto(server.base + url)
            result = page.evaluate(CHECK)
            assert result["bad"] == [], (url, result["bad"][:10])
        page.close()
    finally:
        server.stop()


def test_results_bracket_and_protocols_print_to_pdf(browser: Any, tmp_path: Path) -> None:
    seeded(tmp_path / "data", 100)
    server = Server(tmp_path / "data").start()
    try:
        page = browser.new_page()
        for url in ("/tournament/results", "/tournament/print/bracket",
                    "/tournament/print/protocol/Q1", "/tournament/print/protocol/F"):
            page.goto(server.base + url)
            page.emulate_media(media="print")
            hidden = page.evaluate("""() => [...document.querySelectorAll('.no-print')]
                .every(e => getComputedStyle(e).display === 'none')""")
            assert hidden, url
            pdf = page.pdf(format="A4", print_background=True)
            assert pdf.startswith(b"%PDF") and len(pdf) > 2000, url
            pages = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
            if "protocol" in url:
                assert pages == (1 if url.endswith("Q1") else 2), (url, pages)
            page.emulate_media(media="screen")
        page.close()
    finally:
        server.stop()


def test_the_podium_of_a_finished_tournament_fits_the_tv(browser: Any, tmp_path: Path) -> None:
    state = seeded(tmp_path / "data", 9, played=4)  # 3 + 1 battles: the final is played
    assert state.finished
    server = Server(tmp_path / "data").start()
    try:
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        page.goto(f"{server.base}/tournament/podium")
        assert page.locator(".podium li").count() == 3
        result = page.evaluate(CHECK)
        assert result["bad"] == [], result["bad"][:10]
        winner = state.player(state.final.result.winner).entry.name  # type: ignore[union-attr]
        assert winner in page.locator(".podium .place-1").inner_text()
        # one row (the game-end podium's wrapping must not apply), the winner in the middle
        boxes = page.evaluate("""() => [...document.querySelectorAll('.podium li')].map((e) => {
            const r = e.getBoundingClientRect(); return [r.left, r.bottom]; })""")
        assert len({round(bottom) for _, bottom in boxes}) == 1, boxes
        lefts = [left for left, _ in boxes]
        assert sorted(lefts).index(lefts[0]) == 1, boxes  # the first place stands in the middle
        page.close()
    finally:
        server.stop()


def test_the_bracket_tv_turns_its_pages_in_place_and_redraws_on_a_push(
        browser: Any, tmp_path: Path) -> None:
    """The TV's bracket holds the three pages of the stage in play and turns them on its
    own clock with nothing fetched; a change the director makes reaches it as a push, and
    the page reads itself once for it."""
    seeded(tmp_path / "data", 81)  # the 1/27 in play: 27 battles, 3 pages
    server = Server(tmp_path / "data").start()
    try:
        tv = browser.new_page(viewport={"width": 1920, "height": 1080})
        reads: list[str] = []
        tv.on("request", lambda r: reads.append(r.url) if "/tournament/" in r.url else None)
        tv.clock.install()
        tv.goto(f"{server.base}/tournament/board")
        tv.wait_for_function("() => document.body.dataset.tourney === '0'")  # connected
        sheets = tv.locator(".sheet")
        assert sheets.count() == 3

        def shown() -> tuple[int, str]:
            return (tv.evaluate("() => [...document.querySelectorAll('.sheet')]"
                                ".findIndex((s) => !s.hidden)"),
                    tv.locator(".page-of").inner_text())

        assert shown() == (0, " · страница 1 из 3")
        assert tv.evaluate(CHECK)["bad"] == []
        reads.clear()
        tv.clock.run_for(12_500)
        assert shown() == (1, " · страница 2 из 3")
        assert tv.evaluate(CHECK)["bad"] == []
        tv.clock.run_for(24_000)
        assert shown() == (0, " · страница 1 из 3")
        assert reads == []  # an unchanged bracket costs the box nothing

        # The director renames the tournament: one push, one read, the new title shown.
        director = browser.new_page()
        director.goto(f"{server.base}/login?next=/admin/tournament/")
        director.fill("#pin", server.pin)
        director.click("button[type=submit]")
        director.fill("#t-name", "Кубок Азии")
        director.click("form[action='/admin/tournament/settings'] button[type=submit]")
        tv.wait_for_function("() => document.body.dataset.tourney === '1'")
        assert tv.locator("h1").inner_text() == "Кубок Азии"
        assert len(reads) == 1 and reads[0].endswith("/tournament/board"), reads
        assert tv.locator(".sheet").count() == 3 and shown()[0] == 0
        director.close()
        tv.close()
    finally:
        server.stop()
