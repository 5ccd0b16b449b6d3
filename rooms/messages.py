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
    """A payload as a dict; `sealed_` checks its checksum. Raises `BadMessage`."""
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise BadMessage(f"«{kind}»: не JSON ({e})", f"{kind}: not JSON ({e})") from e
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
