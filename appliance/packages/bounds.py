"""What a playable package may hold: board sizes and prices within bounds the screens and
the engines can carry. A package beyond them is refused at import with the place named,
so a theme of 10,000 questions or a price of 10^30 never reaches a game (docs/packages.md).

The bounds are far beyond any real package (SIGame's own packages have up to 10 themes a
round and 10 questions a theme; prices up to a few thousand) and low enough that a host's
frame stays small and a score stays an exact integer in every screen's JavaScript."""

from __future__ import annotations

from appliance.packages.archive import PackageError
from appliance.packages.model import Package

MAX_ROUNDS = 30
MAX_THEMES = 30  # per round
MAX_QUESTIONS = 30  # per theme
MAX_PRICE = 1_000_000  # |price|, a cat's values and range included
MAX_FACTOR = 10
MAX_CAT_VALUES = 100


def check(package: Package, where: str) -> None:
    """Raise PackageError (code "out_of_bounds") naming the first place beyond the bounds."""

    def refuse(ru: str, en: str) -> PackageError:
        return PackageError(f"{where}: {ru}", f"{where}: {en}", "out_of_bounds")

    if len(package.rounds) > MAX_ROUNDS:
        raise refuse(f"раундов: {len(package.rounds)}, больше {MAX_ROUNDS}",
                     f"{len(package.rounds)} rounds, more than {MAX_ROUNDS}")
    for r in package.rounds:
        if len(r.themes) > MAX_THEMES:
            raise refuse(f"в раунде «{r.name}» тем: {len(r.themes)}, больше {MAX_THEMES}",
                         f"round «{r.name}» has {len(r.themes)} themes, more than {MAX_THEMES}")
        for t in r.themes:
            ru = f"раунд «{r.name}», тема «{t.name}»"
            en = f"round «{r.name}», theme «{t.name}»"
            if len(t.questions) > MAX_QUESTIONS:
                raise refuse(f"{ru}: вопросов: {len(t.questions)}, больше {MAX_QUESTIONS}",
                             f"{en} has {len(t.questions)} questions, more than "
                             f"{MAX_QUESTIONS}")
            for q in t.questions:
                prices = [q.price]
                if q.cat is not None:
                    cp = q.cat.price
                    if len(cp.values) > MAX_CAT_VALUES:
                        raise refuse(f"{ru}: у кота в мешке вариантов цены: {len(cp.values)}, "
                                     f"больше {MAX_CAT_VALUES}",
                                     f"{en}: a cat with {len(cp.values)} values, more than "
                                     f"{MAX_CAT_VALUES}")
                    prices += [*cp.values, cp.low, cp.high, cp.step]
                for p in prices:
                    if not -MAX_PRICE <= p <= MAX_PRICE:
                        bound = f"±{MAX_PRICE:,}".replace(",", " ")
                        raise refuse(f"{ru}: цена {_short(p, 'цифр')} вне пределов {bound}",
                                     f"{en}: price {_short(p, 'digits')} is beyond {bound}")
                if not 0 <= q.factor <= MAX_FACTOR:
                    raise refuse(f"{ru}: множитель {_short(q.factor, 'цифр')} вне пределов "
                                 f"0..{MAX_FACTOR}",
                                 f"{en}: factor {_short(q.factor, 'digits')} is beyond "
                                 f"0..{MAX_FACTOR}")


def _short(n: int, digits: str) -> str:
    s = str(n)
    return s if len(s) <= 12 else f"{s[:6]}… ({digits}: {len(s)})"
