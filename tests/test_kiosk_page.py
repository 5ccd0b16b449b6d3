"""The kiosk's local first page (provisioning/roles/kiosk/files/starting.html) in Debian's
Chromium, loaded from a file as on the box: it says "starting…" while nothing answers, says
what to check once its patience runs out, and goes to the board as soon as a server on
loopback answers. The TV is never black and never stuck on an error page."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path

import pytest

from webui import localserver

PAGE = Path(__file__).resolve().parent.parent / "provisioning/roles/kiosk/files/starting.html"
playwright_api = pytest.importorskip("playwright.sync_api")


class Board(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        body = b"<!DOCTYPE html><title>board</title><h1 id=board>Board</h1>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_starting_page_waits_then_warns_then_shows_the_board(browser):
    port = localserver.free_port()
    url = f"http://127.0.0.1:{port}/board"
    page = browser.new_page()
    page.goto(f"{PAGE.as_uri()}?patience=2&url={url}")
    assert page.locator("#wait").is_visible()
    assert "Запускается" in page.inner_text("body")
    page.wait_for_selector("#late", state="visible", timeout=15_000)
    text = page.inner_text("body")
    assert "не отвечает" in text and "not answering" in text
    assert "journalctl -u svoyak" in text
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Board)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page.wait_for_url(url, timeout=15_000)
        assert page.inner_text("#board") == "Board"
    finally:
        server.shutdown()
        server.server_close()
