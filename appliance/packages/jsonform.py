"""The project's own JSON form of a package: a plain, lossless dump of the model.

Used for the demo package, for exports, and as the stable on-disk form in the library.
"""

from __future__ import annotations

import contextlib
import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

from appliance.packages.errors import BilingualError, Place
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


class PackageFormatError(BilingualError, ValueError):
    """The JSON is not a package in our form; the messages (Russian, English) say where and
    what. Any wrong shape (a list where an object belongs, a price that is not a whole
    number, an unknown kind) is this error, never a crash of the reader."""

    def __init__(self, message_ru: str, message_en: str, code: str = "bad_package"):
        super().__init__(message_ru, message_en, code)


def to_dict(package: Package) -> dict[str, Any]:
    data = asdict(package)
    return {"format": FORMAT, "version": VERSION, **data}


def dumps(package: Package) -> str:
    return json.dumps(to_dict(package), ensure_ascii=False, indent=1)


# -- reading, every value checked for its shape ------------------------------------------
def _bad(where: Place, ru: str, en: str) -> PackageFormatError:
    return PackageFormatError(f"{where.ru}: {ru}", f"{where.en}: {en}")


def _object(value: Any, where: Place) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(where, "нужен объект JSON", "a JSON object is needed")
    return value


def _list(d: dict[str, Any], key: str, where: Place) -> list[Any]:
    value = d.get(key, [])
    if not isinstance(value, list):
        raise _bad(where, f"«{key}» — нужен список", f"«{key}» must be a list")
    return value


def _text(d: dict[str, Any], key: str, where: Place, default: str | None = "") -> str:
    """A text field: a string (a number is read as its text, as older exports may have it).
    Missing: `default`, or an error when there is none."""
    if key not in d:
        if default is None:
            raise _bad(where, f"нет поля «{key}»", f"the «{key}» field is missing")
        return default
    value = d[key]
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise _bad(where, f"«{key}» — нужен текст", f"«{key}» must be text")


def _texts(d: dict[str, Any], key: str, where: Place) -> list[str]:
    out = []
    for i, v in enumerate(_list(d, key, where)):
        out.append(_text({key: v}, key, where.plus(f" [{i + 1}]"), None))
    return out


def _whole(value: Any, key: str, where: Place) -> int:
    """A whole number: an int, a float without a fraction or a numeric string; never a
    boolean, NaN, infinity or 3.7 quietly read as 3."""
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool):
        return value  # as it is: a float of a very long int would overflow
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    raise _bad(where, f"«{key}» — нужно целое число", f"«{key}» must be a whole number")


def _flag(d: dict[str, Any], key: str, where: Place) -> bool:
    value = d.get(key, False)
    if value is None or isinstance(value, bool | int) and value in (0, 1):
        return bool(value)
    raise _bad(where, f"«{key}» — нужно true или false", f"«{key}» must be true or false")


def _item(value: Any, where: Place) -> Item:
    d = _object(value, where)
    raw = _text(d, "type", where, None)
    try:
        type_ = ItemType(raw)
    except ValueError as e:
        raise _bad(where, f"неизвестный тип элемента «{raw}»",
                   f"unknown item type «{raw}»") from e
    duration = d.get("duration_s")
    if duration is not None and (isinstance(duration, bool)
                                 or not isinstance(duration, int | float)
                                 or not math.isfinite(duration) or duration < 0):
        raise _bad(where, "«duration_s» — нужно число секунд",
                   "«duration_s» must be a number of seconds")
    return Item(type=type_, value=_text(d, "value", where, None), spoken=_flag(d, "spoken", where),
                duration_s=duration)


def _items(d: dict[str, Any], key: str, where: Place) -> list[Item]:
    return [_item(v, where.then(f"«{key}» [{i + 1}]", f"«{key}» [{i + 1}]"))
            for i, v in enumerate(_list(d, key, where))]


