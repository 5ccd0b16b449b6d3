"""Browser tests: Debian's Chromium driven by Playwright against a real `svoyak serve
--simulate` on loopback. One host, one board and three simulated buttons (the test hook,
the board's keys and the host's simulator buttons) play a sport battle to the end; the
screens reconnect after a server restart; no page asks for anything outside the box."""

from __future__ import annotations

import json
import os
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from webui_kit import CHROMIUM, Server

playwright_api = pytest.importorskip("playwright.sync_api")
if not os.path.exists(CHROMIUM):  # `make test` installs it (scripts/webui-deps.sh)
    pytest.skip("Debian's chromium is not installed", allow_module_level=True)

VENDOR = Path(__file__).resolve().parent.parent / "webui" / "static" / "vendor"
if not (VENDOR / "socket.io.min.js").exists():
    pytest.skip("run `make vendor` first", allow_module_level=True)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path / "data", None, "--demo").start()  # a battle running from the start
    yield s
    s.stop()


def view(page: Any) -> dict[str, Any]:
    return page.evaluate("window.lastView")


def wait(page: Any, js: str, timeout: float = 5000) -> None:
    """Wait until `js` (with `v` = the page's last view) is true."""
    page.wait_for_function(f"() => {{ const v = window.lastView; return !!v && ({js}); }}",
                           timeout=timeout)


def open_host(browser: Any, server: Server, width: int = 1280, height: int = 800,
              **page_args: Any) -> Any:
    page = browser.new_page(viewport={"width": width, "height": height}, **page_args)
    page.goto(server.base + "/host")
    page.fill("#pin", server.pin)
    page.click("button[type=submit]")
    page.wait_for_selector("body[data-ready='1']", state="attached")
    return page


def open_board(browser: Any, server: Server) -> Any:
    page = browser.new_page(viewport={"width": 1920, "height": 1080})
    page.goto(server.base + "/board")
    page.wait_for_selector("body[data-ready='1']", state="attached")
    return page


