"""`make screenshots`: a scripted evening through the UI only — a TV game from the start
screen (and its offer of the host's language for the whole box) to the final and its
results, a sport battle with a queue to its end, and boards of 6 themes × 10 questions and
10 themes × 5, and a tournament from the director's page (entries, draw, a battle,
walkovers to the podium) — played on a real `svoyak serve --simulate` on loopback in
Debian's Chromium. At every phase it calls a checkpoint with the pages that matter;
`make screenshots` writes them to docs/screenshots/ (host 1280×800 and 800×1280, board
1920×1080, phone 390×844) and the browser tests check layout, accessibility and the
catalogues at the very same checkpoints (tests/test_screens.py).

    python -m webui.screenshots docs/screenshots
"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from webui import localserver
from webui.demo_names import person

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PIN = "2468"
NAMES = ["Анна", "Борис", "Вера"]
HOST = {"width": 1280, "height": 800}
HOST_PORTRAIT = {"width": 800, "height": 1280}
BOARD = {"width": 1920, "height": 1080}
PHONE = {"width": 390, "height": 844}

# checkpoint(name, pages): pages maps a role ("host", "board", "phone", "phone2", ...) to
# its Playwright page, in the state the phase is in.
Checkpoint = Callable[[str, dict[str, Any]], None]


def settings(data: Path) -> None:
    data.mkdir(parents=True, exist_ok=True)
    (data / "settings.json").write_text(json.dumps(
        {"pin": PIN, "box_name": "Svoyak", "host_url": "http://svoyak.local/host",
         "wifi": {"ssid": "Svoyak-7F3A", "password": "quiz-night-42"}}))


def entries_csv(n: int) -> bytes:
    """A morning's entries as a spreadsheet saves them (Windows-1251, semicolons)."""
    teams = ["Физтех", "МГУ", "СПбГУ", "ВШЭ", "МИФИ", "Бауманка", "УрФУ", "НГУ", "КФУ"]
    cities = ["Москва", "Долгопрудный", "Санкт-Петербург", "Екатеринбург", "Новосибирск",
              "Казань"]
    rows = [f"{person(i)};{teams[(i * 2) % 9]};{cities[i % 6]}" for i in range(n)]
    return ("имя;команда;город\n" + "\n".join(rows) + "\n").encode("cp1251")


def big_board(themes: int, questions: int) -> bytes:
    """The demo TV package with its first round replaced by a themes × questions board
    (the SIQ format allows up to 10 of each), as a package file to upload."""
    demo = json.loads((ROOT / "appliance" / "data" / "demo-tv.json").read_text())
    pkg = copy.deepcopy(demo)
    proto = demo["rounds"][0]["themes"][0]["questions"][0]
    names = ["Столицы мира", "Животные", "Русская литература XIX века", "Кухня народов мира",
             "Музыка", "Физика вокруг нас", "Кино", "Спорт и олимпиады", "Химия", "Мифология"]
    board: list[dict[str, Any]] = []
    for ti in range(themes):
        qs = []
        for qi in range(questions):
            q = copy.deepcopy(proto)
            q["price"] = 100 * (qi + 1)
            q["content"][0]["value"] = f"Вопрос {qi + 1} темы «{names[ti]}»"
            q["right"] = [f"Ответ {ti + 1}.{qi + 1}"]
            qs.append(q)
        board.append({"name": names[ti], "questions": qs})
    rnd = {"name": "Большой раунд", "final": False, "themes": board}
    pkg["rounds"] = [rnd, *demo["rounds"][1:]]
    pkg["name"] = f"Табло {themes}×{questions}"
    return json.dumps(pkg, ensure_ascii=False).encode()


