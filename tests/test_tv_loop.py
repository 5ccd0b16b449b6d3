"""The TV engine in the real game loop on a real SQLite file: presses from the buttons, the
settle deadline fed as a timeout, the hardware view after each commit, resume after a cut."""

from __future__ import annotations

import time

from drive import FakeClock

from appliance.rules.protocol import Command, press
from appliance.runtime.loop import GameLoop
from appliance.runtime.store import Store

MS = 1_000_000
SETUP = {"players": ["Аня", "Борис", "Вера"], "package": "demo-tv", "first_chooser": 0}


def wait_for(predicate, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def test_tv_game_in_the_loop_and_after_a_cut(tmp_path):
    clock = FakeClock()
    path = tmp_path / "svoyak.db"
    hardware = []
    with Store(path) as store:
        loop = GameLoop(store, clock).start()
        try:
            loop.subscribe(lambda u: hardware.append(u.rules.view(u.state, "hardware")),
                           inline=True)
            g = loop.new_game("tv", SETUP).result(5)
            assert loop.submit({"type": "choose", "cell": "0:0"}).result(5).refused is None
            out = loop.submit({"type": "choose", "cell": "0:1"}).result(5)
            assert out.refused is not None and out.refused.message_ru  # a question is in play
            t = clock()
            loop.submit(Command("lamp", t)).result(5)
            assert hardware[-1]["lamp"] is True
            loop.submit(press(2, t + 150 * MS, at_ns=t + 151 * MS)).result(5)
            loop.submit(press(1, t + 148 * MS, at_ns=t + 152 * MS)).result(5)
            clock.set(t + 200 * MS)  # past the settle window: the loop sends the timeout
            loop.wake()
            assert wait_for(lambda: loop.snapshot()[1].phase == "answering")
            rules, state = loop.snapshot()
            assert state.play.answerer == 1  # the earlier stamp, delivered second
            assert hardware[-1] == {"lamp": False, "answering": 1, "queue": [],
                                    "false_starts": 0}
            loop.submit({"type": "judge", "verdict": "wrong"}).result(5)
            loop.submit({"type": "undo"}).result(5)
            before = loop.snapshot()[1]
            assert before.phase == "answering" and before.scores == (0, 0, 0)
        finally:
            loop.stop()
    with Store(path) as store:  # the power comes back
        loop = GameLoop(store, FakeClock(10 * MS))
        assert loop.resume() == [g]
        rules, state = loop.snapshot(g)
        assert state == before and state.earlier == before.earlier
        assert [a.type for a in rules.legal_actions(state)][0] == "judge"
