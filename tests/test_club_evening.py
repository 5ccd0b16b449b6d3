"""A club evening, second pass (issue 25), in Debian's Chromium against a real `svoyak serve
--simulate` on loopback: every figure on the end screens adds up after corrections and a
removed question, in both engines; the board never clips a letter; a phone asks who it is
at every game; an auction played from three phones; a cat chosen, given and priced on
phones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_host_console import (
    battle_right,
    end_game,
    fix_dialog,
    open_board,
    open_host,
    open_protocol,
    start_tv,
    tv_question,
    tv_right,
)
from test_webui_browser import fix, start_battle, view, wait
from webui_kit import Server

playwright_api = pytest.importorskip("playwright.sync_api")
NAMES = ["Анна", "Борис", "Вера"]


# The end screens' figures, read from the page: the podium's score per name, and the
# statistics table's points (by round or in one cell), corrections and total per name.
READ_END = """() => {
  const podium = {};
  for (const s of document.querySelectorAll('#winner-list .step'))
    podium[s.querySelector('.pname').textContent] = s.querySelector('.pscore').textContent;
  const rows = {};
  for (const tr of document.querySelectorAll('#board-stats .stats-table tbody tr')) {
    const b = (sel) => { const n = tr.querySelector(sel + ' b'); return n ? n.textContent : null; };
    const head = [...tr.closest('table').querySelectorAll('thead th')].map((h) => h.textContent);
    const cells = [...tr.querySelectorAll('td')];
    rows[tr.querySelector('th').textContent] = {
      byRound: [...tr.querySelectorAll('.by-round .round b')].map((n) => n.textContent),
      points: b('.by-round .points'), corrections: b('.by-round .correction'),
      total: b('.by-round .total'), right: cells[head.indexOf('верно') - 1].textContent};
  }
  return {podium, rows};
}"""


def number(text: str | None) -> int:
    if text in (None, "—"):
        return 0
    return int(text.replace("\u2212", "-").replace("\u00a0", "").replace(" ", "").replace("+", ""))


def test_tv_end_screens_add_up_after_a_score_correction(browser: Any, server: Server) -> None:
    board = open_board(browser, server)
    host = open_host(browser, server)
    start_tv(host, NAMES)
    tv_right(host, server)
    fix(host, "set_score", ["Борис"], "700")
    wait(host, "v.view.players[1].score === 700")
    end_game(host)
    scores = [p["score"] for p in view(host)["view"]["players"]]
    board.wait_for_selector("#winner-list .step")
    shown = board.evaluate(READ_END)
    for name, score in zip(NAMES, scores, strict=True):
        row = shown["rows"][name]
        assert number(shown["podium"][name]) == score
        assert number(row["total"]) == score
        assert sum(number(x) for x in row["byRound"]) + number(row["corrections"]) == score, row
    assert number(shown["rows"]["Борис"]["corrections"]) == 700
    # The printed protocol: its verdicts and corrections add up to the same scores.
    page = open_protocol(browser, host, server)
    rows = page.evaluate("""() => [...document.querySelectorAll('#verdicts tr')].slice(1)
      .map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))""")
    for name, score in zip(NAMES, scores, strict=True):
        assert sum(number(r[4]) for r in rows if r[2] == name) == score, rows
    assert any("поправка счёта" in r[1] for r in rows)
    page.context.close()


def test_battle_end_screens_add_up_after_a_removed_question_and_a_correction(
        browser: Any, server: Server) -> None:
    board = open_board(browser, server)
    host = open_host(browser, server)
    start_battle(host, NAMES)
    battle_right(host, server, 1)
    wait(host, "v.view.players[1].score === 10")
    fix_dialog(host, "remove_question")
    host.click("#fix-ok")
    wait(host, "v.view.players[1].score === 0")
    fix(host, "set_score", ["Вера"], "30")
    wait(host, "v.view.players[2].score === 30")
    end_game(host)
    board.wait_for_selector("#winner-list .step")
    shown = board.evaluate(READ_END)
    scores = dict(zip(NAMES, [0, 0, 30], strict=True))
    for name, score in scores.items():
        row = shown["rows"][name]
        assert number(shown["podium"][name]) == score
        assert number(row["total"]) == score
        assert number(row["points"]) + number(row["corrections"]) == score, row
    # The removed question's right answer counts nowhere.
    assert shown["rows"]["Борис"]["right"] == "0"


# --- the board never clips a letter -----------------------------------------------------------

TALL_THEMES = ["ТУРЕЦКИЙ ГАМБИТ", "ЁЛКИ И ЙОГУРТЫ", "ÅNGSTRÖM, ÉCLAIR, ÇÀ",
               "ЩУЧИЙ ДЕНЬ: ЙОД", "Йошкар-Ола и Ёжики", "ЙЕМЕНСКИЙ ЁРШ И ДЕЖНЁВ"]
TALL_NAMES = ["Йоханнес Ёлкин", "ÅSA ÉLAN", "Щука Йй"]

# For each theme cell and score name: the ink of its text (the glyphs' own extent, from the
# canvas's measure of the same font: above the baseline by the tallest glyph's ascent, below
# by the deepest descent) on each visible line, against the box that clips it and its cell.
INK = """() => {
  const ctx = document.createElement('canvas').getContext('2d');
  const out = [];
  for (const node of document.querySelectorAll('#grid .tname span, #scores .p .name')) {
    const cs = getComputedStyle(node);
    ctx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
    const m = ctx.measureText(node.textContent);
    const clip = node.getBoundingClientRect();
    const cell = node.parentElement.getBoundingClientRect();
    const range = document.createRange();
    range.selectNodeContents(node);
    const lines = [...range.getClientRects()].filter((r) => r.top < clip.bottom - 1);
    for (const r of lines) {
      const baseline = r.top + m.fontBoundingBoxAscent;
      out.push({text: node.textContent, size: cs.fontSize,
                ink: [baseline - m.actualBoundingBoxAscent, baseline + m.actualBoundingBoxDescent],
                clip: [clip.top, clip.bottom], cell: [cell.top, cell.bottom]});
    }
  }
  return out;
}"""


@pytest.mark.parametrize("size", [{"width": 1920, "height": 1080}, {"width": 1280, "height": 720}],
                         ids=["1080p", "720p"])
def test_the_board_never_clips_a_letter(browser: Any, tmp_path: Path, size: dict) -> None:
    import json

    from appliance.packages import library
    from webui.games import DEMO_DIR

    data = tmp_path / "data"
    package = json.loads((DEMO_DIR / "demo-tv.json").read_text("utf-8"))
    package["name"] = "Высокие буквы"
    for theme, name in zip(package["rounds"][0]["themes"], TALL_THEMES, strict=False):
        theme["name"] = name
    path = tmp_path / "tall.json"
    path.write_text(json.dumps(package, ensure_ascii=False), "utf-8")
    data.mkdir()
    package_id = library.import_file(path, data)
    server = Server(data, None, "--no-demo").start()
    try:
        board = browser.new_page(viewport=size)
        board.goto(server.base + "/board")
        board.wait_for_selector("body[data-ready='1']", state="attached")
        host = open_host(browser, server)
        host.wait_for_selector("#new-game-dialog", state="visible")
        host.check("#ng-format-tv")
        host.select_option("#ng-package", str(package_id))
        inputs = host.locator("#ng-players input:not([disabled])")
        for i in range(inputs.count()):
            inputs.nth(i).fill(TALL_NAMES[i] if i < len(TALL_NAMES) else "")
        host.click("#ng-start")
        wait(host, "v.rules === 'tv' && v.view.phase === 'pick_chooser'")
        wait(board, "v.view && v.view.phase === 'pick_chooser'")
        board.wait_for_selector("#grid .tname span")
        board.wait_for_timeout(200)
        lines = board.evaluate(INK)
        texts = {x["text"] for x in lines}
        assert set(TALL_THEMES) <= texts and set(TALL_NAMES) <= texts, texts
        bad = [x for x in lines if not (x["clip"][0] - 0.5 <= x["ink"][0]
                                        and x["ink"][1] <= x["clip"][1] + 0.5
                                        and x["cell"][0] - 0.5 <= x["ink"][0]
                                        and x["ink"][1] <= x["cell"][1] + 0.5)]
        assert not bad, bad
    finally:
        server.stop()


# --- players act from their phones -----------------------------------------------------------

PHONE = {"width": 390, "height": 844}


def open_phone(browser: Any, server: Server, name: str) -> Any:
    """A phone in the lobby that gave its name."""
    page = browser.new_page(viewport=PHONE, has_touch=True, is_mobile=True)
    page.goto(server.base + "/play")
    page.wait_for_selector("body[data-ready='1']", state="attached")
    page.fill("#my-name", name)
    page.click("#lobby-form button[type=submit]")
    page.wait_for_selector("#lobby-sent", state="visible")
    return page


def confirm_me(phone: Any, seat: int, name: str) -> None:
    """A new game: the phone asks «Это я: …» and is seated only after the tap."""
    phone.wait_for_selector("#confirm-me", state="visible")
    assert phone.locator("#confirm-me-btn").inner_text() == f"Это я: {name}"
    assert view(phone)["seat"] is None
    phone.click("#confirm-me-btn")
    wait(phone, f"v.seat === {seat}")


def test_a_phone_reused_across_two_games_asks_who_it_is(browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    phone = open_phone(browser, server, "Анна")
    wait(host, "v.ui.lobby.includes('Анна')")
    start_tv(host, NAMES)
    confirm_me(phone, 0, "Анна")
    assert phone.locator("#my-seat").inner_text() == "Анна"
    # The next game seats «Егор Лис» where Анна sat: the phone does not follow seat 0.
    host.click("#new-game")
    host.check("#ng-format-tv")
    inputs = host.locator("#ng-players input:not([disabled])")
    for i, name in enumerate(["Егор Лис", "Анна", "Борис"]):
        inputs.nth(i).fill(name)
    host.click("#ng-start")
    if host.locator("#ng-start.confirming").count():
        host.click("#ng-start")
    wait(host, "v.view.players[0].name === 'Егор Лис'")
    wait(phone, "v.view.players && v.view.players[0].name === 'Егор Лис'")
    assert view(phone)["seat"] is None
    assert phone.locator("#me").is_hidden()
    # A reload neither: the stored seat was another game's.
    phone.reload()
    phone.wait_for_selector("body[data-ready='1']", state="attached")
    wait(phone, "v.game != null && v.view.players[0].name === 'Егор Лис'")
    assert view(phone)["seat"] is None
    confirm_me(phone, 1, "Анна")
    assert phone.locator("#my-seat").inner_text() == "Анна"
    phone.reload()  # within the same game the seat comes back by itself
    phone.wait_for_selector("body[data-ready='1']", state="attached")
    wait(phone, "v.seat === 1")


def seat_phones(browser: Any, server: Server, host: Any) -> list[Any]:
    phones = [open_phone(browser, server, n) for n in NAMES]
    wait(host, "v.ui.lobby.length === 3")
    start_tv(host, NAMES)
    for seat, (p, n) in enumerate(zip(phones, NAMES, strict=True)):
        confirm_me(p, seat, n)
    host.locator("[data-action=pick_chooser] button", has_text=NAMES[0]).first.click()
    wait(host, "v.view.phase === 'choose'")
    return phones


def phone_act(phone: Any, action: str, value: str | None = None) -> None:
    group = phone.locator(f"#actions [data-action={action}]").first
    group.wait_for(state="visible")
    if value is None:
        button = group if group.evaluate("e => e.tagName") == "BUTTON" else group.locator("button")
        button.first.click()
    elif group.locator("input[name=amount]").count():
        group.locator("input[name=amount]").fill(value)
        group.locator("button[type=submit]").click()
    else:
        group.locator(f"button[data-value='{value}']").click()


def test_an_auction_played_from_three_phones(browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    board = open_board(browser, server)
    anna, boris, vera = seat_phones(browser, server, host)
    for who, score in (("Анна", "1000"), ("Борис", "2000"), ("Вера", "1500")):
        fix(host, "set_score", [who], score)
        wait(host, f"v.view.players[{NAMES.index(who)}].score === {score}")
    host.click("#board-pick button[data-cell='4:3']")
    wait(host, "v.view.phase === 'auction'")
    # Анна opened it: her word, on her phone; the others' phones offer nothing.
    wait(anna, "v.actions && v.actions.some((a) => a.type === 'bid')")
    assert "аукцион" in anna.locator("#my-note").inner_text()
    assert not any(a["type"] in ("bid", "pass", "all_in") for a in view(boris)["actions"])
    assert anna.locator("#actions [data-action=pass]").count() == 0  # the opener cannot pass
    phone_act(anna, "bid", "500")
    wait(host, "v.view.question.auction.bid === 500 && v.view.question.auction.turn === 2")
    assert "Анна — 500" in host.locator("#q-details .auction").inner_text()
    phone_act(vera, "pass")
    wait(host, "v.view.question.auction.turn === 1")
    phone_act(boris, "bid", "700")
    wait(host, "v.view.question.auction.bid === 700 && v.view.question.auction.turn === 0")
    phone_act(anna, "all_in")
    wait(host, "v.view.question.auction.all_in === true && v.view.question.auction.turn === 1")
    # Only a larger all-in beats it: Борис's phone has no bid field, and the host is told why.
    wait(boris, "v.actions.some((a) => a.type === 'all_in')")
    assert not any(a["type"] == "bid" for a in view(boris)["actions"])
    assert "только ва-банк" in host.locator("#auction-why").inner_text()
    phone_act(boris, "pass")
    wait(host, "v.view.phase === 'answering' && v.view.question.answerer === 0")
    lines = host.locator("#q-details .auction .bids").inner_text()
    for line in ("Анна — 500", "Вера — пас", "Борис — 700", "Анна — ва-банк 1", "Борис — пас"):
        assert line in lines, lines
    wait(board, "v.view.phase === 'answering'")
    assert board.locator("#qscreen .text").is_visible()


def test_a_cat_chosen_and_given_on_phones(browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    anna, boris, vera = seat_phones(browser, server, host)
    # The chooser picks the cell on her phone; the host confirms with one tap.
    wait(anna, "v.actions && v.actions.some((a) => a.type === 'choose')")
    phone_act(anna, "choose", '"1:2"')
    host.wait_for_selector("#proposal", state="visible")
    assert "Анна" in host.locator("#proposal-text").inner_text()
    assert view(host)["view"]["phase"] == "choose"  # not before the host's tap
    host.click("#proposal-ok")
    wait(host, "v.view.phase === 'cat_give'")
    host.wait_for_selector("#proposal", state="hidden")
    # The opener gives the cat on her phone; the receiver prices it on his.
    wait(anna, "v.actions.some((a) => a.type === 'give')")
    assert not any(a["type"] == "give" for a in view(boris)["actions"])
    phone_act(anna, "give", "1")
    wait(host, "v.view.phase === 'cat_price'")
    wait(boris, "v.actions.some((a) => a.type === 'cat_price')")
    assert not any(a["type"] == "cat_price" for a in view(anna)["actions"])
    phone_act(boris, "cat_price", "300")
    wait(host, "v.view.phase === 'answering' && v.view.question.value === 300"
               " && v.view.question.answerer === 1")


def test_the_replace_dialog_names_the_question_and_fits_the_tablet(
        browser: Any, server: Server) -> None:
    host = open_host(browser, server)  # 1280×800
    start_tv(host, NAMES)
    tv_question(host)
    q = view(host)["view"]["question"]
    fix_dialog(host, "replace_question")
    now = host.locator("#fix-now").inner_text()
    assert f"Заменяется: «{q['theme']}», {q['value']}" in now, now
    special = host.locator("#fix-fields button.choice.special")
    assert special.count() >= 2  # the demo round's cat and auction, marked
    assert "кот в мешке" in " ".join(special.all_inner_texts())
    host.locator("#fix-fields button.choice").last.click()
    for button in ("#fix-ok", "#fix-cancel"):
        box = host.locator(button).bounding_box()
        assert box is not None and box["y"] + box["height"] <= 800, (button, box)
    assert host.locator("#fix-ok").inner_text().startswith("Да, ")
    # Corrections come grouped, the destructive ones apart, each saying what it does.
    host.click("#fix-cancel")
    groups = host.eval_on_selector_all("#corrections .fix-group",
                                       "gs => gs.map(g => g.dataset.group)")
    assert groups[:2] == ["score", "question"] and "game" in groups
    line = host.locator("#corrections [data-fix=remove_question] .fix-line").inner_text()
    assert "оценки отменяются" in line
    assert host.locator("#corrections .fix-group.game [data-fix=finish]").count() == 1


# --- the first minutes and the end of a tournament battle (issue 25, second half) ----------

def page_lang(page: Any, want: str, timeout_s: float = 10.0) -> str:
    """The page's language once it is `want` (it reloads to follow the box, so each try may
    meet a page being replaced), or the last one read."""
    import time

    deadline = time.monotonic() + timeout_s
    seen = ""
    while time.monotonic() < deadline:
        try:
            seen = page.evaluate("() => document.body.dataset.ready === '1' ? SVOYAK.lang : ''")
        except playwright_api.Error:
            seen = ""
        if seen == want:
            return seen
        page.wait_for_timeout(100)
    return seen


def box_settings(server: Server) -> dict[str, Any]:
    import json

    return dict(json.loads((server.data / "settings.json").read_text("utf-8")))


def test_the_hosts_language_becomes_the_boxs_after_a_confirmation(
        browser: Any, server: Server) -> None:
    board = open_board(browser, server)
    phone = browser.new_page(viewport=PHONE)
    phone.goto(server.base + "/play")
    russian = browser.new_page(viewport=PHONE)  # a phone whose owner picked Russian
    russian.goto(server.base + "/lang/ru?next=/play")
    host = open_host(browser, server)
    assert host.locator("#ng-box-lang").is_hidden()  # the host reads the box's language
    host.goto(server.base + "/lang/en?next=/host")
    host.wait_for_selector("body[data-ready='1']", state="attached")
    # No game yet: the start screen covers the top bar and offers the same.
    host.wait_for_selector("#new-game-dialog", state="visible")
    offer = host.locator("#ng-box-lang")
    offer.wait_for(state="visible")
    assert offer.inner_text() == "English for the whole box"
    offer.click()
    assert host.locator("#lang-dialog").is_visible()
    assert "TV" in host.locator("#lang-help").inner_text()
    host.click("#lang-cancel")  # cancelled: nothing changes
    assert box_settings(server)["language"] == "ru"
    assert page_lang(board, "ru") == "ru"
    offer.click()
    host.click("#lang-ok")
    assert page_lang(board, "en") == "en"
    assert page_lang(phone, "en") == "en"
    assert box_settings(server)["language"] == "en"
    host.wait_for_selector("#ng-box-lang", state="hidden")
    assert host.locator("#box-lang").is_hidden()
    assert "saved" in host.locator("#toast").inner_text()
    assert page_lang(russian, "ru") == "ru"  # a language picked on the phone stays
    assert board.locator("#idle").is_visible() and "Players" in board.locator("#idle").inner_text()


def test_an_uploaded_package_reaches_the_hosts_list_at_once(browser: Any, server: Server) -> None:
    import json

    from webui.screenshots import big_board

    host = open_host(browser, server)
    host.wait_for_selector("#new-game-dialog", state="visible")
    host.evaluate("window.sameDocument = true")
    ctx = browser.new_context()
    ctx.add_cookies(host.context.cookies())
    admin = ctx.new_page()
    admin.goto(server.base + "/admin/")
    pkg = json.loads(big_board(3, 5))
    pkg["name"] = "Свежий пакет"
    admin.set_input_files("#file", files=[{"name": "fresh.json", "mimeType": "application/json",
                                           "buffer": json.dumps(pkg, ensure_ascii=False).encode()}])
    admin.click("#upload button[type=submit]")
    admin.wait_for_selector("#progress.done", state="attached")
    fresh = "() => [...document.querySelectorAll('#ng-package option')]" \
            ".some((o) => o.textContent === 'Свежий пакет')"
    host.wait_for_function(fresh, timeout=5000)
    assert host.evaluate("window.sameDocument") is True  # no reload
    host.select_option("#ng-package", label="Свежий пакет")
    # The admin's own list has it too, and the message stays beside the upload form.
    row = admin.locator("#packages tr", has_text="Свежий пакет")
    assert row.count() == 1 and admin.locator("#upload-result").inner_text() != ""
    row.locator(".delete").click()
    row.locator(".delete").click()  # the second tap confirms
    host.wait_for_function(f"() => !({fresh})()", timeout=5000)
    assert host.evaluate("window.sameDocument") is True
    ctx.close()


def test_admin_messages_stand_beside_the_form_that_caused_them(
        browser: Any, server: Server) -> None:
    from test_host_console import in_viewport

    host = open_host(browser, server)
    host.goto(server.base + "/admin/")
    host.click("form:has(#volume) button[type=submit]")
    saved = host.locator("form:has(#volume) #message")
    saved.wait_for()
    assert saved.inner_text() == "Сохранено."
    assert saved.get_attribute("role") == "status" and saved.get_attribute("aria-live") == "polite"
    assert in_viewport(host, "#message")
    assert host.evaluate("document.activeElement.id") == "message"  # read out
    # A refusal stands beside its form too, in red, and the field keeps what was typed.
    host.fill("#password", "short")
    host.click("form:has(#box_name) button[type=submit]")
    refused = host.locator("form:has(#box_name) #message.failed")
    refused.wait_for()
    assert refused.get_attribute("role") == "alert"
    assert in_viewport(host, "#message") and host.input_value("#password") == "short"
    assert host.locator("main.admin > #message").count() == 0
    host.check("form:has([name=casual_buzzer]) [name=phone_pick_direct]")
    host.click("form:has([name=casual_buzzer]) button[type=submit]")
    host.locator("form:has([name=casual_buzzer]) #message").wait_for()
    assert in_viewport(host, "#message")


def test_the_sport_boards_red_themes_have_a_legend(browser: Any, server: Server) -> None:
    board = open_board(browser, server)
    host = open_host(browser, server)
    start_battle(host, NAMES)  # a qualification battle: no red theme, no legend
    wait(board, "v.view && v.view.phase === 'ready'")
    assert board.locator("#red-legend").is_hidden()
    start_battle(host, NAMES, stage="final")  # the final: 6 red themes of 12
    wait(board, "v.view && v.view.themes && v.view.themes.length === 12")
    legend = board.locator("#red-legend")
    legend.wait_for(state="visible")
    assert legend.inner_text() == "Красная полоса — красная тема: её вопросы вдвое дороже."
    assert board.locator("#grid .row.red").count() > 0
    box, grid = legend.bounding_box(), board.locator("#grid").bounding_box()
    assert box is not None and grid is not None and box["y"] >= grid["y"] + grid["height"] - 1
    assert box["y"] + box["height"] <= 1080
    # The host: the current theme says in words that it is red.
    assert host.locator("#red-mark").count() == 0  # the first theme is blue
    host.evaluate("""() => { const d = structuredClone(window.lastView);
      d.view.theme = {...d.view.theme, red: true}; render(d); }""")
    assert host.locator("#red-mark").inner_text() == "красная тема: цены вдвое"


def test_phone_buttons_are_on_on_a_fresh_box_and_admin_turns_them_off(
        browser: Any, tmp_path: Path) -> None:
    """A box as it serves (no simulator: there the phones always buzz), fresh: a phone's
    buzzer presses without anyone touching admin; admin's checkbox turns it off."""
    server = Server(tmp_path / "data", None, "--no-demo", simulate=False).start()
    try:
        phone = open_phone(browser, server, "Анна")
        host = open_host(browser, server)
        wait(host, "v.ui.lobby.includes('Анна')")
        start_battle(host, NAMES)
        confirm_me(phone, 0, "Анна")
        assert view(phone)["box"]["simulate"] is False
        assert view(phone)["box"]["phone_buzzer"] is True
        host.keyboard.press("a")
        wait(host, "v.view.lamp === true")
        buzzer = phone.locator("#buzzer")
        buzzer.wait_for(state="visible")
        buzzer.dispatch_event("pointerdown")
        wait(host, "v.view.answering === 0")
        host.keyboard.press("+")
        wait(host, "v.view.phase === 'closed'")
        ctx = browser.new_context()
        ctx.add_cookies(host.context.cookies())
        admin = ctx.new_page()
        admin.goto(server.base + "/admin/")
        admin.uncheck("[name=casual_buzzer]")
        admin.click("form:has([name=casual_buzzer]) button[type=submit]")
        admin.locator("form:has([name=casual_buzzer]) #message").wait_for()
        wait(phone, "v.box.phone_buzzer === false")
        host.keyboard.press("n")
        wait(host, "v.view.phase === 'ready'")
        host.keyboard.press("a")
        wait(host, "v.view.lamp === true")
        assert buzzer.is_hidden()
        refused = phone.evaluate("() => send(socket, 'press', {}, null)")
        assert refused["ok"] is False, refused
        assert view(host)["view"]["answering"] is None
        ctx.close()
    finally:
        server.stop()