class Show:
    """Drives the screens through a club evening; calls `checkpoint` at every phase."""

    def __init__(self, browser: Any, base: str, checkpoint: Checkpoint,
                 context_options: dict[str, Any] | None = None):
        self.browser = browser
        self.base = base
        self.checkpoint = checkpoint
        self.ctx = context_options or {}
        self.host: Any = None
        self.board: Any = None
        self.phones: list[Any] = []

    # --- pages -----------------------------------------------------------------------------
    def page(self, viewport: dict[str, int], **kw: Any) -> Any:
        context = self.browser.new_context(viewport=viewport, **{**self.ctx, **kw})
        return context.new_page()

    def open(self) -> None:
        self.board = self.page(BOARD)
        self.board.goto(self.base + "/board")
        self.ready(self.board)
        self.host = self.page(HOST)
        self.host.goto(self.base + "/host")
        self.host.fill("#pin", PIN)
        self.host.click("button[type=submit]")
        self.ready(self.host)

    def phone(self, seat: int) -> Any:
        while len(self.phones) <= seat:
            p = self.page(PHONE, has_touch=True, is_mobile=True)
            p.goto(self.base + "/play")
            self.ready(p)
            self.phones.append(p)
        p = self.phones[seat]
        if (self.view(p) or {}).get("seat") != seat:
            p.click(f"#seats button[data-seat='{seat}']")
            self.wait(p, f"v.seat === {seat}")
        return p

    @staticmethod
    def ready(page: Any) -> None:
        page.wait_for_selector("body[data-ready='1']", state="attached", timeout=15000)

    @staticmethod
    def view(page: Any) -> Any:
        return page.evaluate("window.lastView")

    @staticmethod
    def wait(page: Any, js: str, timeout: float = 10000) -> None:
        # A function, not an expression: the box's CSP allows no eval in the page.
        page.wait_for_function(
            f"() => {{ const v = window.lastView; return !!v && ({js}); }}", timeout=timeout)

    def settle(self, *pages: Any) -> None:
        for p in pages or (self.host, self.board):
            p.wait_for_timeout(120)  # the cell-opening transition

    def press(self, seat: int) -> None:
        req = urllib.request.Request(self.base + "/api/sim/press", method="POST",
                                     data=json.dumps({"player": seat}).encode(),
                                     headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=5).close()

    def at(self, name: str, **pages: Any) -> None:
        self.settle(*pages.values())
        self.checkpoint(name, pages)

    # --- host gestures ---------------------------------------------------------------------
    def start(self, rules: str, names: list[str], package: str | None = None,
              stage: str = "") -> None:
        h = self.host
        if h.is_hidden("#new-game-dialog"):
            h.click("#new-game")
        h.check(f"#ng-format-{rules}")
        if package:
            h.select_option("#ng-package", package)
        if rules == "battle":
            h.select_option("#ng-stage", stage)
        inputs = h.locator("#ng-players input:not([disabled])")
        for i in range(inputs.count()):
            inputs.nth(i).fill(names[i] if i < len(names) else "")
        self.confirm_start()
        h.wait_for_selector("#new-game-dialog", state="hidden")
        joined = json.dumps(",".join(names))
        self.wait(h, f"v.rules === '{rules}'"
                     f" && v.view.players.map(p => p.name).join() === {joined}")

    def confirm_start(self) -> None:
        """«Начать» on the start screen; with a game still running it asks once more (the
        screen names the game it will end)."""
        h = self.host
        h.click("#ng-start")
        if h.locator("#ng-start.confirming").count():
            h.click("#ng-start")

    def choice(self, action: str, text: str) -> None:
        self.host.locator(f"[data-action={action}] button", has_text=text).first.click()

    def fix(self, kind: str, picks: list[str] | None = None, fill: str | None = None,
            name: str | None = None) -> None:
        """A correction through its dialog: pick the choices, type the value, confirm."""
        h = self.host
        h.click(f"#corrections [data-fix={kind}]")
        h.wait_for_selector("#fix-dialog", state="visible")
        for text in picks or []:
            h.locator("#fix-fields button", has_text=text).first.click()
        if fill is not None:
            h.fill("#fix-fields input", fill)
        if name:
            self.at(name, host=h)
        h.click("#fix-ok")
        h.wait_for_selector("#fix-dialog", state="hidden")

    # --- a TV game ---------------------------------------------------------------------------
    def tv_game(self) -> None:
        h, b = self.host, self.board
        h.wait_for_selector("#new-game-dialog", state="visible")
        self.at("start", host=h, board=b)
        self.box_language()
        self.start("tv", NAMES)
        phone0, phone2 = self.phone(0), self.phone(2)
        self.wait(b, "v.view.phase === 'pick_chooser'")
        self.at("tv-pick-chooser", host=h, board=b, phone=phone0)
        self.choice("pick_chooser", NAMES[0])
        self.wait(b, "v.view.phase === 'choose'")
        self.wait(h, "v.view.phase === 'choose'")
        self.at("tv-choose", host=h, board=b, phone=phone0)
        # A question with a false start, the lamp, a press, the race, a verdict.
        h.click("#board-pick button[data-cell='0:0']")
        self.wait(b, "v.view.phase === 'reading'")
        self.wait(h, "v.view.phase === 'reading'")
        self.at("tv-reading", host=h, board=b)
        self.press(2)
        self.wait(phone2, "v.view.question && v.view.question.race.presses.length === 1")
        self.wait(h, "v.view.question.race.presses.length === 1")
        self.at("tv-false-start", host=h, board=b, phone=phone2)
        h.keyboard.press("Space")
        self.wait(b, "v.view.phase === 'buttons'")
        self.wait(phone0, "v.view.phase === 'buttons'")
        self.wait(h, "v.view.phase === 'buttons'")
        self.at("tv-lamp", host=h, board=b, phone=phone0)
        self.press(0)
        self.wait(b, "v.view.phase === 'answering'")
        self.wait(h, "v.view.phase === 'answering'")
        self.wait(phone0, "v.view.phase === 'answering'")
        self.at("tv-answering", host=h, board=b, phone=phone0)
        h.click("#race-toggle")
        self.wait(b, "v.ui.race_shown === true")
        self.at("tv-race", board=b)
        h.click("#race-toggle")
        self.wait(b, "v.ui.race_shown === false")
        h.keyboard.press("+")
        self.wait(b, "v.view.phase === 'choose' && v.view.players[0].score === 100")
        self.wait(h, "v.view.phase === 'choose'")
        self.at("tv-answer-shown", host=h, board=b)
        # A cat in the bag: given to Борис, who picks its value.
        h.click("#board-pick button[data-cell='1:2']")
        self.wait(h, "v.view.phase === 'cat_give'")
        self.wait(b, "v.view.phase === 'cat_give'")
        self.at("tv-cat-give", host=h, board=b)
        self.choice("give", NAMES[1])
        self.wait(h, "v.view.phase === 'cat_price'")
        self.choice("cat_price", "300")
        self.wait(b, "v.view.phase === 'answering'")
        self.wait(h, "v.view.phase === 'answering'")
        self.at("tv-cat-answering", host=h, board=b)
        h.keyboard.press("-")
        self.wait(b, "v.view.phase === 'choose'")
        self.wait(h, "v.view.phase === 'choose'")
        # Corrections: the scores, through the dialog that shows the current value.
        for who, score in ((NAMES[0], "1000"), (NAMES[1], "2000"), (NAMES[2], "1500")):
            self.fix("set_score", [who], score, "tv-fix-score" if who == NAMES[0] else None)
            seat = NAMES.index(who)
            self.wait(b, f"v.view.players[{seat}].score === {score}")
            self.wait(h, f"v.view.players[{seat}].score === {score}")
        # An auction: bids as they come.
        h.click("#board-pick button[data-cell='4:3']")
        self.wait(h, "v.view.phase === 'auction'")
        self.wait(b, "v.view.phase === 'auction'")
        self.at("tv-auction", host=h, board=b)
        self.bid("500")
        self.wait(h, "v.view.question.auction.turn === 2")
        self.host.click("[data-action=pass]")
        self.wait(h, "v.view.question.auction.turn === 1")
        self.bid("700")
        self.wait(h, "v.view.question.auction.bid === 700 && v.view.question.auction.turn === 0")
        self.wait(b, "v.view.question.auction.bid === 700")
        self.at("tv-auction-bids", host=h, board=b)
        self.host.click("[data-action=pass]")
        self.wait(h, "v.view.phase === 'answering'")
        h.keyboard.press("+")
        self.wait(h, "v.view.phase === 'choose'")
        # The remaining rounds end at the host's word; then the final.
        for _ in range(12):
            v = self.view(h)["view"]
            if v["phase"] in ("final_order", "final_remove", "bets"):
                break
            kinds = {a["type"] for a in self.view(h)["actions"]}
            if "pick_chooser" in kinds:
                self.host.locator("[data-action=pick_chooser] button").first.click()
            elif "end_round" in kinds:
                self.fix("end_round")
            self.wait(h, f"JSON.stringify(v.view.round) !== {json.dumps(json.dumps(v['round']))}"
                         f" || v.view.phase !== '{v['phase']}'")
        first_removal = True
        for _ in range(12):
            v = self.view(h)["view"]
            if v["phase"] == "bets":
                break
            if v["phase"] == "final_order":
                self.host.locator("[data-action=pick_remover] button").first.click()
            elif v["phase"] == "final_remove":
                if first_removal and any(t["removed_by"] is not None for t in v["final"]["themes"]):
                    self.wait(b, "v.view.phase === 'final_remove'")
                    self.at("tv-final-remove", host=h, board=b)
                    first_removal = False
                self.host.locator("[data-action=remove_theme] button").first.click()
            n = sum(t["removed_by"] is not None for t in v["final"]["themes"]) if v["final"] else 0
            self.wait(h, f"v.view.phase !== '{v['phase']}' || (v.view.final && "
                         f"v.view.final.themes.filter(t => t.removed_by !== null).length > {n})")
        self.wait(b, "v.view.phase === 'bets'")
        phones = [self.phone(s) for s in range(3)]
        for p in phones:
            self.wait(p, "v.view.phase === 'bets'")
            p.wait_for_selector("#my-actions [data-action=bet]")
        self.at("tv-bets", host=h, board=b, phone=phones[0])
        for s, amount in enumerate(("700", "600", "1")):
            p = phones[s]
            p.fill("[data-action=bet] [name=amount]", amount)
            p.click("[data-action=bet] button[type=submit]")
            if s == 0:
                p.wait_for_selector("#sent", state="visible")
                self.at("tv-bet-sent", phone=p)
        self.wait(b, "v.view.phase === 'writing'")
        for s, text in enumerate(("Тайна Анны", "Тайна Бориса", "Тайна Веры")):
            p = phones[s]
            p.wait_for_selector("[data-action=write] [name=text]")
            if s == 0:
                self.at("tv-writing", phone=p)
            p.fill("[data-action=write] [name=text]", text)
            p.click("[data-action=write] button[type=submit]")
        self.wait(h, "v.view.question.written.rows.every(r => r.has_answer)")
        self.wait(b, "v.view.question.written.rows.every(r => r.has_answer)")
        self.at("tv-written", host=h, board=b, phone=phones[0])
        # A correction before the verdicts makes a tie for first: Анна 1400 + 700 and
        # Борис 2700 − 600 both end on 2100, so a shootout decides.
        self.fix("set_score", [NAMES[0]], "1400")
        self.wait(h, "v.view.players[0].score === 1400")
        for s, verdict in ((0, "right"), (1, "wrong"), (2, "wrong")):
            h.click(f"#primary .choice-row[data-player='{s}'] button[data-value='\"{verdict}\"']")
            if s == 0:
                self.wait(b, "v.view.question.written.rows[0].verdict === 'right'")
                self.at("tv-final-judged", host=h, board=b)
            else:
                self.wait(h, f"!v.view.question || v.view.question.written.rows[{s}].verdict")
        # The shootout between the two tied, the others greyed on the board.
        self.wait(h, "v.view.phase === 'shootout_theme'")
        self.wait(b, "v.view.phase === 'shootout_theme'")
        self.at("tv-shootout-theme", host=h, board=b)
        self.host.locator("[data-action=shootout_theme] button").first.click()
        self.wait(h, "v.view.phase === 'reading' && v.view.shootout")
        self.wait(b, "v.view.phase === 'reading'")
        h.keyboard.press("Space")
        self.wait(h, "v.view.phase === 'buttons'")
        self.wait(b, "v.view.phase === 'buttons'")
        self.at("tv-shootout", host=h, board=b)
        self.press(0)
        self.wait(h, "v.view.phase === 'answering'")
        h.keyboard.press("+")
        for _ in range(8):  # the theme's other questions: nobody answers
            self.wait(h, "v.view.stage === 'over' || v.view.phase === 'reading'")
            if self.view(h)["view"]["stage"] == "over":
                break
            n = self.view(h)["view"]["question"]["value"]
            h.keyboard.press("n")
            self.wait(h, "v.view.stage === 'over' || v.view.phase !== 'reading'"
                         f" || (v.view.question && v.view.question.value !== {n})")
        self.wait(h, "v.view.stage === 'over'")
        self.wait(b, "v.view.stage === 'over'")
        for p in phones:
            self.wait(p, "v.view.stage === 'over'")
        self.at("tv-over", host=h, board=b, phone=phones[0])
        self.end_game(h)
        self.wait(h, "v.finished === true")
        self.wait(b, "v.finished === true")
        self.wait(phones[0], "v.finished === true")
        self.at("tv-finished", host=h, board=b, phone=phones[0])
        game = self.view(h)["game"]
        proto = self.page(HOST)
        proto.context.add_cookies(h.context.cookies())
        proto.goto(f"{self.base}/protocol/{game}")
        proto.wait_for_selector("#verdicts tr")
        self.at("tv-protocol", protocol=proto)
        proto.context.close()

    def box_language(self) -> None:
        """The host reading its page in English on a Russian box: the start screen offers
        English for the whole box, behind a confirmation. Cancelled, and the host's own pick
        forgotten, so the evening goes on in the box's Russian."""
        h = self.host
        h.goto(self.base + "/lang/en?next=/host")
        self.ready(h)
        h.wait_for_selector("#new-game-dialog", state="visible")
        h.click("#ng-box-lang")
        h.wait_for_selector("#lang-dialog", state="visible")
        self.at("box-language", host=h)
        h.click("#lang-cancel")
        h.wait_for_selector("#lang-dialog", state="hidden")
        h.context.clear_cookies(name="lang")
        h.goto(self.base + "/host")
        self.ready(h)
        h.wait_for_selector("#new-game-dialog", state="visible")

    def bid(self, amount: str) -> None:
        group = self.host.locator("[data-action=bid]").first
        group.locator("[name=amount]").fill(amount)
        group.locator("button[type=submit]").click()
        self.wait(self.host, f"v.view.question.auction.bid === {amount}")

    # --- a sport battle ----------------------------------------------------------------------
    def battle(self) -> None:
        h, b = self.host, self.board
        self.start("battle", NAMES, stage="qualification")
        phone0, phone1 = self.phone(0), self.phone(1)
        self.wait(b, "v.rules === 'battle' && v.view.phase === 'ready'")
        self.wait(phone0, "v.rules === 'battle'")
        self.at("battle-ready", host=h, board=b, phone=phone0)
        h.keyboard.press("a")
        self.wait(b, "v.view.lamp === true")
        self.wait(phone0, "v.view.may_press === true")
        self.wait(h, "v.view.lamp === true")
        self.at("battle-lamp", host=h, board=b, phone=phone0)
        self.press(1)
        self.wait(h, "v.view.answering === 1")
        self.wait(b, "v.view.answering === 1")
        self.wait(phone1, "v.view.answering === 1")
        self.at("battle-answering", host=h, board=b, phone=phone1)
        h.keyboard.press("s")  # the signal reset opens the queue
        self.wait(h, "v.view.queue_open === true")
        self.press(2)
        self.press(0)
        self.wait(h, "v.view.queue.length === 2")
        self.wait(b, "v.view.queue.length === 2")
        self.at("battle-queue", host=h, board=b, phone=phone0)
        h.keyboard.press("-")
        self.wait(h, "v.view.answering === 2")
        self.wait(b, "v.view.answering === 2")
        self.at("battle-queue-next", host=h, board=b)
        h.keyboard.press("+")
        self.wait(b, "v.view.phase === 'closed'")
        self.wait(h, "v.view.phase === 'closed'")
        self.at("battle-revealed", host=h, board=b)
        h.keyboard.press("n")
        for n in range(1, 20):
            self.wait(h, "v.view.phase === 'ready'")
            h.keyboard.press("a")
            self.wait(h, "v.view.lamp === true")
            self.press(n % 2)  # Анна and Борис share the points; Анна a little more
            self.wait(h, f"v.view.answering === {n % 2}")
            h.keyboard.press("+" if n % 2 == 0 or n % 3 else "-")
            self.wait(h, "v.view.phase === 'closed' || v.view.phase === 'finished'"
                         " || v.view.phase === 'tie' || v.view.answering === null")
            if self.view(h)["view"]["phase"] == "open":
                h.keyboard.press("r")  # read out: the window closes the question
                self.wait(h, "v.view.phase === 'closed'", 15000)
            if self.view(h)["view"]["phase"] in ("finished", "tie"):
                break
            h.keyboard.press("n")
        self.wait(h, "v.view.phase === 'finished'")
        self.wait(b, "v.view.phase === 'finished'")
        self.at("battle-over", host=h, board=b, phone=phone0)
        self.end_game(h)
        self.wait(h, "v.finished === true")
        self.wait(b, "v.finished === true")
        self.wait(phone0, "v.finished === true")
        self.at("battle-finished", host=h, board=b, phone=phone0)
        # The final's board: six red themes of twelve, and the legend under the grid.
        self.start("battle", NAMES, stage="final")
        self.wait(b, "v.rules === 'battle' && v.view.themes && v.view.themes.length === 12"
                     " && !v.finished")
        b.wait_for_selector("#red-legend", state="visible")
        self.at("battle-final-red", host=h, board=b)

    def end_game(self, h: Any) -> None:
        """«Завершить игру» from the corrections (after the end «Новая игра» is primary)."""
        h.click("#corrections [data-fix=end_game]")
        h.click("#fix-ok")

    # --- boards of every size the SIQ format allows --------------------------------------------
    def boards(self) -> None:
        h, b = self.host, self.board
        for themes, questions in ((6, 10), (10, 5)):
            title = f"Табло {themes}×{questions}"
            r = h.request.post(self.base + "/admin/packages", multipart={
                "file": {"name": f"board-{themes}x{questions}.json",
                         "mimeType": "application/json", "buffer": big_board(themes, questions)}})
            assert r.ok, r.text()
            h.goto(self.base + "/host")
            self.ready(h)
            if h.is_hidden("#new-game-dialog"):
                h.click("#new-game")
            h.check("#ng-format-tv")
            h.select_option("#ng-package", label=title)
            inputs = h.locator("#ng-players input:not([disabled])")
            for i in range(inputs.count()):
                inputs.nth(i).fill(NAMES[i] if i < 3 else "")
            self.confirm_start()
            self.wait(h, "v.view && v.view.phase === 'pick_chooser' && v.view.board"
                         f" && v.view.board.themes.length === {themes}")
            self.choice("pick_chooser", NAMES[1])
            self.wait(b, f"v.view.phase === 'choose' && v.view.board.themes.length === {themes}")
            self.wait(h, "v.view.phase === 'choose'")
            enabled = h.locator("#board-pick button.cell:not([disabled])").count()
            assert enabled == themes * questions, f"{enabled} of {themes * questions} pickable"
            self.at(f"board-{themes}x{questions}", host=h, board=b)

    def admin(self) -> None:
        a = self.page(HOST)
        a.context.add_cookies(self.host.context.cookies())
        a.goto(self.base + "/admin/")
        self.at("admin", admin=a)
        a.click("form:has(#volume) button[type=submit]")  # «Сохранено.» beside its form
        a.wait_for_selector("form:has(#volume) #message")
        self.at("admin-saved", admin=a)
        a.goto(self.base + "/admin/")
        if a.locator("#packages .preview").count():
            a.locator("#packages .preview").first.click()
            a.wait_for_selector("#preview .preview-grid")
            self.at("admin-preview", admin=a)
        a.goto(self.base + "/")
        self.at("index", index=a)
        a.context.close()

    # --- a tournament day, from the director's page ----------------------------------------
    def tournament(self) -> None:
        """Create, import 27 entries, draw, start the first battle: the director's page, the
        bracket and the call screen on the TV; then walkovers to the final: the podium."""
        d = self.page(HOST, locale="ru-RU")  # the file chooser's own words in Russian too
        d.context.add_cookies(self.host.context.cookies())
        d.goto(self.base + "/admin/tournament/")
        d.fill("#t-title", "Кубок клуба")
        d.click("button:has-text('Создать турнир')")
        d.wait_for_selector("#entries")
        d.set_input_files("#t-file", files=[{"name": "entries.csv", "mimeType": "text/csv",
                                             "buffer": entries_csv(27)}])
        d.click("#entries button[type=submit]:has-text('Загрузить')")
        d.wait_for_selector("#draw")
        d.evaluate("document.getElementById('entries').scrollIntoView()")
        self.at("tournament-entries", director=d)
        d.fill("#t-seed", "2026")
        d.click("#draw button[type=submit]")
        d.wait_for_selector("#battles")
        first = d.locator("tr.ready").first
        battle = (first.get_attribute("id") or "").removeprefix("battle-")
        first.locator("button:has-text('Начать бой')").click()
        d.wait_for_selector(f"tr[id='battle-{battle}'].playing")
        d.evaluate("document.getElementById('battles').scrollIntoView()")
        self.at("tournament-battles", director=d)
        tv = self.page(BOARD)
        tv.goto(self.base + "/tournament/board?stage=1/9")
        self.at("tournament-bracket", tv=tv)
        tv.goto(self.base + "/tournament/call")
        self.at("tournament-call", tv=tv)
        row = d.locator(f"tr[id='battle-{battle}']")  # a battle in play: behind a confirmation
        row.locator("button:has-text('Переиграть')").click()
        d.locator(f"tr[id='battle-{battle}'] button:has-text('Да, остановить и переиграть')"
                  ).click()
        d.wait_for_selector(f"tr[id='battle-{battle}'].ready")
        self.tournament_battle(d, battle)
        while d.locator("tr.ready").count():
            row = d.locator("tr.ready").first
            boxes = row.locator("form[action$=walkover] input[type=checkbox]")
            for i in range(1, boxes.count()):
                boxes.nth(i).check()
            row.locator("button:has-text('Неявка')").click()
            d.wait_for_load_state("load")
        tv.goto(self.base + "/tournament/podium")
        self.at("tournament-podium", tv=tv)
        tv.context.close()
        d.context.close()

    def tournament_battle(self, d: Any, battle: str) -> None:
        """The battle started again and played out on the host: its end offers the
        tournament's next battle, which records the result and opens the director's page."""
        h = self.host
        d.locator(f"tr[id='battle-{battle}'] button:has-text('Начать бой')").click()
        d.wait_for_selector(f"tr[id='battle-{battle}'].playing")
        h.goto(self.base + "/host")
        self.ready(h)
        self.wait(h, "v.rules === 'battle' && v.view.phase === 'ready'")
        h.wait_for_selector("#tourney-caption:not([hidden])")
        for _ in range(60):  # every question right for the first seat
            phase = self.view(h)["view"]["phase"]
            if phase == "finished":
                break
            if phase == "ready":
                h.keyboard.press("a")
                self.wait(h, "v.view.lamp === true")
                self.press(0)
                self.wait(h, "v.view.answering === 0")
                h.keyboard.press("+")
                self.wait(h, "v.view.phase !== 'answering'", 15000)
            else:
                h.keyboard.press("n")
                self.wait(h, f"v.view.phase !== '{phase}'", 15000)
        h.wait_for_selector("#again")
        self.at("tournament-battle-over", host=h)
        h.keyboard.press("n")  # the next battle: the result goes to the tournament
        h.wait_for_url("**/admin/tournament/")
        h.goto(self.base + "/host")
        self.ready(h)
        d.reload()
        d.wait_for_selector(f"tr[id='battle-{battle}'].done")

    def second_host(self) -> None:
        other = self.page(HOST)
        other.context.add_cookies(self.host.context.cookies())
        other.goto(self.base + "/host")
        self.ready(other)
        self.wait(self.host, "v.hosts === 2")
        self.at("second-host", host=self.host)
        other.context.close()
        self.wait(self.host, "v.hosts === 1")


