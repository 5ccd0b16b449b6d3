"""The TV game's immutable state and the queries every part of the engine shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from appliance.packages.model import Package, Question
from appliance.rules import arbiter, kit
from appliance.rules.arbiter import Race
from appliance.rules.seq import EMPTY, Seq
from appliance.rules.tv.auction import Auction
from appliance.rules.tv.board import Board, CellId, playable
from appliance.rules.tv.presets import Settings

RIGHT, WRONG, NO_ANSWER, VERDICTS = kit.RIGHT, kit.WRONG, kit.NO_ANSWER, kit.VERDICTS


class Stage:
    ROUND = "round"
    FINAL = "final"
    SHOOTOUT = "shootout"
    OVER = "over"


class Phase:
    """Where the game stands; each phase has its own legal commands."""

    PICK_CHOOSER = "pick_chooser"  # the host names who chooses first («выбирающий»)
    CHOOSE = "choose"  # the chooser names theme and value
    READING = "reading"  # the host reads; a press now is a false start
    BUTTONS = "buttons"  # the lamp is on: the first press wins
    ANSWERING = "answering"  # one player answers; the host judges
    AFTER_WRONG = "after_wrong"  # a wrong answer: the host re-arms the lamp or closes
    CAT_GIVE = "cat_give"  # the opener gives the cat away
    CAT_PRICE = "cat_price"  # the receiver picks the cat's value
    AUCTION = "auction"  # bidding
    BETS = "bets"  # secret bets (final, stake_all)
    WRITING = "writing"  # written answers; the host judges each (final, for_all, stake_all)
    FINAL_ORDER = "final_order"  # the host orders players tied on the lowest score
    FINAL_REMOVE = "final_remove"  # players remove final themes in turn
    SHOOTOUT_THEME = "shootout_theme"  # the host picks the shootout theme
    OVER = "over"


# Transient phases: they exist only between the events of one decision (`game.decide`
# appends the automatic event that moves on).
DONE = "done"  # the question is over: close it
ROUND_OVER = "round_over"  # start the next round or the final
STAGE_OVER = "stage_over"  # after the final or a shootout theme: tie check

QUESTION_PHASES = frozenset({
    Phase.READING, Phase.BUTTONS, Phase.ANSWERING, Phase.AFTER_WRONG, Phase.CAT_GIVE,
    Phase.CAT_PRICE, Phase.AUCTION, Phase.BETS, Phase.WRITING,
})


class Mode:
    BUTTONS = "buttons"  # normal question: the lamp and the race
    SINGLE = "single"  # one player must answer: cat, auction, no_risk
    WRITTEN = "written"  # everyone answers in writing: for_all, stake_all, final


@dataclass(frozen=True, slots=True)
class Judgement:
    """One accepted/rejected answer («зачёт/незачёт»): what it is worth either way, so a
    host's later correction (`rejudge`) knows the difference to apply."""

    ref: int
    player: int
    verdict: str
    plus: int  # score change if right
    minus: int  # score loss if wrong
    round: str  # the round's name (statistics by round)
    kind: str
    voided: bool = False  # its question was removed as flawed: it counts for nothing
    theme: str = ""  # the question's theme and value, for the protocol
    value: int | None = None

    @property
    def delta(self) -> int:
        if self.voided:
            return 0
        return self.plus if self.verdict == RIGHT else -self.minus

    def to_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "player": self.player, "verdict": self.verdict,
                "delta": self.delta, "round": self.round, "kind": self.kind,
                "voided": self.voided, "theme": self.theme, "value": self.value}


Pairs = tuple[tuple[int, Any], ...]


def put(pairs: Pairs, key: int, value: Any) -> Pairs:
    d = dict(pairs)
    d[key] = value
    return tuple(sorted(d.items()))


@dataclass(frozen=True, slots=True)
class Written:
    """Everyone answers in writing: the players, their secret bets and answers, and the
    verdicts so far (a verdict is also the reveal of that player's answer and bet)."""

    players: tuple[int, ...]
    needs_bets: bool
    bets: Pairs = ()
    answers: Pairs = ()
    verdicts: Pairs = ()

    def bet(self, player: int) -> int | None:
        return dict(self.bets).get(player)

    def pending_bets(self) -> tuple[int, ...]:
        have = dict(self.bets)
        return tuple(p for p in self.players if p not in have)

    def unjudged(self) -> tuple[int, ...]:
        have = dict(self.verdicts)
        return tuple(p for p in self.players if p not in have)


