"""CSV that a spreadsheet cannot execute: every CSV the box writes goes through `writer`.

The results CSV is public (anyone on the box's Wi-Fi may download it) and an organiser opens
it in a spreadsheet, which runs a cell beginning with ``=``, ``+``, ``-`` or ``@`` as a
formula (``=HYPERLINK(...)``, ``@SUM(...)``, ``-1+1``), and a leading tab or carriage return
can hide one. So a text cell that begins with any of those is made inert by a leading
apostrophe, which spreadsheets show as text (the OWASP rule for CSV injection).

Numbers stay numbers: a cell given as `int` or `float` (a score of -10, a reaction time) is
written as the number it is, since a number cannot carry a formula and an apostrophe would
turn a column of scores into text that no longer sums. Columns that hold numbers must
therefore be passed as numbers, not as strings; text that merely looks like a number
("-10" typed as a name) is text and is prefixed. `restore` undoes the prefix when the box
reads back a CSV it wrote (the entries list), so names survive the round trip.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import Any, Protocol

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
INERT = "'"


class _Writable(Protocol):
    def write(self, s: str, /) -> Any: ...


def inert(cell: Any) -> Any:
    """The cell as it may go into a CSV: text beginning like a formula gets an apostrophe;
    numbers (and anything not text) are left as they are."""
    if isinstance(cell, str) and cell.startswith(FORMULA_START):
        return INERT + cell
    return cell


def restore(cell: str) -> str:
    """A cell read back from a CSV the box wrote: the apostrophe `inert` added, removed."""
    if cell.startswith(INERT) and cell[1:].startswith(FORMULA_START):
        return cell[1:]
    return cell


class Writer:
    """`csv.writer` whose rows are made inert cell by cell."""

    def __init__(self, out: _Writable, **fmt: Any):
        self._w = csv.writer(out, **fmt)

    def writerow(self, row: Iterable[Any]) -> None:
        self._w.writerow([inert(c) for c in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(out: _Writable, lineterminator: str = "\n", **fmt: Any) -> Writer:
    return Writer(out, lineterminator=lineterminator, **fmt)
