"""Names are text (issue 27): a control character in a name, team or city is refused with the
line it is on, in Russian and English, and the entries file's size limit holds on every path
(an upload, a command's CSV text), with the size message."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from webui_kit import make_kit

from appliance.rules.protocol import Command
from appliance.rules.tournament import entries as en
from appliance.rules.tournament import game


def test_control_characters_are_refused_with_their_line() -> None:
    csv = ("name,team,city\n"
           "Иван\tПетров,Команда,Город\n"  # a tab is only a space
           "Пётр\x00,Команда,Город\n"
           "Анна,Ком\x1banda,Город\n"
           "Олег,Команда,Го\x85род\n"
           "Юрий,Команда,Го\x7fрод\n")
    with pytest.raises(en.EntriesError) as err:
        en.parse_csv(csv.encode())
    assert [p[0] for p in err.value.problems] == [3, 4, 5, 6]
    ru, en_ = err.value.message_ru, err.value.message_en
    for line, code in ((3, "U+0000"), (4, "U+001B"), (5, "U+0085"), (6, "U+007F")):
        assert f"строка {line}: " in ru and f"line {line}: " in en_
        assert code in ru and code in en_
    assert "имя" in ru and "команда" in ru and "город" in ru
    assert "the name" in en_ and "the team" in en_ and "the city" in en_
    ok = en.parse_csv("name,team\nИван\tПетров,Команда\n".encode())
    assert ok[0].name == "Иван Петров"


def test_every_command_path_refuses_a_control_character() -> None:
    s = game.initial({})
    for cmd in (Command("add_entry", 0, {"name": "A\x00", "team": "T"}),
                Command("import_entries", 0, {"entries": [{"name": "A", "team": "T\x07"}]}),
                Command("import_entries", 0, {"csv": "name,team\nA,T\n\u0090B,T\n"})):
        with pytest.raises(en.EntriesError) as err:
            game.decide(s, cmd)
        assert "U+00" in err.value.message_ru and "U+00" in err.value.message_en, cmd
    ev = game.decide(s, Command("add_entry", 0, {"name": "A", "team": "T"}))
    s = game.evolve(s, ev[0])
    with pytest.raises(en.EntriesError):
        game.decide(s, Command("edit_entry", 0, {"entry": ev[0].data["entry"], "city": "\x00"}))


def test_a_csv_sent_as_text_keeps_the_size_limit() -> None:
    text = "name,team\n" + "Игрок,Команда\n" * 80_000  # 2 MB in UTF-8
    with pytest.raises(en.EntriesError) as err:
        game.decide(game.initial({}), Command("import_entries", 0, {"csv": text}))
    assert "больше 1000 КБ" in err.value.message_ru
    assert "larger than 1000 kB" in err.value.message_en


def test_a_50_mb_upload_gets_the_size_message(tmp_path: Path) -> None:
    k = make_kit(tmp_path)
    try:
        c = k.app.test_client()
        assert c.post("/login", data={"pin": k.services.settings.pin}).status_code == 302
        assert c.post("/admin/tournament/create", data={"title": "Кубок"}).status_code == 302
        # Russian text cut at the limit ends mid-letter: it is not UTF-8 any more
        big = ("name,team\n" + "Игрок Игроков,Команда\n" * 1_400_000).encode()
        assert len(big) > 50_000_000
        r = c.post("/admin/tournament/import", data={"file": (io.BytesIO(big), "e.csv")},
                   content_type="multipart/form-data")
        page = r.get_data(as_text=True)
        assert r.status_code == 400 and "больше 1000 КБ" in page, page[-2000:]
        bad = "name,team\nИван\x00,Команда\n".encode()
        r = c.post("/admin/tournament/import", data={"file": (io.BytesIO(bad), "e.csv")},
                   content_type="multipart/form-data")
        page = r.get_data(as_text=True)
        assert r.status_code == 400 and "строка 2" in page and "U+0000" in page
        assert k.services.tournament.state.players == ()
    finally:
        k.close()
