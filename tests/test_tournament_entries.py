"""Entries and the CSV import: encodings, errors naming lines, duplicates with both lines."""

from __future__ import annotations

import pytest

from appliance.rules.tournament.entries import EntriesError, Entry, entry, parse_csv, to_csv


def test_utf8_and_windows_1251_read_the_same() -> None:
    text = "name,team,city,rating\nАнна Иванова,Физтех,Долгопрудный,1500\nБорис,МГУ,,\n"
    a = parse_csv(text.encode("utf-8"))
    b = parse_csv(text.encode("cp1251"))
    c = parse_csv(("\ufeff" + text).encode("utf-8"))
    assert a == b == c == [Entry("Анна Иванова", "Физтех", "Долгопрудный", 1500.0),
                           Entry("Борис", "МГУ", "", None)]


def test_semicolons_russian_headers_and_any_column_order() -> None:
    got = parse_csv("Команда;Имя;Рейтинг\nМГУ;Борис;12,5\n".encode("cp1251"))
    assert got == [Entry("Борис", "МГУ", "", 12.5)]


def test_every_bad_line_is_named() -> None:
    data = ("name,team,city,rating\n"
            "Анна,Физтех,,\n"
            ",МГУ,,\n"
            "Борис,,,\n"
            "Вера,СПбГУ,,много\n"
            "Гена,ВШЭ,,,лишнее\n").encode()
    with pytest.raises(EntriesError) as err:
        parse_csv(data)
    lines = [p[0] for p in err.value.problems]
    assert lines == [3, 4, 5, 6]
    assert "строка 3: нет имени" in err.value.message_ru
    assert "line 4: the team is empty" in err.value.message_en
    assert "много" in err.value.message_en and "line 6" in err.value.message_en


def test_duplicates_name_both_lines() -> None:
    data = "name,team\nАнна Петрова,A\nБорис,B\nанна  петрова,C\n".encode()
    with pytest.raises(EntriesError) as err:
        parse_csv(data)
    assert err.value.problems[0][0] == 4
    assert "line 2" in err.value.message_en and "line 4" in err.value.message_en
    assert "строке 2" in err.value.message_ru


def test_unknown_or_missing_columns_are_refused() -> None:
    with pytest.raises(EntriesError) as err:
        parse_csv(b"name,squad\nA,B\n")
    assert "squad" in err.value.message_en and "'team' is missing" in err.value.message_en
    with pytest.raises(EntriesError):
        parse_csv(b"")
    with pytest.raises(EntriesError):
        parse_csv(b"name,team\n")


def test_a_broken_header_gets_one_message_per_problem_in_the_readers_words() -> None:
    """The tryout's garbage file repeated «строка 1: неизвестный столбец «»» once per empty
    cell and named only the English headers in the Russian message."""
    with pytest.raises(EntriesError) as err:
        parse_csv(b"\x01garbage,,,\nx,y,z,w\n")
    ru, en = err.value.message_ru, err.value.message_en
    assert [p[0] for p in err.value.problems] == [1, 1]  # unknown headers, missing columns
    assert ru.count("строка 1") == 2 and ru.count("неизвестн") == 1
    assert "«garbage», пустой" in ru and "\x01" not in ru
    assert "принимаются: имя, команда, город, рейтинг" in ru
    assert "нет столбца «имя» и «команда»" in ru and "«name»" not in ru
    assert "unknown column headers 'garbage', an empty one; accepted: name, team" in en
    assert "the column 'name' and 'team' are missing" in en
    with pytest.raises(EntriesError) as err:
        parse_csv("имя,имя,имя,команда\nА,Б,В,Г\n".encode())
    assert err.value.message_ru.count("дважды") == 1 and "«имя» дважды" in err.value.message_ru
    with pytest.raises(EntriesError) as err:
        parse_csv(b"\n")
    assert "принимаются: имя, команда" in err.value.message_ru


def test_entry_from_a_form_and_back_to_csv() -> None:
    e = entry({"name": "  Анна   Петрова ", "team": "Физтех", "rating": "7"})
    assert e == Entry("Анна Петрова", "Физтех", "", 7.0)
    assert parse_csv(to_csv([e]).encode()) == [e]
    with pytest.raises(EntriesError):
        entry({"name": "x" * 101, "team": "t"})
    with pytest.raises(EntriesError):
        entry({"name": "x", "team": "t", "rating": float("nan")})
