"""Buttons → game loop → sport battle engine → lamp and LED pins, end to end.

Real `GameLoop` on a real SQLite file, the real battle engine; only the pins are mocks
(`gpio.TickPin` delivers edges with exact ticks, as lgpio does).
"""

from __future__ import annotations

import threading
import time

import pytest

import gpio
from appliance.runtime.loop import GameLoop
from appliance.runtime.store import Store
from gpio import pinmap
from gpio.factory import Choice, mock_factory

MS = 1_000_000
SETTLE_MS = 150  # generous: a loaded 2-core machine must not turn delivery jitter into a loss


@pytest.fixture
def rig(tmp_path):
    store = Store(tmp_path / "svoyak.sqlite")
    loop = GameLoop(store).start()
    factory = mock_factory()
    hw = gpio.start(loop.submit, loop.subscribe, choice=Choice(factory, "mock"),
                    data_dir=tmp_path)
    seen: list[tuple[bool, bool]] = []  # (view lamp, lamp pin) after every commit

    def check(update):
        v = update.rules.view(update.state, "hardware")
        seen.append((bool(v["lamp"]), bool(factory.pin("GPIO24").state)))

    loop.subscribe(check, inline=True)  # runs right after gpio's own inline subscriber
    game = loop.new_game("battle", {
        "players": ["Аня", "Борис", "Вера"],
        "themes": [{"name": "Тема 1"}, {"name": "Тема 2"}],
        "settings": {"settle_ms": SETTLE_MS},
    }).result(5)
    assert game == loop.current
    yield loop, hw, factory, seen
    hw.close()
    loop.stop()
    store.close()


def host(loop, type_, **args):
    out = loop.submit({"type": type_, **args}).result(5)
    assert out.refused is None, out.refused.to_json()
    return out


def wait_for(pred, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.002)
    return False


def hardware(loop):
    rules, state = loop.snapshot()
    return rules.view(state, "hardware")


def test_buttons_to_winner_to_lamp_and_leds(rig):
    loop, hw, factory, seen = rig
    lamp = factory.pin("GPIO24")
    leds = [factory.pin(p) for p in ("GPIO5", "GPIO6", "GPIO13")]
    assert not lamp.state
    host(loop, "announce")
    assert lamp.state == 1  # armed: pressing is allowed now

    # Delivered out of tick order, as lgpio does (grouped by pin): the latest tick first.
    t = time.monotonic_ns()  # after the lamp (sport: earlier presses are ignored)
    factory.pin("GPIO22").press(t + 40_000)  # seat 2, 40 µs later
    factory.pin("GPIO27").press(t + 1_000, bounces=4)  # seat 1, 1 µs later, bouncing
    factory.pin("GPIO17").press(t + 3_000)  # seat 0, 3 µs later
    assert wait_for(lambda: not lamp.state)
    # The lamp goes out as soon as the settle window is decided, before the commit: the
    # loop's state follows once the decision is on disk.
    assert wait_for(lambda: hardware(loop)["answering"] == 1)  # lowest tick, any order
    assert lamp.state == 0
    assert [p.state for p in leds] == [0, 1, 0]
    rules, state = loop.snapshot()
    presses = [p for p in rules.view(state, "host")["race"] if p["player"] == 1]
    assert presses[0]["t_ns"] == t + 1_000 and presses[0]["by"] == "button"
    assert hw.status()["seats"][1]["bounces"] == 4  # press edges dropped in gpio, unlogged

    # The host resets the first signal: the lamp lights for the queue.
    host(loop, "reset_signal")
    assert lamp.state == 1
    for name in ("GPIO17", "GPIO22"):
        factory.pin(name).release()
    time.sleep(0.05)
    t2 = time.monotonic_ns()
    factory.pin("GPIO22").press(t2)
    factory.pin("GPIO17").press(t2 + 500)
    assert wait_for(lambda: hardware(loop)["queue"] == [2, 0])
    assert wait_for(lambda: hw.outputs.state()["leds"] == ["off", "on", "blink", "off"])
    host(loop, "judge", verdict="wrong")
    assert hardware(loop)["answering"] == 2
    assert hw.outputs.state()["leds"] == ["blink", "off", "on", "off"]
    host(loop, "judge", verdict="right")
    assert not lamp.state and [p.state for p in leds] == [0, 0, 0]

    assert seen and all(v == pin for v, pin in seen), seen  # lamp pin == view after commits


