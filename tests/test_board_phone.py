"""The board (TV 1920×1080, a smaller kiosk TV at 1280×800) and the player's phone (390×844)
in Debian's Chromium, against a real `svoyak serve --simulate` on loopback, driven through
the UI as a club plays:

- the phone: a name given in the lobby is offered as «Это я: …» when the game starts (one
  tap), and again at every new game;
  a phone joining a running game chooses a seat by its player's name;
- the phone's buzzer: armed, waiting, false start, answering, answered each with its own
  word and colours, text readable on each;
- the board: the lamp says who answers; the race view groups presses by signal, in time
  order, names and milliseconds only; the cat's price line stays in sight while the cat is
  answered; the final's right answer outlives the shootout; no text under 24 px on the final
  and results screens; the battle's extra-theme and tie banners name their players and grey
  the others; the kiosk's idle screen fits 1280×800 with a long box name.
Layout (no cut or overlapping text) and axe-core run at the new phases (tests/test_screens.py
does the same at the scripted evening's phases)."""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from webui import localserver, screenshots
from webui.screenshots import BOARD, NAMES, PHONE, Show

playwright_api = pytest.importorskip("playwright.sync_api")
from test_screens import CHECK_JS, NAMESPACES, Inspector  # noqa: E402  (skips with it)

KIOSK = {"width": 1280, "height": 800}
LONG_BOX_NAME = "Клуб интеллектуальных игр «Своя игра» на Васильевском острове"

# Every visible text node of the page whose computed size is under `min` px.
SMALL_TEXT = """(min) => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const p = n.parentElement, text = n.textContent.trim();
    if (!text || !p || p.closest("script, style, [hidden], title")) continue;
    const cs = getComputedStyle(p);
    if (cs.display === "none" || cs.visibility === "hidden") continue;
    const r = p.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) continue;
    const x = Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1);
    const y = Math.min(Math.max(r.top + r.height / 2, 0), innerHeight - 1);
    const hit = document.elementFromPoint(x, y);
    if (!hit || !(hit === p || p.contains(hit) || hit.contains(p))) continue;  // under an overlay
    const size = parseFloat(cs.fontSize);
    if (size < min) out.push(`${size}px «${text.slice(0, 30)}»`);
  }
  return out;
}"""

# The phone's buzzer: its state, word, and colours as the page computes them.
BUZZER = """() => {
  const b = document.querySelector("#buzzer"), cs = getComputedStyle(b);
  return {hidden: b.hidden, state: b.dataset.state,
          text: b.innerText.replace(/\\s+/g, " ").trim(), bg: cs.backgroundColor, fg: cs.color};
}"""


