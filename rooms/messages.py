"""Payloads of the rooms link, and the checksum that a result carries.

Every payload is a JSON object. A result (and an assignment carried by file) includes
``sha256``: the SHA-256 of its own canonical JSON without that key (keys sorted, no
spaces, UTF-8), so a result read from a USB stick or a half-written file is refused
instead of advancing the bracket with garbage. Field lists: docs/rooms.md."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

VERSION = 1
MAX_EVENTS_PER_MESSAGE = 200
# A message is at most what the broker takes (its max_packet_size); nothing of ours nests
# deeper than a handful of levels, so a deeper one is refused before anything walks it.
MAX_BYTES = 1 << 20
MAX_DEPTH = 16
MAX_INT = (1 << 63) - 1  # SQLite's INTEGER: t_ns, seq and game are stored as one
MAX_NAME = 64  # a box id, a battle id, an assignment id, an event type


class BadMessage(ValueError):
    """A payload we cannot use; `ru` and `en` say why, for a screen or a log."""

    def __init__(self, ru: str, en: str):
        super().__init__(en)
        self.ru = ru
        self.en = en


def canonical(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


def checksum(obj: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical({k: v for k, v in obj.items() if k != "sha256"})).hexdigest()


def sealed(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The object with its checksum."""
    body = {k: v for k, v in obj.items() if k != "sha256"}
    return {**body, "sha256": checksum(body)}


