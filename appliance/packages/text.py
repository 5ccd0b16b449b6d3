"""Plain-text packages, as sport tournaments circulate them and as a club editor types them.

The format (documented with examples in docs/packages.md) is line based and forgiving:

    Пакет: Кубок клуба, отбор          <- optional header lines (package, author, values)
    Тема 1. ПОЭТЫ                       <- a theme heading
    10. Text of the first question…     <- numbered questions: values (10, 20…) or 1, 2…
    20. …
    Ответы:                             <- an answers block, numbered like the questions…
    10. Pushkin. Зачёт: Alexander Pushkin. Комментарий: …
    20. …

…or `Ответ: …` (with `Зачёт:`, `Незачёт:`, `Комментарий:`, `Источник:`) right after each
question. `Раунд …` and `Финал` headings split the themes into rounds. Errors name the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from appliance.packages.archive import Limits, PackageError, read_document
from appliance.packages.loaded import Loaded
from appliance.packages.model import Item, ItemType, Package, Question, Round, Theme

DEFAULT_VALUES = [10, 20, 30, 40, 50]  # sport preset for themes numbered 1, 2, 3…

_HEADER = re.compile(
    r"^(?P<key>пакет|package|название|title|автор|авторы|author|authors|стоимости|values)"
    r"\s*:\s*(?P<rest>.*)$",
    re.IGNORECASE,
)
_ROUND = re.compile(
    r"^(?:раунд|round)\s*(?P<num>\d+)?\s*(?:[.:)\-–—]\s*(?P<name>.{0,80}))?$", re.IGNORECASE
)
_FINAL = re.compile(r"^(?:финал|final)\s*(?:[.:!\-–—]\s*(?P<name>.{0,80}))?$", re.IGNORECASE)
_THEME = re.compile(
    r"^(?:тема|theme)\s*(?:(?P<num>\d+)\s*[.:)\-–—]?|[.:\-–—])\s*(?P<name>.*)$",
    re.IGNORECASE,
)
_ANSWERS = re.compile(
    r"^(?:ответы|answers)(?:\s+(?:к\s+теме|for\s+theme|темы|theme)?\s*(?P<num>\d+))?"
    r"\s*[:.]?\s*$",
    re.IGNORECASE,
)
_NUMBERED = re.compile(r"^(?P<num>\d{1,5})\s*[.)]\s*(?P<text>.*)$")
_KEY = (
    r"ответ|answer|зач[её]т|accept|незач[её]т|reject|комментарий|comment"
    r"|источники|источник|sources|source|авторы|автор|authors|author"
)
_KEYWORD = re.compile(rf"^(?P<key>{_KEY})\s*:\s*(?P<rest>.*)$", re.IGNORECASE)
_INLINE = re.compile(rf"(?:(?<=\s)|^)(?P<key>{_KEY})\s*:", re.IGNORECASE)

_FIELDS = {
    "ответ": "answer", "answer": "answer",
    "зачёт": "accept", "зачет": "accept", "accept": "accept",
    "незачёт": "reject", "незачет": "reject", "reject": "reject",
    "комментарий": "comment", "comment": "comment",
    "источник": "sources", "источники": "sources", "source": "sources", "sources": "sources",
    # a question's author (sport packages credit each question) goes into its comment
    "автор": "author", "авторы": "author", "author": "author", "authors": "author",
}


@dataclass
class _Answer:
    line: int
    number: int | None = None
    answer: list[str] = field(default_factory=list)
    accept: list[str] = field(default_factory=list)
    reject: list[str] = field(default_factory=list)
    comment: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


@dataclass
class _Question:
    number: int
    line: int
    text: list[str] = field(default_factory=list)
    answer: _Answer | None = None


@dataclass
class _Theme:
    number: int | None
    name: str
    line: int
    values: list[int]
    questions: list[_Question] = field(default_factory=list)
    comment: list[str] = field(default_factory=list)
    answers: list[_Answer] = field(default_factory=list)  # from an answers block


@dataclass
class _Round:
    name: str
    final: bool
    line: int
    themes: list[_Theme] = field(default_factory=list)


def _split_list(text: str) -> list[str]:
    return [p.strip().rstrip(".").strip() for p in text.split(";") if p.strip(" .")]


class _Parser:
    def __init__(self, where: str):
        self.where = where
        self.name = ""
        self.author = ""
        self.comment: list[str] = []
        self.values = list(DEFAULT_VALUES)
        self.rounds: list[_Round] = []
        self.theme: _Theme | None = None
        self.question: _Question | None = None
        self.answer: _Answer | None = None
        self.in_answers = False
        self.target: list[str] | None = None  # where continuation lines go

    def fail(self, line: int, ru: str, en: str) -> PackageError:
        return PackageError(f"{self.where}: строка {line}: {ru}",
                            f"{self.where}: line {line}: {en}", "bad_text")

    # -- lines ---------------------------------------------------------------------------

    def feed(self, n: int, raw: str) -> None:
        line = raw.strip()
        if not line or line.startswith("#"):
            return
        if self.theme is None and self._header(n, line):
            return
        if m := _FINAL.match(line):
            self._new_round(n, (m["name"] or "").strip() or "Финал", final=True)
        elif m := _ROUND.match(line):
            number = m["num"] or str(len(self.rounds) + 1)
            self._new_round(n, (m["name"] or "").strip() or f"Раунд {number}", final=False)
        elif m := _THEME.match(line):
            self._new_theme(n, m)
        elif m := _ANSWERS.match(line):
            self._answers_block(n, m["num"])
        elif m := _NUMBERED.match(line):
            self._numbered(n, int(m["num"]), m["text"].strip())
        elif m := _KEYWORD.match(line):
            self._keyword(n, m["key"].lower(), m["rest"].strip())
        elif self.target is not None:
            self._append(self.target, line)
        elif self.theme is not None:
            self.theme.comment.append(line)
            self.target = self.theme.comment
        elif not self.name:
            self.name = line
        else:
            self.comment.append(line)

    def _header(self, n: int, line: str) -> bool:
        m = _HEADER.match(line)
        if not m:
            return False
        key, rest = m["key"].lower(), m["rest"].strip()
        if key in ("пакет", "package", "название", "title"):
            self.name = rest
        elif key.startswith(("автор", "author")):
            self.author = rest
        else:
            self.values = self._parse_values(n, rest)
        self.target = None
        return True

    def _parse_values(self, n: int, text: str) -> list[int]:
        parts = [p for p in re.split(r"[\s,;]+", text) if p]
        try:
            values = [int(p) for p in parts]
        except ValueError:
            shown = text[:60]
            raise self.fail(n, f"цены должны быть целыми числами, а не «{shown}»",
                            f"values must be whole numbers, got «{shown}»") from None
        if not values:
            raise self.fail(n, "цены не указаны", "no values given")
        return values

    def _new_round(self, n: int, name: str, final: bool) -> None:
        self._close_theme()
        self.rounds.append(_Round(name=name, final=final, line=n))
        self.theme = None
        self.target = None

    def _new_theme(self, n: int, m: re.Match[str]) -> None:
        number = int(m["num"]) if m["num"] else None
        name = m["name"].strip()
        if self.in_answers and self.rounds:
            # "Тема 2" inside an answers block switches to that theme's answers.
            for t in self.rounds[-1].themes:
                if (number is not None and t.number == number) or (name and t.name == name):
                    if t is not self.theme:
                        self._close_theme()
                        self.theme = t
                        self.in_answers = True
                    self.target = None
                    return
        self._close_theme()
        if not self.rounds:
            self.rounds.append(_Round(name="Раунд 1", final=False, line=n))
        theme = _Theme(number=number, name=name or f"Тема {number or ''}".strip(), line=n,
                       values=list(self.values))
        self.rounds[-1].themes.append(theme)
        self.theme = theme
        self.target = None

    def _answers_block(self, n: int, num: str | None) -> None:
        if self.theme is None:
            raise self.fail(n, "блок ответов раньше заголовка темы",
                            "an answers block before any theme heading")
        if num and self.rounds:
            wanted = int(num)
            found = next((t for t in self.rounds[-1].themes if t.number == wanted), None)
            if found is None:
                raise self.fail(n, f"ответы к теме {wanted}, но темы {wanted} нет",
                                f"answers for theme {wanted}, but there is no theme {wanted}")
            self.theme = found
        self.in_answers = True
        self.question = None
        self.answer = None
        self.target = None

    def _numbered(self, n: int, number: int, text: str) -> None:
        if self.theme is None:
            raise self.fail(n, f"вопрос {number} раньше заголовка темы (нужна строка вида "
                               "«Тема 1. НАЗВАНИЕ»)",
                            f"question {number} before any theme heading "
                            "(expected a line like «Тема 1. НАЗВАНИЕ»)")
        if self.in_answers:
            answer = _Answer(line=n, number=number)
            self._fill(answer, text)
            self.theme.answers.append(answer)
            self.answer = answer
            self.target = answer.answer
            return
        for q in self.theme.questions:
            if q.number == number:
                raise self.fail(n, f"вопрос {number} дважды в теме «{self.theme.name}» "
                                   f"(первый раз в строке {q.line})",
                                f"question {number} appears twice in theme «{self.theme.name}» "
                                f"(first at line {q.line})")
        q = _Question(number=number, line=n)
        if text:
            q.text.append(text)
        self.theme.questions.append(q)
        self.question = q
        self.answer = None
        self.target = q.text

    def _keyword(self, n: int, key: str, rest: str) -> None:
        name = _FIELDS[key]
        if name == "answer" and not self.in_answers:
            if self.question is None:
                raise self.fail(n, "ответ без вопроса перед ним",
                                "an answer without a question before it")
            if self.question.answer is not None:
                raise self.fail(n, f"у вопроса {self.question.number} второй ответ "
                                   f"(первый в строке {self.question.answer.line})",
                                f"question {self.question.number} has a second answer "
                                f"(first at line {self.question.answer.line})")
            self.question.answer = _Answer(line=n)
            self.answer = self.question.answer
            self._fill(self.answer, rest)
            self.target = self.answer.answer
            return
        if name == "author":
            name, rest = "comment", f"{key.capitalize()}: {rest}"
        if self.answer is None:
            if self.question is not None and name == "comment":
                # A comment right after a question, before its answer.
                self.question.answer = self.answer = _Answer(line=n)
            else:
                raise self.fail(n, f"«{key}:» без ответа перед ним",
                                f"«{key}:» without an answer before it")
        target: list[str] = getattr(self.answer, name)
        self._fill_field(target, name, rest)
        self.target = target

    # -- helpers -------------------------------------------------------------------------

    def _fill(self, answer: _Answer, text: str) -> None:
        """An answer line may carry `Зачёт:`, `Комментарий:`… inline."""
        pieces = _INLINE.split(text)
        head, rest = pieces[0], pieces[1:]
        if head.strip():
            answer.answer.append(head.strip())
        for key, value in zip(rest[::2], rest[1::2], strict=False):
            name, value = _FIELDS[key.lower()], value.strip()
            if name == "author":
                name, value = "comment", f"{key.capitalize()}: {value}"
            self._fill_field(getattr(answer, name), name, value)

    @staticmethod
    def _fill_field(target: list[str], name: str, text: str) -> None:
        if not text:
            return
        if name in ("accept", "reject"):
            target.extend(_split_list(text))
        else:
            target.append(text)

    @staticmethod
    def _append(target: list[str], line: str) -> None:
        target.append(line)

    def _close_theme(self) -> None:
        self.in_answers = False
        self.question = None
        self.answer = None

    # -- building ------------------------------------------------------------------------

    def build(self, last_line: int) -> Package:
        if not self.rounds:
            raise self.fail(max(last_line, 1), "темы не найдены (нужна строка вида «Тема 1. "
                                               "НАЗВАНИЕ», за ней вопросы с номерами)",
                            "no themes found (expected a line like «Тема 1. НАЗВАНИЕ» "
                            "followed by numbered questions)")
        rounds = []
        for r in self.rounds:
            if not r.themes:
                raise self.fail(r.line, f"в раунде «{r.name}» нет тем",
                                f"round «{r.name}» has no themes")
            rounds.append(Round(name=r.name, final=r.final,
                                themes=[self._theme(t, r.final) for t in r.themes]))
        return Package(name=self.name, rounds=rounds, author=self.author,
                       comment="\n".join(self.comment))

    def _theme(self, t: _Theme, final: bool) -> Theme:
        if not t.questions:
            raise self.fail(t.line, f"в теме «{t.name}» нет вопросов",
                            f"theme «{t.name}» has no questions")
        self._attach_answers(t)
        numbers = [q.number for q in t.questions]
        ordinal = numbers == list(range(1, len(numbers) + 1))
        questions = []
        for i, q in enumerate(t.questions):
            text = " ".join(q.text).strip()
            if not text:
                raise self.fail(q.line, f"у вопроса {q.number} нет текста",
                                f"question {q.number} has no text")
            a = q.answer
            if a is None or not a.answer:
                raise self.fail(q.line, f"у вопроса {q.number} темы «{t.name}» нет ответа",
                                f"question {q.number} of theme «{t.name}» has no answer")
            main = " ".join(a.answer).strip()
            if main.endswith(".") and not main.endswith(".."):
                main = main[:-1].rstrip()
            right = [main] + [x for x in a.accept if x != main]
            questions.append(Question(
                price=0 if final else (self._value(t, i) if ordinal else q.number),
                content=[Item(ItemType.TEXT, text)],
                right=right,
                wrong=list(a.reject),
                comment=" ".join(a.comment).strip(),
                sources=list(a.sources),
            ))
        return Theme(name=t.name, questions=questions, comment=" ".join(t.comment).strip())

    @staticmethod
    def _value(t: _Theme, i: int) -> int:
        values = t.values
        if i < len(values):
            return values[i]
        step = values[-1] - values[-2] if len(values) > 1 else values[-1]
        return values[-1] + step * (i - len(values) + 1)

    def _attach_answers(self, t: _Theme) -> None:
        if not t.answers:
            return
        by_number = {q.number: q for q in t.questions}
        numbers = [a.number for a in t.answers]
        by_position = numbers == list(range(1, len(numbers) + 1)) and any(
            n not in by_number for n in numbers
        )
        for i, a in enumerate(t.answers):
            if by_position:
                if i >= len(t.questions):
                    raise self.fail(a.line, f"ответ {a.number}: в теме «{t.name}» вопросов "
                                            f"только {len(t.questions)}",
                                    f"answer {a.number}: theme «{t.name}» has only "
                                    f"{len(t.questions)} questions")
                q = t.questions[i]
            else:
                found = by_number.get(a.number)  # type: ignore[arg-type]
                if found is None:
                    raise self.fail(a.line, f"ответ {a.number} не подходит ни к одному "
                                            f"вопросу темы «{t.name}»",
                                    f"answer {a.number} matches no question of theme "
                                    f"«{t.name}»")
                q = found
            if q.answer is not None:
                raise self.fail(a.line, f"у вопроса {q.number} темы «{t.name}» уже есть ответ "
                                        f"(строка {q.answer.line})",
                                f"question {q.number} of theme «{t.name}» already has "
                                f"an answer (line {q.answer.line})")
            q.answer = a


def decode(data: bytes, where: str) -> str:
    """UTF-8 (with or without BOM) only: a wrong encoding is reported, not guessed."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise PackageError(
            f"{where}: строка {line}: не текст в UTF-8 (байт 0x{data[e.start]:02x}): "
            "сохраните файл в UTF-8",
            f"{where}: line {line}: not UTF-8 text (byte 0x{data[e.start]:02x}): "
            "save the file as UTF-8", "not_utf8") from e


def parse(text: str, where: str = "package.txt") -> Package:
    """Parse a plain-text package; PackageError names the line of the problem."""
    p = _Parser(where)
    lines = text.splitlines()
    for n, raw in enumerate(lines, start=1):
        p.feed(n, raw)
    package = p.build(len(lines))
    if not package.name:
        package.name = Path(where).stem
    return package


def load(path: str | Path, limits: Limits | None = None) -> Loaded:
    path = Path(path)
    limits = limits or Limits()
    data = read_document(path, limits)
    if b"\x00" in data[:4096]:
        raise PackageError(f"{path.name}: двоичный файл, а не текстовый пакет",
                           f"{path.name}: a binary file, not a text package", "not_package")
    package = parse(decode(data, path.name), path.name)
    return Loaded(package=package, format="text", source=path)
