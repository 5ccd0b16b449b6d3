"""Entries («заявки»): who plays, from which team and city, with an optional rating.

The director types entries in or imports a CSV file (``name,team,city,rating`` with a header
row, UTF-8 or Windows-1251, comma or semicolon). Every problem is reported with its line, all
at once, so a director fixes a file in one go; a duplicate name names both lines, so the
director can tell the two players apart (for instance by adding the city). Names are compared
without case and extra spaces: «Иван  Петров» and «иван петров» are one name.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from appliance import sheets
from appliance.rules.protocol import Refused

MAX_ENTRIES = 1000
MAX_FIELD = 100  # characters in a name, team or city
MAX_CSV_BYTES = 1_000_000
MAX_ERRORS_SHOWN = 10

# Accepted header names (English and Russian) for each column.
COLUMNS: dict[str, tuple[str, ...]] = {
    "name": ("name", "имя", "игрок", "фио"),
    "team": ("team", "команда"),
    "city": ("city", "город"),
    "rating": ("rating", "рейтинг"),
}
REQUIRED = ("name", "team")


@dataclass(frozen=True, slots=True)
class Entry:
    """A player entered in the tournament («участник»)."""

    name: str
    team: str
    city: str = ""
    rating: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "team": self.team, "city": self.city,
                "rating": self.rating}

    @property
    def label(self) -> str:
        """Name with team (and city), as results tables print it."""
        where = f"{self.team}, {self.city}" if self.city else self.team
        return f"{self.name} ({where})"


class EntriesError(Refused):
    """Entries that cannot be accepted; `problems` lists (line, ru, en), line 0 = no line."""

    def __init__(self, problems: Sequence[tuple[int, str, str]]):
        self.problems = list(problems)
        shown = self.problems[:MAX_ERRORS_SHOWN]
        more = len(self.problems) - len(shown)
        ru = "; ".join(_at(line, "строка", r) for line, r, _ in shown)
        en = "; ".join(_at(line, "line", e) for line, _, e in shown)
        if more:
            ru += f"; и ещё {more}"
            en += f"; and {more} more"
        super().__init__(f"Заявки не приняты: {ru}.", f"Entries refused: {en}.", "bad_entries")


def _at(line: int, word: str, text: str) -> str:
    return f"{word} {line}: {text}" if line else text


def key(name: str) -> str:
    """The form in which two names are the same name."""
    return " ".join(name.split()).casefold()


def clean(text: Any) -> str:
    return " ".join(str(text or "").split())


def control(text: Any) -> str | None:
    """The first control character in `text` (NUL, the C0 and C1 controls and DEL; a tab is
    only a space), as ``U+0000``, or None. Names are text: a control character would be
    stored, printed and exported as it is (a NUL cuts a name short in C programs)."""
    for c in str(text or ""):
        o = ord(c)
        if (o < 0x20 and c != "\t") or 0x7F <= o <= 0x9F:
            return f"U+{o:04X}"
    return None


def entry(obj: Mapping[str, Any], line: int = 0) -> Entry:
    """One entry from a mapping (a form, a command, a CSV row); `EntriesError` if bad."""
    problems: list[tuple[int, str, str]] = []
    name, team, city = (clean(obj.get(k)) for k in ("name", "team", "city"))
    if not name:
        problems.append((line, "нет имени", "the name is empty"))
    if not team:
        problems.append((line, "нет команды", "the team is empty"))
    for label_ru, label_en, value, raw in (("имя", "name", name, obj.get("name")),
                                           ("команда", "team", team, obj.get("team")),
                                           ("город", "city", city, obj.get("city"))):
        if (bad := control(raw)) is not None:
            problems.append((line, f"{label_ru}: управляющий символ {bad} (уберите его)",
                             f"the {label_en} has a control character {bad} (remove it)"))
        if len(value) > MAX_FIELD:
            problems.append((line, f"{label_ru} длиннее {MAX_FIELD} знаков",
                             f"the {label_en} is longer than {MAX_FIELD} characters"))
    rating = _rating(obj.get("rating"), line, problems)
    if problems:
        raise EntriesError(problems)
    return Entry(name, team, city, rating)


def _rating(raw: Any, line: int, problems: list[tuple[int, str, str]]) -> float | None:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if isinstance(raw, bool):
        raw = "?"
    try:
        value = float(str(raw).strip().replace(",", ".")) if isinstance(raw, str) else float(raw)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value) or not 0 <= value <= 1_000_000:
        problems.append((line, f"рейтинг «{clean(raw)}» — не число от 0 до 1000000",
                         f"the rating '{clean(raw)}' is not a number from 0 to 1000000"))
        return None
    return value


def check(entries: Iterable[Entry], lines: Sequence[int] | None = None) -> list[Entry]:
    """Refuse duplicate names (naming both lines) and fields too large to run."""
    out = list(entries)
    where = list(lines) if lines is not None else list(range(1, len(out) + 1))
    problems: list[tuple[int, str, str]] = []
    seen: dict[str, int] = {}
    for e, line in zip(out, where, strict=True):
        first = seen.setdefault(key(e.name), line)
        if first != line:
            problems.append((line, f"«{e.name}» уже есть в строке {first}"
                                   " (различите игроков, например, городом)",
                             f"'{e.name}' is already on line {first}"
                             " (tell the players apart, e.g. by their city)"))
    if len(out) > MAX_ENTRIES:
        problems.append((0, f"заявок {len(out)}, больше {MAX_ENTRIES}",
                         f"{len(out)} entries, more than {MAX_ENTRIES}"))
    if problems:
        raise EntriesError(problems)
    return out


def _too_large() -> EntriesError:
    return EntriesError([(0, f"файл больше {MAX_CSV_BYTES // 1000} КБ",
                          f"the file is larger than {MAX_CSV_BYTES // 1000} kB")])


def decode(data: bytes) -> str:
    """UTF-8 (with or without BOM), else Windows-1251, the two encodings spreadsheets on
    Russian machines save in. A file over `MAX_CSV_BYTES` is refused first, so a reader
    that read one byte past the limit gets the size message, not an encoding one."""
    if len(data) > MAX_CSV_BYTES:
        raise _too_large()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            return data.decode("cp1251")
        except UnicodeDecodeError as e:
            raise EntriesError([(0, "файл не в UTF-8 и не в Windows-1251",
                                 "the file is neither UTF-8 nor Windows-1251")]) from e


def parse_csv(data: bytes | str) -> list[Entry]:
    """Entries from a CSV file; the header names the columns (any order; city and rating
    may be absent). `EntriesError` lists every bad line."""
    if isinstance(data, bytes):
        data = decode(data)
    elif len(data) > MAX_CSV_BYTES // 4 and len(data.encode("utf-8")) > MAX_CSV_BYTES:
        raise _too_large()  # the same limit for a file sent as text (a command, a script)
    text = data.lstrip("\ufeff")
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise EntriesError([(1, f"нет строки заголовка; принимаются: {ACCEPTED_RU}",
                             f"there is no header row; accepted: {ACCEPTED_EN}")])
    delimiter = ";" if lines[0].count(";") > lines[0].count(",") else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        rows = list(reader)
    except csv.Error as e:
        raise EntriesError([(reader.line_num, f"CSV не читается ({e})",
                             f"the CSV cannot be read ({e})")]) from e
    columns = _header(rows[0])
    problems: list[tuple[int, str, str]] = []
    found: list[Entry] = []
    at: list[int] = []
    line = 1
    for row in rows[1:]:
        line += 1
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(columns):
            problems.append((line, f"{len(row)} полей, а в заголовке {len(columns)}",
                             f"{len(row)} fields, but the header has {len(columns)}"))
            continue
        obj = {col: sheets.restore(row[i]) if i < len(row) else ""
               for i, col in enumerate(columns)}
        try:
            found.append(entry(obj, line))
            at.append(line)
        except EntriesError as e:
            problems.extend(e.problems)
    try:
        check(found, at)
    except EntriesError as e:
        problems.extend(e.problems)
    if problems:
        raise EntriesError(sorted(problems, key=lambda p: p[0]))
    if not found:
        raise EntriesError([(0, "в файле нет ни одной заявки", "the file has no entries")])
    return found


# Each column's Russian header, for messages in Russian (the file may use either language).
RU_NAME = {col: aliases[1] for col, aliases in COLUMNS.items()}
ACCEPTED_RU = ", ".join(RU_NAME[c] for c in COLUMNS) + " (или " + ", ".join(COLUMNS) + ")"
ACCEPTED_EN = ", ".join(COLUMNS) + " (or " + ", ".join(RU_NAME[c] for c in COLUMNS) + ")"


def _header(row: Sequence[str]) -> list[str]:
    """The columns the header names. One message per distinct problem: every unknown header
    in one list (a row of empty cells is one «empty header», not one per cell), naming the
    headers that are accepted."""
    names = {alias: col for col, aliases in COLUMNS.items() for alias in aliases}
    columns: list[str] = []
    unknown: list[str] = []
    twice: list[str] = []
    for cell in row:
        col = names.get(clean(cell).casefold())
        shown = "".join(c for c in clean(cell) if c.isprintable())
        if col is None:
            if shown not in unknown:
                unknown.append(shown)
        elif col in columns and col not in twice:
            twice.append(col)
        columns.append(col or "")
    problems: list[tuple[int, str, str]] = []
    if unknown:
        ru = ", ".join(f"«{u}»" if u else "пустой" for u in unknown)
        en = ", ".join(f"'{u}'" if u else "an empty one" for u in unknown)
        many = len(unknown) > 1
        what = "неизвестные заголовки столбцов" if many else "неизвестный заголовок столбца"
        problems.append((1, f"{what} {ru}; принимаются: {ACCEPTED_RU}",
                         f"unknown column {'headers' if many else 'header'} {en}; accepted:"
                         f" {ACCEPTED_EN}"))
    for col in twice:
        problems.append((1, f"столбец «{RU_NAME[col]}» дважды",
                         f"the column '{col}' appears twice"))
    missing = [col for col in REQUIRED if col not in columns]
    if missing:
        problems.append((1, "нет столбца " + " и ".join(f"«{RU_NAME[c]}»" for c in missing),
                         "the column " + " and ".join(f"'{c}'" for c in missing)
                         + (" is" if len(missing) == 1 else " are") + " missing"))
    if problems:
        raise EntriesError(problems)
    return columns


def to_csv(entries: Iterable[Entry]) -> str:
    """Entries back as CSV (UTF-8), the same columns the import reads."""
    out = io.StringIO()
    w = sheets.writer(out)  # text made inert (parse_csv restores it)
    w.writerow(["name", "team", "city", "rating"])
    for e in entries:
        rating = "" if e.rating is None else f"{e.rating:g}"
        w.writerow([e.name, e.team, e.city, rating])
    return out.getvalue()