def test_a_tournament_battle_ends_on_the_tournaments_next_battle(
        browser: Any, server: Server) -> None:
    host = open_host(browser, server)
    api, base = host.request, server.base
    entries = "name,team\n" + "".join(f"Игрок {i},Команда {i % 4}\n" for i in range(10))
    for url, args in (
            ("/admin/tournament/create", {"form": {"title": "Кубок", "final_ties": "shared"}}),
            ("/admin/tournament/import", {"multipart": {"file": {
                "name": "e.csv", "mimeType": "text/csv", "buffer": entries.encode()}}}),
            ("/admin/tournament/draw", {"form": {"seed": "77"}}),
            ("/admin/tournament/start", {"form": {"battle": "P1", "package": "demo:battle"}})):
        r = api.post(base + url, **args)
        assert r.ok, (url, r.status, r.text()[:300])
    host.goto(base + "/host")
    host.wait_for_selector("body[data-ready='1']", state="attached")
    wait(host, "v.rules === 'battle' && v.view.phase === 'ready'")
    host.wait_for_selector("#tourney-caption:not([hidden])")
    for _ in range(60):  # every question right for the first seat: the battle's winner
        phase = view(host)["view"]["phase"]
        if phase == "finished":
            break
        if phase == "ready":
            battle_right(host, server, 0)
        else:
            host.keyboard.press("n")
            wait(host, f"v.view.phase !== '{phase}'")
    again = host.locator("#again")
    again.wait_for()
    assert again.locator(".label").inner_text() == "Следующий бой турнира"
    assert "Бой 1 окончен" in host.locator("#recorded").inner_text()
    assert view(host)["finished"] is False  # the last decision can still be undone
    host.keyboard.press("n")  # ends the battle's game (its result to the tournament)
    host.wait_for_url("**/admin/tournament/")
    assert host.locator("#battle-P1.done").count() == 1
    host.goto(base + "/host")
    host.wait_for_selector("body[data-ready='1']", state="attached")
    wait(host, "v.finished === true")
    host.wait_for_function("() => (document.querySelector('#recorded') || {}).textContent"
                           " === 'Результат боя 1 записан в турнир.'")
    assert host.locator("#again .label").inner_text() == "Следующий бой турнира"