def encode(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


def decode(raw: bytes | str, *, kind: str, sealed_: bool = False) -> dict[str, Any]:
    """A payload as a dict; `sealed_` checks its checksum. Raises `BadMessage`, and only
    that: too large, too deeply nested (before the checksum or anything else recurses into
    it) or not JSON at all are refusals like any other."""
    if len(raw) > MAX_BYTES:
        raise BadMessage(f"«{kind}»: больше {MAX_BYTES} байт", f"{kind}: over {MAX_BYTES} bytes")
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise BadMessage(f"«{kind}»: не JSON ({str(e)[:80]})",
                         f"{kind}: not JSON ({str(e)[:80]})") from e
    if too_deep(obj, MAX_DEPTH):
        raise BadMessage(f"«{kind}»: вложенность глубже {MAX_DEPTH} уровней",
                         f"{kind}: nested deeper than {MAX_DEPTH} levels")
    if not isinstance(obj, dict):
        raise BadMessage(f"«{kind}»: ожидался объект JSON", f"{kind}: expected a JSON object")
    if obj.get("v") != VERSION:
        raise BadMessage(f"«{kind}»: неизвестная версия {obj.get('v')!r}",
                         f"{kind}: unknown version {obj.get('v')!r}")
    if sealed_:
        got = obj.get("sha256")
        if not isinstance(got, str) or got != checksum(obj):
            raise BadMessage(f"«{kind}»: контрольная сумма не сходится — файл повреждён "
                             "или изменён", f"{kind}: the checksum does not match — the "
                             "file is damaged or was changed")
    return obj


def events_message(box: str, game: int, battle: str, events: list[dict[str, Any]],
                   assignment: str | None = None) -> dict[str, Any]:
    """A run of a game's committed events, in order: ``events[i]["seq"]`` consecutive.
    `assignment` is the id of the assignment the game plays (a battle replayed after a
    correction gets a new one)."""
    out = {"v": VERSION, "box": box, "game": game, "battle": battle, "events": events}
    if assignment is not None:
        out["assignment"] = assignment
    return out


def result_message(box: str, game: int, battle: str, last_seq: int,
                   summary: Mapping[str, Any], room: str,
                   assignment: str | None = None) -> dict[str, Any]:
    body = {"v": VERSION, "box": box, "game": game, "battle": battle, "room": room,
            "last_seq": last_seq, "summary": dict(summary)}
    if assignment is not None:
        body["assignment"] = assignment
    return sealed(body)


def require(obj: Mapping[str, Any], kind: str, **types: type | tuple[type, ...]) -> None:
    for key, t in types.items():
        v = obj.get(key)
        if not isinstance(v, t) or isinstance(v, bool) and t is not bool:
            raise BadMessage(f"«{kind}»: поле «{key}» отсутствует или неверно",
                             f"{kind}: field {key!r} is missing or wrong")


def too_deep(obj: Any, limit: int) -> bool:
    """Whether `obj` nests lists and objects deeper than `limit` (walked without recursion,
    so a hostile message cannot make the walk itself raise)."""
    stack: list[tuple[Any, int]] = [(obj, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((c, depth + 1) for c in children)
    return False


def _bad(kind: str, ru: str, en: str) -> BadMessage:
    return BadMessage(f"«{kind}»: {ru}", f"{kind}: {en}")


def _name(obj: Mapping[str, Any], key: str, kind: str) -> str:
    v = obj.get(key)
    if not isinstance(v, str) or not 0 < len(v) <= MAX_NAME:
        raise _bad(kind, f"поле «{key}» отсутствует или неверно",
                   f"field {key!r} is missing or wrong")
    return v


def _whole(obj: Mapping[str, Any], key: str, kind: str, low: int = 0) -> int:
    v = obj.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or not low <= v <= MAX_INT:
        raise _bad(kind, f"поле «{key}» — не целое число от {low} до 2⁶³−1",
                   f"field {key!r} is not a whole number from {low} to 2^63-1")
    return v


def check_run(msg: Mapping[str, Any], event_types: frozenset[str] | None = None) -> None:
    """An events message checked whole (its fields, then every event's: seq a whole number
    from 1, t_ns a whole number in SQLite's range, a known type, a payload object) before
    the director commits any of it. Raises `BadMessage` naming the first fault."""
    kind = "events"
    _name(msg, "box", kind)
    _whole(msg, "game", kind, 1)
    _name(msg, "battle", kind)
    _name(msg, "assignment", kind)
    events = msg.get("events")
    if not isinstance(events, list) or not 0 < len(events) <= MAX_EVENTS_PER_MESSAGE:
        raise _bad(kind, f"«events» — не список от 1 до {MAX_EVENTS_PER_MESSAGE} событий",
                   f"'events' is not a list of 1 to {MAX_EVENTS_PER_MESSAGE} events")
    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            raise _bad(kind, f"событие {i} — не объект", f"event {i} is not an object")
        seq = _whole(ev, "seq", kind, 1)
        where = f"событие seq {seq}", f"event seq {seq}"
        try:
            _whole(ev, "t_ns", kind)
            ty = _name(ev, "type", kind)
        except BadMessage as e:
            raise _bad(kind, f"{where[0]}: {e.ru.split(': ', 1)[1]}",
                       f"{where[1]}: {e.en.split(': ', 1)[1]}") from None
        if event_types is not None and ty not in event_types:
            raise _bad(kind, f"{where[0]}: неизвестный тип {ty!r}",
                       f"{where[1]}: unknown type {ty!r}")
        if not isinstance(ev.get("payload"), dict):
            raise _bad(kind, f"{where[0]}: «payload» — не объект",
                       f"{where[1]}: 'payload' is not an object")
        wall = ev.get("wall")
        if wall is not None and not (isinstance(wall, str) and len(wall) <= MAX_NAME):
            raise _bad(kind, f"{where[0]}: «wall» — не время ISO 8601",
                       f"{where[1]}: 'wall' is not an ISO 8601 time")


def check_result(msg: Mapping[str, Any]) -> None:
    """A result message's fields (its checksum is `decode`'s)."""
    kind = "result"
    _name(msg, "box", kind)
    _whole(msg, "game", kind, 1)
    _name(msg, "battle", kind)
    _name(msg, "assignment", kind)
    _whole(msg, "last_seq", kind, 1)
    if not isinstance(msg.get("summary"), dict):
        raise _bad(kind, "«summary» — не объект", "'summary' is not an object")
