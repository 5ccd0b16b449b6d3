"""What both engines share: one refusal per situation (the same code and the same words in
Russian and English), one check per kind of argument, and the reaction-time figures.

The codes are a public interface (docs/protocol.md lists them): the host screen and the
tests tell situations apart by code, people by the messages.

Numbers: a command's number is a JSON number with no fractional part (``12`` or ``12.0``);
a numeric string (``"12"``), a boolean, NaN or infinity is refused with ``not_a_number``.
The web UI sends numbers, so a string is a client's mistake worth saying so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from appliance.packages.model import Package
from appliance.rules.protocol import Refused

# -- refusal codes --------------------------------------------------------------------------
UNKNOWN_COMMAND = "unknown_command"  # no such command in these rules
OUT_OF_PHASE = "out_of_phase"  # the command exists but not now
UNKNOWN_PLAYER = "unknown_player"  # no such seat
NOT_PLAYING = "not_playing"  # a seat that does not play this question / theme
NOBODY_ANSWERS = "nobody_answers"  # a verdict with nobody answering
BAD_VERDICT = "bad_verdict"
NOT_A_NUMBER = "not_a_number"  # not a whole number, or out of its range
UNKNOWN_JUDGEMENT = "unknown_judgement"  # rejudge of a judgement that does not exist
NOTHING_TO_UNDO = "nothing_to_undo"
GAME_OVER = "game_over"  # the rules have ended play (undo is still possible)
BAD_SETUP = "bad_setup"  # initial() refuses the setup
UNKNOWN_ROLE = "unknown_role"  # a view for a role that does not exist

# -- verdicts ----------------------------------------------------------------------------
RIGHT, WRONG, NO_ANSWER = "right", "wrong", "no_answer"
VERDICTS = (RIGHT, WRONG, NO_ANSWER)
"""«Зачёт», «незачёт», and «нет ответа»: silence when an answer was due. No answer scores
like a wrong answer in both formats; statistics and protocols count it apart."""

VERDICT_LABELS = {RIGHT: ("Верно", "Right"), WRONG: ("Неверно", "Wrong"),
                  NO_ANSWER: ("Нет ответа", "No answer")}


def verdict_choices() -> list[dict[str, Any]]:
    """The verdicts as the choices of a legal action."""
    return [{"value": v, "ru": ru, "en": en} for v, (ru, en) in VERDICT_LABELS.items()]


def is_right(verdict: str) -> bool:
    return verdict == RIGHT


# -- refusals ----------------------------------------------------------------------------
def unknown_command(type_: str) -> Refused:
    return Refused(f"Неизвестная команда «{type_}».", f"Unknown command {type_!r}.",
                   UNKNOWN_COMMAND)


def out_of_phase(what_ru: str, what_en: str) -> Refused:
    """The command is known but not possible now; `what_*` says why."""
    return Refused(f"Сейчас нельзя: {what_ru}.", f"Not now: {what_en}.", OUT_OF_PHASE)


def nobody_answers() -> Refused:
    return Refused("Сейчас никто не отвечает.", "Nobody is answering now.", NOBODY_ANSWERS)


def nothing_to_undo() -> Refused:
    return Refused("Нечего отменять.", "Nothing to undo.", NOTHING_TO_UNDO)


def game_over() -> Refused:
    return Refused("Игра окончена.", "The game is over.", GAME_OVER)


def bad_setup(ru: str, en: str) -> Refused:
    return Refused(f"Неверные настройки игры: {ru}", f"Bad game setup: {en}", BAD_SETUP)


def unknown_role(role: str) -> Refused:
    return Refused(f"Неизвестная роль {role!r}.", f"Unknown role {role!r}.", UNKNOWN_ROLE)


# -- argument checks ---------------------------------------------------------------------
def seat(value: Any, seats: int) -> int:
    """A seat number 0..seats-1 (a JSON integer), else `unknown_player`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < seats:
        raise Refused(f"Нет игрока с номером {value!r}.", f"There is no player {value!r}.",
                      UNKNOWN_PLAYER)
    return value


def candidate(value: Any, seats: int, candidates: Iterable[int], why_ru: str,
              why_en: str) -> int:
    """A seat among those the host is offered to pick from (the first chooser, the next
    remover of a final theme): not a seat is `unknown_player`; a seat not offered is
    refused with `why_*` and a word to pick one of those offered."""
    p = seat(value, seats)
    if p not in candidates:
        raise Refused(f"{why_ru}: выберите из предложенных.",
                      f"{why_en}: pick one of those offered.")
    return p