def test_a_blocking_subscriber_does_not_delay_press_intake(rig):
    loop, hw, factory, seen = rig
    gate = threading.Event()
    blocked = threading.Event()

    def slow(update):  # a screen that hangs
        blocked.set()
        gate.wait(10)

    loop.subscribe(slow)  # a notifier-thread subscriber
    try:
        host(loop, "announce")
        assert blocked.wait(2)
        t = time.monotonic_ns()
        factory.pin("GPIO17").press(t)
        # The winner is committed after the settle window and the lamp goes out,
        # while the slow subscriber is still stuck.
        assert wait_for(lambda: not factory.pin("GPIO24").state, timeout=3)
        elapsed_ms = (time.monotonic_ns() - t) / MS
        assert wait_for(lambda: hardware(loop)["answering"] == 0)
        assert elapsed_ms < SETTLE_MS + 1000
        assert not gate.is_set()
    finally:
        gate.set()


def test_a_stalled_loop_thread_delays_no_button_and_no_verdict(rig):
    """The loop thread hangs (a slow inline subscriber) while presses come in: the pin
    handlers still return at once (they only enqueue on the loop's inbox), and once the loop
    resumes the earliest tick wins, although all arrived long after the settle window."""
    loop, hw, factory, seen = rig
    host(loop, "announce")
    gate = threading.Event()
    stalled = threading.Event()

    def stall(update):
        if update.command is not None and update.command.type == "press":
            stalled.set()
            gate.wait(10)

    loop.subscribe(stall, inline=True)
    try:
        t = time.monotonic_ns()
        factory.pin("GPIO22").press(t + 2_000)  # seat 2: its commit stalls the loop
        assert stalled.wait(2)
        worst = 0
        for name, dt in (("GPIO27", 3_000), ("GPIO17", 1_000)):  # seat 0 is the earliest
            start = time.perf_counter_ns()
            factory.pin(name).press(t + dt)
            worst = max(worst, time.perf_counter_ns() - start)
        assert worst < 20 * MS
        time.sleep(2 * SETTLE_MS / 1000)  # far past the settle window
    finally:
        gate.set()
    assert wait_for(lambda: not factory.pin("GPIO24").state)
    assert wait_for(lambda: hardware(loop)["answering"] == 0)


def test_a_simulated_press_wins_through_the_same_path(rig):
    loop, hw, factory, seen = rig
    host(loop, "announce")
    t = hw.press(2, by="key")
    assert wait_for(lambda: factory.pin("GPIO13").state == 1)
    assert wait_for(lambda: hardware(loop)["answering"] == 2)
    rules, state = loop.snapshot()
    race = rules.view(state, "host")["race"]
    assert [(p["player"], p["t_ns"], p["by"]) for p in race] == [(2, t, "key")]


def test_the_pin_map_default_is_used_when_the_data_directory_has_none(rig, tmp_path):
    loop, hw, factory, seen = rig
    assert hw.pin_map == pinmap.default()


def test_a_tournament_commit_beside_a_live_battle_leaves_its_lamp_alone(tmp_path):
    """The tournament runs beside its battle on the director's box: a commit to it (an entry
    added, a result of another room) is not the current game's, so neither the lamp nor the
    screens follow it (`Update.current`, decided by the loop alone). Before, the outputs
    followed every game's updates, and the tournament's hardware view put the lamp out in
    the middle of the battle's open question."""
    store = Store(tmp_path / "svoyak.sqlite")
    loop = GameLoop(store).start()
    factory = mock_factory()
    hw = gpio.start(loop.submit, loop.subscribe, choice=Choice(factory, "mock"),
                    data_dir=tmp_path)
    told: list[tuple[int, bool]] = []
    loop.subscribe(lambda u: told.append((u.game, u.current)), inline=True)
    try:
        tournament = loop.new_game("tournament", {"title": "Кубок"}).result(5)
        battle = loop.new_game("battle", {
            "players": ["Аня", "Борис", "Вера"], "themes": [{"name": "Тема 1"}],
            "settings": {"settle_ms": SETTLE_MS}}).result(5)
        assert loop.current == battle
        lamp = factory.pin("GPIO24")
        host(loop, "announce")
        assert lamp.state == 1
        told.clear()
        out = loop.submit({"type": "add_entry", "name": "Дина", "team": "Кострома", "city": ""},
                          game=tournament).result(5)
        assert out.refused is None and out.events
        assert lamp.state == 1, "a tournament commit put the battle's lamp out"
        assert hw.outputs.state()["lamp"] is True
        assert told == [(tournament, False)]  # the screens skip it for the same reason
        t = time.monotonic_ns()
        factory.pin("GPIO27").press(t)
        assert wait_for(lambda: hardware(loop)["answering"] == 1)
        assert lamp.state == 0  # the battle's own decision still moves it
        assert (battle, True) in told
    finally:
        hw.close()
        loop.stop()
        store.close()
