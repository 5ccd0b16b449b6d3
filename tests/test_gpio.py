"""gpio/: edges with exact kernel ticks become presses; outputs follow the hardware view.

Pins are gpiozero mock pins (`gpio.TickPin`, a MockPin subclass that delivers an edge with an
exact tick the way lgpio does: ``when_changed(t_ns / 1e9, level)``). Everything else is real:
the edge handlers and the watcher thread, the pin map loader, and at the end the real game
loop with the sport battle engine on a real SQLite file.
"""

from __future__ import annotations

import io
import subprocess
import sys
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

import gpio
from appliance.rules.protocol import Command
from gpio import pinmap, selftest
from gpio.factory import STATE_HISTORY, Choice, TickPin, mock_factory, ticks_to_ns

MS = 1_000_000
BUTTONS = ["GPIO17", "GPIO27", "GPIO22", "GPIO23"]


class Recorder:
    """A submit callable that records commands (optionally blocking on the first)."""

    def __init__(self, block: threading.Event | None = None) -> None:
        self.commands: list[Command] = []
        self.block = block
        self.entered = threading.Event()

    def __call__(self, cmd: Command) -> None:
        self.entered.set()
        if self.block is not None:
            self.block.wait(10)
        self.commands.append(cmd)

    def presses(self) -> list[tuple[int, int, str]]:
        return [(c.args["player"], c.t_ns, c.by) for c in self.commands if c.type == "press"]


def make(toml: str | None = None, submit=None, **kw):
    pm = pinmap.default() if toml is None else pinmap.loads(toml)
    choice = Choice(mock_factory(), "mock")
    rec = submit or Recorder()
    hw = gpio.Hardware(pm, rec, choice, **kw)
    return hw, rec, choice.factory


def pin(factory, name: str) -> TickPin:
    p = factory.pin(name)
    assert isinstance(p, TickPin)
    return p


@pytest.fixture
def hw():
    h, rec, factory = make()
    yield h, rec, factory
    h.close()


# -- ticks ------------------------------------------------------------------------------------
@given(st.integers(min_value=0, max_value=10**15))
def test_ticks_round_trip_exactly_as_lgpio_divides_them(t):
    assert ticks_to_ns(t / 1_000_000_000) == t


def test_mock_factory_ticks_are_the_monotonic_clock():
    before = time.monotonic_ns()
    t = ticks_to_ns(mock_factory().ticks())
    assert before <= t <= time.monotonic_ns()


# -- edges become presses ------------------------------------------------------------------
def test_edges_become_presses_with_their_exact_ticks(hw):
    h, rec, factory = hw
    t0 = time.monotonic_ns()
    ticks = [t0 + 1234, t0 + 1, t0 + 999_999, t0 + 77]
    for seat, name in enumerate(BUTTONS):
        pin(factory, name).press(ticks[seat])
    h.buttons.drain()
    assert sorted(rec.presses()) == sorted(
        (seat, ticks[seat], "button") for seat in range(4))
    for c in rec.commands:
        assert c.at_ns is not None and c.at_ns >= c.t_ns - 1_000_000  # stamped on arrival


def test_a_release_is_not_a_press_and_presses_follow_the_pin_level(hw):
    h, rec, factory = hw
    p = pin(factory, "GPIO27")
    t = time.monotonic_ns()
    p.press(t)
    p.release(t + 200 * MS)
    p.press(t + 400 * MS)
    h.buttons.drain()
    assert rec.presses() == [(1, t, "button"), (1, t + 400 * MS, "button")]


def test_presses_delivered_out_of_tick_order_keep_their_ticks(hw):
    """lgpio delivers grouped by pin, not in time order: the tick, not the order, counts."""
    h, rec, factory = hw
    t = time.monotonic_ns()
    pin(factory, "GPIO23").press(t + 3 * MS)  # latest first
    pin(factory, "GPIO22").press(t + 2 * MS)
    pin(factory, "GPIO17").press(t)  # earliest delivered last
    h.buttons.drain()
    first = min(rec.presses(), key=lambda p: p[1])
    assert first == (0, t, "button")
    assert [p[0] for p in rec.presses()] == [3, 2, 0]  # arrival order is kept as it was


