"""Message catalogues: every UI string lives in translations/<lang>.json.
Russian is the default; a missing key falls back to Russian, then to the key itself."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

LANGUAGES = ("ru", "en")
DEFAULT = "ru"
_DIR = Path(__file__).parent / "translations"


def catalogue(lang: str) -> dict[str, str]:
    """The catalogue of `lang` (an unknown one: Russian). Cached per language, never per
    string asked for: a language code may come from a stranger's cookie or message, and a
    cache keyed by it would keep a copy of the catalogue for each one."""
    return _catalogue(pick(lang))


@cache
def _catalogue(lang: str) -> dict[str, str]:
    data: dict[str, Any] = json.loads((_DIR / f"{lang}.json").read_text("utf-8"))
    if lang != DEFAULT:
        data = {**_catalogue(DEFAULT), **data}
    return data


def translate(key: str, lang: str, **fmt: Any) -> str:
    text = catalogue(lang).get(key, key)
    return text.format(**fmt) if fmt else text


def pick(lang: str | None) -> str:
    return lang if lang in LANGUAGES else DEFAULT
