"""`make screenshots`: current screenshots of the host (1280×800), board (1920×1080) and
player (phone) pages, played through a real `svoyak serve --simulate` on loopback in
Debian's Chromium, written to docs/screenshots/ so reviewers can see the UI.

    python -m webui.screenshots docs/screenshots
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

from webui import localserver

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _serve(data: Path, port: int) -> subprocess.Popen[bytes]:
    data.mkdir(parents=True, exist_ok=True)
    (data / "settings.json").write_text(json.dumps(
        {"pin": "2468", "box_name": "Svoyak", "host_url": "http://svoyak.local/host",
         "wifi": {"ssid": "Svoyak-7F3A", "password": "quiz-night-42"}}))
    return localserver.start(data, port, "--no-demo")


def _press(base: str, seat: int) -> None:
    req = urllib.request.Request(base + "/api/sim/press", method="POST",
                                 data=json.dumps({"player": seat}).encode(),
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=5).close()


def _wait(page: Any, js: str) -> None:
    page.wait_for_function(f"() => {{ const v = window.lastView; return !!v && ({js}); }}")
    page.wait_for_timeout(250)  # transitions


def shoot(out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    port = localserver.free_port()
    base = f"http://127.0.0.1:{port}"
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        proc = _serve(Path(tmp) / "data", port)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
                board = browser.new_page(viewport={"width": 1920, "height": 1080})
                board.goto(base + "/board")
                _wait(board, "v.game === null")

                def snap(page: Any, name: str) -> None:
                    path = out / f"{name}.png"
                    page.screenshot(path=str(path))
                    written.append(path)

                snap(board, "board-idle")
                host = browser.new_page(viewport={"width": 1280, "height": 800})
                host.goto(base + "/host")
                host.fill("#pin", "2468")
                host.click("button[type=submit]")
                host.wait_for_selector("#new-game-dialog", state="visible")
                snap(host, "host-new-game")
                # A sport battle: a press before the end of reading, the queue.
                host.select_option("#ng-rules", "battle")
                host.select_option("#ng-stage", "qualification")
                for i, name in enumerate(["Анна", "Борис", "Вера", ""]):
                    host.locator("#ng-players input").nth(i).fill(name)
                host.click("#new-game-form button[type=submit]")
                _wait(host, "v.view && v.view.phase === 'ready'")
                host.keyboard.press("a")
                _wait(board, "v.view.lamp === true")
                snap(board, "board-battle-lamp")
                _press(base, 1)
                _wait(host, "v.view.answering === 1")
                _wait(board, "v.view.answering === 1")
                snap(host, "host-battle-answering")
                snap(board, "board-battle-answering")
                host.keyboard.press("+")
                _wait(board, "v.view.phase === 'closed'")
                snap(board, "board-battle-revealed")
                # A TV game: the board, then a question with a false start.
                host.click("#new-game")
                host.select_option("#ng-rules", "tv")
                host.click("#new-game-form button[type=submit]")
                _wait(board, "v.rules === 'tv' && v.view.phase === 'pick_chooser'")
                host.locator(".action-group[data-action=pick_chooser] button").first.click()
                _wait(board, "v.view.phase === 'choose'")
                snap(board, "board-tv-choose")
                snap(host, "host-tv-choose")
                host.click("#board-pick button[data-cell='2:1']")
                _wait(board, "v.view.phase === 'reading'")
                _press(base, 2)  # a false start
                _wait(board, "v.view.false_starts === 1")
                host.keyboard.press("Space")
                _wait(board, "v.view.phase === 'buttons'")
                snap(board, "board-tv-question")
                _press(base, 0)
                _wait(host, "v.view.phase === 'answering'")
                host.click("#race-toggle")
                _wait(board, "v.ui.race_shown === true")
                snap(host, "host-tv-answering")
                snap(board, "board-tv-race")
                phone = browser.new_page(viewport={"width": 390, "height": 844},
                                         device_scale_factor=2)
                phone.goto(base + "/play")
                phone.click("#seats button[data-seat='0']")
                _wait(phone, "v.seat === 0")
                snap(phone, "play-phone")
                browser.close()
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(15)
    return written


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "docs/screenshots")
    for path in shoot(out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