def _cat(value: Any, where: Place) -> Cat:
    where = where.then("кот в мешке", "cat")
    c = _object(value, where)
    p = c.get("price") or {}
    p = _object(p, where.then("цена", "price"))
    return Cat(
        theme=_text(c, "theme", where),
        price=CatPrice(
            values=[_whole(v, "values", where) for v in _list(p, "values", where)],
            low=_whole(p.get("low", 0), "low", where),
            high=_whole(p.get("high", 0), "high", where),
            step=_whole(p.get("step", 0), "step", where),
        ),
        may_keep=_flag(c, "may_keep", where),
        public_price=_flag(c, "public_price", where),
        no_question=_flag(c, "no_question", where),
    )


def _question(value: Any, where: Place) -> Question:
    d = _object(value, where)
    if "price" not in d:
        raise _bad(where, "нет цены («price»)", "the price («price») is missing")
    price = _whole(d["price"], "price", where)
    raw_kind = _text(d, "kind", where, "normal")
    try:
        kind = Kind(raw_kind)
    except ValueError as e:
        raise _bad(where, f"неизвестный тип вопроса «{raw_kind}»",
                   f"unknown kind «{raw_kind}»") from e
    return Question(
        price=price,
        kind=kind,
        content=_items(d, "content", where),
        answer_content=_items(d, "answer_content", where),
        right=_texts(d, "right", where),
        wrong=_texts(d, "wrong", where),
        comment=_text(d, "comment", where),
        sources=_texts(d, "sources", where),
        cat=_cat(d["cat"], where) if d.get("cat") else None,
        factor=_whole(d.get("factor", 2), "factor", where),
    )


def _theme(value: Any, where: Place) -> Theme:
    t = _object(value, where)
    qs = [_question(q, where.then(f"вопрос {qi + 1}", f"question {qi + 1}"))
          for qi, q in enumerate(_list(t, "questions", where))]
    return Theme(name=_text(t, "name", where, None), questions=qs,
                 comment=_text(t, "comment", where))


def _round(value: Any, where: Place) -> Round:
    r = _object(value, where)
    themes = [_theme(t, where.then(f"тема {ti + 1}", f"theme {ti + 1}"))
              for ti, t in enumerate(_list(r, "themes", where))]
    return Round(name=_text(r, "name", where, None), themes=themes,
                 final=_flag(r, "final", where))


def from_dict(data: Any) -> Package:
    """The package of our JSON form; `PackageFormatError` for anything else, whatever its
    shape."""
    top = Place("пакет", "package")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PackageFormatError(f"это не пакет Svoyak (нужно поле «format»: «{FORMAT}»)",
                                 f"not a Svoyak package (the «format» field must be "
                                 f"«{FORMAT}»)", "not_svoyak")
    rounds = [_round(r, Place(f"раунд {ri + 1}", f"round {ri + 1}"))
              for ri, r in enumerate(_list(data, "rounds", top))]
    return Package(
        name=_text(data, "name", top, None),
        rounds=rounds,
        author=_text(data, "author", top),
        comment=_text(data, "comment", top),
        language=_text(data, "language", top, "ru"),
        warnings=_texts(data, "warnings", top),
    )


def loads(text: str) -> Package:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise PackageFormatError(f"ошибка JSON в строке {e.lineno}, столбце {e.colno}",
                                 f"invalid JSON at line {e.lineno}, column {e.colno}",
                                 "bad_json") from e
    except RecursionError as e:
        raise PackageFormatError("JSON вложен слишком глубоко", "the JSON is nested too deep",
                                 "bad_json") from e
    return from_dict(data)


def load(path: str | Path) -> Package:
    path = Path(path)
    try:
        return loads(path.read_text(encoding="utf-8"))
    except PackageFormatError as e:
        raise PackageFormatError(f"{path}: {e.message_ru}", f"{path}: {e.message_en}",
                                 e.code) from e


DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def demo(name: str = "demo-tv") -> Package:
    """The built-in demo packages: `demo-tv` (3 rounds and a final) and `demo-sport`."""
    return load(DATA_DIR / f"{name}.json")
