"""The final round and the shootout: who plays, who removes which theme when, who is tied.

Pure helpers over plain tuples, so the rules read on their own:
- only players with a positive score play the final (a setting lets everyone play);
- themes are removed in turn, starting from the lowest score; where scores tie, the host
  puts the tied players in order (`next_removers` says who still needs the host);
- each bets 1..score in whole units;
- a tie for first after the final starts a shootout between the tied players only.
"""

from __future__ import annotations

from appliance.rules.protocol import Refused


def participants(scores: tuple[int, ...], positive_only: bool) -> tuple[int, ...]:
    return tuple(p for p, s in enumerate(scores) if s > 0 or not positive_only)


def next_removers(scores: tuple[int, ...], players: tuple[int, ...],
                  ordered: tuple[int, ...]) -> tuple[int, ...]:
    """The players who may come next in the removal order: those not yet ordered with the
    lowest score. One player: automatic; several: the host picks among them."""
    rest = [p for p in players if p not in ordered]
    if not rest:
        return ()
    low = min(scores[p] for p in rest)
    return tuple(p for p in rest if scores[p] == low)


def remover(order: tuple[int, ...], removed: int) -> int:
    """Whose turn it is to remove a theme after `removed` removals (the order repeats)."""
    return order[removed % len(order)]


def bet_range(score: int) -> tuple[int, int]:
    """1..score; a player without a positive score (where a setting lets them play) bets 0."""
    return (1, score) if score >= 1 else (0, 0)


def check_bet(scores: tuple[int, ...], player: int, amount: int) -> None:
    score = scores[player]
    low, _ = bet_range(score)
    if score < 1:
        if amount != 0:
            raise Refused("У игрока нет положительной суммы: ставка только 0.",
                          "The player has no positive score: the only bet is 0.")
        return
    if amount < low:
        raise Refused("Ставка — не меньше 1.", "A bet is at least 1.")
    if amount > score:
        raise Refused(f"Ставка больше суммы игрока ({score}).",
                      f"The bet exceeds the player's score ({score}).")


def leaders(scores: tuple[int, ...], among: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """The players sharing the highest score (among `among`, default everyone)."""
    pool = tuple(range(len(scores))) if among is None else among
    if not pool:
        return ()
    top = max(scores[p] for p in pool)
    return tuple(p for p in pool if scores[p] == top)