def luminance(css: str) -> float:
    r, g, b = (int(x) / 255 for x in re.findall(r"\d+", css)[:3])
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@contextmanager
def serving(tmp: Path, box_name: str | None = None) -> Iterator[str]:
    """`svoyak serve --simulate` on loopback, as `make screenshots` runs it (a box name of
    our own when given)."""
    screenshots.settings(tmp / "data")
    if box_name:
        path = tmp / "data" / "settings.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), "box_name": box_name}))
    port = localserver.free_port()
    proc = localserver.start(tmp / "data", port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(15)


@pytest.fixture(scope="module")
def browser(screens_browser: Any) -> Any:
    """Chromium with the screenshot script's flags (conftest's `screens_browser`)."""
    return screens_browser


class Recorder:
    """The checkpoint of the scripted TV game: what the board and the phone show."""

    FINAL = ("tv-final-remove", "tv-bets", "tv-written", "tv-final-judged",
             "tv-shootout-theme", "tv-shootout", "tv-over", "tv-finished")
    # Phases checked again on a smaller kiosk TV (1280×800): nothing cut, overlapping or
    # off the screen.
    KIOSK = ("tv-choose", "tv-answering", "tv-cat-answering", "tv-auction-bids",
             "tv-final-remove", "tv-written", "tv-final-judged", "tv-over", "tv-finished")

    def __init__(self) -> None:
        self.small: dict[str, list[str]] = {}
        self.board: dict[str, dict[str, Any]] = {}
        self.buzzer: dict[str, dict[str, Any]] = {}
        self.final_answer = ""
        self.kiosk: list[str] = []

    def __call__(self, name: str, pages: dict[str, Any]) -> None:
        host, board, phone = pages.get("host"), pages.get("board"), pages.get("phone")
        if host is not None and name == "tv-bets":
            self.final_answer = host.evaluate("window.lastView.view.question.answer.right[0]")
        if board is not None:
            self.board[name] = board.evaluate("""() => ({
              lamp: document.querySelector("#lamp-icon").textContent + " "
                + document.querySelector("#lamp-word").textContent,
              lampState: document.querySelector("#lamp").dataset.lamp,
              note: document.querySelector("#answerer-note").hidden ? null
                : document.querySelector("#answerer-note").innerText,
              answerer: document.querySelector("#answerer").hidden ? null
                : document.querySelector("#answerer-name").innerText,
              last: document.querySelector("#last-answer").hidden ? null
                : document.querySelector("#last-answer").innerText,
              final: document.querySelector("#final-answer").hidden ? null
                : document.querySelector("#final-answer").innerText,
              race: document.querySelector("#race-overlay").hidden ? null
                : [...document.querySelectorAll("#race tr")].map((r) =>
                    [...r.cells].map((c) => c.innerText.trim()))})""")
            if name in self.FINAL:
                self.small[name] = board.evaluate(SMALL_TEXT, 24)
            if name in self.KIOSK:
                board.set_viewport_size(KIOSK)
                board.wait_for_timeout(150)
                self.kiosk += [f"{name}: {p}" for p in board.evaluate(CHECK_JS, NAMESPACES)]
                board.set_viewport_size(BOARD)
                board.wait_for_timeout(150)
        if phone is not None:
            self.buzzer[name] = phone.evaluate(BUZZER)


def test_the_tv_game_on_the_board_and_a_phone(browser: Any, tmp_path: Path) -> None:
    rec = Recorder()
    with serving(tmp_path) as base:
        s = Show(browser, base, rec)
        s.open()
        s.tv_game()
        for page in [s.host, s.board, *s.phones]:
            page.context.close()
    b = rec.board
    # The lamp says who answers, not «Ждите».
    assert b["tv-answering"]["lampState"] == "answering"
    assert b["tv-answering"]["lamp"] == "▶ Отвечает: Анна"
    assert b["tv-lamp"]["lamp"] == "● ЖМИТЕ!" and b["tv-reading"]["lamp"] == "○ Ждите"
    # The race view: a header, then names and milliseconds only (no technical words).
    race = b["tv-race"]["race"]
    assert race[0] == ["Игрок", "После сигнала", ""]
    assert [r[0] for r in race[1:]] == ["Вера", "Анна"]  # by time: the false start first
    assert all(re.fullmatch(r"−?\d+ мс", r[1]) for r in race[1:])
    assert [r[2] for r in race[1:]] == ["фальстарт", "первый"]
    # The cat: who has it, its theme and price, in sight while it is answered.
    assert b["tv-cat-answering"]["answerer"] == "Борис"
    assert re.fullmatch(r"Кот в мешке · .+ · 300", b["tv-cat-answering"]["note"] or "")
    # The final's answer: after the final, through the shootout, at the end.
    assert rec.final_answer
    assert b["tv-final-judged"]["last"] is None  # the board shows the written answers then
    assert rec.final_answer in (b["tv-shootout-theme"]["last"] or "")
    assert "Правильный ответ финала" in b["tv-shootout-theme"]["last"]
    for name in ("tv-over", "tv-finished"):
        assert rec.final_answer in (b[name]["final"] or ""), name
    # A smaller kiosk TV: the same phases lay out without cut or overlapping text.
    assert rec.kiosk == []
    # Nothing under 24 px on the final's and the results' screens.
    assert set(rec.small) == set(Recorder.FINAL)
    assert {k: v for k, v in rec.small.items() if v} == {}
    # The phone's buzzer: a word per state; armed looks nothing like waiting.
    z = rec.buzzer
    assert (z["tv-pick-chooser"]["state"], z["tv-pick-chooser"]["text"]) == (
        "wait", "○ Ждите сигнала")
    # The chooser's phone offers the question to pick instead of the buzzer (issue 25).
    assert z["tv-choose"]["hidden"] is True
    assert (z["tv-lamp"]["state"], z["tv-lamp"]["text"]) == ("press", "● ЖМИ!")
    assert (z["tv-false-start"]["state"], z["tv-false-start"]["text"]) == (
        "false_start", "✕ Фальстарт!")
    assert (z["tv-answering"]["state"], z["tv-answering"]["text"]) == ("answer", "▶ Ваш ответ!")
    states = {z[n]["state"]: z[n] for n in ("tv-pick-chooser", "tv-lamp", "tv-false-start",
                                            "tv-answering")}
    assert len({x["bg"] for x in states.values()}) == 4
    assert contrast(states["press"]["bg"], states["wait"]["bg"]) >= 4.5
    for st, x in states.items():
        assert contrast(x["bg"], x["fg"]) >= 4.5, st
    assert z["tv-bets"]["hidden"] and z["tv-over"]["hidden"]


def nobody(s: Show) -> None:
    """A sport question nobody takes: announced, read out, the window closes it."""
    h = s.host
    h.keyboard.press("a")
    s.wait(h, "v.view.lamp === true")
    h.keyboard.press("r")
    s.wait(h, "v.view.phase === 'closed'", 15000)


def taken(s: Show, seat: int) -> None:
    h = s.host
    h.keyboard.press("a")
    s.wait(h, "v.view.lamp === true")
    s.press(seat)
    s.wait(h, f"v.view.answering === {seat}")
    h.keyboard.press("+")
    s.wait(h, "v.view.phase === 'closed'")


def test_a_battle_tie_extra_themes_then_the_tie_banner(browser: Any, tmp_path: Path) -> None:
    """Анна and Борис each take one 10; nobody takes the rest: the extra themes of the
    package are played by the two of them (Вера greyed), then the tie asks for a theme."""
    inspector = Inspector()
    with serving(tmp_path) as base:
        s = Show(browser, base, inspector, {"bypass_csp": True})
        s.open()
        h, b = s.host, s.board
        h.wait_for_selector("#new-game-dialog", state="visible")
        h.check("#ng-format-battle")
        h.fill("#ng-window_s", "1")
        s.start("battle", NAMES, stage="qualification")
        s.wait(b, "v.rules === 'battle' && v.view.phase === 'ready'")
        phones = [s.phone(i) for i in range(3)]
        banners: dict[str, tuple[str, list[str]]] = {}
        notes: dict[str, Any] = {}

        def banner(name: str) -> None:
            s.settle(b)
            story = b.locator("#story")
            text = story.inner_text() if story.is_visible() else ""
            out = b.eval_on_selector_all("#scores .p.out .name", "ns => ns.map(n => n.innerText)")
            banners[name] = (text, out)

        revealed: dict[str, Any] = {}
        for n in range(20):
            if n == 0:  # Анна answers; after the reset Борис presses into the queue
                h.keyboard.press("a")
                s.wait(h, "v.view.lamp === true")
                s.press(0)
                s.wait(h, "v.view.answering === 0")
                h.keyboard.press("s")
                s.wait(h, "v.view.queue_open === true")
                s.press(1)
                s.wait(phones[1], "v.view.queue.length === 1")
                s.settle(phones[1])
                notes["queued"] = phones[1].evaluate(PHONE_TEXT)
                notes["queued-buzzer"] = phones[1].evaluate(BUZZER)["text"]
                inspector("phone-queued", {"phone": phones[1]})
                h.keyboard.press("+")
                s.wait(h, "v.view.phase === 'closed'")
            elif n == 5:
                taken(s, 1)
            elif n == 1:  # nobody presses: the window's seconds, then «Время вышло»
                h.keyboard.press("a")
                s.wait(h, "v.view.lamp === true")
                h.keyboard.press("r")
                b.wait_for_selector("#window-s", state="visible", timeout=5000)
                notes["window"] = b.locator("#window-s").inner_text()
                s.wait(h, "v.view.phase === 'closed'", 15000)
                s.wait(b, "v.view.phase === 'closed'")
                s.settle(b)
                notes["time-out"] = b.locator("#story").inner_text()
                notes["window-after"] = b.locator("#window-s").is_hidden()
                inspector("board-time-out", {"board": b})
            else:
                nobody(s)
            if n == 0:
                s.wait(b, "v.view.phase === 'closed'")
                s.settle(b)
                revealed = b.evaluate("""() => ({
                  main: document.querySelector("#qscreen .answer-main .text").innerText,
                  alts: [...document.querySelectorAll("#qscreen .answer-alts li")]
                    .map((n) => n.innerText),
                  text: document.querySelector("#qscreen").innerText})""")
                revealed["host"] = s.view(h)["view"]["question"]["answer"]
                s.at("battle-revealed-alternatives", board=b)
            h.keyboard.press("n")
            s.wait(h, "v.view.phase !== 'closed'")
        s.wait(b, "v.view.theme && v.view.theme.extra === true")
        banner("extra")
        s.at("battle-extra-theme", board=b)
        for i in (0, 2):
            s.wait(phones[i], "v.view.theme && v.view.theme.extra === true")
            s.settle(phones[i])
            notes[f"extra-{i}"] = phones[i].evaluate(PHONE_TEXT)["note"]
        inspector("phone-extra-theme", {"phone": phones[2]})
        # Nobody takes a question of any extra theme the package holds (the demo's six, 30
        # questions): then the tie is still there and asks the host for a theme.
        extra = 0
        while True:
            s.wait(h, "v.view.phase === 'ready' || v.view.phase === 'tie'")
            if s.view(h)["view"]["phase"] == "tie":
                break
            assert extra < 5 * 6, "the extra themes never ran out"
            nobody(s)
            extra += 1
            h.keyboard.press("n")
            s.wait(h, "v.view.phase !== 'closed'")
        s.wait(b, "v.view.phase === 'tie'")
        banner("tie")
        s.at("battle-tie", host=h, board=b)
        for page in [s.host, s.board, *s.phones]:
            page.context.close()
    # The sport view joins the accepted answers with «;»: the board lists them.
    assert ";" in revealed["host"] and ";" not in revealed["text"]
    assert [revealed["main"], *revealed["alts"]] == [
        x.strip() for x in revealed["host"].split(";")]
    assert banners["extra"] == ("Дополнительная тема: Анна, Борис", ["Вера"])
    # The phones: the place in the queue; the extra theme for those in it, a wait for the rest.
    assert notes["queued"]["status"] == ["queued", "Вы в очереди: 1-й номер"]
    assert notes["queued-buzzer"] == "… В очереди: 1-й"
    assert notes["extra-0"] == "Дополнительная тема: играете вы (Анна, Борис)"
    assert notes["extra-2"] == "Дополнительную тему играют Анна, Борис. Ждите."
    # The board: the window's seconds while it runs; «Время вышло» when nobody pressed.
    assert re.fullmatch(r"[01] с", notes["window"])
    assert notes["time-out"] == "Время вышло: никто не нажал" and notes["window-after"]
    assert banners["tie"][0] == "Ничья: Анна, Борис — нужна дополнительная тема"
    assert not inspector.problems, "\n".join(inspector.problems)


def test_phones_take_their_seats_and_the_race_groups_by_signal(browser: Any,
                                                              tmp_path: Path) -> None:
    """A phone gives its name in the lobby and is seated when the game starts, without a
    second choice; a phone joining later picks a seat by name. A wrong answer re-arms the
    signal: the race view shows the two signals apart."""
    inspector = Inspector()
    with serving(tmp_path) as base:
        s = Show(browser, base, inspector, {"bypass_csp": True})
        s.open()
        h, b = s.host, s.board
        early = s.page(PHONE, has_touch=True, is_mobile=True)
        early.goto(base + "/play")
        s.ready(early)
        assert early.locator("#choose-title").inner_text() == "Как вас зовут?"
        assert early.locator("#seats button").count() == 0
        early.fill("#my-name", "Борис")
        early.click("#lobby-form button[type=submit]")
        early.wait_for_selector("#lobby-sent", state="visible")
        assert "Борис" in early.locator("#lobby-sent").inner_text()
        inspector("phone-lobby", {"phone": early})
        s.wait(h, "v.ui.lobby.includes('Борис')")
        s.start("tv", NAMES)
        # The phone asks whether it is Борис: one tap, never a seat taken in silence.
        early.wait_for_selector("#confirm-me", state="visible")
        assert early.locator("#confirm-me-btn").inner_text() == "Это я: Борис"
        early.click("#confirm-me-btn")
        s.wait(early, "v.seat === 1")
        early.wait_for_selector("#me", state="visible")
        assert early.locator("#choose").is_hidden()
        assert early.locator("#my-seat").inner_text() == "Борис"
        late = s.page(PHONE, has_touch=True, is_mobile=True)
        late.goto(base + "/play")
        s.ready(late)
        s.wait(late, "v.game != null")
        assert late.locator("#choose-title").inner_text() == "Выберите своё место"
        assert late.locator("#lobby-form").is_hidden()
        seats = late.eval_on_selector_all("#seats button", "bs => bs.map(b => b.innerText)")
        assert [x.split("\n") for x in seats] == [[n, f"место {i + 1}"]
                                                  for i, n in enumerate(NAMES)]
        inspector("phone-seats", {"phone": late})
        late.click("#seats button[data-seat='2']")
        s.wait(late, "v.seat === 2")
        anna = s.phone(0)
        # Two signals: Анна answers wrong, the lamp is lit again, Вера and Борис press.
        s.choice("pick_chooser", NAMES[0])
        s.wait(h, "v.view.phase === 'choose'")
        h.click("#board-pick button[data-cell='0:2']")  # «Алма-Ата», «Алматы» accepted too
        s.wait(h, "v.view.phase === 'reading'")
        h.keyboard.press("Space")
        s.wait(h, "v.view.phase === 'buttons'")
        s.press(0)
        s.wait(h, "v.view.phase === 'answering'")
        h.keyboard.press("-")
        s.wait(h, "v.view.phase === 'after_wrong'")
        s.wait(anna, "v.view.phase === 'after_wrong'")
        answered = anna.evaluate(BUZZER)
        inspector("phone-answered", {"phone": anna})
        h.keyboard.press("Space")
        s.wait(h, "v.view.phase === 'buttons'")
        s.press(2)
        s.wait(h, "v.view.phase === 'answering'")
        s.wait(early, "v.view.phase === 'answering'")
        inspector("phone-other-answers", {"phone": early})
        assert early.evaluate(BUZZER)["text"] == "… Отвечает Вера"
        s.press(1)
        s.wait(h, "v.view.question.race.presses.length === 3")
        h.click("#race-toggle")
        s.wait(b, "v.ui.race_shown === true && v.view.question.race.presses.length === 3")
        s.settle(b)
        groups = b.evaluate("""() => [...document.querySelectorAll("#race tbody")].map((g) =>
          [...g.rows].map((r) => [...r.cells].map((c) => c.innerText.trim())))""")
        inspector("tv-race-two-signals", {"board": b})
        h.click("#race-toggle")
        h.keyboard.press("+")
        s.wait(b, "v.view.phase === 'choose' && v.view.last")
        s.settle(b)
        answer = b.evaluate("""() => ({
          main: document.querySelector("#last-answer .answer-main .text").innerText,
          alts: [...document.querySelectorAll("#last-answer .answer-alts li")]
            .map((n) => n.innerText),
          text: document.querySelector("#last-answer").innerText})""")
        inspector("tv-answer-alternatives", {"board": b})
        # The next game seats the same people in another order: the phone asks again and
        # offers its person's new seat.
        s.start("tv", ["Борис", "Анна", "Вера"])
        early.wait_for_selector("#confirm-me", state="visible")
        early.click("#confirm-me-btn")
        s.wait(early, "v.seat === 0 && v.view.players[0].name === 'Борис'")
        early.wait_for_function("document.querySelector('#my-seat').textContent === 'Борис'")
        for page in [h, b, early, late, anna]:
            page.context.close()
    assert (answered["state"], answered["text"]) == ("answered", "— Вы уже отвечали")  # not ✓
    assert answer["main"] == "Алма-Ата" and answer["alts"] == ["Алматы"]
    assert "Засчитывается также" in answer["text"] and ";" not in answer["text"]
    assert groups[0][0] == ["Сигнал 1"] and groups[1][0] == ["Сигнал 2"]
    assert [r[0] for r in groups[0][1:]] == ["Анна"]
    assert [r[0] for r in groups[1][1:]] == ["Вера", "Борис"]
    ms = [int(r[1].replace("−", "-").split()[0]) for r in groups[1][1:]]
    assert ms == sorted(ms)
    assert not inspector.problems, "\n".join(inspector.problems)


def test_the_kiosk_board_fits_a_smaller_tv(browser: Any, tmp_path: Path) -> None:
    """At 1280×800 with a long box name the idle screen's title wraps inside the screen and
    the codes stay whole; the game's board fits too."""
    inspector = Inspector()
    with serving(tmp_path, LONG_BOX_NAME) as base:
        s = Show(browser, base, inspector, {"bypass_csp": True})
        s.open()
        small = s.page(KIOSK, bypass_csp=True)
        small.goto(base + "/board")
        s.ready(small)
        box = small.evaluate("""() => {
          const r = (n) => { const b = n.getBoundingClientRect();
                             return [b.left, b.top, b.right, b.bottom]; };
          const title = document.querySelector("#idle-name");
          const line = parseFloat(getComputedStyle(title).lineHeight);
          return {title: r(title), codes: [...document.querySelectorAll("#idle img")].map(r),
                  text: title.innerText,
                  lines: Math.round(title.getBoundingClientRect().height / line)}; }""")
        inspector("kiosk-idle", {"board": small})
        assert box["text"] == LONG_BOX_NAME and box["lines"] >= 2
        for left, top, right, bottom in [box["title"], *box["codes"]]:
            assert left >= 0 and top >= 0 and right <= KIOSK["width"] and bottom <= KIOSK["height"]
        assert len(box["codes"]) == 3  # Wi-Fi, the players' page, the host page
        s.start("tv", NAMES)
        s.choice("pick_chooser", NAMES[0])
        s.wait(small, "v.view.phase === 'choose'")
        inspector("kiosk-choose", {"board": small})
        s.host.click("#board-pick button[data-cell='0:0']")
        s.wait(small, "v.view.phase === 'reading'")
        s.settle(small)
        inspector("kiosk-reading", {"board": small})
        big = s.board
        assert big.viewport_size == BOARD
        for page in [s.host, big, small]:
            page.context.close()
    assert not inspector.problems, "\n".join(inspector.problems)


# Boxes of the simulator's hint and the score boxes, to check that none overlaps another.
HINT_BOXES = """() => {
  const r = (n) => { const b = n.getBoundingClientRect();
                     return [b.left, b.top, b.right, b.bottom]; };
  const hint = document.querySelector("#sim-hint");
  return {hint: hint ? r(hint) : null, scores: [...document.querySelectorAll("#scores .p")].map(r)};
}"""

PHONE_TEXT = """() => ({
  status: document.querySelector("#my-status").hidden ? null
    : [document.querySelector("#my-status").dataset.state,
       document.querySelector("#my-status").innerText],
  note: document.querySelector("#my-note").hidden ? null
    : document.querySelector("#my-note").innerText,
  buzzer: !document.querySelector("#buzzer").hidden,
  form: document.querySelector("#my-actions").hidden ? null
    : [...document.querySelectorAll("#my-actions [data-action]")].map((e) => e.dataset.action)})"""


def overlaps(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def to_the_final(s: Show) -> None:
    """The host ends the rounds by a correction until the final's themes are removed in turn;
    the first removal's state is left to the caller (`final_remove` with one theme gone)."""
    h = s.host
    for _ in range(12):
        v = s.view(h)["view"]
        if v["phase"] in ("final_order", "final_remove", "bets"):
            return
        kinds = {a["type"] for a in s.view(h)["actions"]}
        if "pick_chooser" in kinds:
            h.locator("[data-action=pick_chooser] button").first.click()
        elif "end_round" in kinds:
            s.fix("end_round")
        s.wait(h, f"JSON.stringify(v.view.round) !== {json.dumps(json.dumps(v['round']))}"
                  f" || v.view.phase !== '{v['phase']}'")
    raise AssertionError("no final after 12 steps")


def test_the_final_without_a_negative_player_and_the_cat_on_its_phone(browser: Any,
                                                                      tmp_path: Path) -> None:
    """Борис gets the cat: his phone names its theme and price, the board marks his box. Анна
    ends the rounds on −100: her phone says she does not play the final and the board greys
    her. The bet form shows its range and refuses a bet too big in the box's own words; the
    board captions the bets and the writing. The simulator's hint covers no score box."""
    inspector = Inspector()
    with serving(tmp_path) as base:
        s = Show(browser, base, inspector, {"bypass_csp": True})
        s.open()
        h, b = s.host, s.board
        h.wait_for_selector("#new-game-dialog", state="visible")
        s.start("tv", NAMES)
        phones = [s.phone(i) for i in range(3)]
        s.choice("pick_chooser", NAMES[0])
        s.wait(b, "v.view.phase === 'choose'")
        s.settle(b)
        hint = b.evaluate(HINT_BOXES)
        # The cat in the bag, given to Борис.
        h.click("#board-pick button[data-cell='1:2']")
        s.wait(h, "v.view.phase === 'cat_give'")
        s.choice("give", NAMES[1])
        s.wait(phones[1], "v.view.phase === 'cat_price'")
        s.wait(b, "v.view.phase === 'cat_price'")
        s.settle(b, phones[1])
        cat_price = phones[1].evaluate(PHONE_TEXT)
        others_cat = phones[0].evaluate(PHONE_TEXT)
        receiver = b.eval_on_selector_all("#scores .p.receiver .name",
                                          "ns => ns.map(n => n.innerText)")
        inspector("phone-cat-given", {"phone": phones[1], "board": b})
        s.choice("cat_price", "300")
        s.wait(phones[1], "v.view.phase === 'answering'")
        s.settle(phones[1])
        cat_answer = phones[1].evaluate(PHONE_TEXT)
        h.keyboard.press("-")
        s.wait(h, "v.view.phase === 'choose'")
        for who, score in ((NAMES[0], "-100"), (NAMES[1], "1000"), (NAMES[2], "1500")):
            s.fix("set_score", [who], score)
            s.wait(h, f"v.view.players[{NAMES.index(who)}].score === {score}")
        to_the_final(s)
        s.wait(phones[0], "v.view.stage === 'final'")
        s.wait(b, "v.view.stage === 'final'")
        s.settle(b, phones[0])
        removal = phones[0].evaluate(PHONE_TEXT)
        greyed = b.eval_on_selector_all("#scores .p.out .name", "ns => ns.map(n => n.innerText)")
        inspector("phone-out-of-final", {"phone": phones[0], "board": b})
        host_out = h.locator("#round-banner").inner_text()  # told before the bets
        for _ in range(12):
            v = s.view(h)["view"]
            if v["phase"] == "bets":
                break
            if v["phase"] == "final_order":
                h.locator("[data-action=pick_remover] button").first.click()
            elif v["phase"] == "final_remove":
                h.locator("[data-action=remove_theme] button").first.click()
            n = sum(t["removed_by"] is not None for t in v["final"]["themes"])
            s.wait(h, f"v.view.phase !== '{v['phase']}' || "
                      f"v.view.final.themes.filter(t => t.removed_by !== null).length > {n}")
        s.wait(b, "v.view.phase === 'bets'")
        bet = phones[1]
        s.wait(bet, "v.view.phase === 'bets'")
        bet.wait_for_selector("#my-actions [data-action=bet] #bet-range")
        s.settle(b)
        bets_story = b.locator("#story").inner_text()
        bets_out = b.eval_on_selector_all("#scores .p.out .name", "ns => ns.map(n => n.innerText)")
        form = bet.evaluate("""() => ({
          range: document.querySelector("#bet-range").innerText,
          primary: document.querySelector("[data-action=bet] button[type=submit]")
            .classList.contains("primary")})""")
        bet.fill("[data-action=bet] [name=amount]", "5000")
        bet.click("[data-action=bet] button[type=submit]")
        bet.wait_for_selector("#bet-error", state="visible")
        too_big = bet.locator("#bet-error").inner_text()
        inspector("phone-bet-too-big", {"phone": bet})
        assert not s.view(h)["view"]["question"]["written"]["rows"][0]["has_bet"]
        out_bets = phones[0].evaluate(PHONE_TEXT)
        bet.fill("[data-action=bet] [name=amount]", "600")
        bet.click("[data-action=bet] button[type=submit]")
        bet.wait_for_selector("#sent", state="visible")
        assert bet.locator("#bet-error").is_hidden()
        phones[2].wait_for_selector("#my-actions [data-action=bet] [name=amount]")
        phones[2].fill("[data-action=bet] [name=amount]", "1")
        phones[2].click("[data-action=bet] button[type=submit]")
        s.wait(b, "v.view.phase === 'writing'")
        s.settle(b)
        writing_story = b.locator("#story").inner_text()
        inspector("board-final-writing", {"board": b})
        # Nothing written yet: nothing to judge on the host's page; Борис's answer once written.
        judge_before = h.locator("[data-action=judge]").count()
        phones[1].fill("[data-action=write] [name=text]", "Ответ Бориса")
        phones[1].click("[data-action=write] button[type=submit]")
        s.wait(h, "v.actions.some((a) => a.type === 'judge')")
        judge_for = [c["value"] for a in s.view(h)["actions"] if a["type"] == "judge"
                     for c in a["args"]["player"]]
        for page in [h, b, *phones]:
            page.context.close()
    assert hint["hint"] is not None and hint["scores"]
    assert not [box for box in hint["scores"] if overlaps(hint["hint"], box)]
    assert re.fullmatch(r"Вам кот в мешке: тема «.+», выберите цену", cat_price["note"])
    assert others_cat["note"] is None
    assert receiver == ["Борис"]
    assert re.fullmatch(r"Вам кот в мешке: тема «.+», цена 300", cat_answer["note"])
    assert removal["status"] == ["out_final", "Вы не играете в финале: в него выходят игроки"
                                              " со счётом больше нуля"]
    assert not removal["buzzer"] and greyed == ["Анна"] and bets_out == ["Анна"]
    assert out_bets["status"][0] == "out_final" and out_bets["form"] is None
    assert not out_bets["buzzer"]
    assert bets_story == "Финал: игроки делают ставки"
    assert form == {"range": "Ставка от 1 до 1000", "primary": True}
    assert too_big == "Ставка должна быть целым числом от 1 до 1000"
    assert writing_story == "Финал: игроки пишут ответы"
    assert host_out == "Вне финала (счёт не больше нуля): Анна"
    assert judge_before == 0 and judge_for == [1], judge_for
    assert not inspector.problems, "\n".join(inspector.problems)
