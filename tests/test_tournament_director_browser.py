"""The director's page in Debian's Chromium against a real `svoyak serve`, through the UI
only (clicks, typing, a file chosen in the form): log in, create a tournament, import the
entries (a bad file first: its line is named and nothing is imported), draw with a seed,
start a battle from the bracket, give a walkover, and read the results."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from webui_kit import AXE, AXE_RUN, CHROMIUM, Server

# Every control a finger must hit, with its box: a checkbox counts by its label (the label
# is the target: a tap on it toggles the box), everything else by itself.
TARGETS = """() => [...document.querySelectorAll(
    'main input:not([type=hidden]), main select, main button, main summary')]
  .filter((e) => e.getClientRects().length && getComputedStyle(e).opacity !== '0'
                 && e.getBoundingClientRect().width > 2)
  .map((e) => { const box = (e.type === 'checkbox' && e.closest('label')) || e;
                const r = box.getBoundingClientRect();
                return [e.name || e.id || e.textContent.trim(), Math.round(r.width),
                        Math.round(r.height)]; })"""

playwright_api = pytest.importorskip("playwright.sync_api")
if not os.path.exists(CHROMIUM):  # `make test` installs it (scripts/webui-deps.sh)
    pytest.skip("Debian's chromium is not installed", allow_module_level=True)

# 10 entries: a bracket of 9, one preliminary battle of two (P1), eight byes.
ENTRIES = "имя;команда;город\n" + "".join(
    f"Игрок {i};Команда {i % 4};Город {i}\n" for i in range(10))


def row(page: Any, battle: str) -> Any:
    return page.locator(f"tr[id='battle-{battle}']")


def test_a_director_runs_a_tournament_from_the_page(browser: Any, tmp_path: Path) -> None:
    server = Server(tmp_path / "data").start()
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.base + "/admin/tournament/")  # redirected to the PIN login
        page.fill("#pin", server.pin)
        page.click("button[type=submit]")
        page.wait_for_selector("#t-title")

        page.fill("#t-title", "Кубок клуба")
        page.click("button:has-text('Создать турнир')")
        page.wait_for_selector("#entries")
        assert "Кубок клуба" in page.locator("h2").first.inner_text()

        bad = {"name": "bad.csv", "mimeType": "text/csv",
               "buffer": "name,team\nАнна,\n".encode()}
        page.set_input_files("#t-file", files=[bad])
        page.click("#entries button:has-text('Загрузить')")
        alert = page.locator("[role=alert]")
        assert "строка 2" in alert.inner_text()
        assert page.locator("table.entries tbody tr").count() == 0  # nothing imported

        good = {"name": "entries.csv", "mimeType": "text/csv",
                "buffer": ENTRIES.encode("cp1251")}
        page.set_input_files("#t-file", files=[good])
        page.click("#entries button:has-text('Загрузить')")
        page.wait_for_selector("#draw")
        assert page.locator("table.entries tbody tr").count() == 10
        assert page.locator("[role=alert]").count() == 0

        page.fill("#t-seed", "76")
        page.click("#draw button[type=submit]")
        page.wait_for_selector("#battles")
        assert "Жребий (seed): 76" in page.locator("main").inner_text()  # for the audit
        assert page.input_value("#t-seed") == "76"  # the field keeps the seed the draw used
        # drawing again is secondary and asks first: the confirmation is its own button
        redraw = page.locator("#draw summary")
        assert redraw.inner_text().startswith("Провести жеребьёвку заново")
        assert page.locator("#draw .btn.primary").count() == 0
        assert page.locator("#draw button:has-text('Да, провести')").is_visible() is False
        page.fill("#t-seed", "77")
        redraw.click()
        page.click("#draw button:has-text('Да, провести')")
        page.wait_for_selector("#battles")
        assert "Жребий (seed): 77" in page.locator("main").inner_text()
        assert page.input_value("#t-seed") == "77"
        assert page.locator("#draw").count() == 1  # a redraw is allowed until a battle starts
        # the next step is the one yellow button: the first ready battle's start
        primary = page.locator("main .btn.primary:visible")
        assert [primary.nth(i).inner_text() for i in range(primary.count())] == [
            "Добавить", "Начать бой"]
        assert row(page, "P1").locator(".btn.primary").inner_text() == "Начать бой"
        assert "P1" not in page.locator("#battles").inner_text()  # numbers and stage names
        small = [(n, w, h) for n, w, h in page.evaluate(TARGETS) if w < 44 or h < 44]
        assert small == []
        if AXE.exists():  # `make test` installs it (npm ci in webui/)
            # axe is injected inline: a context of its own that bypasses the page's CSP
            # (this page keeps the CSP, which refuses inline scripts)
            ctx = browser.new_context(viewport={"width": 1280, "height": 900},
                                      bypass_csp=True)
            ctx.add_cookies(page.context.cookies())
            audit = ctx.new_page()
            audit.goto(server.base + "/admin/tournament/")
            audit.click("#draw summary")  # the confirmation open, too
            audit.add_script_tag(path=str(AXE))
            assert audit.evaluate(AXE_RUN) == []
            ctx.close()
        else:
            assert not os.environ.get("CI"), "axe-core is missing"

        # the preliminary battle: started with the demo package, it is the host's game
        q1 = row(page, "P1")
        assert "готов" in q1.inner_text()
        assert q1.locator("select[name=package]").input_value() == "demo:battle"  # sport
        q1.locator("button:has-text('Начать бой')").click()
        page.wait_for_selector("tr[id='battle-P1'].playing")
        assert "идёт" in row(page, "P1").inner_text()
        assert page.locator("#draw").count() == 0  # no redraw once a battle has started

        # a walkover: two of a ready bracket battle do not come, the third goes on
        ready = page.locator("tr.ready").first
        battle = (ready.get_attribute("id") or "").removeprefix("battle-")
        names = ready.locator("form[action$=walkover] label")
        assert names.count() == 3
        stays = names.nth(2).inner_text().strip()
        names.nth(0).locator("input").check()
        names.nth(1).locator("input").check()
        ready.locator("button:has-text('Неявка')").click()
        done = row(page, battle)
        page.wait_for_selector(f"tr[id='battle-{battle}'].done")
        assert "сыгран" in done.inner_text() and "✓" in done.inner_text()
        assert stays in done.inner_text()

        # results: from the page's link; the walkover winner is in the next stage's battle
        page.click("a[href='/tournament/results']")
        page.wait_for_load_state("load")
        text = page.locator("body").inner_text()
        assert "Кубок клуба" in text and stays in text
        assert errors == []
        page.goto(server.base + "/host")
        page.wait_for_selector("body[data-ready='1']", state="attached")
        page.wait_for_function("() => !!window.lastView && window.lastView.game")
        view = page.evaluate("() => window.lastView")
        assert view["rules"] == "battle"  # the battle from the bracket, not the tournament
        assert all(a["type"] != "end_game" or view["rules"] != "tournament"
                   for a in view.get("actions", []))
        page.close()
    finally:
        server.stop()