def sim_press(server: Server, seat: int) -> dict[str, Any]:
    req = urllib.request.Request(server.base + "/api/sim/press", method="POST",
                                 data=json.dumps({"player": seat}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


def start_battle(host: Any, names: list[str], stage: str = "qualification") -> None:
    if host.is_hidden("#new-game-dialog"):
        host.click("#new-game")
    host.check("#ng-format-battle")
    host.select_option("#ng-stage", stage)
    inputs = host.locator("#ng-players input:not([disabled])")
    for i in range(inputs.count()):
        inputs.nth(i).fill(names[i] if i < len(names) else "")
    host.click("#ng-start")
    if host.locator("#ng-start.confirming").count():  # a running game: asked once more
        host.click("#ng-start")
    host.wait_for_selector("#new-game-dialog", state="hidden")
    wait(host, f"v.view && v.view.players.map(p => p.name).join() === {json.dumps(','.join(names))}"
               " && v.view.phase === 'ready'")


def test_sport_battle_to_the_end(browser: Any, server: Server) -> None:
    names = ["Анна", "Борис", "Вера"]
    board = open_board(browser, server)
    host = open_host(browser, server)
    start_battle(host, names)
    wait(board, "v.view.phase === 'ready' && v.view.players[0].name === 'Анна'")
    assert board.locator(".board-scores .p").count() == 3
    expected = [0, 0, 0]
    themes = view(host)["view"]["themes"]
    assert len(themes) == 4
    ways = ["hook", "board-key", "host-button"]
    for n in range(20):
        v = view(host)["view"]
        value = v["value"]
        seat = n % 3
        # Announce the value with the keyboard shortcut shown on the button.
        assert host.locator("[data-action=announce] kbd").inner_text() == "a"
        if n % 2:
            # The same key with a Russian layout on: it sends «ф», its place is still KeyA.
            host.evaluate("document.body.dispatchEvent(new KeyboardEvent('keydown',"
                          " {key: 'ф', code: 'KeyA', bubbles: true}))")
        else:
            host.keyboard.press("a")
        wait(board, "v.view.lamp === true")
        assert board.locator("#board").get_attribute("data-lamp") == "on"
        assert board.locator("#lamp-word").inner_text() in ("ЖМИТЕ!", "PRESS!")
        assert board.locator("#value").inner_text() == str(value)
        # A press by one of the three simulated buttons.
        way = ways[n % 3]
        if way == "hook":
            assert sim_press(server, seat)["ok"]
        elif way == "board-key":
            board.keyboard.press(str(seat + 1))
        else:
            host.click(f"#sim-buttons button[data-seat='{seat}']")
        wait(host, f"v.view.answering === {seat}")
        wait(board, f"v.view.answering === {seat}")
        assert board.locator("#answerer").is_visible()
        assert board.locator("#answerer-name").inner_text() == names[seat]
        # The lamp is off and says who answers.
        assert board.locator("#lamp-word").inner_text() == f"Отвечает: {names[seat]}"
        # The host, not the board, sees the answer; the short-word banner is up since the
        # press came before "reading finished".
        assert host.locator("#q-answer").inner_text().strip()
        assert host.locator("#short-word").is_visible()
        assert "q-answer" not in board.content()
        race = host.locator("#race tr").first.inner_text()
        assert names[seat] in race and "мс" in race
        if n % 4 == 3:
            # Wrong, then the next player's press from the queue... here: re-armed buttons.
            host.keyboard.press("-")
            expected[seat] -= value
            wait(host, f"v.view.players[{seat}].score === {expected[seat]}")
            other = (seat + 1) % 3
            wait(host, "v.view.lamp === true")
            assert sim_press(server, other)["ok"]
            wait(host, f"v.view.answering === {other}")
            seat = other
        host.keyboard.press("+")
        expected[seat] += value
        wait(board, f"v.view.players[{seat}].score === {expected[seat]}")
        score = board.locator(f".board-scores .p[data-seat='{seat}'] .score").inner_text()
        assert score == str(expected[seat]).replace("-", "\u2212")  # a minus sign, not a hyphen
        # Closed: the board may now show the answer (revealed by the host's judgement).
        wait(board, "v.view.phase === 'closed' || v.view.phase === 'finished' "
                    "|| v.view.phase === 'tie'")
        assert host.locator("[data-action=next] kbd").inner_text() == "n"
        host.keyboard.press("n")
        wait(host, "v.view.phase === 'ready' || v.view.phase === 'finished'")
    # The end: one leader wins.
    leader = max(range(3), key=lambda p: expected[p])
    assert sorted(expected)[-1] > sorted(expected)[-2]
    wait(board, f"v.view.phase === 'finished' && v.view.winner === {leader}")
    # The host sees the winner, that the game is recorded, and «Новая игра» as the next step.
    host.wait_for_selector("#result", state="visible")
    assert host.locator("#result .who").inner_text() == names[leader]
    assert "записаны" in host.locator("#recorded").inner_text()
    assert host.locator("#primary #again").inner_text().startswith("Новая игра")
    host.click("#corrections [data-fix=end_game]")
    host.click("#fix-ok")
    wait(board, "v.finished === true")
    assert board.locator("#winner").is_visible()
    assert board.locator("#winner-name").inner_text() == names[leader]
    assert board.locator(".podium .first .pname").inner_text() == names[leader]
    wait(host, "v.finished === true")
    assert host.locator("#result").is_visible()
    assert host.locator("#recorded").inner_text().startswith("Игра записана")
    assert host.locator("#stats .stats-table tbody tr").count() == 3
    host.click("#primary #again")  # the next game: nothing said to be running
    host.wait_for_selector("#new-game-dialog", state="visible")
    assert host.locator("#ng-running").is_hidden()


def test_screens_reconnect_after_a_server_restart(browser: Any, server: Server) -> None:
    board = open_board(browser, server)
    host = open_host(browser, server)
    wait(host, "v.game !== null")
    host.keyboard.press("a")
    wait(board, "v.view.phase === 'open'")
    game = view(board)["game"]
    server.stop()
    board.wait_for_selector("#offline", state="visible", timeout=15000)
    host.wait_for_selector("#offline", state="visible", timeout=15000)
    server.start()
    # Both pages come back by themselves, the host without logging in again, on the same
    # game and question (the loop resumed it from the log).
    board.wait_for_selector("#offline", state="hidden", timeout=20000)
    host.wait_for_selector("#offline", state="hidden", timeout=20000)
    wait(board, f"v.game === {game} && v.view.phase === 'open'", 10000)
    wait(host, f"v.game === {game} && v.view.phase === 'open'", 10000)
    assert host.url.endswith("/host")
    # A page opened after the restart (a tablet that slept) lands on the same screen.
    again = open_host(browser, server)
    wait(again, f"v.game === {game} && v.view.phase === 'open'")


def test_no_page_requests_anything_outside_the_box(browser: Any, server: Server) -> None:
    seen: list[str] = []
    context = browser.new_context()
    context.on("request", lambda r: seen.append(r.url))
    page = context.new_page()
    page.goto(server.base + "/login?next=/admin/")
    page.fill("#pin", server.pin)
    page.click("button[type=submit]")
    page.wait_for_load_state("networkidle")
    for path in ("/", "/host", "/board", "/play"):
        page.goto(server.base + path)
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(300)
    context.close()
    assert len(seen) > 10
    box = urlsplit(server.base).netloc
    outside = [u for u in seen if not u.startswith("data:") and urlsplit(u).netloc != box]
    assert outside == []


def test_player_phone_takes_a_seat_and_buzzes(browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    wait(host, "v.game !== null")
    phone = browser.new_page(viewport={"width": 390, "height": 844})
    phone.goto(server.base + "/play")
    phone.wait_for_selector("#seats button")
    phone.click("#seats button[data-seat='1']")
    wait(phone, "v.seat === 1")
    assert phone.locator("#my-seat").inner_text() == view(host)["view"]["players"][1]["name"]
    assert phone.locator("#buzzer").is_visible()
    host.keyboard.press("a")
    wait(phone, "v.view.may_press === true")
    phone.locator("#buzzer").dispatch_event("pointerdown")
    wait(host, "v.view.answering === 1")
    assert "телефон" in host.locator("#race tr").first.inner_text()
    # A phone that reloads keeps its seat.
    phone.reload()
    wait(phone, "v.seat === 1")


def click_choice(host: Any, action: str, label: str) -> None:
    host.locator(f".action-group[data-action={action}] button", has_text=label).first.click()


def fix(host: Any, kind: str, picks: list[str], value: str | None = None) -> None:
    """A correction: its dialog shows the current value and confirms the change."""
    host.click(f"#corrections [data-fix={kind}]")
    for text in picks:
        host.locator("#fix-fields button", has_text=text).first.click()
    if value is not None:
        host.fill("#fix-fields input", value)
    assert host.locator("#fix-change").inner_text().strip()
    host.click("#fix-ok")
    host.wait_for_selector("#fix-dialog", state="hidden")


def fill_form(host: Any, action: str, values: dict[str, str]) -> None:
    """An action with several arguments: a small form."""
    group = host.locator(f".action-group[data-action={action}]").first
    for name, value in values.items():
        field = group.locator(f"[name={name}]")
        if field.evaluate("e => e.tagName") == "SELECT":
            field.select_option(label=value)
        else:
            field.fill(value)
    group.locator("button[type=submit]").click()


def test_tv_round_with_a_false_start_a_cat_and_an_auction(browser: Any, server: Server) -> None:
    names = ["Анна", "Борис", "Вера"]
    board = open_board(browser, server)
    host = open_host(browser, server)
    host.click("#new-game")
    host.check("#ng-format-tv")
    assert host.is_hidden("#ng-stage-box")
    inputs = host.locator("#ng-players input:not([disabled])")
    for i in range(inputs.count()):
        inputs.nth(i).fill(names[i] if i < len(names) else "")
    host.click("#ng-start")
    if host.locator("#ng-start.confirming").count():  # a running game: asked once more
        host.click("#ng-start")
    wait(board, "v.rules === 'tv' && v.view.phase === 'pick_chooser'")
    click_choice(host, "pick_chooser", "Анна")
    wait(board, "v.view.phase === 'choose'")
    wait(host, "v.view.phase === 'choose'")  # each page gets its own frame, in any order
    # The board: six themes of five values; the host taps a cell on its own copy.
    assert board.locator("#grid .row").count() == 6
    assert board.locator("#grid .row").first.locator(".cell").first.inner_text() == "100"
    rules_state = view(host)["view"]["board"]["themes"]
    assert rules_state[1]["cells"][2]["kind"] == "cat"
    assert rules_state[4]["cells"][3]["kind"] == "auction"
    assert "kind" not in view(board)["view"]["board"]["themes"][1]["cells"][2]

    # 1. A normal question with a false start.
    host.click("#board-pick button[data-cell='0:0']")
    wait(board, "v.view.phase === 'reading'")
    wait(host, "v.view.phase === 'reading'")
    q_text = view(host)["view"]["question"]["text"]
    answer = view(host)["view"]["question"]["answer"]["right"][0]
    assert board.locator("#qscreen .text").inner_text() == q_text.strip()
    assert answer not in board.content()
    board.keyboard.press("3")  # Вера presses before the lamp
    wait(board, "v.view.false_starts === 1")
    assert "✕" in board.locator(".board-scores .p[data-seat='2'] .marks").inner_text()
    wait(host, "v.view.question.race.presses.length === 1")
    assert "фальстарт" in host.locator("#race tr").first.inner_text()
    host.keyboard.press("Space")  # the lamp
    wait(board, "v.view.phase === 'buttons'")
    assert board.locator("#board").get_attribute("data-lamp") == "on"
    assert sim_press(server, 0)["ok"]
    wait(board, "v.view.phase === 'answering'")
    assert board.locator("#answerer-name").inner_text() == "Анна"
    host.click("#race-toggle")  # the host shows the race on the board
    board.wait_for_selector("#race-overlay", state="visible")
    assert "фальстарт" in board.locator("#race").inner_text()
    host.click("#race-toggle")
    board.wait_for_selector("#race-overlay", state="hidden")
    # The board played its sounds (Web Audio, generated in the page) for each cue.
    assert board.evaluate("window.soundLog") == ["false_start", "lamp_on", "press"]
    host.keyboard.press("+")
    wait(board, "v.view.players[0].score === 100 && v.view.phase === 'choose'")
    assert board.locator("#grid .row").first.locator(".cell").first.inner_text() == ""
    assert answer in board.locator("#last-answer").inner_text()  # revealed once closed

    # 2. A cat in the bag: given to Борис, who picks its value; its text once it is his.
    host.click("#board-pick button[data-cell='1:2']")
    wait(board, "v.view.phase === 'cat_give'")
    wait(host, "v.view.phase === 'cat_give'")
    assert board.locator(".kind-banner").inner_text() == "Кот в мешке"
    cat = view(host)["view"]["question"]
    assert cat["text"] and cat["answer"]["right"]
    assert view(board)["view"]["question"]["theme"] == ""
    click_choice(host, "give", "Борис")
    wait(board, "v.view.phase === 'cat_price'")
    click_choice(host, "cat_price", "300")  # 100..500 by 100: one button per value
    wait(board, "v.view.phase === 'answering'")
    assert board.locator("#theme").inner_text() == "Шахматы"
    assert board.locator("#value").inner_text() == "300"
    assert board.locator("#answerer-name").inner_text() == "Борис"
    # The room reads the cat's question while Борис answers (issue 25); not its answer.
    assert cat["text"].strip()[:25] in board.locator("#qscreen .text").inner_text()
    assert board.locator("#qscreen .text").is_visible()
    assert board.locator("#answerer.compact").is_visible()
    assert cat["answer"]["right"][0] not in board.content()
    host.keyboard.press("+")
    wait(board, "v.view.players[1].score === 300 && v.view.phase === 'choose'")
    assert view(board)["view"]["chooser"] == 0  # the choice stays with the cat's opener

    # 3. An auction, after the host corrects the scores (one level down).
    for who, score in (("Анна", "1000"), ("Борис", "2000"), ("Вера", "1500")):
        fix(host, "set_score", [who], score)
        seat = names.index(who)
        wait(board, f"v.view.players[{seat}].score === {score}")
    host.click("#board-pick button[data-cell='4:3']")
    wait(board, "v.view.phase === 'auction'")
    wait(host, "v.view.phase === 'auction'")
    assert board.locator(".kind-banner").inner_text() == "Аукцион"
    lot = view(host)["view"]["question"]
    # A view arriving while the host types a bid keeps what was typed.
    amount = host.locator(".action-group[data-action=bid] [name=amount]").first
    amount.fill("800")
    host.click("#pause-toggle")
    wait(host, "v.ui.paused === true")
    host.click("#pause-toggle")
    wait(host, "v.ui.paused === false")
    assert amount.input_value() == "800"
    fill_form(host, "bid", {"amount": "500"})
    wait(board, "v.view.question.auction.bid === 500")
    wait(host, "v.view.question.auction.bid === 500")
    assert "500 — Анна" in board.locator(".board-auction").inner_text()
    turn = view(board)["view"]["question"]["auction"]["turn"]
    assert turn == 2  # the next word goes to the smaller score: Вера
    host.click("[data-action=pass]")  # the word is Вера's: one button, no choice
    wait(board, "v.view.question.auction.turn === 1")
    wait(host, "v.view.question.auction.turn === 1")
    fill_form(host, "bid", {"amount": "700"})
    wait(board, "v.view.question.auction.bid === 700 && v.view.question.auction.turn === 0")
    wait(host, "v.view.question.auction.bid === 700 && v.view.question.auction.turn === 0")
    host.wait_for_timeout(300)
    assert host.locator("#toast").is_hidden()  # each form sent once: no refused repeat
    host.click("[data-action=pass]")
    wait(board, "v.view.phase === 'answering'")
    assert board.locator("#answerer-name").inner_text() == "Борис"
    assert lot["text"].strip()[:25] in board.locator("#qscreen .text").inner_text()
    assert board.locator("#qscreen .text").is_visible()
    assert lot["answer"]["right"][0] not in board.content()
    host.keyboard.press("-")
    wait(board, "v.view.players[1].score === 1300 && v.view.phase === 'choose'")
    assert board.locator(".board-scores .p[data-seat='1'] .score").inner_text() == "1300"
    assert view(board)["view"]["chooser"] == 0  # the opener keeps the choice


def test_idle_board_shows_wifi_and_host_page_qr_codes(browser: Any, tmp_path: Path) -> None:
    data = tmp_path / "idle"
    data.mkdir()
    (data / "settings.json").write_text(json.dumps(
        {"wifi": {"ssid": "Svoyak-7F3A", "password": "quiz-night-42"}}))
    server = Server(data, None, "--no-demo").start()
    try:
        board = open_board(browser, server)
        wait(board, "v.game === null")
        assert board.locator("#idle").is_visible()
        assert board.locator(".wifi-name").inner_text() == "Svoyak-7F3A"
        for img in ("img[src='/qr/wifi.svg']", "img[src='/qr/play.svg']",
                    "img[src='/qr/host.svg']"):
            board.wait_for_function(
                f"document.querySelector(\"{img}\").naturalWidth > 0")
        # The players' page first (a phone's button), then the host page.
        assert board.locator("#idle-play .addr").inner_text().endswith("/play")
        assert "/host" in board.locator("#idle .big").inner_text()
        # The host starts a game: the idle screen gives way to the board.
        host = open_host(browser, server)
        host.wait_for_selector("#new-game-dialog", state="visible")  # offered at once
        start_battle(host, ["Анна", "Борис"])
        board.wait_for_selector("#idle", state="hidden")
    finally:
        server.stop()


class HostSocket:
    """The host tablet as a Socket.IO client (to drive a game quickly to its final)."""

    def __init__(self, server: Server):
        import requests
        import socketio

        http = requests.Session()
        r = http.post(server.base + "/login", data={"pin": server.pin}, allow_redirects=False)
        assert r.status_code == 302
        self.last: dict[str, Any] = {}
        self.sio = socketio.Client(reconnection=False)
        self.sio.on("view", self._view)
        cookie = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
        self.sio.connect(server.base, auth={"role": "host"}, headers={"Cookie": cookie},
                         transports=["websocket"], wait_timeout=10)

    def _view(self, data: dict[str, Any]) -> None:
        self.last = data

    def send(self, name: str, data: dict[str, Any]) -> dict[str, Any]:
        res = self.sio.call(name, data, timeout=10)
        assert res["ok"], (name, data, res)
        return res


def test_final_bets_and_answers_from_phones(browser: Any, server: Server) -> None:
    names = ["Анна", "Борис", "Вера"]
    host = HostSocket(server)
    try:
        host.send("new_game", {"rules": "tv", "players": names, "package": "demo:tv"})
        for seat, score in ((0, 1000), (1, 600), (2, 300)):
            host.send("command", {"type": "set_score", "player": seat, "score": score})
        for _ in range(40):  # end the rounds, pick, remove final themes until the bets
            time.sleep(0.1)
            v = host.last
            if v.get("view", {}).get("phase") == "bets":
                break
            acts = {a["type"]: a for a in v.get("actions", [])}
            kind = next(k for k in ("end_round", "pick_chooser", "pick_remover",
                                    "remove_theme") if k in acts)
            args = {k: c[0]["value"] for k, c in acts[kind]["args"].items()}
            host.send("command", {"type": kind, **args})
        assert host.last["view"]["phase"] == "bets"
        board = open_board(browser, server)
        phones = []
        for seat in range(3):
            phone = browser.new_page(viewport={"width": 390, "height": 844})
            phone.goto(server.base + "/play")
            phone.click(f"#seats button[data-seat='{seat}']")
            wait(phone, f"v.seat === {seat}")
            phones.append(phone)
        # Each phone offers only its own bet, within its own score.
        for seat, amount in ((0, "700"), (1, "600"), (2, "1")):
            phone = phones[seat]
            phone.wait_for_selector("#my-actions .action-group[data-action=bet]")
            field = phone.locator("[data-action=bet] [name=amount]")
            assert field.get_attribute("max") == str((1000, 600, 300)[seat])
            assert phone.locator("[data-action=bet] [name=player]").count() == 0  # own seat
            field.fill(amount)
            phone.click("[data-action=bet] button[type=submit]")
            if seat < 2:  # the last bet moves the final on: the bet's form and its note go
                phone.wait_for_selector("#sent", state="visible")
                phone.wait_for_timeout(200)
                assert phone.locator("#toast").is_hidden() and phone.is_visible("#sent")
                assert amount in phone.locator("#sent").inner_text()
        wait(board, "v.view.phase === 'writing'")
        for seat, text in enumerate(["Тайна Анны", "Тайна Бориса", "Тайна Веры"]):
            phone = phones[seat]
            phone.wait_for_selector("[data-action=write] [name=text]")
            phone.fill("[data-action=write] [name=text]", text)
            phone.click("[data-action=write] button[type=submit]")
            phone.wait_for_selector("#sent", state="visible")
        wait(board, "v.view.question.written.rows.every(r => r.has_answer)")
        page = board.content()
        assert "✓" in board.locator(".board-written").inner_text()
        for secret in ("Тайна Анны", "Тайна Бориса", "700"):
            assert secret not in page
        assert "Тайна Бориса" not in phones[0].content()  # nor on another player's phone
        # The host judges Анна's answer: it and her bet appear on the board.
        host.send("command", {"type": "judge", "player": 0, "verdict": "right"})
        wait(board, "v.view.question && v.view.question.written.rows[0].verdict === 'right'")
        text = board.locator(".board-written").inner_text()
        assert "Тайна Анны" in text and "700" in text and "Тайна Бориса" not in text
    finally:
        host.sio.disconnect()
