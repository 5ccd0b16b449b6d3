"""`replace`: `dataclasses.replace` for the engines' frozen state records, several times
cheaper.

Folding an event builds a new state from the old one with a field or two changed, for the
battle and often for the question being played and its race. The standard
`dataclasses.replace` checks the instance, walks the fields, builds keyword arguments and
calls `__init__`; for a record of a dozen fields that is most of a fold's time. Here each
record class gets, once, a copier made for it:

- a record without slots (its fields live in the instance's ``__dict__``) is copied by
  copying that dict in one C call and updating it with the changes, whatever its number of
  fields: the cheapest copy Python has, which is why the records replaced on every press
  (`arbiter.Race`, the battle's `Battle` and `Played`, the TV `State` and `Play`) are
  declared without slots. Such a record must keep nothing but its fields in its dict (no
  `functools.cached_property`: a copy would carry a stale value);
- a record with slots gets a function compiled for its fields that copies them straight
  into a new instance, then sets the changed ones.

Same result and the same errors for unknown fields; a class with a `__post_init__` or a
field outside `__init__` (whose meaning a plain copy could miss) goes through
`dataclasses.replace` itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

Copier = Callable[[T, dict[str, Any]], T]


class _Copiers(dict[type, Callable[[Any, dict[str, Any]], Any]]):
    def __missing__(self, cls: type) -> Callable[[Any, dict[str, Any]], Any]:
        copy = self[cls] = _compile(cls)
        return copy


_COPIERS = _Copiers()


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the dataclass instance `obj` with `changes` applied."""
    return _COPIERS[type(obj)](obj, changes)  # type: ignore[no-any-return]


def copier(cls: type[T]) -> Copier[T]:
    """The copier `replace` uses for `cls`, called as ``copy(obj, {field: value})``: for the
    few folds run on every event, which save the keyword call of `replace` this way."""
    return _COPIERS[cls]


def maker(cls: type[T]) -> Callable[[dict[str, Any]], T]:
    """A constructor for `cls` called as ``make({field: value})``, for a record built on
    every question: for a record without slots it fills the instance dict from the defaults
    and `values` at once, where `__init__` sets each field in turn; other records (slots, a
    `__post_init__`, a field outside `__init__`) are built by `__init__` itself."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if ("__slots__" in cls.__dict__ or not cls.__dictoffset__ or hasattr(cls, "__post_init__")
            or any(not f.init for f in fields)):
        return lambda values: cls(**values)
    names = frozenset(f.name for f in fields)
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    factories = [(f.name, f.default_factory) for f in fields
                 if f.default_factory is not dataclasses.MISSING]
    required = names - defaults.keys() - {name for name, _ in factories}
    new, set_ = object.__new__, object.__setattr__

    def make(values: dict[str, Any]) -> T:
        if not values.keys() <= names:
            raise _unknown(cls, values, names)
        if not required <= values.keys():
            raise TypeError(f"{cls.__name__} needs {sorted(required - values.keys())}")
        record = defaults.copy()
        for name, factory in factories:
            if name not in values:
                record[name] = factory()
        record.update(values)
        out: Any = new(cls)
        set_(out, "__dict__", record)
        return out  # type: ignore[no-any-return]
    return make


def _unknown(cls: type, changes: dict[str, Any], names: frozenset[str]) -> TypeError:
    key = next(k for k in changes if k not in names)
    return TypeError(f"{cls.__name__} has no field {key!r}")


def _compile(cls: type) -> Callable[[Any, dict[str, Any]], Any]:
    fields = dataclasses.fields(cls)
    if hasattr(cls, "__post_init__") or any(not f.init for f in fields):
        return lambda obj, changes: dataclasses.replace(obj, **changes)
    names = frozenset(f.name for f in fields)
    new, set_ = object.__new__, object.__setattr__
    if "__slots__" not in cls.__dict__ and cls.__dictoffset__:
        # `__init__` sets every field, so the instance's dict holds exactly the fields, and
        # an unknown field in `changes` shows as one entry too many: checking the length is
        # the whole check, and a tenth of the cost of comparing the keys with the names.
        size = len(names)

        def copy(obj: Any, changes: dict[str, Any]) -> Any:
            values = obj.__dict__.copy()
            values.update(changes)
            if len(values) != size:
                raise _unknown(cls, changes, names)
            out: Any = new(cls)
            set_(out, "__dict__", values)
            return out
        return copy
    lines = ["def copy(obj, changes):",
             "    new = NEW(CLS)"]
    lines += [f"    SET(new, {f.name!r}, obj.{f.name})" for f in fields]
    lines += ["    if changes:",
              "        if not changes.keys() <= NAMES:",
              "            raise UNKNOWN(CLS, changes, NAMES)",
              "        for key, value in changes.items():",
              "            SET(new, key, value)",
              "    return new"]
    scope: dict[str, Any] = {"NAMES": names, "CLS": cls, "NEW": new, "SET": set_,
                             "UNKNOWN": _unknown}
    exec("\n".join(lines), scope)  # noqa: S102 - source built above from field names only
    return scope["copy"]  # type: ignore[no-any-return]
