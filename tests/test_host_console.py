"""The host console after a new host's tryout, in Debian's Chromium against a real
`svoyak serve --simulate` on loopback: what the undo takes back, a running game named
before a new one ends it, accepted answers as a list, no jump when a countdown appears,
the primary action while the lamp is on, false starts, every verdict reachable for a
change, the toolbar after the end, the start screen's seats, the host page's address, the
file choosers, the printed protocol, the shootout's name and the late-press hand-over."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_webui_browser import open_board, sim_press, start_battle, view, wait
from test_webui_browser import open_host as browser_host
from webui_kit import AXE, Server

playwright_api = pytest.importorskip("playwright.sync_api")
ROOT = Path(__file__).resolve().parent.parent
NAMES = ["Анна", "Борис", "Вера"]


def open_host(browser: Any, server: Server) -> Any:
    """A logged-in host at 1280×800; axe is injected as a script tag, which the box's CSP
    would refuse, so the page lets it past."""
    return browser_host(browser, server, bypass_csp=True)


def start_tv(host: Any, names: list[str], answer_s: str = "") -> None:
    host.wait_for_selector("#new-game-dialog", state="visible")
    host.check("#ng-format-tv")
    if answer_s:
        host.fill("#ng-answer_s", answer_s)
    inputs = host.locator("#ng-players input:not([disabled])")
    for i in range(inputs.count()):
        inputs.nth(i).fill(names[i] if i < len(names) else "")
    host.click("#ng-start")
    wait(host, "v.rules === 'tv' && v.view.phase === 'pick_chooser'")


def tv_question(host: Any, cell: str = "0:0") -> None:
    host.locator("[data-action=pick_chooser] button", has_text=NAMES[0]).first.click()
    wait(host, "v.view.phase === 'choose'")
    host.click(f"#board-pick button[data-cell='{cell}']")
    wait(host, "v.view.phase === 'reading'")


def tv_right(host: Any, server: Server, seat: int = 0, cell: str = "0:0") -> None:
    """The first TV question: the lamp, `seat` presses first and is judged right."""
    tv_question(host, cell)
    host.keyboard.press("Space")
    wait(host, "v.view.phase === 'buttons'")
    assert sim_press(server, seat)["ok"]
    wait(host, "v.view.phase === 'answering'")
    host.keyboard.press("+")
    wait(host, "v.view.phase === 'choose'")


def battle_right(host: Any, server: Server, seat: int) -> None:
    """A sport question announced, `seat` presses first and is judged right."""
    host.keyboard.press("a")
    wait(host, "v.view.lamp === true")
    assert sim_press(server, seat)["ok"]
    wait(host, f"v.view.answering === {seat}")
    host.keyboard.press("+")
    wait(host, "v.view.phase === 'closed'")


def end_game(host: Any) -> None:
    """«Завершить игру» among the corrections, confirmed."""
    fix_dialog(host, "end_game")
    host.click("#fix-ok")
    wait(host, "v.finished === true")


def open_protocol(browser: Any, host: Any, server: Server) -> Any:
    """The printable protocol of the host's game, in a context with the host's cookies."""
    ctx = browser.new_context()
    ctx.add_cookies(host.context.cookies())
    page = ctx.new_page()
    page.goto(f"{server.base}/protocol/{view(host)['game']}")
    page.wait_for_selector("#verdicts tr td")
    return page


def axe_problems(page: Any) -> list[str]:
    if not AXE.exists():  # `make test` installs it (npm ci in webui/)
        return []
    page.add_script_tag(path=str(AXE))
    return list(page.evaluate("""async () => {
      const r = await axe.run(document, {runOnly: {type: "tag",
        values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}, resultTypes: ["violations"]});
      return r.violations.filter((x) => ["serious", "critical"].includes(x.impact))
        .map((x) => x.id + ": " + x.nodes.map((n) => n.target.join(" ")).join(" | "));
    }"""))


def fix_dialog(host: Any, kind: str) -> None:
    host.click(f"#corrections [data-fix={kind}]")
    host.wait_for_selector("#fix-dialog", state="visible")


# --- 1. undo says what it takes back ----------------------------------------------------------

def test_the_undo_dialog_names_the_decision_it_takes_back(browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    start_battle(host, NAMES)
    battle_right(host, server, 1)
    wait(host, "v.view.players[1].score === 10")
    fix_dialog(host, "undo")
    shown = host.locator("#fix-undo li").all_inner_texts()
    assert shown[0] == "оценка «Борис — верно (+10)»", shown
    assert "Борис: 10 → 0" in shown
    assert shown[-1].startswith("игра вернётся к фазе «ответ»")
    assert host.locator("#fix-now").inner_text() == "Будет отменено:"
    assert axe_problems(host) == []
    host.click("#fix-ok")
    wait(host, "v.view.players[1].score === 0 && v.view.phase === 'answering'")


# --- 2. a new game names the running one before ending it -------------------------------------

def test_a_new_game_names_the_running_game_and_asks_before_ending_it(
        browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    start_tv(host, NAMES)
    game = view(host)["game"]
    host.click("#new-game")
    warning = host.locator("#ng-running")
    assert warning.is_visible()
    assert "Телевизионная игра" in warning.inner_text()
    assert "Анна 0, Борис 0, Вера 0" in warning.inner_text()
    host.check("#ng-format-battle")
    host.click("#ng-start")  # the first tap only asks
    assert host.locator("#ng-start.confirming").inner_text() == "Закончить её и начать новую"
    time.sleep(0.3)
    assert view(host)["game"] == game and view(host)["rules"] == "tv"
    assert axe_problems(host) == []
    host.click("#ng-start")
    wait(host, f"v.game !== {game} && v.rules === 'battle'")
    # Cancelled, the question is asked again next time.
    host.click("#new-game")
    host.click("#ng-start")
    host.click("#ng-cancel")
    host.click("#new-game")
    assert host.locator("#ng-start.confirming").count() == 0


# --- 3. accepted answers as a list ----------------------------------------------------------

def test_accepted_answers_are_a_list_on_the_host(browser: Any, server: Server,
                                                 tmp_path: Path) -> None:
    from webui.screenshots import big_board

    pkg = json.loads(big_board(3, 5))
    pkg["rounds"][0]["themes"][0]["questions"][0]["right"] = ["Оттава", "Ottawa", "г. Оттава"]
    pkg["name"] = "Ответы"
    host = open_host(browser, server)
    r = host.request.post(server.base + "/admin/packages", multipart={"file": {
        "name": "answers.json", "mimeType": "application/json",
        "buffer": json.dumps(pkg, ensure_ascii=False).encode()}})
    assert r.ok, r.text()
    host.reload()
    host.wait_for_selector("#new-game-dialog", state="visible")
    host.check("#ng-format-tv")
    host.select_option("#ng-package", label="Ответы")
    start_tv(host, NAMES)
    tv_question(host)
    assert host.locator("#q-answer-text").inner_text() == "Оттава"
    assert host.locator("#q-also li").all_inner_texts() == ["Ottawa", "г. Оттава"]
    assert ";" not in host.locator("#question").inner_text()


def test_accepted_answers_of_a_sport_question_are_a_list(browser: Any, server: Server) -> None:
    """The sport question carries its alternatives in one text, joined with «; »."""
    host = open_host(browser, server)
    start_battle(host, NAMES)
    answer = view(host)["view"]["question"]["answer"]
    parts = answer.split("; ")
    assert len(parts) > 1, answer  # the demo's first question has alternatives
    assert host.locator("#q-answer-text").inner_text() == parts[0]
    assert host.locator("#q-also li").all_inner_texts() == parts[1:]
    assert ";" not in host.locator("#question").inner_text()
    assert axe_problems(host) == []


# --- 4. a countdown that appears moves nothing ------------------------------------------------

def test_the_sport_countdown_appears_without_moving_the_buttons(
        browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    start_battle(host, NAMES)
    host.keyboard.press("a")
    wait(host, "v.view.lamp === true")
    box = "() => { const r = document.querySelector('#primary').getBoundingClientRect();" \
          " return [r.left, r.top, r.width, r.height]; }"
    head = "() => document.querySelector('.host-top').getBoundingClientRect().height"
    assert host.locator("#primary [data-action=reading_done]").is_visible()
    before, head_before = host.evaluate(box), host.evaluate(head)
    host.keyboard.press("r")  # read out: the 7 s window's countdown starts
    host.wait_for_selector("#clock", state="visible")
    assert re.fullmatch(r"\d с", host.locator("#clock").inner_text())
    assert host.evaluate(box) == before
    assert host.evaluate(head) == head_before
    # Nothing to do but wait: the primary place says so rather than offering a button.
    assert host.locator("#primary .waiting").inner_text() == "Кнопки открыты — ждём нажатия"


# --- 5. no «Никто не ответил» as the primary while the lamp is on -------------------------------

def test_closing_the_question_is_not_primary_while_the_lamp_is_on(
        browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    start_tv(host, NAMES)
    tv_question(host)
    # Before the lamp: «Сигнал» is the primary, the close is secondary.
    assert host.locator("#primary [data-action=lamp]").is_visible()
    host.keyboard.press("Space")
    wait(host, "v.view.phase === 'buttons'")
    assert host.locator("#primary [data-action=close]").count() == 0
    assert host.locator("#actions [data-action=close]").is_visible()
    assert host.locator("#primary .waiting").is_visible()
    assert axe_problems(host) == []
    host.keyboard.press("n")  # its key still works
    wait(host, "v.view.phase === 'choose'")


# --- 6. a false start is cleared while that player answers ------------------------------------

def test_a_false_start_mark_goes_when_that_player_answers(browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    board = open_board(browser, server)
    marks = board.locator(".board-scores .p[data-seat='2'] .marks")
    start_tv(host, NAMES)
    tv_question(host)
    assert sim_press(server, 2)["ok"]  # Вера, before the lamp
    wait(host, "v.view.question.race.presses.length === 1")
    assert host.locator("#race tr.false_start").count() == 1
    wait(board, "v.view.question && v.view.question.race.presses.length === 1")
    assert "✕" in marks.inner_text()
    host.keyboard.press("Space")
    wait(host, "v.view.phase === 'buttons'")
    time.sleep(2.2)  # the false start's block (2 s) is over
    assert sim_press(server, 2)["ok"]
    wait(host, "v.view.phase === 'answering' && v.view.question.answerer === 2")
    assert host.locator("#race tr.false_start").count() == 0
    assert "фальстарт" not in host.locator("#race").inner_text()
    assert host.locator("#answerer-name").inner_text() == "Вера"
    wait(board, "v.view.phase === 'answering'")
    assert marks.inner_text() == ""  # nor on the board's score row


# --- 7. every verdict reachable for a change ------------------------------------------------

def test_the_change_verdict_dialog_reaches_every_judgement(browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    start_battle(host, NAMES)
    # 8 questions, each answered wrong by all three: 24 judgements.
    for _ in range(8):
        wait(host, "v.view.phase === 'ready'", 15000)
        host.keyboard.press("a")
        for seat in range(3):
            wait(host, "v.view.lamp === true && v.view.answering === null", 15000)
            assert sim_press(server, seat)["ok"]
            wait(host, f"v.view.answering === {seat}", 15000)
            v = view(host)["view"]
            n = v.get("judgements_total", len(v["judgements"]))
            host.keyboard.press("-")
            wait(host, f"(v.view.judgements_total ?? v.view.judgements.length) > {n}", 15000)
        wait(host, "v.view.phase === 'closed'", 15000)
        host.keyboard.press("n")
    fix_dialog(host, "rejudge")
    refs = "() => [...document.querySelectorAll('#fix-fields button.choice')]" \
           ".map((b) => JSON.parse(b.dataset.value)).filter((x) => typeof x === 'number')"
    shown = host.evaluate(refs)
    assert min(shown) > 0 and len(shown) < 24  # the engine offers the latest
    host.click("#fix-earlier")
    host.wait_for_function(
        "() => !document.querySelector('#fix-earlier')"
        " && document.querySelectorAll('#fix-fields button.choice').length >= 24 + 3")
    assert sorted(set(host.evaluate(refs))) == list(range(24))
    first = host.locator("#fix-fields button.choice[data-value='0']")
    assert first.inner_text().startswith("1. ")
    first.click()
    host.click("#fix-fields button.choice[data-value='\"right\"']")
    assert host.locator("#fix-change").inner_text().endswith("→ Верно")
    before = view(host)["view"]["players"][0]["score"]
    host.click("#fix-ok")
    wait(host, f"v.view.players[0].score === {before + 20}")  # 10 lost, 10 won


# --- 8. the toolbar after the end ------------------------------------------------------------

def test_race_and_pause_are_not_offered_after_the_game(browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    host.wait_for_selector("#new-game-dialog", state="visible")
    assert host.locator("#race-toggle").is_hidden() and host.locator("#pause-toggle").is_hidden()
    start_battle(host, NAMES)
    assert host.locator("#race-toggle").is_visible() and host.locator("#pause-toggle").is_visible()
    end_game(host)
    assert host.locator("#race-toggle").is_hidden() and host.locator("#pause-toggle").is_hidden()
    assert host.locator("#new-game").is_visible()


# --- 9. the start screen seats what the format seats -----------------------------------------

def test_the_start_screen_offers_as_many_names_as_the_format_seats(
        browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    host.wait_for_selector("#new-game-dialog", state="visible")
    names = host.locator("#ng-players input")
    host.check("#ng-format-battle")
    assert [names.nth(i).is_visible() for i in range(names.count())] == [True] * 3 + [False]
    host.check("#ng-format-tv")
    # The TV format seats what its rule-set seats: «Как на ТВ» 3, a club evening 4.
    assert host.locator("#ng-preset").input_value() == "tv"
    assert [names.nth(i).is_visible() for i in range(names.count())] == [True] * 3 + [False]
    host.select_option("#ng-preset", "club")
    assert [names.nth(i).is_visible() for i in range(names.count())] == [True] * 4
    host.select_option("#ng-preset", "tv")
    assert [names.nth(i).is_visible() for i in range(names.count())] == [True] * 3 + [False]
    assert axe_problems(host) == []


# --- 10. the host page's address is one the box listens on ------------------------------------

def test_the_host_address_is_the_one_the_box_listens_on(browser: Any, server: Server) -> None:
    board = open_board(browser, server)
    wait(board, "v.game === null")
    assert board.locator("#idle .big").inner_text() == f"http://127.0.0.1:{server.port}/host"


def test_on_every_address_the_host_address_is_the_lan_one(tmp_path: Path) -> None:
    """Listening on every address, a request on loopback is given the LAN address (when
    the machine has one), as before; listening on loopback only, loopback."""
    from webui_kit import make_kit

    from webui.pages import _lan_address

    kit = make_kit(tmp_path)
    try:
        client = kit.app.test_client()
        for listen, lan in ((None, True), ("0.0.0.0", True), ("127.0.0.1", False)):
            kit.services.listen = listen
            page = client.get("/board", base_url="http://127.0.0.1:8080").get_data(True)
            ip = _lan_address()
            want = f"http://{ip}:8080/host" if lan and ip else "http://127.0.0.1:8080/host"
            assert want in page, (listen, want)
    finally:
        kit.close()


# --- 11. the file choosers speak the page's language ------------------------------------------

@pytest.mark.parametrize("path,field,lang,words", [
    ("/admin/tournament/", "#t-file", "ru", ("Выбрать файл…", "Файл не выбран")),
    ("/admin/", "#file", "ru", ("Выбрать файл…", "Файл не выбран")),
    ("/admin/", "#file", "en", ("Choose a file…", "No file chosen")),
])
def test_file_choosers_are_labelled_in_the_page_language(
        browser: Any, server: Server, path: str, field: str, lang: str,
        words: tuple[str, str]) -> None:
    host = open_host(browser, server)
    if lang == "en":
        host.goto(server.base + "/lang/en?next=/host")
    if path.startswith("/admin/tournament"):
        host.goto(server.base + path)
        if host.locator("#t-title").count():
            host.fill("#t-title", "Кубок")
            host.click("#t-title >> xpath=ancestor::form//button[@type='submit']")
            host.wait_for_selector(field, state="attached")
    else:
        host.goto(server.base + path)
    control = host.locator(f"label.btn[for='{field[1:]}']")
    assert control.inner_text() == words[0]
    assert control.is_visible() and control.bounding_box()["height"] >= 44
    name = host.locator(f"{field} ~ .file-name")
    assert name.inner_text() == words[1]
    native = host.locator(field).bounding_box()
    assert native is None or native["width"] <= 1  # the browser's own words are not seen
    host.set_input_files(field, files=[{"name": "entries.csv", "mimeType": "text/csv",
                                        "buffer": b"name;team\n"}])
    assert name.inner_text() == "entries.csv"
    assert axe_problems(host) == []


# --- 12. the printed protocol ---------------------------------------------------------------

def test_the_printed_protocol_is_black_on_white_with_theme_and_value(
        browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    start_tv(host, NAMES)
    tv_right(host, server)
    theme = view(host)["view"]["board"]["themes"][0]["name"]
    value = view(host)["view"]["board"]["themes"][0]["cells"][0]["value"]
    page = open_protocol(browser, host, server)
    row = page.locator("#verdicts tr").nth(1).inner_text()
    assert f"«{theme}», {value}" in row and "Анна" in row
    page.emulate_media(media="print")
    colours = page.evaluate("""() => [...document.querySelectorAll('.protocol *')]
      .filter((n) => n.childNodes.length && [...n.childNodes].some((c) => c.nodeType === 3
        && c.textContent.trim()) && n.getClientRects().length)
      .map((n) => getComputedStyle(n).color)""")
    assert colours and set(colours) == {"rgb(0, 0, 0)"}
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(255, 255, 255)"
    page.context.close()


# --- 13. the shootout by its name -------------------------------------------------------------

def test_the_shootout_banner_names_it_and_its_players(browser: Any, server: Server) -> None:
    """The banner is drawn from the view alone: a TV view in a shootout between Анна and
    Борис (the whole TV evening reaches a real one in tests/test_screens.py)."""
    host = open_host(browser, server)
    start_tv(host, NAMES)
    banner = host.evaluate("""() => { const d = structuredClone(window.lastView);
      d.view.shootout = {players: [0, 1], themes: 1}; render(d);
      const b = document.getElementById("round-banner");
      return {shown: b.getClientRects().length > 0 && !b.hidden, text: b.innerText}; }""")
    # Drawn and read in one synchronous call: a live view pushed meanwhile (a loaded box
    # sends the host more than one after a start) cannot redraw the screen in between.
    assert banner == {"shown": True, "text": "Перестрелка: Анна, Борис"}
    assert "shootout" not in host.locator("#host").inner_text().lower()


# --- 15. a press that was earlier but arrived late ---------------------------------------------

LATE_GAME = """
import sys, time
from pathlib import Path
from appliance.runtime.loop import GameLoop
from appliance.runtime.store import Store, db_path
from appliance.rules.protocol import Command, press
from appliance.rules.battle.setup import SETUP_SPEC
store = Store(db_path(Path(sys.argv[1])))
loop = GameLoop(store).start()
loop.new_game("battle", SETUP_SPEC.build(["Анна", "Борис", "Вера"], None,
                                         {"stage": "qualification"})).result(10)
