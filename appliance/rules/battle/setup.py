"""Setting a battle up: players, themes (given, or taken from a package by stage) and
timers; a bad setup is refused with code ``bad_setup``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from appliance.packages.model import Package
from appliance.rules import kit
from appliance.rules.battle.state import (
    FINAL_STAGE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    MS,
    QUESTIONS_PER_THEME,
    RED_THEMES_FINAL,
    SECOND,
    STAGE_THEMES,
    VALUES,
    Battle,
    BattleSettings,
    QuestionSpec,
    ThemeSpec,
)
from appliance.rules.describe import CHOICE, Option, SetupSpec
from appliance.rules.protocol import Refused


def _bad_setup(ru: str, en: str) -> Refused:
    return kit.bad_setup(ru, en)


MAX_SECONDS = 3600  # no timer of a battle runs longer than an hour


def _number(v: Any, what: str, minimum: float = 0) -> float:
    number = kit.finite(v)
    if number is None or number < minimum or number > MAX_SECONDS * 1000:
        raise _bad_setup(f"{what} должно быть числом не меньше {minimum}",
                         f"{what} must be a number of at least {minimum}")
    return number


def _settings(d: Any) -> BattleSettings:
    if not isinstance(d, Mapping):
        raise _bad_setup("settings — не словарь", "settings is not an object")
    return BattleSettings(
        window_ns=round(_number(d.get("window_s", 7), "window_s", 0.001) * SECOND),
        settle_ns=round(_number(d.get("settle_ms", 5), "settle_ms") * MS),
        bounce_ns=round(_number(d.get("bounce_ms", 30), "bounce_ms") * MS),
        stage=str(d.get("stage", "")),
        themes=_count(d.get("themes"), "themes"),
        red_themes=_count(d.get("red_themes"), "red_themes"),
    )


def _count(v: Any, what: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 100:
        raise _bad_setup(f"{what} — целое число от 0 до 100", f"{what} must be a whole number"
                         " from 0 to 100")
    return v


def check_theme_counts(main: tuple[ThemeSpec, ...], settings: BattleSettings) -> None:
    """A stage's battle plays its number of themes (regulation 3.4: 4, 6 or 12) and the
    final its red ones; anything else is refused rather than played short."""
    need = settings.themes_required
    if need is not None and len(main) != need:  # a package short of the stage's themes too
        stage = settings.stage or "—"
        raise _bad_setup(f"бой стадии «{stage}» играется на {need} темах (регламент 3.4),"
                         f" а тем {len(main)}",
                         f"a battle of the stage '{stage}' is played on {need} themes"
                         f" (regulation 3.4), not {len(main)}")
    reds = settings.red_required
    marked = sum(t.red for t in main)
    if reds is not None and marked != reds:
        raise _bad_setup(f"в финале {reds} красных тем (стоимость вдвое), а отмечено {marked}",
                         f"the final has {reds} red themes (values doubled), not {marked}")


def _question_spec(q: Any) -> QuestionSpec:
    if isinstance(q, str):
        return QuestionSpec(q)
    if not isinstance(q, Mapping):
        raise _bad_setup("вопрос должен быть словарём или строкой",
                         "a question must be an object or a string")
    return QuestionSpec(str(q.get("text", "")), str(q.get("answer", "")),
                        str(q.get("comment", "")))


def theme_spec(t: Any, extra: bool = False) -> ThemeSpec:
    """A theme from its JSON form ``{"name", "red", "questions": [5 × {text, answer,
    comment}]}``; without questions the host reads them from paper."""
    name = t.get("name") if isinstance(t, (dict, Mapping)) else None  # dict: no ABC check
    if not isinstance(name, str) or not (name := name.strip()):
        raise _bad_setup("у темы должно быть название", "a theme needs a name")
    qs = t.get("questions") or ()
    if not isinstance(qs, list | tuple) or len(qs) not in (0, QUESTIONS_PER_THEME):
        raise _bad_setup(f"в теме «{t['name']}» должно быть 5 вопросов",
                         f"theme {t['name']!r} must have 5 questions")
    # Resuming a game parses its setup again: no generator for a theme read from paper.
    return ThemeSpec(name, bool(t.get("red", False)),
                     tuple(map(_question_spec, qs)) if qs else (), extra)


def _themes(items: Any, extra: bool) -> tuple[ThemeSpec, ...]:
    if not isinstance(items, list | tuple):
        raise _bad_setup("темы должны быть списком", "themes must be a list")
    return tuple(theme_spec(t, extra) for t in items)


def load_package(value: Any) -> Package:
    """A built-in package by name (``"demo-sport"``) or a package object in the project's JSON
    form (`appliance.rules.kit.load_package`)."""
    return kit.load_package(value)


def package_themes(package: Package, stage: str = "", rounds: Any = None
                   ) -> tuple[tuple[ThemeSpec, ...], tuple[ThemeSpec, ...]]:
    """A package's themes for a battle: (main, extra). Rounds named «Дополнительные…» or
    "extra…" give the extra themes, the other board rounds (or only those named in `rounds`)
    the main ones, cut to the stage's count; final rounds and themes with fewer than five
    questions are skipped. A theme is red when its name or comment says so («красная»,
    "red") or its prices go above 50."""
    main: list[ThemeSpec] = []
    extra: list[ThemeSpec] = []
    for rnd in package.rounds:
        if rnd.final:
            continue
        is_extra = any(w in rnd.name.lower() for w in ("дополнительн", "extra"))
        if not is_extra and rounds is not None and rnd.name not in rounds:
            continue
        for t in rnd.themes:
            if len(t.questions) < QUESTIONS_PER_THEME:
                continue
            words = f"{t.name} {t.comment}".lower()
            prices = [q.price for q in t.questions]
            red = "красн" in words or "red" in words.split() or max(prices) > VALUES[-1]
            qs = tuple(
                QuestionSpec(q.text, "; ".join(q.right) or "\n".join(
                    i.value for i in q.answer_content if i.type == "text"), q.comment)
                for q in t.questions[:QUESTIONS_PER_THEME])
            (extra if is_extra else main).append(ThemeSpec(t.name, red, qs, is_extra))
    if stage == FINAL_STAGE:
        main = final_themes(main, STAGE_THEMES[stage], RED_THEMES_FINAL)
    elif stage in STAGE_THEMES:
        main = main[:STAGE_THEMES[stage]]
    return tuple(main), tuple(extra)


def final_themes(themes: list[ThemeSpec], count: int, red: int) -> list[ThemeSpec]:
    """The final's themes: `count − red` blue then `red` red ones — the package's red themes
    first, then more of its themes marked red (values doubled) if it has too few."""
    reds = [t for t in themes if t.red][:red]
    blues = [t for t in themes if not t.red][:count - red]
    more = [t for t in themes if not t.red and t not in blues]
    reds += [replace(t, red=True) for t in more[:red - len(reds)]]
    return blues + reds


def initial(setup: Mapping[str, Any]) -> Battle:
    """A battle from its setup: ``{"players": [names], "themes": [...] | "package": name or
    package object (optionally "rounds": [round names]), "extra_themes": [...],
    "settings": {"window_s", "settle_ms", "bounce_ms", "stage"}}``."""
    if not isinstance(setup, Mapping):
        raise _bad_setup("ожидался словарь", "expected an object")
    players = setup.get("players")
    if (not isinstance(players, list | tuple)
            or not MIN_PLAYERS <= len(players) <= MAX_PLAYERS
            or not all(isinstance(p, str) and p.strip() for p in players)):
        raise _bad_setup("в бою 2 или 3 игрока с именами",
                         "a battle has 2 or 3 named players")
    settings = _settings(setup.get("settings") or {})
    if setup.get("package") is not None:
        main, extra = package_themes(load_package(setup["package"]), settings.stage,
                                     setup.get("rounds"))
        if setup.get("extra_themes"):
            extra = _themes(setup["extra_themes"], True)
    else:
        main = _themes(setup.get("themes"), False)
        extra = _themes(setup.get("extra_themes") or [], True)
    if not main:
        raise _bad_setup("нет ни одной темы", "there are no themes")
    if settings.themes is not None or setup.get("package") is not None:
        # A count asked for (the tournament always states it), or a package cut to the
        # stage: exactly that. A theme list with only a stage label is played as given
        # (battle logs written before the counts were enforced must still resume).
        check_theme_counts(main, settings)
    return Battle(players=tuple(p.strip() for p in players), themes=main, extra_pool=extra,
                  settings=settings, contenders=tuple(range(len(players))))


SETUP_SPEC = SetupSpec(
    rules="battle", label_ru="Спортивный бой", label_en="Sport battle",
    players_min=MIN_PLAYERS, players_max=MAX_PLAYERS, demo="demo-sport", rank=1,
    options=(
        Option("stage", ("settings", "stage"), "Стадия (число тем)", "Stage (number of themes)",
               kind=CHOICE, default="",
               choices=(("", "Все темы пакета", "All themes of the package"),
                        ("qualification", "Квалификация, 1/27, 1/9 — 4 темы",
                         "Qualification, 1/27, 1/9 — 4 themes"),
                        ("1/3", "1/3 финала — 6 тем", "1/3 final — 6 themes"),
                        ("final", "Финал — 12 тем", "Final — 12 themes")),
               key="host.stage",
               choice_keys=("stage.all", "stage.qualification", "stage.third", "stage.final")),
        Option("window_s", ("settings", "window_s"),
               "Секунд на сигнал после чтения", "Seconds to signal after the reading",
               default=7, min=1, max=60, step=1, key="timer.window_s"),
    ))
"""The battle's setup as the new-game dialog and `svoyak new-game` show it."""
