"""When the TV game must be woken: the settle window of a pending press, and (with a press
window set) the moment an unanswered lit question closes by itself."""

from __future__ import annotations

from appliance.rules.tv.state import Phase, State


def press_deadline(state: State) -> int | None:
    """With a press window set: when an unanswered lit question closes by itself."""
    play, window = state.play, state.settings.press_window_s
    if window is None or state.phase != Phase.BUTTONS or play is None or play.race is None:
        return None
    race = play.race
    if race.lamp_ns is None or race.candidates():
        return None
    return race.lamp_ns + int(window * 1e9)


def answer_deadline(state: State) -> int | None:
    """With an answer countdown set (`answer_s`): when the answerer's time runs out. At that
    moment the host is prompted (`answer_time_up`); nothing is judged by itself."""
    play, seconds = state.play, state.settings.answer_s
    if (seconds is None or state.phase != Phase.ANSWERING or play is None or play.race is None
            or play.race.winner_ns is None or play.time_up):
        return None
    return play.race.winner_ns + int(seconds * 1e9)


def next_deadline(state: State) -> int | None:
    play = state.play
    if play is None or play.race is None:
        return None
    times = [t for t in (play.race.settle_deadline(), press_deadline(state),
                         answer_deadline(state)) if t is not None]
    return min(times) if times else None
