"""The director's page and the tournament screens over HTTP (Flask test client, a real
loop and SQLite file): create, import, draw, start a battle from the bracket, correct,
and every public page renders."""

from __future__ import annotations

import io
import re
import threading
from pathlib import Path

import pytest
from webui_kit import make_kit

from webui.hub import Client


@pytest.fixture
def kit(tmp_path: Path):  # noqa: ANN201
    k = make_kit(tmp_path)
    yield k
    k.close()


def director(kit) -> object:  # noqa: ANN001
    c = kit.app.test_client()
    assert c.post("/login", data={"pin": kit.services.settings.pin}).status_code == 302
    return c


def test_pages_need_the_pin_and_public_pages_open_without_a_tournament(kit) -> None:  # noqa: ANN001
    c = kit.app.test_client()
    assert c.get("/admin/tournament/").status_code == 302
    assert c.post("/admin/tournament/create", data={}).status_code == 403
    for url in ("/tournament/board", "/tournament/call", "/tournament/podium",
                "/tournament/results"):
        r = c.get(url)
        assert r.status_code == 200, url


def test_a_director_runs_the_morning_from_the_page(kit) -> None:  # noqa: ANN001
    c = director(kit)
    page = c.get("/admin/tournament/")
    assert page.status_code == 200 and "Создать турнир" in page.get_data(as_text=True)
    assert c.post("/admin/tournament/create", data={"title": "Кубок клуба",
                                                    "final_ties": "shared"}).status_code == 302
    csv = "name,team,city,rating\n" + "".join(f"Игрок {i},Команда {i % 4},Город,\n"
                                              for i in range(10))
    r = c.post("/admin/tournament/import", data={"file": (io.BytesIO(csv.encode("cp1251")),
                                                          "e.csv")},
               content_type="multipart/form-data")
    assert r.status_code == 302
    bad = c.post("/admin/tournament/import",
                 data={"file": (io.BytesIO(b"name,team\nX,\n"), "e.csv")},
                 content_type="multipart/form-data")
    assert bad.status_code == 400 and "строка 2" in bad.get_data(as_text=True)
    assert c.post("/admin/tournament/entry", data={"name": "Игрок 0", "team": "Б"}
                  ).status_code == 400  # duplicate
    assert c.post("/admin/tournament/entry", data={"name": "Запасной", "team": "Б"}
                  ).status_code == 302
    assert c.post("/admin/tournament/entry/11", data={"withdraw": "1"}).status_code == 302
    assert c.post("/admin/tournament/draw", data={"seed": "77"}).status_code == 302
    d = kit.services.tournament
    s = d.state
    assert s.seed == 77 and s.plan.bracket == 9 and len(s.active()) == 10
    page = c.get("/admin/tournament/").get_data(as_text=True)
    assert "Бой 1" in page and "Начать бой" in page
    # start the preliminary battle with the demo package: a battle game appears
    r = c.post("/admin/tournament/start", data={"battle": "P1", "package": "demo:battle"})
    assert r.status_code == 302, r.get_data(as_text=True)
    b = d.state.battle("P1")
    assert b.status == "playing" and b.game is not None
    rules, battle = kit.loop.snapshot(b.game)
    assert list(battle.players) == [s.player(e).entry.name for e in b.present]
    assert len(battle.themes) == 4
    # the host's frame names the battle's stage and number (its caption), the board's not
    host = kit.hub.payload(Client("host"))
    assert host["tourney"] == {"battle": "P1", "number": 1, "stage": "preliminary",
                               "stage_label": {"ru": "Предварительные бои",
                                               "en": "Preliminary battles"}}
    assert "tourney" not in kit.hub.payload(Client("board"))
    assert 'id="tourney-caption"' in c.get("/host").get_data(as_text=True)
    # a second start is refused with a message, nothing changes
    again = c.post("/admin/tournament/start", data={"battle": "P1", "package": "demo:battle"})
    assert again.status_code == 400 and "уже идёт" in again.get_data(as_text=True)
    assert c.post("/admin/tournament/draw", data={"seed": "1", "confirm": "1"}
                  ).status_code == 400  # started: no redraw even when confirmed
    ready = next(x for x in d.state.battles if x.status == "ready")
    assert c.post("/admin/tournament/walkover",
                  data={"battle": ready.id, "absent": [str(ready.present[0])]}
                  ).status_code == 302
    assert len(d.state.battle(ready.id).present) == 2
    assert c.post("/admin/tournament/replay", data={"battle": "P1"}).status_code == 400
    assert c.post("/admin/tournament/replay", data={"battle": "P1", "confirm": "1"}
                  ).status_code == 302
    assert d.state.battle("P1").status == "ready"
    for url in ("/tournament/board", "/tournament/board?stage=1/3", "/tournament/call",
                "/tournament/podium", "/tournament/results", "/tournament/print/bracket",
                "/tournament/print/protocol/P1", "/tournament/print/protocol/F"):
        r = c.get(url)
        assert r.status_code == 200, url
        html = r.get_data(as_text=True)
        # no inline script (the CSP refuses them); base.html's page data is a JSON block
        inline = re.findall(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", html)
        assert inline == [], url
        assert " onclick=" not in html and " onsubmit=" not in html, url
    assert "Приглашаются на бой" in c.get("/tournament/call").get_data(as_text=True)
    protocol = c.get("/tournament/print/protocol/F").get_data(as_text=True)
    assert protocol.count('class="value"') == 60 and ">100<" in protocol
    assert c.get("/tournament/print/protocol/nope").status_code == 404
    csv_out = c.get("/tournament/results.csv")
    assert csv_out.status_code == 200 and "place,place_to" in csv_out.get_data(as_text=True)


def _entries(c, n: int) -> None:  # noqa: ANN001
    csv = "name,team\n" + "".join(f"Игрок {i},Команда {i % 4}\n" for i in range(n))
    r = c.post("/admin/tournament/import", data={"file": (io.BytesIO(csv.encode()), "e.csv")},
               content_type="multipart/form-data")
    assert r.status_code == 302


def test_after_the_draw_the_page_shows_its_seed_and_the_next_step(kit) -> None:  # noqa: ANN001
    """The tryout's director copied a fresh random seed from the field while the header named
    the one used; the yellow button was the redraw; rows read «Q1» and «победитель Q1»."""
    c = director(kit)
    c.post("/admin/tournament/create", data={"title": "Кубок"})
    _entries(c, 10)
    before = c.get("/admin/tournament/").get_data(as_text=True)
    assert re.search(r'<button class="btn primary" type="submit">Жеребьёвка</button>', before)
    assert c.post("/admin/tournament/draw", data={"seed": "503086853"}).status_code == 302
    d = kit.services.tournament
    battles = [(b.id, b.status) for b in d.state.battles]
    for _ in range(3):  # every load offers a new random seed before the draw, never after
        page = c.get("/admin/tournament/").get_data(as_text=True)
        field = re.search(r'<input type="number" id="t-seed" name="seed" value="(\d+)"', page)
        assert field is not None and field.group(1) == "503086853"
        assert "Жребий (seed): 503086853" in page
    draw = page[page.index('<section id="draw">'):page.index('<section id="battles">')]
    assert "btn primary" not in draw  # the redraw is secondary, behind a confirmation
    assert '<details class="redraw">' in draw and "Да, провести жеребьёвку заново" in draw
    # the next step is the one primary action of the battles: the first ready battle's start
    table = page[page.index('<section id="battles">'):]
    starts = re.findall(r'<button class="btn( primary)?" type="submit">Начать бой</button>',
                        table)
    assert starts[0] == " primary" and starts.count(" primary") == 1, starts
    first_ready = next(b for b in d.state.battles if b.status == "ready")
    row = table[table.index(f'id="battle-{first_ready.id}"'):]
    assert 'class="btn primary" type="submit">Начать бой' in row[:row.index("</tr>")]
    # stage and battle in words: no raw ids in the rows, the pending seat names its battle
    cells = re.findall(r"<td>(.*?)</td>", table, re.S)
    assert not any(re.fullmatch(r"\s*(Q\d+|F\+?|\d/\d+-\d+)\s*", x) for x in cells)
    assert "<small>P1</small>" not in table and "победитель P1" not in table
    assert "победитель боя 1" in table
    assert "Предварительные бои" in table and "Финал" in table
    # a redraw without the confirmation's own button is refused and changes nothing
    r = c.post("/admin/tournament/draw", data={"seed": "5"})
    assert r.status_code == 400 and "подтвердите" in r.get_data(as_text=True)
    assert d.state.seed == 503086853 and [(b.id, b.status) for b in d.state.battles] == battles
    assert c.post("/admin/tournament/draw", data={"seed": "5", "confirm": "1"}
                  ).status_code == 302
    assert d.state.seed == 5
    # the board and the printed bracket name the pending seat by the battle's number too
    for url in ("/tournament/board?stage=1/3", "/tournament/print/bracket",
                "/tournament/results"):
        html = c.get(url).get_data(as_text=True)
        assert "победитель P1" not in html and "победитель боя 1" in html, url


def test_a_broken_entries_file_is_refused_once_per_problem_in_red(kit) -> None:  # noqa: ANN001
    c = director(kit)
    c.post("/admin/tournament/create", data={"title": "Кубок"})
    r = c.post("/admin/tournament/import",
               data={"file": (io.BytesIO(b"\x01garbage,,,\nx,y,z,w\n"), "e.csv")},
               content_type="multipart/form-data")
    page = r.get_data(as_text=True)
    assert r.status_code == 400
    alert = re.search(r'<p class="message failed" role="alert">(.*?)</p>', page, re.S)
    assert alert is not None  # a refusal, styled as one (the tryout saw it green)
    text = alert.group(1)
    assert text.count("неизвестн") == 1 and "имя, команда, город, рейтинг" in text
    assert kit.services.tournament.state.players == ()
    assert "Столбцы имя, команда, город, рейтинг" in page


def test_a_sport_battles_package_chooser_starts_on_a_sport_package(kit) -> None:  # noqa: ANN001
    c = director(kit)
    c.post("/admin/tournament/create", data={"title": "Кубок"})
    _entries(c, 5)
    assert c.post("/admin/tournament/draw", data={"seed": "7"}).status_code == 302
    page = c.get("/admin/tournament/").get_data(as_text=True)
    chooser = re.search(r'<select name="package"[^>]*>(.*?)</select>', page, re.S)
    assert chooser is not None
    selected = re.findall(r'<option value="([^"]+)" selected>', chooser.group(1))
    assert selected == ["demo:battle"]


def test_the_director_comes_back_after_a_restart(tmp_path: Path) -> None:
    k = make_kit(tmp_path)
    c = director(k)
    c.post("/admin/tournament/create", data={"title": "Т"})
    c.post("/admin/tournament/entry", data={"name": "А", "team": "1"})
    k.close()
    k2 = make_kit(tmp_path)
    try:
        d = k2.services.tournament
        assert d is not None and [p.entry.name for p in d.state.players] == ["А"]
    finally:
        k2.close()


def test_the_draw_is_by_lot_unless_the_director_ticks_seeded(kit) -> None:  # noqa: ANN001
    c = director(kit)
    c.post("/admin/tournament/create", data={"title": "Кубок"})
    _entries(c, 12)
    page = c.get("/admin/tournament/").get_data(as_text=True)
    box = re.search(r'<input type="checkbox" name="seeded" value="1"( checked)?>', page)
    assert box is not None and box.group(1) is None  # off by default
    assert "Не по регламенту" in page
    assert c.post("/admin/tournament/draw", data={"seed": "4"}).status_code == 302
    d = kit.services.tournament
    assert d.state.seeded is False
    assert c.post("/admin/tournament/draw", data={"seed": "4", "seeded": "1", "confirm": "1"}
                  ).status_code == 302
    assert d.state.seeded is True
    assert "посев по рейтингу (не по регламенту)" in c.get("/admin/tournament/").get_data(
        as_text=True)


def test_the_director_sees_the_themes_each_stage_needs_and_which_packages_hold_them(
        kit) -> None:  # noqa: ANN001
    c = director(kit)
    c.post("/admin/tournament/create", data={"title": "Кубок"})
    _entries(c, 27)
    page = c.get("/admin/tournament/").get_data(as_text=True)
    needs = re.search(r'<section id="themes">(.*?)</section>', page, re.S)
    assert needs is not None
    rows = re.findall(r"<tr><td>([^<]+)</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td>",
                      needs.group(1))
    assert rows == [("1/9 финала", "9", "4", "36"), ("1/3 финала", "3", "6", "18"),
                    ("Финал", "1", "12", "12")]
    assert "Нужно несыгранных тем: 66" in needs.group(1)
    assert re.search(r'<li class="ok">Демо: спортивная своя игра — хватит', needs.group(1))
    assert "Демо: Своя игра" not in needs.group(1)  # the TV demo is no sport package
    assert c.post("/admin/tournament/draw", data={"seed": "3"}).status_code == 302
    page = c.get("/admin/tournament/").get_data(as_text=True)
    assert page.count('action="/admin/tournament/start"') == 9  # the nine 1/9 battles


def test_a_package_too_small_for_the_tournament_is_not_offered(kit) -> None:  # noqa: ANN001
    c = director(kit)
    c.post("/admin/tournament/create", data={"title": "Кубок"})
    _entries(c, 100)  # 10 + 27 + 9 battles of 4, 3 of 6, the final: 214 themes
    page = c.get("/admin/tournament/").get_data(as_text=True)
    assert "Нужно несыгранных тем: 214" in page
    assert re.search(r'<li class="short">Демо: спортивная своя игра — не хватит', page)
    assert c.post("/admin/tournament/draw", data={"seed": "3"}).status_code == 302
    page = c.get("/admin/tournament/").get_data(as_text=True)
    assert 'action="/admin/tournament/start"' not in page
    assert "Ни в одном пакете не хватит тем на оставшиеся бои (214)" in page


def _wait(cond, what: str) -> None:  # noqa: ANN001
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out: {what}")


def _right_answer(loop, game: int, seat: int) -> None:  # noqa: ANN001
    """One question won by `seat` on the real battle engine (the press is decided when its
    settle window closes, on the loop's clock)."""
    for cmd in ({"type": "announce"}, {"type": "reading_done"}, {"type": "press",
                                                                  "player": seat}):
        assert loop.submit(cmd, game).result(10).refused is None
    _wait(lambda: loop.snapshot(game)[1].phase == "answering", "the answerer")
    assert loop.submit({"type": "judge", "verdict": "right"}, game).result(10).refused is None


def _battle_in_play(kit):  # noqa: ANN001, ANN202
    """A director's client, the tournament shell and the game of battle 3.1, started from
    the director's page on nine entries."""
    c = director(kit)
    c.post("/admin/tournament/create", data={"title": "Кубок"})
    _entries(c, 9)
    assert c.post("/admin/tournament/draw", data={"seed": "2"}).status_code == 302
    assert c.post("/admin/tournament/start", data={"battle": "3.1", "package": "demo:battle"}
                  ).status_code == 302
    d = kit.services.tournament
    return c, d, d.state.battle("3.1").game


def test_a_battle_ended_early_on_the_host_is_the_directors_decision(kit) -> None:  # noqa: ANN001
    c, d, game = _battle_in_play(kit)
    host = kit.loop
    _right_answer(host, game, 1)
    assert host.end_game(game).result(10).refused is None  # the host ends it early
    _wait(lambda: d.state.battle("3.1").status == "stopped", "the battle stopped")
    page = c.get("/admin/tournament/").get_data(as_text=True)
    row = re.search(r'<tr class="stopped" id="battle-3.1">(.*?)</tr>', page, re.S)
    assert row is not None and "по правилам победителя нет" in row.group(1)
    leader = d.state.player(d.state.battle("3.1").present[1]).entry.name
    assert f"Записать победителем лидера: {leader}, 10" in row.group(1)
    board = c.get("/tournament/board?stage=1/3").get_data(as_text=True)
    assert 'class="tag stopped"' in board and "без победителя" in board
    call = c.get("/tournament/call").get_data(as_text=True)
    assert "по правилам победителя нет, решение за директором" in call
    assert c.post("/admin/tournament/award", data={"battle": "3.1", "reason": ""}
                  ).status_code == 400
    assert c.post("/admin/tournament/award", data={"battle": "3.1",
                                                    "reason": "зал закрывается"}
                  ).status_code == 302
    b = d.state.battle("3.1")
    assert b.result.winner == b.present[1] and b.result.awarded == "зал закрывается"
    assert "победа лидеру: зал закрывается" in c.get("/admin/tournament/").get_data(
        as_text=True)


def test_the_page_shows_a_battle_just_ended_even_before_the_shell_hears_of_it(
        kit) -> None:  # noqa: ANN001
    """The host's «Следующий бой турнира» ends the battle's game and opens this page at
    once; the shell records the result from the loop's notifier thread, which on a busy box
    may not have run yet. Here the notifier is held on an earlier update while the game
    ends: the page still shows the battle decided, and the late subscriber adds nothing."""
    c, d, game = _battle_in_play(kit)
    loop = kit.loop
    held, release = threading.Event(), threading.Event()

    def hold(update) -> None:  # noqa: ANN001
        if not held.is_set():
            held.set()
            release.wait(30)

    ended = threading.Event()
    off = loop.subscribe(hold)
    off_ended = loop.subscribe(lambda u: ended.set() if u.finished else None)
    try:
        _right_answer(loop, game, 1)
        assert held.wait(10), "the notifier never reached the holding subscriber"
        assert loop.end_game(game).result(10).refused is None
        assert d.state.battle("3.1").status == "playing"  # the shell has not heard yet
        page = c.get("/admin/tournament/").get_data(as_text=True)
        assert re.search(r'<tr class="stopped" id="battle-3.1">', page), "shown in play"
        assert d.state.battle("3.1").status == "stopped"
    finally:
        release.set()
        off()
    events = len(loop.store.events(d.game))
    # told after the shell, which has then sent its own (late) result
    assert ended.wait(10)
    off_ended()
    _wait(lambda: loop.pending() == 0, "the late subscriber's command")
    assert len(loop.store.events(d.game)) == events  # recorded once


def test_replaying_a_battle_in_play_asks_and_names_what_is_lost(kit) -> None:  # noqa: ANN001
    c = director(kit)
    c.post("/admin/tournament/create", data={"title": "Кубок"})
    _entries(c, 9)
    assert c.post("/admin/tournament/draw", data={"seed": "2"}).status_code == 302
    d = kit.services.tournament
    assert c.post("/admin/tournament/start", data={"battle": "3.2", "package": "demo:battle"}
                  ).status_code == 302
    game = d.state.battle("3.2").game
    _right_answer(kit.loop, game, 0)
    page = c.get("/admin/tournament/").get_data(as_text=True)
    row = re.search(r'<tr class="playing" id="battle-3.2">(.*?)</tr>', page, re.S)
    assert row is not None and 'name="confirm"' not in row.group(1)
    r = c.post("/admin/tournament/replay", data={"battle": "3.2"})  # one tap: not enough
    page = r.get_data(as_text=True)
    assert r.status_code == 400 and "подтвердите" in page
    row = re.search(r'<tr class="playing" id="battle-3.2">(.*?)</tr>', page, re.S)
    assert row is not None
    n = d.state.battle("3.2").drawn.number
    assert (f"Бой {n} идёт: игра {game} будет остановлена, сыгранные вопросы (1) и очки"
            f" (10:0:0) пропадут") in row.group(1)
    assert 'name="confirm" value="1">Да, остановить и переиграть' in row.group(1)
    assert d.state.battle("3.2").status == "playing"
    assert c.post("/admin/tournament/replay", data={"battle": "3.2", "confirm": "1"}
                  ).status_code == 302
    assert d.state.battle("3.2").status == "ready"
    assert kit.loop.store.game(game).status != "running"  # its game was stopped with it


def _pushed(client, into: list[int]) -> int:  # noqa: ANN001
    """Take what the box pushed to a TV page's socket into `into` (the change numbers);
    how many came."""
    got = client.get_received()
    assert all(m["name"] == "tourney" for m in got), [m["name"] for m in got]
    into.extend(m["args"][0]["v"] for m in got)
    return len(got)


def test_the_tv_pages_hear_of_every_change_and_nothing_of_the_games(kit) -> None:  # noqa: ANN001
    """The tournament's TV pages redraw on a push ("tourney"), never on a timer: told once
    on connecting, then after each change, whoever made it (the director's page, the rooms
    link), and never sent a game's frames."""
    from appliance.packages import jsonform

    tv, seen = kit.client("tourney"), []
    assert tv.is_connected()
    assert _pushed(tv, seen) == 1 and seen == [0]
    c, d, game = _battle_in_play(kit)  # create, import, draw, start: each a change
    _wait(lambda: _pushed(tv, seen) and seen[-1] >= 3, "the morning's changes pushed")
    assert seen == sorted(seen)
    # The battle's own game: the board hears it, the TV page does not.
    board = kit.client("board")
    _right_answer(kit.loop, game, 1)
    _wait(lambda: any(m["name"] == "view" and m["args"][0].get("game") == game
                      for m in board.get_received()), "the board's frames")
    before = len(seen)
    assert _pushed(tv, seen) == 0 and len(seen) == before
    # A change the rooms link makes (a battle given to a room) reaches the TV too.
    ready = next(b for b in d.state.battles if b.status == "ready")
    d.start_battle(ready.id, d.setup_for(ready.id, jsonform.demo("demo-sport")), room="room1")
    _wait(lambda: _pushed(tv, seen) > 0, "the rooms link's change pushed")
    assert d.state.battle(ready.id).room == "room1"
    # A TV page only listens: it may not press even in simulator mode.
    out = tv.emit("press", {"player": 0}, callback=True)
    assert not out["ok"] and out["refused"]["code"] == "forbidden"
