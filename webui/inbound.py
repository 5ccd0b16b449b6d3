"""What a screen may send: every Socket.IO payload checked for type, range and size before
a handler acts on it. A bad payload gets a refusal the screen can show (Russian and
English) and changes nothing.

The engines check the meaning of a command (is it legal now?); this module checks only
its shape, so that no handler and no engine ever sees a string where a number belongs,
a seat that does not exist, or a megabyte of nesting."""

from __future__ import annotations

import math
from typing import Any, TypeGuard

from appliance.rules import registry
from webui import i18n

# Seats a game may have at most (the rules know fewer; this bounds a lobby before a game).
MAX_SEATS = 16
MAX_NAME = 40
MAX_TYPE = 40
MAX_TEXT = 2000  # a written answer or a host's note
MAX_ITEMS = 32  # list items or object keys at any level
MAX_DEPTH = 4
# Commands waiting in the game loop's queue beyond which screens' commands are refused
# ("the box is busy") instead of queued; the wired buttons are never refused.
INBOX_HIGH_WATER = 256
# Timers and options a host may set when starting a game.
MAX_OPTION = 100

# An event no handler has: what `webui.app.Utf8Json` makes of a document nested too deep.
MALFORMED_EVENT = "__malformed__"


def refusal(ru: str, en: str, code: str = "refused") -> dict[str, Any]:
    return {"ok": False, "refused": {"code": code, "ru": ru, "en": en}}


MALFORMED = refusal("Неверные данные.", "Malformed message.", "malformed")


def is_int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def small(v: Any, depth: int = 0) -> bool:
    """JSON-shaped, shallow and small: finite numbers, short strings, few items."""
    if v is None or isinstance(v, bool):
        return True
    if is_int(v):
        return abs(v) <= 10**12
    if isinstance(v, float):
        return math.isfinite(v) and abs(v) <= 1e12
    if isinstance(v, str):
        return len(v) <= MAX_TEXT
    if depth >= MAX_DEPTH:
        return False
    if isinstance(v, list):
        return len(v) <= MAX_ITEMS and all(small(x, depth + 1) for x in v)
    if isinstance(v, dict):
        return len(v) <= MAX_ITEMS and all(
            isinstance(k, str) and len(k) <= MAX_TYPE and small(x, depth + 1)
            for k, x in v.items())
    return False


def hello(auth: Any) -> tuple[str, int | None, str] | None:
    """(role, seat, language) of a connecting screen, or None to refuse it."""
    if auth is None:
        auth = {}
    if not isinstance(auth, dict) or not small(auth):
        return None
    role = auth.get("role", "board")
    if role not in ("host", "board", "player", "tourney", "admin"):
        return None
    seat = auth.get("seat")
    if not (is_int(seat) and 0 <= seat < MAX_SEATS):
        seat = None
    lang = auth.get("lang")
    return role, seat, i18n.pick(lang if isinstance(lang, str) and len(lang) <= 8 else "ru")


def command(data: Any) -> dict[str, Any] | None:
    """A refusal for a command not shaped like {"type": name, args...}, else None."""
    if not isinstance(data, dict) or not small(data):
        return MALFORMED
    kind = data.get("type")
    if not isinstance(kind, str) or not 0 < len(kind) <= MAX_TYPE:
        return MALFORMED
    return None


def seat(data: Any, seats: int) -> tuple[int | None, str] | dict[str, Any]:
    """(seat or None for the lobby, proposed name) or a refusal."""
    if not isinstance(data, dict) or not small(data) or not set(data) <= {"seat", "name"}:
        return MALFORMED
    name = data.get("name")
    if name is None:
        name = ""
    if not isinstance(name, str):
        return MALFORMED
    name = " ".join(name.split())[:MAX_NAME]
    chosen = data.get("seat")
    if chosen is None:
        return None, name
    if not is_int(chosen) or not 0 <= chosen < seats:
        return refusal("Нет такого места.", "No such seat.", "malformed")
    return chosen, name


def new_game(data: Any) -> tuple[str, list[str], str | None, dict[str, Any]] | dict[str, Any]:
    """(rules, players, package id, options) of a host's new game, or a refusal. `keep`
    (a bool, default false) is read by the hub: keep the previous game running."""
    if data is None:
        data = {}
    if not isinstance(data, dict) or not small(data) or \
            not set(data) <= {"rules", "players", "package", "options", "keep"} or \
            not isinstance(data.get("keep", False), bool):
        return MALFORMED
    rules = data.get("rules") or "battle"
    # The rules a host may start are those that describe their setup (the registry's own
    # list, as the new-game dialog shows them): a new engine needs no edit here.
    if not isinstance(rules, str) or rules not in registry.setups():
        return refusal("Неизвестные правила.", "Unknown rules.", "unknown_rules")
    players = data.get("players") or []
    if not isinstance(players, list) or len(players) > MAX_SEATS or \
            not all(isinstance(p, str | int) and not isinstance(p, bool) for p in players):
        return MALFORMED
    names = [" ".join(str(p).split())[:MAX_NAME] for p in players]
    names = [n for n in names if n]
    package = data.get("package")
    if package is not None and not (isinstance(package, str | int)
                                    and not isinstance(package, bool)
                                    and len(str(package)) <= MAX_TYPE):
        return MALFORMED
    options = data.get("options")
    if options is None:
        options = {}
    if not isinstance(options, dict):
        return MALFORMED
    timers = options.get("timers")
    if timers is not None:
        if not isinstance(timers, dict):
            return MALFORMED
        for v in timers.values():
            if v in (None, ""):
                continue
            try:
                number = float(v)
            except (TypeError, ValueError):
                return MALFORMED
            if not (math.isfinite(number) and 0 < number <= MAX_OPTION * 10):
                return refusal("Время вне допустимых пределов.", "A timer is out of range.",
                               "malformed")
    return str(rules), names, None if package is None else str(package), options
