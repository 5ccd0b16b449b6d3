"""The plain-text package format: the usual layouts, and errors that name the line."""

from __future__ import annotations

import pytest

from appliance.packages import text
from appliance.packages.archive import PackageError
from appliance.packages.library import Library

SPORT = """\
Кубок клуба, отборочный тур
Автор: Иван Петров

Тема 1. ПОЭТЫ
1. Этот поэт написал «Евгения Онегина».
2. Автор «Мцыри»
   и «Демона».
3. Поэт, написавший «Облако в штанах».
4. Автор «Двенадцати».
5. Автор «Реквиема».
Ответы:
1. Пушкин. Зачёт: Александр Пушкин; А. С. Пушкин. Комментарий: проще некуда.
2. Лермонтов
3. Маяковский
4. Блок
Незачёт: Белый
5. Ахматова
Источник: школьная программа

Тема 2. РЕКИ
10. Самая длинная река Европы.
Ответ: Волга
20. Река, на которой стоит Петербург.
Ответ: Нева. Зачёт: р. Нева
Комментарий: не путать с Невой в Пскове.
30. Река в Риме.
Ответ: Тибр
40. Река в Париже.
Ответ: Сена
50. Река в Лондоне.
Ответ: Темза
Автор: Мария Сидорова
"""


def test_sport_layout_with_answers_block_and_inline_answers():
    p = text.parse(SPORT, "cup.txt")
    assert p.name == "Кубок клуба, отборочный тур"
    assert p.author == "Иван Петров"
    assert len(p.rounds) == 1 and not p.rounds[0].final
    poets, rivers = p.rounds[0].themes
    assert poets.name == "ПОЭТЫ" and rivers.name == "РЕКИ"
    # numbered 1..5: the sport values; numbered 10..50: the numbers are the values
    assert [q.price for q in poets.questions] == [10, 20, 30, 40, 50]
    assert [q.price for q in rivers.questions] == [10, 20, 30, 40, 50]
    first = poets.questions[0]
    assert first.text == "Этот поэт написал «Евгения Онегина»."
    assert first.right == ["Пушкин", "Александр Пушкин", "А. С. Пушкин"]
    assert first.comment == "проще некуда."
    assert poets.questions[1].text == "Автор «Мцыри» и «Демона»."  # continuation line
    assert poets.questions[3].wrong == ["Белый"]
    assert poets.questions[4].sources == ["школьная программа"]
    neva = rivers.questions[1]
    assert neva.right == ["Нева", "р. Нева"]
    assert neva.comment == "не путать с Невой в Пскове."
    assert rivers.questions[4].right == ["Темза"]
    assert rivers.questions[4].comment == "Автор: Мария Сидорова"


def test_rounds_final_and_values_header():
    src = """\
Пакет: Тренировка
Стоимости: 100 200 300
Раунд 1
Тема 1. А
1. Вопрос а1
Ответ: а1
2. Вопрос а2
Ответ: а2
Раунд 2. Второй
Тема 1. Б
100. Вопрос б1
Ответ: б1
Финал
Тема: Космос
1. Первый космонавт?
Ответ: Гагарин
"""
    p = text.parse(src)
    assert p.name == "Тренировка"
    assert [(r.name, r.final) for r in p.rounds] == [
        ("Раунд 1", False), ("Второй", False), ("Финал", True)]
    assert [q.price for q in p.rounds[0].themes[0].questions] == [100, 200]
    assert [q.price for q in p.rounds[1].themes[0].questions] == [100]
    final = p.rounds[2].themes[0]
    assert final.name == "Космос" and final.questions[0].price == 0
    assert final.questions[0].right == ["Гагарин"]


def test_answers_block_for_a_named_theme_and_answers_by_position():
    src = """\
Тема 1. А
10. q1
20. q2
Тема 2. Б
10. r1
Ответы к теме 1:
1. a1
2. a2
Тема 2
10. b1
"""
    p = text.parse(src)
    a, b = p.rounds[0].themes
    assert [q.right for q in a.questions] == [["a1"], ["a2"]]  # 1, 2 matched by position
    assert b.questions[0].right == ["b1"]


def test_a_question_line_that_merely_mentions_a_theme_is_text():
    src = "Тема 1. X\n1. Вопрос начинается так:\nТема этого вопроса — реки.\nОтвет: да\n"
    q = text.parse(src).rounds[0].themes[0].questions[0]
    assert q.text == "Вопрос начинается так: Тема этого вопроса — реки."


@pytest.mark.parametrize("src,line,words", [
    ("10. вопрос без темы\nОтвет: а\n", 1, "before any theme"),
    ("Тема 1. А\n10. q\n", 2, "no answer"),
    ("Тема 1. А\nОтветы:\n", 1, "no questions"),
    ("Тема 1. А\n10. q\nОтвет: a\n10. q2\nОтвет: b\n", 4, "appears twice"),
    ("Тема 1. А\n10. q\nОтветы:\n30. a\n", 4, "matches no question"),
    ("Тема 1. А\n10. q\nОтвет: a\nОтвет: b\n", 4, "second answer"),
    ("Раунд 1\nРаунд 2\nТема 1. А\n10. q\nОтвет: a\n", 1, "no themes"),
    ("Стоимости: 10 двадцать\n", 1, "whole numbers"),
    ("just some text\n", 1, "no themes found"),
    ("Тема 1. А\n10.\nОтвет: a\n", 2, "no text"),
])
def test_errors_name_the_line(src, line, words):
    with pytest.raises(PackageError) as e:
        text.parse(src, "bad.txt")
    assert f"bad.txt: line {line}:" in str(e.value)
    assert words in str(e.value)


def test_not_utf8_names_the_line(tmp_path):
    f = tmp_path / "cp1251.txt"
    f.write_bytes("Тема 1. А\n10. вопрос\nОтвет: ответ\n".encode().replace(
        "ответ".encode(), "ответ".encode("cp1251")))
    with pytest.raises(PackageError) as e:
        text.load(f)
    assert "cp1251.txt: line 3: not UTF-8" in str(e.value)


def test_bom_and_crlf_are_fine(tmp_path):
    f = tmp_path / "win.txt"
    f.write_bytes("\ufeffТема 1. А\r\n10. вопрос\r\nОтвет: ответ\r\n".encode())
    p = text.load(f).package
    assert p.rounds[0].themes[0].questions[0].right == ["ответ"]
    assert p.name == "win"  # no title line: the file name


def test_imports_into_the_library(tmp_path):
    f = tmp_path / "cup.txt"
    f.write_text(SPORT, encoding="utf-8")
    lib = Library(tmp_path / "data")
    pid = lib.import_file(f)
    info = lib.info(pid)
    assert (info.format, info.rounds, info.themes, info.questions) == ("text", 1, 2, 10)
    assert lib.get(pid) == text.parse(SPORT, "cup.txt")
