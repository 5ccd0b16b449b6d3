"""The project's own JSON form of a package: a plain, lossless dump of the model.

Used for the demo package, for exports, and as the stable on-disk form in the library.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from appliance.packages.model import (
    Cat,
    CatPrice,
    Item,
    ItemType,
    Kind,
    Package,
    Question,
    Round,
    Theme,
)

FORMAT = "svoyak-package"
VERSION = 1


class PackageFormatError(ValueError):
    """The JSON is not a package in our form; the message says where."""


def to_dict(package: Package) -> dict[str, Any]:
    data = asdict(package)
    return {"format": FORMAT, "version": VERSION, **data}


def dumps(package: Package) -> str:
    return json.dumps(to_dict(package), ensure_ascii=False, indent=1)


def _item(d: dict[str, Any]) -> Item:
    return Item(
        type=ItemType(d["type"]),
        value=str(d["value"]),
        spoken=bool(d.get("spoken", False)),
        duration_s=d.get("duration_s"),
    )


def _question(d: dict[str, Any], where: str) -> Question:
    try:
        price = int(d["price"])
    except (KeyError, TypeError, ValueError) as e:
        raise PackageFormatError(f"{where}: price must be a whole number") from e
    cat = None
    if d.get("cat"):
        c = d["cat"]
        p = c.get("price") or {}
        cat = Cat(
            theme=str(c.get("theme", "")),
            price=CatPrice(
                values=[int(v) for v in p.get("values", [])],
                low=int(p.get("low", 0)),
                high=int(p.get("high", 0)),
                step=int(p.get("step", 0)),
            ),
            may_keep=bool(c.get("may_keep", False)),
            public_price=bool(c.get("public_price", False)),
            no_question=bool(c.get("no_question", False)),
        )
    try:
        kind = Kind(d.get("kind", "normal"))
    except ValueError as e:
        raise PackageFormatError(f"{where}: unknown kind {d.get('kind')!r}") from e
    return Question(
        price=price,
        kind=kind,
        content=[_item(i) for i in d.get("content", [])],
        answer_content=[_item(i) for i in d.get("answer_content", [])],
        right=[str(a) for a in d.get("right", [])],
        wrong=[str(a) for a in d.get("wrong", [])],
        comment=str(d.get("comment", "")),
        sources=[str(s) for s in d.get("sources", [])],
        cat=cat,
        factor=int(d.get("factor", 2)),
    )


def from_dict(data: dict[str, Any]) -> Package:
    if data.get("format") != FORMAT:
        raise PackageFormatError(f"not a Svoyak package (format is {data.get('format')!r})")
    rounds = []
    for ri, r in enumerate(data.get("rounds", [])):
        themes = []
        for ti, t in enumerate(r.get("themes", [])):
            qs = [
                _question(q, f"round {ri + 1}, theme {ti + 1}, question {qi + 1}")
                for qi, q in enumerate(t.get("questions", []))
            ]
            themes.append(Theme(name=str(t["name"]), questions=qs, comment=t.get("comment", "")))
        rounds.append(Round(name=str(r["name"]), themes=themes, final=bool(r.get("final"))))
    return Package(
        name=str(data["name"]),
        rounds=rounds,
        author=str(data.get("author", "")),
        comment=str(data.get("comment", "")),
        language=str(data.get("language", "ru")),
        warnings=[str(w) for w in data.get("warnings", [])],
    )


def loads(text: str) -> Package:
    try:
        return from_dict(json.loads(text))
    except json.JSONDecodeError as e:
        raise PackageFormatError(f"invalid JSON at line {e.lineno}, column {e.colno}") from e


def load(path: str | Path) -> Package:
    path = Path(path)
    try:
        return loads(path.read_text(encoding="utf-8"))
    except PackageFormatError as e:
        raise PackageFormatError(f"{path}: {e}") from e


DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def demo(name: str = "demo-tv") -> Package:
    """The built-in demo packages: `demo-tv` (3 rounds and a final) and `demo-sport`."""
    return load(DATA_DIR / f"{name}.json")
