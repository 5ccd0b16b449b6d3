"""The battle's immutable state: themes, questions played, judgements, corrections; and
the queries every part of the engine shares (scores are derived, never stored)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from appliance.rules import arbiter, kit
from appliance.rules.seq import EMPTY, Seq

NAME = "battle"

MS = arbiter.MS
SECOND = 1000 * MS
VALUES = (10, 20, 30, 40, 50)
QUESTIONS_PER_THEME = len(VALUES)
MIN_PLAYERS, MAX_PLAYERS = 2, 3
SCORE_LIMIT = kit.SCORE_LIMIT
# Themes per battle by stage (regulation 3.4); used to cut a package's themes to the stage.
STAGE_THEMES = {"qualification": 4, "1/27": 4, "1/9": 4, "1/3": 6, "final": 12}
FINAL_STAGE = "final"
RED_THEMES_FINAL = 6  # of the final's 12, the red ones (values doubled), unless set otherwise

# Phases of a battle.
READY = "ready"  # the next question waits for the host to announce its value
OPEN = "open"  # buttons armed, nobody has won the right to answer yet
ANSWERING = "answering"  # a player answers; the host judges
CLOSED = "closed"  # the question is over; `next` goes on
TIE = "tie"  # players tied for first and no extra theme left: the host adds one
FINISHED = "finished"  # exactly one leader after the last theme

RIGHT, WRONG, NO_ANSWER, VERDICTS = kit.RIGHT, kit.WRONG, kit.NO_ANSWER, kit.VERDICTS


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


@functools.lru_cache(maxsize=16)
def _arbiter_settings(settle_ns: int, bounce_ns: int) -> arbiter.Settings:
    """One (immutable) arbiter setting per battle setting, not one per question announced."""
    return arbiter.Settings(settle_ns, bounce_ns, false_start_ns=None)


@dataclass(frozen=True, slots=True)
class BattleSettings:
    window_ns: int = 7 * SECOND  # nobody pressed this long after the reading: question over
    settle_ns: int = 5 * MS
    bounce_ns: int = 30 * MS
    stage: str = ""
    themes: int | None = None  # the battle must have exactly this many main themes
    red_themes: int | None = None  # ... of which this many red (the final's)

    @property
    def arbiter(self) -> arbiter.Settings:
        return _arbiter_settings(self.settle_ns, self.bounce_ns)

    @property
    def themes_required(self) -> int | None:
        """Main themes the battle must have: as set, else its stage's (regulation 3.4)."""
        return self.themes if self.themes is not None else STAGE_THEMES.get(self.stage)

    @property
    def red_required(self) -> int | None:
        if self.red_themes is not None:
            return self.red_themes
        return RED_THEMES_FINAL if self.stage == FINAL_STAGE else None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"window_s": self.window_ns / SECOND,
                               "settle_ms": self.settle_ns / MS,
                               "bounce_ms": self.bounce_ns / MS, "stage": self.stage}
        if self.themes is not None:
            out["themes"] = self.themes
        if self.red_themes is not None:
            out["red_themes"] = self.red_themes
        return out


@dataclass(frozen=True, slots=True)
class Judgement:
    """One verdict on one answer («зачёт / незачёт»); `question` indexes `Battle.played`."""

    question: int
    player: int
    verdict: str
    value: int
    t_ns: int
    voided: bool = False  # its question was removed or replaced as flawed: counts nothing

    @property
    def points(self) -> int:
        if self.voided:
            return 0
        return self.value if self.verdict == RIGHT else -self.value


@dataclass(frozen=True)
class Played:
    """A question that has been announced: its race and what happened. Without slots, like
    `arbiter.Race`: most events copy the question being played (`records.replace`)."""

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
        late = arbiter.earlier_late(self.race)
        for p in sorted(self.race.presses, key=self.race.order_key):
            lamp = max((t for t in self.lamps if t <= p.t_ns), default=self.announced_ns)
            row = p.to_json(lamp)
            if late is not None and p is late:
                row["status"] = LATE_EARLIER  # earlier than the winner, reached the box late
            out.append(row)
        return out


# (judgements, corrections, totals) of the last `Battle.scores` computed.
_LAST_SCORES: tuple[Seq[Judgement], Seq[tuple[int, int]], tuple[int, ...]] | None = None


