"""The admin page in Debian's Chromium against a real `svoyak serve --simulate`: what the
tryout's new host found there. A refused package upload turns its progress bar red (it stayed
full blue next to the error); the games' protocols read their date as a date and offer the
printable protocol; the GPIO line speaks Russian; axe-core finds nothing serious."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any

import pytest
from webui_kit import AXE, AXE_RUN, CHROMIUM, Server

playwright_api = pytest.importorskip("playwright.sync_api")
if not os.path.exists(CHROMIUM):  # `make test` installs it (scripts/webui-deps.sh)
    pytest.skip("Debian's chromium is not installed", allow_module_level=True)

ROOT = Path(__file__).resolve().parent.parent


def broken_package() -> bytes:
    """Like the tryout's broken file (`head -c 3000` of a package): a zip cut short."""
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("content.xml", "<package>" + "x" * 8000 + "</package>")
        z.writestr("Images/a.png", os.urandom(4000))
    return buf.getvalue()[:3000]


def start_a_game(page: Any, base: str) -> None:
    """A battle, started the director's way (the admin lists the games the box played)."""
    req = page.request
    assert req.post(base + "/admin/tournament/create", form={"title": "Т"}).ok
    csv = "имя,команда\n" + "".join(f"Игрок {i},К{i}\n" for i in range(3))
    assert req.post(base + "/admin/tournament/import", multipart={
        "file": {"name": "e.csv", "mimeType": "text/csv", "buffer": csv.encode()}}).ok
    assert req.post(base + "/admin/tournament/draw", form={"seed": "1"}).ok
    assert req.post(base + "/admin/tournament/start",
                    form={"battle": "F", "package": "demo:battle"}).ok


def test_the_admin_page_after_the_tryout(browser: Any, tmp_path: Path) -> None:
    server = Server(tmp_path / "data").start()
    try:
        ctx = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True,
                                  timezone_id="Europe/Moscow", locale="ru-RU")
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.base + "/login?next=/admin/")
        page.fill("#pin", server.pin)
        page.click("button[type=submit]")
        page.wait_for_selector("#upload")
        start_a_game(page, server.base)
        page.goto(server.base + "/admin/")

        # protocols: a readable local date (the tablet's zone: Moscow, UTC+3), both links
        proto = page.locator("table[aria-label='Протоколы игр'] tr").first
        text = proto.inner_text()
        assert "T" not in re.sub(r"[^\dT:+.-]", "", text) and "+00:00" not in text
        iso = proto.locator("time").get_attribute("datetime")
        from datetime import datetime, timedelta, timezone
        msk = datetime.fromisoformat(iso).astimezone(timezone(timedelta(hours=3)))
        assert f"{msk:%H:%M}" in proto.locator("time").inner_text()
        assert "2026" in text or str(msk.year) in text
        link = proto.locator("a", has_text="Протокол для печати")
        assert link.get_attribute("href") == "/protocol/1"
        link.click()
        page.wait_for_load_state("load")
        assert page.url.endswith("/protocol/1") and "Протокол игры" in page.inner_text("body")
        page.go_back()
        page.wait_for_selector("#upload")

        # the GPIO line in Russian: no «mock», no «built-in»
        gpio = page.locator("p", has_text="Выводы GPIO").inner_text()
        assert "mock" not in gpio and "built-in" not in gpio
        assert "симулятор" in gpio and "встроенная" in gpio

        # a refused upload: the red message and a red (not full blue) bar
        page.set_input_files("#file", files=[{"name": "cut.siq", "mimeType":
                                              "application/octet-stream",
                                              "buffer": broken_package()}])
        page.click("#upload button[type=submit]")
        page.wait_for_selector("#upload-result.failed")
        assert "не" in page.inner_text("#upload-result")
        bar = page.locator("#progress")
        assert "failed" in (bar.get_attribute("class") or "")
        assert bar.get_attribute("aria-label") == "Загрузка пакета: отказ"
        assert bar.is_visible()  # it says «refused» in red, not a full blue «done»
        assert bar.evaluate("(e) => getComputedStyle(e).accentColor") == "rgb(163, 20, 27)"
        if AXE.exists():  # `make test` installs it (npm ci in webui/)
            page.add_script_tag(path=str(AXE))
            assert page.evaluate(AXE_RUN) == []
        else:
            assert not os.environ.get("CI"), "axe-core is missing"
        assert errors == []
        ctx.close()
    finally:
        server.stop()