loop.submit(Command("announce", 0, {})).result(10)
time.sleep(0.05)
t = time.monotonic_ns()
loop.submit(press(1, t + 400_000)).result(10)  # Борис, first to reach the box
deadline = time.monotonic() + 10
while loop.snapshot()[1].phase != "answering":  # his settle window closes: he answers
    assert time.monotonic() < deadline
    time.sleep(0.01)
loop.submit(press(2, t)).result(10)           # Вера's earlier press, arrived late
assert loop.snapshot()[0].view(loop.snapshot()[1], "host")["late_press"]["player"] == 2
loop.stop()
store.close()
"""


def test_an_earlier_press_that_arrived_late_gets_a_banner_and_one_button(
        browser: Any, tmp_path: Path) -> None:
    """The log holds a battle where Вера's press carries the earlier tick but reached the
    box after Борис was committed (what a slow wire does); the box resumes it."""
    import subprocess

    data = tmp_path / "data"
    data.mkdir()
    subprocess.run([sys.executable, "-c", LATE_GAME, str(data)], check=True, cwd=ROOT,
                   timeout=60)
    server = Server(data, None, "--no-demo").start()
    try:
        host = open_host(browser, server)
        wait(host, "v.view && v.view.late_press && v.view.late_press.player === 2")
        banner = host.locator("#late-press")
        assert banner.is_visible()
        assert host.locator("#late-text").inner_text() == "Вера: нажатие раньше на 0,4 мс"
        assert "Борис" in host.locator("#late-now").inner_text()
        hand = host.locator("#late-hand")
        assert hand.inner_text().startswith("Передать ответ: Вера")
        assert hand.bounding_box()["height"] >= 48
        # One button: the hand-over is not offered a second time among the actions.
        assert host.locator("#actions [data-action=hand_over]").count() == 0
        assert axe_problems(host) == []
        host.keyboard.press("h")  # the key shown on the button (a tap does the same)
        wait(host, "v.view.answering === 2")
        assert banner.is_hidden()
        assert host.locator("#answerer-name").inner_text() == "Вера"
    finally:
        server.stop()


# --- 16. the short-word banner keeps the answerer, the verdict and the scores in view ---------

def in_viewport(page: Any, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    size = page.viewport_size
    return bool(box and box["y"] >= 0 and box["x"] >= 0
                and box["y"] + box["height"] <= size["height"]
                and box["x"] + box["width"] <= size["width"])


def test_the_short_word_banner_keeps_the_scores_in_view(browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    start_battle(host, NAMES)
    host.keyboard.press("a")  # announced, not read out: a press now means «key word only»
    wait(host, "v.view.lamp === true")
    assert sim_press(server, 1)["ok"]
    wait(host, "v.view.answering === 1")
    host.keyboard.press("s")  # the signal reset opens the queue
    wait(host, "v.view.queue_open === true")
    for seat in (0, 2):
        assert sim_press(server, seat)["ok"]
    wait(host, "v.view.queue.length === 2")
    assert host.locator("#short-word").is_visible()
    for sel in ("#short-word", "#answerer-name", "#primary button >> nth=0",
                "#scores-card", "#scores .score-row[data-seat='2']"):
        assert in_viewport(host, sel), sel
    assert host.evaluate("document.scrollingElement.scrollTop") == 0
    current = host.locator("#race tr.current")
    assert current.count() == 1 and "Борис" in current.inner_text()
    assert "отвечает" in current.inner_text() and "в очереди" not in current.inner_text()
    assert axe_problems(host) == []


# --- 17. after a re-signal the race is captioned per signal, each timed from its own ---------

def test_the_race_after_a_re_signal_is_captioned_per_signal(browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    start_tv(host, NAMES)
    tv_question(host)
    host.keyboard.press("Space")
    wait(host, "v.view.phase === 'buttons'")
    assert sim_press(server, 0)["ok"]  # Анна, first on signal 1
    wait(host, "v.view.phase === 'answering'")
    host.keyboard.press("-")
    wait(host, "v.view.phase === 'after_wrong'")
    assert sim_press(server, 2)["ok"]  # Вера, before the re-signal: a false start
    wait(host, "v.view.question.race.presses.length === 2")
    time.sleep(0.3)
    host.keyboard.press("Space")  # «Снова сигнал»
    wait(host, "v.view.phase === 'buttons'")
    time.sleep(2.2)  # Вера's block is over
    assert sim_press(server, 1)["ok"]  # Борис, first on signal 2
    wait(host, "v.view.phase === 'answering' && v.view.question.answerer === 1")
    captions = host.locator("#race tr.signal").all_inner_texts()
    assert captions == ["Сигнал 1", "Сигнал 2"], captions
    first = host.locator("#race tbody[data-signal='1']").inner_text()
    second = host.locator("#race tbody[data-signal='2']").inner_text()
    assert "Анна" in first and "Вера" not in first and "Борис" not in first
    assert "Борис" in second and "Вера" in second
    vera = host.locator("#race tbody[data-signal='2'] tr.false_start")
    assert re.search(r"\u2212\d+ мс", vera.inner_text()), vera.inner_text()  # before its signal
    assert "+" not in vera.inner_text()
    assert axe_problems(host) == []


# --- 18. the final's «Записать ответ» defaults to the first who has not answered --------------

def test_record_a_written_answer_defaults_to_one_who_has_not_answered(
        browser: Any, server: Server) -> None:
    """Drawn from a view of the final's written answers (the whole TV evening reaches the
    real one in tests/test_screens.py): Анна has answered, Борис and Вера not yet."""
    host = open_host(browser, server)
    start_tv(host, NAMES)
    select = host.evaluate("""() => { const d = structuredClone(window.lastView);
      const who = (s) => ({value: s, ru: d.view.players[s].name, en: d.view.players[s].name});
      d.view.phase = "writing";
      d.view.question = {theme: "Финал", kind: "final", text: "?", written: {needs_bets: false,
        rows: [0, 1, 2].map((s) => ({player: s, has_answer: s === 0, answer: null}))}};
      d.actions = [{type: "write", ru: "Записать ответ", en: "Record a written answer",
        by: "host", args: {player: [who(0), who(1), who(2)], text: {type: "text"}}}];
      render(d);
      const s = document.querySelector("[data-action=write] select[name=player]");
      return s && {shown: s.getClientRects().length > 0, value: s.value}; }""")
    # Drawn and read in one synchronous call, as in test 13.
    assert select is not None and select["shown"]
    assert json.loads(select["value"]) == 1  # Борис, not Анна who already answered
    assert axe_problems(host) == []


# --- 19. a verdict to change names its question and shows the score it gives ------------------

def test_the_change_verdict_dialog_names_the_question_and_the_score_change(
        browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    start_tv(host, NAMES)
    tv_question(host)
    theme = view(host)["view"]["question"]["theme"]
    host.keyboard.press("Space")
    wait(host, "v.view.phase === 'buttons'")
    assert sim_press(server, 1)["ok"]  # Борис
    wait(host, "v.view.phase === 'answering'")
    host.keyboard.press("-")
    wait(host, "v.view.players[1].score === -100")
    fix_dialog(host, "rejudge")
    choice = host.locator("#fix-fields button.choice[data-value='0']")
    text = choice.inner_text()
    assert theme in text and "100" in text and "Борис" in text, text
    assert "\u2212100" in text and "-100" not in text, text
    host.click("#fix-fields button.choice[data-value='\"right\"']")
    change = host.locator("#fix-change").inner_text()
    assert "Борис: \u2212100 → +100" in change, change
    assert axe_problems(host) == []
    host.click("#fix-ok")
    wait(host, "v.view.players[1].score === 100")


def test_a_sport_change_to_a_second_right_answer_is_warned(browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    start_battle(host, NAMES)
    host.keyboard.press("a")
    wait(host, "v.view.lamp === true")
    assert sim_press(server, 1)["ok"]  # Борис: wrong
    wait(host, "v.view.answering === 1")
    host.keyboard.press("-")
    wait(host, "v.view.lamp === true && v.view.answering === null")
    assert sim_press(server, 0)["ok"]  # Анна: right
    wait(host, "v.view.answering === 0")
    host.keyboard.press("+")
    wait(host, "v.view.phase === 'closed'")
    fix_dialog(host, "rejudge")
    host.click("#fix-fields button.choice[data-value='0']")
    host.click("#fix-fields button.choice[data-value='\"right\"']")
    change = host.locator("#fix-change").inner_text()
    assert "два верных ответа" in change and "Анна" in change, change
