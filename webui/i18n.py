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


@cache
def catalogue(lang: str) -> dict[str, str]:
    lang = lang if lang in LANGUAGES else DEFAULT
    data: dict[str, Any] = json.loads((_DIR / f"{lang}.json").read_text("utf-8"))
    if lang != DEFAULT:
        data = {**catalogue(DEFAULT), **data}
    return data


def translate(key: str, lang: str, **fmt: Any) -> str:
    text = catalogue(lang).get(key, key)
    return text.format(**fmt) if fmt else text


def pick(lang: str | None) -> str:
    return lang if lang in LANGUAGES else DEFAULT