@dataclass(frozen=True)
class Play:
    """The question in play. Without slots, like `State`: most events copy both, and
    `records.replace` copies a record without slots through its dict in one call."""

    kind: str
    mode: str
    value: int
    theme: str
    cell: CellId | None = None
    question: Question | None = field(default=None, compare=False, repr=False)
    opener: int | None = None
    answerer: int | None = None
    race: Race | None = None
    auction: Auction | None = None
    written: Written | None = None
    factor: int = 1  # no_risk multiplier for a right answer
    right_by: int | None = None
    lamps: tuple[int, ...] = ()  # every lamp of this question (the first, then re-arms)
    outcome: str = ""  # why it closed: answered, nobody, skipped
    time_up: bool = False  # the answer countdown ran out: the host is prompted to judge
    first_ref: int = 0  # the judgements of this question are those from this ref on


@dataclass(frozen=True, slots=True)
class FinalRound:
    players: tuple[int, ...]
    order: tuple[int, ...] = ()
    removed: tuple[tuple[int, int], ...] = ()  # (theme index, by player), in order
    bets: Pairs = ()  # (player, bet) once the final question is closed (all revealed)
    closed: bool = False  # the final question is closed: its answer is revealed for good

    def remaining(self, themes: int) -> tuple[int, ...]:
        gone = {t for t, _ in self.removed}
        return tuple(t for t in range(themes) if t not in gone)


ShootoutItem = tuple[CellId | None, int]  # a board cell (None: the host's own question), value


@dataclass(frozen=True, slots=True)
class Shootout:
    players: tuple[int, ...]
    themes: int = 0  # themes started so far
    items: tuple[ShootoutItem, ...] = ()
    position: int = 0
    theme: str = ""


@dataclass(frozen=True)
class State:
    players: tuple[str, ...]
    settings: Settings
    board: Board
    package: Package = field(compare=False, repr=False)
    stage: str = Stage.ROUND
    phase: str = Phase.PICK_CHOOSER
    round: int = 0
    scores: tuple[int, ...] = ()
    chooser: int | None = None
    candidates: tuple[int, ...] = ()  # who the host may pick (chooser, remover)
    played: frozenset[CellId] = frozenset()
    play: Play | None = None
    last: Play | None = None  # the question closed last (its answer is revealed)
    final: FinalRound | None = None
    shootout: Shootout | None = None
    judgements: tuple[Judgement, ...] = ()
    # The host's score corrections (`set_score`): (player, points added, round name). The
    # statistics list them apart, so per-round points plus corrections equal the score.
    corrections: tuple[tuple[int, int, str], ...] = ()
    false_starts: tuple[int, ...] = ()
    reactions: tuple[tuple[int, ...], ...] = ()  # ns from lamp to winning press, per player
    asked: int = 0  # questions asked with buttons (rotates the arbiter's tie-break)
    winners: tuple[int, ...] = ()
    ended_by_host: bool = False
    earlier: Seq[State] = field(default=EMPTY, compare=False, repr=False)  # the undo chain

    @property
    def seats(self) -> int:
        return len(self.players)

    @property
    def round_name(self) -> str:
        if self.stage == Stage.FINAL and self.board.final:
            return self.board.final.name
        if self.stage == Stage.SHOOTOUT:
            return "shootout"
        if self.board.rounds:
            return self.board.rounds[min(self.round, len(self.board.rounds) - 1)].name
        return ""

    def open_cells(self) -> list[CellId]:
        """Cells of the current round still on the board."""
        if self.stage != Stage.ROUND or self.round >= len(self.board.rounds):
            return []
        return [c.id for c in self.board.rounds[self.round].all_cells()
                if playable(c) and c.id not in self.played]

    def shootout_sources(self) -> list[tuple[int, int]]:
        """Board themes (round, theme) with unplayed questions: shootout material."""
        out = []
        for r in self.board.rounds:
            for row in r.cells:
                if any(playable(c) and c.id not in self.played for c in row):
                    out.append((row[0].round, row[0].theme))
        return out


def late_press(state: State) -> dict[str, Any] | None:
    """While the answerer the settle window chose answers: a press with an earlier tick that
    reached the box after the window closed (`arbiter.late_notice`), shown to the host with
    ``hand_over`` and on the board's race view. The box never decides that in silence."""
    play = state.play
    if state.phase != Phase.ANSWERING or play is None or play.race is None:
        return None
    if play.answerer != play.race.winner:
        return None
    return arbiter.late_notice(play.race, state.players)
