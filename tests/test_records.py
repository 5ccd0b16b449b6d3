"""`records.replace` gives what `dataclasses.replace` gives, for the engines' own records."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from appliance.rules import arbiter
from appliance.rules.battle.state import Battle, Played
from appliance.rules.records import maker, replace


@dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Checked:
    v: int
    doubled: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "doubled", 2 * self.v)


def test_same_as_dataclasses_replace():
    p = Point(1, 2, ("a",))
    for changes in ({}, {"x": 5}, {"y": 7, "tags": ()}, {"x": 0, "y": 0, "tags": ("b",)}):
        assert replace(p, **changes) == dataclasses.replace(p, **changes)
    assert replace(p, x=9) is not p and p == Point(1, 2, ("a",))  # the original unchanged
    with pytest.raises(dataclasses.FrozenInstanceError):
        replace(p, x=1).x = 2  # type: ignore[misc]


def test_unknown_fields_are_refused():
    with pytest.raises(TypeError, match="nope"):
        replace(Point(1), nope=1)


def test_post_init_records_go_through_dataclasses_replace():
    assert replace(Checked(2), v=5).doubled == 10


def test_the_engine_records():
    race = arbiter.new_race(3, arbiter.Settings(5_000_000, 30_000_000, None), frozenset({0, 1}))
    q = Played(theme=0, number=1, value=20, race=race, announced_ns=5)
    b = Battle(players=("А", "Б"), themes=())
    assert replace(q, closed="right") == dataclasses.replace(q, closed="right")
    assert replace(race, lamp_ns=3) == dataclasses.replace(race, lamp_ns=3)
    assert replace(b, phase="open", winner=1) == dataclasses.replace(b, phase="open", winner=1)


@dataclass(frozen=True)
class Open:
    """A record without slots: copied through its instance dict."""

    x: int
    tags: tuple[str, ...] = ()
    extra: frozenset[str] = field(default_factory=frozenset)


def test_records_without_slots():
    o = Open(1, ("a",))
    for changes in ({}, {"x": 5}, {"x": 0, "tags": ("b",), "extra": frozenset({"k"})}):
        got = replace(o, **changes)
        assert got == dataclasses.replace(o, **changes) and type(got) is Open
        assert got is not o and vars(got) is not vars(o)
    assert o == Open(1, ("a",))  # the original unchanged
    assert hash(replace(Open(2), x=3)) == hash(Open(3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        replace(o, x=1).x = 2  # type: ignore[misc]
    with pytest.raises(TypeError, match="nope"):
        replace(o, x=2, nope=1)


@dataclass(frozen=True)
class Bag:
    items: list[int] = field(default_factory=list)


def test_maker_builds_what_init_builds():
    make = maker(Open)
    assert make({"x": 1}) == Open(1) and type(make({"x": 1})) is Open
    assert make({"x": 2, "tags": ("a",)}) == Open(2, ("a",))
    bag = maker(Bag)
    assert bag({}) == Bag() and bag({}).items is not bag({}).items  # a factory per record
    with pytest.raises(TypeError, match="nope"):
        make({"x": 1, "nope": 2})
    with pytest.raises(TypeError, match="x"):
        make({"tags": ()})
    with pytest.raises(dataclasses.FrozenInstanceError):
        make({"x": 1}).x = 2  # type: ignore[misc]
    assert maker(Point)({"x": 1, "y": 2}) == Point(1, 2)  # slotted: through __init__
    assert maker(Checked)({"v": 3}).doubled == 6  # __post_init__: through __init__
    race = maker(arbiter.Race)({"seats": 3})
    assert race == arbiter.Race(3) and race.settings == arbiter.Settings()