SCORE_LIMIT = 1_000_000  # a score a host may set: ± this
NUMBER_NAMES = {"score": ("Счёт", "The score"), "amount": ("Ставка", "The amount"),
                "value": ("Стоимость", "The value"), "theme": ("Тема", "The theme"),
                "question": ("Вопрос", "The question"), "ref": ("Номер", "The number")}


def finite(value: Any) -> float | None:
    """`value` as a finite float when it is a JSON number (not a boolean); None for anything
    else: NaN, infinity and an int too long for a float (``10**400``, which JSON allows)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def whole(value: Any, what_ru: str, what_en: str, low: int, high: int) -> int:
    """A whole number in low..high: an int, or a float with no fractional part; never a
    string, a boolean, NaN or infinity. Else `not_a_number`, saying the range."""
    ok = (not isinstance(value, bool) and (
        isinstance(value, int)  # compared as it is: a float of a very long int overflows
        or isinstance(value, float) and math.isfinite(value) and value.is_integer())
        and low <= value <= high)
    if not ok:
        raise Refused(f"{what_ru}: нужно целое число от {low} до {high}.",
                      f"{what_en}: a whole number from {low} to {high} is needed.",
                      NOT_A_NUMBER)
    return int(value)


def verdict(value: Any) -> str:
    if value not in VERDICTS:
        raise Refused("Решение: «right» (верно), «wrong» (неверно) или «no_answer» (нет "
                      "ответа).", "The verdict is 'right', 'wrong' or 'no_answer'.",
                      BAD_VERDICT)
    return str(value)


def judgement_ref(value: Any, count: int) -> int:
    """The index of an existing judgement, else `unknown_judgement`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < count:
        raise Refused(f"Нет решения с номером {value!r}.", f"There is no judgement {value!r}.",
                      UNKNOWN_JUDGEMENT)
    return value


def seat_of_role(role: str) -> int | None:
    """N for a role ``player:N``; None for other roles or a malformed one."""
    if not role.startswith("player:"):
        return None
    try:
        return int(role.split(":", 1)[1])
    except ValueError:
        return None


SCREEN_ROLES = ("host", "board", "hardware")  # and ``player:N`` for each seat


def view_seat(role: str, seats: int) -> int | None:
    """The seat a view is for: N for ``player:N`` of an existing seat, None for the host,
    the board and the hardware; `unknown_role` for anything else (a seat the game does not
    have included), so no screen is shown a view built for a player who is not there."""
    if role in SCREEN_ROLES:
        return None
    seat = seat_of_role(role)
    if seat is None or not 0 <= seat < seats:
        raise unknown_role(role)
    return seat


# -- statistics --------------------------------------------------------------------------
NS_PER_MS = 1_000_000


def reaction_ms(samples_ns: Iterable[int]) -> tuple[int, float | None, float | None]:
    """(count, mean, best) of reaction times given in ns from the lamp, in milliseconds."""
    ms: Sequence[float] = [ns / NS_PER_MS for ns in samples_ns]
    if not ms:
        return 0, None, None
    return len(ms), sum(ms) / len(ms), min(ms)


def verdict_counts(verdicts: Iterable[str]) -> dict[str, int]:
    """How many of each verdict: ``{"right", "wrong", "no_answer"}``."""
    out = dict.fromkeys(VERDICTS, 0)
    for v in verdicts:
        out[v] = out.get(v, 0) + 1
    return out


# -- packages in a setup -----------------------------------------------------------------
def load_package(value: Any) -> Package:
    """A package from a setup: a built-in one by name (``"demo-tv"``, ``"demo-sport"``) or a
    package object in our JSON form (`appliance.packages.jsonform`), so a library package
    travels inside the setup and the log replays without the library. Anything malformed
    (a wrong type anywhere in the object, a missing name) is `bad_setup`, never a crash."""
    from appliance.packages import jsonform  # the JSON form is only needed at setup

    if isinstance(value, Package):
        return value
    if isinstance(value, Mapping):
        try:
            return jsonform.from_dict(dict(value))
        except jsonform.PackageFormatError as e:
            raise bad_setup(f"пакет не читается ({e.message_ru})",
                            f"the package cannot be read ({e.message_en})") from e
    if (not isinstance(value, str) or not value
            or not value.replace("-", "").replace("_", "").isalnum()):
        raise bad_setup("неверное имя пакета", "bad package name")
    try:
        return jsonform.demo(value)
    except (OSError, ValueError) as e:
        raise bad_setup(f"пакета «{value}» нет", f"there is no package {value!r}") from e
