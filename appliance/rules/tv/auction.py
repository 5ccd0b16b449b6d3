"""The auction («Аукцион»): the bidding protocol as pure functions over an `Auction` value.

- The opener bids first and cannot pass; with a score below the value the opener bids the
  value automatically.
- A bid is a multiple of the step (100) above the current bid and at most the bidder's score;
  bidding one's whole score is all-in («ва-банк»), which only a larger all-in beats.
- The next word goes to the player with the smaller score; between equal scores, to the one
  nearest to the right of the opener (seat numbers grow to the right; wrapping round).
- A player whose score cannot beat the current bid passes automatically.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from appliance.rules.protocol import Refused
from appliance.rules.records import replace


@dataclass(frozen=True, slots=True)
class Auction:
    opener: int
    value: int
    seats: int
    bid: int = 0
    leader: int | None = None
    all_in: bool = False
    passed: frozenset[int] = frozenset()
    turn: int | None = None
    history: tuple[tuple[int, str, int], ...] = ()  # (player, "bid"|"all_in"|"pass"|"auto…", n)
    order: tuple[int, ...] = ()  # the host's bidding order, every seat once (empty: the rule's)

    def to_json(self) -> dict[str, Any]:
        return {"opener": self.opener, "value": self.value, "bid": self.bid,
                "leader": self.leader, "all_in": self.all_in, "passed": sorted(self.passed),
                "turn": self.turn, "order": list(self.order),
                "history": [{"player": p, "what": w, "amount": a} for p, w, a in self.history]}


def ceil_to(x: int, step: int) -> int:
    return -(-x // step) * step


def start(opener: int, value: int, scores: tuple[int, ...], auto_bid: bool = True) -> Auction:
    """The opener holds the first word (no pass). A poor opener's bid is made for them: as
    an event of its own now (`auto_bid=False`: the engine logs a `bid` with ``auto``), or
    here, for logs written before that was logged."""
    a = Auction(opener=opener, value=value, seats=len(scores), turn=opener)
    if auto_bid and scores[opener] < value:
        a = apply_bid(a, opener, value, all_in=False, scores=scores, what="auto_bid")
    return a


def next_speaker(a: Auction, scores: tuple[int, ...]) -> int | None:
    """Smallest score first; ties to the nearest seat right of the opener (the opener last)."""
    waiting = [p for p in range(a.seats) if p != a.leader and p not in a.passed]
    if not waiting:
        return None
    if a.order:  # the host's order, round and round from whoever spoke last
        last = a.history[-1][0] if a.history else a.opener
        at = a.order.index(last) if last in a.order else -1
        ring = a.order[at + 1:] + a.order[:at + 1]
        return next(p for p in ring if p in waiting)
    return min(waiting, key=lambda p: (scores[p], (p - a.opener - 1) % a.seats))


def set_order(a: Auction, order: tuple[int, ...], scores: tuple[int, ...]) -> Auction:
    """The host sets the bidding order («очерёдность торгов — за ведущим»); the opener keeps
    the first word if it has not been said."""
    a = replace(a, order=order)
    return a if a.leader is None else replace(a, turn=next_speaker(a, scores))


def can_beat(a: Auction, player: int, scores: tuple[int, ...]) -> bool:
    if a.leader is None:  # the opener's first word
        return scores[player] >= a.value
    return scores[player] > a.bid


def bid_range(a: Auction, player: int, step: int,
              scores: tuple[int, ...]) -> tuple[int, int] | None:
    """The (min, max) of an ordinary bid now, or None when only all-in (or pass) is left."""
    if a.all_in:
        return None
    low = ceil_to(a.value, step) if a.leader is None else (a.bid // step + 1) * step
    high = scores[player] - 1 if scores[player] % step == 0 else scores[player]
    high = high // step * step
    return (low, high) if low <= high else None


def apply_bid(a: Auction, player: int, amount: int, *, all_in: bool, scores: tuple[int, ...],
              what: str = "bid") -> Auction:
    a = replace(a, bid=amount, leader=player, all_in=all_in,
                history=a.history + ((player, "all_in" if all_in else what, amount),))
    return replace(a, turn=next_speaker(a, scores))


def apply_pass(a: Auction, player: int, scores: tuple[int, ...], auto: bool = False) -> Auction:
    a = replace(a, passed=a.passed | {player},
                history=a.history + ((player, "auto_pass" if auto else "pass", 0),))
    return replace(a, turn=next_speaker(a, scores))


def check_turn(a: Auction, player: int) -> None:
    if a.turn is None:
        raise Refused("Торги окончены.", "The bidding is over.")
    if player != a.turn:
        raise Refused(f"Сейчас слово у игрока {a.turn + 1}.",
                      f"It is player {a.turn + 1}'s word now.")


def check_bid(a: Auction, player: int, amount: int, step: int, scores: tuple[int, ...]) -> bool:
    """Validate a bid; return True if it is all-in (the bidder's whole score)."""
    check_turn(a, player)
    score = scores[player]
    if amount == score and amount >= (a.value if a.leader is None else a.bid + 1):
        return True
    if a.all_in:
        raise Refused("Ва-банк перебивается только большим ва-банком.",
                      "An all-in is beaten only by a larger all-in.")
    if amount % step:
        raise Refused(f"Ставка должна быть кратна {step}.",
                      f"A bid must be a multiple of {step}.")
    if a.leader is None and amount < a.value:
        raise Refused(f"Первая ставка не меньше номинала {a.value}.",
                      f"The first bid is at least the value, {a.value}.")
    if a.leader is not None and amount <= a.bid:
        raise Refused(f"Ставка должна быть больше текущей ({a.bid}).",
                      f"A bid must exceed the current one ({a.bid}).")
    if amount > score:
        raise Refused(f"Ставка больше суммы игрока ({score}).",
                      f"The bid exceeds the player's score ({score}).")
    return False


def check_all_in(a: Auction, player: int, scores: tuple[int, ...]) -> int:
    check_turn(a, player)
    score = scores[player]
    floor = a.value if a.leader is None else a.bid + 1
    if score < floor:
        raise Refused("Ва-банк должен быть больше текущей ставки.",
                      "An all-in must be larger than the current bid.")
    return score


def check_pass(a: Auction, player: int) -> None:
    check_turn(a, player)
    if a.leader is None and player == a.opener:
        raise Refused("Открывший аукцион не может сказать «пас».",
                      "The player who opened the auction cannot pass.")
