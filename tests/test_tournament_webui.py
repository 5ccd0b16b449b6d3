"""The director's page and the tournament screens over HTTP (Flask test client, a real
loop and SQLite file): create, import, draw, start a battle from the bracket, correct,
and every public page renders."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from webui_kit import make_kit


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
    d = kit.app.extensions["svoyak_director"]
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
    # the host screen's caption names the stage and the battle
    cap = c.get("/tournament/api/caption").get_json()
    assert cap["battle"] == "P1" and cap["text"] == "Предварительные бои · Бой 1"
    host_page = c.get("/host").get_data(as_text=True)
    assert 'id="tourney-caption"' in host_page and "tournament-caption.js" in host_page
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
    assert c.post("/admin/tournament/replay", data={"battle": "P1"}).status_code == 302
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
    d = kit.app.extensions["svoyak_director"]
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
    assert kit.app.extensions["svoyak_director"].state.players == ()
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
        d = k2.app.extensions["svoyak_director"]
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
    d = kit.app.extensions["svoyak_director"]
    assert d.state.seeded is False
    assert c.post("/admin/tournament/draw", data={"seed": "4", "seeded": "1", "confirm": "1"}
                  ).status_code == 302
    assert d.state.seeded is True
    assert "посев по рейтингу (не по регламенту)" in c.get("/admin/tournament/").get_data(
        as_text=True)