def test_bounce_edges_are_dropped_and_do_not_delay_the_first_edge(hw):
    h, rec, factory = hw
    p = pin(factory, "GPIO22")
    t = time.monotonic_ns()
    p.edge(False, t)  # the first edge of the burst (active low: pressed)
    h.buttons.drain()
    # Submitted at once, before any bounce edge exists, with the first edge's tick.
    assert rec.presses() == [(2, t, "button")]
    for i in range(1, 12):  # 11 more edges, 0.5 ms apart: contact chatter
        p.edge(i % 2 == 1, t + i * MS // 2)
    h.buttons.drain()
    assert rec.presses() == [(2, t, "button")]
    assert h.status()["seats"][2]["bounces"] >= 5


def test_release_chatter_is_not_a_press_but_a_press_after_the_window_is(hw):
    h, rec, factory = hw
    p = pin(factory, "GPIO17")
    t = time.monotonic_ns()
    p.press(t)
    release = t + 300 * MS
    for i in range(6):  # opening contact chatters: release, press, release, ...
        p.edge(i % 2 == 0, release + i * 300_000)
    p.edge(True, release + 6 * 300_000)
    later = release + 6 * 300_000 + 31 * MS
    p.press(later)
    h.buttons.drain()
    assert rec.presses() == [(0, t, "button"), (0, later, "button")]


def test_bounce_window_comes_from_the_map():
    h, rec, factory = make('buttons = ["GPIO17"]\n[options]\nbounce_ms = 5\n')
    try:
        p = pin(factory, "GPIO17")
        t = time.monotonic_ns()
        p.press(t)
        p.release(t + 1 * MS)
        p.press(t + 7 * MS)  # 6 ms after the release: counts with a 5 ms window
        h.buttons.drain()
        assert rec.presses() == [(0, t, "button"), (0, t + 7 * MS, "button")]
    finally:
        h.close()


def test_simulated_presses_take_the_same_path(hw):
    h, rec, factory = hw
    t = h.press(1, by="phone")
    h.press(1, t + 5 * MS, by="phone")  # inside the bounce window: dropped like a bounce
    t2 = h.press(5, by="key")  # a seat without a wired button (a phone) may press
    h.buttons.drain()
    assert rec.presses() == [(1, t, "phone"), (5, t2, "key")]
    with pytest.raises(ValueError):
        h.press(-1)


def test_a_phone_press_does_not_free_a_stuck_wired_button():
    factory = mock_factory()
    pin(factory, "GPIO17").hold(False)
    rec = Recorder()
    h = gpio.Hardware(pinmap.default(), rec, Choice(factory, "mock"))
    try:
        t = h.press(0, by="phone")
        h.buttons.drain()
        assert h.status()["stuck"] == [0]  # still stuck: the phone's release is its own
        assert rec.presses() == [(0, t, "phone")]
        assert [s["seat"] for s in h.status()["seats"]] == [0, 1, 2, 3]
    finally:
        h.close()


# -- stuck buttons ----------------------------------------------------------------------------
def test_a_button_held_at_start_up_is_reported_and_ignored_until_released():
    factory = mock_factory()
    pin(factory, "GPIO23").hold(False)  # wired pressed (active low) before the box starts
    statuses: list[dict] = []
    rec = Recorder()
    h = gpio.Hardware(pinmap.default(), rec, Choice(factory, "mock"), on_status=statuses.append)
    try:
        h.buttons.drain()
        assert h.status()["stuck"] == [3]
        assert statuses and statuses[0]["stuck"] == [3]
        p = pin(factory, "GPIO23")
        p.hold(None)
        t = time.monotonic_ns()
        p.edge(False, t)  # chatter while stuck: ignored
        h.buttons.drain()
        assert rec.presses() == []
        p.release(t + 100 * MS)
        p.press(t + 500 * MS)
        h.buttons.drain()
        assert h.status()["stuck"] == []
        assert statuses[-1]["stuck"] == []
        assert rec.presses() == [(3, t + 500 * MS, "button")]
    finally:
        h.close()


def test_a_button_held_too_long_is_reported_and_ignored_until_released():
    toml = 'buttons = ["GPIO17", "GPIO27"]\n[options]\nstuck_after_s = 0.2\n'
    statuses: list[dict] = []
    h, rec, factory = make(toml, on_status=statuses.append)
    try:
        p = pin(factory, "GPIO27")
        t = p.press()
        h.buttons.drain()
        assert rec.presses() == [(1, t, "button")]  # the press itself counted
        deadline = time.monotonic() + 3
        while not h.status()["stuck"] and time.monotonic() < deadline:
            time.sleep(0.01)
        assert h.status()["stuck"] == [1]
        assert statuses[-1]["stuck"] == [1]
        stuck_at = time.monotonic_ns()
        assert stuck_at - t >= 200 * MS
        p.edge(False, stuck_at)  # a press edge of the held contact: not a press while stuck
        h.buttons.drain()
        assert len(rec.presses()) == 1 and h.status()["stuck"] == [1]
        p.release(stuck_at + 100 * MS)
        h.buttons.drain()
        assert h.status()["stuck"] == [] and statuses[-1]["stuck"] == []
        p.press(stuck_at + 300 * MS)
        h.buttons.drain()
        assert rec.presses()[-1] == (1, stuck_at + 300 * MS, "button")
    finally:
        h.close()


# -- a slow consumer --------------------------------------------------------------------------
def test_a_hanging_observer_does_not_delay_the_pin_handlers():
    """Status listeners and edge observers (the host screen, the self-test) run on the
    watcher thread: one that hangs delays no button and no press."""
    gate = threading.Event()
    entered = threading.Event()

    def hang(_):
        entered.set()
        gate.wait(10)

    rec = Recorder()
    factory = mock_factory()
    buttons = gpio.Buttons(pinmap.default(), rec, factory, on_edge=hang, on_status=hang)
    try:
        t = time.monotonic_ns()
        pin(factory, "GPIO17").press(t)
        assert entered.wait(2)  # the watcher is now stuck inside the observer
        worst = 0
        for seat, name in enumerate(BUTTONS[1:], start=1):
            start = time.perf_counter_ns()
            pin(factory, name).press(t + seat * MS, bounces=2)
            worst = max(worst, time.perf_counter_ns() - start)
        assert worst < 20 * MS  # each edge handler returned at once
        # ...and every press was already submitted, with its tick, while the observer hangs.
        assert rec.presses() == [(s, t + s * MS, "button") for s in range(4)]
    finally:
        gate.set()
        buttons.close()


# -- outputs ----------------------------------------------------------------------------------
def view(lamp=False, answering=None, queue=(), false_starts=0):
    return {"lamp": lamp, "answering": answering, "queue": list(queue),
            "false_starts": false_starts}


def test_lamp_pin_follows_the_view(hw):
    h, _, factory = hw
    lamp = factory.pin("GPIO24")
    assert lamp.state == 0
    h.outputs.show(view(lamp=True))
    assert lamp.state == 1
    h.outputs.show(view(lamp=False, answering=2))
    assert lamp.state == 0


def test_lamp_through_an_active_low_relay_module():
    h, _, factory = make('buttons = ["GPIO17"]\nlamp = "GPIO24"\n'
                         '[options]\nlamp_active_high = false\n')
    try:
        assert factory.pin("GPIO24").state == 1  # high = relay off
        h.outputs.show(view(lamp=True))
        assert factory.pin("GPIO24").state == 0
    finally:
        h.close()


def test_leds_light_the_answerer_and_blink_the_next_in_the_queue(hw):
    h, _, factory = hw
    leds = [factory.pin(p) for p in ("GPIO5", "GPIO6", "GPIO13", "GPIO19")]
    h.outputs.show(view(answering=1, queue=[3, 0]))
    assert h.outputs.state()["leds"] == ["off", "on", "off", "blink"]
    assert leds[1].state == 1 and leds[0].state == 0 and leds[2].state == 0
    time.sleep(0.5)  # three blink periods: the pin went on and off
    assert {s.state for s in leds[3].states[1:]} == {True, False}
    h.outputs.show(view())
    assert h.outputs.state()["leds"] == ["off"] * 4
    assert all(p.state == 0 for p in leds)


class _Rules:
    """Stands in for an engine module: its view is the state itself."""

    @staticmethod
    def view(state, role):
        assert role == "hardware"
        return state


class _Update:
    def __init__(self, game, state):
        self.game, self.rules, self.state = game, _Rules, state
        self.current = True  # the loop's current game (`Update.current`)


def test_a_simulated_evening_does_not_grow_the_pins_history(hw):
    """MockPin keeps every change of an output; the simulator's pins keep the last few
    hundred, so an evening of lamps and LEDs costs no memory (bench/soak.py)."""
    h, _, factory = hw
    lamp = factory.pin("GPIO24")
    for i in range(5 * STATE_HISTORY):
        h.outputs.show(view(lamp=i % 2 == 0))
    assert STATE_HISTORY <= len(lamp.states) <= 2 * STATE_HISTORY
    assert lamp.states[-1].state is False and lamp.states[-2].state is True


def test_beeper_sounds_for_each_new_false_start_only(hw):
    h, _, factory = hw
    beeper = factory.pin("GPIO12")

    def beeps():
        return sum(1 for s in beeper.states[1:] if s.state)

    h.on_update(_Update(1, view(false_starts=2)))  # a resumed game: no beep for old ones
    time.sleep(0.05)
    assert beeps() == 0
    h.on_update(_Update(1, view(false_starts=3)))
    time.sleep(0.4)
    assert beeps() == 1
    h.on_update(_Update(1, view(false_starts=3, lamp=True)))
    h.on_update(_Update(2, view(false_starts=0)))  # a new game starts from zero, silently
    h.on_update(_Update(2, view(false_starts=1)))
    time.sleep(0.4)
    assert beeps() == 2


def test_a_broken_view_never_raises_into_the_loop(hw):
    h, _, factory = hw

    class Broken:
        game, state, current = 1, object(), True

        class rules:  # noqa: N801
            @staticmethod
            def view(state, role):
                raise RuntimeError("boom")

    h.on_update(Broken())  # logged, not raised
    h.close()
    h.outputs.show(view(lamp=True))  # after close: ignored
    assert not factory.pin("GPIO24").state


def test_host_reset_button_sends_the_configured_command(hw):
    h, rec, factory = hw
    p = pin(factory, "GPIO26")
    t = time.monotonic_ns()
    p.press(t, bounces=3)
    p.release(t + 200 * MS)
    assert [(c.type, c.t_ns, c.by) for c in rec.commands] == [("reset_signal", t, "host")]


# -- the pin map ------------------------------------------------------------------------------
def test_default_map_is_valid_and_spares_the_bus_pins():
    pm = pinmap.default()
    assert pm.buttons == tuple(BUTTONS)
    assert pm.lamp == "GPIO24" and len(pm.leds) == 4
    bus = {"GPIO2", "GPIO3", "GPIO7", "GPIO8", "GPIO9", "GPIO10", "GPIO11", "GPIO14", "GPIO15"}
    assert not bus & {p for _, p, _ in pm.rows()}
    assert [b for _, _, b in pm.rows()][:4] == [11, 13, 15, 16]


def test_pins_by_header_number_or_bare_integer():
    pm = pinmap.loads('buttons = ["BOARD11", 27, "gpio22"]\nlamp = "BCM24"\n')
    assert pm.buttons == ("GPIO17", "GPIO27", "GPIO22") and pm.lamp == "GPIO24"


@pytest.mark.parametrize("toml, message", [
    ('buttons = ["GPIO17", "GPIO27"]\nlamp = "BOARD11"\n',
     "GPIO17 is used twice: buttons[0] and lamp"),
    ('buttons = ["GPIO17", "GPIO17"]\n', "GPIO17 is used twice: buttons[0] and buttons[1]"),
    ('buttons = ["GPIO17", "GPIO28"]\n',
     "buttons[1]: GPIO28 does not exist on the 40-pin header"),
    ('buttons = ["GPIO17"]\nlamp = "BOARD41"\n', "lamp: BOARD41 does not exist"),
    ('buttons = ["BOARD2"]\n', "buttons[0]: BOARD2 is a power pin (5V)"),
    ('buttons = ["BOARD6"]\n', "buttons[0]: BOARD6 is a ground pin"),
    ('buttons = ["GPIO0"]\n', "GPIO0 is reserved for ID_SD"),
    ('buttons = ["pin seventeen"]\n', "is not a pin name"),
    ('buttons = [true]\n', "a pin is a name like"),
    ('buttons = []\n', "'buttons' must be a list"),
    ('buttons = ["GPIO17"]\nleds = ["GPIO5", "GPIO6"]\n', "one LED per button"),
    ('buttons = ["GPIO17"]\nlamps = "GPIO24"\n', "unknown key(s) lamps"),
    ('buttons = ["GPIO17"]\n[options]\nbounce = 3\n', "unknown option 'bounce'"),
    ('buttons = ["GPIO17"]\n[options]\nbounce_ms = "3"\n', "option 'bounce_ms' has the wrong"),
    ('buttons = ["GPIO17"]\n[options]\nstuck_after_s = 0\n', "'stuck_after_s' must be above 0"),
    ('buttons = ["GPIO17"\n', "not valid TOML"),
])
def test_pin_map_refuses_with_a_clear_message(tmp_path, toml, message):
    f = tmp_path / "pins.toml"
    f.write_text(toml)
    with pytest.raises(pinmap.PinMapError) as e:
        pinmap.load(f)
    assert message in str(e.value)
    assert str(e.value).startswith(str(f))  # names the file


def test_map_from_the_data_directory_or_built_in(tmp_path, monkeypatch):
    monkeypatch.setenv("SVOYAK_DATA", str(tmp_path))
    assert pinmap.resolve().source == "built-in"
    (tmp_path / "pins.toml").write_text('buttons = ["GPIO5", "GPIO6"]\n')
    pm = pinmap.resolve()
    assert pm.buttons == ("GPIO5", "GPIO6") and pm.source == str(tmp_path / "pins.toml")
    with pytest.raises(pinmap.PinMapError, match="cannot read the pin map"):
        pinmap.resolve(tmp_path / "missing.toml")


def test_no_press_from_a_pin_outside_the_map():
    h, rec, factory = make('buttons = ["GPIO17", "GPIO27"]\nlamp = "GPIO24"\n')
    try:
        other = pin(factory, "GPIO22")  # wired, but not in the map
        other.function = "input"
        other.press(time.monotonic_ns())
        h.buttons.drain()
        assert rec.presses() == [] and other.when_changed is None
    finally:
        h.close()


def _no_gpio_here() -> bool:
    try:
        from gpiozero.pins.lgpio import LGPIOFactory

        LGPIOFactory().close()
    except Exception:
        return True
    return False  # pragma: no cover - only on a Raspberry Pi with the chip


needs_no_gpio = pytest.mark.skipif(not _no_gpio_here(),
                                   reason="this machine has a usable GPIO chip")


def test_simulate_gives_the_mock_factory():
    c = gpio.choose(simulate=True)
    assert c.name == "mock" and c.simulated and c.warning is None


@needs_no_gpio
def test_pin_factory_never_falls_back_to_the_simulator_silently(caplog):
    """Without --simulate a box whose GPIO chip cannot be opened must say so, not quietly
    hand out simulated buttons (the first club evening would have no button at all)."""
    with caplog.at_level("ERROR"), pytest.raises(gpio.GpioUnavailable) as e:
        gpio.choose(simulate=False)
    assert e.value.reason and "wiring.md" in e.value.check
    assert "wired buttons are off" in str(e.value)
    assert any("GPIO unavailable" in r.message for r in caplog.records)  # the journal
    with pytest.raises(gpio.GpioUnavailable):
        gpio.start(lambda c: None, lambda fn, inline=False: None, simulate=False)


@needs_no_gpio
def test_buttons_test_without_gpio_exits_non_zero_with_the_reason(tmp_path):
    run = subprocess.run([sys.executable, "-m", "svoyak.cli", "buttons", "test",
                          "--step", "0", "--seconds", "0"], input="q\n",
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "the GPIO pins cannot be used" in run.stderr and "wiring.md" in run.stderr
    assert "GPIO недоступен" in run.stderr
    assert "PRESS" not in run.stdout


def test_fault_status_names_the_kind_reason_and_section(tmp_path):
    (tmp_path / "pins.toml").write_text('buttons = ["GPIO17"]\nlamp = "GPIO17"\n')
    with pytest.raises(gpio.PinMapError) as e:
        gpio.start(lambda c: None, lambda fn, inline=False: None, simulate=True,
                   data_dir=tmp_path)
    status = gpio.Fault(e.value).status()
    assert status["fault"]["kind"] == "pins" and "used twice" in status["fault"]["reason"]
    assert status["simulated"] is False and status["seats"] == []
    chip = gpio.Fault(gpio.GpioUnavailable("FileNotFoundError: /dev/gpiochip0")).status()
    assert chip["fault"] == {"kind": "gpio", "reason": "FileNotFoundError: /dev/gpiochip0",
                             "check": gpio.WIRING_SECTION}


# -- the self-test ----------------------------------------------------------------------------
def test_self_test_lights_everything_then_reports_presses_and_bounces():
    choice = Choice(mock_factory(), "mock")
    out = io.StringIO()
    status = selftest.run(pinmap.default(), choice, out, step_s=0,
                          keys=["1", "3b", "x", "r", "q", "2"])
    text = out.getvalue()
    for line in ("lamp   GPIO24 on", "LED 1  GPIO5 on", "LED 4  GPIO19 on",
                 "beeper GPIO12 beep", "PRESS  player 1  GPIO17  first press",
                 "PRESS  player 3  GPIO22  +", "WARN   button 3 (GPIO22)",
                 "RESET  host button GPIO26", "button 4 GPIO23  not pressed"):
        assert line in text, line
    assert "player 2" not in text  # input stopped at q
    assert [s["presses"] for s in status["seats"]] == [1, 0, 1, 0]
    assert "the contact bounces" not in text.split("PRESS  player 3")[0]
    lamp_states = [s.state for s in choice.factory.pin("GPIO24").states]
    assert lamp_states[:3] == [False, True, False]


def test_svoyak_buttons_map_and_a_bad_map_on_the_command_line(tmp_path):
    cmd = [sys.executable, "-m", "svoyak.cli", "buttons", "map"]
    ok = subprocess.run(cmd + ["--toml"], capture_output=True, text=True, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    (tmp_path / "pins.toml").write_text(ok.stdout)
    again = subprocess.run(cmd + ["--pins", "pins.toml"], capture_output=True, text=True,
                           cwd=tmp_path)
    assert again.returncode == 0 and "lamp       GPIO24  18" in again.stdout
    (tmp_path / "bad.toml").write_text('buttons = ["GPIO17"]\nlamp = "GPIO17"\n')
    bad = subprocess.run([sys.executable, "-m", "svoyak.cli", "buttons", "test",
                          "--simulate", "--pins", "bad.toml"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 2
    assert "bad.toml: GPIO17 is used twice: buttons[0] and lamp" in bad.stderr


def test_svoyak_buttons_test_simulated_from_the_keyboard(tmp_path):
    run = subprocess.run([sys.executable, "-m", "svoyak.cli", "buttons", "test",
                          "--simulate", "--step", "0"], input="2\n4b\nq\n",
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "PRESS  player 2  GPIO27  first press" in run.stdout
    assert "WARN   button 4 (GPIO23)" in run.stdout


def test_start_wires_submit_and_subscribe(tmp_path):
    subscribed = []
    rec = Recorder()
    (tmp_path / "pins.toml").write_text('buttons = ["GPIO5", "GPIO6"]\nlamp = "GPIO24"\n')
    h = gpio.start(rec, lambda fn, inline=False, early=False: subscribed.append(
        (fn, inline, early)), simulate=True, data_dir=tmp_path)
    try:
        assert subscribed == [(h.on_update, True, True)]
        assert h.simulated and h.status()["pins"] == str(tmp_path / "pins.toml")
        pin(h.factory, "GPIO6").press(123_456_789)
        h.buttons.drain()
        assert rec.presses() == [(1, 123_456_789, "button")]
    finally:
        h.close()


# -- `svoyak buttons test` on a running box ---------------------------------------------------

class _LgpioError(Exception):
    """lgpio's own exception (lgpio.error): lgpio is not installed off a Pi."""


class _BusyFactory(type(mock_factory())):  # type: ignore[misc]
    """What lgpio does while svoyak.service holds the lines: every claim is refused."""

    def pin(self, spec, **kw):  # type: ignore[no-untyped-def]
        raise _LgpioError("'GPIO busy'")


def test_buttons_test_while_the_service_holds_the_pins_says_how_to_stop_it(
        monkeypatch, capsys) -> None:
    from gpio import factory
    from svoyak.cli import main

    monkeypatch.setattr(factory, "choose", lambda simulate=False: Choice(
        _BusyFactory(revision="c03111"), "lgpio"))
    assert main(["buttons", "test", "--seconds", "0", "--step", "0"]) == 4
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "GPIO занят" in err and "GPIO busy" in err  # Russian and English
    assert "sudo systemctl stop svoyak" in err and "sudo systemctl start svoyak" in err
