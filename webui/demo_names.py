"""Made-up people for screenshots and tests: a first name with its surname in the matching
gendered form («Анастасия Михайлова», never «Анастасия Михайлов»), as any Russian reader
expects.

Surnames are kept in the masculine form; every one here ends in -ов/-ев/-ин, whose feminine
form adds «а».
"""

from __future__ import annotations

MALE = ("Александр", "Дмитрий", "Константин", "Владимир", "Григорий", "Иван", "Сергей",
        "Михаил", "Николай")
FEMALE = ("Екатерина", "Мария", "Анастасия", "Ольга", "Ксения", "Елизавета", "Анна",
          "Татьяна", "Дарья")
SURNAMES = ("Иванов", "Смирнов", "Кузнецов", "Попов", "Васильев", "Соколов", "Михайлов",
            "Новиков", "Фёдоров", "Морозов", "Волков", "Лебедев")


def surname(masculine: str, female: bool) -> str:
    return masculine + "а" if female else masculine


def name(first: str, masculine_surname: str) -> str:
    """«Имя Фамилия» with the surname agreeing with the first name."""
    if first not in MALE and first not in FEMALE:
        raise ValueError(f"unknown first name {first!r}")
    return f"{first} {surname(masculine_surname, first in FEMALE)}"


def person(i: int) -> str:
    """The i-th made-up person: first names alternate man, woman; surnames cycle so that
    names repeat only after many entries."""
    firsts = [x for pair in zip(MALE, FEMALE, strict=True) for x in pair]
    return name(firsts[i % len(firsts)], SURNAMES[(i // len(firsts) + i) % len(SURNAMES)])
