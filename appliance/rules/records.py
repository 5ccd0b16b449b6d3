"""`replace`: `dataclasses.replace` for the engines' frozen state records, several times
cheaper.

Folding an event builds a new state from the old one with a field or two changed, two or
three times per event (the battle, the question being played, its race). The standard
`dataclasses.replace` checks the instance, walks the fields, builds keyword arguments and
calls `__init__`; for a record of a dozen fields that is most of a fold's time. Here each
record class gets, once, a copier compiled for its fields that copies them straight into a
new instance and takes the changed ones from the arguments. Same result and the same
errors for unknown fields; a class with a `__post_init__` or a field outside `__init__`
(whose meaning a plain copy could miss) goes through `dataclasses.replace` itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_COPIERS: dict[type, Callable[[Any, dict[str, Any]], Any]] = {}


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the dataclass instance `obj` with `changes` applied."""
    cls = type(obj)
    copier = _COPIERS.get(cls)
    if copier is None:
        copier = _COPIERS[cls] = _compile(cls)
    return copier(obj, changes)  # type: ignore[no-any-return]


def _compile(cls: type) -> Callable[[Any, dict[str, Any]], Any]:
    fields = dataclasses.fields(cls)
    if hasattr(cls, "__post_init__") or any(not f.init for f in fields):
        return lambda obj, changes: dataclasses.replace(obj, **changes)
    names = [f.name for f in fields]
    lines = ["def copy(obj, changes):",
             "    for key in changes:",
             "        if key not in NAMES:",
             "            raise TypeError(f'{CLS.__name__} has no field {key!r}')",
             "    new = NEW(CLS)"]
    for name in names:
        lines.append(f"    SET(new, {name!r}, changes[{name!r}] if {name!r} in changes "
                     f"else obj.{name})")
    lines.append("    return new")
    scope: dict[str, Any] = {"NAMES": frozenset(names), "CLS": cls, "NEW": object.__new__,
                             "SET": object.__setattr__}
    exec("\n".join(lines), scope)  # noqa: S102 - source built above from field names only
    return scope["copy"]  # type: ignore[no-any-return]
