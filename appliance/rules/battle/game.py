"""The sport battle («бой»): 2–3 players, themes of five questions read in order, buttons.

A pure engine (see `appliance.rules.protocol`). The course of one question:

1. ``announce`` — the host announces the value; the buttons are armed at once (sport has no
   false start: a press stamped before the announcement is recorded as early and ignored).
2. Presses go to the arbiter; the earliest tick wins after the settle window (``timeout``).
   A press before ``reading_done`` flags "read only the short question word" («только
   ключевое слово: "Кто?", "Когда?"») for the host.
3. ``reading_done`` starts the 7 s window; when it passes with no press the question closes.
4. ``reset_signal`` — the host resets the first signal; the others fix their order by pressing
   (the queue, «очередь»). ``judge`` right closes the question; wrong sends the next queued
   player in (a queued player *must* answer: no answer is judged wrong). When the queue is
   empty after a wrong answer, the players who have not answered may press again: the buttons
   are re-armed and, if the reading was finished, a fresh window starts from the judgement.
   (The regulation does not say this; it is the box's decision, like the TV re-arm.)
5. ``next`` — the next question; after the last theme the leader wins, or the players tied
   for first alone play extra themes, one at a time, until after some theme one leads. Each
   extra theme is played by the players tied for first when it starts (the box's decision).

Scores are derived, never stored: the sum of the judged values plus the host's corrections
(``set_score`` records the difference), so "a score is the sum of its judged values" holds by
construction. ``undo`` restores the state before the last decision (a judgement, a question
closed by the window, a rejudgement or a score correction): each such event keeps the state
before it in `Battle.history`.

A deadline that has passed when any command arrives is handled first (as if the loop's
``timeout`` had come in time), so a script without ``timeout`` lines plays the same game.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from appliance.packages.model import Package
from appliance.rules import arbiter
from appliance.rules.protocol import Action, Command, Event, Refused

NAME = "battle"

MS = arbiter.MS
SECOND = 1000 * MS
VALUES = (10, 20, 30, 40, 50)
QUESTIONS_PER_THEME = len(VALUES)
MIN_PLAYERS, MAX_PLAYERS = 2, 3
SCORE_LIMIT = 1_000_000
# Themes per battle by stage (regulation 3.4); used to cut a package's themes to the stage.
STAGE_THEMES = {"qualification": 4, "1/27": 4, "1/9": 4, "1/3": 6, "final": 12}

# Phases of a battle.
READY = "ready"  # the next question waits for the host to announce its value
OPEN = "open"  # buttons armed, nobody has won the right to answer yet
ANSWERING = "answering"  # a player answers; the host judges
CLOSED = "closed"  # the question is over; `next` goes on
TIE = "tie"  # players tied for first and no extra theme left: the host adds one
FINISHED = "finished"  # exactly one leader after the last theme

RIGHT, WRONG = "right", "wrong"
VERDICTS = (RIGHT, WRONG)


# -- the state -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class QuestionSpec:
    text: str = ""
    answer: str = ""
    comment: str = ""

    def to_json(self) -> dict[str, str]:
        return {"text": self.text, "answer": self.answer, "comment": self.comment}


@dataclass(frozen=True, slots=True)
class ThemeSpec:
    """A theme of five questions; red themes («красные») are worth double."""

    name: str
    red: bool = False
    questions: tuple[QuestionSpec, ...] = ()
    extra: bool = False  # an extra theme («дополнительная тема») of a tie-break

    def value(self, number: int) -> int:
        return VALUES[number] * (2 if self.red else 1)

    def question(self, number: int) -> QuestionSpec:
        return self.questions[number] if number < len(self.questions) else QuestionSpec()

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "red": self.red, "extra": self.extra,
                "questions": [q.to_json() for q in self.questions]}


@dataclass(frozen=True, slots=True)
class BattleSettings:
    window_ns: int = 7 * SECOND  # nobody pressed this long after the reading: question over
    settle_ns: int = 5 * MS
    bounce_ns: int = 30 * MS
    stage: str = ""

    @property
    def arbiter(self) -> arbiter.Settings:
        return arbiter.Settings(self.settle_ns, self.bounce_ns, false_start_ns=None)

    def to_json(self) -> dict[str, Any]:
        return {"window_s": self.window_ns / SECOND, "settle_ms": self.settle_ns / MS,
                "bounce_ms": self.bounce_ns / MS, "stage": self.stage}


@dataclass(frozen=True, slots=True)
class Judgement:
    """One verdict on one answer («зачёт / незачёт»); `question` indexes `Battle.played`."""

    question: int
    player: int
    verdict: str
    value: int
    t_ns: int

    @property
    def points(self) -> int:
        return self.value if self.verdict == RIGHT else -self.value


@dataclass(frozen=True, slots=True)
class Played:
    """A question that has been announced: its race and what happened."""

    theme: int
    number: int  # 0..4 within the theme
    value: int
    race: arbiter.Race
    announced_ns: int
    reading_done_ns: int | None = None
    window_from_ns: int | None = None  # the 7 s window runs from here (None: not running)
    short_word: bool = False  # someone pressed before the reading was finished
    mandatory: bool = False  # the answerer came from the queue and must answer
    closed: str | None = None  # why it ended: "right", "all_wrong", "no_press"
    reactions: tuple[tuple[int, int], ...] = ()  # (player, ns from the lamp) per settled press
    lamps: tuple[int, ...] = ()  # ticks the buttons were armed: the announcement, re-arms

    def race_report(self) -> list[dict[str, Any]]:
        """The race in tick order, each press with its offset from the lamp it answered (the
        latest arming at or before it; the announcement for an early press). Built here
        because the arbiter's own report measures from its current lamp only, which a
        re-arm moves and closing the question clears."""
        out = []
        for p in sorted(self.race.presses, key=self.race.order_key):
            lamp = max((t for t in self.lamps if t <= p.t_ns), default=self.announced_ns)
            out.append(p.to_json(lamp))
        return out


@dataclass(frozen=True, slots=True)
class Battle:
    players: tuple[str, ...]
    themes: tuple[ThemeSpec, ...]  # main themes, then extra themes as they start
    extra_pool: tuple[ThemeSpec, ...] = ()  # extra themes not yet played
    settings: BattleSettings = field(default_factory=BattleSettings)
    theme: int = 0  # the current (or next) question's theme ...
    number: int = 0  # ... and its place in the theme
    phase: str = READY
    contenders: tuple[int, ...] = ()  # seats playing the current theme
    tiebreaks: tuple[tuple[int, ...], ...] = ()  # who played each extra theme
    played: tuple[Played, ...] = ()
    judgements: tuple[Judgement, ...] = ()
    corrections: tuple[tuple[int, int], ...] = ()  # (player, points added by the host)
    winner: int | None = None
    history: tuple[Battle, ...] = ()  # states before each undoable decision (history=())

    @property
    def seats(self) -> int:
        return len(self.players)

    @property
    def current(self) -> Played | None:
        """The announced question being played or just closed."""
        return self.played[-1] if self.phase in (OPEN, ANSWERING, CLOSED) else None

    def score(self, player: int) -> int:
        return (sum(j.points for j in self.judgements if j.player == player)
                + sum(d for p, d in self.corrections if p == player))

    def scores(self) -> list[int]:
        return [self.score(p) for p in range(self.seats)]

    def leaders(self) -> list[int]:
        s = self.scores()
        top = max(s)
        return [p for p in range(self.seats) if s[p] == top]


# -- setup -----------------------------------------------------------------------------------
def _bad_setup(ru: str, en: str) -> Refused:
    return Refused(f"Неверные настройки боя: {ru}", f"Bad battle setup: {en}", "bad_setup")


def _number(v: Any, what: str, minimum: float = 0) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or math.isnan(v) or v < minimum:
        raise _bad_setup(f"{what} должно быть числом не меньше {minimum}",
                         f"{what} must be a number of at least {minimum}")
    return float(v)


def _settings(d: Any) -> BattleSettings:
    if not isinstance(d, Mapping):
        raise _bad_setup("settings — не словарь", "settings is not an object")
    return BattleSettings(
        window_ns=round(_number(d.get("window_s", 7), "window_s", 0.001) * SECOND),
        settle_ns=round(_number(d.get("settle_ms", 5), "settle_ms") * MS),
        bounce_ns=round(_number(d.get("bounce_ms", 30), "bounce_ms") * MS),
        stage=str(d.get("stage", "")),
    )


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
    if not isinstance(t, Mapping) or not isinstance(t.get("name"), str) or not t["name"].strip():
        raise _bad_setup("у темы должно быть название", "a theme needs a name")
    qs = t.get("questions") or []
    if not isinstance(qs, list | tuple) or len(qs) not in (0, QUESTIONS_PER_THEME):
        raise _bad_setup(f"в теме «{t['name']}» должно быть 5 вопросов",
                         f"theme {t['name']!r} must have 5 questions")
    return ThemeSpec(t["name"].strip(), bool(t.get("red", False)),
                     tuple(_question_spec(q) for q in qs), extra)


def _themes(items: Any, extra: bool) -> tuple[ThemeSpec, ...]:
    if not isinstance(items, list | tuple):
        raise _bad_setup("темы должны быть списком", "themes must be a list")
    return tuple(theme_spec(t, extra) for t in items)


def load_package(value: Any) -> Package:
    """A built-in package by name (``"demo-sport"``) or a package object in the project's JSON
    form (`appliance.packages.jsonform`), so a library package can travel in the setup."""
    from appliance.packages import jsonform

    if isinstance(value, Mapping):
        try:
            return jsonform.from_dict(dict(value))
        except (KeyError, TypeError, ValueError) as e:
            raise _bad_setup(f"пакет не читается ({e})", f"the package cannot be read ({e})") from e
    if not isinstance(value, str) or not value or any(c in value for c in ("/", "\\", "..")):
        raise _bad_setup("неверное имя пакета", "bad package name")
    try:
        return jsonform.demo(value)
    except (OSError, ValueError) as e:
        raise _bad_setup(f"пакет «{value}» не загружен ({e})",
                         f"package {value!r} could not be loaded ({e})") from e


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
    if stage in STAGE_THEMES:
        main = main[:STAGE_THEMES[stage]]
    return tuple(main), tuple(extra)


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
    return Battle(players=tuple(p.strip() for p in players), themes=main, extra_pool=extra,
                  settings=settings, contenders=tuple(range(len(players))))


# -- refusals and argument checks ------------------------------------------------------------
def _refuse(ru: str, en: str, code: str = "refused") -> Refused:
    return Refused(ru, en, code)


def _out_of_phase(cmd: Command, state: Battle) -> Refused:
    return _refuse(f"Команда «{cmd.type}» сейчас невозможна (фаза: {PHASE_RU[state.phase]}).",
                   f"Command {cmd.type!r} is not possible now (phase: {state.phase}).",
                   "out_of_phase")


def _seat(state: Battle, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < state.seats:
        raise _refuse(f"Нет игрока с номером {v!r}.", f"There is no player {v!r}.",
                      "unknown_player")
    return v


def _verdict(v: Any) -> str:
    if v not in VERDICTS:
        raise _refuse("Решение должно быть «right» (верно) или «wrong» (неверно).",
                      "The verdict must be 'right' or 'wrong'.", "bad_verdict")
    return v


def _whole(v: Any, what_ru: str, what_en: str) -> int:
    ok = (not isinstance(v, bool) and isinstance(v, int | float)
          and math.isfinite(v) and float(v).is_integer())
    if not ok or not -SCORE_LIMIT <= v <= SCORE_LIMIT:
        raise _refuse(f"{what_ru} должно быть целым числом от {-SCORE_LIMIT} до {SCORE_LIMIT}.",
                      f"{what_en} must be a whole number from {-SCORE_LIMIT} to {SCORE_LIMIT}.",
                      "not_a_number")
    return int(v)


# -- deadlines -------------------------------------------------------------------------------
def next_deadline(state: Battle) -> int | None:
    """The settle window of a pending press, else the end of the 7 s window."""
    q = state.current
    if state.phase != OPEN or q is None:
        return None
    settle = q.race.settle_deadline()
    if settle is not None:
        return settle
    if q.window_from_ns is not None:
        return q.window_from_ns + state.settings.window_ns
    return None


def _on_deadline(state: Battle, tick: int) -> list[Event]:
    q = state.current
    assert q is not None
    if q.race.settle_deadline() is not None:
        settled = arbiter.settle(q.race, tick)
        lamp = q.race.lamp_ns or 0
        return [Event("answerer", tick, {
            "player": settled.winner, "press_ns": settled.winner_ns,
            "reaction_ms": ((settled.winner_ns or lamp) - lamp) / MS})]
    return [Event("question_closed", tick, {"reason": "no_press"})]


def _catch_up(state: Battle, now: int) -> tuple[Battle, list[Event]]:
    """Events of every deadline that has passed by `now`, in order."""
    events: list[Event] = []
    while (d := next_deadline(state)) is not None and d <= now:
        for e in _on_deadline(state, d):
            state = evolve(state, e)
            events.append(e)
    return state, events


# -- decide ----------------------------------------------------------------------------------
def decide(state: Battle, cmd: Command) -> list[Event]:
    handler = _HANDLERS.get(cmd.type)
    if handler is None:
        raise _refuse(f"Неизвестная команда «{cmd.type}».", f"Unknown command {cmd.type!r}.",
                      "unknown_command")
    state, due = _catch_up(state, cmd.arrival_ns)
    return due + handler(state, cmd)


def _timeout(state: Battle, cmd: Command) -> list[Event]:
    # Everything due was handled by the catch-up; a stale or early wake-up does nothing.
    return []


def _announce(state: Battle, cmd: Command) -> list[Event]:
    if state.phase != READY:
        raise _out_of_phase(cmd, state)
    theme = state.themes[state.theme]
    return [Event("announced", cmd.t_ns, {
        "theme": state.theme, "number": state.number, "value": theme.value(state.number),
        "players": list(state.contenders)})]


def _reading_done(state: Battle, cmd: Command) -> list[Event]:
    q = state.current
    if state.phase not in (OPEN, ANSWERING) or q is None or q.reading_done_ns is not None:
        raise _out_of_phase(cmd, state)
    return [Event("reading_done", cmd.t_ns)]


def _press(state: Battle, cmd: Command) -> list[Event]:
    player = _seat(state, cmd.args.get("player"))
    q = state.current
    if state.phase not in (OPEN, ANSWERING) or q is None:
        raise _refuse("Кнопки сейчас выключены.", "The buttons are off now.", "buttons_off")
    if player not in q.race.playing:
        raise _refuse(f"{state.players[player]} не играет эту тему.",
                      f"{state.players[player]} does not play this theme.", "not_playing")
    data: dict[str, Any] = {"player": player, "by": cmd.by}
    if cmd.at_ns is not None:
        data["at_ns"] = cmd.at_ns
    events = [Event("press", cmd.t_ns, data)]
    after = arbiter.press(q.race, player, cmd.t_ns, cmd.by)
    if q.reading_done_ns is None and not q.short_word and after.candidates():
        events.append(Event("short_word", cmd.t_ns, {"player": player}))
    return events


def _answering(state: Battle, cmd: Command) -> Played:
    q = state.current
    if state.phase != ANSWERING or q is None or q.race.winner is None:
        raise _refuse("Сейчас никто не отвечает.", "Nobody is answering now.", "nobody_answers")
    return q


def _others_may_queue(q: Played) -> bool:
    r = q.race
    return bool(r.playing - r.answered - {r.winner} - {p.player for p in r.queue})


def _reset_signal(state: Battle, cmd: Command) -> list[Event]:
    q = _answering(state, cmd)
    if q.race.queue_from_ns is not None:
        raise _refuse("Сигнал уже сброшен: очередь открыта.",
                      "The signal was already reset: the queue is open.", "queue_open")
    if not _others_may_queue(q):
        raise _refuse("Некому вставать в очередь.", "Nobody is left to queue.", "queue_empty")
    return [Event("signal_reset", cmd.t_ns)]


def _judge(state: Battle, cmd: Command) -> list[Event]:
    q = _answering(state, cmd)
    verdict = _verdict(cmd.args.get("verdict"))
    player = q.race.winner
    events = [Event("judged", cmd.t_ns, {
        "ref": len(state.judgements), "player": player, "verdict": verdict, "value": q.value,
        "points": q.value if verdict == RIGHT else -q.value})]
    if verdict == RIGHT:
        return events + [Event("question_closed", cmd.t_ns, {"reason": RIGHT})]
    race, head = arbiter.next_in_queue(q.race)
    if head is not None:
        return events + [Event("queue_next", cmd.t_ns, {"player": head})]
    left = sorted(race.playing - race.answered)
    if left:
        return events + [Event("rearmed", cmd.t_ns, {"players": left})]
    return events + [Event("question_closed", cmd.t_ns, {"reason": "all_wrong"})]


def _at_last_question(state: Battle) -> bool:
    return (state.number == QUESTIONS_PER_THEME - 1
            and state.theme == len(state.themes) - 1)


def _end_of_battle(state: Battle, t_ns: int) -> list[Event]:
    leaders = state.leaders()
    if len(leaders) == 1:
        return [Event("battle_finished", t_ns, {"winner": leaders[0],
                                                "scores": state.scores()})]
    if state.extra_pool:
        return [Event("extra_theme", t_ns, {"theme": state.extra_pool[0].to_json(),
                                            "players": leaders, "from_pool": True})]
    return [Event("tie", t_ns, {"players": leaders, "scores": state.scores()})]


def _next(state: Battle, cmd: Command) -> list[Event]:
    if state.phase == CLOSED and not _at_last_question(state):
        if state.number < QUESTIONS_PER_THEME - 1:
            return [Event("advanced", cmd.t_ns, {"theme": state.theme,
                                                 "number": state.number + 1})]
        return [Event("advanced", cmd.t_ns, {"theme": state.theme + 1, "number": 0})]
    tied = len(state.leaders()) > 1
    if state.phase == CLOSED or (state.phase == FINISHED and tied) or (
            state.phase == TIE and not tied):
        return _end_of_battle(state, cmd.t_ns)
    if state.phase == TIE:
        raise _refuse("Ничья: добавьте дополнительную тему.",
                      "A tie: add an extra theme.", "tie_needs_theme")
    raise _out_of_phase(cmd, state)


def _add_theme(state: Battle, cmd: Command) -> list[Event]:
    if state.phase != TIE or len(state.leaders()) < 2:
        raise _out_of_phase(cmd, state)
    name = cmd.args.get("name", "")
    if not isinstance(name, str):
        raise _refuse("Название темы должно быть текстом.", "A theme name must be text.",
                      "bad_theme")
    # A blank name gets a default one, so every text the form allows is accepted.
    name = name.strip() or f"Дополнительная тема {len(state.tiebreaks) + 1}"
    red = cmd.args.get("red", False)
    if not isinstance(red, bool):
        raise _refuse("«red» должно быть true или false.", "'red' must be true or false.",
                      "bad_theme")
    try:
        theme = theme_spec({"name": name, "red": red,
                            "questions": cmd.args.get("questions") or []}, extra=True)
    except Refused as e:
        raise _refuse(e.message_ru, e.message_en, "bad_theme") from e
    return [Event("extra_theme", cmd.t_ns, {"theme": theme.to_json(), "players": state.leaders(),
                                            "from_pool": False})]


def _undo(state: Battle, cmd: Command) -> list[Event]:
    if not state.history:
        raise _refuse("Нечего отменять.", "Nothing to undo.", "nothing_to_undo")
    return [Event("undone", cmd.t_ns, {"phase": state.history[-1].phase})]


def _rejudge(state: Battle, cmd: Command) -> list[Event]:
    ref = cmd.args.get("ref")
    if isinstance(ref, bool) or not isinstance(ref, int) or not 0 <= ref < len(state.judgements):
        raise _refuse(f"Нет решения с номером {ref!r}.", f"There is no judgement {ref!r}.",
                      "unknown_judgement")
    verdict = _verdict(cmd.args.get("verdict"))
    j = state.judgements[ref]
    return [Event("rejudged", cmd.t_ns, {"ref": ref, "player": j.player, "verdict": verdict,
                                         "was": j.verdict})]


def _set_score(state: Battle, cmd: Command) -> list[Event]:
    player = _seat(state, cmd.args.get("player"))
    score = _whole(cmd.args.get("score"), "Счёт", "The score")
    return [Event("score_set", cmd.t_ns, {"player": player, "score": score,
                                          "delta": score - state.score(player)})]


_HANDLERS = {
    "timeout": _timeout,
    "announce": _announce,
    "reading_done": _reading_done,
    "press": _press,
    "reset_signal": _reset_signal,
    "judge": _judge,
    "next": _next,
    "add_theme": _add_theme,
    "undo": _undo,
    "rejudge": _rejudge,
    "set_score": _set_score,
}


# -- evolve ----------------------------------------------------------------------------------
def _with_current(state: Battle, **changes: Any) -> Battle:
    return replace(state, played=state.played[:-1] + (replace(state.played[-1], **changes),))


def _remember(state: Battle) -> Battle:
    """Keep the state before an undoable decision."""
    return replace(state, history=state.history + (replace(state, history=()),))


def evolve(state: Battle, event: Event) -> Battle:
    fn = _EVOLVE.get(event.type)
    return state if fn is None else fn(state, event)


def _ev_announced(state: Battle, e: Event) -> Battle:
    race = arbiter.new_race(state.seats, state.settings.arbiter, frozenset(e.data["players"]),
                            rotation=len(state.played) % state.seats)
    played = Played(theme=e.data["theme"], number=e.data["number"], value=e.data["value"],
                    race=arbiter.lamp_on(race, e.t_ns), announced_ns=e.t_ns, lamps=(e.t_ns,))
    return replace(state, played=state.played + (played,), phase=OPEN)


def _ev_reading_done(state: Battle, e: Event) -> Battle:
    return _with_current(state, reading_done_ns=e.t_ns,
                         window_from_ns=e.t_ns if state.phase == OPEN else None)


def _ev_press(state: Battle, e: Event) -> Battle:
    q = state.played[-1]
    return _with_current(state, race=arbiter.press(q.race, e.data["player"], e.t_ns,
                                                   e.data.get("by", "button")))


def _ev_short_word(state: Battle, e: Event) -> Battle:
    return _with_current(state, short_word=True)


def _ev_answerer(state: Battle, e: Event) -> Battle:
    q = state.played[-1]
    lamp = q.race.lamp_ns or 0
    reactions = tuple((p.player, p.t_ns - lamp) for p in q.race.candidates())
    return replace(_with_current(state, race=arbiter.settle(q.race, e.t_ns), mandatory=False,
                                 reactions=q.reactions + reactions), phase=ANSWERING)


def _ev_signal_reset(state: Battle, e: Event) -> Battle:
    return _with_current(state, race=arbiter.open_queue(state.played[-1].race, e.t_ns))


def _ev_judged(state: Battle, e: Event) -> Battle:
    state = _remember(state)
    j = Judgement(len(state.played) - 1, e.data["player"], e.data["verdict"], e.data["value"],
                  e.t_ns)
    return replace(state, judgements=state.judgements + (j,))


def _ev_queue_next(state: Battle, e: Event) -> Battle:
    race, _ = arbiter.next_in_queue(state.played[-1].race)
    return _with_current(state, race=race, mandatory=True)


def _ev_rearmed(state: Battle, e: Event) -> Battle:
    q = state.played[-1]
    return replace(_with_current(
        state, race=arbiter.rearm(q.race, e.t_ns), mandatory=False, lamps=q.lamps + (e.t_ns,),
        window_from_ns=e.t_ns if q.reading_done_ns is not None else None), phase=OPEN)


def _ev_question_closed(state: Battle, e: Event) -> Battle:
    if e.data["reason"] == "no_press":
        state = _remember(state)
    q = state.played[-1]
    return replace(_with_current(state, race=arbiter.close(q.race), closed=e.data["reason"],
                                 window_from_ns=None, mandatory=False), phase=CLOSED)


def _ev_advanced(state: Battle, e: Event) -> Battle:
    return replace(state, theme=e.data["theme"], number=e.data["number"], phase=READY)


def _ev_extra_theme(state: Battle, e: Event) -> Battle:
    theme = theme_spec(e.data["theme"], extra=True)
    pool = state.extra_pool[1:] if e.data.get("from_pool") else state.extra_pool
    players = tuple(e.data["players"])
    return replace(state, themes=state.themes + (theme,), extra_pool=pool,
                   theme=len(state.themes), number=0, phase=READY, contenders=players,
                   tiebreaks=state.tiebreaks + (players,), winner=None)


def _ev_tie(state: Battle, e: Event) -> Battle:
    return replace(state, phase=TIE, contenders=tuple(e.data["players"]), winner=None)


def _ev_battle_finished(state: Battle, e: Event) -> Battle:
    return replace(state, phase=FINISHED, winner=e.data["winner"])


def _ev_undone(state: Battle, e: Event) -> Battle:
    restored = replace(state.history[-1], history=state.history[:-1])
    q = restored.current
    if (restored.phase == OPEN and q is not None and q.window_from_ns is not None
            and q.window_from_ns + restored.settings.window_ns <= e.t_ns):
        # The window had run out (that is what closed the question): give a fresh one.
        restored = _with_current(restored, window_from_ns=e.t_ns)
    return restored


def _ev_rejudged(state: Battle, e: Event) -> Battle:
    state = _remember(state)
    ref = e.data["ref"]
    js = list(state.judgements)
    js[ref] = replace(js[ref], verdict=e.data["verdict"])
    return replace(state, judgements=tuple(js))


def _ev_score_set(state: Battle, e: Event) -> Battle:
    state = _remember(state)
    return replace(state, corrections=state.corrections + ((e.data["player"], e.data["delta"]),))


_EVOLVE = {
    "announced": _ev_announced,
    "reading_done": _ev_reading_done,
    "press": _ev_press,
    "short_word": _ev_short_word,
    "answerer": _ev_answerer,
    "signal_reset": _ev_signal_reset,
    "judged": _ev_judged,
    "queue_next": _ev_queue_next,
    "rearmed": _ev_rearmed,
    "question_closed": _ev_question_closed,
    "advanced": _ev_advanced,
    "extra_theme": _ev_extra_theme,
    "tie": _ev_tie,
    "battle_finished": _ev_battle_finished,
    "undone": _ev_undone,
    "rejudged": _ev_rejudged,
    "score_set": _ev_score_set,
}


# -- legal actions ---------------------------------------------------------------------------
def _choice(value: Any, ru: str, en: str) -> dict[str, Any]:
    return {"value": value, "ru": ru, "en": en}


def _player_choices(state: Battle, seats: Any) -> list[dict[str, Any]]:
    return [_choice(p, state.players[p], state.players[p]) for p in sorted(seats)]


def _verdict_choices() -> list[dict[str, Any]]:
    return [_choice(RIGHT, "Верно", "Right"), _choice(WRONG, "Неверно", "Wrong")]


def _judgement_label(state: Battle, ref: int) -> tuple[str, str]:
    j = state.judgements[ref]
    q = state.played[j.question]
    theme = state.themes[q.theme].name
    who = state.players[j.player]
    ru = f"{ref + 1}. {theme}, {q.value}: {who} — {'верно' if j.verdict == RIGHT else 'неверно'}"
    en = f"{ref + 1}. {theme}, {q.value}: {who} — {j.verdict}"
    return ru, en


def legal_actions(state: Battle) -> list[Action]:
    """Exactly the commands `decide` accepts now (the loop's `timeout` is not listed: it is
    always accepted and does nothing unless a deadline has passed)."""
    acts: list[Action] = []
    q = state.current
    tied = len(state.leaders()) > 1
    if state.phase == READY:
        theme = state.themes[state.theme]
        v = theme.value(state.number)
        acts.append(Action("announce", f"Объявить: «{theme.name}», {v}",
                           f"Announce: {theme.name!r}, {v}", key="a"))
    if state.phase in (OPEN, ANSWERING) and q is not None:
        if q.reading_done_ns is None:
            acts.append(Action("reading_done", "Вопрос дочитан", "Reading finished", key="r"))
        acts.append(Action("press", "Кнопка", "Button", by="button",
                           args={"player": _player_choices(state, q.race.playing)}))
    if state.phase == ANSWERING and q is not None:
        acts.append(Action("judge", "Оценить ответ", "Judge the answer", key="j",
                           args={"verdict": _verdict_choices()}))
        if q.race.queue_from_ns is None and _others_may_queue(q):
            acts.append(Action("reset_signal", "Сбросить сигнал (очередь)",
                               "Reset the signal (queue)", key="s"))
    if (state.phase == CLOSED or (state.phase == FINISHED and tied)
            or (state.phase == TIE and not tied)):
        acts.append(Action("next", "Дальше", "Next", key="n"))
    if state.phase == TIE and tied:
        acts.append(Action("add_theme", "Добавить дополнительную тему", "Add an extra theme",
                           args={"name": {"type": "text"},
                                 "red": [_choice(False, "Синяя", "Blue"),
                                         _choice(True, "Красная", "Red")]}))
    if state.history:
        acts.append(Action("undo", "Отменить последнее решение", "Undo the last decision",
                           key="u", confirm=True))
    if state.judgements:
        refs = [_choice(i, *_judgement_label(state, i)) for i in range(len(state.judgements))]
        acts.append(Action("rejudge", "Изменить решение", "Change a judgement", confirm=True,
                           args={"ref": refs, "verdict": _verdict_choices()}))
    acts.append(Action("set_score", "Исправить счёт", "Correct a score", confirm=True,
                       args={"player": _player_choices(state, range(state.seats)),
                             "score": {"type": "int", "min": -SCORE_LIMIT,
                                       "max": SCORE_LIMIT, "step": 1}}))
    return acts


# -- views -----------------------------------------------------------------------------------
PHASE_RU = {READY: "объявление стоимости", OPEN: "кнопки открыты", ANSWERING: "ответ",
            CLOSED: "вопрос закрыт", TIE: "ничья: нужна дополнительная тема",
            FINISHED: "бой окончен"}


def _theme_json(state: Battle, index: int) -> dict[str, Any]:
    t = state.themes[index]
    return {"index": index, "name": t.name, "red": t.red, "extra": t.extra,
            "values": [t.value(n) for n in range(QUESTIONS_PER_THEME)]}


def _places(state: Battle) -> list[int]:
    """1-based places: players who went further in the tie-break rank higher, then by score;
    equal keys share a place (competition ranking)."""
    level = [sum(p in group for group in state.tiebreaks) for p in range(state.seats)]
    scores = state.scores()
    keys = [(level[p], scores[p]) for p in range(state.seats)]
    return [1 + sum(k > keys[p] for k in keys) for p in range(state.seats)]


def _common(state: Battle) -> dict[str, Any]:
    q = state.current
    scores = state.scores()
    places = _places(state)
    out: dict[str, Any] = {
        "rules": NAME,
        "phase": state.phase,
        "phase_ru": PHASE_RU[state.phase],
        "players": [{"seat": p, "name": n, "score": scores[p], "place": places[p],
                     "playing": p in state.contenders} for p, n in enumerate(state.players)],
        "theme": _theme_json(state, state.theme),
        "number": state.number,
        "value": state.themes[state.theme].value(state.number),
        "themes": [{"name": t.name, "red": t.red, "extra": t.extra} for t in state.themes],
        "question_index": len(state.played) - 1 if q is not None else None,
        "answering": None, "queue": [], "mandatory": False, "lamp": False,
        "reading_done": None, "short_word": False, "window_ends_ns": None,
        "deadline_ns": next_deadline(state),
        "winner": state.winner,
        "tied": state.leaders() if state.phase == TIE else [],
    }
    if q is not None:
        r = q.race
        out.update({
            "answering": r.winner if state.phase == ANSWERING else None,
            "queue": [p.player for p in r.queue] if state.phase == ANSWERING else [],
            "queue_open": state.phase == ANSWERING and r.queue_from_ns is not None,
            "mandatory": q.mandatory,
            "lamp": _lamp(state),
            "reading_done": q.reading_done_ns is not None,
            "short_word": q.short_word,
            "window_ends_ns": (None if q.window_from_ns is None or state.phase != OPEN
                               else q.window_from_ns + state.settings.window_ns),
            "answered": sorted(r.answered | ({r.winner} if state.phase == ANSWERING
                                             and r.winner is not None else set())),
            "closed": q.closed,
        })
    return out


def _lamp(state: Battle) -> bool:
    """Pressing does something now: the buttons are armed, or the queue is open."""
    q = state.current
    if q is None or state.phase not in (OPEN, ANSWERING):
        return False
    if state.phase == OPEN:
        return q.race.armed
    return q.race.queue_from_ns is not None and _others_may_queue(q)


def _revealed(state: Battle) -> dict[str, Any] | None:
    """The last closed question, text and answer: safe for every screen."""
    if not state.played or state.played[-1].closed is None:
        return None
    q = state.played[-1]
    spec = state.themes[q.theme].question(q.number)
    return {"theme": state.themes[q.theme].name, "value": q.value, **spec.to_json()}


def view(state: Battle, role: str) -> dict[str, Any]:
    if role == "hardware":
        q = state.current
        live = state.phase == ANSWERING and q is not None
        return {"lamp": _lamp(state),
                "answering": q.race.winner if live and q is not None else None,
                "queue": [p.player for p in q.race.queue] if live and q is not None else [],
                "false_starts": 0}
    out = _common(state)
    q = state.current
    race = q.race_report() if q is not None else []
    if role == "host":
        spec = state.themes[state.theme].question(state.number)
        out.update({
            "question": spec.to_json(),  # the host reads it, answer included
            "race": race,
            "judgements": [{"ref": i, "label_ru": _judgement_label(state, i)[0],
                            "player": j.player, "verdict": j.verdict, "points": j.points}
                           for i, j in enumerate(state.judgements)],
            "corrections": [{"player": p, "points": d} for p, d in state.corrections],
            "can_undo": bool(state.history),
            "settings": state.settings.to_json(),
            "actions": [a.to_json() for a in legal_actions(state)],
        })
        return out
    if role == "board":
        out.update({"race": race, "revealed": _revealed(state)})
        return out
    if role.startswith("player:"):
        try:
            seat = int(role.split(":", 1)[1])
        except ValueError:
            seat = -1
        if not 0 <= seat < state.seats:
            raise _refuse(f"Нет места {role!r}.", f"No such seat: {role!r}.", "unknown_role")
        out.update({
            "seat": seat, "name": state.players[seat], "score": state.score(seat),
            "may_press": out["lamp"] and q is not None and seat in q.race.playing
            and seat not in q.race.answered and seat != (
                q.race.winner if state.phase == ANSWERING else None),
            "revealed": _revealed(state),
        })
        return out
    raise _refuse(f"Неизвестная роль {role!r}.", f"Unknown role {role!r}.", "unknown_role")


# -- summary ---------------------------------------------------------------------------------
def summary(state: Battle) -> dict[str, Any]:
    """The battle's result: places, scores, every question's outcome, per-player figures."""
    scores = state.scores()
    places = _places(state)
    by_question: dict[int, list[tuple[int, Judgement]]] = {}
    for ref, j in enumerate(state.judgements):
        by_question.setdefault(j.question, []).append((ref, j))
    questions = []
    for i, q in enumerate(state.played):
        t = state.themes[q.theme]
        js = by_question.get(i, [])
        questions.append({
            "theme": t.name, "theme_index": q.theme, "red": t.red, "extra": t.extra,
            "number": q.number + 1, "value": q.value, "players": sorted(q.race.playing),
            "answered": [j.player for _, j in js],
            "judgements": [{"ref": ref, "player": j.player, "verdict": j.verdict,
                            "points": j.points} for ref, j in js],
            "short_word": q.short_word, "closed": q.closed, "race": q.race_report(),
        })
    stats = []
    for p, name in enumerate(state.players):
        mine = [j for j in state.judgements if j.player == p]
        reactions = [ns / MS for q in state.played for pl, ns in q.reactions if pl == p]
        stats.append({
            "seat": p, "name": name,
            "right": sum(j.verdict == RIGHT for j in mine),
            "wrong": sum(j.verdict == WRONG for j in mine),
            "points": sum(j.points for j in mine),
            "corrections": sum(d for pl, d in state.corrections if pl == p),
            "presses": len(reactions),
            "reaction_ms": {"mean": sum(reactions) / len(reactions) if reactions else None,
                            "best": min(reactions) if reactions else None},
        })
    return {
        "rules": NAME,
        "phase": state.phase,
        "finished": state.phase == FINISHED,
        "winner": state.winner,
        "players": list(state.players),
        "scores": scores,
        "places": places,
        "standings": sorted(({"seat": p, "name": n, "score": scores[p], "place": places[p]}
                             for p, n in enumerate(state.players)),
                            key=lambda s: (s["place"], s["seat"])),
        "questions": questions,
        "statistics": stats,
        "corrections": [{"player": p, "points": d} for p, d in state.corrections],
        "settings": state.settings.to_json(),
    }


__all__ = ["NAME", "Battle", "decide", "evolve", "initial", "legal_actions", "load_package",
           "next_deadline", "package_themes", "summary", "view"]
