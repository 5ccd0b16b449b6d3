"""The question package model: Package → Round → Theme → Question.

Plain dataclasses with no I/O, so importers (SIQ, text, JSON) and engines share one shape.
Russian: пакет → раунд → тема → вопрос.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Kind(StrEnum):
    """What kind of play a question gets on the board."""

    NORMAL = "normal"
    CAT = "cat"  # «Кот в мешке»: given to an opponent, theme and value revealed after
    AUCTION = "auction"  # «Аукцион»: bidding decides who answers, for the bid
    NO_RISK = "no_risk"  # «Вопрос без риска»: the opener answers, wrong costs nothing
    FOR_ALL = "for_all"  # everyone answers in writing
    STAKE_ALL = "stake_all"  # everyone bets and answers in writing
    EMPTY = "empty"  # an empty board cell (SIQ price -1)


class ItemType(StrEnum):
    TEXT = "text"
    IMAGE = "image"
    AUDIO = "audio"
    VIDEO = "video"
    HTML = "html"


MEDIA_TYPES = frozenset({ItemType.IMAGE, ItemType.AUDIO, ItemType.VIDEO, ItemType.HTML})


@dataclass
class Item:
    """One piece of question content.

    For text, `value` is the text; for media, the media reference (the file name in the
    package until imported, the content hash after). `spoken` marks text the host reads
    aloud without it being shown on the board (SIQ `say`/`replic` placement).
    """

    type: ItemType
    value: str
    spoken: bool = False
    duration_s: float | None = None

    @property
    def is_media(self) -> bool:
        return self.type in MEDIA_TYPES


@dataclass
class CatPrice:
    """The value of a cat: a list of values to pick from (one value means fixed), or a
    range `low..high` by `step` (step 0: any whole number in the range)."""

    values: list[int] = field(default_factory=list)
    low: int = 0
    high: int = 0
    step: int = 0

    def allows(self, value: int) -> bool:
        if self.values:
            return value in self.values
        if not self.low <= value <= self.high:
            return False
        return self.step <= 0 or (value - self.low) % self.step == 0

    @property
    def fixed(self) -> int | None:
        if len(self.values) == 1:
            return self.values[0]
        if not self.values and self.low == self.high:
            return self.low
        return None


@dataclass
class Cat:
    """Cat-in-the-bag details: the theme announced once given, its price, and options."""

    theme: str
    price: CatPrice
    may_keep: bool = False  # the opener may give it to themself
    public_price: bool = False  # value announced before it is given (secretPublicPrice)
    no_question: bool = False  # no question: the receiver just gets the value


@dataclass
class Question:
    price: int
    kind: Kind = Kind.NORMAL
    content: list[Item] = field(default_factory=list)
    answer_content: list[Item] = field(default_factory=list)
    right: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    comment: str = ""
    sources: list[str] = field(default_factory=list)
    cat: Cat | None = None
    factor: int = 2  # no_risk: the right answer scores price × factor

    @property
    def text(self) -> str:
        """All text of the question, shown and spoken, joined for a host to read."""
        return "\n".join(i.value for i in self.content if i.type == ItemType.TEXT)

    @property
    def shown_text(self) -> str:
        """Text that may appear on the board: all but what the host only says aloud."""
        return "\n".join(
            i.value for i in self.content if i.type == ItemType.TEXT and not i.spoken
        )

    @property
    def media(self) -> list[str]:
        return [i.value for i in self.content + self.answer_content if i.is_media]


@dataclass
class Theme:
    name: str
    questions: list[Question] = field(default_factory=list)
    comment: str = ""


@dataclass
class Round:
    name: str
    themes: list[Theme] = field(default_factory=list)
    final: bool = False

    @property
    def prices(self) -> list[int]:
        return sorted(
            {q.price for t in self.themes for q in t.questions if q.kind != Kind.EMPTY}
        )


@dataclass
class Package:
    name: str
    rounds: list[Round] = field(default_factory=list)
    author: str = ""
    comment: str = ""
    language: str = "ru"
    warnings: list[str] = field(default_factory=list)

    @property
    def board_rounds(self) -> list[Round]:
        return [r for r in self.rounds if not r.final]

    @property
    def final_rounds(self) -> list[Round]:
        return [r for r in self.rounds if r.final]

    def all_themes(self) -> list[Theme]:
        return [t for r in self.rounds for t in r.themes]
