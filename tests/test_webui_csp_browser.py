"""The Content-Security-Policy in Debian's Chromium: every page of the box loads and
renders with it, nothing is refused, and an injected box name stays text."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from webui_kit import CHROMIUM, Server

playwright_api = pytest.importorskip("playwright.sync_api")
if not os.path.exists(CHROMIUM):  # `make test` installs it (scripts/webui-deps.sh)
    pytest.skip("Debian's chromium is not installed", allow_module_level=True)
VENDOR = Path(__file__).resolve().parent.parent / "webui" / "static" / "vendor"
if not (VENDOR / "socket.io.min.js").exists():
    pytest.skip("run `make vendor` first", allow_module_level=True)

INJECTION = "</script><script>window.pwned=1</script><img src=x onerror=window.pwned=2>"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    import json

    data = tmp_path / "data"
    data.mkdir()
    (data / "settings.json").write_text(json.dumps({"box_name": INJECTION}))
    s = Server(data).start()
    yield s
    s.stop()


def test_every_page_works_under_the_policy(browser: Any, server: Server) -> None:
    page = browser.new_page()
    violations: list[str] = []
    errors: list[str] = []
    page.on("console", lambda m: violations.append(m.text)
            if "Content Security Policy" in m.text else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.base + "/login?next=/admin/")
    page.fill("#pin", server.pin)
    page.click("button[type=submit]")
    page.wait_for_load_state("networkidle")
    for path, live in (("/", False), ("/login", False), ("/admin/", False),
                       ("/host", True), ("/board", True), ("/play", True)):
        page.goto(server.base + path)
        page.wait_for_load_state("load")
        if live:  # the page's own scripts ran, connected and drew a view
            page.wait_for_selector("body[data-ready='1']", state="attached",
                                   timeout=10_000)
        name = page.evaluate(
            "JSON.parse(document.getElementById('svoyak-page').textContent).box.name")
        assert name == INJECTION, path
        assert page.evaluate("window.pwned") is None, path
    assert violations == [] and errors == []
