"""Buzzer arbitration, one test per rule of the digest and of ARCHITECTURE.md."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from appliance.rules import arbiter as a
from appliance.rules.arbiter import MS, Status

TV = a.Settings(settle_ns=5 * MS, bounce_ns=30 * MS, false_start_ns=2000 * MS)
SPORT = a.Settings(settle_ns=5 * MS, bounce_ns=30 * MS, false_start_ns=None)
LAMP = 10_000 * MS


def tv_race(seats: int = 3) -> a.Race:
    return a.lamp_on(a.open_question(a.new_race(seats, TV)), LAMP)


def statuses(race: a.Race) -> list[tuple[int, str]]:
    return [(p.player, p.status) for p in race.presses]


def test_winner_is_lowest_tick_not_first_delivered():
    race = tv_race()
    race = a.press(race, 1, LAMP + 3 * MS)  # delivered first, pressed later
    race = a.press(race, 2, LAMP + 1 * MS)
    race = a.settle(race, LAMP + 20 * MS)
    assert race.winner == 2
    assert race.winner_ns == LAMP + 1 * MS


def test_winner_waits_for_settle_window_after_earliest_press():
    race = a.press(tv_race(), 0, LAMP + 2 * MS)
    assert race.settle_deadline() == LAMP + 7 * MS
    early = a.settle(race, LAMP + 7 * MS - 1)
    assert early.winner is None and early.armed
    # an earlier-stamped press still in flight arrives inside the window and wins
    race = a.press(race, 1, LAMP + 1 * MS)
    assert race.settle_deadline() == LAMP + 6 * MS
    race = a.settle(race, LAMP + 6 * MS)
    assert race.winner == 1
    assert not race.armed


def test_press_before_lamp_is_false_start_and_blocks_two_seconds_from_the_press():
    race = a.open_question(a.new_race(3, TV))
    race = a.press(race, 0, LAMP - 500 * MS)
    race = a.lamp_on(race, LAMP)
    assert statuses(race) == [(0, Status.FALSE_START)]
    # blocked until 1.5 s after the lamp
    race = a.press(race, 0, LAMP + 1400 * MS)
    assert race.presses[-1].status == Status.BLOCKED
    assert race.winner is None and not race.candidates()


def test_false_start_block_ends_and_player_may_then_win():
    race = a.open_question(a.new_race(3, TV))
    race = a.press(race, 0, LAMP - 500 * MS)
    race = a.lamp_on(race, LAMP)
    race = a.press(race, 0, LAMP + 1600 * MS)
    race = a.settle(race, LAMP + 1700 * MS)
    assert race.winner == 0


def test_pressing_while_blocked_restarts_the_block():
    race = a.open_question(a.new_race(3, TV))
    race = a.press(race, 0, LAMP - 500 * MS)  # blocked until LAMP+1500
    race = a.lamp_on(race, LAMP)
    race = a.press(race, 0, LAMP + 1000 * MS)  # blocked: restarts, now until LAMP+3000
    race = a.press(race, 0, LAMP + 2500 * MS)
    assert [p.status for p in race.presses] == [Status.FALSE_START, Status.BLOCKED,
                                               Status.BLOCKED]
    race = a.press(race, 0, LAMP + 4600 * MS)
    assert race.presses[-1].status == Status.CANDIDATE


def test_press_stamped_before_lamp_but_delivered_after_is_still_a_false_start():
    race = a.press(tv_race(), 2, LAMP - 1)
    assert statuses(race) == [(2, Status.FALSE_START)]
    assert race.settle_deadline() is None


def test_press_before_question_opens_is_not_a_false_start():
    race = a.press(a.new_race(3, TV), 0, LAMP - 5000 * MS)
    assert statuses(race) == [(0, Status.EARLY)]
    assert not race.blocked(0, LAMP)


def test_sport_has_no_false_start_early_press_is_ignored():
    race = a.open_question(a.new_race(3, SPORT))
    race = a.press(race, 1, LAMP - 100 * MS)
    race = a.lamp_on(race, LAMP)
    race = a.press(race, 1, LAMP + 10 * MS)
    race = a.settle(race, LAMP + 20 * MS)
    assert statuses(race)[0] == (1, Status.EARLY)
    assert race.winner == 1


def test_bounce_edges_are_dropped_and_do_not_delay_the_first_edge():
    race = tv_race()
    race = a.press(race, 0, LAMP + 1 * MS)
    for k in range(1, 10):  # contact bounce, 2 ms apart
        race = a.press(race, 0, LAMP + (1 + 2 * k) * MS)
    race = a.press(race, 1, LAMP + 2 * MS)
    race = a.settle(race, LAMP + 10 * MS)
    assert race.winner == 0 and race.winner_ns == LAMP + 1 * MS
    assert sum(p.status == Status.BOUNCE for p in race.presses) == 9


def test_earlier_edge_of_a_burst_arriving_late_moves_the_press_earlier():
    race = tv_race()
    race = a.press(race, 0, LAMP + 3 * MS)
    race = a.press(race, 1, LAMP + 2 * MS)
    race = a.press(race, 0, LAMP + 1 * MS)  # same burst, earlier edge delivered late
    race = a.settle(race, LAMP + 10 * MS)
    assert race.winner == 0 and race.winner_ns == LAMP + 1 * MS


def test_each_player_answers_once_rearm_excludes_the_answerer():
    race = a.settle(a.press(tv_race(), 0, LAMP + 1 * MS), LAMP + 10 * MS)
    assert race.winner == 0
    second_lamp = LAMP + 5000 * MS
    race = a.rearm(race, second_lamp)
    assert race.answered == {0} and race.armed
    race = a.press(race, 0, second_lamp + 1 * MS)
    assert race.presses[-1].status == Status.ANSWERED
    race = a.press(race, 2, second_lamp + 2 * MS)
    race = a.settle(race, second_lamp + 10 * MS)
    assert race.winner == 2


def test_press_after_winner_without_queue_is_late():
    race = a.settle(a.press(tv_race(), 0, LAMP + 1 * MS), LAMP + 10 * MS)
    race = a.press(race, 1, LAMP + 50 * MS)
    assert race.presses[-1].status == Status.LATE
    assert race.winner == 0


def test_sport_queue_forms_in_tick_order_after_reset():
    race = a.lamp_on(a.open_question(a.new_race(3, SPORT)), LAMP)
    race = a.settle(a.press(race, 1, LAMP + 100 * MS), LAMP + 200 * MS)
    race = a.press(race, 2, LAMP + 300 * MS)  # before the reset: does not queue
    assert race.presses[-1].status == Status.LATE
    reset = LAMP + 500 * MS
    race = a.open_queue(race, reset)
    race = a.press(race, 0, reset + 40 * MS)  # delivered first, later tick
    race = a.press(race, 2, reset + 20 * MS)
    assert [q.player for q in race.queue] == [2, 0]
    race, nxt = a.next_in_queue(race)
    assert nxt == 2 and race.winner == 2 and race.answered == {1}
    race, nxt = a.next_in_queue(race)
    assert nxt == 0 and race.answered == {1, 2}
    race, nxt = a.next_in_queue(race)
    assert nxt is None and race.answered == {0, 1, 2}


def test_equal_ticks_are_broken_by_rotated_seat():
    def winner(rotation: int) -> int:
        race = a.lamp_on(a.open_question(a.new_race(3, TV, rotation=rotation)), LAMP)
        race = a.press(race, 2, LAMP + 1 * MS)
        race = a.press(race, 1, LAMP + 1 * MS)
        return a.settle(race, LAMP + 10 * MS).winner

    assert winner(0) == 1  # seat order 0,1,2: 1 before 2
    assert winner(2) == 2  # rotated: 2,0,1: 2 first
    assert winner(1) == 1


def test_player_not_playing_cannot_press():
    race = a.lamp_on(a.new_race(3, TV, playing={0, 2}), LAMP)
    race = a.press(race, 1, LAMP + 1 * MS)
    assert race.presses[-1].status == Status.CLOSED and race.settle_deadline() is None


def test_closed_race_counts_nothing():
    race = a.close(tv_race())
    race = a.press(race, 0, LAMP + 1 * MS)
    assert race.presses[-1].status == Status.CLOSED and not race.armed


def test_report_lists_every_press_with_ms_after_lamp():
    race = a.open_question(a.new_race(3, TV))
    race = a.press(race, 2, LAMP - 250 * MS)
    race = a.lamp_on(race, LAMP)
    race = a.press(race, 1, LAMP + 12 * MS)
    race = a.press(race, 0, LAMP + 4 * MS)
    race = a.settle(race, LAMP + 20 * MS)
    rep = race.report()
    assert [(r["player"], r["status"], r["ms_after_lamp"]) for r in rep] == [
        (2, Status.FALSE_START, -250.0),
        (0, Status.WINNER, 4.0),
        (1, Status.BEATEN, 12.0),
    ]
    assert a.reaction_ns(race, race.winner_ns) == 4 * MS


# -- properties ---------------------------------------------------------------------------

press_sets = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 4 * MS)),
    min_size=1, max_size=4, unique_by=lambda p: p[0],
)


@settings(max_examples=200, deadline=None)
@given(presses=press_sets, data=st.data())
def test_any_delivery_order_gives_the_same_winner(presses, data):
    """All presses within the settle window of the first: every order, same winner."""
    order = data.draw(st.permutations(presses))
    base = a.lamp_on(a.open_question(a.new_race(4, TV)), LAMP)

    def run(seq):
        race = base
        for player, dt in seq:
            race = a.press(race, player, LAMP + dt)
        return a.settle(race, LAMP + 100 * MS)

    expected = min(presses, key=lambda p: (p[1], p[0]))[0]
    assert run(order).winner == expected
    assert run(presses).winner == run(order).winner


@settings(max_examples=200, deadline=None)
@given(presses=press_sets, data=st.data())
def test_any_delivery_order_gives_the_same_queue(presses, data):
    order = data.draw(st.permutations(presses))
    base = a.lamp_on(a.open_question(a.new_race(5, SPORT)), LAMP)
    base = a.settle(a.press(base, 4, LAMP), LAMP + 10 * MS)  # seat 4 answers first
    reset = LAMP + 20 * MS
    base = a.open_queue(base, reset)

    def queue(seq):
        race = base
        for player, dt in seq:
            race = a.press(race, player, reset + dt)
        return [q.player for q in race.queue]

    assert queue(order) == [p for p, _ in sorted(presses, key=lambda p: (p[1], p[0]))]


def test_all_permutations_of_three_presses_one_microsecond_apart():
    lamp_race = a.lamp_on(a.open_question(a.new_race(3, TV)), LAMP)
    presses = [(0, LAMP + 3000), (1, LAMP + 1000), (2, LAMP + 2000)]
    for perm in itertools.permutations(presses):
        race = lamp_race
        for p, t in perm:
            race = a.press(race, p, t)
        assert a.settle(race, LAMP + 10 * MS).winner == 1


def test_late_earlier_edge_before_the_lamp_turns_the_press_into_a_false_start():
    race = tv_race()
    race = a.press(race, 0, LAMP + 1 * MS)
    race = a.press(race, 0, LAMP - 10 * MS)  # same burst, stamped before the lamp
    race = a.press(race, 1, LAMP + 3 * MS)
    race = a.settle(race, LAMP + 20 * MS)
    assert race.winner == 1
    assert (0, Status.FALSE_START) in statuses(race)
    assert race.blocked(0, LAMP + 1000 * MS)


def test_late_earlier_edge_after_the_winner_is_committed_changes_nothing():
    race = a.settle(a.press(tv_race(), 0, LAMP + 5 * MS), LAMP + 20 * MS)
    race = a.press(race, 0, LAMP + 1 * MS)
    assert race.winner == 0 and race.winner_ns == LAMP + 5 * MS
    assert race.presses[-1].status == Status.BOUNCE


def test_report_keeps_offsets_after_close_and_rearm():
    race = a.open_question(a.new_race(3, TV))
    race = a.press(race, 2, LAMP - 100 * MS)
    race = a.lamp_on(race, LAMP)
    race = a.settle(a.press(race, 0, LAMP + 7 * MS), LAMP + 20 * MS)
    again = LAMP + 3000 * MS
    race = a.rearm(race, again)
    race = a.settle(a.press(race, 1, again + 9 * MS), again + 20 * MS)
    race = a.close(race)
    assert [(r["player"], r["ms_after_lamp"]) for r in race.report()] == [
        (2, -100.0), (0, 7.0), (1, 9.0)]
