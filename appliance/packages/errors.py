"""Errors a host reads: every refusal of a package or the library says what is wrong in
Russian and in English (Russian first, as `appliance.rules.protocol.Refused` does), with a
stable code screens and tests can rely on. The screens choose the message in their
language; `str()` of the error is the English one (logs, tracebacks).

Messages name the file and the place (round, theme, question, line) in the reader's words
and never carry a Python repr or an exception's own English text: that stays in
`__cause__` for the log."""

from __future__ import annotations

from dataclasses import dataclass


class BilingualError(Exception):
    """An error with a Russian and an English message and a stable code."""

    def __init__(self, message_ru: str, message_en: str, code: str):
        super().__init__(message_en)
        self.message_ru = message_ru
        self.message_en = message_en
        self.code = code

    def message(self, lang: str) -> str:
        """The message in `lang` ("ru" or "en"); Russian for any other."""
        return self.message_en if lang == "en" else self.message_ru

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "ru": self.message_ru, "en": self.message_en}

    def __reduce__(self) -> tuple[type[BilingualError], tuple[str, str, str]]:
        # Exceptions pickle through their args, which hold the English message only.
        return type(self), (self.message_ru, self.message_en, self.code)


@dataclass(frozen=True)
class Place:
    """Where in a package something is, in both languages ("round 2 «…», theme 3")."""

    ru: str
    en: str

    def then(self, ru: str, en: str) -> Place:
        """A place inside this one."""
        return Place(f"{self.ru}, {ru}", f"{self.en}, {en}")

    def plus(self, suffix: str) -> Place:
        """The same place with a suffix both languages share (a name, a price)."""
        return Place(self.ru + suffix, self.en + suffix)

    def __str__(self) -> str:
        return self.en


# A warning (the package imports, something in it is left out or read otherwise) is kept in
# the package as one string holding both languages, Russian on the first line: the stored
# package format keeps its list of strings, and packages imported before warnings were
# bilingual (one English line) still read.
def notice(ru: str, en: str) -> str:
    """A warning in both languages, as the package keeps it."""
    return f"{ru}\n{en}"


def notice_in(text: str, lang: str | None) -> str:
    """A kept warning in `lang` ("ru" or "en"); both lines when `lang` is None. A one-line
    warning (an older import) is the same in every language."""
    ru, sep, en = text.partition("\n")
    if not sep or lang is None:
        return text.replace("\n", " / ")
    return en if lang == "en" else ru

