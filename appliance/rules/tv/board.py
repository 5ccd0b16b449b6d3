"""The board («табло»): a package's rounds as immutable cells with their values.

Cells are addressed by ``(round, theme, question)`` indices, all 0-based. A package's own
price wins; a price of zero or less (plain-text packages) takes the preset's value for that
round and position. Empty SIQ cells are born played.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from appliance.packages.model import Kind, Package, Question
from appliance.rules.tv.presets import Settings

CellId = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Cell:
    round: int
    theme: int
    index: int
    value: int
    kind: Kind
    question: Question = field(compare=False, repr=False)

    @property
    def id(self) -> CellId:
        return (self.round, self.theme, self.index)


@dataclass(frozen=True, slots=True)
class BoardRound:
    name: str
    themes: tuple[str, ...]
    cells: tuple[tuple[Cell, ...], ...]  # per theme, in package order

    def all_cells(self) -> list[Cell]:
        return [c for row in self.cells for c in row]


@dataclass(frozen=True, slots=True)
class Final:
    name: str
    themes: tuple[str, ...]
    questions: tuple[Question, ...] = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Board:
    rounds: tuple[BoardRound, ...]
    final: Final | None

    def cell(self, cid: CellId) -> Cell:
        r, t, q = cid
        return self.rounds[r].cells[t][q]

    def has(self, cid: CellId) -> bool:
        r, t, q = cid
        return (0 <= r < len(self.rounds) and 0 <= t < len(self.rounds[r].cells)
                and 0 <= q < len(self.rounds[r].cells[t]))


def build(package: Package, settings: Settings) -> Board:
    board_rounds = package.board_rounds
    if settings.rounds is not None:
        board_rounds = board_rounds[: settings.rounds]
    rounds = []
    for ri, rnd in enumerate(board_rounds):
        preset = settings.values_for(ri)
        rows = []
        for ti, theme in enumerate(rnd.themes):
            row = []
            for qi, q in enumerate(theme.questions):
                value = q.price if q.price > 0 else preset[min(qi, len(preset) - 1)]
                row.append(Cell(ri, ti, qi, value, q.kind, q))
            rows.append(tuple(row))
        rounds.append(BoardRound(rnd.name, tuple(t.name for t in rnd.themes), tuple(rows)))
    final = None
    finals = package.final_rounds
    if settings.final and finals and finals[0].themes:
        f = finals[0]
        themes = [t for t in f.themes if t.questions]
        if themes:
            final = Final(f.name, tuple(t.name for t in themes),
                          tuple(t.questions[0] for t in themes))
    return Board(tuple(rounds), final)


def playable(cell: Cell) -> bool:
    return cell.kind != Kind.EMPTY


def theme_name(board: Board, cell: Cell) -> str:
    return board.rounds[cell.round].themes[cell.theme]


def cat_theme(board: Board, cell: Cell) -> str:
    """The theme a cat announces once given (the package's, else the cell's own)."""
    cat = cell.question.cat
    return cat.theme if cat and cat.theme else theme_name(board, cell)


def cat_price_choices(cell: Cell) -> int | list[int] | dict[str, Any]:
    """A cat's value: a fixed int, a list to pick from, or an int spec for a free range."""
    cat = cell.question.cat
    if cat is None:
        return cell.value
    p = cat.price
    if p.values:
        values = sorted(set(p.values))
        return values[0] if len(values) == 1 else values
    if p.high <= 0 or p.high < p.low:
        return cell.value
    if p.low == p.high:
        return p.low
    if p.step > 0:
        return list(range(p.low, p.high + 1, p.step))
    return {"type": "int", "min": p.low, "max": p.high, "step": 1}


def cat_price_allowed(cell: Cell, value: int) -> bool:
    choices = cat_price_choices(cell)
    if isinstance(choices, int):
        return value == choices
    if isinstance(choices, list):
        return value in choices
    return int(choices["min"]) <= value <= int(choices["max"])


def answer_of(q: Question | None) -> dict[str, Any]:
    """What the host reveals when a question closes."""
    if q is None:
        return {"right": [], "comment": "", "media": []}
    return {"right": list(q.right), "wrong": list(q.wrong), "comment": q.comment,
            "media": [i.value for i in q.answer_content if i.is_media],
            "text": "\n".join(i.value for i in q.answer_content if not i.is_media)}