@dataclass(frozen=True)
class Battle:
    """Without slots, like `Played`: every event copies the battle, and `records.replace`
    copies a record without slots through its instance dict in one call."""

    players: tuple[str, ...]
    themes: tuple[ThemeSpec, ...]  # main themes, then extra themes as they start
    extra_pool: tuple[ThemeSpec, ...] = ()  # extra themes not yet played
    settings: BattleSettings = field(default_factory=BattleSettings)
    theme: int = 0  # the current (or next) question's theme ...
    number: int = 0  # ... and its place in the theme
    phase: str = READY
    contenders: tuple[int, ...] = ()  # seats playing the current theme
    tiebreaks: tuple[tuple[int, ...], ...] = ()  # who played each extra theme
    # The collections that grow with the game are `Seq`s: an event appends or changes the
    # last item in constant time, so folding a long game costs the same per event.
    played: Seq[Played] = EMPTY
    judgements: Seq[Judgement] = EMPTY
    corrections: Seq[tuple[int, int]] = EMPTY  # (player, points added by the host)
    winner: int | None = None
    earlier: Seq[Battle] = field(default=EMPTY, compare=False, repr=False)  # the undo chain
    # Flawed questions replaced: (theme, number) -> the replacement read instead; and the
    # extra-pool questions (pool theme, number) used up as replacements.
    replacements: tuple[tuple[tuple[int, int], QuestionSpec], ...] = ()
    used_pool: tuple[tuple[int, int], ...] = ()

    def spec(self, theme: int, number: int) -> QuestionSpec:
        """The question read at (theme, number): the theme's own, or its replacement."""
        for key, q in reversed(self.replacements):
            if key == (theme, number):
                return q
        return self.themes[theme].question(number)

    def spare_questions(self) -> list[tuple[int, int]]:
        """Unplayed material for a replacement: the extra pool's questions not used yet."""
        return [(t, n) for t, theme in enumerate(self.extra_pool)
                for n in range(len(theme.questions)) if (t, n) not in self.used_pool]

    @property
    def seats(self) -> int:
        return len(self.players)

    @property
    def current(self) -> Played | None:
        """The announced question being played or just closed."""
        return self.played[-1] if self.phase in (OPEN, ANSWERING, CLOSED) else None

    def score(self, player: int) -> int:
        return self.scores()[player]

    def scores(self) -> list[int]:
        """Each player's judged values plus the host's corrections, in one pass. The last
        result is kept against the very (immutable) collections it was summed from: the
        views and actions of one update ask for it dozens of times."""
        global _LAST_SCORES
        memo = _LAST_SCORES
        if (memo is not None and memo[0] is self.judgements and memo[1] is self.corrections
                and len(memo[2]) == self.seats):
            return list(memo[2])
        totals = [0] * self.seats
        for j in self.judgements:
            totals[j.player] += j.points
        for p, d in self.corrections:
            totals[p] += d
        _LAST_SCORES = (self.judgements, self.corrections, tuple(totals))
        return totals

    def leaders(self) -> list[int]:
        s = self.scores()
        top = max(s)
        return [p for p in range(self.seats) if s[p] == top]


PHASE_RU = {READY: "объявление стоимости", OPEN: "кнопки открыты", ANSWERING: "ответ",
            CLOSED: "вопрос закрыт", TIE: "ничья: нужна дополнительная тема",
            FINISHED: "бой окончен"}


# A press with an earlier tick than the committed winner's that reached the box after the
# settle window: the race report marks it, the host may hand the answer over.
LATE_EARLIER = "late_earlier"


def late_press(state: Battle) -> dict[str, Any] | None:
    """While a settle window's winner answers: the earliest press that carries an earlier
    tick but reached the box after the window closed (`arbiter.late_notice`), for the host
    to see and, with ``hand_over``, to give the answer to. Never decided wrongly in silence."""
    q = state.current
    if state.phase != ANSWERING or q is None:
        return None
    return arbiter.late_notice(q.race, state.players)


def others_may_queue(q: Played) -> bool:
    """Someone besides the answerer may still join the queue."""
    r = q.race
    return bool(r.playing - r.answered - {r.winner} - {p.player for p in r.queue})


def ranking(state: Battle) -> list[int]:
    """1-based places: players who went further in the tie-break rank higher, then by score;
    equal keys share a place (competition ranking)."""
    level = [sum(p in group for group in state.tiebreaks) for p in range(state.seats)]
    scores = state.scores()
    keys = [(level[p], scores[p]) for p in range(state.seats)]
    return [1 + sum(k > keys[p] for k in keys) for p in range(state.seats)]
