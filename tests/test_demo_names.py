"""Made-up entries never pair a woman's first name with a man's surname."""

from __future__ import annotations

import pytest

from webui import demo_names
from webui.screenshots import entries_csv


def agrees(full: str) -> bool:
    first, last = full.split()
    female = first in demo_names.FEMALE
    assert female or first in demo_names.MALE, full
    return last.endswith(("ова", "ева", "ина")) == female


def test_every_made_up_person_has_a_surname_of_the_right_gender() -> None:
    people = [demo_names.person(i) for i in range(200)]
    assert all(agrees(p) for p in people)
    assert "Анастасия Михайлова" in people or agrees("Анастасия Михайлова")
    assert not agrees("Анастасия Михайлов")
    assert len(set(people[:27])) == 27  # a morning's 27 entries, no duplicate names


def test_the_screenshots_entries_agree_too() -> None:
    rows = entries_csv(27).decode("cp1251").splitlines()[1:]
    assert len(rows) == 27
    assert all(agrees(r.split(";")[0]) for r in rows)


def test_an_unknown_first_name_is_refused() -> None:
    with pytest.raises(ValueError):
        demo_names.name("Кто-то", "Иванов")