@contextmanager
def serving(tmp: Path) -> Iterator[str]:
    port = localserver.free_port()
    settings(tmp / "data")
    proc: subprocess.Popen[Any] = localserver.start(tmp / "data", port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(15)


def evening(show: Show) -> None:
    """The whole scripted evening, in the order a club plays it."""
    show.open()
    show.at("idle", board=show.board)
    show.tv_game()
    show.battle()
    show.second_host()
    show.boards()
    show.admin()
    show.tournament()


# The host in portrait (800×1280) for the phases whose layout differs most; the tests check
# both orientations at every phase.
PORTRAIT = {"start", "tv-choose", "tv-answering", "tv-fix-score", "tv-auction-bids",
            "tv-final-judged", "tv-over", "battle-answering", "battle-queue", "battle-finished",
            "board-6x10"}


def shooter(out: Path, written: list[Path]) -> Checkpoint:
    def snap(name: str, pages: dict[str, Any]) -> None:
        for role, page in pages.items():
            base = role.rstrip("0123456789")
            if base == "host":
                sizes = [("", HOST)] + ([("-portrait", HOST_PORTRAIT)] if name in PORTRAIT else [])
                for suffix, size in sizes:
                    page.set_viewport_size(size)
                    page.wait_for_timeout(150)
                    path = out / f"host{suffix}-{name}.png"
                    page.screenshot(path=str(path))
                    written.append(path)
                page.set_viewport_size(HOST)
            else:
                path = out / f"{base}-{name}.png"
                page.screenshot(path=str(path))
                written.append(path)
    return snap


def shoot(out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.png"):
        old.unlink()
    written: list[Path] = []
    with (tempfile.TemporaryDirectory() as tmp, serving(Path(tmp)) as base,
          sync_playwright() as p):
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        evening(Show(browser, base, shooter(out, written)))
        browser.close()
    return written


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "docs/screenshots")
    for path in shoot(out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
